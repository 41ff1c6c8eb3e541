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

use reqwest::Method;
use serde_json::Value;
use url::Url;

use crate::catalog::Endpoint;
use crate::checks::{self as c, Check, ModuleRef, RegistryShape};
use crate::fixtures::{auth_for, Scope};
use crate::target::{Auth, Exchange, Request, Target};

mod download;
mod query;

pub use download::after_download;
pub use query::q_instead;
use query::{query_column, search};

/// Pages of a registry list read at most when looking for the module.
const MAX_PAGES: usize = 20;
/// A search text no module matches.
const NO_MATCH: &str = "conformnomatch0000";
/// A provider no module has.
const NO_PROVIDER: &str = "conformnoprovider";
/// Redirects followed at most when fetching a source.
const MAX_REDIRECTS: usize = 5;

/// What the registry checks of one test record into: the test's transcript, record and notes
/// (borrowed from the runner's test).
pub struct Probe<'a> {
    /// The target (requests pass `Target::send`, and so the guard and the rate limit).
    pub target: &'a Target,
    /// The test's exchanges.
    pub exchanges: &'a mut Vec<Exchange>,
    /// The test's record of check results.
    pub record: &'a mut c::Record,
    /// What the test reports besides its checks (a given module).
    pub notes: &'a mut Vec<String>,
    /// What the test could not observe (a source that could not be fetched): a test that
    /// would pass is then `skipped` with it.
    pub unobserved: &'a mut Vec<String>,
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
    fn answer(&self, index: usize, what: &str) -> Result<Value, c::Message> {
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
        result: Result<(), c::Message>,
    ) -> bool {
        self.record.check(check, exchange, result)
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
