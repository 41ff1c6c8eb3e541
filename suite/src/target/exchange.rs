//! One request and what came back, kept as evidence for reports.

use std::time::Duration;

use serde_json::Value;

/// Bytes of a body kept in reports.
pub const REPORT_BODY_BYTES: usize = 4096;

/// A request as sent (the token already redacted).
#[derive(Debug, Clone)]
pub struct RequestRecord {
    /// HTTP method.
    pub method: String,
    /// Full URL.
    pub url: String,
    /// Headers sent, with credentials redacted.
    pub headers: Vec<(String, String)>,
    /// The body sent, if any (JSON as text, binary as a description).
    pub body: Option<String>,
}

/// An answer as received.
#[derive(Debug, Clone)]
pub struct ResponseRecord {
    /// HTTP status code.
    pub status: u16,
    /// Response headers.
    pub headers: Vec<(String, String)>,
    /// The body, up to the size cap; only its start when it was cut or the test is over
    /// (see [`Exchange::keep_evidence`]).
    pub body: Vec<u8>,
    /// The body was longer than the cap and was cut.
    pub truncated: bool,
    /// Bytes of the body received in all (at least `body.len()`).
    pub received: usize,
}

/// What went wrong on the wire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TransportError {
    /// The request was not answered within this timeout (`--timeout`).
    Timeout(std::time::Duration),
    /// The connection could not be made or broke.
    Connection(String),
    /// The request was refused before sending (e.g. by the blast-radius guard).
    Refused(String),
}

impl std::fmt::Display for TransportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TransportError::Timeout(limit) => write!(
                f,
                "no answer within the request timeout ({} s, --timeout)",
                limit.as_secs_f64()
            ),
            TransportError::Connection(e) if not_http(e) => {
                write!(
                    f,
                    "the answer is not HTTP (the bytes that came back do not parse: {e})"
                )
            }
            TransportError::Connection(e) => match untrusted_certificate(e) {
                Some(why) => write!(f, "{why}"),
                None => write!(f, "connection failed: {e}"),
            },
            TransportError::Refused(e) => write!(f, "request refused by conform: {e}"),
        }
    }
}

/// Whether a connection error says the answer did not parse as HTTP (a server that answers
/// garbage, or TLS spoken to a plain-HTTP client), as hyper words it.
fn not_http(message: &str) -> bool {
    [
        "invalid HTTP version",
        "invalid HTTP status",
        "invalid HTTP header",
        "message head is too large",
    ]
    .iter()
    .any(|m| message.contains(m))
}

/// A connection error that is rustls refusing the target's certificate, said in plain words
/// with what to give (`--ca-cert FILE`, or `--insecure`); rustls' own word kept at the end.
fn untrusted_certificate(message: &str) -> Option<String> {
    const REFUSED: &str = "invalid peer certificate: ";
    // rustls' word without its debug wrapping (`Other(OtherError(CaUsedAsEndEntity))`)
    let word = message[message.find(REFUSED)? + REFUSED.len()..]
        .replace("Other(", "")
        .replace("OtherError(", "")
        .replace(')', "");
    let why = if word.contains("CaUsedAsEndEntity") {
        "it is self-signed (its own authority), and this run was not told to trust it"
    } else if word.contains("UnknownIssuer") {
        "its issuer is not an authority this run trusts (a self-signed certificate, or a private authority's)"
    } else if word.contains("NotValidForName") {
        "it does not name the host of --target (use the host name it names)"
    } else if word.contains("Expired") {
        "it has expired"
    } else if word.contains("NotValidYet") {
        "it is not valid yet"
    } else {
        "rustls refused it"
    };
    Some(format!(
        "the target's TLS certificate is not trusted: {why}; give --ca-cert FILE (the PEM of \
         its authority, or of the certificate itself when it is self-signed), or --insecure to \
         accept any certificate (rustls: {word})"
    ))
}

/// A request with its answer or transport error.
#[derive(Debug, Clone)]
pub struct Exchange {
    /// What was sent.
    pub request: RequestRecord,
    /// What came back.
    pub response: Result<ResponseRecord, TransportError>,
    /// Time from send to the end of the body.
    pub elapsed: Duration,
}

impl Exchange {
    /// The status code, if an answer came.
    pub fn status(&self) -> Option<u16> {
        self.response.as_ref().ok().map(|r| r.status)
    }

    /// True for a 2xx answer.
    pub fn is_success(&self) -> bool {
        self.status().is_some_and(|s| (200..300).contains(&s))
    }

