//! `conform diff --target A --target B`: the same plan against two targets, and where their
//! answers differ in verdict or in shape, for a team moving from one implementation to
//! another.
//!
//! Each side is an ordinary run (fixtures, the tests of the selected groups, teardown) in this
//! process; then, test by test, the verdicts and failed checks are compared, and so is the
//! shape of the answer to the test's own request: its status, its media type, its top-level
//! members, and for a JSON:API document the resource type and the names of its attributes and
//! relationships (values differ between any two runs, ids above all, so they are not compared).

use std::collections::{BTreeMap, BTreeSet};
use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;
use serde_json::{json, Value};

use crate::catalog::Catalog;
use crate::cli::{ConnectionArgs, DiffArgs, RunArgs};
use crate::exit::ExitCodes;
use crate::harness::run_plan;
use crate::plan::{Item, Plan};
use crate::settings::{ConfigError, Settings};
use crate::target::Exchange;
use crate::verdict::TestResult;

/// One test's difference between the two sides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    /// The test.
    pub test: String,
    /// Its verdict on A and on B.
    pub verdicts: (String, String),
    /// Checks failed on one side only: (on A only, on B only).
    pub checks: (Vec<String>, Vec<String>),
    /// How the answers to the test's own request differ in shape.
    pub shape: Vec<String>,
}

/// `conform diff`.
pub fn command(args: &DiffArgs) -> ExitCode {
    match run(args) {
        Ok((differences, compared)) => {
            println!(
                "conform diff: {compared} tests compared, {} differ ({} in verdict, {} in shape); {}",
                differences.len(),
                differences
                    .iter()
                    .filter(|d| d.verdicts.0 != d.verdicts.1)
                    .count(),
                differences.iter().filter(|d| !d.shape.is_empty()).count(),
                args.reports.join("diff.json").display()
            );
            for d in &differences {
                println!("{}", line(d));
            }
            if compared == 0 {
                ExitCode::from(ExitCodes::NOTHING_JUDGED)
            } else if differences.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(ExitCodes::FAILED)
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(ExitCodes::CONFIG)
        }
    }
}

fn line(d: &Difference) -> String {
    let mut parts = Vec::new();
    if d.verdicts.0 != d.verdicts.1 {
        parts.push(format!(
            "verdict {} (A) vs {} (B)",
            d.verdicts.0, d.verdicts.1
        ));
    }
    if !d.checks.0.is_empty() {
        parts.push(format!("fails on A only: {}", d.checks.0.join(", ")));
    }
    if !d.checks.1.is_empty() {
        parts.push(format!("fails on B only: {}", d.checks.1.join(", ")));
    }
    parts.extend(d.shape.iter().cloned());
    format!("  {}: {}", d.test, parts.join("; "))
}

/// Runs both sides and compares them: the differences and the number of tests compared.
pub fn run(args: &DiffArgs) -> Result<(Vec<Difference>, usize), String> {
    if args.target.len() != 2 {
        return Err(format!(
            "conform diff takes exactly two --target (A and B), {} given",
            args.target.len()
        ));
    }
    for (name, list) in [
        ("--token", &args.token),
        ("--admin-token", &args.admin_token),
    ] {
        if list.len() > 2 {
            return Err(format!("{name} is given at most twice (for A, then B)"));
        }
    }
    let (a, catalog) = run_side(args, 0, "a", &args.fault_a)?;
    let (b, _) = run_side(args, 1, "b", &args.fault_b)?;
    let differences = compare(&catalog, &a, &b);
    let compared = a
        .iter()
        .filter(|r| b.iter().any(|s| s.name == r.name))
        .count();
    write_report(args, &differences, compared)?;
    Ok((differences, compared))
}

/// The plan of one side: its target and tokens, the profile, the groups and filter, its own
/// reports folder (and so its own ledger).
fn side_plan(
    args: &DiffArgs,
    index: usize,
    side: &str,
    faults: &[String],
) -> Result<Plan, ConfigError> {
    let target = &args.target[index];
    let run_args = RunArgs {
        connection: ConnectionArgs {
            target: (target != "embedded").then(|| target.clone()),
            token: args.token.get(index).or(args.token.first()).cloned(),
            admin_token: args
                .admin_token
                .get(index)
                .or(args.admin_token.first())
                .cloned(),
            ca_cert: args.ca_cert.clone(),
            insecure: args.insecure,
            ..ConnectionArgs::default()
        },
        profile: Some(args.profile),
        reports: args.reports.join(side),
        reference_fault: faults.to_vec(),
        ..RunArgs::default()
    };
    let mut plan = Plan::new(Settings::resolve(&run_args)?)?
        .in_groups(&args.group)?
        .retain(|item| match item {
            Item::Test(case) => args.filter.as_ref().is_none_or(|f| case.name.contains(f)),
            Item::Family(_) => false,
        });
    plan.concurrency = args.test_threads;
    Ok(plan)
}

