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

/// The id a read is asked with when no resource of its kind could be had.
const UNKNOWN_ID: &str = "conform-unknown-id";

/// What a read asked with ids nobody made shows of its route.
enum Asked {
    /// A handler answered: the route is served.
    Served,
    /// Every path form gave the target's no-route answer (the last one).
    Absent(Exchange),
    /// Neither is shown.
    Unproven,
}

/// A path template with every parameter filled with an id nobody made.
pub(super) fn with_unknown_ids(template: &str) -> String {
    template
        .split('/')
        .map(|s| if s.starts_with(':') { UNKNOWN_ID } else { s })
        .collect::<Vec<_>>()
        .join("/")
}

/// How many top-level shows [`Context::handlers_unlike_router`] asks at most.
const HANDLER_PROBES: usize = 6;

impl Context {
    /// Whether the target's handlers answer "not found" unlike its router answers a path that
    /// cannot exist, asked once: the shows of the catalog's top-level items (an organization,
    /// a workspace, a run, ...; six of them at most), each with an id nobody has,
    /// until one answers unlike the no-route answer (a handler's 404, or its 500 on an id it
    /// cannot parse, as a real server's). Only then does a route asked with
    /// made-up ids and answering the no-route answer prove itself absent. TFE's are alike
    /// (then nothing is proven that way); a backend that serves only some shows (no
    /// organization show) is asked the others.
    pub async fn handlers_unlike_router(&self) -> bool {
        *self
            .handlers_unlike_router
            .get_or_init(|| async {
                for path in self.catalog.top_level_shows().take(HANDLER_PROBES) {
                    let path = with_unknown_ids(&path);
                    let url = self.target.api_url(&path);
                    let ex = self
                        .target
                        .send(Request::new(Method::GET, url, auth_for(&path)))
                        .await;
                    let unlike = matches!(
                        self.target.config.no_route.likeness(&ex),
                        crate::target::noroute::Likeness::Unlike(_)
                    );
                    // a handler's answer: not the router's, nor one a gateway or the
                    // credential gives before any handler is reached
                    let handler = !matches!(ex.status(), None | Some(401 | 403 | 429 | 502..=504));
                    if handler && unlike {
                        return true;
                    }
                }
                false
            })
            .await
    }

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

    /// Why `group` counts as absent, with the probe's exchange that shows it: `None` when
    /// the group is there, at the spec's paths or at TFE's ([`Context::served_at_tfe_path`]).
    pub async fn group_absence(&self, group: &str) -> Option<(String, Exchange)> {
        let evidence = self.group_missing(group).await?;
        if self.served_at_tfe_path(group).is_some() {
            return None;
        }
        let status = evidence
            .status()
            .map(|s| s.to_string())
            .unwrap_or_else(|| "no answer".into());
        // the evidence that decided: the target's no-route answer, where it was learned
        let like = match self.fixtures.presence(&evidence) {
            c::Presence::Absent(why) => format!(": {why}"),
            _ => String::new(),
        };
        let why = format!(
            "the target lacks the `{group}` group: its probe {} {} answered {status} on every path variant{like}",
            evidence.request.method, evidence.request.url
        );
        Some((why, evidence))
    }

    /// Where the group answers at TFE's path (`tfe_path` in its `cases/` file) though not at
    /// the spec's: the spec's path and TFE's, as the session learned them after preflight.
    pub fn served_at_tfe_path(&self, group: &str) -> Option<(String, String)> {
        let g = self.catalog.groups.iter().find(|g| g.group == group)?;
        let tfe = g.tfe_path.as_ref()?;
        self.target
            .config
            .served_at_tfe_path
            .iter()
            .find(|(spec, _)| *spec == tfe.spec)
            .cloned()
    }

