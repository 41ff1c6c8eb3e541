//! Sending: a request on the wire (its body, its credential, the guard's word), sent
//! again as the throttle allows, and its answer read within the size cap.

use std::time::{Duration, Instant};

use reqwest::header::{HeaderMap, HeaderValue, ACCEPT, CONTENT_TYPE};
use reqwest::Method;
use serde_json::Value;
use url::Url;

use std::sync::atomic::Ordering;

use super::{
    requested_wait, route_key, test_stop_passed, throttle, Auth, Body, Exchange, Place, Request,
    RequestRecord, ResponseRecord, Target, TransportError, ADMIN_TOKEN_VAR, ISSUED_TOKEN_VAR,
    JSONAPI, MAX_RECONNECTS, REPORT_BODY_BYTES, TOKEN_VAR,
};

impl Target {
    /// Sends a request and records the exchange. Never fails: a transport problem is part
    /// of the exchange.
    pub async fn send(&self, request: Request) -> Exchange {
        let started = Instant::now();
        let mut headers = HeaderMap::new();
        let is_registry = request.url.path().starts_with(self.config.registry.path())
            && self.same_origin(&request.url)
            && self.config.registry.path() != "/";
        let accept = match (&request.body, is_registry) {
            (Body::Bytes(_), _) | (_, true) => "application/json",
            _ => JSONAPI,
        };
        headers.insert(ACCEPT, HeaderValue::from_static(accept));
        let (body, body_record) = body_of(&request, &mut headers);
        let mut recorded: Vec<(String, String)> = headers
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_str().unwrap_or("").to_string()))
            .collect();
        self.credential(&request, &mut headers, &mut recorded);
        let record = RequestRecord {
            method: request.method.to_string(),
            url: request.url.to_string(),
            headers: recorded,
            body: body_record,
        };
        let relative = request
            .url
            .path()
            .strip_prefix(self.config.root.path().trim_end_matches('/'))
            .filter(|_| self.same_origin(&request.url))
            .unwrap_or(request.url.path());
        // the guard knows the spec's paths: a group served at TFE's is guarded as the spec's
        let spec_form = self.at_spec_path(relative);
        let relative = spec_form.as_deref().unwrap_or(relative);
        if let Err(why) = self.guarded(&request, relative) {
            return Exchange {
                request: record,
                response: Err(TransportError::Refused(why)),
                elapsed: started.elapsed(),
            };
        }
        if request.method == Method::PUT && !self.same_origin(&request.url) {
            if let Some(warning) = self.elsewhere.first_upload(&request.url, &self.config.root) {
                eprintln!("warning: {warning}");
            }
        }
        let idempotent = matches!(
            request.method,
            Method::GET | Method::HEAD | Method::PUT | Method::DELETE | Method::OPTIONS
        );
        let route = route_key(request.method.as_str(), relative);
        let sending = Sending {
            route,
            method: request.method.clone(),
            url: request.url.clone(),
            headers,
            body,
            idempotent,
        };
        let (response, sent_at) = self.send_until_answered(&sending).await;
        Exchange {
            request: record,
            response,
            elapsed: sent_at.elapsed(),
        }
    }

    /// The credential of `request` (its issued token, the user's or the administrator's) in
    /// `headers`, only for the target's own origin, and in `recorded` as the environment
    /// variable a pasted `curl` line reads it from: reports never see the token.
    fn credential(
        &self,
        request: &Request,
        headers: &mut HeaderMap,
        recorded: &mut Vec<(String, String)>,
    ) {
        // The token, and the environment variable a pasted `curl` line reads it from.
        let token = match request.auth {
            _ if request.issued.is_some() => request.issued.as_ref().map(|t| (t, ISSUED_TOKEN_VAR)),
            Auth::User => self.config.token.as_ref().map(|t| (t, TOKEN_VAR)),
            Auth::Admin => match &self.config.admin_token {
                Some(admin) => Some((admin, ADMIN_TOKEN_VAR)),
                None => self.config.token.as_ref().map(|t| (t, TOKEN_VAR)),
            },
            Auth::None => None,
        };
        // A token goes only to the target's own origin.
        let Some((token, var)) = token.filter(|_| self.same_origin(&request.url)) else {
            return;
        };
        let scheme = &self.config.auth_scheme;
        let (value, shown) = if scheme.is_empty() {
            (token.expose().to_string(), format!("${var}"))
        } else {
            (
                format!("{scheme} {}", token.expose()),
                format!("{scheme} ${var}"),
            )
        };
        if let Ok(mut v) = HeaderValue::from_str(&value) {
            v.set_sensitive(true);
            headers.insert(self.auth_header.clone(), v);
            // recorded as the variable that holds it: reports never see the token
            recorded.push((self.auth_header.to_string(), shown));
        }
    }

    /// The guard's word on `request` at `relative` (the spec's form of its path), its body
    /// included: `Err(why)` when it may not be sent.
    fn guarded(&self, request: &Request, relative: &str) -> Result<(), String> {
        self.guard
            .check(&request.method, relative)
            .and_then(|()| match &request.body {
                Body::Json(body) => self.guard.check_body(&request.method, relative, body),
                Body::Raw(_, bytes) => match serde_json::from_slice::<Value>(bytes) {
                    Ok(body) => self.guard.check_body(&request.method, relative, &body),
                    Err(_) => Ok(()),
                },
                _ => Ok(()),
            })
    }

    /// Sends `sending`, each time admitted by the throttle (its route's 429 pause, a place in
    /// the `--rate` window held until the answer begins), again after a 429, a moment of
    /// unavailability or a transient connection error as the throttle allows; answers the last
    /// answer and when it was sent.
    async fn send_until_answered(
        &self,
        sending: &Sending,
    ) -> (Result<ResponseRecord, TransportError>, Instant) {
        let route = &sending.route;
        let (mut limited, mut broken, mut unavailable) = (0u32, 0u32, 0u32);
        let mut waited = std::time::Duration::ZERO;
        let mut sent_at = Instant::now();
        let response = loop {
            let place = self.throttle.admit(route).await;
            if self.throttle.deadline_passed() {
                break Err(TransportError::Refused(
                    "the run's --deadline passed; the request was not sent".into(),
                ));
            }
            if test_stop_passed() {
                break Err(TransportError::Refused(
                    "the test ran past --test-timeout; the request was not sent".into(),
                ));
            }
            sent_at = Instant::now();
            let response = self.send_once(sending, place).await;
            if let Ok(r) = &response {
                self.throttle.answered(route, r.status, &r.headers, sent_at);
            }
            match &response {
                Ok(r) if r.status == 429 => {
                    let wait = requested_wait(&r.headers, std::time::SystemTime::now())
                        .unwrap_or_else(|| throttle::backoff(limited));
                    if limited >= self.config.max_retries
                        || waited + wait > throttle::MAX_WAIT
                        || self.throttle.would_pass_deadline(wait)
                    {
                        self.throttle.note_rate_limited(route);
                        break response;
                    }
                    self.throttle.pause(route, wait);
                    waited += wait;
                    limited += 1;
                }
                Ok(r)
                    if throttle::retry_unavailable(r.status, &r.headers, sending.idempotent)
                        && unavailable < throttle::MAX_UNAVAILABLE_RETRIES =>
                {
                    let wait = requested_wait(&r.headers, std::time::SystemTime::now())
                        .unwrap_or_else(|| throttle::backoff(unavailable));
                    if waited + wait > throttle::MAX_WAIT || self.throttle.would_pass_deadline(wait)
                    {
                        break response;
                    }
                    self.throttle.unavailable_pause(wait).await;
                    waited += wait;
                    unavailable += 1;
                }
                Err(TransportError::Connection(_))
                    if sending.idempotent && broken < MAX_RECONNECTS =>
                {
                    self.throttle.retry_pause(broken).await;
                    broken += 1;
                }
                _ => break response,
            }
        };
        (response, sent_at)
    }

    /// Sends `sending` once, on its `place` in the rate window, which it gives back as soon
    /// as the answer begins (or the send failed); then reads the answer.
    async fn send_once(
        &self,
        sending: &Sending,
        place: Place<'_>,
    ) -> Result<ResponseRecord, TransportError> {
        self.requests.fetch_add(1, Ordering::Relaxed);
        let sent_at = Instant::now();
        let mut builder = self
            .client
            .request(sending.method.clone(), sending.url.clone())
            .headers(sending.headers.clone());
        if let Some(body) = &sending.body {
            builder = builder.body(body.clone());
        }
        let sent = builder.send().await;
        place.answered();
        let answer = match sent {
            Ok(response) => {
                read_response(
                    response,
                    self.config.max_body,
                    self.config.timeout,
                    &self.large_reads,
                )
                .await
            }
            Err(e) => Err(classify(&e, self.config.timeout)),
        };
        let took = u64::try_from(sent_at.elapsed().as_micros()).unwrap_or(u64::MAX);
        self.answering.fetch_add(took, Ordering::Relaxed);
        answer
    }
}

