//! `results.json`: every test with its verdict, failed and passed checks, timing and request
//! count, plus the run's configuration (tokens redacted), figures, leftovers and warnings.
//!
//! ```json
//! { "format": 1, "conform": "0.1.0", "profile": "core",
//!   "config": { "target": "…", "token": "(redacted)", … },
//!   "interrupted": null,
//!   "figures": { "tests": 352, "requests": 2100, "wall_seconds": 3.2, "requests_per_second": 656.0 },
//!   "counts": { "pass": 350, "fail": 2, "unsupported": 0, "skipped": 0, "waived": 0, "error": 0 },
//!   "groups": { "runs": { "pass": 20, … } },
//!   "leftovers": [], "warnings": [],
//!   "tests": [ { "name": "runs::show::bare", "group": "runs", "verdict": "fail", "reason": null,
//!                "failed_checks": [ { "id": "endpoint.exists", "level": "core", "counts": true,
//!                                     "cites": "…", "message": "…", "evidence": "request: GET …" } ],
//!                "passed_checks": [ "…" ], "observed": [ "read-back", "…" ],
//!                "duration_ms": 12, "requests": 3,
//!                "minimal_sequence": null, "draws": null } ] }
//! ```
//! `interrupted`: `null`, or how a signal ended the run early (`by SIGINT: …`; the tests it
//! kept from running are `skipped` with the reason).
//! `draws` (a sequence family): `base_seed`, the seed of its case 0, and `held`, the cases that
//! held (all, or those before the failing one: then its verdict depends on the draw).
//! `observed`: the passed checks that observe the endpoint's effect (`checks::EFFECTS`).
//! `counts` in a failed check is true when the check fails the test under the profile
//! (false: a TFE-convention finding reported under `--profile core`).

use std::path::Path;

use serde_json::{json, Map, Value};

use super::{rate, tally, write_scrubbed, Counts, RunReport};
use crate::verdict::{TestResult, Verdict};

/// Writes `results.json`.
pub fn write_json(path: &Path, report: &RunReport) -> std::io::Result<()> {
    let text = serde_json::to_string_pretty(&render(report)).map_err(std::io::Error::other)?;
    write_scrubbed(path, &text, report.info)
}

fn counts(c: &Counts) -> Value {
    let mut m = Map::new();
    for v in Verdict::ALL {
        m.insert(v.as_str().into(), json!(c.of(v)));
    }
    Value::Object(m)
}

/// The JSON document.
pub fn render(report: &RunReport) -> Value {
    let info = report.info;
    let (groups, total) = tally(report.results);
    let mut config = Map::new();
    for (k, v) in &info.config {
        config.insert(k.clone(), json!(info.scrub(v)));
    }
    let mut by_group = Map::new();
    for (g, c) in &groups {
        by_group.insert((*g).to_string(), counts(c));
    }
    let tests: Vec<Value> = report.results.iter().map(|r| test(r, report)).collect();
    json!({
        "format": 1,
        "conform": env!("CARGO_PKG_VERSION"),
        "profile": report.profile.as_str(),
        "config": config,
        "interrupted": info.get("interrupted"),
        "figures": {
            "tests": total.total(),
            "requests": report.figures.requests,
            "wall_seconds": report.figures.wall.as_secs_f64(),
            "requests_per_second": rate(report.figures),
            "rate_limited_answers": report.figures.throttle.rate_limited,
            "throttled_seconds": report.figures.throttle.throttled.as_secs_f64(),
            "paced_seconds": report.figures.throttle.paced.as_secs_f64(),
            "learned_limit_per_second": report.figures.throttle.learned_limit,
            "learned_pace_seconds": report.figures.throttle.learned.as_secs_f64(),
            "rate_bound_seconds": report.figures.rate_bound().map(|b| b.seconds),
            "latency_bound_seconds": report.figures.latency_bound().map(|b| b.seconds),
            "mean_latency_ms": report.figures.latency_bound().map(|b| b.mean.as_secs_f64() * 1000.0),
            "connection_retries": report.figures.throttle.retried,
            "unavailable_retries": report.figures.throttle.unavailable,
            "throttled_routes": report.figures.throttle.routes.iter().map(|r| json!({
                "route": r.route,
                "rate_limited_answers": r.rate_limited,
                "waited_seconds": r.waited.as_secs_f64(),
            })).collect::<Vec<_>>(),
            "consistency": {
                "window_seconds": report.figures.lags.window.as_secs_f64(),
                "held_after_waiting": report.figures.lags.held_late,
                "longest_wait_seconds": report.figures.lags.longest.as_secs_f64(),
                "waited_seconds": report.figures.lags.total.as_secs_f64(),
                "never_held": report.figures.lags.never_held,
                "line": report.figures.lags.line(),
            },
        },
        "counts": counts(&total),
        "groups": by_group,
        "leftovers": report.leftovers.iter().map(|l| info.scrub(l)).collect::<Vec<_>>(),
        "slowest_tests": super::slowest_tests(report.results, report.figures).iter().map(|l| info.scrub(l)).collect::<Vec<_>>(),
        "kept_in_place": report.figures.kept_in_place.iter().map(|l| info.scrub(l)).collect::<Vec<_>>(),
        "warnings": report.warnings.iter().map(|w| info.scrub(w)).collect::<Vec<_>>(),
        "root_causes": super::cause_groups(report.results, report.profile)
            .iter()
            .map(|g| json!({
                "verdict": g.verdict.as_str(),
                "cause": info.scrub(&g.cause),
                "see": g.see,
                "tests": g.tests,
            }))
            .collect::<Vec<_>>(),
        "tests": tests,
    })
}

fn test(r: &TestResult, report: &RunReport) -> Value {
    let info = report.info;
    let with_evidence = r.verdict.fails_run() || r.verdict == Verdict::Waived;
    let failed: Vec<Value> = r
        .findings
        .iter()
        .map(|f| {
            let mut v = json!({
                "id": f.check.id,
                "level": f.level.as_str(),
                "counts": report.profile.fails_on(f.level),
                "cites": f.check.cites,
                "message": info.scrub(&f.message),
            });
            if with_evidence {
                if let Some(ex) = f.exchange.and_then(|i| r.exchanges.get(i)) {
                    v["evidence"] = json!(info.scrub(&ex.transcript()));
                }
            }
            v
        })
        .collect();
    json!({
        "name": r.name,
        "group": r.group,
        "verdict": r.verdict.as_str(),
        "reason": r.reason.as_deref().map(|s| info.scrub(s)),
        "failed_checks": failed,
        "passed_checks": r.passed,
        "observed": r.observed(),
        "blocked_by": r.blocked_by.as_ref().map(|b| json!({
            "needed": info.scrub(&b.needed),
            "request": info.scrub(&b.request),
            "answer": info.scrub(&b.answer),
            "see": b.see,
        })),
        "duration_ms": r.duration.as_secs_f64() * 1000.0,
        "requests": r.requests,
        "minimal_sequence": r.minimal.map(|m| json!({
            "seed": m.seed,
            "steps": m.steps,
            "shrunk_from": m.shrunk_from,
            "timed_out": m.timed_out,
        })),
        "draws": r.draws.map(|d| json!({
            "base_seed": d.base,
            "held": d.held,
        })),
    })
}
