//! What the proxy saw, per endpoint and path form, and its reports: `results.json` and
//! `summary.md`. Bounded: a few deviations are kept per check and entry, the rest counted.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde_json::{json, Value};

use crate::catalog::Matched;
use crate::checks::answer::Judgement;
use crate::checks::Level;
use crate::target::Exchange;

/// Characters of a body kept in a report.
const REPORT_BODY_BYTES: usize = 4096;
use crate::verdict::Profile;

/// Deviations kept per check and entry (the others are counted).
pub const KEPT_PER_CHECK: usize = 3;
/// Unmatched request paths kept (the others are counted).
const KEPT_UNMATCHED: usize = 100;

/// One endpoint and path form seen.
#[derive(Debug, Default)]
struct Entry {
    method: String,
    count: u64,
    statuses: BTreeMap<u16, u64>,
    held: BTreeMap<&'static str, u64>,
    deviated: BTreeMap<&'static str, (Level, u64, Vec<Value>)>,
}

/// Everything seen so far.
#[derive(Debug, Default)]
pub struct Observed {
    entries: BTreeMap<String, Entry>,
    unmatched: BTreeMap<String, u64>,
    unmatched_dropped: u64,
    exchanges: u64,
    /// Tokens seen in requests, redacted from everything written.
    tokens: BTreeSet<String>,
    /// Organizations the traffic made and has not deleted, by name (bounded).
    organizations_made: BTreeSet<String>,
}

impl Observed {
    /// Remembers a credential seen, so that no report holds it.
    pub fn token(&mut self, token: &str) {
        // Bounded: a client sending ever new tokens cannot grow it without end.
        if token.len() >= 4 && self.tokens.len() < 10_000 {
            self.tokens.insert(token.to_string());
        }
    }

    /// Records an exchange of an endpoint with its judgements.
    pub fn record(&mut self, m: &Matched, ex: &Exchange, judged: Vec<Judgement>) {
        self.exchanges += 1;
        self.track_organization(m, ex);
        let entry = self.entries.entry(m.test_name()).or_default();
        entry.method = ex.request.method.clone();
        entry.count += 1;
        if let Some(s) = ex.status() {
            *entry.statuses.entry(s).or_default() += 1;
        }
        for (check, result) in judged {
            match result {
                Ok(()) => *entry.held.entry(check.id).or_default() += 1,
                Err(message) => {
                    let slot =
                        entry
                            .deviated
                            .entry(check.id)
                            .or_insert((check.level, 0, Vec::new()));
                    slot.1 += 1;
                    if slot.2.len() < KEPT_PER_CHECK {
                        slot.2.push(json!({
                            "message": message.into_string(),
                            "exchange": exchange_json(ex),
                        }));
                    }
                }
            }
        }
    }

    /// Keeps the set of organizations the traffic made and has not deleted: what a client
    /// (go-tfe's tests, `conform peer`) left behind on the target.
    fn track_organization(&mut self, m: &Matched, ex: &Exchange) {
        let Some(status) = ex.status() else { return };
        match m.endpoint.as_str() {
            "organizations::create" if status == 201 && self.organizations_made.len() < 10_000 => {
                let body = ex
                    .response
                    .as_ref()
                    .map(|r| r.body.as_slice())
                    .unwrap_or_default();
                let name = serde_json::from_slice::<Value>(body).ok().and_then(|doc| {
                    doc.pointer("/data/attributes/name")
                        .or_else(|| doc.pointer("/data/id"))
                        .and_then(Value::as_str)
                        .map(str::to_string)
                });
                if let Some(name) = name {
                    self.organizations_made.insert(name);
                }
            }
            // go-tfe's administrator tests delete the organizations they made as an administrator.
            "organizations::delete" | "admin_organizations::delete"
                if (200..300).contains(&status) =>
            {
                let named = |p: &str| p == "organization_name" || p == "name";
                if let Some((_, name)) = m.params.iter().find(|(p, _)| named(p)) {
                    self.organizations_made.remove(name);
                }
            }
            _ => {}
        }
    }

    /// Organizations the traffic made and did not delete.
    pub fn organizations_left(&self) -> impl Iterator<Item = &String> {
        self.organizations_made.iter()
    }

