//! The target's own answer to a path that cannot exist: its no-route fingerprint.
//!
//! Preflight asks each address the API lives under (the service root, `/api/v2`, the
//! registry's) for a few random paths (`harness::calibrate`) and keeps what came back as
//! [`Signature`]s. An answer is the router's "no such route" only when it looks like one of
//! them: the same status, media type and body (a JSON:API error's title, detail and code; a
//! text or HTML page's words), the request's own path and method written out of both. A 404
//! that differs (a handler's "workspace … not found", a permission refusal) proves the route
//! is served. This is the auto-calibration of tools that must tell "not there" from "there
//! but refused" (ffuf, gobuster), written for this API.

use serde_json::Value;

use super::Exchange;

/// The bytes of a body compared (a router's page is short; a longer one is compared by its
/// start).
const COMPARED_BYTES: usize = 2048;

/// What an answer looks like, with the request's path and method written out of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signature {
    /// The status code.
    pub status: u16,
    /// The media type's essence (`text/plain`), lower case; empty when none was given.
    pub media: String,
    /// The body, by kind.
    pub body: BodyShape,
}

/// A body by kind, its words kept where they tell answers apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BodyShape {
    /// No body.
    Empty,
    /// A JSON document with `errors`: the first error's title, detail and code.
    JsonError {
        /// `errors[0].title`.
        title: String,
        /// `errors[0].detail`.
        detail: String,
        /// `errors[0].code`.
        code: String,
    },
    /// Another JSON document: its top-level keys.
    Json(Vec<String>),
    /// Text, HTML or anything else: its start, as text.
    Text(String),
}

impl BodyShape {
    fn kind(&self) -> &'static str {
        match self {
            BodyShape::Empty => "no body",
            BodyShape::JsonError { .. } => "a JSON error document",
            BodyShape::Json(_) => "a JSON document",
            BodyShape::Text(_) => "text",
        }
    }
}

impl Signature {
    /// The signature of an exchange's answer (`None` without one).
    pub fn of(ex: &Exchange) -> Option<Self> {
        let response = ex.response.as_ref().ok()?;
        let media = ex
            .header("content-type")
            .unwrap_or("")
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        let erase = Eraser::of(ex);
        let body = if response.body.is_empty() {
            BodyShape::Empty
        } else {
            match serde_json::from_slice::<Value>(&response.body) {
                Ok(doc) => match doc.pointer("/errors/0") {
                    Some(error) => {
                        let field = |name: &str| {
                            erase.apply(&match error.get(name) {
                                Some(Value::String(s)) => s.clone(),
                                Some(Value::Null) | None => String::new(),
                                Some(other) => other.to_string(),
                            })
                        };
                        BodyShape::JsonError {
                            title: field("title"),
                            detail: field("detail"),
                            code: field("code"),
                        }
                    }
                    None => BodyShape::Json(match doc.as_object() {
                        Some(map) => map.keys().cloned().collect(),
                        None => Vec::new(),
                    }),
                },
                Err(_) => {
                    let start = &response.body[..response.body.len().min(COMPARED_BYTES)];
                    BodyShape::Text(erase.apply(&String::from_utf8_lossy(start)))
                }
            }
        };
        Some(Self {
            status: response.status,
            media,
            body,
        })
    }

    /// Whether a router may have given this answer to a path it lacks: a 404, 405, 410 or
    /// 501, or an HTML page every path gets (a web interface's, 2xx or 3xx). A refusal (401,
    /// 403, 429, 400), a server error, or a 2xx JSON answer (a route whose segments are all
    /// parameters) says nothing of routing.
    pub fn is_routing_answer(&self) -> bool {
        match self.status {
            404 | 405 | 410 | 501 => true,
            200..=399 => self.media == "text/html",
            _ => false,
        }
    }

    /// For messages: `404 text/plain, text "404 page not found"`.
    pub fn describe(&self) -> String {
        let media = if self.media.is_empty() {
            "no media type".to_string()
        } else {
            self.media.clone()
        };
        let words = match &self.body {
            BodyShape::JsonError { title, detail, .. } => {
                format!(
                    " (title \"{}\", detail \"{}\")",
                    short(title),
                    short(detail)
                )
            }
            BodyShape::Text(text) => format!(" \"{}\"", short(text.trim())),
            _ => String::new(),
        };
        format!("{} {media}, {}{words}", self.status, self.body.kind())
    }
}