/// A request as it goes on the wire, as often as it is sent: its route (the unit a 429
/// holds back), method, URL, headers (the token's included), body, and whether it may be
/// sent again after a failure that may have reached the server.
struct Sending {
    route: String,
    method: Method,
    url: Url,
    headers: HeaderMap,
    body: Option<Vec<u8>>,
    idempotent: bool,
}

/// The bytes `request` sends, with their content type in `headers`, and the body as
/// recorded (a JSON document's text, a tarball's size).
fn body_of(request: &Request, headers: &mut HeaderMap) -> (Option<Vec<u8>>, Option<String>) {
    match &request.body {
        Body::None => {
            if request.method != Method::GET && request.method != Method::HEAD {
                headers.insert(CONTENT_TYPE, HeaderValue::from_static(JSONAPI));
            }
            (None, None)
        }
        Body::Json(value) => {
            headers.insert(CONTENT_TYPE, HeaderValue::from_static(JSONAPI));
            let text = value.to_string();
            (Some(text.clone().into_bytes()), Some(text))
        }
        Body::Bytes(bytes) => {
            headers.insert(
                CONTENT_TYPE,
                HeaderValue::from_static("application/octet-stream"),
            );
            let shown = format!("<{} bytes of application/octet-stream>", bytes.len());
            (Some(bytes.clone()), Some(shown))
        }
        Body::Raw(content_type, bytes) => {
            if let Ok(value) = HeaderValue::from_str(content_type) {
                headers.insert(CONTENT_TYPE, value);
            }
            let shown = String::from_utf8_lossy(bytes).into_owned();
            (Some(bytes.clone()), Some(shown))
        }
    }
}

