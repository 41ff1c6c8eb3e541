//! What the run's state reads learned about waiting: a read (a show and a JSON pointer) that
//! never showed the state it was polled for within the whole budget, and those that ever did.
//! A later poll of a read that only ever waited in vain reads once: the same wait, shared by
//! several tests (one member a team's list never shows), is waited once per run.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

/// The run's memory of state reads, keyed by the read and its pointer.
#[derive(Debug, Default)]
pub struct Waited {
    /// Reads polled for the whole budget in vain, with the test that waited.
    in_vain: Mutex<HashMap<String, String>>,
    /// Reads that showed the state polled for at least once.
    held: Mutex<HashSet<String>>,
}

impl Waited {
    /// The test that waited the whole budget in vain on this read, when no poll of it ever
    /// held.
    pub fn hopeless(&self, key: &str) -> Option<String> {
        if self.held.lock().is_ok_and(|held| held.contains(key)) {
            return None;
        }
        self.in_vain.lock().ok()?.get(key).cloned()
    }

    /// Notes that a poll of this read held.
    pub fn held(&self, key: &str) {
        if let Ok(mut held) = self.held.lock() {
            held.insert(key.to_string());
        }
    }

    /// Notes that `test` polled this read for the whole budget in vain.
    pub fn in_vain(&self, key: &str, test: &str) {
        if let Ok(mut in_vain) = self.in_vain.lock() {
            in_vain
                .entry(key.to_string())
                .or_insert_with(|| test.to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_that_waited_in_vain_is_hopeless_until_one_holds() {
        let waited = Waited::default();
        assert_eq!(waited.hopeless("k"), None);
        waited.in_vain("k", "teams::add_users::api-v2");
        waited.in_vain("k", "teams::add_users::bare");
        assert_eq!(
            waited.hopeless("k").as_deref(),
            Some("teams::add_users::api-v2")
        );
        waited.held("k");
        assert_eq!(waited.hopeless("k"), None);
    }
}
