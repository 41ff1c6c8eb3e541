//! Property-based request sequences: per resource family, random sequences of operations
//! (create, show, list, page walks, update, delete, the family's actions) run against the
//! target while a model keeps what should exist; the properties of [`engine`] are checked
//! after every step. A failing sequence is shrunk to a minimal one, within a time bound.
//!
//! Sequences are drawn with proptest strategies from a seeded [`TestRng`]; the case seed is
//! printed on failure and `--seed S` starts a run with exactly that case. Shrinking is our
//! own loop over `Vec<Op>` (chunk removal down to single operations, then simpler
//! operations), because every candidate is an async run against the live target in its own
//! organization that must be deleted afterwards, the loop needs a wall-clock bound, and a
//! target that goes away while shrinking must end as an `error`, not as a pass or a failure.
//!
//! Where the user gives an organization ([`SequenceConfig::organization`], `--organization`),
//! the families with a namespace work inside it instead of in organizations of their own:
//! every name a sequence gives starts with its own prefix (`{ns}-`, unique per family, case
//! and attempt), the lists of the organization's items are judged on the sequence's items
//! alone, and the sequence deletes what it made one by one. The organization is never changed.

mod cases;
pub mod engine;
mod shrink;

use std::collections::BTreeSet;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

use crate::catalog::families::model::Family;
use crate::checks::Finding;
use crate::runner::Context;
use crate::slots::Slots;
use crate::target::Exchange;
use crate::verdict::{Blocker, Draws, Minimal, TestResult, Verdict};
use cases::{case_seeds, CaseRun, Cases, Ended};
use engine::{Learned, Op, OpKind, Run, RunOutcome};
use shrink::{shrink, Shrunk};

/// The test-name group of the sequence tests.
pub const GROUP: &str = "sequences";

/// Cases per family when `--cases N` is not given.
pub const DEFAULT_CASES: u32 = 48;

/// How a run draws and shrinks sequences.
#[derive(Debug, Clone)]
pub struct SequenceConfig {
    /// Sequences per family.
    pub cases: u32,
    /// Seed of the first case (random when not given).
    pub seed: Option<u64>,
    /// Longest sequence drawn.
    pub max_len: usize,
    /// Wall-clock bound of shrinking one failure.
    pub shrink_budget: Duration,
    /// The existing organization to work in (`--organization`): families with a namespace
    /// make their items there, apart from everything else by their names' `{ns}-` prefix, and
    /// delete them again, instead of making (and deleting) an organization per sequence. The
    /// organization itself is never changed. `None`: an organization of its own per sequence.
    pub organization: Option<String>,
}

impl Default for SequenceConfig {
    fn default() -> Self {
        Self {
            cases: DEFAULT_CASES,
            seed: None,
            max_len: 20,
            shrink_budget: Duration::from_secs(20),
            organization: None,
        }
    }
}

/// The families of the embedded catalog, in report order (a run takes them from its
/// [`crate::catalog::Catalog`], which `--cases DIR` may have read from elsewhere).
pub fn families() -> &'static [Arc<Family>] {
    static FAMILIES: OnceLock<Vec<Arc<Family>>> = OnceLock::new();
    FAMILIES.get_or_init(|| {
        crate::catalog::Catalog::embedded()
            .map(|c| c.families)
            .unwrap_or_else(|e| panic!("the embedded catalog does not load: {e}"))
    })
}

/// The test name of a family.
pub fn test_name(family: &Family) -> String {
    format!("{GROUP}::{}", family.name)
}

/// The operations a family can draw, weighted by repetition.
fn templates(family: &Family) -> Vec<(OpKind, usize)> {
    let mut out = Vec::new();
    for (i, coll) in family.colls.iter().enumerate() {
        // Collections of the organization get more operations than those below them.
        let w = match coll.weight {
            0 if coll.parent.is_none() => 2,
            0 => 1,
            w => w,
        };
        let mut add = |kind, times: usize| (0..times * w).for_each(|_| out.push((kind, i)));
        add(OpKind::Create, 3);
        if coll.show.is_some() {
            add(OpKind::Show, 2);
            if !coll.show_list {
                add(OpKind::ShowUnknown, 1);
            }
        }
        if coll.list.is_some() {
            add(OpKind::List, 2);
            if coll.paged {
                add(OpKind::Walk, 2);
            }
        }
        if coll.update.is_some() {
            add(OpKind::Update, 2);
        }
        if coll.delete.is_some() {
            add(OpKind::Delete, 2 + coll.delete_alt.len().min(2));
        }
        if let Some(state) = &coll.state {
            for a in 0..state.actions.len() {
                add(OpKind::Action(a), 2);
            }
        }
    }
    out
}

