//! A test's fixtures: what it needs made before its request (`prepare`), and what a
//! fixture that could not be had makes of the test: skipped, unsupported with its group, or
//! blocked by the request that failed, judged at its own test.

use std::collections::BTreeSet;

use reqwest::Method;

use super::{unjudgeable, Outcome, TestRun};
use crate::catalog::{path_for, Kind, Variant};
use crate::fixtures::{auth_for, FixtureError};
use crate::target::{Exchange, Request};
use crate::verdict::Blocker;

impl TestRun<'_> {
    /// The outcome of a fixture that could not be had: skipped when the API cannot make it,
    /// `unsupported` when its create route is absent along with the whole of this test's
    /// group, else `blocked` by the request that failed (judged at its own test).
    pub(super) async fn fixture_outcome(&mut self, error: FixtureError) -> Outcome {
        match error {
            // a fixture the API cannot make: the test's own route is asked with made-up
            // ids first, where the target's handlers tell an unknown id from a missing route
            FixtureError::Unavailable(why) => {
                if self.ctx.handlers_unlike_router().await {
                    if let Some(outcome) = self.own_route_absent().await {
                        return outcome;
                    }
                }
                Outcome::Skip(why)
            }
            FixtureError::Catalog(why) => Outcome::Error(format!("catalog: {why}")),
            // Nothing failed that a test judges (a pointer the target never fills, a state
            // never reached): not blocked, skipped once the test's own route is judged.
            FixtureError::Failed {
                kind,
                message,
                exchange: None,
            } => {
                if let Some(outcome) = self.own_route_absent().await {
                    return outcome;
                }
                Outcome::Skip(format!(
                    "needs the `{kind}` fixture, which could not be had: {message} (no failing test is behind it)"
                ))
            }
            // The create answered without its upload address: the kind's upload test judges
            // that (`upload.url-form`), and the test is blocked by it.
            FixtureError::NoUploadAddress { kind, create } => self.no_upload_address(&kind, create),
            FixtureError::Failed {
                kind,
                exchange: Some(ex),
                ..
            } => self.fixture_request_failed(kind, ex).await,
        }
    }

    /// A fixture whose create answered no upload address: blocked by the kind's upload test.
    pub(super) fn no_upload_address(&mut self, kind: &str, create: Box<Exchange>) -> Outcome {
        let Some(see) = self.ctx.catalog.upload_test_of(kind) else {
            return Outcome::Skip(format!(
                "needs the `{kind}` fixture, whose create answered no upload address (no failing test is behind it)"
            ));
        };
        let blocker = Blocker {
            needed: format!("the `{kind}` fixture"),
            request: format!(
                "{} {}",
                create.request.method,
                self.ctx.relative_path(&create)
            ),
            answer: format!(
                "{} without an upload address",
                create.status().map(|s| s.to_string()).unwrap_or_default()
            ),
            see: Some(see),
            hint: None,
        };
        self.exchanges.push(*create);
        Outcome::Blocked(blocker)
    }

    /// A fixture whose request failed: blocked by the test that judges that request, or
    /// skipped where none does (or that test is unsupported), unsupported where this test's
    /// own group is absent, judged at this test's own route where the request was its own.
    pub(super) async fn fixture_request_failed(
        &mut self,
        kind: String,
        ex: Box<Exchange>,
    ) -> Outcome {
        if let Some(why) = unjudgeable(&ex) {
            self.exchanges.push(*ex);
            return Outcome::Error(format!("could not make the `{kind}` fixture: {why}"));
        }
        let route_missing = self.ctx.route_exists(&ex).is_err();
        let mut blocker = self
            .ctx
            .blocker(format!("the `{kind}` fixture"), &ex, Some(&kind));
        // this test's own route, in any form (the fixture is looked up through it): its
        // method too, since a fixture made at the same path (a token created where the test
        // lists tokens) is another endpoint's request, judged by that endpoint's test
        let own = blocker.see.as_deref() == Some(self.case.name.as_str())
            || (ex.request.method.eq_ignore_ascii_case(&self.case.method)
                && self
                    .ctx
                    .fixtures
                    .fill_path(&self.endpoint.path, &self.scope, Some(self.endpoint), None)
                    .is_ok_and(|own| {
                        let asked = self.ctx.relative_path(&ex);
                        asked == own || asked.strip_prefix("/api/v2") == Some(own.as_str())
                    }));
        let unjudged = blocker.see.is_none() && !own;
        if own {
            // this test's own request: no other test to point at
            blocker.see = None;
        }
        let not_found = ex.status() == Some(404);
        self.exchanges.push(*ex);
        // A 404 under a resource not found itself is that resource's failure, whether the
        // route is absent or a handler answered it.
        if route_missing || not_found {
            if let Some((blocker, show)) = self.ctx.unfound_parent(&self.scope, None).await {
                self.exchanges.push(show);
                return Outcome::Blocked(blocker);
            }
        }
        // The test's own group may be absent as a whole: then it is unsupported, as
        // every test of that group, rather than blocked.
        if route_missing {
            if let Some(why) = self.group_absent().await {
                return Outcome::Unsupported(why);
            }
        }
        // The test that judges the failed request is unsupported (its whole group
        // is absent): no failure is behind the blocker.
        let blocker_absent = match blocker.see.as_deref() {
            Some(see) if route_missing => {
                let group = see.split("::").next().unwrap_or_default();
                group != self.case.group && self.ctx.group_absence(group).await.is_some()
            }
            _ => false,
        };
        // The list this test is about (`expect.contains`), or the test's own route:
        // its own request is sent first, and an absent route is judged there.
        let about = self.endpoint.expect.contains.as_deref() == Some(kind.as_str());
        if own || unjudged || blocker_absent || about {
            if let Some(outcome) = self.own_route_absent().await {
                return outcome;
            }
        }
        // a registry read can be judged on a module the registry already has
        if self.case.variant == Variant::Registry {
            blocker.hint = Some(
                "give --module NS/NAME/PROVIDER/VERSION to judge it on a module the registry has"
                    .into(),
            );
        } else if self.ctx.fixtures.is_given(&kind) && !self.ctx.fixtures.is_scratch(&kind) {
            // the test changes a `kind` (locks it, pushes state, queues runs): a given one is
            // read-only, so it made its own, which the target refused
            blocker.hint = Some(format!(
                "give --scratch {kind}=ID to let the run change a given {kind} (never deleting it) instead of making its own"
            ));
        }
        // Which failing test is behind it (if any) is settled once the run is over
        // (`attribution::settle`): the test named here may not fail, another may fail on
        // this very request.
        Outcome::Blocked(blocker)
    }

    pub(super) async fn prepare(&mut self) -> Result<(), FixtureError> {
        let e = self.endpoint;
        let payload = e
            .payload
            .as_deref()
            .and_then(|p| self.ctx.catalog.payload(p))
            .unwrap_or("");
        let query_values: Vec<&str> = e.query.iter().filter_map(|q| q.value.as_deref()).collect();
        let mut texts = vec![payload];
        texts.extend(query_values);
        // What the cases of accept.toml this test sends name (an agent pool to set).
        let catalog = &self.ctx.catalog;
        for a in catalog.acceptances_for(&self.case.group, &e.id) {
            texts.extend([a.body.as_str(), a.then.value.as_str()]);
        }
        let mut kinds = self
            .ctx
            .fixtures
            .kinds_in(&self.case.path, &texts, Some(e), None)?;
        if e.kind == Kind::Create {
            // The created kind is this test's own product, not a fixture.
            if let Some(resource) = &e.resource {
                kinds.retain(|k| k != resource);
            }
        } else if let Some(resource) = &e.resource {
            kinds.push(resource.clone());
        }
        kinds.extend(e.expect.contains.iter().cloned());
        // A created item is looked for in its list, and a kind without a show is seen there:
        // what that list's query names too.
        let listed = e.resource.as_deref().and_then(|r| {
            if e.kind == Kind::Create {
                self.ctx.catalog.list_of(r).map(|(_, l)| l.clone())
            } else {
                self.list_instead_of_show(r)
            }
        });
        if let Some(list) = listed {
            let values: Vec<&str> = list
                .query
                .iter()
                .filter_map(|q| q.value.as_deref())
                .collect();
            kinds.extend(
                self.ctx
                    .fixtures
                    .kinds_in(&list.path, &values, Some(&list), None)?,
            );
            if e.kind == Kind::Create {
                kinds.retain(|k| Some(k) != e.resource.as_ref());
            }
        }
        for before in &e.before {
            if let Some((_, b)) = self.ctx.catalog.endpoint(before, &self.case.group) {
                let payload = b
                    .payload
                    .as_deref()
                    .and_then(|p| self.ctx.catalog.payload(p))
                    .unwrap_or("");
                kinds.extend(
                    self.ctx
                        .fixtures
                        .kinds_in(&b.path, &[payload], Some(b), None)?,
                );
            }
        }
        // a fresh kind the endpoint names is made even where its request does not name it
        // (a newer configuration version, that makes the archived one no longer current)
        kinds.extend(e.fresh.iter().cloned());
        let mut seen = BTreeSet::new();
        kinds.retain(|k| seen.insert(k.clone()));
        // Fresh kinds first, so that what depends on them is made for this test as well.
        kinds.sort_by_key(|k| !self.fresh.contains(k));
        if let (Kind::Create, Some(made)) = (e.kind, e.resource.as_ref()) {
            // what this test creates may change a given parent too (a state version's lock)
            let made = std::slice::from_ref(made);
            self.ctx.fixtures.own_what_changes(made, &mut self.scope);
        }
        self.scratch_turn = self.ctx.fixtures.scratch_turn(&kinds).await;
        let fresh = self.fresh.clone();
        self.ctx
            .fixtures
            .resolve_all(&kinds, &fresh, &mut self.scope)
            .await
    }

    /// Blocked by a failed request, unless that request found no route and this test's whole
    /// group is absent: then unsupported, as every test of the group.
    pub(super) async fn blocked_or_absent(&mut self, blocker: Blocker, index: usize) -> Outcome {
        if self.ctx.route_exists(self.ex(index)).is_err() {
            if let Some(why) = self.group_absent().await {
                return Outcome::Unsupported(why);
            }
        }
        Outcome::Blocked(blocker)
    }

    /// After a 404: a resource the path names (other than through this very endpoint) that
    /// its own show, in the canonical form, does not find either.
    pub(super) async fn named_resource_missing(&mut self) -> Option<Blocker> {
        let e = self.endpoint;
        let kinds: Vec<String> = crate::catalog::path_params(&self.case.path)
            .filter_map(|p| match self.ctx.fixtures.param_source(p, Some(e), None) {
                Ok(crate::fixtures::ParamSource::Field(kind, field)) if field == "id" => Some(kind),
                _ => None,
            })
            .collect();
        for kind in kinds {
            let Some(show) = self.ctx.catalog.existence_show(&kind) else {
                continue;
            };
            // a given resource its own show never found is taken as given
            if self.scope.get(&kind).is_some_and(|i| i.unshown) {
                continue;
            }
            if e.method.as_str() == "GET" && show == path_for(&e.path, Variant::Bare) {
                continue;
            }
            let Ok(filled) = self.ctx.fixtures.fill_path(&show, &self.scope, None, None) else {
                continue;
            };
            let url = self.ctx.target.api_url(&filled);
            let index = self
                .send(Request::new(Method::GET, url, auth_for(&filled)))
                .await;
            if self.ctx.fixtures.proves_absence(self.ex(index)) {
                let id = self
                    .scope
                    .get(&kind)
                    .map(|i| i.id.clone())
                    .unwrap_or_default();
                let mut blocker = self.ctx.blocker(
                    format!("the `{kind}` {id} its path names, which is not found"),
                    self.ex(index),
                    None,
                );
                let prefixed = !self.ctx.target.config.forms.canonical().is_empty();
                blocker.see = self.ctx.catalog.create_test_of(&kind, prefixed);
                return Some(blocker);
            }
        }
        None
    }

    /// The id of the endpoint's resource when the path names it
    /// ([`crate::catalog::ResourceGraph::own_id_param`]).
    pub(super) fn requested_id(&self) -> Option<String> {
        let resource = self.endpoint.resource.as_deref()?;
        self.ctx
            .catalog
            .graph
            .own_id_param(self.endpoint, &self.case.path)?;
        self.scope.get(resource).map(|i| i.id.clone())
    }

    /// For a show of no resource of its own (an organization's entitlement set): the value
    /// the path's last parameter was filled with, the resource it reads under (the
    /// organization's name).
    pub(super) fn owner_value(&self) -> Option<String> {
        if self.endpoint.resource.is_some() {
            return None;
        }
        let param = crate::catalog::path_params(&self.case.path).last()?;
        let source = self
            .ctx
            .fixtures
            .param_source(param, Some(self.endpoint), None);
        let Ok(crate::fixtures::ParamSource::Field(kind, field)) = source else {
            return None;
        };
        let made = self.scope.get(&kind)?;
        match field.as_str() {
            "id" => Some(made.id.clone()),
            _ => made.fields.get(&field).cloned(),
        }
    }
}
