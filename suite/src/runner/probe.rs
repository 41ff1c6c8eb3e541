//! Whether a group is there at all: the group probe (every read endpoint of the group, on
//! both prefixes), and the blockers that name the test judging a failed request.

use std::collections::BTreeSet;

use reqwest::Method;

use super::Context;
use crate::catalog::{path_for, Endpoint, Variant};
use crate::checks as c;
use crate::fixtures::{auth_for, FixtureError, Scope};
use crate::target::{Exchange, Request};
use crate::verdict::Blocker;

impl Context {
    /// Probes a group: `None` when some variant of its probe endpoint has a route, else
    /// the exchange that shows it missing.
    pub(super) async fn group_missing(&self, group: &str) -> Option<Exchange> {
        let cell = {
            let mut probes = self.probes.lock().ok()?;
            probes.entry(group.to_string()).or_default().clone()
        };
        cell.get_or_init(|| crate::target::for_the_whole_run(self.probe(group)))
            .await
            .clone()
    }

    /// A group is missing when none of its read endpoints has a route, on any path variant,
    /// and at least one of them shows it. The group's `probe` is tried first. A read whose
    /// fixture's create route of this group is absent counts as absent; a read that cannot be
    /// tried for another reason counts neither way; with no read tried the group counts as
    /// present (its tests are then blocked or fail, never hidden as unsupported).
    pub(super) async fn probe(&self, group: &str) -> Option<Exchange> {
        let g = self.catalog.groups.iter().find(|g| g.group == group)?;
        let mut reads: Vec<&Endpoint> = g.endpoints.iter().filter(|e| e.method == "GET").collect();
        reads.sort_by_key(|e| Some(&e.id) != g.probe.as_ref());
        let mut last = None;
        for endpoint in reads {
            let mut scope = Scope::default();
            let kinds = self
                .fixtures
                .kinds_in(&endpoint.path, &[], Some(endpoint), None)
                .ok()?;
            match self
                .fixtures
                .resolve_all(&kinds, &BTreeSet::new(), &mut scope)
                .await
            {
                Ok(()) => {}
                // The read needs a resource of this group whose create route is absent too:
                // more evidence that the group is absent, not a reason to call it present.
                Err(FixtureError::Failed {
                    exchange: Some(ex), ..
                }) if c::route_exists(&ex).is_err() && self.judged_in(group, &ex) => {
                    last = Some(*ex);
                    continue;
                }
                // A read that cannot be tried for another reason proves nothing either way:
                // the group's other reads decide.
                Err(_) => continue,
            }
            let variants: &[Variant] = if endpoint.path.starts_with(crate::catalog::REGISTRY) {
                &[Variant::Registry]
            } else {
                &[Variant::Bare, Variant::ApiV2]
            };
            for variant in variants {
                let template = match variant {
                    Variant::Registry => endpoint
                        .path
                        .trim_start_matches(crate::catalog::REGISTRY)
                        .to_string(),
                    v => path_for(&endpoint.path, *v),
                };
                let path = self
                    .fixtures
                    .fill_path(&template, &scope, Some(endpoint), None)
                    .ok()?;
                let url = if *variant == Variant::Registry {
                    self.target.registry_url(&path)
                } else {
                    self.target.url(&path)
                };
                let ex = self
                    .target
                    .send(Request::new(Method::GET, url, auth_for(&path)))
                    .await;
                if c::route_exists(&ex).is_ok() && ex.response.is_ok() {
                    return None;
                }
                last = Some(ex);
            }
        }
        last
    }

    /// True when the exchange's request is judged by a test of `group`.
    pub(super) fn judged_in(&self, group: &str, ex: &Exchange) -> bool {
        self.test_for(ex)
            .is_some_and(|t| t.starts_with(&format!("{group}::")))
    }

    /// The URL path of an exchange relative to the service root.
    pub(super) fn relative_path(&self, ex: &Exchange) -> String {
        let path = url::Url::parse(&ex.request.url)
            .map(|u| u.path().to_string())
            .unwrap_or_default();
        let root = self.target.config.root.path().trim_end_matches('/');
        path.strip_prefix(root).unwrap_or(&path).to_string()
    }

    /// The test that judges an exchange's request (see [`crate::catalog::Catalog::test_for`]).
    pub fn test_for(&self, ex: &Exchange) -> Option<String> {
        let path = self.relative_path(ex);
        self.catalog.test_for(&ex.request.method, &path)
    }

    /// Why a test is blocked by a failed exchange: what it needed, the request, the answer
    /// and the test that judges that request (for an upload, the kind's upload test).
    pub fn blocker(&self, needed: String, ex: &Exchange, kind: Option<&str>) -> Blocker {
        let path = self.relative_path(ex);
        let see = self.test_for(ex).or_else(|| {
            kind.filter(|_| ex.request.method == "PUT")
                .and_then(|k| self.catalog.upload_test_of(k))
        });
        Blocker {
            needed,
            request: format!("{} {path}", ex.request.method),
            answer: match &ex.response {
                Ok(r) => r.status.to_string(),
                Err(e) => e.to_string(),
            },
            see,
        }
    }
}