/// Runs one side: its results, and the catalog its tests came from.
fn run_side(
    args: &DiffArgs,
    index: usize,
    side: &str,
    faults: &[String],
) -> Result<(Vec<TestResult>, Arc<Catalog>), String> {
    let plan = side_plan(args, index, side, faults).map_err(|e| format!("side {side}: {e}"))?;
    eprintln!(
        "conform diff: side {} ({}), {} tests",
        side.to_uppercase(),
        args.target[index],
        plan.items.len()
    );
    let (results, leftovers) = run_plan(&plan).map_err(|e| format!("side {side}: {e}"))?;
    for l in leftovers {
        eprintln!("side {side}: not deleted: {l}");
    }
    Ok((results, plan.catalog))
}

fn failed(result: &TestResult) -> BTreeSet<String> {
    result
        .findings
        .iter()
        .map(|f| f.check.id.to_string())
        .collect()
}

/// The differences between two runs of the same tests, in test order.
pub fn compare(catalog: &Catalog, a: &[TestResult], b: &[TestResult]) -> Vec<Difference> {
    let by_name: BTreeMap<&str, &TestResult> = b.iter().map(|r| (r.name.as_str(), r)).collect();
    let mut out = Vec::new();
    for ra in a {
        let Some(rb) = by_name.get(ra.name.as_str()) else {
            continue;
        };
        let (fa, fb) = (failed(ra), failed(rb));
        let checks = (
            fa.difference(&fb).cloned().collect::<Vec<_>>(),
            fb.difference(&fa).cloned().collect::<Vec<_>>(),
        );
        let shape = match (main_exchange(catalog, ra), main_exchange(catalog, rb)) {
            (Some(x), Some(y)) => {
                let (mut sx, mut sy) = (shape_of(x), shape_of(y));
                // A body kept only in part (over the 4 KiB a finished test keeps) is compared
                // by its status and media type alone, on both sides.
                if !(whole(x) && whole(y)) {
                    for shape in [&mut sx, &mut sy] {
                        shape.retain(|k, _| k == "status" || k == "media type" || k == "answer");
                    }
                }
                shape_differences(&sx, &sy)
            }
            _ => Vec::new(),
        };
        let verdicts = (
            ra.verdict.as_str().to_string(),
            rb.verdict.as_str().to_string(),
        );
        if verdicts.0 != verdicts.1
            || !checks.0.is_empty()
            || !checks.1.is_empty()
            || !shape.is_empty()
        {
            out.push(Difference {
                test: ra.name.clone(),
                verdicts,
                checks,
                shape,
            });
        }
    }
    out
}

/// True when the answer's body was kept whole.
fn whole(ex: &Exchange) -> bool {
    ex.response
        .as_ref()
        .is_ok_and(|r| !r.truncated && r.received <= r.body.len())
}

/// The exchange of the test's own request: the first whose method and path the catalog
/// judges at this test.
fn main_exchange<'a>(catalog: &Catalog, r: &'a TestResult) -> Option<&'a Exchange> {
    r.exchanges.iter().find(|ex| {
        let path = url::Url::parse(&ex.request.url)
            .map(|u| u.path().to_string())
            .unwrap_or_default();
        catalog.test_for(&ex.request.method, &path).as_deref() == Some(r.name.as_str())
    })
}

