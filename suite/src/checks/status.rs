//! Checks of an answer's status and media type: the route exists, the request succeeds, no
//! server error, a JSON body, and TFE's status codes, media type and error documents.
//! Each answers `Ok(())` or `Err(message)` in the form "expected …, received …"; the
//! caller records it under the check's id.

use crate::checks::Message;
use serde_json::Value;

use super::Schemas;
use crate::catalog::Kind;
use crate::target::noroute::{Likeness, NoRoute};
use crate::target::Exchange;

/// What an answer shows of its route (`endpoint.exists`), decided by evidence: the target's
/// own answer to a path that cannot exist (`target::noroute`), and the route answering 2xx
/// earlier in the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Presence {
    /// The route is served: the evidence that decided, for messages.
    Served(String),
    /// The route is absent: the evidence that decided.
    Absent(String),
    /// A 404 with nothing to compare it with (the address was never calibrated): only its
    /// look can say more (an error document is a handler's).
    Unproven,
}

impl Presence {
    /// True unless the evidence shows the route absent (an unproven 404 counts as absent
    /// where every id in the path names a resource that is there: [`route_exists`]).
    pub fn served(&self) -> bool {
        matches!(self, Presence::Served(_))
    }
}

/// What the answer of `ex` shows of its route. `seen_answering`: the route (its catalog
/// endpoint) answered 2xx earlier in the run. A 405 or 501 is absent (the path does not take
/// the method); an answer like the target's no-route answer is absent, unless the route was
/// seen answering (a server whose handlers' 404 is its router's, as TFE's); any other answer,
/// a 404 unlike the no-route one included, is served.
pub fn presence(ex: &Exchange, no_route: &NoRoute, seen_answering: bool) -> Presence {
    let Some(status) = ex.status() else {
        return Presence::Served("no answer to judge".into());
    };
    if matches!(status, 405 | 501) {
        return Presence::Absent(format!(
            "it answered {status}: the path does not take that method"
        ));
    }
    if seen_answering {
        return Presence::Served("the same route answered 2xx earlier in this run".into());
    }
    match no_route.likeness(ex) {
        Likeness::NoRoute(like) => Presence::Absent(format!(
            "it answered as the target answers a path that cannot exist ({like}; asked in preflight)"
        )),
        Likeness::Unlike(router) if status == 404 => Presence::Served(format!(
            "its 404 is not the target's no-route answer ({router}): a handler answered"
        )),
        Likeness::Unlike(_) => Presence::Served(format!("it answered {status}")),
        Likeness::Uncalibrated if status == 404 => Presence::Unproven,
        Likeness::Uncalibrated => Presence::Served(format!("it answered {status}")),
    }
}

/// `endpoint.exists`: the route is there, by the evidence of [`presence`]. An unproven 404
/// (nothing to compare it with) counts as absent, every id in the path naming a resource the
/// run made or was given.
pub fn route_exists(ex: &Exchange, presence: &Presence) -> Result<(), Message> {
    let (method, path) = (&ex.request.method, path_of(&ex.request.url));
    match presence {
        Presence::Served(_) => Ok(()),
        Presence::Absent(why) => Err(message!(
            "expected the endpoint {method} {path} to exist; {why}"
        )),
        Presence::Unproven => Err(message!(
            "expected the endpoint {method} {path} to exist; it answered 404 although every id in the path names a resource the run made or was given"
        )),
    }
}

/// `endpoint.succeeds`: a 2xx answer.
pub fn succeeds(ex: &Exchange) -> Result<(), Message> {
    match &ex.response {
        Ok(r) if (200..300).contains(&r.status) => Ok(()),
        Ok(r) => Err(message!(
            "expected success (2xx), received {}{}",
            r.status,
            error_detail(&r.body)
                .map(|d| format!(": {d}"))
                .unwrap_or_default()
        )),
        Err(e) => Err(message!("expected an answer, received none: {e}")),
    }
}

/// [`succeeds`] of a request named `what` (a sequence's step: `show <item>`, an action in a
/// state): its finding begins with it.
pub fn succeeds_as(ex: &Exchange, what: &str) -> Result<(), Message> {
    succeeds(ex).map_err(|e| message!("{what}: {e}"))
}

/// `transport.no-5xx`.
pub fn no_server_error(ex: &Exchange) -> Result<(), Message> {
    match ex.status() {
        Some(s) if s >= 500 => Err(message!("expected no server error, received {s}")),
        _ => Ok(()),
    }
}

