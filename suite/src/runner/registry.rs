//! The registry read protocol's content checks ("Registry modules, read endpoints"), run by
//! `runner` after a registry read or download has answered: what the answer says about the
//! module (its versions, one version, the latest, a list, a search), the parameters of the
//! spec's Query column (accepted; `offset`/`limit` and the filters as TFE reads them), and the
//! source a download leads to. The judgments are pure functions in `checks::registry`; this
//! module sends the extra requests they need and records their results in the test's
//! transcript.
//!
//! Which checks a row gets follows from its path as the spec writes it (`…/versions`,
//! `…/:version`, `…/:provider`, `…/:name`, `/search`, a list) and from the parameters its
//! `query` names in `cases/`.

use std::collections::BTreeSet;

use reqwest::Method;
use serde_json::{json, Value};
use url::Url;

use crate::catalog::Endpoint;
use crate::checks::{self as c, Check, Finding, ModuleRef, RegistryShape};
use crate::fixtures::{auth_for, Scope};
use crate::target::{Auth, Exchange, Request, Target};

/// Pages of a registry list read at most when looking for the module.
const MAX_PAGES: usize = 20;
/// A search text no module matches.
const NO_MATCH: &str = "conformnomatch0000";
/// A provider no module has.
const NO_PROVIDER: &str = "conformnoprovider";
/// Redirects followed at most when fetching a source.
const MAX_REDIRECTS: usize = 5;

/// What the registry checks of one test record into: the test's transcript, findings, passed
/// checks and notes (borrowed from the runner's test).
pub struct Probe<'a> {
    /// The target (requests pass `Target::send`, and so the guard and the rate limit).
    pub target: &'a Target,
    /// The test's exchanges.
    pub exchanges: &'a mut Vec<Exchange>,
    /// The test's findings.
    pub findings: &'a mut Vec<Finding>,
    /// The ids of the checks that passed.
    pub passed: &'a mut BTreeSet<&'static str>,
    /// What the test reports besides its checks (a source not followed, a given module).
    pub notes: &'a mut Vec<String>,
}

impl Probe<'_> {
    /// Sends a GET; the token only on the target's own origin. Answers the exchange's index.
    async fn get(&mut self, url: Url) -> usize {
        let auth = if self.target.same_origin(&url) {
            auth_for(url.path())
        } else {
            Auth::None
        };
        let ex = self.target.send(Request::new(Method::GET, url, auth)).await;
        self.exchanges.push(ex);
        self.exchanges.len() - 1
    }

    fn ex(&self, index: usize) -> &Exchange {
        &self.exchanges[index]
    }

    /// The JSON document of a successful answer.
    fn doc(&self, index: usize) -> Option<Value> {
        let ex = self.ex(index);
        ex.is_success().then(|| ex.json().ok()).flatten()
    }

    /// The document of an answer that must be JSON, or the finding that says what came
    /// instead ("expected {what}, received …").
    fn answer(&self, index: usize, what: &str) -> Result<Value, String> {
        c::registry_answer(self.ex(index), what)
    }

    /// The status, or the transport error.
    fn status(&self, index: usize) -> String {
        match &self.ex(index).response {
            Err(e) => e.to_string(),
            Ok(r) => r.status.to_string(),
        }
    }

    /// The status of an answer that should be a JSON list, and why it is not JSON.
    fn answered(&self, index: usize) -> String {
        let ex = self.ex(index);
        match (&ex.response, ex.json()) {
            (Ok(r), Err(e)) if ex.is_success() => format!("{} ({e})", r.status),
            _ => self.status(index),
        }
    }

    /// Records a check's result; true when it passed.
    fn check(
        &mut self,
        check: &'static Check,
        exchange: Option<usize>,
        result: Result<(), String>,
    ) -> bool {
        c::record(self.findings, self.passed, check, exchange, result)
    }
}

/// The module a registry test reads, and the bytes its source must give.
#[derive(Debug, Clone)]
pub struct Subject {
    /// The module version.
    pub module: ModuleRef,
    /// The archive the run uploaded; `None` for a module given with `--module`.
    pub uploaded: Option<Vec<u8>>,
}

