//! Uploads (create a version, PUT a tarball to its upload address, see it applied) and
//! downloads (redirects followed on the target's own origin only).

use reqwest::Method;

use super::{registry, Outcome, TestRun};
use crate::catalog::{Kind, Variant};
use crate::checks as c;
use crate::fixtures::auth_for;
use crate::target::{Auth, Body, Request};

impl TestRun<'_> {
    /// A download of what the run itself made and uploaded (its set-up sends the one
    /// configuration tarball) gives those bytes back (`upload.applied`); what the run found or
    /// was given may hold anything.
    fn downloaded_what_was_uploaded(&mut self, index: usize) {
        let Some(kind) = self.endpoint.resource.as_deref() else {
            return;
        };
        let Some(made) = self.scope.get(kind) else {
            return;
        };
        let ours = self
            .ctx
            .fixtures
            .made()
            .iter()
            .any(|m| m.kind == made.kind && m.id == made.id);
        if ours {
            let uploaded = crate::tarball::config_tarball();
            let result = c::downloaded(self.ex(index), Some(&uploaded));
            self.check(&c::UPLOAD_APPLIED, Some(index), result);
        }
    }

    pub(super) async fn after_download(&mut self, main: usize) {
        let mut index = main;
        // Follow redirects ourselves: the token goes only to the target's own origin.
        for _ in 0..5 {
            let Some(location) = self
                .ex(index)
                .status()
                .filter(|s| (300..400).contains(s))
                .and_then(|_| self.ex(index).header("location").map(str::to_string))
            else {
                break;
            };
            let base = url::Url::parse(&self.ex(index).request.url).ok();
            let Some(next) = base.and_then(|b| b.join(&location).ok()) else {
                break;
            };
            let auth = if self.ctx.target.same_origin(&next) {
                auth_for(next.path())
            } else {
                Auth::None
            };
            index = self.send(Request::new(Method::GET, next, auth)).await;
        }
        if self.case.variant == Variant::Registry {
            let subject = self.registry_subject();
            let mut probe = self.registry_probe();
            registry::after_download(&mut probe, subject.as_ref(), index).await;
        } else {
            let result = c::downloaded(self.ex(index), None);
            if self.check(&c::ENDPOINT_SUCCEEDS, Some(index), result) {
                self.downloaded_what_was_uploaded(index);
            }
        }
    }

    /// What the registry checks record into: this test's transcript, its record and notes.
    pub(super) fn registry_probe(&mut self) -> registry::Probe<'_> {
        registry::Probe {
            target: &self.ctx.target,
            exchanges: &mut self.exchanges,
            record: &mut self.record,
            notes: &mut self.notes,
            unobserved: &mut self.unobserved,
        }
    }

    /// The registry module a registry test reads (its `resource`'s instance).
    pub(super) fn registry_subject(&self) -> Option<registry::Subject> {
        let kind = self.endpoint.resource.as_deref()?;
        let given = self.ctx.fixtures.is_given(kind);
        registry::Subject::of(&self.scope, kind, given)
    }

    /// Rule 3 and Versioning 2: create a version, find its upload address, PUT a tarball,
    /// then see the effect.
    pub(super) async fn upload(&mut self) -> Outcome {
        let Some(kind) = self.endpoint.resource.clone() else {
            return Outcome::Error("catalog: the upload endpoint names no resource".into());
        };
        let fresh = self.fresh.clone();
        let made = match self
            .ctx
            .fixtures
            .make_fresh(&kind, &fresh, &mut self.scope, true)
            .await
        {
            Ok(made) => made,
            Err(e) => return self.fixture_outcome(e).await,
        };
        let candidates = c::upload_candidates(&made.document);
        let Some((pointer, url)) = candidates.first().cloned() else {
            return {
                let what = format!("the create answer of the {kind}");
                self.check(
                    &c::UPLOAD_URL_FORM,
                    None,
                    c::upload_offered(&candidates, &what, &made.document),
                );
                Outcome::Done
            };
        };
        let form = c::upload_url_form_at(&url, &pointer);
        self.check(&c::UPLOAD_URL_FORM, None, form);
        let target_url = url::Url::parse(&url).unwrap_or_else(|_| self.ctx.target.url(&url));
        let tarball = crate::tarball::config_tarball();
        let put = self
            .send(
                Request::new(Method::PUT, target_url, Auth::None)
                    .with_body(Body::Bytes(tarball.clone())),
            )
            .await;
        let accepted = c::succeeds(self.ex(put));
        if !self.check(&c::UPLOAD_ACCEPTED, Some(put), accepted) {
            return Outcome::Done;
        }
        if let Some(state) = self.endpoint.expect.state.clone() {
            self.state_check(&state, &c::UPLOAD_APPLIED).await;
        }
        if let Some(state) = self.endpoint.expect.tfe_state.clone() {
            // the status only TFE's facts document (a module version's `ok`)
            self.state_check(&state, &c::TFE_STATE_AFTER).await;
        }
        // Where the group can download the version, the bytes must come back.
        let download = self
            .ctx
            .catalog
            .endpoints()
            .find(|(_, e)| e.kind == Kind::Download && e.resource.as_deref() == Some(kind.as_str()))
            .map(|(_, e)| e.clone());
        if let Some(download) = download {
            if let Ok((url, filled)) = self.canonical_url(&download) {
                let mut index = self
                    .send(Request::new(Method::GET, url, auth_for(&filled)))
                    .await;
                if let Some(location) = self
                    .ex(index)
                    .status()
                    .filter(|s| (300..400).contains(s))
                    .and_then(|_| self.ex(index).header("location").map(str::to_string))
                {
                    if let Some(next) = url::Url::parse(&self.ex(index).request.url)
                        .ok()
                        .and_then(|b| b.join(&location).ok())
                    {
                        let auth = if self.ctx.target.same_origin(&next) {
                            Auth::User
                        } else {
                            Auth::None
                        };
                        index = self.send(Request::new(Method::GET, next, auth)).await;
                    }
                }
                if self.ctx.route_exists(self.ex(index)).is_err() {
                    // An absent download route is the download test's finding, once.
                    return Outcome::Done;
                }
                let result = c::downloaded(self.ex(index), Some(&tarball));
                self.check(&c::UPLOAD_APPLIED, Some(index), result);
            }
        }
        Outcome::Done
    }
}
