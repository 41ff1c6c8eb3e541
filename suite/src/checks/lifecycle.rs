//! Checks of a resource's life: a create answers its id, a show answers the id asked for, an
//! update is kept, a deleted resource is gone, an action not allowed in a state is refused.
//! Each answers `Ok(())` or `Err(message)` in the form "expected …, received …"; the caller
//! sends the requests and records the result under the check's id.

use crate::checks::Message;
use serde_json::{Map, Value};

use super::{document_id, status_text};
use crate::target::Exchange;

/// `create.returns-id`: the created resource's `data.id`.
pub fn returned_id(doc: &Value) -> Result<String, Message> {
    document_id(doc).ok_or_else(|| {
        Message::new("expected the created resource's `data.id` (a string), found none")
    })
}

/// `create.returns-id` of a collection whose id is not `data.id`: the create answer holds
/// the `kind`'s id at `pointer` (`held`).
pub fn returned_id_at(held: bool, kind: &str, pointer: &str) -> Result<(), Message> {
    if held {
        Ok(())
    } else {
        Err(message!(
            "expected the create answer to hold the {kind} id at {pointer}"
        ))
    }
}

/// `show.same-id`, `update.same-id`: `what` answers the resource whose id was asked for.
pub fn same_id(doc: &Value, expected: &str, what: &str) -> Result<(), Message> {
    match document_id(doc) {
        Some(got) if got == expected => Ok(()),
        got => Err(message!(
            "expected {what} to answer `data.id` {expected}, received {}",
            got.map(|g| format!("`{g}`"))
                .unwrap_or_else(|| "none".into())
        )),
    }
}

/// `create.then-show`: a show of the created resource (`what`) succeeds with its id.
pub fn shows(ex: &Exchange, expected: &str, what: &str) -> Result<(), Message> {
    if !ex.is_success() {
        return Err(message!(
            "expected {what} {expected} to succeed, received {}",
            status_text(ex.status())
        ));
    }
    let doc = ex
        .json()
        .map_err(|e| message!("expected {what} to answer JSON: {e}"))?;
    same_id(&doc, expected, what)
}

/// `delete.then-gone`: a show of a deleted resource (`what`) answers a client error (404, or
/// another 4xx such as 410); a 5xx, a 429 or a success proves nothing gone.
pub fn gone(status: Option<u16>, what: &str) -> Result<(), Message> {
    match status {
        Some(s) if says_absent(s) => Ok(()),
        Some(s) => Err(message!(
            "expected {what} to be gone after its delete (404 Not Found, or another 4xx); a show answered {s}"
        )),
        None => Err(message!(
            "expected {what} to be gone after its delete (404 Not Found); a show got no answer"
        )),
    }
}

/// Whether a status says "no such resource": a client error other than 408 and 429 (which
/// say the request was not served).
fn says_absent(status: u16) -> bool {
    (400..500).contains(&status) && !matches!(status, 408 | 429)
}

/// `delete.then-gone` for a kind without a show: the list that held the deleted resource
/// (`what`) no longer does.
pub fn unlisted(listed: bool, what: &str) -> Result<(), Message> {
    if listed {
        Err(message!(
            "expected {what} to be gone after its delete; its list still holds it"
        ))
    } else {
        Ok(())
    }
}

/// `show.unknown-id`: a show of an id nothing has (`what`) answers a client error (404, or
/// another 4xx: HTTP semantics); a server error is not "not found".
pub fn not_there(status: Option<u16>, what: &str) -> Result<(), Message> {
    match status {
        Some(s) if says_absent(s) => Ok(()),
        Some(s) => Err(message!(
            "expected a show of {what}, which nothing has, to answer 404 Not Found (or another 4xx); received {s}"
        )),
        None => Err(message!(
            "expected a show of {what}, which nothing has, to answer 404 Not Found; received no answer"
        )),
    }
}

/// `tfe.404-after-delete`: a show of an id that never existed (`what`) does not succeed.
pub fn unknown(status: Option<u16>, what: &str) -> Result<(), Message> {
    match status {
        Some(s) if (200..300).contains(&s) => Err(message!(
            "expected a show of {what} not to succeed, received {s}"
        )),
        _ => Ok(()),
    }
}

/// `tfe.404-after-delete`: a show of a deleted resource (`what`) is answered 404.
pub fn not_found(status: Option<u16>, what: &str) -> Result<(), Message> {
    match status {
        Some(404) => Ok(()),
        other => Err(message!(
            "expected 404 for {what} after its delete, received {}",
            status_text(other)
        )),
    }
}