impl Subject {
    /// The module of the test's `kind` instance (fields `namespace`, `name`, `provider`,
    /// `version`); `given` when `--module` gave it (the run uploaded nothing then).
    pub fn of(scope: &Scope, kind: &str, given: bool) -> Option<Self> {
        let instance = scope.get(kind)?;
        let field = |name: &str| instance.fields.get(name).cloned();
        Some(Subject {
            module: ModuleRef {
                namespace: field("namespace")?,
                name: field("name")?,
                provider: field("provider")?,
                version: field("version")?,
            },
            uploaded: (!given).then(crate::tarball::config_tarball),
        })
    }
}

/// The forms of the spec's rows, told apart by their paths.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    /// `{registry_url}` and `{registry_url}/:namespace`.
    List,
    /// `{registry_url}/search`.
    Search,
    /// `…/:namespace/:name`: the latest version across providers.
    LatestList,
    /// `…/:namespace/:name/:provider`: the latest version for one provider.
    Latest,
    /// `…/:provider/versions`.
    Versions,
    /// `…/:provider/:version`.
    Version,
    /// Anything else.
    Other,
}

fn form(path: &str) -> Form {
    let rest = path.strip_prefix(crate::catalog::REGISTRY).unwrap_or(path);
    let segments: Vec<&str> = rest.split('/').filter(|s| !s.is_empty()).collect();
    match segments.as_slice() {
        ["search"] => Form::Search,
        [] | [_] => Form::List,
        [_, _] => Form::LatestList,
        [_, _, _] => Form::Latest,
        [_, _, _, "versions"] => Form::Versions,
        [_, _, _, _] => Form::Version,
        _ => Form::Other,
    }
}

/// `url` with these query parameters set (others kept, same names replaced).
fn with_params(url: &Url, params: &[(&str, String)]) -> Url {
    let kept: Vec<(String, String)> = url
        .query_pairs()
        .filter(|(k, _)| !params.iter().any(|(n, _)| n == k))
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    let mut out = url.clone();
    out.set_query(None);
    if !kept.is_empty() || !params.is_empty() {
        let mut pairs = out.query_pairs_mut();
        pairs.extend_pairs(kept);
        for (k, v) in params {
            pairs.append_pair(k, v);
        }
    }
    out
}

fn without_params(url: &Url, names: &[&str]) -> Url {
    let kept: Vec<(String, String)> = url
        .query_pairs()
        .filter(|(k, _)| !names.contains(&k.as_ref()))
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    let mut out = url.clone();
    out.set_query(None);
    if !kept.is_empty() {
        out.query_pairs_mut().extend_pairs(kept);
    }
    out
}

fn shown(params: &[(&str, String)]) -> String {
    params
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join("&")
}

