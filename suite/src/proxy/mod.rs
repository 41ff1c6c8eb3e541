//! `conform proxy`: a reverse proxy for real clients' traffic. Each exchange is passed on to
//! the target, matched to its catalog endpoint and path form ([`Catalog::find_with_registry`])
//! and judged by [`answer::exchange`], the single-exchange checks the sequence engine uses too
//! (no 5xx, JSON body, envelopes, created and shown ids, upload address form; at TFE level
//! status codes, media type, and, the proxy seeing each exchange alone, every error document
//! and paging meta): the proxy matches and tallies, nothing more. On SIGINT, SIGTERM or at `--duration` it writes `results.json` and `summary.md`: per
//! endpoint and path form seen, how often, which checks held, which deviated with the
//! exchange that shows it, and the documented endpoints the traffic never touched.
//!
//! Upload addresses and `X-Terraform-Get` (and `Location`) pointing at the target are
//! rewritten to pass through the proxy. Tokens never reach a report. Memory is bounded:
//! request bodies are read up to `--max-request-body`, answers are judged on their first
//! `--max-body` bytes and the rest is streamed through unread.

mod report;

pub use report::{Observed, RunInfo};

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;

use crate::catalog::Catalog;
use crate::checks::answer::{self, Seen};
use crate::checks::Schemas;
use crate::cli::{ProfileArg, ProxyArgs};
use crate::exit::ExitCodes;
use crate::target::{Exchange, RequestRecord, ResponseRecord, TransportError};
use crate::verdict::Profile;

/// Everything a proxied exchange needs.
struct Proxy {
    client: reqwest::Client,
    /// The timeout of one exchange with the target (`--timeout`).
    timeout: Duration,
    target: url::Url,
    /// `scheme://host:port` of the target, as it appears in absolute URLs it answers.
    target_origin: String,
    /// The same, for the proxy.
    proxy_origin: String,
    catalog: Catalog,
    /// The registry's read address, relative to the target's root.
    registry_path: String,
    schemas: Schemas,
    max_body: usize,
    max_request_body: usize,
    observed: Mutex<Observed>,
}

/// `conform proxy`.
pub fn command(args: &ProxyArgs) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(ExitCodes::CONFIG);
        }
    };
    match runtime.block_on(run(args)) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(ExitCodes::CONFIG)
        }
    }
}

fn origin(url: &url::Url) -> String {
    url.origin().ascii_serialization()
}

async fn run(args: &ProxyArgs) -> Result<u8, String> {
    let running = start(args).await?;
    println!(
        "conform proxy: listening on {}, passing to {}, profile {}",
        running.url(),
        origin(&running.target),
        running.profile.as_str()
    );
    use std::io::Write;
    let _ = std::io::stdout().flush();
    stop_signal(args.duration).await;
    let finished = running.finish().await?;
    let (observed, info) = (&finished.observed, &finished.info);
    observed
        .write(&args.reports, info, &finished.documented)
        .map_err(|e| format!("cannot write reports to {}: {e}", args.reports.display()))?;
    let failing = observed.failing(info.profile);
    println!(
        "conform proxy: {} exchanges, {} matched, {failing} failing deviations; reports: {}, {}",
        observed.exchanges(),
        observed.matched_count(),
        args.reports.join("results.json").display(),
        args.reports.join("summary.md").display()
    );
    Ok(if observed.matched_count() == 0 {
        ExitCodes::NOTHING_JUDGED
    } else if failing > 0 {
        ExitCodes::FAILED
    } else {
        ExitCodes::OK
    })
}

/// A proxy serving in this process (`conform peer` runs one in front of its target).
pub struct Running {
    proxy: Arc<Proxy>,
    bound: SocketAddr,
    target: url::Url,
    profile: Profile,
    documented: Vec<String>,
    started: Instant,
    stop: tokio::sync::oneshot::Sender<()>,
    served: tokio::task::JoinHandle<Result<(), String>>,
}

/// What a stopped proxy saw.
#[derive(Debug)]
pub struct Finished {
    /// The tallies.
    pub observed: Observed,
    /// The run's target, profile and duration.
    pub info: RunInfo,
    /// Every documented test name (for coverage).
    pub documented: Vec<String>,
}

impl Finished {
    /// Adds what another proxy saw; the duration is the longer of the two.
    pub fn absorb(&mut self, other: Finished) {
        self.info.seconds = self.info.seconds.max(other.info.seconds);
        self.observed.absorb(other.observed);
    }
}

