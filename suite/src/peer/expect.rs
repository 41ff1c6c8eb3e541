//! The peer's data (`cases/peers/go-tfe.toml`): the pinned module, which top-level tests run,
//! the suite group of each, and what the embedded reference is expected to do with each test.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::glob::glob;

/// The embedded `cases/peers/go-tfe.toml`.
pub const GO_TFE: &str = include_str!("../../../cases/peers/go-tfe.toml");

/// A list of test-name globs with the reason they share.
#[derive(Debug, Clone, Deserialize)]
pub struct Rule {
    /// Why these tests are excluded, changed or expected to fail.
    pub reason: String,
    /// Globs on top-level test names (`crate::glob`).
    pub tests: Vec<String>,
}

impl Rule {
    fn matches(&self, test: &str) -> bool {
        self.tests.iter().any(|p| glob(p, test))
    }
}

/// Subtests no process runs, with the reason they share.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SubtestRule {
    /// Why these subtests are not run.
    pub reason: String,
    /// Go `-test.skip` patterns, one level per `/` (`^TestA$/^sub$` is one subtest of TestA).
    pub subtests: Vec<String>,
}

/// Environment variables some tests run with, beside the ones every test gets.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnvRule {
    /// Why these tests need them.
    pub reason: String,
    /// Globs on top-level test names (`crate::glob`).
    pub tests: Vec<String>,
    /// The variables.
    pub vars: BTreeMap<String, String>,
}

/// The peer's data file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PeerFile {
    /// The Go module path.
    pub module: String,
    /// The pinned version (`v1.111.2`).
    pub version: String,
    /// Subtests no process runs (`-test.skip`), each row with its reason.
    #[serde(default)]
    pub skip_subtests: Vec<SubtestRule>,
    /// Variables some tests run with.
    #[serde(default)]
    pub env: Vec<EnvRule>,
    /// Test-name prefix -> the suite's group.
    pub groups: BTreeMap<String, String>,
    /// Tests not run, with the reason.
    #[serde(default)]
    pub exclude: Vec<Rule>,
    /// Tests that change what a run did not make (run against a target only with
    /// `--allow-instance-changes`).
    pub instance_changes: Rule,
    /// Tests that run and judge nothing (every subtest skips against TFE), with the reason.
    #[serde(default)]
    pub skip: Vec<Rule>,
    /// Tests the embedded reference is expected to fail, with the reason.
    #[serde(default)]
    pub gap: Vec<Rule>,
    /// For a test of a spec group: which checks of the suite judge the behaviour it asserts,
    /// or what the suite does not check yet (the map of `map.md` and docs/GO-TFE-MAP.md).
    #[serde(default)]
    pub covers: BTreeMap<String, String>,
}

/// What a run is expected to see of one test against the embedded reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expected {
    /// It passes.
    Pass,
    /// It runs and judges nothing, for this reason.
    Skip(String),
    /// It fails, for this reason (a gap of the reference).
    Gap(String),
}

impl PeerFile {
    /// Parses and checks the file: every glob is used by the module's test list later, here
    /// only its syntax.
    pub fn parse(text: &str) -> Result<PeerFile, String> {
        let file: PeerFile =
            toml::from_str(text).map_err(|e| format!("cases/peers/go-tfe.toml: {e}"))?;
        if !file.version.starts_with('v') {
            return Err(format!(
                "cases/peers/go-tfe.toml: version `{}` is not a module version (vX.Y.Z)",
                file.version
            ));
        }
        Ok(file)
    }

    /// The embedded file.
    pub fn embedded() -> Result<PeerFile, String> {
        PeerFile::parse(GO_TFE)
    }

    /// Why a top-level test is not run, if it is not.
    pub fn excluded(&self, test: &str) -> Option<&str> {
        self.exclude
            .iter()
            .find(|r| r.matches(test))
            .map(|r| r.reason.as_str())
    }

    /// The `-test.skip` pattern every process gets: every row's patterns, as alternatives.
    pub fn skip_pattern(&self) -> String {
        let patterns: Vec<&str> = self
            .skip_subtests
            .iter()
            .flat_map(|r| r.subtests.iter().map(String::as_str))
            .collect();
        patterns.join("|")
    }

    /// The variables a test runs with beyond the common ones (every `env` row naming it).
    pub fn env_of(&self, test: &str) -> Vec<(String, String)> {
        self.env
            .iter()
            .filter(|r| r.tests.iter().any(|p| glob(p, test)))
            .flat_map(|r| r.vars.iter().map(|(k, v)| (k.clone(), v.clone())))
            .collect()
    }