/// `json.body`: a JSON content type and a parseable body. Returns the document.
pub fn json_body(ex: &Exchange) -> Result<Value, Message> {
    let content_type = ex.header("content-type").unwrap_or("");
    let value = ex.json().map_err(Message::new)?;
    if !is_json_media_type(content_type) {
        let shown = if content_type.is_empty() {
            "none"
        } else {
            content_type
        };
        return Err(message!(
            "expected a JSON content type (application/json or application/*+json), received `{shown}`"
        ));
    }
    Ok(value)
}

/// True for `application/json` and `application/<x>+json` (parameters allowed).
pub fn is_json_media_type(content_type: &str) -> bool {
    let essence = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    essence == "application/json"
        || (essence.starts_with("application/") && essence.ends_with("+json"))
}

/// `tfe.status-code` for the endpoint's kind.
/// `None` when the facts name no status for the endpoint (an action, a download, an
/// upload without an `expect.status` in `cases/`): the check is then not evaluated, and not
/// listed as passed.
pub fn tfe_status(
    ex: &Exchange,
    kind: Kind,
    expected_override: &[u16],
) -> Option<Result<(), Message>> {
    let status = ex.status()?;
    let expected: &[u16] = if !expected_override.is_empty() {
        expected_override
    } else {
        match kind {
            Kind::Create => &[201],
            Kind::Delete | Kind::Relationship => &[204],
            Kind::Show | Kind::List | Kind::Update | Kind::Read => &[200],
            Kind::Action | Kind::Download | Kind::Upload => return None,
        }
    };
    Some(if expected.contains(&status) {
        Ok(())
    } else {
        Err(message!(
            "expected status {}, received {status}",
            join(expected)
        ))
    })
}

/// `tfe.media-type`: `application/vnd.api+json`.
pub fn tfe_media_type(ex: &Exchange) -> Result<(), Message> {
    let content_type = ex.header("content-type").unwrap_or("none");
    let essence = content_type.split(';').next().unwrap_or("").trim();
    if essence.eq_ignore_ascii_case(crate::target::JSONAPI) {
        Ok(())
    } else {
        Err(message!(
            "expected content type application/vnd.api+json, received `{content_type}`"
        ))
    }
}

/// `tfe.error-document`: a 4xx answer is a JSON:API error document.
pub fn tfe_error_document(schemas: &Schemas, ex: &Exchange) -> Result<(), Message> {
    let doc = ex
        .json()
        .map_err(|e| message!("expected a JSON:API error document; {e}"))?;
    schemas
        .validate("tfe/error", &doc)
        .map_err(|e| message!("expected a JSON:API error document (schema tfe/error); {e}"))
}

fn path_of(url: &str) -> String {
    url::Url::parse(url)
        .map(|u| u.path().to_string())
        .unwrap_or_else(|_| url.to_string())
}

fn join(codes: &[u16]) -> String {
    codes
        .iter()
        .map(u16::to_string)
        .collect::<Vec<_>>()
        .join(" or ")
}

/// A status code for a message: the number, or "no answer".
pub fn status_text(status: Option<u16>) -> String {
    status.map_or_else(|| "no answer".to_string(), |s| s.to_string())
}

/// A 2xx answer with a JSON document (`what` is what was expected of it). Returns the document.
pub fn answered_json(ex: &Exchange, what: &str) -> Result<Value, Message> {
    match (ex.is_success(), ex.json()) {
        (true, Ok(doc)) => Ok(doc),
        _ => Err(message!(
            "expected {what}, received {}",
            status_text(ex.status())
        )),
    }
}

/// A TFE status rule on a request sent `on_purpose` (`tfe.unauthorized`: 401 without a token;
/// `tfe.required-filter`: 400 without the required filter): the answer is `expected`.
pub fn answered(status: Option<u16>, expected: u16, on_purpose: &str) -> Result<(), Message> {
    match status {
        Some(s) if s == expected => Ok(()),
        other => Err(message!(
            "expected {expected} {on_purpose}, received {}",
            status_text(other)
        )),
    }
}