/// The proptest strategy of a family's sequences.
fn strategy(family: &Family, max_len: usize) -> impl Strategy<Value = Vec<Op>> {
    let templates = templates(family);
    let n = templates.len();
    proptest::collection::vec(
        (0..n, any::<u8>(), 1u8..=4, any::<bool>()),
        1..=max_len.max(2),
    )
    .prop_map(move |raw| {
        raw.into_iter()
            .map(|(t, slot, page_size, api_v2)| Op {
                kind: templates[t].0,
                coll: templates[t].1,
                slot: usize::from(slot),
                page_size,
                api_v2,
                // The form comes from the slot's high bits (slots are used modulo small
                // counts), so that families without alternate forms draw what they drew.
                form: slot >> 6,
            })
            .collect()
    })
}

/// The sequence of a case seed: the same seed always gives the same sequence.
pub fn generate(family: &Family, seed: u64, max_len: usize) -> Vec<Op> {
    let mut bytes = [0u8; 32];
    let mut s = seed;
    for chunk in bytes.chunks_mut(8) {
        s = splitmix(s);
        chunk.copy_from_slice(&s.to_le_bytes());
    }
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &bytes);
    let mut runner = TestRunner::new_with_rng(Config::default(), rng);
    strategy(family, max_len)
        .new_tree(&mut runner)
        .map(|tree| tree.current())
        .unwrap_or_default()
}

fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A seed from the clock, for runs without `--seed`.
pub fn random_seed() -> u64 {
    crate::clock::random() % 1_000_000_000_000
}

struct Namespaces<'a> {
    ctx: &'a Context,
    family: &'a Family,
    case: u32,
    attempt: u32,
}

/// The part of a sequence's name prefix that names its family: the first three characters of
/// the name, followed by the family's place in the run's catalog and `i` when another family
/// of the catalog starts with the same three (so that two families never share a prefix).
fn family_tag(ctx: &Context, family: &Family) -> String {
    let short = |name: &str| -> String {
        name.chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .take(3)
            .collect::<String>()
            .to_ascii_lowercase()
    };
    let tag = short(&family.name);
    let families = &ctx.catalog.families;
    let shared = families
        .iter()
        .any(|f| f.name != family.name && short(&f.name) == tag);
    match families.iter().position(|f| f.name == family.name) {
        Some(at) if shared => format!("{tag}{at}i"),
        _ => tag,
    }
}

impl Namespaces<'_> {
    /// A new name prefix, unique in the run per family, case and attempt. No prefix is the
    /// start of another followed by `-` (a sequence's names are `{ns}-…`), so that a sequence
    /// can tell its items from those of every other sequence by their names.
    fn next(&mut self) -> String {
        self.attempt += 1;
        let base = format!(
            "{}-sq{}{}x{}",
            self.ctx.fixtures.prefix(),
            family_tag(self.ctx, self.family),
            self.case,
            self.attempt
        );
        if self.family.namespace {
            base
        } else {
            format!("{base}-")
        }
    }
}

/// Runs `ops` in the namespace `ns`; `patient`: a failing read of an eventual check is read
/// again within the consistency window ([`Run::impatient`] where not).
async fn run_ops(
    ctx: &Context,
    family: &Family,
    (config, learned): (&SequenceConfig, &Learned),
    ns: String,
    ops: &[Op],
    patient: bool,
) -> RunOutcome {
    let given = config.organization.clone().filter(|_| family.namespace);
    let run = Run::new(ctx, family, ns, given, learned);
    match patient {
        true => run.execute(ops).await,
        false => run.impatient().execute(ops).await,
    }
}

