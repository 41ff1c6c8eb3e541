//! Shrinking a failing sequence to a minimal one: chunks removed down to single operations,
//! then simpler operations, every candidate run against the live target in its own namespace,
//! within a wall-clock bound; a target that goes away while shrinking ends it.

use std::time::{Duration, Instant};

use super::engine::{Learned, Op, RunOutcome};
use super::{run_ops, Namespaces, SequenceConfig};
use crate::catalog::families::model::Family;
use crate::runner::Context;

pub(super) struct Shrunk {
    /// The run of the minimal sequence.
    pub(super) outcome: RunOutcome,
    /// Requests the shrinking sent, in all.
    pub(super) sent: usize,
    /// The length of the sequence shrinking started from.
    pub(super) from: usize,
    /// Candidate runs.
    pub(super) runs: usize,
    /// Time spent shrinking.
    pub(super) elapsed: Duration,
    /// The time bound ended it.
    pub(super) timed_out: bool,
    /// The target went away while shrinking: why.
    pub(super) unreachable: Option<String>,
}

/// Shrinks a failing sequence: remove chunks (halving down to single operations) while the
/// same check still fails, then try simpler forms of each operation; repeat until nothing
/// changes or the time bound is reached.
pub(super) async fn shrink(
    ctx: &Context,
    family: &Family,
    config: &SequenceConfig,
    learned: &Learned,
    names: &mut Namespaces<'_>,
    first: RunOutcome,
) -> Shrunk {
    let from = first.steps.len();
    let mut s = Shrinker {
        ctx,
        family,
        config,
        learned,
        names,
        started: Instant::now(),
        check: first.failure.as_ref().map(|f| f.check.id),
        best: first,
        runs: 0,
        sent: 0,
    };
    let mut timed_out = false;
    let mut unreachable = None;
    loop {
        let changed = match s.remove_chunks().await {
            Ok(removed) => s.simplify().await.map(|simpler| removed || simpler),
            Err(end) => Err(end),
        };
        match changed {
            Ok(true) => {}
            Ok(false) => break,
            Err(End::TimedOut) => {
                timed_out = true;
                break;
            }
            Err(End::Unreachable(why)) => {
                unreachable = Some(why);
                break;
            }
        }
    }
    Shrunk {
        outcome: s.best,
        sent: s.sent,
        from,
        runs: s.runs,
        elapsed: s.started.elapsed(),
        timed_out,
        unreachable,
    }
}

/// What ends shrinking before nothing changes.
enum End {
    /// The time bound.
    TimedOut,
    /// The target went away: why.
    Unreachable(String),
}

/// A shrinking in progress: the shortest sequence found that fails the same check.
struct Shrinker<'a, 'n> {
    ctx: &'a Context,
    family: &'a Family,
    config: &'a SequenceConfig,
    learned: &'a Learned,
    names: &'a mut Namespaces<'n>,
    started: Instant,
    /// The check the first outcome failed.
    check: Option<&'static str>,
    best: RunOutcome,
    runs: usize,
    sent: usize,
}

impl Shrinker<'_, '_> {
    /// Runs a candidate within the time bound; its outcome, when it failed the same check.
    async fn candidate(&mut self, candidate: &[Op]) -> Result<Option<RunOutcome>, End> {
        if self.started.elapsed() > self.config.shrink_budget {
            return Err(End::TimedOut);
        }
        self.runs += 1;
        let (ctx, family, config, learned) = (self.ctx, self.family, self.config, self.learned);
        let outcome = run_ops(ctx, family, config, learned, self.names.next(), candidate).await;
        self.sent += outcome.exchanges.len();
        if let Some(why) = outcome.unreachable.clone() {
            return Err(End::Unreachable(why));
        }
        let same = outcome.failure.as_ref().map(|f| f.check.id) == self.check;
        Ok(same.then_some(outcome))
    }

    /// Removes chunks of operations, halving down to single ones, while the same check
    /// still fails with fewer steps; whether anything was removed.
    async fn remove_chunks(&mut self) -> Result<bool, End> {
        let mut changed = false;
        let mut chunk = (self.best.steps.len() / 2).max(1);
        loop {
            let mut i = 0;
            while i < self.best.steps.len() {
                let ops = self.best.executed();
                let candidate: Vec<Op> = ops[..i]
                    .iter()
                    .chain(ops[(i + chunk).min(ops.len())..].iter())
                    .copied()
                    .collect();
                if candidate.is_empty() {
                    i += chunk;
                    continue;
                }
                match self.candidate(&candidate).await? {
                    Some(outcome) if outcome.steps.len() < self.best.steps.len() => {
                        self.best = outcome;
                        changed = true;
                    }
                    _ => i += chunk,
                }
            }
            if chunk == 1 {
                return Ok(changed);
            }
            chunk /= 2;
        }
    }

    /// Tries the simpler forms of each operation; whether one was kept (the same check
    /// failing in as many steps or fewer).
    async fn simplify(&mut self) -> Result<bool, End> {
        let mut changed = false;
        // `best` may get shorter on the way (a simpler operation can leave a later one with
        // nothing to act on): the bound is read again for every index.
        let mut i = 0;
        while i < self.best.steps.len() {
            let ops = self.best.executed();
            for simpler in ops[i].simpler() {
                let mut candidate = ops.clone();
                candidate[i] = simpler;
                match self.candidate(&candidate).await? {
                    Some(outcome) if outcome.steps.len() <= self.best.steps.len() => {
                        self.best = outcome;
                        changed = true;
                        break;
                    }
                    _ => {}
                }
            }
            i += 1;
        }
        Ok(changed)
    }
}
