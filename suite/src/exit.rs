//! Documented exit codes.

/// Exit codes of `conform`.
pub enum ExitCodes {}

impl ExitCodes {
    /// Every selected test passed at the profile's level (or was skipped, unsupported, blocked
    /// or waived), and at least one was judged.
    pub const OK: u8 = 0;
    /// At least one test failed or errored.
    pub const FAILED: u8 = 1;
    /// The configuration is wrong, or the target cannot be reached or refuses the token.
    pub const CONFIG: u8 = 2;
    /// Nothing was judged: no test passed, failed or was waived (a filter that selects
    /// nothing, every test skipped, unsupported or blocked). A run that proves nothing does
    /// not pass.
    pub const NOTHING_JUDGED: u8 = 3;
    /// A report file could not be written (the run says which): a CI job must not pass
    /// without its artifacts.
    pub const REPORTS_UNWRITTEN: u8 = 4;
    /// SIGINT interrupted the run (teardown ran and the reports say so; a second signal
    /// stops at once).
    pub const INTERRUPTED: u8 = 130;
    /// SIGTERM interrupted the run (as [`ExitCodes::INTERRUPTED`]).
    pub const TERMINATED: u8 = 143;
}

/// Waits for SIGINT or SIGTERM; the exit code that says which ([`ExitCodes::INTERRUPTED`] or
/// [`ExitCodes::TERMINATED`]). The one signal waiter of the commands that run until stopped
/// (`serve`, `proxy`, `peer`).
pub async fn stopped() -> u8 {
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = term => ExitCodes::TERMINATED,
        _ = tokio::signal::ctrl_c() => ExitCodes::INTERRUPTED,
    }
}