/// `tfe.refused-in-wrong-state`: `what`, not allowed in the resource's state, is refused (4xx).
pub fn refused(status: Option<u16>, what: &str) -> Result<(), Message> {
    match status {
        Some(s) if (400..500).contains(&s) => Ok(()),
        other => Err(message!(
            "expected {what} to be refused (4xx), received {}",
            status_text(other)
        )),
    }
}

/// `update.persisted`: what `whence` shows at `pointer` is the `value` an update sent.
pub fn persisted(object: &Value, pointer: &str, value: &str, whence: &str) -> Result<(), Message> {
    let got = object.pointer(pointer);
    if got.and_then(Value::as_str) == Some(value) {
        Ok(())
    } else {
        Err(message!(
            "expected {whence} to hold `{value}` at {pointer}, as the update sent; received {}",
            got.map(Value::to_string)
                .unwrap_or_else(|| "nothing".into())
        ))
    }
}

/// The attributes a create or update `sent` that its `answer` carries with the same value:
/// what a later show must answer. One the answer leaves out or answers otherwise is taken as
/// write-only or normalized by the server, and is not asked of the show.
pub fn kept(sent: &Map<String, Value>, answer: &Value) -> Map<String, Value> {
    let answered = attributes_of(answer);
    sent.iter()
        .filter(|(name, value)| answered.and_then(|a| a.get(*name)) == Some(*value))
        .map(|(name, value)| (name.clone(), value.clone()))
        .collect()
}

/// The attributes a create or update `sent` that its `answer` carries, at the value the answer
/// gives them: what a later show must not contradict (`read-back`). An answer that normalizes
/// a value (a trimmed name) is held to its own value; one that answers `true` for a stored
/// `false` is contradicted by the show. One the answer leaves out is taken as write-only.
pub fn answered(sent: &Map<String, Value>, answer: &Value) -> Map<String, Value> {
    let carried = attributes_of(answer);
    sent.keys()
        .filter_map(|name| Some((name.clone(), carried?.get(name)?.clone())))
        .collect()
}

/// `tfe.read-back` on a create's or update's own answer (facts 6.4: the response echoes every
/// attribute sent): each attribute `sent` is answered at the value sent, except the
/// `write_only` ones (secrets TFE never shows again, facts 6.9), which may be left out or null.
pub fn echoes_sent(
    sent: &Map<String, Value>,
    answer: &Value,
    write_only: &[String],
    what: &str,
) -> Result<(), Message> {
    let carried = attributes_of(answer);
    let differing: Vec<String> = sent
        .iter()
        .filter_map(|(name, value)| {
            let got = carried.and_then(|a| a.get(name));
            let hidden = write_only.contains(name)
                && got.is_none_or(|v| v.is_null() || v.as_str() == Some(""));
            match got {
                _ if hidden => None,
                Some(got) if got == value => None,
                Some(got) => Some(format!("`{name}`: sent {value}, answered {got}")),
                None => Some(format!("`{name}`: sent {value}, answered nothing")),
            }
        })
        .collect();
    if differing.is_empty() {
        Ok(())
    } else {
        Err(message!(
            "expected {what} to echo every attribute it was sent (tfe-api-facts 6.4); {}",
            differing.join("; ")
        ))
    }
}

/// A single-resource document's `data.attributes`.
fn attributes_of(doc: &Value) -> Option<&Map<String, Value>> {
    doc.pointer("/data/attributes").and_then(Value::as_object)
}

/// The to-one relationships a create `sent` (by name, the related id) that its `answer`
/// holds with the same id: what a later show must hold.
pub fn kept_links(
    sent: &std::collections::BTreeMap<String, String>,
    answer: &Value,
) -> std::collections::BTreeMap<String, String> {
    sent.iter()
        .filter(|(name, id)| linked_id(answer, name) == Some(id.as_str()))
        .map(|(name, id)| (name.clone(), id.clone()))
        .collect()
}

/// The id a document's to-one relationship `name` names.
fn linked_id<'a>(doc: &'a Value, name: &str) -> Option<&'a str> {
    doc.pointer(&format!("/data/relationships/{name}/data/id"))
        .and_then(Value::as_str)
}

