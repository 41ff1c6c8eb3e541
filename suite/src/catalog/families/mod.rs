//! The sequence families' data: `cases/sequences/<family>.toml` read into a [`model::Family`]
//! (`file`), the model of what should exist (`model`), and the functions a family file names
//! (`named`). The catalog reads them; [`crate::sequences`] runs them.

pub mod file;
pub mod model;
pub mod named;

use std::sync::Arc;

use model::Family;

/// The families the suite ships (`cases/sequences/<name>.toml`), in report order. A cases
/// folder may hold others: they run after these, by name.
pub const FAMILIES: [&str; 9] = [
    "organizations",
    "workspaces",
    "teams",
    "variables",
    "notifications",
    "agents",
    "policy_sets",
    "registry_modules",
    "admin_users",
];

/// Sorts families into report order: [`FAMILIES`] first, then the others by name.
pub fn sort(families: &mut [Arc<Family>]) {
    families.sort_by_key(|f| {
        (
            FAMILIES
                .iter()
                .position(|n| *n == f.name)
                .unwrap_or(FAMILIES.len()),
            f.name.clone(),
        )
    });
}