impl Running {
    /// The proxy's own root (`http://127.0.0.1:PORT`).
    pub fn url(&self) -> String {
        format!("http://{}", self.bound)
    }

    /// Stops serving and hands over what was seen.
    pub async fn finish(self) -> Result<Finished, String> {
        let _ = self.stop.send(());
        self.served
            .await
            .map_err(|e| format!("the proxy ended badly: {e}"))??;
        let observed = std::mem::take(
            &mut *self
                .proxy
                .observed
                .lock()
                .map_err(|_| "the proxy's records are unreadable".to_string())?,
        );
        Ok(Finished {
            observed,
            info: RunInfo {
                target: origin(&self.target),
                listen: format!("http://{}", self.bound),
                profile: self.profile,
                seconds: self.started.elapsed().as_secs(),
            },
            documented: self.documented,
        })
    }
}

/// Starts the proxy of `args` on its `--listen` address (on the current tokio runtime).
pub async fn start(args: &ProxyArgs) -> Result<Running, String> {
    let target = url::Url::parse(&args.target)
        .map_err(|e| format!("--target `{}` is not a URL: {e}", args.target))?;
    if !matches!(target.scheme(), "http" | "https") {
        return Err(format!("--target `{target}` must be http or https"));
    }
    let listen: SocketAddr = args
        .listen
        .parse()
        .map_err(|e| format!("--listen `{}`: {e}", args.listen))?;
    let catalog = match &args.cases {
        Some(dir) => Catalog::from_dir(dir),
        None => Catalog::embedded(),
    }
    .map_err(|e| e.to_string())?;
    let schemas = match &args.schemas {
        Some(dir) => Schemas::from_dir(dir),
        None => Schemas::embedded(),
    }
    .map_err(|e| e.to_string())?;
    let registry_path = registry_path(args, &target)?;
    let documented: Vec<String> = catalog.tests().into_iter().map(|t| t.name).collect();
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .map_err(|e| format!("cannot listen on {listen}: {e}"))?;
    let bound = listener.local_addr().map_err(|e| e.to_string())?;
    let client = client(args)?;
    let proxy = Arc::new(Proxy {
        client,
        timeout: Duration::from_secs_f64(args.timeout.max(0.1)),
        target_origin: origin(&target),
        proxy_origin: format!("http://{bound}"),
        target: target.clone(),
        catalog,
        registry_path,
        schemas,
        max_body: args.max_body,
        max_request_body: args.max_request_body,
        observed: Mutex::new(Observed::default()),
    });
    let profile = match args.profile {
        ProfileArg::Core => Profile::Core,
        ProfileArg::Tfe => Profile::Tfe,
    };
    let app = axum::Router::new()
        .fallback(handle)
        .with_state(proxy.clone());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let served = tokio::spawn(async move {
        axum::serve(listener, app)
            .with_graceful_shutdown(async {
                let _ = stopped.await;
            })
            .await
            .map_err(|e| e.to_string())
    });
    Ok(Running {
        proxy,
        bound,
        target,
        profile,
        documented,
        started: Instant::now(),
        stop,
        served,
    })
}

/// The registry's path under the target (`--registry-url`, else the default), as the
/// catalog matches it.
fn registry_path(args: &ProxyArgs, target: &url::Url) -> Result<String, String> {
    let registry_path = match &args.registry_url {
        Some(u) => url::Url::parse(u)
            .map_err(|e| format!("--registry-url `{u}`: {e}"))?
            .path()
            .to_string(),
        None => crate::catalog::REGISTRY_DEFAULT.to_string(),
    };
    let root_path = target.path().trim_end_matches('/').to_string();
    Ok(registry_path
        .strip_prefix(&root_path)
        .unwrap_or(&registry_path)
        .to_string())
}

/// The proxy's own client: no redirects followed, `--timeout`, and the certificates it is
/// told to trust (`--ca-cert`, the peer's embedded reference's) or `--insecure`.
fn client(args: &ProxyArgs) -> Result<reqwest::Client, String> {
    let mut client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs_f64(args.timeout.max(0.1)));
    // the certificates named (a file, or the peer's embedded reference's in memory)
    let mut named = Vec::new();
    if let Some(file) = &args.ca_cert {
        named = std::fs::read(file).map_err(|e| format!("--ca-cert {}: {e}", file.display()))?;
        named.push(b'\n');
    }
    if let Some(pem) = &args.ca_pem {
        named.extend_from_slice(pem);
    }
    if !named.is_empty() {
        client = crate::target::trust::trusting(client, &named).map_err(|e| {
            format!(
                "--ca-cert {}: {e}",
                args.ca_cert
                    .as_deref()
                    .unwrap_or(std::path::Path::new("(the embedded reference's)"))
                    .display()
            )
        })?;
    }
    if args.insecure {
        client = client.danger_accept_invalid_certs(true);
    }
    client.build().map_err(|e| e.to_string())
}

