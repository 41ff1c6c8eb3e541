//! Checks of a resource's life: a create answers its id, a show answers the id asked for, an
//! update is kept, a deleted resource is gone, an action not allowed in a state is refused.
//! Each answers `Ok(())` or `Err(message)` in the form "expected …, received …"; the caller
//! sends the requests and records the result under the check's id. By job: this module (ids,
//! gone, refused, tokens), `read_back` (what a resource reads back as), `states` (the one
//! state rule, states after an action, a relationship's member).

use serde_json::Value;

use super::{document_id, status_text};
use crate::checks::Message;
use crate::target::Exchange;

mod read_back;
mod states;

pub use read_back::*;
pub use states::*;

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
    fn refusals_are_4xx_only() {
        assert!(refused(Some(409), "a cancel").is_ok());
        assert!(refused(Some(200), "a cancel").is_err());
        assert!(refused(Some(500), "a cancel").is_err());
        assert!(refused(None, "a cancel").is_err());
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
}
