//! The reference's integration tests, one binary (as nextest's repository keeps them): each
//! file beside this one is a module, so that a change to the reference links one test binary,
//! not one per file.

mod support;

mod api;
mod layers;
mod local_tfe;
mod shapes;
mod tfe_workspaces;
mod tokens_and_varsets;