/// Runs a family's sequences to one result: its cases side by side within the run's `slots`
/// (see `sequences::cases`), the lowest-numbered failing case shrunk.
pub async fn run_family(
    ctx: &Context,
    family: &Family,
    config: &SequenceConfig,
    slots: &Slots,
) -> TestResult {
    let started = Instant::now();
    let name = test_name(family);
    if let Some(why) = not_runnable(ctx, family, config) {
        return result(
            &name,
            Verdict::Skipped,
            Some(why),
            Vec::new(),
            BTreeSet::new(),
            Vec::new(),
            (started, 0),
        );
    }
    // a family whose own group is absent is unsupported, whatever its draw would meet first
    if let Some((why, _)) = own_group_absent(ctx, family).await {
        return result(
            &name,
            Verdict::Unsupported,
            Some(why),
            Vec::new(),
            BTreeSet::new(),
            Vec::new(),
            (started, 0),
        );
    }
    let learned = Learned::default();
    let base = config.seed.unwrap_or_else(random_seed);
    let run = CaseRun::new(
        ctx,
        family,
        config,
        &learned,
        slots,
        case_seeds(base, config.cases.max(1)),
    );
    let Cases {
        sent,
        passed,
        notes,
        ended,
    } = run.run().await;
    let done = Done {
        ctx,
        family,
        name: &name,
        started,
        sent,
        passed,
        base,
    };
    match ended {
        Some(ended) => done.ended(config, &learned, slots, ended).await,
        None => done.all_held(config.cases.max(1), notes),
    }
}

/// Why the family's own group, the catalog group it is named after, is absent, unless that
/// group is required. (Asked of the group probe, which reads the group's routes first; a family
/// named after no group, such as `workspaces`, is judged by its draw.)
async fn own_group_absent(ctx: &Context, family: &Family) -> Option<(String, Exchange)> {
    let named = ctx.catalog.groups.iter().any(|g| g.group == family.name);
    if !named || ctx.required(&family.name) {
        return None;
    }
    ctx.group_absence(&family.name).await
}

/// Why a family is not run at all (skipped): its administrator endpoints without
/// `--admin-token`, a value it `requires` not given, or, inside a given organization, a
/// collection whose items could not be deleted again.
fn not_runnable(ctx: &Context, family: &Family, config: &SequenceConfig) -> Option<String> {
    if family.colls.iter().any(|c| c.admin) && ctx.target.config.admin_token.is_none() {
        return Some("administrator endpoints: needs --admin-token".into());
    }
    if let Some(missing) = family.requires.iter().find(|r| !ctx.fixtures.is_given(r)) {
        return Some(crate::settings::requirement_missing(missing));
    }
    let org = config
        .organization
        .as_deref()
        .filter(|_| family.namespace)?;
    // Inside a given organization the sequence deletes what it made, one by one.
    let coll = family
        .colls
        .iter()
        .find(|c| c.parent.is_none() && !c.relation && c.delete.is_none() && c.cleanup.is_none())?;
    Some(format!(
        "inside the given organization `{org}`: the items of collection `{}` could not be deleted again (it has neither `delete` nor `cleanup`)",
        coll.kind
    ))
}

/// A family's cases run: what its result is made of.
struct Done<'a> {
    ctx: &'a Context,
    family: &'a Family,
    name: &'a str,
    started: Instant,
    /// Requests every case sent.
    sent: usize,
    passed: BTreeSet<&'static str>,
    /// The seed of case 0.
    base: u64,
}