/// What is compared of an answer: status, media type, members, resource type and names.
pub fn shape_of(ex: &Exchange) -> BTreeMap<String, String> {
    let mut shape = BTreeMap::new();
    let Ok(response) = &ex.response else {
        shape.insert("answer".into(), "none".into());
        return shape;
    };
    shape.insert("status".into(), response.status.to_string());
    let media = ex
        .header("content-type")
        .unwrap_or("none")
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    shape.insert("media type".into(), media);
    let Ok(doc) = ex.json() else {
        return shape;
    };
    let names = |v: Option<&Value>| -> String {
        v.and_then(Value::as_object)
            .map(|m| m.keys().cloned().collect::<Vec<_>>().join(", "))
            .unwrap_or_default()
    };
    shape.insert("members".into(), names(Some(&doc)));
    match doc.get("data") {
        Some(Value::Object(data)) => {
            shape.insert("data".into(), "one resource".into());
            shape.insert(
                "type".into(),
                data.get("type").map(Value::to_string).unwrap_or_default(),
            );
            shape.insert("attributes".into(), names(data.get("attributes")));
            shape.insert("relationships".into(), names(data.get("relationships")));
        }
        Some(Value::Array(items)) => {
            shape.insert("data".into(), "a list".into());
            let types: BTreeSet<String> = items
                .iter()
                .filter_map(|i| i.get("type").map(Value::to_string))
                .collect();
            if !types.is_empty() {
                shape.insert(
                    "item types".into(),
                    types.into_iter().collect::<Vec<_>>().join(", "),
                );
            }
        }
        Some(other) => {
            shape.insert("data".into(), json_kind(other).into());
        }
        None => {}
    }
    shape
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// The shape aspects that differ, one sentence each.
pub fn shape_differences(
    a: &BTreeMap<String, String>,
    b: &BTreeMap<String, String>,
) -> Vec<String> {
    let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    let mut out = Vec::new();
    for key in keys {
        let (x, y) = (a.get(key), b.get(key));
        if x == y {
            continue;
        }
        let show = |v: Option<&String>| v.cloned().unwrap_or_else(|| "(none)".into());
        if matches!(key.as_str(), "members" | "attributes" | "relationships") {
            let set = |v: Option<&String>| -> BTreeSet<String> {
                v.map(|s| {
                    s.split(", ")
                        .filter(|n| !n.is_empty())
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default()
            };
            let (sx, sy) = (set(x), set(y));
            let only_a: Vec<_> = sx.difference(&sy).cloned().collect();
            let only_b: Vec<_> = sy.difference(&sx).cloned().collect();
            let mut parts = Vec::new();
            if !only_a.is_empty() {
                parts.push(format!("only A has {}", only_a.join(", ")));
            }
            if !only_b.is_empty() {
                parts.push(format!("only B has {}", only_b.join(", ")));
            }
            out.push(format!("{key}: {}", parts.join("; ")));
        } else {
            out.push(format!("{key} {} (A) vs {} (B)", show(x), show(y)));
        }
    }
    out
}

fn write_report(
    args: &DiffArgs,
    differences: &[Difference],
    compared: usize,
) -> Result<(), String> {
    std::fs::create_dir_all(&args.reports)
        .map_err(|e| format!("cannot write {}: {e}", args.reports.display()))?;
    let doc = json!({
        "tool": "conform diff",
        "version": env!("CARGO_PKG_VERSION"),
        "a": args.target[0],
        "b": args.target[1],
        "compared": compared,
        "differences": differences.iter().map(|d| json!({
            "test": d.test,
            "verdict": {"a": d.verdicts.0, "b": d.verdicts.1},
            "fails_on_a_only": d.checks.0,
            "fails_on_b_only": d.checks.1,
            "shape": d.shape,
        })).collect::<Vec<_>>(),
    });
    let mut text = serde_json::to_string_pretty(&doc).unwrap_or_default();
    text.push('\n');
    std::fs::write(args.reports.join("diff.json"), text)
        .map_err(|e| format!("cannot write diff.json: {e}"))
}

/// Parses `conform diff` options from words (for tests).
pub fn parse(words: &[&str]) -> Result<DiffArgs, String> {
    #[derive(Parser)]
    struct Wrapper {
        #[command(flatten)]
        args: DiffArgs,
    }
    let argv = std::iter::once("diff").chain(words.iter().copied());
    Wrapper::try_parse_from(argv)
        .map(|w| w.args)
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_differ_by_names_not_values() {
        let a: BTreeMap<String, String> = [
            ("status".to_string(), "201".to_string()),
            ("attributes".to_string(), "email, name".to_string()),
        ]
        .into();
        let b: BTreeMap<String, String> = [
            ("status".to_string(), "200".to_string()),
            ("attributes".to_string(), "email, name, plan".to_string()),
        ]
        .into();
        let d = shape_differences(&a, &b);
        assert_eq!(
            d,
            vec![
                "attributes: only B has plan".to_string(),
                "status 201 (A) vs 200 (B)".to_string()
            ]
        );
        assert!(shape_differences(&a, &a).is_empty());
    }
}
