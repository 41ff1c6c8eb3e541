//! Documented exit codes.

/// Exit codes of `conform`.
pub enum ExitCodes {}

impl ExitCodes {
    /// Every selected test passed at the profile's level (or was skipped, unsupported or waived).
    pub const OK: u8 = 0;
    /// At least one test failed or errored.
    pub const FAILED: u8 = 1;
    /// The configuration is wrong, or the target cannot be reached or refuses the token.
    pub const CONFIG: u8 = 2;
}
