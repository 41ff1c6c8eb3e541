//! The registry's Query column: search with the spec's `query` (and TFE's `q`, to name what a
//! registry reads), the parameters accepted, `offset`/`limit` paging and the filters.

use serde_json::{json, Value};
use url::Url;

use super::{find, shown, with_params, without_params, Probe, NO_MATCH, NO_PROVIDER};
use crate::checks::{self as c, ModuleRef};

/// `registry.search`: the spec's `query` finds the module and a text that matches nothing
/// does not list it; when that fails, `q` (TFE's name) is tried, to say which one the
/// registry reads. When the main request's `query` was refused with 400 and the test went on
/// with `q` instead ([`q_instead`]), the search is judged on `q`, and a note says so.
pub(super) async fn search(p: &mut Probe<'_>, main: usize, doc: &Value, m: &ModuleRef, base: &Url) {
    let sent_q =
        base.query_pairs().any(|(k, _)| k == "q") && !base.query_pairs().any(|(k, _)| k == "query");
    if sent_q {
        match search_with(p, "q", Some((main, doc)), m, base).await {
            Ok(index) => {
                p.notes.push(format!(
                    "registry.search judged with `q`: `q={}` lists the module, `q={NO_MATCH}` does not",
                    m.name
                ));
                p.check(&c::REGISTRY_SEARCH, Some(index), Ok(()));
            }
            Err((index, why)) => {
                let message = c::registry_search_q_refused(&why);
                p.check(&c::REGISTRY_SEARCH, index, Err(message));
            }
        }
        return;
    }
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

/// A registry search whose `query` was refused with 400 (`main`): the same request with the
/// text in `q` (TFE's name) instead. `Some(index)` of that answer when it succeeded, for the
/// test to be judged on; `None` when the request was no such search, or `q` was refused too
/// (the test is then judged on the refusal of `query`).
pub async fn q_instead(
    p: &mut Probe<'_>,
    endpoint: &crate::catalog::Endpoint,
    main: usize,
) -> Option<usize> {
    if super::form(&endpoint.path) != super::Form::Search || p.ex(main).status() != Some(400) {
        return None;
    }
    let url = Url::parse(&p.ex(main).request.url).ok()?;
    let text = url
        .query_pairs()
        .find(|(k, _)| k == "query")
        .map(|(_, v)| v.into_owned())?;
    let retry = with_params(&without_params(&url, &["query"]), &[("q", text)]);
    let index = p.get(retry).await;
    if p.ex(index).is_success() {
        p.notes.push(
            "the search with the spec's `query` answered 400; it was sent again with `q`, TFE's name for the search text, and the test is judged on that answer".into(),
        );
        Some(index)
    } else {
        None
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
) -> Result<usize, (Option<usize>, c::Message)> {
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
            c::registry_search_unanswered(param, NO_MATCH, &p.answered(i)),
        ));
    };
    let listed = find(p, i, &d, m, &none, false).await;
    c::registry_search_excludes(listed.found, param, NO_MATCH, m)
        .map_err(|message| (Some(listed.index), message))?;
    Ok(found.index)
}

/// The parameters the row's Query column names: accepted (core), then `offset`/`limit` and
/// the filters as TFE reads them.
pub(super) async fn query_column(p: &mut Probe<'_>, names: &[&str], m: &ModuleRef, base: &Url) {
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
pub(super) async fn paging(p: &mut Probe<'_>, base: &Url) {
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
pub(super) async fn filters(p: &mut Probe<'_>, names: &[&str], m: &ModuleRef, base: &Url) {
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