/// `tfe.read-back` of relationships: `shown` (`what`) holds every relationship its create
/// sent and answered (`known`), to the same resource. TFE level: the spec shows none.
pub fn links_held(
    known: &std::collections::BTreeMap<String, String>,
    shown: &Value,
    what: &str,
) -> Result<(), Message> {
    let differing: Vec<String> = known
        .iter()
        .filter_map(|(name, id)| {
            let got = linked_id(shown, name);
            (got != Some(id.as_str())).then(|| match got {
                Some(got) => format!("`{name}`: {id} then, {got} now"),
                None => format!("`{name}`: {id} then, none now"),
            })
        })
        .collect();
    if differing.is_empty() {
        Ok(())
    } else {
        Err(message!(
            "expected {what} to hold the relationships it was made with; {}",
            differing.join("; ")
        ))
    }
}

/// `read-back`: `shown` (`what`) is the resource that was made or changed: of the same `type`
/// as its create or update answered (when both name one), and every `known` attribute (what
/// that request sent and answered, [`kept`]) that it carries has the same value. An attribute
/// it leaves out is `tfe.read-back`'s ([`echoes`]): the spec shows no attribute.
pub fn reads_back(
    known: &Map<String, Value>,
    made_type: Option<&str>,
    shown: &Value,
    what: &str,
) -> Result<(), Message> {
    let shown_type = shown.pointer("/data/type").and_then(Value::as_str);
    if let (Some(made), Some(got)) = (made_type, shown_type) {
        if made != got {
            return Err(message!(
                "expected {what} to answer a resource of type `{made}`, as it was answered when made; received type `{got}`"
            ));
        }
    }
    let attributes = attributes_of(shown);
    let differing: Vec<String> = known
        .iter()
        .filter_map(|(name, value)| match attributes.and_then(|a| a.get(name)) {
            Some(seen) if seen != value => Some(format!("`{name}`: {value} then, {seen} now")),
            _ => None,
        })
        .collect();
    if differing.is_empty() {
        Ok(())
    } else {
        Err(message!(
            "expected {what} to answer the attributes the resource was sent and answered with; {}",
            differing.join("; ")
        ))
    }
}

/// `tfe.read-back` (facts 6.4): `shown` (`what`) carries every `known` attribute (sent and
/// answered by the create or update, [`kept`]); their values are [`reads_back`]'s.
pub fn echoes(known: &Map<String, Value>, shown: &Value, what: &str) -> Result<(), Message> {
    let attributes = attributes_of(shown);
    let absent: Vec<String> = known
        .keys()
        .filter(|name| attributes.and_then(|a| a.get(*name)).is_none())
        .map(|name| format!("`{name}`"))
        .collect();
    if absent.is_empty() {
        Ok(())
    } else {
        Err(message!(
            "expected {what} to echo every attribute sent (and answered) when it was made or changed; absent: {}",
            absent.join(", ")
        ))
    }
}

/// `update.persisted`: an update that `sent` attributes is seen to have applied them: at
/// least one is carried at the value sent by its `answer` or the `shown` document after it,
/// and every one the answer carried at the value sent is carried so by the show (an answer
/// that says "changed" while the resource is not).
pub fn applied(sent: &Map<String, Value>, answer: &Value, shown: &Value) -> Result<(), Message> {
    let value =
        |doc: &Value, name: &str| -> Option<Value> { attributes_of(doc)?.get(name).cloned() };
    if sent.is_empty() {
        return Ok(());
    }
    let lost: Vec<String> = kept(sent, answer)
        .iter()
        .filter(|(name, sent)| value(shown, name).as_ref() != Some(*sent))
        .map(|(name, sent)| {
            let now = value(shown, name)
                .map(|v| v.to_string())
                .unwrap_or_else(|| "nothing".into());
            format!("`{name}`: sent and answered {sent}, shown {now}")
        })
        .collect();
    if !lost.is_empty() {
        return Err(message!(
            "expected a show after the update to carry what the update applied; {}",
            lost.join("; ")
        ));
    }
    if sent
        .iter()
        .any(|(name, v)| value(shown, name).as_ref() == Some(v))
    {
        return Ok(());
    }
    let names: Vec<String> = sent.keys().map(|k| format!("`{k}`")).collect();
    Err(message!(
        "expected the update's answer or a show after it to carry one of the attributes it sent ({}) at the value sent; neither does",
        names.join(", ")
    ))
}

/// `tfe.create-defaults`: for each attribute of `defaults` the create was not `sent`, its
/// `answer` carries the default.
pub fn defaults_hold(
    defaults: &Map<String, Value>,
    sent: &Map<String, Value>,
    answer: &Value,
) -> Result<(), Message> {
    let answered = attributes_of(answer);
    let wrong: Vec<String> = defaults
        .iter()
        .filter(|(name, _)| !sent.contains_key(*name))
        .filter_map(|(name, default)| match answered.and_then(|a| a.get(name)) {
            Some(got) if got == default => None,
            Some(got) => Some(format!("`{name}`: {got}, not {default}")),
            None => Some(format!("`{name}`: absent, not {default}")),
        })
        .collect();
    if wrong.is_empty() {
        Ok(())
    } else {
        Err(message!(
            "expected the create to answer TFE's defaults for what it was not sent; {}",
            wrong.join("; ")
        ))
    }
}