    /// Records a request no catalog endpoint matches, by its route (ids replaced, the
    /// `/api/v2` prefix dropped: `GET /workspaces/:id/vars`), so that a client's thousand
    /// requests of one route are one line.
    pub fn unmatched(&mut self, method: &str, path: &str) {
        self.exchanges += 1;
        let key = crate::target::route_key(method, path);
        if self.unmatched.len() < KEPT_UNMATCHED || self.unmatched.contains_key(&key) {
            *self.unmatched.entry(key).or_default() += 1;
        } else {
            self.unmatched_dropped += 1;
        }
    }

    /// The suite's tests (`group::endpoint::form`) the exchanges matched.
    pub fn endpoints(&self) -> impl Iterator<Item = &str> {
        self.entries.keys().map(String::as_str)
    }

    /// Adds what another proxy saw (each `conform peer` test has a proxy of its own). The
    /// bounds hold: kept examples and unmatched paths stay within theirs.
    pub fn absorb(&mut self, other: Observed) {
        self.exchanges += other.exchanges;
        for (name, theirs) in other.entries {
            let mine = self.entries.entry(name).or_default();
            mine.method = theirs.method;
            mine.count += theirs.count;
            for (s, n) in theirs.statuses {
                *mine.statuses.entry(s).or_default() += n;
            }
            for (c, n) in theirs.held {
                *mine.held.entry(c).or_default() += n;
            }
            for (c, (level, n, kept)) in theirs.deviated {
                let slot = mine.deviated.entry(c).or_insert((level, 0, Vec::new()));
                slot.1 += n;
                let room = KEPT_PER_CHECK.saturating_sub(slot.2.len());
                slot.2.extend(kept.into_iter().take(room));
            }
        }
        for (key, n) in other.unmatched {
            if self.unmatched.len() < KEPT_UNMATCHED || self.unmatched.contains_key(&key) {
                *self.unmatched.entry(key).or_default() += n;
            } else {
                self.unmatched_dropped += n;
            }
        }
        self.unmatched_dropped += other.unmatched_dropped;
        for t in other.tokens {
            if self.tokens.len() < 10_000 {
                self.tokens.insert(t);
            }
        }
        for o in other.organizations_made {
            if self.organizations_made.len() < 10_000 {
                self.organizations_made.insert(o);
            }
        }
    }

    /// Every exchange seen, matched or not.
    pub fn exchanges(&self) -> u64 {
        self.exchanges
    }

    /// Exchanges matched to an endpoint.
    pub fn matched_count(&self) -> u64 {
        self.entries.values().map(|e| e.count).sum()
    }

    /// Deviations at a level the profile fails on.
    pub fn failing(&self, profile: Profile) -> u64 {
        self.entries
            .values()
            .flat_map(|e| e.deviated.values())
            .filter(|(level, _, _)| profile.fails_on(*level))
            .map(|(_, n, _)| n)
            .sum()
    }

    /// The `results.json` document: one entry per endpoint and path form seen, the requests
    /// no endpoint matched, and the coverage of the documented endpoints.
    pub fn results(&self, info: &RunInfo, documented: &[String]) -> Value {
        let entries: Vec<Value> = self
            .entries
            .iter()
            .map(|(name, e)| {
                let (endpoint, form) = name.rsplit_once("::").unwrap_or((name, ""));
                let deviations: Vec<Value> = e
                    .deviated
                    .iter()
                    .map(|(id, (level, n, kept))| {
                        json!({
                            "check": id,
                            "level": level.as_str(),
                            "fails": info.profile.fails_on(*level),
                            "count": n,
                            "examples": kept,
                        })
                    })
                    .collect();
                let verdict = if e
                    .deviated
                    .values()
                    .any(|(l, _, _)| info.profile.fails_on(*l))
                {
                    "fail"
                } else {
                    "pass"
                };
                json!({
                    "endpoint": endpoint,
                    "path_form": form,
                    "test": name,
                    "method": e.method,
                    "count": e.count,
                    "statuses": e.statuses.iter().map(|(s, n)| (s.to_string(), json!(n))).collect::<serde_json::Map<_, _>>(),
                    "verdict": verdict,
                    "held": e.held,
                    "deviations": deviations,
                })
            })
            .collect();
        let coverage = self.coverage(documented);
        let doc = json!({
            "tool": "conform proxy",
            "version": env!("CARGO_PKG_VERSION"),
            "target": info.target,
            "listen": info.listen,
            "profile": info.profile.as_str(),
            "duration_seconds": info.seconds,
            "exchanges": self.exchanges,
            "matched": self.matched_count(),
            "failing_deviations": self.failing(info.profile),
            "entries": entries,
            "unmatched": self.unmatched.iter().map(|(k, n)| json!({"request": k, "count": n})).collect::<Vec<_>>(),
            "unmatched_not_listed": self.unmatched_dropped,
            "coverage": coverage,
        });
        self.scrub(doc)
    }