async fn stop_signal(duration: Option<u64>) {
    let timer = async {
        match duration {
            Some(s) => tokio::time::sleep(Duration::from_secs(s)).await,
            None => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = timer => {}
        _ = crate::exit::stopped() => {}
    }
}

/// Headers that belong to one connection, or that the proxy sets itself.
fn hop_by_hop(name: &HeaderName) -> bool {
    matches!(
        name.as_str(),
        "connection"
            | "keep-alive"
            | "proxy-authenticate"
            | "proxy-authorization"
            | "te"
            | "trailer"
            | "transfer-encoding"
            | "upgrade"
            | "host"
            | "content-length"
            | "accept-encoding"
    )
}

fn plain_error(status: StatusCode, message: &str) -> Response {
    let body = serde_json::json!({"errors": [{"status": status.as_u16().to_string(), "title": "conform proxy", "detail": message}]});
    (
        status,
        [("content-type", "application/vnd.api+json")],
        body.to_string(),
    )
        .into_response()
}

async fn handle(State(proxy): State<Arc<Proxy>>, req: Request) -> Response {
    let started = Instant::now();
    let (parts, body) = req.into_parts();
    let path_and_query = parts
        .uri
        .path_and_query()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| "/".into());
    let root = proxy.target.as_str().trim_end_matches('/');
    let Ok(upstream) = url::Url::parse(&format!("{root}{path_and_query}")) else {
        return plain_error(
            StatusCode::BAD_REQUEST,
            "the request path is not a URL path",
        );
    };
    let body = match axum::body::to_bytes(body, proxy.max_request_body).await {
        Ok(b) => b,
        Err(_) => {
            return plain_error(
                StatusCode::PAYLOAD_TOO_LARGE,
                "the request body is over the proxy's --max-request-body",
            )
        }
    };
    let method = parts.method.clone();
    let (headers, recorded_headers) = forwarded(&proxy, &parts.headers);
    let request_record = RequestRecord {
        method: method.to_string(),
        url: upstream.to_string(),
        headers: recorded_headers,
        body: (!body.is_empty()).then(|| describe_body(&parts.headers, &body)),
    };
    let sent = proxy
        .client
        .request(method.clone(), upstream.clone())
        .headers(headers)
        .body(body)
        .send()
        .await;
    let response = match sent {
        Ok(r) => r,
        Err(e) => {
            let error = if e.is_timeout() {
                TransportError::Timeout(proxy.timeout)
            } else {
                TransportError::Connection(e.to_string())
            };
            let ex = Exchange {
                request: request_record,
                response: Err(error),
                elapsed: started.elapsed(),
            };
            proxy.observe(&ex);
            return plain_error(StatusCode::BAD_GATEWAY, "the target did not answer");
        }
    };
    let status = response.status();
    let response_headers = response.headers().clone();
    // Read up to the cap for judging; the rest streams through unread.
    let mut stream = response.bytes_stream();
    let Head {
        kept,
        first_over,
        broken,
    } = head(&mut stream, proxy.max_body).await;
    let truncated = first_over.is_some();
    let ex = Exchange {
        request: request_record,
        response: match &broken {
            Some(e) if kept.is_empty() => Err(TransportError::Connection(e.clone())),
            _ => Ok(ResponseRecord {
                status: status.as_u16(),
                headers: response_headers
                    .iter()
                    .map(|(k, v)| {
                        (
                            k.to_string(),
                            String::from_utf8_lossy(v.as_bytes()).into_owned(),
                        )
                    })
                    .collect(),
                received: kept.len() + first_over.as_ref().map_or(0, Bytes::len),
                body: kept.clone(),
                truncated,
            }),
        },
        elapsed: started.elapsed(),
    };
    proxy.observe(&ex);
    answer(&proxy, status, &response_headers, kept, first_over, stream)
}

