//! The judgement of one exchange, decided here once: [`exchange`] chooses every check a single
//! exchange of a catalog endpoint gets (no 5xx, success, the status, the JSON body, then
//! [`judge`]: the checks a successful JSON answer of a create, show, update or list must pass,
//! and the shown id, the upload address, TFE's error documents and paging meta). `conform
//! proxy`, the sequence engine and the runner call [`exchange`] (each with its [`Seen`]) and
//! record what it answers; the effects that need further requests (read back, listed, gone)
//! are the runner's and the sequence engine's, through the functions of `lifecycle` and
//! `lists`.

use crate::checks::Message;
use serde_json::Value;

use super::{
    envelope_list, envelope_single, json_body, lifecycle, lists, no_server_error, resource_family,
    succeeds, tfe_error_document, tfe_media_type, tfe_resource_shape, tfe_status,
    upload_candidates, upload_url_form, Check, Schemas, CREATE_RETURNS_ID, ENDPOINT_SUCCEEDS,
    ENVELOPE_LIST, ENVELOPE_SINGLE, JSON_BODY, NO_SERVER_ERROR, SHOW_SAME_ID, TFE_ERROR_DOCUMENT,
    TFE_MEDIA_TYPE, TFE_PAGINATION_META, TFE_RESOURCE_SHAPE, TFE_STATUS, UPDATE_SAME_ID,
    UPLOAD_URL_FORM,
};
use crate::catalog::{Kind, Matched};
use crate::target::Exchange;

/// One check's result on one answer.
pub type Judgement = (&'static Check, Result<(), Message>);

/// The checks a 2xx JSON answer (`ex`, parsed as `doc`) of an endpoint of `kind` must pass,
/// in the order they are reported: TFE's media type, the kind's envelope, the documented
/// shape of its resources (only when the envelope held; `admin`: the administrator API's
/// views), and for a create its returned id. Kinds that answer no JSON:API document (actions,
/// reads, downloads) have none here.
pub fn judge(
    schemas: &Schemas,
    kind: Kind,
    admin: bool,
    ex: &Exchange,
    doc: &Value,
) -> Vec<Judgement> {
    let envelope = match kind {
        Kind::List => (&ENVELOPE_LIST, envelope_list(schemas, doc)),
        Kind::Create | Kind::Show | Kind::Update => {
            (&ENVELOPE_SINGLE, envelope_single(schemas, doc))
        }
        _ => return Vec::new(),
    };
    let held = envelope.1.is_ok();
    let mut out = vec![(&TFE_MEDIA_TYPE, tfe_media_type(ex)), envelope];
    if held {
        let shape = tfe_resource_shape(schemas, resource_family(admin), doc);
        out.push((&TFE_RESOURCE_SHAPE, shape));
    }
    if kind == Kind::Create {
        out.push((&CREATE_RETURNS_ID, lifecycle::returned_id(doc).map(|_| ())));
    }
    out
}

/// Which answers [`exchange`] judges beyond the endpoint's own: where `conform proxy`, the
/// sequence engine and the runner's tests legitimately differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seen<'a> {
    /// Each exchange seen alone (`conform proxy`): every 4xx of the API (a 429 aside) is a
    /// JSON:API error document (`tfe.error-document`), every list answered to TFE's page
    /// parameters carries `meta.pagination` (`tfe.pagination-meta`), every create of a
    /// kind that takes an upload answers an upload address of the documented form
    /// (`upload.url-form`), and an answer TFE documents whole (`expect.tfe_schema`) has that
    /// shape.
    Alone,
    /// Within a run (the sequence engine): the error answers, the paging and the uploads a
    /// run provokes on purpose are judged where it provokes them (the refusals, the paging
    /// walks, the upload tests), not on every answer.
    InRun,
    /// The main answer of an endpoint's own test (the runner): it must succeed
    /// (`endpoint.succeeds`; a download's redirect too), the body of each kind that answers
    /// a document is judged whatever its status or size (an action's when it has one), an
    /// answer TFE documents whole has that shape, and a show whose path does not name what it
    /// answers (`expect.shows`) answers `shown`, the id of the instance the run made or was
    /// given. Errors, paging and uploads are judged where the test provokes them.
    Test {
        /// The id the instance `expect.shows` names has in the run, if the run has one.
        shown: Option<&'a str>,
    },
}

