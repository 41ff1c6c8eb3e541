//! Building a test's requests: its URL under the variant's prefix, the canonical form for
//! set-up steps, the main request with its payload, and the set-up steps before it.

use reqwest::Method;
use serde_json::Value;

use super::{unjudgeable, Outcome, TestRun};
use crate::catalog::{path_for, BodyKind, Endpoint, Variant};
use crate::fixtures::{auth_for, FixtureError};
use crate::pages::Paging;
use crate::target::{Body, Request};

impl TestRun<'_> {
    pub(super) fn url_for(&self, path: &str) -> url::Url {
        match self.case.variant {
            Variant::Registry => self.ctx.target.registry_url(path),
            _ => self.ctx.target.url(path),
        }
    }

    /// When this test's group is served only at TFE's path (its main request found no route
    /// at the spec's): notes both paths, and sends the main request again at TFE's path, to be
    /// judged there. The index of that answer, unless it too finds no route (or the request
    /// cannot be made).
    pub(super) async fn at_tfe_path(&mut self) -> Option<usize> {
        let (spec, tfe) = self.ctx.served_at_tfe_path(&self.case.group)?;
        self.notes.push(format!(
            "the group is served at TFE's path {tfe}, not at the spec's {spec}; judged there"
        ));
        self.at_tfe = true;
        let request = self
            .main_request(&self.case.path, &self.case.method, true)
            .ok()?;
        let index = self.send(request).await;
        let routed =
            self.ex(index).response.is_ok() && self.ctx.route_exists(self.ex(index)).is_ok();
        routed.then_some(index)
    }

    /// The path template of another endpoint under the same prefix choice as this test.
    pub(super) fn sibling_path(&self, endpoint: &Endpoint) -> String {
        if let Some(rest) = endpoint.path.strip_prefix(crate::catalog::REGISTRY) {
            return rest.to_string();
        }
        let prefixed = match self.case.variant {
            // an upload has no path form of its own: its reads use the canonical one
            Variant::Upload => !self.ctx.target.config.forms.canonical().is_empty(),
            v => v.has_prefix(),
        };
        let variant = if prefixed {
            Variant::ApiV2
        } else {
            Variant::Bare
        };
        path_for(&endpoint.path, variant)
    }

    /// The URL of another endpoint in the target's canonical path form (registry endpoints
    /// under the registry address), with the filled path.
    pub(super) fn canonical_url(&self, endpoint: &Endpoint) -> Result<(url::Url, String), String> {
        let template = match endpoint.path.strip_prefix(crate::catalog::REGISTRY) {
            Some(rest) => rest.to_string(),
            None => path_for(&endpoint.path, Variant::Bare),
        };
        let filled = self
            .ctx
            .fixtures
            .fill_path(&template, &self.scope, Some(endpoint), None)
            .map_err(|e| e.to_string())?;
        let url = if endpoint.path.starts_with(crate::catalog::REGISTRY) {
            self.ctx.target.registry_url(&filled)
        } else {
            self.ctx.target.api_url(&filled)
        };
        Ok((url, filled))
    }

    pub(super) fn sibling_url(&self, endpoint: &Endpoint, path: &str) -> url::Url {
        if endpoint.path.starts_with(crate::catalog::REGISTRY) {
            self.ctx.target.registry_url(path)
        } else if let Some(at_tfe) = self.ctx.target.at_tfe_path(path) {
            // what a test reads after its request, where the group is served
            self.ctx.target.url(&at_tfe)
        } else {
            self.ctx.target.url(path)
        }
    }

    pub(super) fn main_request(
        &self,
        template: &str,
        method: &str,
        with_required_query: bool,
    ) -> Result<Request, FixtureError> {
        let e = self.endpoint;
        let fixtures = &self.ctx.fixtures;
        let at_tfe = self
            .at_tfe
            .then(|| self.ctx.target.at_tfe_path(template))
            .flatten();
        let template = at_tfe.as_deref().unwrap_or(template);
        let path = fixtures.fill_path(template, &self.scope, Some(e), None)?;
        let mut url = self.url_for(&path);
        {
            let mut pairs = Vec::new();
            for q in &e.query {
                if let Some(value) = &q.value {
                    if q.required && !with_required_query {
                        continue;
                    }
                    pairs.push((q.name.clone(), fixtures.fill_text(value, &self.scope)?));
                }
            }
            if !pairs.is_empty() {
                url.query_pairs_mut().extend_pairs(pairs);
            }
        }
        let method = Method::from_bytes(method.as_bytes()).unwrap_or(Method::GET);
        let mut request = Request::new(method, url, auth_for(&path));
        if e.body == BodyKind::Json {
            let mut body = match &e.payload {
                Some(p) => fixtures.payload(p, &self.scope)?,
                None => serde_json::json!({}),
            };
            if let (Some(attributes), Some(new_values)) = (
                body.pointer_mut("/data/attributes")
                    .and_then(Value::as_object_mut),
                self.new_values.as_ref().and_then(Value::as_object),
            ) {
                for (name, value) in new_values {
                    attributes.entry(name.clone()).or_insert(value.clone());
                }
            }
            request = request.with_body(Body::Json(body));
        }
        Ok(request)
    }

    /// Sends a set-up (or restore) step; a step that fails blocks the test.
    /// One set-up step: `Ok` with the index of its exchange when it succeeded.
    pub(super) async fn before_step(&mut self, reference: &str) -> Result<usize, Outcome> {
        let Some((_, before)) = self.ctx.catalog.endpoint(reference, &self.case.group) else {
            return Err(Outcome::Error(format!(
                "catalog: unknown `before` endpoint {reference}"
            )));
        };
        // Set-up and restore steps use the target's canonical path form: they are not what
        // this test judges.
        let fixtures = &self.ctx.fixtures;
        let (url, filled) = self.canonical_url(before).map_err(Outcome::Error)?;
        let method = before.method.method();
        let mut request = Request::new(method, url, auth_for(&filled));
        if before.body == BodyKind::Json {
            let body = match &before.payload {
                Some(p) => fixtures
                    .payload(p, &self.scope)
                    .map_err(|e| Outcome::Error(e.to_string()))?,
                None => serde_json::json!({}),
            };
            request = request.with_body(Body::Json(body));
        }
        let index = self.send(request).await;
        if self.ex(index).is_success() {
            return Ok(index);
        }
        if let Some(why) = unjudgeable(self.ex(index)) {
            return Err(Outcome::Error(why));
        }
        let needed = format!("its set-up step {reference}");
        let blocker = self.ctx.blocker(needed, self.ex(index), None);
        Err(self.blocked_or_absent(blocker, index).await)
    }

    /// After a main request that did not succeed: the `after` steps of the `before` endpoints,
    /// best effort, so that what the set-up changed in the target's session (an
    /// impersonation) does not outlive the test. A main request that succeeds undoes it
    /// itself, or the test's own `after` steps do.
    pub(super) async fn undo_set_up(&mut self) {
        let undo: Vec<String> = self
            .endpoint
            .before
            .iter()
            .filter_map(|b| self.ctx.catalog.endpoint(b, &self.case.group))
            .flat_map(|(_, b)| b.after.clone())
            .collect();
        for step in undo {
            let _ = self.before_step(&step).await;
        }
    }

    pub(super) fn list_request(
        &self,
        page: Option<(usize, usize)>,
        with_required: bool,
    ) -> Option<Request> {
        self.list_request_as(page, with_required, Paging::Spec)
    }

    pub(super) fn list_request_as(
        &self,
        page: Option<(usize, usize)>,
        with_required: bool,
        params: Paging,
    ) -> Option<Request> {
        let mut request = self
            .main_request(&self.case.path, "GET", with_required)
            .ok()?;
        if let Some((page, size)) = page {
            let (number, per_page) = params.names();
            request
                .url
                .query_pairs_mut()
                .append_pair(number, &page.to_string())
                .append_pair(per_page, &size.to_string());
        }
        Some(request)
    }

    /// Sends the show endpoint of `kind` (same prefix choice); `None` when there is none.
    pub(super) async fn show_resource(&mut self, kind: &str) -> Option<usize> {
        let (_, show) = self.ctx.catalog.show_of(kind)?;
        let show = show.clone();
        let path = self.sibling_path(&show);
        let filled = self
            .ctx
            .fixtures
            .fill_path(&path, &self.scope, Some(&show), None)
            .ok()?;
        let url = self.sibling_url(&show, &filled);
        Some(
            self.send(Request::new(Method::GET, url, auth_for(&filled)))
                .await,
        )
    }
}
