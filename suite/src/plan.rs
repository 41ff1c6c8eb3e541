//! What a run will do, decided before any request: the resolved [`Settings`], the catalog and
//! schemas, the selected tests and sequence families (groups, `--read-only`, partition), the
//! waivers and how many items run at once. The CLI builds it from its options
//! ([`Plan::from_args`]); the selftest, `conform diff` and the project's tests build it from
//! [`Settings`] ([`Plan::new`]). Nothing after the plan reads the command line.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use crate::catalog::families::model::Family;
use crate::catalog::{Catalog, TestCase};
use crate::checks::Schemas;
use crate::cli::{RunArgs, DEFAULT_CONCURRENCY};
use crate::partition::Partition;
use crate::sequences;
use crate::settings::{ConfigError, Settings};
use crate::waivers::Waivers;

/// One thing a run judges: a test, or a sequence family (one result each).
#[derive(Debug, Clone)]
pub enum Item {
    /// One endpoint in one path variant.
    Test(Arc<TestCase>),
    /// The property-based sequences of one resource family.
    Family(Arc<Family>),
}

impl Item {
    /// The test name results and reports use.
    pub fn name(&self) -> String {
        match self {
            Item::Test(case) => case.name.clone(),
            Item::Family(family) => sequences::test_name(family),
        }
    }

    /// The group results and reports use.
    pub fn group(&self) -> &str {
        match self {
            Item::Test(case) => &case.group,
            Item::Family(_) => sequences::GROUP,
        }
    }
}

/// A run, decided: see the module documentation.
pub struct Plan {
    /// Flags > environment > config file, resolved once.
    pub settings: Settings,
    /// The catalog the items come from.
    pub catalog: Arc<Catalog>,
    /// The schemas the checks validate against.
    pub schemas: Arc<Schemas>,
    /// What runs: the tests, then the sequence families.
    pub items: Vec<Item>,
    /// The shard of `--partition`, with the number of items selected before it.
    pub partition: Option<(Partition, usize)>,
    /// `--waivers`: failures they cover become `waived`.
    pub waivers: Option<Arc<Waivers>>,
    /// Items run at once.
    pub concurrency: usize,
    /// How long a state is polled for, when not the runner's default (the selftest's short
    /// fault runs).
    pub poll_budget: Option<Duration>,
}

impl Plan {
    /// Every test and sequence family of the catalog `settings` name, nothing waived.
    pub fn new(settings: Settings) -> Result<Self, ConfigError> {
        let catalog = match &settings.cases_dir {
            Some(dir) => Catalog::from_dir(dir),
            None => Catalog::embedded(),
        }
        .map_err(|e| ConfigError(e.to_string()))?;
        known_fixtures(&settings, &catalog)?;
        let schemas = match &settings.schemas_dir {
            Some(dir) => Schemas::from_dir(dir),
            None => Schemas::embedded(),
        }
        .map_err(|e| ConfigError(e.to_string()))?;
        let items = catalog
            .tests()
            .into_iter()
            .map(|case| Item::Test(Arc::new(case)))
            .chain(catalog.families.iter().cloned().map(Item::Family))
            .collect();
        Ok(Self {
            settings,
            catalog: Arc::new(catalog),
            schemas: Arc::new(schemas),
            items,
            partition: None,
            waivers: None,
            concurrency: DEFAULT_CONCURRENCY,
            poll_budget: None,
        })
    }

    /// The plan of `conform [OPTIONS]`: the settings, the groups of `--group`, the read-only
    /// selection, `--partition`, `--waivers` and `--test-threads`.
    pub fn from_args(args: &RunArgs) -> Result<Self, ConfigError> {
        let settings = Settings::resolve(args)?;
        let partition = args
            .partition
            .as_deref()
            .map(Partition::parse)
            .transpose()?;
        let waivers = args.waivers.as_deref().map(Waivers::load).transpose()?;
        let mut plan = Self::new(settings)?.in_groups(&args.group)?;
        if plan.settings.read_only {
            // only what changes nothing (sequences create and delete)
            plan.items.retain(|item| match item {
                Item::Test(case) => crate::safety::changes_nothing(case),
                Item::Family(_) => false,
            });
        }
        if let Some(partition) = partition {
            plan = plan.sharded(partition);
        }
        plan.waivers = waivers.map(Arc::new);
        plan.concurrency = match args.libtest.test_threads {
            None => DEFAULT_CONCURRENCY,
            Some(0) => {
                return Err(ConfigError(
                    "--test-threads 0 would run nothing: give at least 1".into(),
                ))
            }
            Some(n) => n,
        };
        plan.check_required()?;
        Ok(plan)
    }

