//! The one judgement of an answer by its endpoint's kind: which checks a single successful
//! JSON answer of a create, show, update or list must pass, decided here once. The runner and
//! `conform proxy` call [`judge`] and record what it answers; the effects that need further
//! requests (read back, listed, gone) are the runner's and the sequence engine's, through the
//! functions of `lifecycle` and `lists`.

use serde_json::Value;

use super::{
    envelope_list, envelope_single, lifecycle, resource_family, tfe_media_type, tfe_resource_shape,
    Check, Schemas, CREATE_RETURNS_ID, ENVELOPE_LIST, ENVELOPE_SINGLE, TFE_MEDIA_TYPE,
    TFE_RESOURCE_SHAPE,
};
use crate::catalog::Kind;
use crate::target::Exchange;

/// One check's result on one answer.
pub type Judgement = (&'static Check, Result<(), String>);

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

/// Whether the judgement of `check` is among `judged` and held.
pub fn held(judged: &[Judgement], check: &Check) -> bool {
    judged
        .iter()
        .any(|(c, result)| c.id == check.id && result.is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::testing::exchange;

    #[test]
    fn each_kind_has_its_envelope_and_a_create_its_id() {
        let schemas = Schemas::embedded().unwrap();
        let ex = exchange(201, "application/vnd.api+json", "{}");
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
}