    /// A group is missing when none of its read endpoints has a route, on any path variant,
    /// and its creates have none either (a write that is routed is a group that is there,
    /// whatever its reads answer). The group's `probe` is tried first. A read whose fixture's
    /// create route of this group is absent counts as absent; a read that cannot be tried for
    /// another reason (a fixture no one can make, or another group's that failed) makes the
    /// group present: its tests are then skipped, blocked or fail `endpoint.exists`, never
    /// hidden as unsupported.
    pub(super) async fn probe(&self, group: &str) -> Option<Exchange> {
        let g = self.catalog.groups.iter().find(|g| g.group == group)?;
        let mut reads: Vec<&Endpoint> = g.endpoints.iter().filter(|e| e.method == "GET").collect();
        reads.sort_by_key(|e| Some(&e.id) != g.probe.as_ref());
        let own_kinds: BTreeSet<&str> = g
            .endpoints
            .iter()
            .filter(|e| e.method == "POST" && e.kind == crate::catalog::Kind::Create)
            .filter_map(|e| e.resource.as_deref())
            .collect();
        let handlers_unlike_router = self.handlers_unlike_router().await;
        let mut last = None;
        for endpoint in reads {
            let mut scope = Scope::default();
            let kinds = self
                .fixtures
                .kinds_in(&endpoint.path, &[], Some(endpoint), None)
                .ok()?;
            // a read whose resources cannot be had is asked with ids nobody made
            let own_absent = match self
                .fixtures
                .resolve_all(&kinds, &BTreeSet::new(), &mut scope)
                .await
            {
                Ok(()) => None,
                // The read needs a resource of this group whose create route is absent too:
                // more evidence that the group is absent, not a reason to call it present.
                Err(FixtureError::Failed {
                    exchange: Some(ex), ..
                }) if self.route_exists(&ex).is_err() && self.judged_in(group, &ex) => {
                    Some(Some(ex))
                }
                // A read that needs another group's resource, whose create route is absent:
                // no evidence from its fixtures (that group's own probe judges it).
                Err(FixtureError::Failed {
                    exchange: Some(ex), ..
                }) if self.route_exists(&ex).is_err() => Some(None),
                // A read of a resource only this group's create makes, which could not be
                // made for another reason (a fixture of another group it needs): else the
                // group's create decides, below.
                Err(_) if kinds.iter().any(|k| own_kinds.contains(k.as_str())) => Some(None),
                // A read of a kind the API cannot make (given with --fixture only) is asked
                // with made-up ids, where the target's handlers tell an unknown id from a
                // missing route
                Err(FixtureError::Unavailable(_)) if handlers_unlike_router => Some(None),
                // A read that cannot be tried for another reason leaves the group's absence
                // unproven: it is there.
                Err(_) => return None,
            };
            if let Some(own_absent) = own_absent {
                match self.asked_with_unknown_ids(endpoint).await {
                    Asked::Served => return None,
                    Asked::Absent(unknown) => last = Some(unknown),
                    Asked::Unproven => match own_absent {
                        Some(ex) if !self.parent_not_found(&scope, endpoint).await => {
                            last = Some(*ex)
                        }
                        _ => {}
                    },
                }
                continue;
            }
            match self.asked_with_fixtures(endpoint, &scope).await {
                Err(()) => return None,
                Ok(Some(ex)) => last = Some(ex),
                Ok(None) => {}
            }
        }
        match self.create_probe(group).await {
            Err(()) => None,
            Ok(create) => last.or(create),
        }
    }

