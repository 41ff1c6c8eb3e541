//! The single-exchange checks a test would run on an exchange of a catalog endpoint.

use serde_json::Value;

use crate::catalog::{Kind, Matched};
use crate::checks::{self as c, Check, Schemas};
use crate::target::Exchange;

/// One check's result on one exchange.
pub type Judgement = (&'static Check, Result<(), String>);

/// The single-exchange checks a test runs on an answer of this endpoint: no 5xx; for a
/// success, the JSON body, the one judgement of an answer of its kind ([`c::answer::judge`]:
/// media type, envelope, the resource's documented shape, the created id), the shown id, the
/// upload address form, and at TFE level the status code; for a 4xx, the
/// JSON:API error document (TFE level). A check that does not apply is not listed.
pub fn judge(
    schemas: &Schemas,
    m: &Matched,
    upload_kinds: &[String],
    ex: &Exchange,
) -> Vec<Judgement> {
    let mut out: Vec<Judgement> = Vec::new();
    let Some(status) = ex.status() else {
        return out;
    };
    out.push((&c::NO_SERVER_ERROR, c::no_server_error(ex)));
    let e = &m.row;
    let jsonapi = matches!(
        e.kind,
        Kind::Create | Kind::Show | Kind::List | Kind::Update
    );
    if (400..500).contains(&status) && status != 429 && m.on_api() {
        out.push((&c::TFE_ERROR_DOCUMENT, c::tfe_error_document(schemas, ex)));
    }
    if !(200..300).contains(&status) {
        return out;
    }
    if let Some(result) = c::tfe_status(ex, e.kind, &e.expect.status) {
        out.push((&c::TFE_STATUS, result));
    }
    let wants_json = jsonapi || e.kind == Kind::Read;
    // A body over the proxy's cap was not read whole: its checks are not evaluated.
    let cut = ex.response.as_ref().is_ok_and(|r| r.truncated);
    if !wants_json || status == 204 || cut {
        return out;
    }
    let doc = match c::json_body(ex) {
        Ok(doc) => {
            out.push((&c::JSON_BODY, Ok(())));
            doc
        }
        Err(why) => {
            out.push((&c::JSON_BODY, Err(why)));
            return out;
        }
    };
    out.extend(c::answer::judge(schemas, e.kind, e.admin, ex, &doc));
    match e.kind {
        Kind::Create
            if e.resource
                .as_ref()
                .is_some_and(|r| upload_kinds.contains(r)) =>
        {
            if let Some((_, url)) = c::upload_candidates(&doc).into_iter().next() {
                out.push((&c::UPLOAD_URL_FORM, c::upload_url_form(&url)));
            }
        }
        Kind::Show | Kind::Update => {
            if let Some(result) = same_id(m, &doc, ex.request.body.as_deref()) {
                let check = if e.kind == Kind::Show {
                    &c::SHOW_SAME_ID
                } else {
                    &c::UPDATE_SAME_ID
                };
                out.push((check, result));
            }
        }
        Kind::List => {
            let paged = ex.request.url.contains("page%5Bsize%5D")
                || ex.request.url.contains("page[size]")
                || ex.request.url.contains("page%5Bnumber%5D")
                || ex.request.url.contains("page[number]");
            if paged {
                let meta = schemas
                    .validate("tfe/pagination", &doc)
                    .map_err(|e| format!("expected meta.pagination (schema tfe/pagination); {e}"));
                out.push((&c::TFE_PAGINATION_META, meta));
            }
        }
        _ => {}
    }
    out
}

/// `show.same-id` / `update.same-id` where the path's last parameter is the resource's id
/// (`…_id`, `id`, or an organization's name, which is its id); `None` where it is not known,
/// and where the path does not name what it answers (`expect.shows`: a workspace's current
/// state version is named by the workspace).
///
/// An organization's id is its name: an update that renames it (`data.attributes.name` in
/// the request) answers the new name (tfe-api-facts 0, item 10: the id is the name).
fn same_id(m: &Matched, doc: &Value, request: Option<&str>) -> Option<Result<(), String>> {
    m.row.resource.as_ref()?;
    if m.row.expect.shows.is_some() {
        return None;
    }
    let (name, value) = m.params.last()?;
    let organization =
        name == "organization_name" && m.row.resource.as_deref() == Some("organization");
    let is_id = name == "id" || name.ends_with("_id") || organization;
    if !is_id {
        return None;
    }
    let renamed = organization
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
    Some(c::lifecycle::same_id(doc, &value, "the answer"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matched(path: &str) -> Matched {
        crate::catalog::Catalog::embedded()
            .unwrap()
            .find("GET", path)
            .unwrap()
    }

    #[test]
    fn same_id_compares_the_path_only_where_it_names_the_answer() {
        let doc = serde_json::json!({"data": {"id": "sv-1", "type": "state-versions"}});
        // A workspace's current state version is named by the workspace, not by its own id.
        let current = matched("/api/v2/workspaces/ws-1/current-state-version");
        assert_eq!(current.endpoint, "state_versions::current");
        assert_eq!(same_id(&current, &doc, None), None);
        // A show named by its own id still has to answer that id.
        let show = matched("/api/v2/state-versions/sv-2");
        assert!(matches!(same_id(&show, &doc, None), Some(Err(_))));
        let doc2 = serde_json::json!({"data": {"id": "sv-2", "type": "state-versions"}});
        assert_eq!(same_id(&show, &doc2, None), Some(Ok(())));
    }

    #[test]
    fn an_organization_renamed_by_its_update_answers_its_new_name() {
        let update = crate::catalog::Catalog::embedded()
            .unwrap()
            .find("PATCH", "/api/v2/organizations/old-name")
            .unwrap();
        let renamed = serde_json::json!({"data": {"id": "new-name", "type": "organizations"}});
        let rename = r#"{"data":{"type":"organizations","attributes":{"name":"new-name"}}}"#;
        assert_eq!(same_id(&update, &renamed, Some(rename)), Some(Ok(())));
        // Without a rename, the path's name is still the id to answer.
        let other = r#"{"data":{"type":"organizations","attributes":{"email":"a@b.c"}}}"#;
        assert!(matches!(
            same_id(&update, &renamed, Some(other)),
            Some(Err(_))
        ));
    }
}
