//! The input families: what must be refused (`tfe.refuses-*`: which check judges which kind
//! of input, the statuses the facts name for it, the judgement of one refused request) and
//! what TFE takes although a stricter reading would refuse it (`tfe.accepts-input`).

use crate::checks::Message;
use serde_json::Value;

use super::Check;
use crate::catalog::RefuseKind;
use crate::target::Exchange;

/// The check that judges a kind of input.
pub fn refusal_check(kind: RefuseKind) -> &'static Check {
    match kind {
        RefuseKind::WrongType => &super::TFE_REFUSES_WRONG_TYPE,
        RefuseKind::UnknownType => &super::TFE_REFUSES_UNKNOWN_TYPE,
        RefuseKind::MissingAttribute => &super::TFE_REFUSES_MISSING_ATTRIBUTE,
        RefuseKind::MalformedJson => &super::TFE_REFUSES_MALFORMED_JSON,
        RefuseKind::MediaType => &super::TFE_REFUSES_MEDIA_TYPE,
    }
}

/// The statuses the facts name for a kind of input (tfe-api-facts 0.2: 415 without the
/// JSON:API media type; 1.3: 422 for a malformed body and missing or invalid attributes;
/// JSON:API answers a type it does not take with 409, so that counts too).
pub fn refusal_statuses(kind: RefuseKind) -> &'static [u16] {
    match kind {
        RefuseKind::WrongType | RefuseKind::MissingAttribute => &[422],
        RefuseKind::UnknownType => &[409, 422],
        RefuseKind::MalformedJson => &[400, 422],
        RefuseKind::MediaType => &[415],
    }
}

/// The answer to a request that must be refused: one of `expected`, never 5xx. `Ok(())`
/// says nothing of what was stored; [`refusal_stored`] judges that.
pub fn refusal_answer(ex: &Exchange, expected: &[u16]) -> Result<(), Message> {
    let codes = expected
        .iter()
        .map(u16::to_string)
        .collect::<Vec<_>>()
        .join(" or ");
    match ex.status() {
        None => Err(Message::new("expected an answer, received none")),
        Some(s) if expected.contains(&s) => Ok(()),
        Some(s) if (200..300).contains(&s) => Err(message!(
            "expected the request to be refused with {codes}, but it was accepted ({s})"
        )),
        Some(s) if s >= 500 => Err(message!(
            "expected the request to be refused with {codes}, received a server error ({s})"
        )),
        Some(s) => Err(message!("expected {codes}, received {s}")),
    }
}

/// A `tfe.refuses-*` check: the refused request's `answer` and what the show afterwards found
/// (`stored`), in one result; `note` (the case's) is added to a failure's message.
pub fn refusal(
    answer: Result<(), Message>,
    stored: Result<(), Message>,
    note: Option<&str>,
) -> Result<(), Message> {
    let context = note.map(|n| format!(" ({n})")).unwrap_or_default();
    match (answer, stored) {
        (Ok(()), Ok(())) => Ok(()),
        (Err(a), Ok(())) => Err(message!("{a}{context}")),
        (Ok(()), Err(s)) => Err(message!("{s}{context}")),
        (Err(a), Err(s)) => Err(message!("{a}; {s}{context}")),
    }
}

/// What a show afterwards says of a refused request: `absent` (the create's resource must not
/// be there: the show must not succeed) or unchanged (the value at the pointer is what it
/// was before).
pub enum Stored<'a> {
    /// The show of what a create would have made, after the request.
    Absent(&'a Exchange),
    /// The value before the request and the show after it, with the pointer.
    Unchanged {
        /// The value read before.
        before: &'a Value,
        /// The show after.
        after: &'a Exchange,
        /// Where the value is.
        pointer: &'a str,
    },
}

/// `Err` when the show afterwards proves the refused input was stored.
pub fn refusal_stored(stored: Stored<'_>) -> Result<(), Message> {
    match stored {
        Stored::Absent(ex) if ex.is_success() => Err(message!(
            "the refused create was stored: {} {} answers {}",
            ex.request.method,
            ex.request.url,
            ex.status().unwrap_or_default()
        )),
        Stored::Absent(_) => Ok(()),
        Stored::Unchanged {
            before,
            after,
            pointer,
        } => {
            let now = after.json().ok().and_then(|d| d.pointer(pointer).cloned());
            match now {
                Some(now) if &now == before => Ok(()),
                Some(now) => Err(message!(
                    "the refused update was stored: `{pointer}` was {before} and is now {now}"
                )),
                None => Err(message!(
                    "after the refused update, the show has no `{pointer}` (it was {before})"
                )),
            }
        }
    }
}

/// `tfe.accepts-input`: the `answer` to input TFE takes is 2xx, and the show afterwards holds
/// `expected` at `pointer` (`note`, the case's source, is added to a failure's message).
pub fn accepted(
    answer: &Exchange,
    shown: &Exchange,
    pointer: &str,
    expected: &str,
    note: &str,
) -> Result<(), Message> {
    match answer.status() {
        None => {
            return Err(message!(
                "expected the input to be taken ({note}), received no answer"
            ))
        }
        Some(s) if !(200..300).contains(&s) => {
            return Err(message!(
                "expected the input to be taken ({note}), but it was answered {s}"
            ))
        }
        Some(_) => {}
    }
    let doc = shown
        .json()
        .map_err(|e| message!("the show after the taken input answered no document: {e}"))?;
    // An id may be answered as a number (a server with numeric ids): its text is compared.
    match doc.pointer(pointer) {
        Some(Value::String(v)) if v == expected => Ok(()),
        Some(Value::Number(n)) if n.to_string() == expected => Ok(()),
        other => Err(message!(
            "the input was answered {} but the show afterwards holds {} at `{pointer}`, not `{expected}` ({note})",
            answer.status().unwrap_or_default(),
            other.map_or("nothing".to_string(), Value::to_string)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_fails_on_its_answer_or_what_was_stored_with_the_note() {
        assert!(refusal(Ok(()), Ok(()), None).is_ok());
        assert_eq!(
            refusal(Err(Message::new("a")), Ok(()), Some("n")).unwrap_err(),
            "a (n)"
        );
        assert_eq!(
            refusal(Ok(()), Err(Message::new("s")), None).unwrap_err(),
            "s"
        );
        assert_eq!(
            refusal(Err(Message::new("a")), Err(Message::new("s")), None).unwrap_err(),
            "a; s"
        );
    }
}
