//! Input that must be refused (`cases/refuse.toml`): the cases an endpoint's test sends after
//! its own request succeeded, each judged by its `tfe.refuses-*` check: the answer (the
//! statuses the facts name, never 5xx) and a show afterwards that proves nothing was stored.
//! And its mirror, input TFE takes (`cases/accept.toml`, `tfe.accepts-input`): answered 2xx,
//! and a show afterwards holds what it set.

use reqwest::Method;
use serde_json::Value;

use super::TestRun;
use crate::catalog::{path_for, Acceptance, Refusal, Variant};
use crate::checks::{self as c, Stored};
use crate::fixtures::auth_for;
use crate::target::{Body, Request, TransportError, JSONAPI};

impl TestRun<'_> {
    /// Sends every refusal case this test's endpoint hosts, under the test's prefix choice.
    pub(super) async fn refusals(&mut self) {
        let cases: Vec<Refusal> = self
            .ctx
            .catalog
            .refusals_for(&self.case.group, &self.endpoint.id)
            .cloned()
            .collect();
        for case in &cases {
            self.refusal(case).await;
        }
    }

    /// Sends every case of input TFE takes that this test's endpoint hosts.
    pub(super) async fn acceptances(&mut self) {
        let cases: Vec<Acceptance> = self
            .ctx
            .catalog
            .acceptances_for(&self.case.group, &self.endpoint.id)
            .cloned()
            .collect();
        for case in &cases {
            self.acceptance(case).await;
        }
    }

    async fn acceptance(&mut self, a: &Acceptance) {
        let what = format!("{} (accept.toml)", c::TFE_ACCEPTS_INPUT.id);
        let fixtures = &self.ctx.fixtures;
        let Ok(name) = fixtures.fill_text("{{prefix}}-accepted{{unique}}", &self.scope) else {
            self.notes
                .push(format!("{what}: not evaluated, no name could be made"));
            return;
        };
        let (Some(path), Some(show)) = (
            self.case_path(&self.endpoint.path.clone(), &name),
            self.case_path(&a.then.show, &name),
        ) else {
            self.notes.push(format!(
                "{what}: not evaluated, its paths could not be filled"
            ));
            return;
        };
        let Ok(body) = fixtures.fill_text(&a.body.replace("{{accepted}}", &name), &self.scope)
        else {
            self.notes.push(format!(
                "{what}: not evaluated, its body could not be filled"
            ));
            return;
        };
        let method = self.endpoint.method.clone();
        let Some(sent) = self
            .send_probe(&what, &method, JSONAPI.to_string(), &path, body)
            .await
        else {
            return;
        };
        let answered = self
            .ex(sent)
            .json()
            .ok()
            .and_then(|d| c::document_id(&d))
            .unwrap_or_default();
        let value = a
            .then
            .value
            .replace("{{accepted}}", &name)
            .replace("{{answer}}", &answered);
        let Ok(expected) = self.ctx.fixtures.fill_text(&value, &self.scope) else {
            self.notes.push(format!(
                "{what}: not evaluated, its value could not be filled"
            ));
            return;
        };
        let shown = self.get(&show).await;
        let result = c::accepted(
            self.ex(sent),
            self.ex(shown),
            &a.then.pointer,
            &expected,
            &a.note,
        );
        let evidence = if self.ex(sent).is_success() {
            shown
        } else {
            sent
        };
        self.check(&c::TFE_ACCEPTS_INPUT, Some(evidence), result);
    }

    /// A path of a case, its placeholders (`{{refused}}` or `{{accepted}}`: the case's unique
    /// name) and `:params` filled, under the test's prefix.
    fn case_path(&self, template: &str, name: &str) -> Option<String> {
        let variant = if self.case.variant.has_prefix() {
            Variant::ApiV2
        } else {
            Variant::Bare
        };
        let fixtures = &self.ctx.fixtures;
        let text = fixtures
            .fill_text(
                &template
                    .replace("{{refused}}", name)
                    .replace("{{accepted}}", name),
                &self.scope,
            )
            .ok()?;
        fixtures
            .fill_path(
                &path_for(&text, variant),
                &self.scope,
                Some(self.endpoint),
                None,
            )
            .ok()
    }

    async fn get(&mut self, path: &str) -> usize {
        let url = self.url_for(path);
        self.send(Request::new(Method::GET, url, auth_for(path)))
            .await
    }

    async fn refusal(&mut self, r: &Refusal) {
        let check = c::refusal_check(r.what);
        let what = format!("{} (refuse.toml)", check.id);
        let fixtures = &self.ctx.fixtures;
        let Ok(name) = fixtures.fill_text("{{prefix}}-refused{{unique}}", &self.scope) else {
            self.notes
                .push(format!("{what}: not evaluated, no name could be made"));
            return;
        };
        // Every path is filled before anything is sent: a case that cannot prove what was
        // stored is not sent at all.
        let proof = r.absent.as_ref().or(r.unchanged.as_ref().map(|u| &u.show));
        let Some(proof_path) = proof.and_then(|p| self.case_path(p, &name)) else {
            self.notes.push(format!(
                "{what}: not evaluated, the path of its proof could not be filled"
            ));
            return;
        };
        let template = r.path.clone().unwrap_or_else(|| self.endpoint.path.clone());
        let Some(path) = self.case_path(&template, &name) else {
            self.notes.push(format!(
                "{what}: not evaluated, its path could not be filled"
            ));
            return;
        };
        let Ok(body) = fixtures.fill_text(&r.body.replace("{{refused}}", &name), &self.scope)
        else {
            self.notes.push(format!(
                "{what}: not evaluated, its body could not be filled"
            ));
            return;
        };
        // The value an update would change, read first.
        let mut before: Option<(Value, String, String)> = None;
        if let Some(u) = &r.unchanged {
            let show = proof_path.clone();
            let index = self.get(&show).await;
            let value = self
                .ex(index)
                .json()
                .ok()
                .filter(|_| self.ex(index).is_success())
                .and_then(|d| d.pointer(&u.pointer).cloned());
            match value {
                Some(v) => before = Some((v, show, u.pointer.clone())),
                None => {
                    self.notes.push(format!(
                        "{what}: not evaluated, the show before it did not answer `{}`",
                        u.pointer
                    ));
                    return;
                }
            }
        }
        let method = r.method.clone().unwrap_or(self.endpoint.method.clone());
        let content_type = r.content_type.clone().unwrap_or(JSONAPI.to_string());
        let Some(sent) = self
            .send_probe(&what, &method, content_type, &path, body)
            .await
        else {
            return;
        };
        let statuses: Vec<u16> = if r.status.is_empty() {
            c::refusal_statuses(r.what).to_vec()
        } else {
            r.status.clone()
        };
        let answer = c::refusal_answer(self.ex(sent), &statuses);
        // Whatever it answered, a show afterwards says whether it was stored.
        let (shown, stored) = match (&r.absent, before) {
            (Some(_), _) => {
                let index = self.get(&proof_path).await;
                let stored = c::refusal_stored(Stored::Absent(self.ex(index)));
                if stored.is_err() {
                    self.note_refused_but_made(r, index);
                }
                (index, stored)
            }
            (None, Some((value, show, pointer))) => {
                let index = self.get(&show).await;
                let stored = c::refusal_stored(Stored::Unchanged {
                    before: &value,
                    after: self.ex(index),
                    pointer: &pointer,
                });
                (index, stored)
            }
            (None, None) => return,
        };
        // The exchange that shows it: the answer when that is wrong, else the show.
        let evidence = if answer.is_err() { sent } else { shown };
        let result = c::refusal(answer, stored, r.note.as_deref());
        self.check(check, Some(evidence), result);
    }

    /// Sends a case only TFE documents (a refuse or accept case) and answers its exchange;
    /// `None`, with a note, when conform itself refused to send it. Its 5xx counts at tfe
    /// ([`c::Record::tfe_probe_server_error`]).
    async fn send_probe(
        &mut self,
        what: &str,
        method: &str,
        content_type: String,
        path: &str,
        body: String,
    ) -> Option<usize> {
        let method = Method::from_bytes(method.as_bytes()).unwrap_or(Method::POST);
        let request = Request::new(method, self.url_for(path), auth_for(path))
            .with_body(Body::Raw(content_type, body.into_bytes()));
        let sent = self.send(request).await;
        if let Err(TransportError::Refused(why)) = &self.ex(sent).response {
            self.notes.push(format!("{what}: not evaluated, {why}"));
            return None;
        }
        self.record
            .tfe_probe_server_error(&self.exchanges[sent], sent);
        Some(sent)
    }

    /// A create that should have been refused made something: it goes in the ledger, so
    /// that teardown deletes it.
    fn note_refused_but_made(&mut self, r: &Refusal, shown: usize) {
        let Some(kind) = &r.kind else { return };
        let Ok(doc) = self.ex(shown).json() else {
            return;
        };
        let Some(id) = c::document_id(&doc) else {
            return;
        };
        let made = self.ctx.fixtures.instance_from(kind, id, &doc, None);
        for record in self.ctx.fixtures.made_records(kind, &made, &self.scope) {
            self.ctx.fixtures.note_made(record);
        }
    }
}
