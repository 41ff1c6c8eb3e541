//! Reading again what a delete should have removed, many items at once within one shared
//! consistency window: teardown sends its deletes, reads each item once, and reads again
//! only those still there, side by side, until each is gone or the one window has passed
//! ([`Remover::recheck`]). A removal alone is a batch of one.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use futures_util::stream::{self, StreamExt};
use url::Url;

use super::{Reads, Removed, Remover};
use crate::target::Auth;

/// What the delete forms of one removal answered.
#[derive(Debug, Clone)]
pub(super) struct Deleted {
    /// The delete that answered 2xx, said.
    pub(super) done: Option<String>,
    /// Every form tried that did not, with its answer.
    pub(super) tried: String,
    /// Every form answered 404 (or 410).
    pub(super) not_found: bool,
    /// A delete route seen answering 2xx answered 404: the resource is not there.
    pub(super) absent_on_a_known_route: bool,
}

/// The read that tells whether an item is still there.
#[derive(Debug, Clone)]
pub(super) enum Reread {
    /// Its show.
    Show((Url, Auth)),
    /// The list that holds it, and its id there.
    List((Url, Auth), String),
}

/// What one read of an item saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Sight {
    /// The show's status (`None`: no answer).
    Show(Option<u16>),
    /// Whether the list holds it (`None`: it answered no list).
    List(Option<bool>),
}

impl Sight {
    /// The item is still there: its show answers 2xx, or its list holds it.
    fn there(self) -> bool {
        match self {
            Sight::Show(status) => status.is_some_and(|s| (200..300).contains(&s)),
            Sight::List(listed) => listed == Some(true),
        }
    }
}

/// A removal whose read still found the item once: read again with the rest of its pass.
#[derive(Debug, Clone)]
pub struct Recheck {
    pub(super) kind: String,
    /// The delete that answered 2xx, said (`None`: none did).
    pub(super) by: Option<String>,
    /// The delete forms tried that did not succeed, with their answers.
    pub(super) tried: String,
    pub(super) read: Reread,
    /// What the last read saw.
    pub(super) seen: Sight,
}

impl Recheck {
    /// The removal as `seen` judges it, `waited` the time read again (when it was).
    pub(super) fn judged(&self, seen: Sight, waited: Option<Duration>) -> Removed {
        let kind = &self.kind;
        let said = || self.by.clone().unwrap_or_else(|| self.tried.clone());
        let (path, listed) = match &self.read {
            Reread::Show(show) => (show.0.path(), false),
            Reread::List(list, _) => (list.0.path(), true),
        };
        match seen {
            Sight::Show(Some(404 | 410)) | Sight::List(Some(false)) => match &self.by {
                Some(by) => Removed::Deleted(by.clone()),
                None => Removed::Gone,
            },
            seen if seen.there() => Removed::Left(format!(
                "{}, the {kind} is still {} (GET {path}){}",
                said(),
                if listed { "listed" } else { "shown" },
                read_again(waited)
            )),
            Sight::Show(other) => match &self.by {
                Some(by) => Removed::Left(format!(
                    "{by}, but GET {path} {}: not shown gone",
                    other.map_or("had no answer".into(), |s| format!("answered {s}"))
                )),
                None => Removed::Left(self.tried.clone()),
            },
            Sight::List(_) => Removed::Unseen(format!(
                "{}; its list GET {path} did not answer a list: no read shows it, not confirmed",
                said()
            )),
        }
    }
}

/// ` after 5.0 s of reading again (--consistency-window)`, or nothing when it did not wait.
pub(super) fn read_again(waited: Option<Duration>) -> String {
    waited.map_or(String::new(), |w| {
        format!(
            " after {} of reading again (--consistency-window)",
            crate::clock::human(w)
        )
    })
}

/// What reading again came to in one remover's pass.
#[derive(Debug, Default)]
pub(super) struct WaitTally {
    held_late: AtomicU32,
    in_vain: AtomicU32,
}

