//! What the run's state reads learned about waiting: a read (a show and a JSON pointer) that
//! never showed the state it was polled for within the whole budget, and those that ever did.
//! A later poll of a read that only ever waited in vain reads once: the same wait, shared by
//! several tests (one member a team's list never shows), is waited once per run.
//!
//! It also logs what each test waited for (a state, a list, its turn at a lock), for the
//! reports' slowest tests; and a test that already fails waits for nothing more
//! ([`TestRun::already_failing`]).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Mutex;
use std::time::Duration;

use super::{unjudgeable, TestRun};
use crate::checks::Check;

/// The shortest wait the log notes.
pub const NOTED: Duration = Duration::from_millis(100);

/// The run's memory of state reads, keyed by the read and its pointer.
#[derive(Debug, Default)]
pub struct Waited {
    /// Reads polled for the whole budget in vain, with the test that waited.
    in_vain: Mutex<HashMap<String, String>>,
    /// Reads that showed the state polled for at least once.
    held: Mutex<HashSet<String>>,
    /// What each test waited for, and how long, by test.
    log: Mutex<BTreeMap<String, Vec<(String, Duration)>>>,
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

impl Waited {
    /// Notes that `test` waited `waited` for `what`.
    pub fn note(&self, test: &str, what: &str, waited: Duration) {
        if let Ok(mut log) = self.log.lock() {
            log.entry(test.to_string())
                .or_default()
                .push((what.to_string(), waited));
        }
    }

    /// What each test waited for, longest first: `5.0 s for teams::show /data/… (in vain)`.
    pub fn log(&self) -> BTreeMap<String, Vec<String>> {
        let Ok(log) = self.log.lock() else {
            return BTreeMap::new();
        };
        log.iter()
            .map(|(test, waits)| {
                let mut waits = waits.clone();
                waits.sort_by_key(|w| std::cmp::Reverse(w.1));
                let said = waits
                    .iter()
                    .map(|(what, d)| format!("{} for {what}", crate::clock::human(*d)))
                    .collect();
                (test.clone(), said)
            })
            .collect()
    }
}

impl TestRun<'_> {
    /// The check of the first finding that already fails this test at the run's profile, on
    /// an answer that judges the target: no wait for what another check observes can change
    /// its verdict, so none is made (issue 43). `None` where the run has waivers: one may waive
    /// that finding's check alone.
    pub(super) fn already_failing(&self) -> Option<&'static str> {
        if self.ctx.waivers {
            return None;
        }
        self.record
            .findings
            .iter()
            .filter(|f| self.ctx.profile.fails_on(f.level))
            .find(|f| {
                f.exchange
                    .and_then(|i| self.exchanges.get(i))
                    .is_none_or(|ex| unjudgeable(ex).is_none())
            })
            .map(|f| f.check.id)
    }

    /// The note of a check read once, not waited for, because the test already fails on
    /// `failing`: the check is neither passed nor failed.
    pub(super) fn not_waited(&mut self, check: &Check, failing: &str) {
        self.notes.push(format!(
            "{} not waited for: the test already fails on {failing}, and no wait could change that",
            check.id
        ));
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
