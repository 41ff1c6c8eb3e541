//! The checks after a write: an update read back (renamed, listed, applied), a delete gone.

use serde_json::Value;

use crate::catalog::Variant;
use crate::checks as c;
use crate::checks::answer::Judgement;
use crate::fixtures::sent_attributes;
use crate::runner::TestRun;
use crate::target::Exchange;

impl TestRun<'_> {
    pub(in crate::runner) async fn after_update(&mut self, main: usize, judged: &[Judgement]) {
        if let Some(answer) = self.main_document(main, judged) {
            self.follow_renamed(&answer);
            let sent = sent_attributes(self.ex(main).request.body.as_deref());
            if let (Some(sent), Some(kind)) = (sent, self.endpoint.resource.clone()) {
                self.echoed(main, &kind, &sent, &answer, "the update's answer");
            }
            self.read_after_write(main, &answer).await;
        }
    }

    /// An update answered under another id than the one it updated (a server that renames
    /// what it updates: a real server's OAuth clients): what the run made is tracked by what the server
    /// answers, so teardown removes it under that id too (`update.same-id` judges the change).
    pub(in crate::runner) fn follow_renamed(&mut self, answer: &Value) {
        let (Some(kind), Some(old)) = (self.endpoint.resource.clone(), self.requested_id()) else {
            return;
        };
        if let Some(new) = answer
            .pointer("/data/id")
            .and_then(Value::as_str)
            .filter(|new| !new.is_empty() && *new != old)
        {
            self.ctx.fixtures.note_renamed(&kind, &old, new);
        }
    }

    /// A show after the update: the update applied what it sent (`update.persisted`), and the
    /// show answers what the update sent and answered (`read-back`; facts 6.4 at TFE).
    pub(in crate::runner) async fn read_after_write(&mut self, main: usize, answer: &Value) {
        let Some(sent) = sent_attributes(self.ex(main).request.body.as_deref()) else {
            return;
        };
        let mut waited_for = None;
        let (index, kind) = match (&self.endpoint.restore, self.endpoint.resource.clone()) {
            (Some(restore), _) => match self.show_of(&restore.show.clone()).await {
                Ok(index) => (index, restore.show.clone()),
                Err(_) => return,
            },
            (None, Some(kind)) if self.requested_id().is_some() => {
                // a show may lag the update: read again within the window until it applies
                let applies = |ex: &Exchange| {
                    ex.json()
                        .is_ok_and(|shown| c::lifecycle::applied(&sent, answer, &shown).is_ok())
                };
                match self.show_until(&kind, applies).await {
                    Some((index, waited)) => {
                        waited_for = waited;
                        (index, kind)
                    }
                    None => return self.listed_after_write(&kind, &sent, answer).await,
                }
            }
            _ => return,
        };
        if sent.is_empty() {
            return;
        }
        let what = format!("the show of the updated {kind} to answer a document");
        let Some(shown) = self.answered_document(index, &c::READ_BACK, &what) else {
            return;
        };
        self.applied_and_read_back(index, &kind, &sent, answer, &shown, waited_for);
    }

    /// After the update of a kind without a show: its list holds it, with what the update
    /// applied.
    pub(in crate::runner) async fn listed_after_write(
        &mut self,
        kind: &str,
        sent: &serde_json::Map<String, Value>,
        answer: &Value,
    ) {
        let Some(id) = self.requested_id() else {
            return;
        };
        let Some(((index, item), waited)) = self.listed_until(kind, &id, true).await else {
            return;
        };
        let ids: Vec<String> = item.iter().map(|_| id.clone()).collect();
        let result = c::waited(c::lists::holds(&ids, &id, kind), waited);
        if self.check(&c::LIST_CONTAINS, Some(index), result) {
            let shown = item.unwrap_or_default();
            self.applied_and_read_back(index, kind, sent, answer, &shown, None);
        }
    }

    /// `update.persisted` and `read-back` of an update, on what shows the resource after it
    /// (`waited`: how long the show was read again within the consistency window).
    pub(in crate::runner) fn applied_and_read_back(
        &mut self,
        index: usize,
        kind: &str,
        sent: &serde_json::Map<String, Value>,
        answer: &Value,
        shown: &Value,
        waited: Option<std::time::Duration>,
    ) {
        let result = c::lifecycle::applied(sent, answer, shown);
        self.check(&c::UPDATE_PERSISTED, Some(index), c::waited(result, waited));
        let known = c::lifecycle::answered(sent, answer);
        let what = format!("the updated {kind} as shown after the update");
        self.read_back(index, &known, answer, shown, &what);
    }

    pub(in crate::runner) async fn after_delete(&mut self, main: usize) {
        let Some(kind) = self.endpoint.resource.clone() else {
            return;
        };
        self.token_after_delete().await;
        if let Some(linked) = self.endpoint.expect.linked.clone() {
            // gone from where TFE lists it (a user account from the administrator list)
            self.state_check(&linked, &c::TFE_LINKED).await;
        }
        let deleted = self.scope.get(&kind).map(|i| i.id.clone());
        // a delete (above all one answered 202 Accepted) may take effect a moment later: the
        // show is read again within the window until it no longer finds the resource
        let Some((index, waited)) = self.show_until(&kind, |ex| !ex.is_success()).await else {
            // no show to ask: the list that holds the kind no longer does
            let Some(id) = deleted else { return };
            let Some(((index, item), waited)) = self.listed_until(&kind, &id, false).await else {
                // nor a list: nothing shows it gone, so teardown still tries (and says so)
                return;
            };
            let what = format!("the {kind} deleted, in its list");
            let result = c::waited(c::lifecycle::unlisted(item.is_some(), &what), waited);
            if self.check(&c::DELETE_THEN_GONE, Some(index), result) {
                self.ctx.fixtures.note_gone(&kind, &id);
            }
            return;
        };
        let ex = self.ex(index);
        let (gone, status) = (!ex.is_success(), ex.status());
        let answered_before = self.show_before.is_some_and(|i| self.ex(i).is_success());
        if gone && !answered_before {
            // a show route never seen answering for the kind: its 404 (a router's "404 page
            // not found") proves no absence, so the delete is not observed (and teardown
            // still tries)
            let before = self
                .show_before
                .and_then(|i| self.ex(i).status())
                .map_or("nothing".to_string(), |s| s.to_string());
            self.unobserved.push(format!(
                "the {kind}'s show {} answered {} after the delete, but {before} before it: a route never seen answering for the {kind} proves no absence",
                self.ex(index).request.url,
                c::status_text(status)
            ));
            return;
        }
        if let Some(id) = deleted.filter(|_| gone) {
            // shown gone: teardown has nothing left to do for it
            self.ctx.fixtures.note_gone(&kind, &id);
        }
        let check = if matches!(
            self.case.variant,
            Variant::Deprecated | Variant::DeprecatedApiV2
        ) {
            &c::DEPRECATED_SAME
        } else {
            &c::DELETE_THEN_GONE
        };
        let what = format!(
            "the {kind} deleted (the delete answered {})",
            c::status_text(self.ex(main).status())
        );
        let result = c::waited(c::lifecycle::gone(status, &what), waited);
        if self.check(check, Some(index), result) {
            let result = c::lifecycle::not_found(status, &what);
            if self.check(&c::TFE_NOT_FOUND_AFTER_DELETE, Some(index), result) {
                self.error_document(index);
            }
        }
    }
}
