//! Tokens that never print.

use std::fmt;

/// A credential. `Debug` and `Display` print `(redacted)`; only [`Secret::expose`] gives it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a credential.
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The credential itself, for the one place that sends it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("(redacted)")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("(redacted)")
    }
}

/// Replaces every occurrence of the given secrets in `text` with `(redacted)`.
pub fn redact(text: &str, secrets: &[&Secret]) -> String {
    let mut out = text.to_string();
    for secret in secrets {
        if !secret.0.is_empty() {
            out = out.replace(&secret.0, "(redacted)");
        }
    }
    out
}