/// The checks of a registry read (`kind = "read"`) after its answer `doc` (exchange `main`).
pub async fn after_read(
    p: &mut Probe<'_>,
    endpoint: &Endpoint,
    subject: &Subject,
    main: usize,
    doc: &Value,
) {
    let m = &subject.module;
    let Ok(base) = Url::parse(&p.ex(main).request.url) else {
        return;
    };
    let form = form(&endpoint.path);
    match form {
        Form::Versions => {
            let result = c::registry_versions_listed(doc, m);
            p.check(&c::REGISTRY_VERSIONS, Some(main), result);
            let result = c::registry_shape(doc, RegistryShape::Versions);
            p.check(&c::TFE_REGISTRY_SHAPE, Some(main), result);
        }
        Form::Version => {
            let result = c::registry_read(doc, m, 1);
            p.check(&c::REGISTRY_READ, Some(main), result);
            let result = c::registry_version_answered(doc, m);
            p.check(&c::REGISTRY_VERSION, Some(main), result);
            let result = c::registry_shape(doc, RegistryShape::Module);
            p.check(&c::TFE_REGISTRY_SHAPE, Some(main), result);
        }
        Form::Latest => {
            let result = c::registry_read(doc, m, 1);
            p.check(&c::REGISTRY_READ, Some(main), result);
            let result = c::registry_latest(doc, m, false);
            p.check(&c::REGISTRY_LATEST, Some(main), result);
            let result = c::registry_shape(doc, RegistryShape::Module);
            p.check(&c::TFE_REGISTRY_SHAPE, Some(main), result);
        }
        Form::LatestList | Form::List => {
            let found = find(p, main, doc, m, &base, true).await;
            let result = c::registry_read(&found.doc, m, found.pages);
            p.check(&c::REGISTRY_READ, Some(found.index), result);
            if form == Form::LatestList && found.found {
                let result = c::registry_latest(&found.doc, m, true);
                p.check(&c::REGISTRY_LATEST, Some(found.index), result);
            }
            let result = c::registry_shape(doc, RegistryShape::List);
            p.check(&c::TFE_REGISTRY_SHAPE, Some(main), result);
        }
        Form::Search => {
            search(p, main, doc, m, &base).await;
            let result = c::registry_shape(doc, RegistryShape::List);
            p.check(&c::TFE_REGISTRY_SHAPE, Some(main), result);
        }
        Form::Other => {
            let result = c::registry_read(doc, m, 1);
            p.check(&c::REGISTRY_READ, Some(main), result);
        }
    }
    let names: Vec<&str> = endpoint.query.iter().map(|q| q.name.as_str()).collect();
    query_column(p, &names, m, &base).await;
}

/// Where a list was looked through for the module.
struct Found {
    found: bool,
    /// The exchange of the last page read (the one holding the module, when found).
    index: usize,
    /// Its document.
    doc: Value,
    /// Pages read in the last attempt.
    pages: usize,
}

/// Looks for the module in a list answer and the pages after it (`meta.next_offset`); when
/// `again`, once more from the start if it is missing (lists change while other tests run).
async fn find(
    p: &mut Probe<'_>,
    main: usize,
    doc: &Value,
    m: &ModuleRef,
    base: &Url,
    again: bool,
) -> Found {
    let mut last = Found {
        found: false,
        index: main,
        doc: doc.clone(),
        pages: 1,
    };
    for attempt in 0..(1 + usize::from(again)) {
        let (mut index, mut page) = if attempt == 0 {
            (main, doc.clone())
        } else {
            let i = p.get(base.clone()).await;
            match p.doc(i) {
                Some(d) => (i, d),
                None => return last,
            }
        };
        let mut pages = 1;
        loop {
            if c::registry_holds_module(&page, m) {
                return Found {
                    found: true,
                    index,
                    doc: page,
                    pages,
                };
            }
            let Some(next) = c::registry_next_offset(&page) else {
                break;
            };
            if pages >= MAX_PAGES {
                break;
            }
            index = p
                .get(with_params(base, &[("offset", next.to_string())]))
                .await;
            pages += 1;
            match p.doc(index) {
                Some(d) => page = d,
                None => break,
            }
        }
        last = Found {
            found: false,
            index,
            doc: page,
            pages,
        };
    }
    last
}

/// `registry.search`: the spec's `query` finds the module and a text that matches nothing
/// does not list it; when that fails, `q` (TFE's name) is tried, to say which one the
/// registry reads.
async fn search(p: &mut Probe<'_>, main: usize, doc: &Value, m: &ModuleRef, base: &Url) {
    match search_with(p, "query", Some((main, doc)), m, base).await {
        Ok(index) => {
            p.check(&c::REGISTRY_SEARCH, Some(index), Ok(()));
        }
        Err((index, why)) => {
            let q = search_with(p, "q", None, m, base).await;
            let q = q.map(|_| ()).map_err(|(_, q_why)| q_why);
            let message = c::registry_search_with_q(&why, q, m, NO_MATCH);
            p.check(&c::REGISTRY_SEARCH, index, Err(message));
        }
    }
}

