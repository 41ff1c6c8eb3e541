//! Waivers: known deviations of a target, listed in a TOML file (`--waivers FILE`), each with
//! a reason, a link and an expiry date. A failing test a live waiver matches becomes
//! `waived`; once the waiver expires the failure counts again, and says why. A waiver that
//! waived nothing in a run is reported at the end, so stale entries do not pile up.
//!
//! ```toml
//! [[waiver]]
//! test = "runs::*::api-v2"          # glob on test names: `*` any run of characters, `?` one
//! reason = "staging lacks the /api/v2 prefix on runs"
//! link = "https://example.com/issues/12"
//! expires = "2026-12-31"            # the last day the waiver holds (UTC)
//! checks = ["endpoint.exists"]      # optional: waive only failures of these checks
//! ```

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::Deserialize;

use crate::glob::glob;
use crate::settings::ConfigError;
use crate::verdict::{Profile, TestResult, Verdict};

/// A calendar day (UTC), `YYYY-MM-DD`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Date(time::Date);

impl Date {
    /// Parses `YYYY-MM-DD` strictly (four-digit year, a real calendar day).
    pub fn parse(text: &str) -> Result<Self, String> {
        let bad = || format!("`{text}` is not a date of the form YYYY-MM-DD");
        let b = text.as_bytes();
        let digits = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
        if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
            return Err(bad());
        }
        if !(digits(0..4) && digits(5..7) && digits(8..10)) {
            return Err(bad());
        }
        let num = |r: std::ops::Range<usize>| text[r].parse::<u16>().map_err(|_| bad());
        let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
        let month = u8::try_from(month)
            .ok()
            .and_then(|m| time::Month::try_from(m).ok());
        let day = u8::try_from(day).ok();
        match (month, day) {
            (Some(month), Some(day)) => time::Date::from_calendar_date(i32::from(year), month, day)
                .map(Self)
                .map_err(|_| format!("`{text}` is not a day of the calendar")),
            _ => Err(format!("`{text}` is not a day of the calendar")),
        }
    }

    /// Today in UTC.
    pub fn today() -> Self {
        Self(time::OffsetDateTime::now_utc().date())
    }

    /// The day `days` after 1970-01-01.
    pub fn from_days(days: i64) -> Self {
        let epoch = time::Date::from_calendar_date(1970, time::Month::January, 1)
            .unwrap_or(time::Date::MIN);
        Self(
            epoch
                .checked_add(time::Duration::days(days))
                .unwrap_or(time::Date::MAX),
        )
    }
}

impl std::fmt::Display for Date {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:04}-{:02}-{:02}",
            self.0.year(),
            u8::from(self.0.month()),
            self.0.day()
        )
    }
}

/// A glob on test names: `*` matches any run of characters (`::` included), `?` one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern(String);