    /// A response header (first value, case-insensitive name).
    pub fn header(&self, name: &str) -> Option<&str> {
        let response = self.response.as_ref().ok()?;
        response
            .headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The response body, empty without an answer.
    pub fn body(&self) -> &[u8] {
        self.response
            .as_ref()
            .map(|r| r.body.as_slice())
            .unwrap_or_default()
    }

    /// The body parsed as JSON, or why it is not JSON.
    pub fn json(&self) -> Result<Value, String> {
        let response = self.response.as_ref().map_err(|e| e.to_string())?;
        if response.truncated {
            return Err(format!(
                "the body is larger than the response size cap ({} bytes read)",
                response.received
            ));
        }
        if response.body.is_empty() {
            return Err("the body is empty".to_string());
        }
        serde_json::from_slice(&response.body).map_err(|e| {
            let start = String::from_utf8_lossy(&response.body[..response.body.len().min(60)])
                .replace('\n', " ");
            format!("the body is not JSON ({e}); it starts with `{start}`")
        })
    }

    /// True when the answer is an error document (a JSON object with an `errors` array): the
    /// words of a handler that was reached, not a router's bare text ("404 page not found").
    pub fn is_error_document(&self) -> bool {
        self.json()
            .is_ok_and(|doc| doc.get("errors").is_some_and(Value::is_array))
    }

    /// A `curl` command that repeats the request when pasted into a POSIX shell: the
    /// credential header reads its token from the environment (`$CONFORM_TOKEN`, or
    /// `$CONFORM_ADMIN_TOKEN` for administrator requests) in double quotes, so the shell
    /// expands it; everything else is single-quoted, so nothing else is expanded.
    pub fn curl(&self) -> String {
        let mut cmd = format!(
            "curl -sS -X {} {}",
            self.request.method,
            single_quoted(&self.request.url)
        );
        for (k, v) in &self.request.headers {
            let header = format!("{k}: {v}");
            if v.contains("$CONFORM_") {
                cmd.push_str(&format!(" -H \"{header}\""));
            } else {
                cmd.push_str(&format!(" -H {}", single_quoted(&header)));
            }
        }
        if let Some(body) = &self.request.body {
            if body.starts_with('<') {
                cmd.push_str(" --data-binary @config.tar.gz");
            } else {
                cmd.push_str(&format!(" --data {}", single_quoted(body)));
            }
        }
        cmd
    }

    /// Keeps only what a report shows of the body (its first [`REPORT_BODY_BYTES`]): a
    /// finished test's evidence must not hold whole answers, or the run's memory follows
    /// what the target sends.
    pub fn keep_evidence(&mut self) {
        if let Ok(r) = &mut self.response {
            if r.body.len() > REPORT_BODY_BYTES {
                r.body.truncate(REPORT_BODY_BYTES);
                r.body.shrink_to_fit();
            }
        }
    }

    /// The exchange as text for a failure message: request, curl line, status, headers, body start.
    pub fn transcript(&self) -> String {
        let mut out = format!("request: {} {}\n", self.request.method, self.request.url);
        if let Some(body) = &self.request.body {
            out.push_str(&format!(
                "request body: {}\n",
                clip(body.as_bytes(), body.len())
            ));
        }
        out.push_str(&format!("reproduce: {}\n", self.curl()));
        match &self.response {
            Ok(r) => {
                out.push_str(&format!(
                    "response: {} ({} ms)\n",
                    r.status,
                    self.elapsed.as_millis()
                ));
                for (k, v) in &r.headers {
                    out.push_str(&format!("  {k}: {v}\n"));
                }
                if !r.body.is_empty() {
                    out.push_str(&format!("response body: {}", clip(&r.body, r.received)));
                    if r.truncated {
                        out.push_str(" [cut at the response size cap]");
                    }
                    out.push('\n');
                }
            }
            Err(e) => out.push_str(&format!("no response: {e}\n")),
        }
        out
    }
}

/// `text` as one single-quoted shell word.
fn single_quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// The start of a body for a report, and its whole length when that was more.
fn clip(body: &[u8], received: usize) -> String {
    let cut = body.len().min(REPORT_BODY_BYTES);
    let mut text = String::from_utf8_lossy(&body[..cut]).into_owned();
    let whole = received.max(body.len());
    if whole > cut {
        text.push_str(&format!("… ({whole} bytes in all)"));
    }
    text
}