impl Done<'_> {
    /// The result of a family one of whose cases ended it (`ended`): an error when the
    /// target went away or the case could not be set up, unsupported or blocked when its
    /// failing request found no route, else a failure, shrunk.
    async fn ended(
        self,
        config: &SequenceConfig,
        learned: &Learned,
        slots: &Slots,
        ended: Ended<'_>,
    ) -> TestResult {
        let Ended {
            case,
            seed,
            mut names,
            outcome,
        } = ended;
        if let Some(why) = outcome.unreachable.clone() {
            let why = format!("{why} (sequence case {case}, seed {seed})");
            return self.result(Verdict::Error, Some(why), Vec::new(), Vec::new());
        }
        if let Some(why) = outcome.error.clone() {
            return self.not_set_up(why, outcome);
        }
        if let Some(missing) = route_missing(self.ctx, &outcome).await {
            let (verdict, why, blocker) = match missing {
                RouteMissing::GroupAbsent(why) => (Verdict::Unsupported, why, None),
                RouteMissing::Judged(blocker) => (Verdict::Blocked, blocker.line(), Some(blocker)),
            };
            let mut judged = self.result(verdict, Some(why), Vec::new(), outcome.exchanges);
            judged.blocked_by = blocker;
            return judged;
        }
        // shrinking runs one candidate at a time, in a slot of the run's
        let slot = slots.take().await;
        let shrunk = shrink(self.ctx, self.family, config, learned, &mut names, outcome).await;
        drop(slot);
        let draws = Draws {
            base: self.base,
            held: case,
        };
        let text = render(self.family, (seed, case), draws, config, &shrunk);
        let out = shrunk.outcome;
        let findings: Vec<Finding> = out.failure.iter().cloned().collect();
        let verdict = if shrunk.unreachable.is_some() {
            Verdict::Error
        } else {
            Verdict::Fail
        };
        let minimal = Minimal {
            seed,
            steps: out.steps.len(),
            shrunk_from: shrunk.from,
            timed_out: shrunk.timed_out,
        };
        let done = Done {
            sent: self.sent + shrunk.sent,
            ..self
        };
        let mut failed = done.result(verdict, Some(text), findings, out.exchanges);
        failed.minimal = Some(minimal);
        failed.draws = Some(draws);
        failed
    }

    /// A case whose sequence could not be set up (`why`): blocked by the request that made
    /// its organization (or, for the organizations family, its first organization), which
    /// the organizations tests judge; else an error.
    fn not_set_up(self, why: String, outcome: RunOutcome) -> TestResult {
        let failed_setup = outcome
            .setup
            .iter()
            .filter_map(|i| outcome.exchanges.get(*i))
            .find(|ex| !ex.is_success() && ex.status().is_some_and(|s| s != 429));
        if let Some(ex) = failed_setup {
            let needed = if self.family.namespace {
                "its own organization"
            } else {
                "organizations of its own"
            };
            let blocker = self.ctx.blocker(needed.into(), ex, None);
            let exchanges = outcome.exchanges.clone();
            let mut blocked = self.result(
                Verdict::Blocked,
                Some(blocker.line()),
                Vec::new(),
                exchanges,
            );
            blocked.blocked_by = Some(blocker);
            return blocked;
        }
        self.result(Verdict::Error, Some(why), Vec::new(), outcome.exchanges)
    }

    /// The result of a family none of whose cases ended it: a pass when it observed an
    /// effect at a level the profile fails on, else skipped; its findings below the
    /// profile's level (`notes`) kept with the exchanges they rest on.
    fn all_held(self, cases: u32, notes: Vec<(Finding, Option<Exchange>)>) -> TestResult {
        let mut exchanges = Vec::new();
        let findings = notes
            .into_iter()
            .map(|(mut f, ex)| {
                f.exchange = ex.map(|ex| {
                    exchanges.push(ex);
                    exchanges.len() - 1
                });
                f
            })
            .collect();
        // a pass observed the family's state: at least one effect (a list against the model, a
        // show after an update or a delete, a state reached) held at a level the profile fails on
        let observed = self
            .passed
            .iter()
            .any(|id| crate::checks::EFFECTS.iter().any(|e| e.id == *id));
        let (verdict, reason) = if observed {
            (Verdict::Pass, None)
        } else {
            (
                Verdict::Skipped,
                Some(format!(
                    "nothing failed, but no history of this family's state was observed at --profile {} (the cases drawn compared no list, show or state the profile judges with the model)",
                    self.ctx.profile.as_str()
                )),
            )
        };
        let draws = Draws {
            base: self.base,
            held: cases,
        };
        let mut held = self.result(verdict, reason, findings, exchanges);
        held.draws = Some(draws);
        held
    }

    fn result(
        self,
        verdict: Verdict,
        reason: Option<String>,
        findings: Vec<Finding>,
        exchanges: Vec<Exchange>,
    ) -> TestResult {
        result(
            self.name,
            verdict,
            reason,
            findings,
            self.passed,
            exchanges,
            (self.started, self.sent),
        )
    }
}

/// A sequence whose failing request found no route judges nothing of its own.
enum RouteMissing {
    /// The group whose test judges that request is absent as a whole (the group probe), and
    /// not required: the family is unsupported, as that group's tests are.
    GroupAbsent(String),
    /// The group is there and that one list route is not: its own test reports it, once;
    /// the family is blocked by it.
    Judged(Blocker),
}

/// Whether the failure of a sequence is a request that found no route (404, 405, 501 where
/// every id it names exists: see `checks::route_exists`), and what that makes of the family.
async fn route_missing(ctx: &Context, outcome: &RunOutcome) -> Option<RouteMissing> {
    let failure = outcome.failure.as_ref()?;
    let ex = outcome.exchanges.get(failure.exchange?)?;
    ctx.route_exists(ex).err()?;
    let test = ctx.test_for(ex)?;
    let group = test.split("::").next()?;
    if ctx.required(group) {
        return None;
    }
    if let Some((why, _)) = ctx.group_absence(group).await {
        return Some(RouteMissing::GroupAbsent(format!(
            "{why}; the sequence's request {} {} (judged by {test}) has no route",
            ex.request.method, ex.request.url
        )));
    }
    // A 404 can also mean an item is not found; a list under what the sequence made and
    // used can only lack its route (a delete or show of an item that was never made fails).
    let endpoint = test.rsplit_once("::").map(|(endpoint, _)| endpoint)?;
    let (_, e) = ctx.catalog.endpoint(endpoint, group)?;
    if e.kind != crate::catalog::Kind::List {
        return None;
    }
    let needed = "a route the target lacks".to_string();
    Some(RouteMissing::Judged(ctx.blocker(needed, ex, None)))
}

