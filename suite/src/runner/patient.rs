//! The test's reads that the spec does not promise to hold at once (the show of what was just
//! made or changed, the list that should hold or no longer hold an item), read again within
//! the consistency window (`crate::patience`, the run's one mechanism) while they do not hold.
//! Each answers what the last read saw and, when it read again, how long it waited: a finding
//! says so (`checks::waited`).

use std::time::Duration;

use super::observe::Listed;
use super::TestRun;
use crate::target::Exchange;

impl TestRun<'_> {
    /// The show of the test's `kind`, read again while `holds` does not hold of its answer.
    /// `None` when there is no show to read.
    pub(super) async fn show_until(
        &mut self,
        kind: &str,
        holds: impl Fn(&Exchange) -> bool,
    ) -> Option<(usize, Option<Duration>)> {
        let mut patience = self.ctx.target.patience();
        loop {
            let index = self.show_resource(kind).await?;
            let held = holds(self.ex(index));
            // the target's no-route answer: the show is not there, waiting cannot change that
            let absent = matches!(
                self.ctx.fixtures.presence(self.ex(index)),
                crate::checks::Presence::Absent(_)
            );
            if held || absent || !patience.again().await {
                if let Some(waited) = patience.waited() {
                    self.note_wait(&format!("the show of the {kind}"), waited, held);
                }
                return Some((index, patience.done(held)));
            }
            // a read superseded by the next keeps only what a report shows
            self.exchanges[index].keep_evidence();
        }
    }

    /// The list that holds `kind` read for `id` (`find_listed`) again while it does not show
    /// the item `present` (listed) or absent. `None` when there is no such list to read.
    pub(super) async fn listed_until(
        &mut self,
        kind: &str,
        id: &str,
        present: bool,
    ) -> Option<(Listed, Option<Duration>)> {
        let mut patience = self.ctx.target.patience();
        loop {
            let start = self.exchanges.len();
            let listed = self.find_listed(kind, id, present).await?;
            let held = listed.1.is_some() == present;
            if held || !patience.again().await {
                if let Some(waited) = patience.waited() {
                    let what = format!(
                        "the {kind} list to {} it",
                        if present { "hold" } else { "drop" }
                    );
                    self.note_wait(&what, waited, held);
                }
                return Some((listed, patience.done(held)));
            }
            // the pages superseded by the next read keep only what a report shows
            self.exchanges[start..]
                .iter_mut()
                .for_each(crate::target::Exchange::keep_evidence);
        }
    }
}
