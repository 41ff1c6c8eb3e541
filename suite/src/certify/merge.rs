//! `conform certify --from DIR...`: the reports of a run's shards (`--partition KIND:M/N`,
//! one folder each) made into one `results.json`: the same conform, profile and target in
//! every shard, each shard of the partition exactly once, each test exactly once and none
//! missing; otherwise the shard that differs is named.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use crate::verdict::Verdict;

/// One shard's `results.json` and where it came from.
pub struct Shard {
    /// Its reports folder.
    pub dir: PathBuf,
    /// Its `results.json`.
    pub doc: Value,
    /// Its partition: kind, shard number, shard count, tests selected before partitioning.
    partition: (String, usize, usize, usize),
}

impl Shard {
    /// Reads a shard's reports folder.
    pub fn read(dir: &Path) -> Result<Self, String> {
        let path = dir.join("results.json");
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let doc: Value = serde_json::from_str(&text)
            .map_err(|e| format!("{}: not a results.json ({e})", path.display()))?;
        let line = doc["config"]["partition"].as_str().unwrap_or_default();
        let partition = parse_partition(line).ok_or_else(|| {
            format!(
                "{}: not a shard: its run had no --partition KIND:M/N",
                dir.display()
            )
        })?;
        Ok(Self {
            dir: dir.to_path_buf(),
            doc,
            partition,
        })
    }

    /// `DIR (hash:1/3)`.
    pub fn describe(&self) -> String {
        let (kind, m, n, _) = &self.partition;
        format!("{} ({kind}:{m}/{n})", self.dir.display())
    }
}

/// `hash:1/3: 5 of 12 tests` -> (`hash`, 1, 3, 12).
fn parse_partition(line: &str) -> Option<(String, usize, usize, usize)> {
    let (shard, rest) = line.split_once(": ")?;
    let (kind, numbers) = shard.split_once(':')?;
    let (m, n) = numbers.split_once('/')?;
    let selected = rest.split(" of ").nth(1)?.split(' ').next()?;
    Some((
        kind.to_string(),
        m.parse().ok()?,
        n.parse().ok()?,
        selected.parse().ok()?,
    ))
}

