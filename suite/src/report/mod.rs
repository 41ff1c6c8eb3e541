//! Reports: verdicts in, files and console lines out. Nothing here knows HTTP beyond the
//! recorded exchanges.

mod console;
mod junit;

pub use console::{print_summary, Figures};
pub use junit::write_junit;

use crate::target::{redact, Secret};

/// What every report states about the run (printed at the start too).
#[derive(Debug, Clone)]
pub struct RunInfo {
    /// The resolved configuration, one `key = value` per entry, tokens redacted.
    pub config: Vec<(String, String)>,
    /// The secrets to scrub from anything written.
    pub secrets: Vec<Secret>,
}

impl RunInfo {
    /// Scrubs every secret from a text.
    pub fn scrub(&self, text: &str) -> String {
        let refs: Vec<&Secret> = self.secrets.iter().collect();
        redact(text, &refs)
    }
}