/// A search with the text in parameter `param`: `Ok(index)` of the answer that lists the
/// module, or the exchange and why the search is not one.
async fn search_with(
    p: &mut Probe<'_>,
    param: &str,
    first: Option<(usize, &Value)>,
    m: &ModuleRef,
    base: &Url,
) -> Result<usize, (Option<usize>, String)> {
    let url_for = |text: &str| {
        with_params(
            &without_params(base, &["query", "q"]),
            &[(param, text.to_string())],
        )
    };
    let url = url_for(&m.name);
    let (index, doc) = match first {
        Some((i, d)) => (i, d.clone()),
        None => {
            let i = p.get(url.clone()).await;
            let what = format!("`{param}={}` to answer JSON", m.name);
            match p.answer(i, &what) {
                Ok(d) => (i, d),
                Err(message) => return Err((Some(i), message)),
            }
        }
    };
    let found = find(p, index, &doc, m, &url, true).await;
    c::registry_search_finds(found.found, param, m, found.pages)
        .map_err(|message| (Some(found.index), message))?;
    let none = url_for(NO_MATCH);
    let i = p.get(none.clone()).await;
    let Some(d) = p.doc(i) else {
        return Err((
            Some(i),
            format!("`{param}={NO_MATCH}` answered {}", p.answered(i)),
        ));
    };
    let listed = find(p, i, &d, m, &none, false).await;
    c::registry_search_excludes(listed.found, param, NO_MATCH, m)
        .map_err(|message| (Some(listed.index), message))?;
    Ok(found.index)
}

/// The parameters the row's Query column names: accepted (core), then `offset`/`limit` and
/// the filters as TFE reads them.
async fn query_column(p: &mut Probe<'_>, names: &[&str], m: &ModuleRef, base: &Url) {
    let values = [
        ("offset", "0".to_string()),
        ("limit", "10".to_string()),
        ("provider", m.provider.clone()),
        ("verified", "false".to_string()),
    ];
    let sent: Vec<(&str, String)> = values
        .into_iter()
        .filter(|(n, _)| names.contains(n))
        .collect();
    if sent.is_empty() {
        return;
    }
    let index = p.get(with_params(base, &sent)).await;
    let what = format!(
        "the parameters of the spec's Query column (`{}`) to be accepted with a JSON answer",
        shown(&sent)
    );
    let result = p.answer(index, &what).map(|_| ());
    if !p.check(&c::REGISTRY_QUERY_ACCEPTED, Some(index), result) {
        return;
    }
    if names.contains(&"offset") && names.contains(&"limit") {
        paging(p, base).await;
    }
    if names.contains(&"provider") || names.contains(&"verified") {
        filters(p, names, m, base).await;
    }
}

/// `tfe.registry-paging`: `limit=1` gives at most one module, `offset=1` moves past it.
async fn paging(p: &mut Probe<'_>, base: &Url) {
    let page = |offset: u64| {
        with_params(
            base,
            &[("offset", offset.to_string()), ("limit", "1".to_string())],
        )
    };
    let mut last = None;
    for _attempt in 0..2 {
        let mut first = None;
        for offset in [0, 1] {
            let index = p.get(page(offset)).await;
            let what = format!("`offset={offset}&limit=1` to answer a list");
            let doc = match p.answer(index, &what) {
                Ok(doc) => doc,
                Err(message) => {
                    p.check(&c::TFE_REGISTRY_PAGING, Some(index), Err(message));
                    return;
                }
            };
            let result = c::registry_page(&doc, offset, 1);
            if result.is_err() {
                p.check(&c::TFE_REGISTRY_PAGING, Some(index), result);
                return;
            }
            // Without a `modules` array there is nothing to count: tfe.registry-shape says so.
            let Some(modules) = c::registry_modules(&doc) else {
                return;
            };
            let key = modules.first().map(c::registry_item_key);
            if offset == 0 && key.is_some() {
                first = key;
                continue;
            }
            let result = c::registry_offset_moves(first.as_deref(), key.as_deref());
            if result.is_ok() {
                p.check(&c::TFE_REGISTRY_PAGING, Some(index), Ok(()));
                return;
            }
            // the same module again: read both once more (the list may have changed)
            last = Some((index, result));
        }
    }
    if let Some((index, result)) = last {
        p.check(&c::TFE_REGISTRY_PAGING, Some(index), result);
    }
}