/// The headers of a client's request passed on (`hop_by_hop` ones aside), and as recorded
/// (the credential redacted, its token noted as the traffic's).
fn forwarded(
    proxy: &Proxy,
    from: &HeaderMap,
) -> (reqwest::header::HeaderMap, Vec<(String, String)>) {
    let mut headers = reqwest::header::HeaderMap::new();
    let mut recorded_headers = Vec::new();
    for (name, value) in from {
        if hop_by_hop(name) {
            continue;
        }
        if name == "authorization" {
            if let Ok(v) = value.to_str() {
                let token = v.split_whitespace().last().unwrap_or(v);
                if let Ok(mut o) = proxy.observed.lock() {
                    o.token(token);
                }
            }
            recorded_headers.push((name.to_string(), "(redacted)".to_string()));
        } else {
            recorded_headers.push((
                name.to_string(),
                String::from_utf8_lossy(value.as_bytes()).into_owned(),
            ));
        }
        headers.append(name.clone(), value.clone());
    }
    (headers, recorded_headers)
}

/// The start of an answer's body, read for judging up to the cap.
struct Head {
    /// What was read, within the cap.
    kept: Vec<u8>,
    /// The chunk that went over the cap (the body is cut there for judging).
    first_over: Option<Bytes>,
    /// Why the body broke off, if it did.
    broken: Option<String>,
}

/// Reads `stream` up to `max_body` bytes; the rest is left in it.
async fn head<S>(stream: &mut S, max_body: usize) -> Head
where
    S: futures_util::Stream<Item = reqwest::Result<Bytes>> + Unpin,
{
    let mut kept: Vec<u8> = Vec::new();
    let mut first_over: Option<Bytes> = None;
    let mut broken = None;
    while let Some(chunk) = stream.next().await {
        match chunk {
            Ok(chunk) if kept.len() + chunk.len() <= max_body => kept.extend_from_slice(&chunk),
            Ok(chunk) => {
                first_over = Some(chunk);
                break;
            }
            Err(e) => {
                broken = Some(e.to_string());
                break;
            }
        }
    }
    Head {
        kept,
        first_over,
        broken,
    }
}

/// The answer passed back to the client: the target's status and headers (its addresses
/// rewritten to the proxy's), and the body read (rewritten) or, when it was cut at the cap,
/// what was read followed by the rest of `stream`, unread.
fn answer<S>(
    proxy: &Proxy,
    status: StatusCode,
    response_headers: &HeaderMap,
    kept: Vec<u8>,
    first_over: Option<Bytes>,
    stream: S,
) -> Response
where
    S: futures_util::Stream<Item = reqwest::Result<Bytes>> + Send + 'static,
{
    let truncated = first_over.is_some();
    let mut out_headers = HeaderMap::new();
    for (name, value) in response_headers {
        if hop_by_hop(name) {
            continue;
        }
        let value = if matches!(name.as_str(), "location" | "x-terraform-get") {
            proxy.rewrite_header(value)
        } else {
            value.clone()
        };
        out_headers.append(name.clone(), value);
    }
    let body = if truncated {
        let head = futures_util::stream::iter(
            [Bytes::from(kept), first_over.unwrap_or_default()]
                .into_iter()
                .map(Ok::<Bytes, std::io::Error>),
        );
        let rest = stream.map(|c| c.map_err(std::io::Error::other));
        Body::from_stream(head.chain(rest))
    } else {
        Body::from(proxy.rewrite_body(response_headers, kept))
    };
    let mut res = Response::new(body);
    *res.status_mut() = status;
    *res.headers_mut() = out_headers;
    res
}

fn describe_body(headers: &HeaderMap, body: &[u8]) -> String {
    let ct = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if crate::checks::is_json_media_type(ct)
        || std::str::from_utf8(body).is_ok() && body.len() < 65536
    {
        String::from_utf8_lossy(body).into_owned()
    } else {
        format!("<{} bytes of {ct}>", body.len())
    }
}

impl Proxy {
    fn observe(&self, ex: &Exchange) {
        let path = url::Url::parse(&ex.request.url)
            .map(|u| u.path().to_string())
            .unwrap_or_default();
        let root = self.target.path().trim_end_matches('/');
        let relative = path.strip_prefix(root).unwrap_or(&path).to_string();
        let method = &ex.request.method;
        let matched = self
            .catalog
            .find_with_registry(&self.registry_path, method, &relative)
            .or_else(|| {
                let at_spec = self.at_spec_path(&relative)?;
                self.catalog
                    .find_with_registry(&self.registry_path, method, &at_spec)
            });
        let Ok(mut observed) = self.observed.lock() else {
            return;
        };
        match matched {
            Some(m) => {
                let judged = answer::exchange(&self.schemas, &m, ex, Seen::Alone);
                observed.record(&m, ex, judged);
            }
            None => observed.unmatched(&ex.request.method, &relative),
        }
    }