impl Pattern {
    /// Checks the pattern holds only what test names hold, plus `*` and `?`.
    pub fn parse(text: &str) -> Result<Self, String> {
        if text.is_empty() {
            return Err("the test pattern is empty".into());
        }
        if let Some(c) = text
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || "_-:.*?".contains(*c)))
        {
            return Err(format!(
                "test pattern `{text}` holds `{c}`; a pattern holds letters, digits, `_ - : .` and the wildcards `*` and `?`"
            ));
        }
        if text.contains(":::") || text.replace("::", "").contains(':') {
            return Err(format!(
                "test pattern `{text}` has a stray `:`; names are group::endpoint::variant"
            ));
        }
        Ok(Self(text.to_string()))
    }

    /// True when the pattern matches the whole name.
    pub fn matches(&self, name: &str) -> bool {
        glob(&self.0, name)
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct WaiverFile {
    #[serde(default)]
    waiver: Vec<RawWaiver>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWaiver {
    test: String,
    reason: String,
    #[serde(default)]
    link: Option<String>,
    expires: String,
    #[serde(default)]
    checks: Vec<String>,
}

/// One entry of the waiver file.
#[derive(Debug)]
pub struct Waiver {
    /// Which tests it covers.
    pub pattern: Pattern,
    /// Why the deviation is accepted.
    pub reason: String,
    /// Where it is tracked.
    pub link: Option<String>,
    /// The last day it holds.
    pub expires: Date,
    /// When not empty: only failures of these checks are waived.
    pub checks: Vec<String>,
    /// Failing tests it waived (or would have, once expired).
    matched: AtomicUsize,
}

impl Waiver {
    fn cite(&self) -> String {
        match &self.link {
            Some(link) => format!("{}; {link}", self.reason),
            None => self.reason.clone(),
        }
    }
}

/// The waivers of a run.
#[derive(Debug)]
pub struct Waivers {
    /// The entries, in file order.
    pub entries: Vec<Waiver>,
    /// The day expiry is judged against.
    pub today: Date,
    /// The file they came from.
    pub source: String,
}

impl Waivers {
    /// Reads and validates a waiver file; every problem is a configuration error.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| ConfigError(format!("cannot read --waivers {}: {e}", path.display())))?;
        Self::parse(&text, &path.display().to_string(), Date::today())
    }

    /// Parses a waiver file's text, judging expiry against `today`.
    pub fn parse(text: &str, source: &str, today: Date) -> Result<Self, ConfigError> {
        let file: WaiverFile =
            toml::from_str(text).map_err(|e| ConfigError(format!("waiver file {source}: {e}")))?;
        let mut entries = Vec::new();
        for (i, raw) in file.waiver.into_iter().enumerate() {
            let at = |msg: String| {
                ConfigError(format!("waiver file {source}, waiver #{}: {msg}", i + 1))
            };
            let pattern = Pattern::parse(raw.test.trim()).map_err(at)?;
            let expires =
                Date::parse(raw.expires.trim()).map_err(|e| at(format!("expires: {e}")))?;
            if raw.reason.trim().is_empty() {
                return Err(at(
                    "the reason is empty; say why the deviation is accepted".into()
                ));
            }
            if let Some(bad) = raw
                .checks
                .iter()
                .find(|c| !crate::checks::CHECKS.iter().any(|k| k.id == c.as_str()))
            {
                return Err(at(format!(
                    "checks: `{bad}` is not a check id (`conform checks` lists them)"
                )));
            }
            entries.push(Waiver {
                pattern,
                reason: raw.reason.trim().to_string(),
                link: raw.link.filter(|l| !l.trim().is_empty()),
                expires,
                checks: raw.checks,
                matched: AtomicUsize::new(0),
            });
        }
        Ok(Self {
            entries,
            today,
            source: source.to_string(),
        })
    }

    /// Turns a failure a live waiver covers into `waived`; a failure only an expired waiver
    /// covers stays a failure and says the waiver expired.
    pub fn apply(&self, result: &mut TestResult, profile: Profile) {
        if result.verdict != Verdict::Fail {
            return;
        }
        let failing: Vec<&str> = result.failing(profile).map(|f| f.check.id).collect();
        let covers = |w: &Waiver| {
            w.pattern.matches(&result.name)
                && (w.checks.is_empty()
                    || (!failing.is_empty()
                        && failing.iter().all(|id| w.checks.iter().any(|c| c == id))))
        };
        let mut expired = None;
        for w in self.entries.iter().filter(|w| covers(w)) {
            w.matched.fetch_add(1, Ordering::Relaxed);
            if w.expires >= self.today {
                result.verdict = Verdict::Waived;
                let why = format!(
                    "waived by `{}` until {}: {}",
                    w.pattern.as_str(),
                    w.expires,
                    w.cite()
                );
                result.reason = Some(match result.reason.take() {
                    Some(old) => format!("{why}\n{old}"),
                    None => why,
                });
                return;
            }
            expired.get_or_insert(w);
        }
        if let Some(w) = expired {
            let why = format!(
                "the waiver `{}` expired on {} ({}); the failure counts again",
                w.pattern.as_str(),
                w.expires,
                w.cite()
            );
            result.reason = Some(match result.reason.take() {
                Some(old) => format!("{why}\n{old}"),
                None => why,
            });
        }
    }

    /// Warnings for the end of the run: waivers that covered no failure, and expired ones.
    pub fn warnings(&self, test_names: &[String]) -> Vec<String> {
        let mut out = Vec::new();
        for w in &self.entries {
            let matched = w.matched.load(Ordering::Relaxed);
            let expired = w.expires < self.today;
            if matched == 0 {
                let names = test_names.iter().filter(|n| w.pattern.matches(n)).count();
                let what = if names == 0 {
                    "matches no test name of this run (a typo, or outside the selection)"
                        .to_string()
                } else {
                    format!(
                        "matched {names} test(s), none of which failed: the deviation may be fixed; remove the waiver"
                    )
                };
                out.push(format!(
                    "waiver `{}` ({}) {what}{}",
                    w.pattern.as_str(),
                    self.source,
                    if expired {
                        format!("; it expired on {}", w.expires)
                    } else {
                        String::new()
                    }
                ));
            } else if expired {
                out.push(format!(
                    "waiver `{}` ({}) expired on {}: {matched} failure(s) it covered count again",
                    w.pattern.as_str(),
                    self.source,
                    w.expires
                ));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        let p = Pattern::parse("runs::*::api-v2").unwrap();
        assert!(p.matches("runs::show::api-v2"));
        assert!(p.matches("runs::force_cancel::api-v2"));
        assert!(!p.matches("runs::show::bare"));
        assert!(!p.matches("xruns::show::api-v2"));
        assert!(Pattern::parse("*").unwrap().matches("a::b::c"));
        assert!(Pattern::parse("runs::sho?::*")
            .unwrap()
            .matches("runs::show::bare"));
        assert!(Pattern::parse("runs::**::bare")
            .unwrap()
            .matches("runs::a::b::bare"));
        assert!(Pattern::parse("").is_err());
        assert!(Pattern::parse("runs show").is_err());
        assert!(Pattern::parse("runs:show").is_err());
        assert!(Pattern::parse("runs[a]").is_err());
    }

    #[test]
    fn dates() {
        assert_eq!(Date::parse("2024-02-29").unwrap().to_string(), "2024-02-29");
        assert!(Date::parse("2023-02-29").is_err());
        assert!(Date::parse("2023-13-01").is_err());
        assert!(Date::parse("2023-1-01").is_err());
        assert!(Date::parse("31/12/2023").is_err());
        assert!(Date::parse("+023-01-01").is_err());
        assert_eq!(Date::from_days(0).to_string(), "1970-01-01");
        assert_eq!(Date::from_days(19_782).to_string(), "2024-02-29");
        assert!(Date::today() > Date::parse("2024-01-01").unwrap());
    }

    #[test]
    fn file_errors_name_the_entry() {
        let today = Date::parse("2025-06-01").unwrap();
        let e = Waivers::parse(
            "[[waiver]]\ntest='a::*'\nreason='r'\nexpires='2025-02-30'\n",
            "w.toml",
            today,
        )
        .unwrap_err();
        assert!(
            e.0.contains("waiver #1") && e.0.contains("2025-02-30"),
            "{e}"
        );
        let e =
            Waivers::parse("[[waiver]]\ntest='a::*'\nreason='r'\n", "w.toml", today).unwrap_err();
        assert!(e.0.contains("expires"), "{e}");
        let e = Waivers::parse(
            "[[waiver]]\ntest='a::*'\nreason='r'\nexpires='2025-01-01'\ncheck='x'\n",
            "w.toml",
            today,
        )
        .unwrap_err();
        assert!(e.0.contains("check"), "{e}");
    }
}
