//! Checks of a resource's life: a create answers its id, a show answers the id asked for, an
//! update is kept, a deleted resource is gone, an action not allowed in a state is refused.
//! Each answers `Ok(())` or `Err(message)` in the form "expected …, received …"; the caller
//! sends the requests and records the result under the check's id.

use serde_json::{Map, Value};

use super::{document_id, status_text};
use crate::target::Exchange;

/// `create.returns-id`: the created resource's `data.id`.
pub fn returned_id(doc: &Value) -> Result<String, String> {
    document_id(doc)
        .ok_or_else(|| "expected the created resource's `data.id` (a string), found none".into())
}

/// `show.same-id`, `update.same-id`: `what` answers the resource whose id was asked for.
pub fn same_id(doc: &Value, expected: &str, what: &str) -> Result<(), String> {
    match document_id(doc) {
        Some(got) if got == expected => Ok(()),
        got => Err(format!(
            "expected {what} to answer `data.id` {expected}, received {}",
            got.map(|g| format!("`{g}`"))
                .unwrap_or_else(|| "none".into())
        )),
    }
}

/// `create.then-show`: a show of the created resource (`what`) succeeds with its id.
pub fn shows(ex: &Exchange, expected: &str, what: &str) -> Result<(), String> {
    if !ex.is_success() {
        return Err(format!(
            "expected {what} {expected} to succeed, received {}",
            status_text(ex.status())
        ));
    }
    let doc = ex
        .json()
        .map_err(|e| format!("expected {what} to answer JSON: {e}"))?;
    same_id(&doc, expected, what)
}

/// `delete.then-gone`: a show of a deleted resource (`what`) does not succeed.
pub fn gone(status: Option<u16>, what: &str) -> Result<(), String> {
    match status {
        Some(s) if (200..300).contains(&s) => Err(format!(
            "expected {what} to be gone after its delete; a show answered {s}"
        )),
        _ => Ok(()),
    }
}

/// `tfe.404-after-delete`: a show of an id that never existed (`what`) does not succeed.
pub fn unknown(status: Option<u16>, what: &str) -> Result<(), String> {
    match status {
        Some(s) if (200..300).contains(&s) => Err(format!(
            "expected a show of {what} not to succeed, received {s}"
        )),
        _ => Ok(()),
    }
}

/// `tfe.404-after-delete`: a show of a deleted resource (`what`) is answered 404.
pub fn not_found(status: Option<u16>, what: &str) -> Result<(), String> {
    match status {
        Some(404) => Ok(()),
        other => Err(format!(
            "expected 404 for {what} after its delete, received {}",
            status_text(other)
        )),
    }
}

/// `tfe.refused-in-wrong-state`: `what`, not allowed in the resource's state, is refused (4xx).
pub fn refused(status: Option<u16>, what: &str) -> Result<(), String> {
    match status {
        Some(s) if (400..500).contains(&s) => Ok(()),
        other => Err(format!(
            "expected {what} to be refused (4xx), received {}",
            status_text(other)
        )),
    }
}

/// `update.persisted`: what `whence` shows at `pointer` is the `value` an update sent.
pub fn persisted(object: &Value, pointer: &str, value: &str, whence: &str) -> Result<(), String> {
    let got = object.pointer(pointer);
    if got.and_then(Value::as_str) == Some(value) {
        Ok(())
    } else {
        Err(format!(
            "expected {whence} to hold `{value}` at {pointer}, as the update sent; received {}",
            got.map(Value::to_string)
                .unwrap_or_else(|| "nothing".into())
        ))
    }
}

/// `tfe.read-after-write`: a show after an update echoes every attribute the update `sent`
/// that the show has at all (write-only attributes are not shown).
pub fn echoed(sent: &Map<String, Value>, shown: &Value) -> Result<(), String> {
    let attributes = shown.pointer("/data/attributes").and_then(Value::as_object);
    let differing: Vec<String> = sent
        .iter()
        .filter_map(|(name, value)| {
            let seen = attributes?.get(name)?;
            (seen != value).then(|| format!("`{name}`: sent {value}, shown {seen}"))
        })
        .collect();
    if differing.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "expected the show after the update to echo the attributes sent; {}",
            differing.join("; ")
        ))
    }
}

/// `state.after-action`: `whence` shows the resource (`what`) in the state `want` (or, while it
/// may still be on its way, in one of `via`).
pub fn in_state(
    got: &str,
    want: &str,
    via: &[String],
    what: &str,
    whence: &str,
) -> Result<(), String> {
    if got == want {
        return Ok(());
    }
    let via = if via.is_empty() {
        String::new()
    } else {
        format!(" (or on its way there: {})", via.join(", "))
    };
    Err(format!(
        "expected {what} to be `{want}`{via}, {whence} says `{got}`"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::testing::exchange;
    use serde_json::json;

    #[test]
    fn ids_are_returned_and_answered() {
        let doc = json!({"data": {"id": "ws-1"}});
        assert_eq!(returned_id(&doc).unwrap(), "ws-1");
        assert!(returned_id(&json!({"data": {}})).is_err());
        assert!(same_id(&doc, "ws-1", "the show").is_ok());
        let e = same_id(&doc, "ws-2", "the show").unwrap_err();
        assert!(e.contains("ws-2") && e.contains("`ws-1`"), "{e}");
        assert!(shows(
            &exchange(200, "application/json", r#"{"data":{"id":"r"}}"#),
            "r",
            "the show"
        )
        .is_ok());
        assert!(shows(&exchange(404, "application/json", "{}"), "r", "the show").is_err());
        assert!(shows(&exchange(200, "text/html", "<html>"), "r", "the show").is_err());
    }

    #[test]
    fn a_deleted_resource_is_gone_and_404() {
        assert!(gone(Some(404), "it").is_ok());
        assert!(gone(Some(410), "it").is_ok());
        assert!(gone(None, "it").is_ok());
        assert!(gone(Some(200), "it").unwrap_err().contains("200"));
        assert!(not_found(Some(404), "it").is_ok());
        assert!(not_found(Some(410), "it").is_err());
        assert!(not_found(None, "it").is_err());
        assert!(unknown(Some(404), "ws-none").is_ok());
        assert!(unknown(Some(200), "ws-none")
            .unwrap_err()
            .contains("ws-none"));
    }

    #[test]
    fn refusals_are_4xx_only() {
        assert!(refused(Some(409), "a cancel").is_ok());
        assert!(refused(Some(200), "a cancel").is_err());
        assert!(refused(Some(500), "a cancel").is_err());
        assert!(refused(None, "a cancel").is_err());
    }

    #[test]
    fn updates_persist_and_echo() {
        let shown = json!({"data": {"attributes": {"name": "b", "secret": null}}});
        assert!(persisted(&shown, "/data/attributes/name", "b", "the show").is_ok());
        assert!(persisted(&shown, "/data/attributes/name", "c", "the show").is_err());
        let sent = json!({"name": "b", "write-only": "x"});
        assert!(echoed(sent.as_object().unwrap(), &shown).is_ok());
        let sent = json!({"name": "c"});
        assert!(echoed(sent.as_object().unwrap(), &shown)
            .unwrap_err()
            .contains("`name`"));
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