    fn coverage(&self, documented: &[String]) -> Value {
        let seen_tests: BTreeSet<&str> = self.entries.keys().map(String::as_str).collect();
        let endpoint_of = |t: &str| t.rsplit_once("::").map(|(e, _)| e.to_string());
        let seen_endpoints: BTreeSet<String> =
            seen_tests.iter().filter_map(|t| endpoint_of(t)).collect();
        let all_endpoints: BTreeSet<String> =
            documented.iter().filter_map(|t| endpoint_of(t)).collect();
        let never: Vec<&String> = all_endpoints
            .iter()
            .filter(|e| !seen_endpoints.contains(*e))
            .collect();
        let forms_never: Vec<&String> = documented
            .iter()
            .filter(|t| !seen_tests.contains(t.as_str()))
            .collect();
        json!({
            "endpoints_documented": all_endpoints.len(),
            "endpoints_touched": all_endpoints.len() - never.len(),
            "endpoint_forms_documented": documented.len(),
            "endpoint_forms_touched": documented.len() - forms_never.len(),
            "never_touched": never,
        })
    }

    /// `summary.md`: the endpoints seen with their verdicts, then those never touched.
    pub fn summary(&self, info: &RunInfo, documented: &[String]) -> String {
        let results = self.results(info, documented);
        let mut out = format!(
            "# conform proxy\n\nTarget {}, profile {}, {} s: {} exchanges, {} matched to a documented endpoint, {} failing deviations.\n\n",
            info.target,
            info.profile.as_str(),
            info.seconds,
            self.exchanges,
            self.matched_count(),
            self.failing(info.profile)
        );
        out.push_str("| endpoint | form | requests | verdict | checks held | deviations |\n|---|---|---|---|---|---|\n");
        for e in results["entries"].as_array().into_iter().flatten() {
            let held: Vec<String> = e["held"]
                .as_object()
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default();
            let dev: Vec<String> = e["deviations"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|d| {
                    format!(
                        "`{}` ({}, {}x)",
                        d["check"].as_str().unwrap_or(""),
                        d["level"].as_str().unwrap_or(""),
                        d["count"]
                    )
                })
                .collect();
            out.push_str(&format!(
                "| `{}` | {} | {} | {} | {} | {} |\n",
                e["endpoint"].as_str().unwrap_or(""),
                e["path_form"].as_str().unwrap_or(""),
                e["count"],
                e["verdict"].as_str().unwrap_or(""),
                held.join(", "),
                dev.join(", ")
            ));
        }
        let cov = &results["coverage"];
        out.push_str(&format!(
            "\n## Coverage\n\n{} of {} documented endpoints touched ({} of {} endpoint path forms).\n\nNever touched:\n\n",
            cov["endpoints_touched"], cov["endpoints_documented"], cov["endpoint_forms_touched"], cov["endpoint_forms_documented"]
        ));
        for e in cov["never_touched"].as_array().into_iter().flatten() {
            out.push_str(&format!("- `{}`\n", e.as_str().unwrap_or("")));
        }
        let unmatched = results["unmatched"].as_array().map_or(0, Vec::len);
        if unmatched > 0 {
            out.push_str("\n## Requests no documented endpoint matches\n\n");
            for u in results["unmatched"].as_array().into_iter().flatten() {
                out.push_str(&format!(
                    "- `{}` ({}x)\n",
                    u["request"].as_str().unwrap_or(""),
                    u["count"]
                ));
            }
        }
        self.scrub_text(&out)
    }

