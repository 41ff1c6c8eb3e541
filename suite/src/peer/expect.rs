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

/// The peer's data file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PeerFile {
    /// The Go module path.
    pub module: String,
    /// The pinned version (`v1.111.2`).
    pub version: String,
    /// The `-test.skip` pattern every process gets (subtests that need what the set excludes).
    pub skip_subtests: String,
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
        rules
            .flat_map(|r| r.tests.iter())
            .filter(|p| !tests.iter().any(|t| glob(p, t)))
            .cloned()
            .collect()
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
skip_subtests = "_X"
[groups]
[instance_changes]
reason = "r"
tests = []
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
            vec!["TestGone*".to_string()]
        );
        assert!(PeerFile::parse("module = 1").is_err());
    }
}
