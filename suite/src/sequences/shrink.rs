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
        first,
        best: None,
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
    let outcome = match (s.best.take(), unreachable.is_some()) {
        (None, _) => s.first,
        (Some(best), true) => best,
        // the candidates read once: the minimal sequence is run again as the first run was
        (Some(best), false) => match s.run(&best.executed(), true).await {
            Ok(Some(confirmed)) => confirmed,
            // waiting let it hold: the candidates' haste, so the first run's sequence stands
            Ok(None) => s.first,
            Err(End::Unreachable(why)) => {
                unreachable = Some(why);
                best
            }
            Err(End::TimedOut) => best,
        },
    };
    Shrunk {
        outcome,
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
    /// The first run's outcome.
    first: RunOutcome,
    /// The shortest candidate's that failed the same check, once one did.
    best: Option<RunOutcome>,
    runs: usize,
    sent: usize,
}

impl Shrinker<'_, '_> {
    /// The shortest sequence found so far that fails the same check.
    fn current(&self) -> &RunOutcome {
        self.best.as_ref().unwrap_or(&self.first)
    }

    /// Runs a candidate within the time bound; its outcome, when it failed the same check.
    async fn candidate(&mut self, candidate: &[Op]) -> Result<Option<RunOutcome>, End> {
        if self.started.elapsed() > self.config.shrink_budget {
            return Err(End::TimedOut);
        }
        self.run(candidate, false).await
    }

    /// Runs `ops` (`patient`: reading a failing eventual check again within the consistency
    /// window); its outcome, when it failed the same check.
    async fn run(&mut self, ops: &[Op], patient: bool) -> Result<Option<RunOutcome>, End> {
        self.runs += 1;
        let (ctx, family) = (self.ctx, self.family);
        let with = (self.config, self.learned);
        let outcome = run_ops(ctx, family, with, self.names.next(), ops, patient).await;
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
        let mut chunk = (self.current().steps.len() / 2).max(1);
        loop {
            let mut i = 0;
            while i < self.current().steps.len() {
                let ops = self.current().executed();
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
                    Some(outcome) if outcome.steps.len() < self.current().steps.len() => {
                        self.best = Some(outcome);
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
        while i < self.current().steps.len() {
            let ops = self.current().executed();
            for simpler in ops[i].simpler() {
                let mut candidate = ops.clone();
                candidate[i] = simpler;
                match self.candidate(&candidate).await? {
                    Some(outcome) if outcome.steps.len() <= self.current().steps.len() => {
                        self.best = Some(outcome);
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
