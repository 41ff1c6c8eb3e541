//! Whose words the service uses where the spec and TFE disagree.

/// Whose words the service uses where the spec and TFE disagree (`conform serve --compat`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Compat {
    /// The spec's (the default): an administrator's force-cancel leaves a run `cancelled`.
    #[default]
    Spec,
    /// TFE's, for SDKs that parse TFE's words: `force_canceled`, 415 for a write without a
    /// JSON content type, trailing slashes tolerated.
    Tfe,
}

impl std::str::FromStr for Compat {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "spec" => Ok(Compat::Spec),
            "tfe" => Ok(Compat::Tfe),
            other => Err(format!("unknown compat {other:?}: spec or tfe")),
        }
    }
}