fn result(
    name: &str,
    verdict: Verdict,
    reason: Option<String>,
    findings: Vec<Finding>,
    passed: BTreeSet<&'static str>,
    exchanges: Vec<Exchange>,
    (started, sent): (Instant, usize),
) -> TestResult {
    let result = TestResult {
        requests: sent,
        name: name.to_string(),
        group: GROUP.to_string(),
        verdict,
        reason,
        findings,
        passed: passed.into_iter().collect(),
        exchanges,
        duration: started.elapsed(),
        blocked_by: None,
        minimal: None,
        draws: None,
    };
    result.keep_evidence()
}

/// Whether the failure depends on the draw: the cases drawn before the failing one, which all
/// ran, held (a run drawing only their seeds passes), or it was the first draw. The seeds are
/// named (the first few, and the chain they come from).
fn draw_line(draws: Draws) -> String {
    if draws.held == 0 {
        return "the first case drawn found it: no other draw ran before it\n".into();
    }
    let seeds = case_seeds(draws.base, draws.held);
    let shown: Vec<String> = seeds.iter().take(4).map(u64::to_string).collect();
    let more = match seeds.len().saturating_sub(shown.len()) {
        0 => String::new(),
        n => format!(" and {n} more"),
    };
    let cases = match draws.held {
        1 => "the case drawn before it".to_string(),
        n => format!("the {n} cases drawn before it"),
    };
    format!(
        "the verdict depends on the draw: {cases} held (seeds {}{more}, the chain of --seed {}); a run that draws only those passes\n",
        shown.join(", "),
        draws.base
    )
}

/// The failure message: seed, how to reproduce, the minimal sequence as numbered steps with
/// a curl line for every request (the token stays `$CONFORM_TOKEN`).
fn render(
    family: &Family,
    (seed, case): (u64, u32),
    draws: Draws,
    config: &SequenceConfig,
    shrunk: &Shrunk,
) -> String {
    let out = &shrunk.outcome;
    let mut text = String::new();
    if let Some(why) = &shrunk.unreachable {
        text.push_str(&format!(
            "the target became unreachable while shrinking ({why}); the smallest failing sequence found so far follows\n"
        ));
    }
    if let Some(f) = &out.failure {
        text.push_str(&format!(
            "sequence failed: [{}] {}: {}\n",
            f.level, f.check.id, f.message
        ));
    }
    text.push_str(&format!(
        "seed {seed} (case {case} of {}); reproduce with: conform {}{} --seed {seed} --cases 1{}\n",
        config.cases,
        crate::verdict::rerun_options()
            .filter(|o| !o.is_empty())
            .map(|o| format!("{o} "))
            .unwrap_or_default(),
        test_name(family),
        if crate::verdict::rerun_options().is_some() {
            ""
        } else {
            " (and the same target options)"
        }
    ));
    text.push_str(&draw_line(draws));
    text.push_str(&format!(
        "minimal sequence: {} (shrunk from {} in {} runs, {:.2} s{})\n",
        match out.steps.len() {
            1 => "1 step".to_string(),
            n => format!("{n} steps"),
        },
        shrunk.from,
        shrunk.runs,
        shrunk.elapsed.as_secs_f64(),
        if shrunk.timed_out {
            "; shrinking stopped at its time bound, the sequence may not be minimal"
        } else {
            ""
        }
    ));
    let curl = |i: &usize| {
        out.exchanges
            .get(*i)
            .map(|ex| format!("     {}\n", ex.curl()))
            .unwrap_or_default()
    };
    if !out.setup.is_empty() {
        text.push_str("  0. (setup) create the sequence's organization\n");
        out.setup.iter().for_each(|i| text.push_str(&curl(i)));
    }
    for (n, step) in out.steps.iter().enumerate() {
        text.push_str(&format!("  {}. {}\n", n + 1, step.text));
        step.exchanges.iter().for_each(|i| text.push_str(&curl(i)));
    }
    text
}
