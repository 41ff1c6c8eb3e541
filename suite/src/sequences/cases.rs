//! A family's cases, side by side. Case 0 runs first and alone, so that what it learns of the
//! target ([`Learned`]: states the service never reaches on its own) spares the other cases
//! the waiting; the rest then run at most [`Slots::width`] at once, each holding one of the
//! run's slots while it runs. Cases are independent (each in its own namespace: an
//! organization of its own, or its own name prefix), case `k`'s seed is the `k`-th of the
//! base seed's chain whatever the order they finish in, and their outcomes are taken in case
//! order: the lowest-numbered case that ends the family (a failure, a set-up error, a target
//! gone) is the one reported. Once a case has ended the family, the cases after it that have
//! not started do not start; those already running finish (and clean up after themselves).
//! A passing case keeps only what the family's result shows of it (its requests, the checks
//! it passed, its notes), so memory follows the width, not the number of cases.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU32, Ordering};

use futures_util::stream::{self, StreamExt};

use super::engine::{Learned, RunOutcome};
use super::{generate, run_ops, splitmix, Namespaces, SequenceConfig};
use crate::catalog::families::model::Family;
use crate::checks::Finding;
use crate::runner::Context;
use crate::slots::Slots;
use crate::target::Exchange;

/// What a family's cases came to.
pub(super) struct Cases<'a> {
    /// Requests every case sent, those that ran after the reported one included.
    pub(super) sent: usize,
    /// The checks passed by the cases up to the reported one (all of them when none ended).
    pub(super) passed: BTreeSet<&'static str>,
    /// Their findings below the profile's level: the first of each check, in case order,
    /// with the exchange it rests on.
    pub(super) notes: Vec<(Finding, Option<Exchange>)>,
    /// The lowest-numbered case that ended the family, if any.
    pub(super) ended: Option<Ended<'a>>,
}

/// A case that ended the family: it failed, could not be set up, or found the target gone.
pub(super) struct Ended<'a> {
    /// Its number.
    pub(super) case: u32,
    /// Its seed.
    pub(super) seed: u64,
    /// Its namespaces, for the runs of shrinking.
    pub(super) names: Namespaces<'a>,
    /// Its whole outcome.
    pub(super) outcome: RunOutcome,
}

/// What one case leaves.
enum CaseEnd<'a> {
    /// It passed: what the family's result keeps of it.
    Passed(Kept),
    /// It ended the family (boxed: its whole outcome is large beside a passed case's).
    Ended(Box<Ended<'a>>),
    /// It did not start: a lower case had ended the family.
    NotRun,
}

/// What the family's result keeps of a passing case.
struct Kept {
    sent: usize,
    passed: BTreeSet<&'static str>,
    notes: Vec<(Finding, Option<Exchange>)>,
}

impl Kept {
    fn of(outcome: &RunOutcome) -> Self {
        let notes = outcome
            .record
            .findings
            .iter()
            .map(|note| {
                let ex = note
                    .exchange
                    .and_then(|i| outcome.exchanges.get(i))
                    .cloned();
                (note.clone(), ex)
            })
            .collect();
        Self {
            sent: outcome.exchanges.len(),
            passed: outcome.record.passed.clone(),
            notes,
        }
    }
}

/// The seed of every case: case 0 has the base seed, each next one is drawn from the one
/// before (as when cases ran one after another).
pub(super) fn case_seeds(base: u64, cases: u32) -> Vec<u64> {
    let mut seeds = Vec::with_capacity(cases as usize);
    let mut seed = base;
    for case in 0..cases {
        if case > 0 {
            seed = splitmix(seed) % 1_000_000_000_000;
        }
        seeds.push(seed);
    }
    seeds
}

/// The cases of one family, run side by side.
pub(super) struct CaseRun<'a> {
    pub(super) ctx: &'a Context,
    pub(super) family: &'a Family,
    pub(super) config: &'a SequenceConfig,
    pub(super) learned: &'a Learned,
    pub(super) slots: &'a Slots,
    pub(super) seeds: Vec<u64>,
    /// The lowest case known to have ended the family (`u32::MAX`: none yet).
    first_ended: AtomicU32,
}