fn short(text: &str) -> String {
    let mut cut: String = text.chars().take(60).collect();
    if cut.len() < text.len() {
        cut.push('…');
    }
    cut.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// Writes the request's own path and method out of an answer's words, so that a router
/// that echoes them ("Cannot GET /api/v2/x") answers every path alike.
struct Eraser {
    paths: Vec<String>,
    method: String,
}

impl Eraser {
    fn of(ex: &Exchange) -> Self {
        let mut paths = Vec::new();
        if let Ok(url) = url::Url::parse(&ex.request.url) {
            let path = url.path().to_string();
            let decoded = percent_encoding::percent_decode_str(&path)
                .decode_utf8_lossy()
                .into_owned();
            let last = path.rsplit('/').find(|s| !s.is_empty()).map(String::from);
            if let Some(query) = url.query() {
                paths.push(format!("{path}?{query}"));
            }
            paths.push(decoded);
            paths.push(path);
            paths.extend(last);
        }
        paths.retain(|p| p.len() > 1);
        Self {
            paths,
            method: ex.request.method.clone(),
        }
    }

    fn apply(&self, text: &str) -> String {
        let mut out = text.to_string();
        for path in &self.paths {
            out = out.replace(path.as_str(), "{path}");
        }
        replace_word(&out, &self.method, "{method}")
    }
}

/// `text` with each whole-word `word` replaced.
fn replace_word(text: &str, word: &str, with: &str) -> String {
    if word.is_empty() {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(word) {
        let before = rest[..at].chars().next_back();
        let after = rest[at + word.len()..].chars().next();
        let bounded = |c: Option<char>| !c.is_some_and(char::is_alphanumeric);
        out.push_str(&rest[..at]);
        out.push_str(if bounded(before) && bounded(after) {
            with
        } else {
            word
        });
        rest = &rest[at + word.len()..];
    }
    out.push_str(rest);
    out
}

/// The answers seen under one address (a URL prefix) for paths that cannot exist.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Answers {
    /// The address: every URL that starts with it is compared with these answers.
    pub prefix: String,
    /// The answers, each once.
    pub seen: Vec<Signature>,
    /// Two answers of the same status and media type differed in their words (a request
    /// id, a time): only the status, media type and body kind are compared (and an error's
    /// title).
    pub words_vary: bool,
    /// What the addresses' paths were asked with, for messages (`GET /api/v2/conform-…`).
    pub asked: Vec<String>,
}

impl Answers {
    /// Adds a calibration answer: a new one is kept, one that differs from a kept one only
    /// in its words makes the words vary.
    pub fn learn(&mut self, signature: Signature) {
        if self.seen.contains(&signature) {
            return;
        }
        if self.seen.iter().any(|s| {
            s.status == signature.status
                && s.media == signature.media
                && s.body.kind() == signature.body.kind()
        }) {
            self.words_vary = true;
        }
        self.seen.push(signature);
    }

    /// The kept answer `signature` looks like, if any.
    fn like(&self, signature: &Signature) -> Option<&Signature> {
        self.seen.iter().find(|s| {
            if !self.words_vary {
                return *s == signature;
            }
            s.status == signature.status
                && s.media == signature.media
                && match (&s.body, &signature.body) {
                    (
                        BodyShape::JsonError { title: a, .. },
                        BodyShape::JsonError { title: b, .. },
                    ) => a == b,
                    (a, b) => a.kind() == b.kind(),
                }
        })
    }
}

/// The target's no-route fingerprint under each address it was asked at.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NoRoute {
    /// The answers by address; the longest prefix of a URL decides.
    pub addresses: Vec<Answers>,
}

/// What the fingerprint says of one answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Likeness {
    /// The address was never asked, or answered nothing a router gives (a refusal, a
    /// server error): nothing to compare with.
    Uncalibrated,
    /// The answer is the target's no-route answer: the kept signature it matches, described.
    NoRoute(String),
    /// The answer is unlike every no-route answer of its address: a route answered.
    Unlike(String),
}

impl NoRoute {
    /// How the answer of `ex` compares with the no-route answers of its address.
    pub fn likeness(&self, ex: &Exchange) -> Likeness {
        let Some(answers) = self
            .addresses
            .iter()
            .filter(|a| !a.seen.is_empty() && ex.request.url.starts_with(&a.prefix))
            .max_by_key(|a| a.prefix.len())
        else {
            return Likeness::Uncalibrated;
        };
        let Some(signature) = Signature::of(ex) else {
            return Likeness::Uncalibrated;
        };
        match answers.like(&signature) {
            Some(kept) => Likeness::NoRoute(kept.describe()),
            None => Likeness::Unlike(
                answers
                    .seen
                    .iter()
                    .map(Signature::describe)
                    .collect::<Vec<_>>()
                    .join("; "),
            ),
        }
    }