    /// Writes `results.json` and `summary.md` into `dir`.
    pub fn write(&self, dir: &Path, info: &RunInfo, documented: &[String]) -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        let results = self.results(info, documented);
        let mut text = serde_json::to_string_pretty(&results).unwrap_or_default();
        text.push('\n');
        std::fs::write(dir.join("results.json"), text)?;
        std::fs::write(dir.join("summary.md"), self.summary(info, documented))
    }

    fn scrub(&self, doc: Value) -> Value {
        let text = self.scrub_text(&doc.to_string());
        serde_json::from_str(&text).unwrap_or(doc)
    }

    /// `text` with every token seen redacted as the run's own reports redact theirs
    /// ([`crate::target::redact`]): a short token only where it stands as a credential, so
    /// that a path or name containing its letters stays readable.
    fn scrub_text(&self, text: &str) -> String {
        let secrets: Vec<crate::target::Secret> =
            self.tokens.iter().map(crate::target::Secret::new).collect();
        crate::target::redact(text, &secrets.iter().collect::<Vec<_>>())
    }
}

/// What the reports say about the run itself.
#[derive(Debug, Clone)]
pub struct RunInfo {
    /// The target's root.
    pub target: String,
    /// Where the proxy listened.
    pub listen: String,
    /// The profile.
    pub profile: Profile,
    /// How long it ran.
    pub seconds: u64,
}

/// An exchange as JSON for a report: credentials redacted, bodies cut at 4 KiB, members
/// named `token` (created tokens) redacted.
fn exchange_json(ex: &Exchange) -> Value {
    let headers = |h: &[(String, String)]| -> Value {
        h.iter()
            .map(|(k, v)| {
                let secret = k.eq_ignore_ascii_case("authorization")
                    || k.eq_ignore_ascii_case("cookie")
                    || k.eq_ignore_ascii_case("set-cookie");
                json!([k, if secret { "(redacted)" } else { v.as_str() }])
            })
            .collect()
    };
    let body = |b: &[u8]| -> String {
        if let Ok(mut doc) = serde_json::from_slice::<Value>(b) {
            redact_tokens(&mut doc);
            let text = doc.to_string();
            return clip(&text);
        }
        clip(&String::from_utf8_lossy(b))
    };
    let response = match &ex.response {
        Ok(r) => json!({
            "status": r.status,
            "headers": headers(&r.headers),
            "body": body(&r.body),
            "truncated": r.truncated,
        }),
        Err(e) => json!({ "error": e.to_string() }),
    };
    json!({
        "request": {
            "method": ex.request.method,
            "url": ex.request.url,
            "headers": headers(&ex.request.headers),
            "body": ex.request.body.as_deref().map(|b| body(b.as_bytes())),
        },
        "response": response,
        "elapsed_ms": ex.elapsed.as_millis() as u64,
    })
}

fn clip(text: &str) -> String {
    match text.char_indices().nth(REPORT_BODY_BYTES) {
        Some((i, _)) => format!("{}… ({} bytes in all)", &text[..i], text.len()),
        None => text.to_string(),
    }
}

fn redact_tokens(v: &mut Value) {
    match v {
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                if k == "token" && v.is_string() {
                    *v = json!("(redacted)");
                } else {
                    redact_tokens(v);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact_tokens),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::Observed;

    #[test]
    fn a_short_token_is_redacted_where_it_is_a_credential_and_paths_stay_whole() {
        let mut seen = Observed::default();
        seen.token("adm1");
        seen.token("a-long-enough-token");
        let text =
            r#"{"auth":"Bearer adm1","path":"/admin/adm1x/users","echo":"xa-long-enough-tokenx"}"#;
        let out = seen.scrub_text(text);
        assert!(out.contains("Bearer (redacted)"), "{out}");
        assert!(out.contains("/admin/adm1x/users"), "{out}");
        assert!(out.contains("x(redacted)x"), "{out}");
    }
}