    /// Keeps the items of these groups (all when none is named; `sequences` names the
    /// families); a name that is no group is a configuration error.
    pub fn in_groups(mut self, groups: &[String]) -> Result<Self, ConfigError> {
        let known: Vec<&str> = BTreeSet::from_iter(self.group_names())
            .into_iter()
            .collect();
        if let Some(g) = groups
            .iter()
            .find(|g| !known.contains(&g.as_str()) && g.as_str() != sequences::GROUP)
        {
            return Err(ConfigError(format!(
                "--group `{g}` is not a group; choose from: {}, {} (the sequence families)",
                known.join(", "),
                sequences::GROUP
            )));
        }
        if !groups.is_empty() {
            self.items
                .retain(|item| groups.iter().any(|g| g == item.group()));
        }
        Ok(self)
    }

    /// Keeps the items `keep` chooses.
    pub fn retain(mut self, keep: impl FnMut(&Item) -> bool) -> Self {
        self.items.retain(keep);
        self
    }

    /// Keeps the items of one shard: the tests dealt out among themselves (in the order
    /// [`Partition::select`] gives), and so the families (in their own order).
    pub fn sharded(mut self, partition: Partition) -> Self {
        let selected = self.items.len();
        let (tests, families): (Vec<Item>, Vec<Item>) = std::mem::take(&mut self.items)
            .into_iter()
            .partition(|item| matches!(item, Item::Test(_)));
        self.items = partition.select(tests, |item| match item {
            Item::Test(case) => case.name.as_str(),
            Item::Family(family) => family.name.as_str(),
        });
        let names: Vec<String> = families.iter().map(Item::name).collect();
        let kept = partition.select(names, |name| name.as_str());
        self.items
            .extend(families.into_iter().filter(|f| kept.contains(&f.name())));
        self.partition = Some((partition, selected));
        self
    }

    /// The names of the items, in run order.
    pub fn names(&self) -> Vec<String> {
        self.items.iter().map(Item::name).collect()
    }

    /// Fails unless every `--require` group is one of the catalog's (or `all`).
    fn check_required(&self) -> Result<(), ConfigError> {
        let known = self.group_names();
        match self
            .settings
            .require
            .iter()
            .find(|g| g.as_str() != "all" && !known.contains(&g.as_str()))
        {
            Some(group) => Err(ConfigError(format!(
                "--require `{group}` is not a group; choose from: all, {}",
                known.join(", ")
            ))),
            None => Ok(()),
        }
    }

    /// The catalog's group names, in its order.
    fn group_names(&self) -> Vec<&str> {
        self.catalog
            .groups
            .iter()
            .map(|g| g.group.as_str())
            .collect()
    }
}

/// Every `--fixture KIND=ID` names a kind the catalog knows (a resource of cases/resources.toml,
/// or what the run's own flags set): a mistyped kind would otherwise be ignored and its tests
/// made or blocked as if nothing were given.
fn known_fixtures(settings: &Settings, catalog: &Catalog) -> Result<(), ConfigError> {
    let own = crate::settings::FLAG_FIXTURES;
    let known = |kind: &str| own.contains(&kind) || catalog.graph.resources.contains_key(kind);
    match settings.fixtures.keys().find(|kind| !known(kind)) {
        None => Ok(()),
        Some(kind) => Err(ConfigError(format!(
            "--fixture `{kind}=...`: no fixture kind `{kind}` (the kinds are the resources of cases/resources.toml: {})",
            catalog
                .graph
                .resources
                .keys()
                .map(String::as_str)
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}