/// What every shard must share: conform's version, the profile, the target (an embedded
/// reference's address changes from run to run, so it counts as itself).
fn identity(doc: &Value) -> [(&'static str, String); 3] {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    let target = text(&doc["config"]["target"]);
    let target = if target.ends_with("(embedded reference service)") {
        "the embedded reference service".to_string()
    } else {
        target
    };
    [
        ("conform version", text(&doc["conform"])),
        ("profile", text(&doc["profile"])),
        ("target", target),
    ]
}

/// Checks that the shards are one whole run; answers every way they are not.
pub fn check(shards: &[Shard]) -> Vec<String> {
    let mut reasons = Vec::new();
    let Some(first) = shards.first() else {
        return vec!["no shard given".into()];
    };
    let (kind, _, total, selected) = &first.partition;
    for shard in shards {
        for ((what, mine), (_, theirs)) in identity(&shard.doc).iter().zip(identity(&first.doc)) {
            if *mine != theirs {
                reasons.push(format!(
                    "{} differs: its {what} is `{mine}`, {}'s `{theirs}`",
                    shard.describe(),
                    first.describe()
                ));
            }
        }
        if !shard.doc["interrupted"].is_null() {
            reasons.push(format!("{}: the run was interrupted", shard.describe()));
        }
        let (k, _, n, s) = &shard.partition;
        if (k, n, s) != (kind, total, selected) {
            reasons.push(format!(
                "{} differs: another partition than {} ({k}:…/{n} of {s} tests)",
                shard.describe(),
                first.describe()
            ));
        }
    }
    for m in 1..=*total {
        let with: Vec<String> = shards
            .iter()
            .filter(|s| s.partition.1 == m)
            .map(Shard::describe)
            .collect();
        match with.len() {
            0 => reasons.push(format!("shard {kind}:{m}/{total} is missing")),
            1 => {}
            _ => reasons.push(format!(
                "shard {kind}:{m}/{total} is given twice: {}",
                with.join(", ")
            )),
        }
    }
    if !reasons.is_empty() {
        return reasons; // a shard given twice holds every one of its tests twice: said once
    }
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    for shard in shards {
        for test in shard.doc["tests"].as_array().into_iter().flatten() {
            let name = test["name"].as_str().unwrap_or_default().to_string();
            if let Some(other) = seen.insert(name.clone(), shard.describe()) {
                reasons.push(format!(
                    "{name} is in two shards: {other} and {}",
                    shard.describe()
                ));
            }
        }
    }
    if reasons.is_empty() && seen.len() != *selected {
        reasons.push(format!(
            "the shards hold {} tests, their runs selected {selected}",
            seen.len()
        ));
    }
    reasons
}

/// One `results.json` of the shards (checked first with [`check`]): every test, counts by
/// verdict and group made again, the figures summed, the warnings and root causes of all.
pub fn merged(shards: &[Shard]) -> Value {
    let mut doc = shards.first().map(|s| s.doc.clone()).unwrap_or_default();
    let mut tests: Vec<Value> = Vec::new();
    let (mut warnings, mut leftovers, mut causes) = (Vec::new(), Vec::new(), Vec::new());
    let (mut requests, mut wall) = (0.0, 0.0_f64);
    for shard in shards {
        let d = &shard.doc;
        tests.extend(d["tests"].as_array().into_iter().flatten().cloned());
        for (into, key) in [
            (&mut warnings, "warnings"),
            (&mut leftovers, "leftovers"),
            (&mut causes, "root_causes"),
        ] {
            into.extend(d[key].as_array().into_iter().flatten().cloned());
        }
        requests += d["figures"]["requests"].as_f64().unwrap_or(0.0);
        wall = wall.max(d["figures"]["wall_seconds"].as_f64().unwrap_or(0.0));
    }
    tests.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
    let mut groups: BTreeMap<String, Map<String, Value>> = BTreeMap::new();
    let mut counts = zero_counts();
    for t in &tests {
        let verdict = t["verdict"].as_str().unwrap_or_default();
        let group = groups
            .entry(t["group"].as_str().unwrap_or_default().to_string())
            .or_insert_with(zero_counts);
        for c in [&mut counts, group] {
            if let Some(n) = c.get_mut(verdict) {
                *n = json!(n.as_u64().unwrap_or(0) + 1);
            }
        }
    }
    if let Some(config) = doc["config"].as_object_mut() {
        config.remove("partition");
        let all: Vec<String> = shards.iter().map(Shard::describe).collect();
        config.insert("shards".into(), json!(all.join(", ")));
    }
    doc["figures"] = json!({"tests": tests.len(), "requests": requests, "wall_seconds": wall});
    doc["counts"] = Value::Object(counts);
    doc["groups"] = json!(groups);
    doc["warnings"] = json!(warnings);
    doc["leftovers"] = json!(leftovers);
    doc["root_causes"] = json!(causes);
    doc["tests"] = json!(tests);
    doc
}

fn zero_counts() -> Map<String, Value> {
    Verdict::ALL
        .iter()
        .map(|v| (v.as_str().to_string(), json!(0)))
        .collect()
}

/// `summary.md` of the merged run: the statement, the counts by group, the tests that fail.
pub fn summary(doc: &Value, statement: &str) -> String {
    let mut md = format!(
        "# conform: certificate of {} shards\n\n**{statement}**\n\n",
        doc["config"]["shards"]
            .as_str()
            .unwrap_or_default()
            .split(", ")
            .count()
    );
    md.push_str("| group | ");
    md.push_str(&Verdict::ALL.map(|v| v.as_str()).join(" | "));
    md.push_str(" |\n|---|");
    md.push_str(&"---|".repeat(Verdict::ALL.len()));
    md.push('\n');
    for (group, c) in doc["groups"].as_object().into_iter().flatten() {
        let cells: Vec<String> = Verdict::ALL
            .iter()
            .map(|v| c[v.as_str()].to_string())
            .collect();
        md.push_str(&format!("| {group} | {} |\n", cells.join(" | ")));
    }
    let failing: Vec<String> = doc["tests"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| {
            Verdict::named(t["verdict"].as_str().unwrap_or_default())
                .is_some_and(Verdict::fails_run)
        })
        .map(|t| {
            format!(
                "- `{}` {}: {}",
                t["name"].as_str().unwrap_or_default(),
                t["verdict"].as_str().unwrap_or_default(),
                t["reason"]
                    .as_str()
                    .and_then(|r| r.lines().next())
                    .unwrap_or("see results.json")
            )
        })
        .collect();
    if !failing.is_empty() {
        md.push_str("\n## Failing\n\n");
        md.push_str(&failing.join("\n"));
        md.push('\n');
    }
    md.push_str("\nEach shard's junit.xml and report.html are under `shards/`.\n");
    md
}