/// The single-exchange checks of an exchange `ex` of the endpoint `m`, in the order they are
/// reported: no 5xx; seen in a [`Seen::Test`], success (nothing more when it failed); for a
/// 4xx seen [`Seen::Alone`], the JSON:API error document (TFE level); for a success, the
/// status code the catalog expects (`expect.status`, else TFE's for the kind; TFE level), the
/// JSON body, the one judgement of an answer of its kind ([`judge`]: media type, envelope, the
/// resource's documented shape, the created id), the whole document's shape where TFE
/// documents it, the shown or updated id where the path names it ([`Matched::own_id`]; a
/// test's `expect.shows`), and seen alone, the upload address a create of a kind that takes
/// an upload answers and the paging meta of a list answered to TFE's page parameters. Seen
/// alone or in a run, a body cut at the size cap is not judged on its contents. A check that
/// does not apply is not listed.
///
/// This is the one place a single-answer check is chosen: a new one is its function, its
/// row in `checks/mod.rs`, a line here, and its fault in the reference and `selftest/`; the
/// proxy, the sequence engine and the runner record what this answers.
pub fn exchange(schemas: &Schemas, m: &Matched, ex: &Exchange, seen: Seen<'_>) -> Vec<Judgement> {
    let mut out: Vec<Judgement> = Vec::new();
    let test = matches!(seen, Seen::Test { .. });
    let e = &m.row;
    if ex.status().is_none() && !test {
        return out;
    }
    out.push((&NO_SERVER_ERROR, no_server_error(ex)));
    // a download's redirect is its success: the test follows it
    let redirected = e.kind == Kind::Download && ex.status().is_some_and(|s| s / 100 == 3);
    if test {
        let success = ex.is_success() || redirected;
        out.push((
            &ENDPOINT_SUCCEEDS,
            if success { Ok(()) } else { succeeds(ex) },
        ));
    }
    let Some(status) = ex.status() else {
        return out;
    };
    if seen == Seen::Alone && (400..500).contains(&status) && status != 429 && m.on_api() {
        out.push((&TFE_ERROR_DOCUMENT, tfe_error_document(schemas, ex)));
    }
    if !((200..300).contains(&status) || test && redirected) {
        return out;
    }
    if let Some(result) = tfe_status(ex, e.kind, &e.expect.status) {
        out.push((&TFE_STATUS, result));
    }
    let Some(doc) = body(ex, e.kind, status, test, &mut out) else {
        return out;
    };
    out.extend(judge(schemas, e.kind, e.admin, ex, &doc));
    if let (Seen::Alone | Seen::Test { .. }, Some(schema)) = (seen, &e.expect.tfe_schema) {
        out.push((
            &TFE_RESOURCE_SHAPE,
            super::envelope::tfe_document_shape(schemas, schema, &doc),
        ));
    }
    match e.kind {
        Kind::Create if seen == Seen::Alone && m.takes_upload => {
            if let Some((_, url)) = upload_candidates(&doc).into_iter().next() {
                out.push((&UPLOAD_URL_FORM, upload_url_form(&url)));
            }
        }
        Kind::Show | Kind::Update => {
            if let Some(result) = same_id(m, &doc, ex.request.body.as_deref(), seen) {
                let check = if e.kind == Kind::Show {
                    &SHOW_SAME_ID
                } else {
                    &UPDATE_SAME_ID
                };
                out.push((check, result));
            }
        }
        Kind::List if seen == Seen::Alone && lists::tfe_paged(&ex.request.url) => {
            out.push((&TFE_PAGINATION_META, lists::pagination_meta(schemas, &doc)));
        }
        _ => {}
    }
    out
}