    /// A request at TFE's path of a group the spec places elsewhere (`tfe_path` in its
    /// `cases/` file: `/api/v2/admin/terraform-versions/7`), at the spec's path
    /// (`/api/v2/admin/engine-versions/7`), so that it is judged as that endpoint.
    fn at_spec_path(&self, relative: &str) -> Option<String> {
        self.catalog.groups.iter().find_map(|g| {
            let moved = g.tfe_path.as_ref()?;
            let rest = relative.strip_prefix(moved.tfe.as_str())?;
            (rest.is_empty() || rest.starts_with('/'))
                .then(|| format!("/api/v2{}{rest}", moved.spec))
        })
    }

    /// A header value pointing at the target, pointed at the proxy instead.
    fn rewrite_header(&self, value: &HeaderValue) -> HeaderValue {
        match value.to_str() {
            Ok(text) if text.starts_with(&self.target_origin) => {
                let new = format!("{}{}", self.proxy_origin, &text[self.target_origin.len()..]);
                HeaderValue::from_str(&new).unwrap_or_else(|_| value.clone())
            }
            _ => value.clone(),
        }
    }

    /// A JSON answer whose absolute URLs point at the target (upload addresses, links),
    /// pointed at the proxy instead; other bodies as they came.
    fn rewrite_body(&self, headers: &reqwest::header::HeaderMap, body: Vec<u8>) -> Vec<u8> {
        let json = headers
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(crate::checks::is_json_media_type);
        if !json {
            return body;
        }
        match String::from_utf8(body) {
            Ok(text) if text.contains(&self.target_origin) => text
                .replace(&self.target_origin, &self.proxy_origin)
                .into_bytes(),
            Ok(text) => text.into_bytes(),
            Err(e) => e.into_bytes(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proxy() -> Proxy {
        let catalog = Catalog::embedded().unwrap();
        Proxy {
            client: reqwest::Client::new(),
            timeout: Duration::from_secs(60),
            target: url::Url::parse("http://10.0.0.1:8080/").unwrap(),
            target_origin: "http://10.0.0.1:8080".into(),
            proxy_origin: "http://127.0.0.1:9000".into(),
            catalog,
            registry_path: crate::catalog::REGISTRY_DEFAULT.into(),
            schemas: Schemas::embedded().unwrap(),
            max_body: 1024,
            max_request_body: 1024,
            observed: Mutex::new(Observed::default()),
        }
    }

    #[test]
    fn addresses_pointing_at_the_target_pass_through_the_proxy() {
        let p = proxy();
        let header = HeaderValue::from_static("http://10.0.0.1:8080/v1/object/obj-1");
        assert_eq!(
            p.rewrite_header(&header),
            "http://127.0.0.1:9000/v1/object/obj-1"
        );
        let elsewhere = HeaderValue::from_static("https://archive.example.invalid/x.tgz");
        assert_eq!(p.rewrite_header(&elsewhere), elsewhere);
        let relative = HeaderValue::from_static("/v1/object/obj-1");
        assert_eq!(p.rewrite_header(&relative), relative);
        let mut headers = reqwest::header::HeaderMap::new();
        headers.insert(
            "content-type",
            HeaderValue::from_static("application/vnd.api+json"),
        );
        let body =
            br#"{"data":{"attributes":{"upload-url":"http://10.0.0.1:8080/v1/object/obj-2"}}}"#;
        let out = p.rewrite_body(&headers, body.to_vec());
        assert!(String::from_utf8(out)
            .unwrap()
            .contains("http://127.0.0.1:9000/v1/object/obj-2"));
        headers.insert("content-type", HeaderValue::from_static("application/gzip"));
        assert_eq!(p.rewrite_body(&headers, body.to_vec()), body.to_vec());
    }

    #[test]
    fn a_request_at_tfes_path_of_a_moved_group_is_judged_as_the_spec_endpoint() {
        let p = proxy();
        assert_eq!(
            p.at_spec_path("/api/v2/admin/terraform-versions/tfv-1")
                .as_deref(),
            Some("/api/v2/admin/engine-versions/tfv-1")
        );
        assert_eq!(p.at_spec_path("/api/v2/admin/terraform-versionsx"), None);
        assert_eq!(p.at_spec_path("/api/v2/organizations"), None);
    }
}