    /// A read asked in each of its path forms with the resources it names: `Err(())` when a
    /// form is served (or its path cannot be filled: the absence is unproven), else the last
    /// answer that shows it absent (`None` when a 404 is about a parent not found).
    async fn asked_with_fixtures(
        &self,
        endpoint: &Endpoint,
        scope: &Scope,
    ) -> Result<Option<Exchange>, ()> {
        let variants: &[Variant] = if endpoint.path.starts_with(crate::catalog::REGISTRY) {
            &[Variant::Registry]
        } else {
            &[Variant::Bare, Variant::ApiV2]
        };
        let mut last = None;
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
                .fill_path(&template, scope, Some(endpoint), None)
                .map_err(|_| ())?;
            let url = if *variant == Variant::Registry {
                self.target.registry_url(&path)
            } else {
                self.target.url(&path)
            };
            let ex = self
                .target
                .send(Request::new(Method::GET, url, auth_for(&path)))
                .await;
            if self.route_exists(&ex).is_ok() && ex.response.is_ok() {
                return Err(());
            }
            if self.parent_not_found(scope, endpoint).await {
                // a 404 under a resource that is not found itself says nothing of the
                // route: the test that made that resource judges it
                break;
            }
            last = Some(ex);
        }
        Ok(last)
    }

    /// A read whose resources could not be had, asked with ids nobody made: a handler's
    /// "not found" unlike the target's no-route answer (learned in preflight) shows the route
    /// served without any fixture; the no-route answer itself, on every path form, shows it
    /// absent; anything else (a target whose handlers answer as its router does) proves
    /// neither.
    async fn asked_with_unknown_ids(&self, endpoint: &Endpoint) -> Asked {
        let registry = endpoint.path.strip_prefix(crate::catalog::REGISTRY);
        let templates: Vec<String> = match registry {
            Some(rest) => vec![rest.to_string()],
            None => [Variant::Bare, Variant::ApiV2]
                .iter()
                .map(|v| path_for(&endpoint.path, *v))
                .collect(),
        };
        let mut absent = None;
        for template in templates {
            let path = with_unknown_ids(&template);
            let url = match registry {
                Some(_) => self.target.registry_url(&path),
                None => self.target.url(&path),
            };
            let ex = self
                .target
                .send(Request::new(Method::GET, url, auth_for(&path)))
                .await;
            match self.fixtures.presence(&ex) {
                c::Presence::Served(_) if ex.status() == Some(404) => return Asked::Served,
                c::Presence::Absent(_) => absent = Some(ex),
                _ => return Asked::Unproven,
            }
        }
        absent.map_or(Asked::Unproven, Asked::Absent)
    }

    /// Whether the group's creates have no route: sent an empty document (which no create
    /// takes), a routed create refuses it (400, 422), an absent one answers 404, 405 or 501.
    /// `Err(())` when one is routed (or its path cannot be filled: the absence is unproven),
    /// else the last exchange that shows one absent (`None` when none could be sent).
    async fn create_probe(&self, group: &str) -> Result<Option<Exchange>, ()> {
        let Some(g) = self.catalog.groups.iter().find(|g| g.group == group) else {
            return Ok(None);
        };
        let mut last = None;
        for endpoint in g.endpoints.iter().filter(|e| {
            e.method == "POST"
                && e.kind == crate::catalog::Kind::Create
                && !e.path.starts_with(crate::catalog::REGISTRY)
        }) {
            let mut scope = Scope::default();
            let kinds = self
                .fixtures
                .kinds_in(&endpoint.path, &[], Some(endpoint), None)
                .map_err(|_| ())?;
            if self
                .fixtures
                .resolve_all(&kinds, &BTreeSet::new(), &mut scope)
                .await
                .is_err()
            {
                // a create that cannot be sent says nothing either way
                continue;
            }
            let path = self
                .fixtures
                .fill_path(&endpoint.path, &scope, Some(endpoint), None)
                .map_err(|_| ())?;
            let url = self.target.api_url(&path);
            let ex = self
                .target
                .send(
                    Request::new(Method::POST, url, auth_for(&path))
                        .with_body(crate::target::Body::Json(serde_json::json!({}))),
                )
                .await;
            if ex.response.is_ok() && self.route_exists(&ex).is_ok() {
                return Err(());
            }
            if self.parent_not_found(&scope, endpoint).await {
                return Err(());
            }
            last = Some(ex);
        }
        Ok(last)
    }

    /// Whether a resource the probe's path is filled from (other than through the probed
    /// route itself) is not found by its own show: a 404 under it is no evidence about the
    /// group's routes.
    async fn parent_not_found(&self, scope: &Scope, probed: &Endpoint) -> bool {
        let own = path_for(&probed.path, Variant::Bare);
        self.unfound_parent(scope, Some(&own)).await.is_some()
    }

    /// A resource of `scope` that its own show (`Catalog::existence_show`) does not find (an
    /// organization whose returned id is not a name the target takes back, say): the blocker
    /// of what a 404 under it stopped, pointing at the test that made it, and the show's
    /// exchange. A show at the route `except` (a path template without the prefix) is not
    /// asked: that route's own answer is what is in question.
    pub async fn unfound_parent(
        &self,
        scope: &Scope,
        except: Option<&str>,
    ) -> Option<(Blocker, Exchange)> {
        // a given resource its own show never found is taken as given: no 404 under it counts
        for instance in scope.instances().filter(|i| !i.unshown) {
            let Some(show) = self.catalog.existence_show(&instance.kind) else {
                continue;
            };
            if Some(show.as_str()) == except {
                continue;
            }
            let Ok(path) = self.fixtures.fill_path(&show, scope, None, None) else {
                continue;
            };
            let url = self.target.api_url(&path);
            let ex = self
                .target
                .send(Request::new(Method::GET, url, auth_for(&path)))
                .await;
            if self.fixtures.proves_absence(&ex) {
                let needed = format!(
                    "the `{}` {} its path names, which is not found",
                    instance.kind, instance.id
                );
                let mut blocker = self.blocker(needed, &ex, None);
                let prefixed = !self.target.config.forms.canonical().is_empty();
                blocker.see = self.catalog.create_test_of(&instance.kind, prefixed);
                return Some((blocker, ex));
            }
        }
        None
    }

    /// `endpoint.exists` of an exchange, by the evidence the run has
    /// ([`crate::fixtures::Fixtures::presence`]).
    pub fn route_exists(&self, ex: &Exchange) -> Result<(), c::Message> {
        c::route_exists(ex, &self.fixtures.presence(ex))
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
                // a list that answered, without what was looked for in it
                Ok(r) if ex.is_success() => format!("{} without it", r.status),
                Ok(r) => r.status.to_string(),
                Err(e) => e.to_string(),
            },
            see,
            hint: None,
        }
    }
}
