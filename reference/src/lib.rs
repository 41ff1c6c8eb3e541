//! The embedded reference service (work in progress).