/// The first error's title/detail of a JSON:API error body, for messages.
pub fn error_detail(body: &[u8]) -> Option<String> {
    let doc: Value = serde_json::from_slice(body).ok()?;
    let first = doc.get("errors")?.get(0)?;
    if let Some(s) = first.as_str() {
        return Some(s.to_string());
    }
    let title = first.get("title").and_then(Value::as_str).unwrap_or("");
    let detail = first.get("detail").and_then(Value::as_str).unwrap_or("");
    Some(format!("{title} {detail}").trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::testing::*;

    #[test]
    fn json_body_passes_json_and_fails_html_wrong_type_and_empty() {
        assert!(json_body(&exchange(200, "application/vnd.api+json", r#"{"data":{}}"#)).is_ok());
        let html = json_body(&exchange(200, "text/html", "<html>hi</html>")).unwrap_err();
        assert!(
            html.contains("not JSON") && html.contains("<html>"),
            "{html}"
        );
        let wrong = json_body(&exchange(200, "text/plain", "{}")).unwrap_err();
        assert!(wrong.contains("text/plain"), "{wrong}");
        assert!(json_body(&exchange(200, "application/json", ""))
            .unwrap_err()
            .contains("empty"));
    }

    #[test]
    fn a_tfe_status_rule_names_what_was_left_out() {
        assert!(answered(Some(401), 401, "without a token").is_ok());
        let e = answered(Some(200), 401, "without a token").unwrap_err();
        assert_eq!(e, "expected 401 without a token, received 200");
        assert!(answered(None, 400, "without the filter")
            .unwrap_err()
            .contains("no answer"));
    }

    #[test]
    fn presence_without_calibration_flags_404_405_501_only() {
        let judge = |ex: &Exchange| route_exists(ex, &presence(ex, &NoRoute::default(), false));
        assert!(judge(&exchange(200, "application/json", "{}")).is_ok());
        assert!(judge(&exchange(409, "application/json", "{}")).is_ok());
        for s in [404, 405, 501] {
            let e = judge(&exchange(s, "application/json", "{}")).unwrap_err();
            assert!(e.contains("GET /runs/run-1"), "{e}");
        }
        // a route seen answering is served, whatever its 404 looks like
        let seen = exchange(404, "application/json", "{}");
        assert!(route_exists(&seen, &presence(&seen, &NoRoute::default(), true)).is_ok());
    }

    #[test]
    fn presence_compares_a_404_with_the_targets_no_route_answer() {
        use crate::target::noroute::{Answers, Signature};
        let router = exchange(404, "text/plain", "404 page not found\n");
        let mut answers = Answers {
            prefix: "http://t/".into(),
            ..Answers::default()
        };
        answers.learn(Signature::of(&router).unwrap());
        let no_route = NoRoute {
            addresses: vec![answers],
        };
        let absent = presence(&router, &no_route, false);
        assert!(!absent.served());
        assert!(route_exists(&router, &absent)
            .unwrap_err()
            .contains("as the target answers a path that cannot exist"));
        let handler = exchange(
            404,
            "application/vnd.api+json",
            r#"{"errors":[{"title":"not found"}]}"#,
        );
        let served = presence(&handler, &no_route, false);
        assert!(served.served(), "{served:?}");
        assert!(route_exists(&handler, &served).is_ok());
        // 405 names the method, whatever the calibration
        assert!(!presence(&exchange(405, "text/plain", ""), &no_route, false).served());
    }

    #[test]
    fn tfe_checks_fail_on_wrong_codes_media_and_error_shape() {
        let s = schemas();
        assert_eq!(
            tfe_status(&exchange(201, "", ""), Kind::Create, &[]),
            Some(Ok(()))
        );
        assert!(tfe_status(&exchange(200, "", ""), Kind::Create, &[]).is_some_and(|r| r.is_err()));
        // an action whose status the facts do not name is not evaluated (never "passed")
        assert_eq!(tfe_status(&exchange(200, "", ""), Kind::Action, &[]), None);
        assert!(
            tfe_status(&exchange(200, "", ""), Kind::Action, &[202]).is_some_and(|r| r.is_err())
        );
        assert!(tfe_media_type(&exchange(200, "application/vnd.api+json", "")).is_ok());
        assert!(tfe_media_type(&exchange(200, "application/json", "")).is_err());
        let good = r#"{"errors":[{"status":"404","title":"not found"}]}"#;
        assert!(tfe_error_document(&s, &exchange(404, "application/vnd.api+json", good)).is_ok());
        assert!(tfe_error_document(&s, &exchange(404, "text/plain", "not found")).is_err());
    }
}
