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
    /// The reader of standard output went away (`conform … | head`): the run stopped as at
    /// SIGINT (128 + SIGPIPE's number, as a shell reports a process a closed pipe ended).
    pub const OUTPUT_CLOSED: u8 = 141;
}

/// SIGINT and SIGTERM caught from the moment this is made (not the default action, which
/// ends the process): what the commands that run until stopped (`serve`, `proxy`, `peer`)
/// wait on.
pub struct Stop {
    interrupt: Option<tokio::signal::unix::Signal>,
    terminate: Option<tokio::signal::unix::Signal>,
}

impl Stop {
    /// Catches both signals now (inside a tokio runtime); one that cannot be caught is
    /// waited for never.
    pub fn listen() -> Self {
        use tokio::signal::unix::{signal, SignalKind};
        Self {
            interrupt: signal(SignalKind::interrupt()).ok(),
            terminate: signal(SignalKind::terminate()).ok(),
        }
    }

    /// Waits for either; the exit code that says which ([`ExitCodes::INTERRUPTED`] or
    /// [`ExitCodes::TERMINATED`]).
    pub async fn wait(mut self) -> u8 {
        async fn next(signal: &mut Option<tokio::signal::unix::Signal>) {
            match signal {
                Some(s) => {
                    s.recv().await;
                }
                None => std::future::pending::<()>().await,
            }
        }
        tokio::select! {
            _ = next(&mut self.terminate) => ExitCodes::TERMINATED,
            _ = next(&mut self.interrupt) => ExitCodes::INTERRUPTED,
        }
    }
}

/// Catches SIGINT and SIGTERM and waits for either (see [`Stop`]).
pub async fn stopped() -> u8 {
    Stop::listen().wait().await
}