    /// For the configuration lines: what each address answers a path that cannot exist.
    pub fn describe(&self) -> Vec<String> {
        self.addresses
            .iter()
            .map(|a| {
                let seen = if a.seen.is_empty() {
                    "no answer a router gives (not calibrated)".to_string()
                } else {
                    a.seen
                        .iter()
                        .map(Signature::describe)
                        .collect::<Vec<_>>()
                        .join("; ")
                };
                let vary = if a.words_vary {
                    " (words vary: compared by kind)"
                } else {
                    ""
                };
                format!("{}: {seen}{vary}", a.prefix)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::{RequestRecord, ResponseRecord};

    fn ex(method: &str, url: &str, status: u16, media: &str, body: &str) -> Exchange {
        Exchange {
            request: RequestRecord {
                method: method.into(),
                url: url.into(),
                headers: vec![],
                body: None,
            },
            response: Ok(ResponseRecord {
                status,
                headers: vec![("content-type".into(), media.into())],
                body: body.as_bytes().to_vec(),
                truncated: false,
                received: body.len(),
            }),
            elapsed: std::time::Duration::ZERO,
        }
    }

    fn calibrated(answers: &[Exchange]) -> NoRoute {
        let mut a = Answers {
            prefix: "http://t/api/v2/".into(),
            ..Answers::default()
        };
        for e in answers {
            a.learn(Signature::of(e).unwrap());
        }
        NoRoute { addresses: vec![a] }
    }

    #[test]
    fn a_router_echoing_the_path_and_method_answers_every_path_alike() {
        let no_route = calibrated(&[
            ex(
                "GET",
                "http://t/api/v2/nr-1",
                404,
                "text/html",
                "Cannot GET /api/v2/nr-1",
            ),
            ex(
                "POST",
                "http://t/api/v2/nr-2/x",
                404,
                "text/html",
                "Cannot POST /api/v2/nr-2/x",
            ),
        ]);
        let absent = ex(
            "PATCH",
            "http://t/api/v2/workspaces/ws-1",
            404,
            "text/html; charset=utf-8",
            "Cannot PATCH /api/v2/workspaces/ws-1",
        );
        assert!(matches!(no_route.likeness(&absent), Likeness::NoRoute(_)));
        let handler = ex(
            "GET",
            "http://t/api/v2/workspaces/ws-1",
            404,
            "application/vnd.api+json",
            r#"{"errors":[{"status":"404","title":"not found","detail":"workspace ws-1 not found"}]}"#,
        );
        assert!(matches!(no_route.likeness(&handler), Likeness::Unlike(_)));
    }

    #[test]
    fn a_json_router_404_differs_from_a_handlers_by_its_detail() {
        let router =
            r#"{"errors":[{"status":"404","title":"not found","detail":"route not found"}]}"#;
        let no_route = calibrated(&[ex(
            "GET",
            "http://t/api/v2/nr-1",
            404,
            "application/vnd.api+json",
            router,
        )]);
        let same = ex(
            "GET",
            "http://t/api/v2/teams/t-1",
            404,
            "application/vnd.api+json",
            router,
        );
        assert!(matches!(no_route.likeness(&same), Likeness::NoRoute(_)));
        let handler =
            r#"{"errors":[{"status":"404","title":"not found","detail":"team t-1 not found"}]}"#;
        let other = ex(
            "GET",
            "http://t/api/v2/teams/t-1",
            404,
            "application/vnd.api+json",
            handler,
        );
        assert!(matches!(no_route.likeness(&other), Likeness::Unlike(_)));
    }

    #[test]
    fn words_that_vary_between_calibration_answers_are_not_compared() {
        let no_route = calibrated(&[
            ex(
                "GET",
                "http://t/api/v2/nr-1",
                404,
                "text/plain",
                "not found (request 81)",
            ),
            ex(
                "GET",
                "http://t/api/v2/nr-2",
                404,
                "text/plain",
                "not found (request 82)",
            ),
        ]);
        let later = ex(
            "GET",
            "http://t/api/v2/runs/r-1",
            404,
            "text/plain",
            "not found (request 90)",
        );
        assert!(matches!(no_route.likeness(&later), Likeness::NoRoute(_)));
        let json = ex(
            "GET",
            "http://t/api/v2/runs/r-1",
            404,
            "application/json",
            "{}",
        );
        assert!(matches!(no_route.likeness(&json), Likeness::Unlike(_)));
    }

    #[test]
    fn an_address_never_asked_is_uncalibrated() {
        let no_route = calibrated(&[ex("GET", "http://t/api/v2/nr-1", 404, "text/plain", "x")]);
        let elsewhere = ex("GET", "http://other/x", 404, "text/plain", "x");
        assert_eq!(no_route.likeness(&elsewhere), Likeness::Uncalibrated);
        assert_eq!(
            NoRoute::default().likeness(&elsewhere),
            Likeness::Uncalibrated
        );
    }

    #[test]
    fn a_refusal_is_no_routing_answer() {
        let refusal =
            Signature::of(&ex("GET", "http://t/x", 401, "application/json", "{}")).unwrap();
        assert!(!refusal.is_routing_answer());
        let page = Signature::of(&ex("GET", "http://t/x", 200, "text/html", "<html>")).unwrap();
        assert!(page.is_routing_answer());
        let route = Signature::of(&ex("GET", "http://t/x", 200, "application/json", "{}")).unwrap();
        assert!(!route.is_routing_answer());
    }
}