/// `tfe.registry-filters`: `provider` and `verified` narrow the list.
async fn filters(p: &mut Probe<'_>, names: &[&str], m: &ModuleRef, base: &Url) {
    let mut cases: Vec<(&str, String, Value)> = Vec::new();
    if names.contains(&"provider") {
        cases.push(("provider", m.provider.clone(), json!(m.provider)));
        cases.push(("provider", NO_PROVIDER.to_string(), json!(NO_PROVIDER)));
    }
    if names.contains(&"verified") {
        cases.push(("verified", "true".to_string(), json!(true)));
    }
    let mut last = None;
    for (name, value, wanted) in cases {
        let sent = [(name, value)];
        let index = p.get(with_params(base, &sent)).await;
        last = Some(index);
        let what = format!("`{}` to answer a list", shown(&sent));
        let result = p
            .answer(index, &what)
            .and_then(|doc| c::registry_filtered(&doc, name, &wanted, &shown(&sent)));
        if result.is_err() {
            p.check(&c::TFE_REGISTRY_FILTERS, Some(index), result);
            return;
        }
    }
    if last.is_some() {
        p.check(&c::TFE_REGISTRY_FILTERS, last, Ok(()));
    }
}

/// The checks of a registry download after its answer (exchange `index`, redirects to the
/// target's origin already followed): `tfe.registry-download`, `endpoint.succeeds` and, with
/// the module known, `registry.download-source`.
pub async fn after_download(p: &mut Probe<'_>, subject: Option<&Subject>, index: usize) {
    let result = c::registry_download_header(p.ex(index));
    p.check(&c::TFE_REGISTRY_DOWNLOAD, Some(index), result);
    let result = c::succeeds(p.ex(index));
    if !p.check(&c::ENDPOINT_SUCCEEDS, Some(index), result) {
        return;
    }
    if let Some(subject) = subject {
        source(p, subject, index).await;
    }
}

/// Where a download's `X-Terraform-Get` points: an HTTP URL (relative ones resolved against
/// the download URL), without go-getter's own parts (a forced `http::` getter, a `//subdir`,
/// the `archive`, `checksum` and `filename` parameters); or why it is not fetched.
pub fn source_url(download: &Url, value: &str) -> Result<Url, String> {
    let mut text = value.trim();
    if let Some((getter, rest)) = text.split_once("::") {
        if !getter.is_empty() && getter.chars().all(|c| c.is_ascii_alphanumeric()) {
            if getter != "http" && getter != "https" {
                return Err(format!(
                    "the source `{value}` is for go-getter's `{getter}` getter, which conform does not fetch"
                ));
            }
            text = rest;
        }
    }
    let relative = text.starts_with('/') || text.starts_with("./") || text.starts_with("../");
    let url = if relative {
        download.join(text)
    } else {
        Url::parse(text)
    }
    .map_err(|_| {
        format!("the source `{value}` is neither a URL nor a path relative to the download URL (a go-getter shorthand), which conform does not fetch")
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!(
            "the source `{value}` is not an HTTP address, which conform does not fetch"
        ));
    }
    let mut url = without_params(&url, &["archive", "checksum", "filename"]);
    let path = url.path().to_string();
    if let Some(at) = path.get(1..).and_then(|p| p.find("//")) {
        url.set_path(&path[..=at]);
    }
    Ok(url)
}

