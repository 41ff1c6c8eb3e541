//! Checks of states: the one state rule ([`state_holds`]), what a state not reached says, a
//! resource in the state an action leads to, and a relationship's member named by its owner.

use serde_json::Value;

use crate::checks::{status_text, Message};
use crate::target::Exchange;

/// The one state rule (`state.after-action`, `tfe.state-after-action`, `tfe.linked`, a
/// precondition, the sequence engine's model): whether what a read shows at a state's pointer
/// (`seen`) is the state `wanted`: that value, or one of `or` (states that count as there, such
/// as a run past `applied`); an array holds it when a member is it or an object with it as a
/// value. An id answered as a number is the same id as its digits in a string.
pub fn state_holds(seen: Option<&Value>, wanted: &Value, or: &[Value]) -> bool {
    let same = |v: &Value| {
        v == wanted
            || matches!((v, wanted), (Value::Number(n), Value::String(s)) if n.to_string() == *s)
    };
    match seen {
        Some(Value::Array(items)) => items
            .iter()
            .any(|i| same(i) || i.as_object().is_some_and(|o| o.values().any(same))),
        Some(v) => same(v) || or.contains(v),
        None => false,
    }
}

/// What a state not reached within the poll budget says: `wanted` (`absent`: no longer) at
/// `pointer` of the read `read`, the value `last` seen there.
pub fn state_not_reached(
    wanted: &Value,
    absent: bool,
    pointer: &str,
    read: &str,
    last: &str,
    polled: std::time::Duration,
) -> Message {
    message!(
        "expected {}{wanted} at {pointer} of {read}, last seen {last} (polled for {} s)",
        if absent { "no longer " } else { "" },
        polled.as_secs()
    )
}

/// A state not reached because the target answered TFE's own value for it where the spec
/// names another: the finding says so, for a person certifying a TFE-compatible server.
pub fn state_is_tfes(not_reached: Message, tfe: &Value) -> Message {
    message!(
        "{not_reached}; {tfe} is what TFE itself answers here: the spec and TFE disagree, so a server that follows TFE fails this check at every profile (waive it knowingly with --waivers)"
    )
}

/// A state read once, not waited for, because the same read waited the whole budget in vain
/// earlier in the run (in `test`) and never showed it.
pub fn read_once_after(not_reached: Message, test: &str) -> Message {
    message!(
        "{not_reached}; read once: the same read never showed such a state within the whole budget earlier in this run ({test})"
    )
}

/// What a state that could not be read at all says (the poll could not start: the catalog
/// names no such show, its path cannot be filled): the harness's reason, as it is.
pub fn state_unread(why: String) -> Message {
    Message::new(why)
}

/// `state.after-action`: `whence` shows the resource (`what`) in the state `want` (or, while it
/// may still be on its way, in one of `via`).
pub fn in_state(
    got: &str,
    want: &str,
    via: &[String],
    what: &str,
    whence: &str,
) -> Result<(), Message> {
    if got == want {
        return Ok(());
    }
    let via = if via.is_empty() {
        String::new()
    } else {
        format!(" (or on its way there: {})", via.join(", "))
    };
    Err(message!(
        "expected {what} to be `{want}`{via}, {whence} says `{got}`"
    ))
}

/// Whether a document's `data` names `id` anywhere (as a string, or a number of those
/// digits): the spec shows no relationship document, so a member may be named wherever the
/// owner's show or list puts it.
pub fn names(doc: &Value, id: &str) -> bool {
    fn walk(v: &Value, id: &str) -> bool {
        match v {
            Value::String(s) => s == id,
            Value::Number(n) => n.to_string() == id,
            Value::Array(items) => items.iter().any(|i| walk(i, id)),
            Value::Object(map) => map.values().any(|i| walk(i, id)),
            _ => false,
        }
    }
    doc.get("data").is_some_and(|data| walk(data, id))
}

/// `relationship.listed`: after an add, the owner's show or list (`what`, a route of the
/// spec) names the member `id`; after a removal (`removed`), it answers without it.
pub fn member_listed(ex: &Exchange, id: &str, removed: bool, what: &str) -> Result<(), Message> {
    if !ex.is_success() {
        return Err(message!(
            "expected {what} to answer, to see the member {id}; received {}",
            status_text(ex.status())
        ));
    }
    let doc = ex
        .json()
        .map_err(|e| message!("expected {what} to answer JSON: {e}"))?;
    match (names(&doc, id), removed) {
        (true, false) | (false, true) => Ok(()),
        (false, false) => Err(message!(
            "expected {what} to name the member {id} after the add; it names it nowhere in its `data`"
        )),
        (true, true) => Err(message!(
            "expected {what} no longer to name the member {id} after the removal; it still does"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::testing::exchange;
    use serde_json::json;

    #[test]
    fn a_state_holds_as_itself_one_that_counts_or_a_member() {
        let applied = json!("applied");
        assert!(state_holds(Some(&applied), &applied, &[]));
        let errored = json!("errored");
        assert!(!state_holds(Some(&errored), &applied, &[]));
        assert!(state_holds(
            Some(&errored),
            &applied,
            std::slice::from_ref(&errored)
        ));
        assert!(state_holds(Some(&json!([{"id": 7}])), &json!("7"), &[]));
        assert!(!state_holds(None, &applied, &[]));
        let message = state_not_reached(
            &applied,
            true,
            "/p",
            "runs::show",
            "\"x\"",
            Default::default(),
        );
        assert_eq!(
            message,
            "expected no longer \"applied\" at /p of runs::show, last seen \"x\" (polled for 0 s)"
        );
    }

    #[test]
    fn a_member_is_named_anywhere_in_data_and_only_there() {
        let doc = json!({"data":{"id":"team-1","relationships":{"users":{"data":[{"type":"users","id":"user-7"}]}}},"included":[{"id":"user-9"}]});
        assert!(names(&doc, "user-7"));
        assert!(!names(&doc, "user-9"));
        let numeric = json!({"data":{"id":"1","members":[7]}});
        assert!(names(&numeric, "7"));
    }

    #[test]
    fn a_member_is_listed_after_an_add_and_not_after_a_removal() {
        let with = exchange(
            200,
            "application/vnd.api+json",
            r#"{"data":{"id":"t","relationships":{"users":{"data":[{"id":"u"}]}}}}"#,
        );
        let without = exchange(200, "application/vnd.api+json", r#"{"data":{"id":"t"}}"#);
        assert!(member_listed(&with, "u", false, "the team's show").is_ok());
        assert!(member_listed(&without, "u", true, "the team's show").is_ok());
        let e = member_listed(&without, "u", false, "the team's show").unwrap_err();
        assert!(e.contains("names it nowhere"), "{e}");
        assert!(member_listed(&with, "u", true, "the team's show").is_err());
        let absent = exchange(404, "application/vnd.api+json", r#"{"errors":[]}"#);
        assert!(member_listed(&absent, "u", true, "the team's show").is_err());
    }

    #[test]
    fn states_are_compared_with_the_way_there_named() {
        assert!(in_state("applied", "applied", &[], "run 1", "the show").is_ok());
        let e = in_state(
            "planning",
            "applied",
            &["planned".into()],
            "run 1",
            "the show",
        )
        .unwrap_err();
        assert!(e.contains("on its way there: planned"), "{e}");
    }
}