/// Bytes of a body read freely; beyond them a read takes the target's one large-read
/// permit, so that at most one answer at a time is buffered up to the cap.
const FREE_READ_BYTES: usize = 256 * 1024;

/// Reads an answer, stopping at `max_body`: a body over the cap (by its Content-Length, or
/// as it streams) is cut, and only its start is kept, for the report. Memory stays bounded
/// whatever the target sends: at most [`FREE_READ_BYTES`] per concurrent read, and one
/// read at a time up to the cap.
async fn read_response(
    mut response: reqwest::Response,
    max_body: usize,
    timeout: Duration,
    large_reads: &tokio::sync::Mutex<()>,
) -> Result<ResponseRecord, TransportError> {
    let status = response.status().as_u16();
    let headers = response
        .headers()
        .iter()
        .map(|(k, v)| {
            (
                k.to_string(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    // announced over the cap: read only the evidence
    let cap = match response.content_length() {
        Some(length) if length > max_body as u64 => REPORT_BODY_BYTES.min(max_body),
        _ => max_body,
    };
    let mut body = Vec::new();
    let mut received = 0usize;
    let mut truncated = cap < max_body;
    let mut permit = None;
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                received += chunk.len();
                if permit.is_none() && body.len() + chunk.len() > FREE_READ_BYTES {
                    permit = Some(large_reads.lock().await);
                }
                let room = cap.saturating_sub(body.len());
                if chunk.len() > room {
                    body.extend_from_slice(&chunk[..room]);
                    truncated = true;
                    break;
                }
                body.extend_from_slice(&chunk);
                if truncated && body.len() >= cap {
                    break;
                }
            }
            Ok(None) => break,
            Err(e) => return Err(classify(&e, timeout)),
        }
    }
    if truncated {
        // a cut body is not judged, only shown: keep what a report shows
        body.truncate(REPORT_BODY_BYTES);
        body.shrink_to_fit();
    }
    drop(permit);
    Ok(ResponseRecord {
        status,
        headers,
        body,
        truncated,
        received,
    })
}

fn classify(error: &reqwest::Error, timeout: Duration) -> TransportError {
    if error.is_timeout() {
        return TransportError::Timeout(timeout);
    }
    let mut message = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        message.push_str(": ");
        message.push_str(&cause.to_string());
        source = cause.source();
    }
    TransportError::Connection(message)
}