/// `registry.download-source`: follow the source (only on the target's origin) and compare.
async fn source(p: &mut Probe<'_>, subject: &Subject, index: usize) {
    let ex = p.ex(index);
    let header = ex.header("x-terraform-get").map(str::to_string);
    let has_body = !ex.body().is_empty();
    let Ok(download) = Url::parse(&ex.request.url) else {
        return;
    };
    let fetched = match header {
        Some(value) => {
            let url = match source_url(&download, &value) {
                Ok(url) => url,
                Err(why) => {
                    p.notes.push(format!(
                        "registry.download-source not checked: {why} (not followed, not failed)"
                    ));
                    return;
                }
            };
            match follow(p, url).await {
                Some(i) => i,
                None => return,
            }
        }
        // A download that answers the archive itself gives its source in the body.
        None if has_body => index,
        None => {
            let result = c::registry_source_offered(false, p.ex(index));
            p.check(&c::REGISTRY_DOWNLOAD_SOURCE, Some(index), result);
            return;
        }
    };
    let result = c::registry_source(
        p.ex(fetched),
        &subject.module.to_string(),
        subject.uploaded.as_deref(),
    );
    if result.is_ok() && subject.uploaded.is_none() {
        p.notes.push(format!(
            "registry.download-source: `{}` was given with --module, not uploaded by this run, so its source was checked to be a non-empty gzip, not compared byte for byte",
            subject.module
        ));
    }
    p.check(&c::REGISTRY_DOWNLOAD_SOURCE, Some(fetched), result);
}

/// GETs a source on the target's origin, following redirects there; `None` (with a note)
/// when it or a redirect leads elsewhere: conform sends nothing to another origin.
async fn follow(p: &mut Probe<'_>, url: Url) -> Option<usize> {
    let mut next = url;
    let mut index = None;
    for _ in 0..=MAX_REDIRECTS {
        if !p.target.same_origin(&next) {
            p.notes.push(format!(
                "registry.download-source not checked: the source is on another origin ({}) than the target; conform sends nothing there (not followed, not failed)",
                next.origin().ascii_serialization()
            ));
            return None;
        }
        let i = p.get(next.clone()).await;
        index = Some(i);
        let ex = p.ex(i);
        let location = ex
            .status()
            .filter(|s| (300..400).contains(s))
            .and_then(|_| ex.header("location"))
            .and_then(|l| next.join(l).ok());
        match location {
            Some(l) => next = l,
            None => return index,
        }
    }
    index
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_follow_the_spec_paths() {
        assert_eq!(form("{registry_url}"), Form::List);
        assert_eq!(form("{registry_url}/:namespace"), Form::List);
        assert_eq!(form("{registry_url}/search"), Form::Search);
        assert_eq!(form("{registry_url}/:namespace/:name"), Form::LatestList);
        assert_eq!(
            form("{registry_url}/:namespace/:name/:provider"),
            Form::Latest
        );
        assert_eq!(
            form("{registry_url}/:namespace/:name/:provider/versions"),
            Form::Versions
        );
        assert_eq!(
            form("{registry_url}/:namespace/:name/:provider/:version"),
            Form::Version
        );
    }

    #[test]
    fn sources_resolve_like_terraform() {
        let d =
            Url::parse("https://tfe.example/api/registry/v1/modules/a/b/c/1.0.0/download").unwrap();
        let u = source_url(&d, "/_archivist/v1/object/x?archive=tar.gz").unwrap();
        assert_eq!(u.as_str(), "https://tfe.example/_archivist/v1/object/x");
        let u = source_url(&d, "./archive.tgz").unwrap();
        assert_eq!(
            u.as_str(),
            "https://tfe.example/api/registry/v1/modules/a/b/c/1.0.0/archive.tgz"
        );
        let u = source_url(
            &d,
            "https::https://other.example/m.tgz//sub?archive=tgz&x=1",
        )
        .unwrap();
        assert_eq!(u.as_str(), "https://other.example/m.tgz?x=1");
        assert!(source_url(&d, "git::https://github.com/a/b?ref=v1").is_err());
        assert!(source_url(&d, "github.com/a/b").is_err());
    }

    #[test]
    fn params_are_replaced_not_repeated() {
        let u = Url::parse("http://h/s?query=a&limit=5").unwrap();
        let v = with_params(&u, &[("limit", "1".into()), ("offset", "0".into())]);
        assert_eq!(v.query(), Some("query=a&limit=1&offset=0"));
        assert_eq!(
            without_params(&v, &["query"]).query(),
            Some("limit=1&offset=0")
        );
    }
}