    /// Whether a test changes what the run did not make.
    pub fn changes_instance(&self, test: &str) -> bool {
        self.instance_changes.matches(test)
    }

    /// What the embedded reference is expected to do with a test that runs.
    pub fn expected(&self, test: &str) -> Expected {
        if let Some(rule) = self.skip.iter().find(|r| r.matches(test)) {
            return Expected::Skip(rule.reason.clone());
        }
        match self.gap.iter().find(|r| r.matches(test)) {
            Some(rule) => Expected::Gap(rule.reason.clone()),
            None => Expected::Pass,
        }
    }

    /// The suite's group of a test (longest matching prefix), if the spec lists it.
    pub fn group(&self, test: &str) -> Option<&str> {
        self.groups
            .iter()
            .filter(|(prefix, _)| test.starts_with(prefix.as_str()))
            .max_by_key(|(prefix, _)| prefix.len())
            .map(|(_, group)| group.as_str())
    }

    /// Globs of the file that match none of the module's tests: a row that no longer says
    /// anything (a test renamed or removed in a new version) is an error of the data.
    pub fn stale_globs(&self, tests: &[String]) -> Vec<String> {
        let rules = self
            .exclude
            .iter()
            .chain(&self.gap)
            .chain(&self.skip)
            .chain(std::iter::once(&self.instance_changes));
        let env = self.env.iter().flat_map(|r| r.tests.iter());
        let mut stale: Vec<String> = rules
            .flat_map(|r| r.tests.iter())
            .chain(env)
            .filter(|p| !tests.iter().any(|t| glob(p, t)))
            .cloned()
            .collect();
        // A subtest row anchored to one top-level test (`^TestA$/…`) names a test that exists.
        let anchored = self.skip_subtests.iter().flat_map(|r| r.subtests.iter());
        stale.extend(
            anchored
                .filter(|p| {
                    let top = p.split('/').next().unwrap_or("");
                    top.strip_prefix('^')
                        .and_then(|t| t.strip_suffix('$'))
                        .is_some_and(|name| !tests.iter().any(|t| t == name))
                })
                .cloned(),
        );
        stale
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_file_parses_and_keeps_the_spec_groups_apart() {
        let file = PeerFile::embedded().unwrap();
        assert_eq!(
            file.group("TestOrganizationMembershipsList"),
            Some("organization_memberships")
        );
        assert_eq!(file.group("TestOrganizationsList"), Some("organizations"));
        assert_eq!(file.group("TestVariablesListAll"), Some("variables"));
        assert_eq!(file.group("TestVariableSetsList"), None);
        assert_eq!(file.group("TestTeamTokensList"), None);
        assert_eq!(file.group("TestTeamMembersList"), Some("teams"));
        assert!(file.excluded("TestWorkspacesRead_RunDependent").is_some());
        assert!(file.excluded("TestOrganizationsList").is_none());
        assert!(file.changes_instance("TestUsersUpdate"));
    }

    #[test]
    fn a_gap_row_names_its_reason_and_a_stale_glob_is_found() {
        let file = PeerFile::parse(
            r#"module = "m"
version = "v1.0.0"
[groups]
[instance_changes]
reason = "r"
tests = []
[[skip_subtests]]
reason = "needs a plan"
subtests = ["_X", "^TestA$/^sub$", "^TestGoneToo$/^sub$"]
[[env]]
reason = "beta"
tests = ["TestB"]
vars = { ENABLE_BETA = "1" }
[[exclude]]
reason = "gone"
tests = ["TestGone*"]
[[gap]]
reason = "not yet"
tests = ["TestB"]
"#,
        )
        .unwrap();
        assert_eq!(file.expected("TestA"), Expected::Pass);
        assert_eq!(file.expected("TestB"), Expected::Gap("not yet".into()));
        assert_eq!(
            file.stale_globs(&["TestA".into(), "TestB".into()]),
            vec!["TestGone*".to_string(), "^TestGoneToo$/^sub$".to_string()]
        );
        assert_eq!(file.skip_pattern(), "_X|^TestA$/^sub$|^TestGoneToo$/^sub$");
        assert_eq!(
            file.env_of("TestB"),
            vec![("ENABLE_BETA".to_string(), "1".to_string())]
        );
        assert!(file.env_of("TestA").is_empty());
        assert!(PeerFile::parse("module = 1").is_err());
    }
}