impl Remover<'_> {
    /// Reads the items still there (each [`Recheck`] from [`Remover::remove_in_pass`]) again,
    /// `width` at once, within one consistency window for them all; answers each removal as
    /// its last read judges it. What was still there after the whole window is left, with the
    /// time read again.
    pub async fn recheck(&self, items: &[Recheck], width: usize) -> Vec<Removed> {
        let reads: Vec<&Reread> = items.iter().map(|r| &r.read).collect();
        let seen = items.iter().map(|r| r.seen).collect();
        let read = self.until_gone(&reads, seen, width).await;
        items
            .iter()
            .zip(read)
            .map(|(item, (seen, waited))| item.judged(seen, waited))
            .collect()
    }

    /// After the pass, for resources left behind whose container is known gone (a read showed
    /// it gone): for each, true when it went along, that is its own show now answers 404, its
    /// list answers without it, or nothing reads it (what it lives in is gone, so it cannot be
    /// reached either). Read side by side, `width` at once, within one window.
    pub async fn went_along_all(&self, items: &[Reads<'_>], width: usize) -> Vec<bool> {
        let reads: Vec<Option<Reread>> = items.iter().map(|r| reread_of(*r)).collect();
        let readable: Vec<&Reread> = reads.iter().flatten().collect();
        let first = self.read_all(&readable, width).await;
        let mut read = self.until_gone(&readable, first, width).await.into_iter();
        reads
            .iter()
            .map(|r| match r {
                // nothing reads it, but what it lives in was shown gone: it cannot be reached
                None => true,
                Some(_) => read.next().is_some_and(|(seen, _)| {
                    matches!(
                        seen,
                        Sight::Show(Some(404 | 410)) | Sight::List(Some(false))
                    )
                }),
            })
            .collect()
    }

    /// [`Remover::went_along_all`] of one resource.
    pub async fn went_along(&self, reads: Reads<'_>) -> bool {
        self.went_along_all(&[reads], 1).await.first() == Some(&true)
    }

    /// A show read, again within the consistency window while it still answers 2xx: what
    /// was deleted may be shown a moment longer. The last status, and how long it waited.
    pub(super) async fn get_until_gone(
        &self,
        show: &(Url, Auth),
    ) -> (Option<u16>, Option<Duration>) {
        let read = Reread::Show(show.clone());
        match self.one_until_gone(&read).await {
            (Sight::Show(status), waited) => (status, waited),
            (Sight::List(_), waited) => (None, waited),
        }
    }

    /// Whether the list holds `id` (`None`: it answered no list), read again within the
    /// consistency window while it does; with how long it waited, when it did.
    pub(super) async fn listed_until_gone(
        &self,
        list: &(Url, Auth),
        id: &str,
    ) -> (Option<bool>, Option<Duration>) {
        let read = Reread::List(list.clone(), id.to_string());
        match self.one_until_gone(&read).await {
            (Sight::List(listed), waited) => (listed, waited),
            (Sight::Show(_), waited) => (None, waited),
        }
    }

    /// True once reading again has not helped in this pass: some removal waited the whole
    /// window in vain and none was shown gone late (the target's deletes do nothing, or take
    /// longer than the window). Later removals read once and wait with the batch.
    pub fn waiting_is_in_vain(&self) -> bool {
        self.waits.in_vain.load(Ordering::Relaxed) > 0
            && self.waits.held_late.load(Ordering::Relaxed) == 0
    }

    /// One item read, then again within the window while it is there.
    async fn one_until_gone(&self, read: &Reread) -> (Sight, Option<Duration>) {
        let first = self.read_all(&[read], 1).await;
        let mut last = self.until_gone(&[read], first, 1).await;
        last.pop().unwrap_or((Sight::Show(None), None))
    }

    /// Each item read once, `width` at once.
    async fn read_all(&self, reads: &[&Reread], width: usize) -> Vec<Sight> {
        stream::iter(reads.iter().map(|read| self.sight(read)))
            .buffered(width.max(1))
            .collect()
            .await
    }

    /// The items whose last read (`seen`) still found them, read again side by side within
    /// one consistency window until each is gone or the window has passed: each item's last
    /// sight and, when it was read again, how long it waited. Each is metered as one
    /// observation of the run's consistency window.
    async fn until_gone(
        &self,
        reads: &[&Reread],
        mut seen: Vec<Sight>,
        width: usize,
    ) -> Vec<(Sight, Option<Duration>)> {
        let mut waited = vec![None; reads.len()];
        let mut pending: Vec<usize> = (0..reads.len()).filter(|&i| seen[i].there()).collect();
        let mut patience = self.target.patience();
        while !pending.is_empty() && patience.again().await {
            let again: Vec<&Reread> = pending.iter().map(|&i| reads[i]).collect();
            let sights = self.read_all(&again, width).await;
            let mut still = Vec::new();
            for (i, sight) in pending.into_iter().zip(sights) {
                seen[i] = sight;
                match sight.there() {
                    true => still.push(i),
                    false => {
                        waited[i] = patience.note(true);
                        self.waits.held_late.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
            pending = still;
        }
        for &i in &pending {
            waited[i] = patience.note(false);
            if waited[i].is_some() {
                self.waits.in_vain.fetch_add(1, Ordering::Relaxed);
            }
        }
        seen.into_iter().zip(waited).collect()
    }

    /// One read of an item.
    async fn sight(&self, read: &Reread) -> Sight {
        match read {
            Reread::Show(show) => Sight::Show(self.get(show).await),
            Reread::List(list, id) => Sight::List(self.listed(list, id).await),
        }
    }
}

/// The read that tells whether an item is there: its show, else its list; `None` when
/// nothing reads it.
fn reread_of(reads: Reads<'_>) -> Option<Reread> {
    match (reads.show, reads.list) {
        (Some(show), _) => Some(Reread::Show(show.clone())),
        (None, Some((list, id))) => Some(Reread::List(list.clone(), id.to_string())),
        (None, None) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recheck(read: Reread, by: Option<&str>) -> Recheck {
        Recheck {
            kind: "workspace".into(),
            by: by.map(str::to_string),
            tried: "DELETE /api/v2/workspaces/ws-1 answered 500".into(),
            read,
            seen: Sight::Show(Some(200)),
        }
    }

    fn url(path: &str) -> (Url, Auth) {
        (
            Url::parse(&format!("http://t.example{path}")).unwrap(),
            Auth::User,
        )
    }

    #[test]
    fn a_recheck_is_judged_by_its_last_read_with_the_time_read_again() {
        let shown = recheck(
            Reread::Show(url("/api/v2/workspaces/ws-1")),
            Some("DELETE /api/v2/workspaces/ws-1 answered 204"),
        );
        let waited = Some(Duration::from_secs(5));
        assert_eq!(
            shown.judged(Sight::Show(Some(200)), waited),
            Removed::Left("DELETE /api/v2/workspaces/ws-1 answered 204, the workspace is still shown (GET /api/v2/workspaces/ws-1) after 5.0 s of reading again (--consistency-window)".into())
        );
        assert_eq!(
            shown.judged(Sight::Show(Some(404)), waited),
            Removed::Deleted("DELETE /api/v2/workspaces/ws-1 answered 204".into())
        );
        let Removed::Left(why) = shown.judged(Sight::Show(Some(500)), waited) else {
            panic!("a 500 is no proof of gone");
        };
        assert!(why.ends_with("answered 500: not shown gone"), "{why}");
        let listed = recheck(Reread::List(url("/api/v2/workspaces"), "ws-1".into()), None);
        assert_eq!(
            listed.judged(Sight::List(Some(false)), waited),
            Removed::Gone
        );
        let Removed::Left(why) = listed.judged(Sight::List(Some(true)), None) else {
            panic!("still listed is left");
        };
        assert!(
            why.contains("answered 500, the workspace is still listed (GET /api/v2/workspaces)"),
            "{why}"
        );
        assert!(matches!(
            listed.judged(Sight::List(None), waited),
            Removed::Unseen(_)
        ));
    }
}
