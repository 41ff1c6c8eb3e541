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
    let budget = config.shrink_budget;
    let started = Instant::now();
    let check = first.failure.as_ref().map(|f| f.check.id);
    let from = first.steps.len();
    let mut best = first;
    let mut runs = 0;
    let mut sent = 0;
    let mut timed_out = false;
    let mut unreachable = None;
    'outer: loop {
        let mut changed = false;
        let mut chunk = (best.steps.len() / 2).max(1);
        loop {
            let mut i = 0;
            while i < best.steps.len() {
                let ops = best.executed();
                let candidate: Vec<Op> = ops[..i]
                    .iter()
                    .chain(ops[(i + chunk).min(ops.len())..].iter())
                    .copied()
                    .collect();
                if candidate.is_empty() {
                    i += chunk;
                    continue;
                }
                if started.elapsed() > budget {
                    timed_out = true;
                    break 'outer;
                }
                runs += 1;
                let outcome = run_ops(ctx, family, config, learned, names.next(), &candidate).await;
                sent += outcome.exchanges.len();
                if let Some(why) = outcome.unreachable.clone() {
                    unreachable = Some(why);
                    break 'outer;
                }
                if outcome.failure.as_ref().map(|f| f.check.id) == check
                    && outcome.steps.len() < best.steps.len()
                {
                    best = outcome;
                    changed = true;
                } else {
                    i += chunk;
                }
            }
            if chunk == 1 {
                break;
            }
            chunk /= 2;
        }
        // `best` may get shorter on the way (a simpler operation can leave a later one with
        // nothing to act on): the bound is read again for every index.
        let mut i = 0;
        while i < best.steps.len() {
            let ops = best.executed();
            for simpler in ops[i].simpler() {
                if started.elapsed() > budget {
                    timed_out = true;
                    break 'outer;
                }
                let mut candidate = ops.clone();
                candidate[i] = simpler;
                runs += 1;
                let outcome = run_ops(ctx, family, config, learned, names.next(), &candidate).await;
                sent += outcome.exchanges.len();
                if let Some(why) = outcome.unreachable.clone() {
                    unreachable = Some(why);
                    break 'outer;
                }
                if outcome.failure.as_ref().map(|f| f.check.id) == check
                    && outcome.steps.len() <= best.steps.len()
                {
                    best = outcome;
                    changed = true;
                    break;
                }
            }
            i += 1;
        }
        if !changed {
            break;
        }
    }
    Shrunk {
        outcome: best,
        sent,
        from,
        runs,
        elapsed: started.elapsed(),
        timed_out,
        unreachable,
    }
}