/// `json.body` of a successful answer (`status`) of an endpoint of `kind`, pushed to `out`;
/// the document when it held. The kinds that answer a document are judged; a test's too when
/// it answered 204 or more than the size cap, and an action's that answered a body.
fn body(
    ex: &Exchange,
    kind: Kind,
    status: u16,
    test: bool,
    out: &mut Vec<Judgement>,
) -> Option<Value> {
    let documented = matches!(
        kind,
        Kind::Create | Kind::Show | Kind::List | Kind::Update | Kind::Read
    );
    let cut = ex.response.as_ref().is_ok_and(|r| r.truncated);
    let judged = if test {
        documented || (matches!(kind, Kind::Action | Kind::Relationship) && !ex.body().is_empty())
    } else {
        documented && status != 204 && !cut
    };
    if !judged {
        return None;
    }
    let doc = json_body(ex);
    out.push((&JSON_BODY, doc.as_ref().map(|_| ()).map_err(Clone::clone)));
    doc.ok()
}

/// `show.same-id` / `update.same-id` where the path names the resource ([`Matched::own_id`]:
/// the parameter the catalog fills with its id); `None` where it does not. A show whose path
/// names something else (`expect.shows`: a workspace's current state version is named by the
/// workspace) answers the id a test was given for it (`shown`, [`Seen::Test`]); seen alone or
/// in a run, that id is not known.
///
/// An organization's id is its name: an update that renames it (`data.attributes.name` in
/// the request) answers the new name (tfe-api-facts 0, item 10: the id is the name).
fn same_id(
    m: &Matched,
    doc: &Value,
    request: Option<&str>,
    seen: Seen<'_>,
) -> Option<Result<(), Message>> {
    if m.row.expect.shows.is_some() {
        let Seen::Test { shown: Some(id) } = seen else {
            return None;
        };
        return Some(lifecycle::same_id(doc, id, "the answer"));
    }
    let value = m.own_id.as_deref()?;
    let renamed = (m.row.resource.as_deref() == Some("organization"))
        .then(|| request.and_then(|b| serde_json::from_str::<Value>(b).ok()))
        .flatten()
        .and_then(|b| {
            b.pointer("/data/attributes/name")?
                .as_str()
                .map(str::to_string)
        });
    let value = match renamed {
        Some(new_name) => new_name,
        None => percent_encoding::percent_decode_str(value)
            .decode_utf8_lossy()
            .into_owned(),
    };
    Some(lifecycle::same_id(doc, &value, "the answer"))
}