impl<'a> CaseRun<'a> {
    /// The cases of `family` with these seeds.
    pub(super) fn new(
        ctx: &'a Context,
        family: &'a Family,
        config: &'a SequenceConfig,
        learned: &'a Learned,
        slots: &'a Slots,
        seeds: Vec<u64>,
    ) -> Self {
        Self {
            ctx,
            family,
            config,
            learned,
            slots,
            seeds,
            first_ended: AtomicU32::new(u32::MAX),
        }
    }

    /// Runs the cases (case 0 first, then the rest side by side) and takes their outcomes
    /// in case order.
    pub(super) async fn run(&'a self) -> Cases<'a> {
        let mut cases = Cases {
            sent: 0,
            passed: BTreeSet::new(),
            notes: Vec::new(),
            ended: None,
        };
        let count = u32::try_from(self.seeds.len()).unwrap_or(u32::MAX);
        cases.take(self.one(0).await);
        if cases.ended.is_some() {
            return cases;
        }
        let width = self.slots.width();
        let mut rest = stream::iter(1..count)
            .map(|case| self.one(case))
            .buffered(width);
        // every started case is taken, even after the reported one: it finishes and cleans up
        while let Some(end) = rest.next().await {
            cases.take(end);
        }
        cases
    }

    /// Runs case `case`, unless a lower case has already ended the family.
    async fn one(&'a self, case: u32) -> CaseEnd<'a> {
        let ended_below = || self.first_ended.load(Ordering::SeqCst) < case;
        if ended_below() {
            return CaseEnd::NotRun;
        }
        let _slot = self.slots.take().await;
        let Some(&seed) = self.seeds.get(case as usize) else {
            return CaseEnd::NotRun;
        };
        if ended_below() {
            return CaseEnd::NotRun;
        }
        let ops = generate(self.family, seed, self.config.max_len);
        let mut names = Namespaces {
            ctx: self.ctx,
            family: self.family,
            case,
            attempt: 0,
        };
        let ns = names.next();
        let outcome = run_ops(
            self.ctx,
            self.family,
            (self.config, self.learned),
            ns,
            &ops,
            true,
        )
        .await;
        let ends =
            outcome.failure.is_some() || outcome.error.is_some() || outcome.unreachable.is_some();
        if !ends {
            return CaseEnd::Passed(Kept::of(&outcome));
        }
        self.first_ended.fetch_min(case, Ordering::SeqCst);
        CaseEnd::Ended(Box::new(Ended {
            case,
            seed,
            names,
            outcome,
        }))
    }
}

impl<'a> Cases<'a> {
    /// Takes the next case's outcome, in case order: what it passed and noted counts until a
    /// case has ended the family; after that only its requests do.
    fn take(&mut self, end: CaseEnd<'a>) {
        match end {
            CaseEnd::NotRun => {}
            CaseEnd::Passed(kept) => {
                self.sent += kept.sent;
                if self.ended.is_none() {
                    self.keep(kept);
                }
            }
            CaseEnd::Ended(ended) => {
                self.sent += ended.outcome.exchanges.len();
                if self.ended.is_none() {
                    self.keep(Kept::of(&ended.outcome));
                    self.ended = Some(*ended);
                }
            }
        }
    }

    fn keep(&mut self, kept: Kept) {
        self.passed.extend(kept.passed);
        for (note, ex) in kept.notes {
            if !self.notes.iter().any(|(n, _)| n.check.id == note.check.id) {
                self.notes.push((note, ex));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn case_seeds_follow_the_chain_from_the_base() {
        let seeds = case_seeds(7, 4);
        assert_eq!(seeds[0], 7);
        assert_eq!(seeds[1], splitmix(7) % 1_000_000_000_000);
        assert_eq!(seeds[3], splitmix(seeds[2]) % 1_000_000_000_000);
        assert_eq!(case_seeds(7, 2), seeds[..2].to_vec());
    }
}