/// `tfe.token-secret`: the create's answer holds the token's secret at `pointer`.
pub fn issued_secret(answer: &Value, pointer: &str) -> Result<String, Message> {
    match answer.pointer(pointer) {
        Some(Value::String(secret)) if !secret.is_empty() => Ok(secret.clone()),
        other => Err(message!(
            "expected the token's create to answer its secret at {pointer} (a non-empty string); received {}",
            other.map(|_| "something else").unwrap_or("nothing")
        )),
    }
}

/// `tfe.token-secret`: a later show of the token does not answer its secret again.
pub fn secret_hidden(shown: &Value, pointer: &str) -> Result<(), Message> {
    match shown.pointer(pointer) {
        Some(Value::String(secret)) if !secret.is_empty() => Err(message!(
            "expected a show of the token to answer null or nothing at {pointer} (the secret is shown once); it answers a non-empty string"
        )),
        _ => Ok(()),
    }
}

/// `tfe.token-authenticates`: `what` (a read with the issued token) succeeded as it must
/// (`live`), or, after the token's delete, does not.
pub fn authenticates(status: Option<u16>, live: bool, what: &str) -> Result<(), Message> {
    let succeeded = status.is_some_and(|s| (200..300).contains(&s));
    match (live, succeeded) {
        (true, true) | (false, false) => Ok(()),
        (true, false) => Err(message!(
            "expected {what} with the token just issued to succeed; received {}",
            super::status_text(status)
        )),
        (false, true) => Err(message!(
            "expected {what} with the deleted token to be refused; received {}",
            super::status_text(status)
        )),
    }
}

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
        assert!(gone(None, "it").is_err());
        assert!(gone(Some(200), "it").unwrap_err().contains("200"));
        assert!(gone(Some(500), "it").unwrap_err().contains("500"));
        assert!(gone(Some(429), "it").is_err());
        assert!(not_there(Some(404), "ws-none").is_ok());
        assert!(not_there(Some(400), "ws-none").is_ok());
        assert!(not_there(Some(500), "ws-none").unwrap_err().contains("500"));
        assert!(unlisted(false, "it").is_ok());
        assert!(unlisted(true, "it").unwrap_err().contains("still holds"));
        assert!(not_found(Some(404), "it").is_ok());
        assert!(not_found(Some(410), "it").is_err());
        assert!(not_found(None, "it").is_err());
        assert!(unknown(Some(404), "ws-none").is_ok());
        assert!(unknown(Some(200), "ws-none")
            .unwrap_err()
            .contains("ws-none"));
    }

    #[test]
    fn a_later_show_is_held_to_what_the_answer_said_and_the_answer_to_what_was_sent() {
        let sent = json!({"auto-queue-runs": false, "name": " a ", "secret": "s"});
        let sent = sent.as_object().unwrap();
        let answer = json!({"data": {"attributes": {"auto-queue-runs": true, "name": "a"}}});
        let known = answered(sent, &answer);
        assert_eq!(known.get("auto-queue-runs"), Some(&json!(true)));
        assert_eq!(known.get("name"), Some(&json!("a")));
        assert!(!known.contains_key("secret"));
        let stored = json!({"data": {"attributes": {"auto-queue-runs": false, "name": "a"}}});
        let e = reads_back(&known, None, &stored, "the show").unwrap_err();
        assert!(e.contains("`auto-queue-runs`: true then, false now"), "{e}");
        let write_only = ["secret".to_string()];
        let e = echoes_sent(sent, &answer, &write_only, "the answer").unwrap_err();
        assert!(
            e.contains("`auto-queue-runs`: sent false, answered true"),
            "{e}"
        );
        assert!(!e.contains("secret"), "{e}");
        let echoed = json!({"data": {"attributes": {"auto-queue-runs": false, "name": " a "}}});
        assert!(echoes_sent(sent, &echoed, &write_only, "the answer").is_ok());
        assert!(echoes_sent(sent, &echoed, &[], "the answer").is_err());
    }

    #[test]
    fn refusals_are_4xx_only() {
        assert!(refused(Some(409), "a cancel").is_ok());
        assert!(refused(Some(200), "a cancel").is_err());
        assert!(refused(Some(500), "a cancel").is_err());
        assert!(refused(None, "a cancel").is_err());
    }

    #[test]
    fn updates_persist() {
        let shown = json!({"data": {"attributes": {"name": "b", "secret": null}}});
        assert!(persisted(&shown, "/data/attributes/name", "b", "the show").is_ok());
        assert!(persisted(&shown, "/data/attributes/name", "c", "the show").is_err());
    }

    #[test]
    fn what_was_sent_and_answered_is_read_back() {
        let sent = json!({"name": "a", "secret": "s", "email": "A@x"});
        let answer =
            json!({"data": {"type": "teams", "attributes": {"name": "a", "email": "a@x"}}});
        let known = kept(sent.as_object().unwrap(), &answer);
        assert_eq!(known.keys().collect::<Vec<_>>(), ["name"]);
        let shown = json!({"data": {"type": "teams", "attributes": {"name": "a"}}});
        assert!(reads_back(&known, Some("teams"), &shown, "the show").is_ok());
        assert!(echoes(&known, &shown, "the show").is_ok());
        // a show without the attribute: core has nothing to compare, TFE wants it echoed
        let hollow = json!({"data": {"type": "teams", "attributes": {}}});
        assert!(reads_back(&known, Some("teams"), &hollow, "the show").is_ok());
        let e = echoes(&known, &hollow, "the show").unwrap_err();
        assert!(e.contains("`name`"), "{e}");
        let other = json!({"data": {"type": "users", "attributes": {"name": "a"}}});
        assert!(reads_back(&known, Some("teams"), &other, "the show")
            .unwrap_err()
            .contains("`users`"));
        let changed = json!({"data": {"type": "teams", "attributes": {"name": "b"}}});
        let e = reads_back(&known, None, &changed, "the show").unwrap_err();
        assert!(e.contains("\"a\" then, \"b\" now"), "{e}");
    }

    #[test]
    fn an_update_is_applied_when_the_show_carries_it() {
        let sent = json!({"name": "b"});
        let sent = sent.as_object().unwrap();
        let old = json!({"data": {"attributes": {"name": "a"}}});
        let new = json!({"data": {"attributes": {"name": "b"}}});
        let hollow = json!({"data": {"attributes": {}}});
        assert!(applied(sent, &new, &new).is_ok());
        assert!(applied(sent, &old, &new).is_ok());
        // answered as changed, shown as before or not at all
        assert!(applied(sent, &new, &old)
            .unwrap_err()
            .contains("shown \"a\""));
        assert!(applied(sent, &new, &hollow)
            .unwrap_err()
            .contains("shown nothing"));
        assert!(applied(sent, &old, &old).unwrap_err().contains("neither"));
        assert!(applied(&Map::new(), &old, &old).is_ok());
    }

    #[test]
    fn defaults_hold_for_what_was_not_sent() {
        let defaults = json!({"refresh": true, "is-destroy": false});
        let defaults = defaults.as_object().unwrap();
        let answer = json!({"data": {"attributes": {"refresh": true, "is-destroy": true}}});
        let sent = json!({"is-destroy": true});
        assert!(defaults_hold(defaults, sent.as_object().unwrap(), &answer).is_ok());
        let e = defaults_hold(defaults, &Map::new(), &answer).unwrap_err();
        assert!(e.contains("`is-destroy`: true, not false"), "{e}");
        let hollow = json!({"data": {"attributes": {}}});
        assert!(defaults_hold(defaults, &Map::new(), &hollow)
            .unwrap_err()
            .contains("absent"));
    }

    #[test]
    fn a_token_is_shown_once_and_authenticates_while_it_lives() {
        let answer = json!({"data": {"attributes": {"token": "s3cret"}}});
        assert_eq!(
            issued_secret(&answer, "/data/attributes/token").unwrap(),
            "s3cret"
        );
        let hollow = json!({"data": {"attributes": {}}});
        assert!(issued_secret(&hollow, "/data/attributes/token").is_err());
        assert!(secret_hidden(&hollow, "/data/attributes/token").is_ok());
        let null = json!({"data": {"attributes": {"token": null}}});
        assert!(secret_hidden(&null, "/data/attributes/token").is_ok());
        assert!(secret_hidden(&answer, "/data/attributes/token").is_err());
        assert!(authenticates(Some(200), true, "a read").is_ok());
        assert!(authenticates(Some(401), true, "a read").is_err());
        assert!(authenticates(Some(401), false, "a read").is_ok());
        assert!(authenticates(Some(200), false, "a read").is_err());
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