/// Whether the judgement of `check` is among `judged` and held.
pub fn held(judged: &[Judgement], check: &Check) -> bool {
    judged
        .iter()
        .any(|(c, result)| c.id == check.id && result.is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::testing::exchange as exchange_of;

    #[test]
    fn each_kind_has_its_envelope_and_a_create_its_id() {
        let schemas = Schemas::embedded().unwrap();
        let ex = exchange_of(201, "application/vnd.api+json", "{}");
        let single = serde_json::json!({"data": {"id": "t-1", "type": "x", "attributes": {}}});
        let ids = |j: &[Judgement]| j.iter().map(|(c, _)| c.id).collect::<Vec<_>>();
        let create = judge(&schemas, Kind::Create, false, &ex, &single);
        assert_eq!(
            ids(&create),
            [
                "tfe.media-type",
                "envelope.single",
                "tfe.resource-shape",
                "create.returns-id"
            ]
        );
        assert!(create.iter().all(|(_, r)| r.is_ok()));
        let list = judge(&schemas, Kind::List, false, &ex, &single);
        assert_eq!(ids(&list), ["tfe.media-type", "envelope.list"]);
        assert!(!held(&list, &ENVELOPE_LIST));
        assert!(judge(&schemas, Kind::Action, false, &ex, &single).is_empty());
        // a team without what TFE always answers for one
        let team = serde_json::json!({"data": {"id": "team-1", "type": "teams", "attributes": {}}});
        let show = judge(&schemas, Kind::Show, false, &ex, &team);
        assert!(!held(&show, &TFE_RESOURCE_SHAPE));
    }

    fn matched(method: &str, path: &str) -> Matched {
        crate::catalog::Catalog::embedded()
            .unwrap()
            .find(method, path)
            .unwrap()
    }

    #[test]
    fn same_id_compares_the_path_only_where_it_names_the_answer() {
        let doc = serde_json::json!({"data": {"id": "sv-1", "type": "state-versions"}});
        // A workspace's current state version is named by the workspace, not by its own id.
        let current = matched("GET", "/api/v2/workspaces/ws-1/current-state-version");
        assert_eq!(current.endpoint, "state_versions::current");
        assert_eq!(same_id(&current, &doc, None, Seen::Alone), None);
        // A show named by its own id still has to answer that id.
        let show = matched("GET", "/api/v2/state-versions/sv-2");
        assert!(matches!(
            same_id(&show, &doc, None, Seen::Alone),
            Some(Err(_))
        ));
        let doc2 = serde_json::json!({"data": {"id": "sv-2", "type": "state-versions"}});
        assert_eq!(same_id(&show, &doc2, None, Seen::Alone), Some(Ok(())));
    }

    #[test]
    fn an_organization_renamed_by_its_update_answers_its_new_name() {
        let update = matched("PATCH", "/api/v2/organizations/old-name");
        let renamed = serde_json::json!({"data": {"id": "new-name", "type": "organizations"}});
        let rename = r#"{"data":{"type":"organizations","attributes":{"name":"new-name"}}}"#;
        assert_eq!(
            same_id(&update, &renamed, Some(rename), Seen::Alone),
            Some(Ok(()))
        );
        // Without a rename, the path's name is still the id to answer.
        let other = r#"{"data":{"type":"organizations","attributes":{"email":"a@b.c"}}}"#;
        assert!(matches!(
            same_id(&update, &renamed, Some(other), Seen::Alone),
            Some(Err(_))
        ));
    }

    #[test]
    fn the_proxy_judges_a_whole_document_tfe_documents() {
        let schemas = Schemas::embedded().unwrap();
        let m = matched(
            "POST",
            "/api/v2/organizations/acme/organization-memberships",
        );
        let member = r#"{"data":{"id":"ou-1","type":"organization-memberships","attributes":{}}"#;
        let without = exchange_of(201, "application/vnd.api+json", &format!("{member}}}"));
        let shape = |ex: &Exchange, seen| {
            exchange(&schemas, &m, ex, seen)
                .into_iter()
                .filter(|(c, r)| c.id == "tfe.resource-shape" && r.is_err())
                .count()
        };
        assert_eq!(
            shape(&without, Seen::Alone),
            1,
            "the invite's user is not included"
        );
        let with = exchange_of(
            201,
            "application/vnd.api+json",
            &format!(r#"{member},"included":[{{"id":"user-1","type":"users"}}]}}"#),
        );
        assert_eq!(shape(&with, Seen::Alone), 0);
        // the runner judges its own main answer by the schema
        assert_eq!(shape(&without, Seen::InRun), 0);
    }

    #[test]
    fn a_body_over_the_cap_is_not_judged_on_its_contents() {
        let schemas = Schemas::embedded().unwrap();
        let m = matched("GET", "/api/v2/organizations");
        let mut ex = exchange_of(200, "application/vnd.api+json", "{\"data\":[");
        if let Ok(r) = &mut ex.response {
            r.truncated = true;
        }
        let judged = exchange(&schemas, &m, &ex, Seen::Alone);
        assert!(judged.iter().all(|(_, r)| r.is_ok()));
        assert!(!judged.iter().any(|(c, _)| c.id == "json.body"));
    }

    #[test]
    fn the_catalog_s_statuses_are_the_expected_ones_and_errors_are_judged_alone() {
        let schemas = Schemas::embedded().unwrap();
        let team = r#"{"data":{"id":"team-1","type":"teams","attributes":{}}}"#;
        let m = matched("POST", "/api/v2/organizations/acme/teams");
        let ex = exchange_of(200, "application/vnd.api+json", team);
        let judged = exchange(&schemas, &m, &ex, Seen::InRun);
        assert!(
            held(&judged, &TFE_STATUS),
            "TFE documents 200 for a team create"
        );
        let refused = exchange_of(422, "text/plain", "no");
        let ids = |j: &[Judgement]| j.iter().map(|(c, _)| c.id).collect::<Vec<_>>();
        assert_eq!(
            ids(&exchange(&schemas, &m, &refused, Seen::InRun)),
            ["transport.no-5xx"]
        );
        assert_eq!(
            ids(&exchange(&schemas, &m, &refused, Seen::Alone)),
            ["transport.no-5xx", "tfe.error-document"]
        );
    }

    #[test]
    fn a_test_s_main_answer_must_succeed_and_its_body_is_judged_whatever_it_is() {
        let schemas = Schemas::embedded().unwrap();
        let ids = |j: &[Judgement]| j.iter().map(|(c, _)| c.id).collect::<Vec<_>>();
        let test = Seen::Test { shown: None };
        let create = matched("POST", "/api/v2/organizations/acme/teams");
        let refused = exchange_of(422, "application/vnd.api+json", "{}");
        let judged = exchange(&schemas, &create, &refused, test);
        assert_eq!(ids(&judged), ["transport.no-5xx", "endpoint.succeeds"]);
        assert!(!held(&judged, &ENDPOINT_SUCCEEDS));
        // a create that answers no document fails its body, not only its status
        let empty = exchange_of(204, "", "");
        let judged = exchange(&schemas, &create, &empty, test);
        assert!(!held(&judged, &JSON_BODY) && !held(&judged, &TFE_STATUS));
        assert!(!ids(&exchange(&schemas, &create, &empty, Seen::InRun)).contains(&"json.body"));
        // a download's redirect is its success
        let download = matched("GET", "/api/v2/configuration-versions/cv-1/download");
        let redirect = exchange_of(302, "", "");
        assert!(held(
            &exchange(&schemas, &download, &redirect, test),
            &ENDPOINT_SUCCEEDS
        ));
        // an action's body, when it has one, is JSON
        let action = matched("POST", "/api/v2/runs/run-1/actions/apply");
        let text = exchange_of(202, "text/plain", "applied");
        let judged = exchange(&schemas, &action, &text, test);
        assert!(ids(&judged).contains(&"json.body") && !held(&judged, &JSON_BODY));
    }

    #[test]
    fn a_show_named_by_another_resource_answers_the_id_the_test_gives() {
        let schemas = Schemas::embedded().unwrap();
        let current = matched("GET", "/api/v2/workspaces/ws-1/current-state-version");
        let answer = r#"{"data":{"id":"sv-1","type":"state-versions","attributes":{}}}"#;
        let ex = exchange_of(200, "application/vnd.api+json", answer);
        let same = |shown| {
            let judged = exchange(&schemas, &current, &ex, Seen::Test { shown });
            judged
                .into_iter()
                .find(|(c, _)| c.id == "show.same-id")
                .map(|(_, r)| r.is_ok())
        };
        assert_eq!(same(Some("sv-1")), Some(true));
        assert_eq!(same(Some("sv-2")), Some(false));
        assert_eq!(same(None), None);
        // a parameter the catalog fills with the resource's id, whatever its name
        let admin = matched("GET", "/api/v2/admin/organizations/acme");
        let other = r#"{"data":{"id":"other","type":"organizations","attributes":{}}}"#;
        assert!(matches!(
            same_id(
                &admin,
                &serde_json::from_str(other).unwrap(),
                None,
                Seen::Alone
            ),
            Some(Err(_))
        ));
    }
}
