//! Lists of modules: pages asked with `offset` and `limit`, filters, and searches.

use crate::checks::Message;
use serde_json::Value;

use super::ModuleRef;

/// The top-level `modules` array of a registry answer (TFE shape), if any.
pub fn registry_modules(doc: &Value) -> Option<&Vec<Value>> {
    doc.get("modules").and_then(Value::as_array)
}

/// A module item's identity, to tell pages apart: its `id`, else `namespace/name/provider`.
pub fn registry_item_key(item: &Value) -> String {
    if let Some(id) = item.get("id").and_then(Value::as_str) {
        return id.to_string();
    }
    let part = |k: &str| {
        item.get(k)
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_string()
    };
    format!(
        "{}/{}/{}",
        part("namespace"),
        part("name"),
        part("provider")
    )
}

/// The offset of the next page, when the answer says there is one (`meta.next_offset`).
pub fn registry_next_offset(doc: &Value) -> Option<u64> {
    doc.pointer("/meta/next_offset").and_then(Value::as_u64)
}

/// `tfe.registry-paging` on one page asked with `offset` and `limit`: at most `limit`
/// modules, and `meta.limit` / `meta.current_offset` (when present) say what was used.
pub fn registry_page(doc: &Value, offset: u64, limit: u64) -> Result<(), Message> {
    let Some(modules) = registry_modules(doc) else {
        return Ok(());
    };
    if modules.len() as u64 > limit {
        return Err(message!(
            "expected at most {limit} module(s) with `limit={limit}`, received {}",
            modules.len()
        ));
    }
    if let Some(used) = doc.pointer("/meta/limit").and_then(Value::as_u64) {
        if used != limit {
            return Err(message!(
                "expected `meta.limit` {limit} (the limit used) with `limit={limit}`, received {used}"
            ));
        }
    }
    if let Some(at) = doc.pointer("/meta/current_offset").and_then(Value::as_u64) {
        if at != offset {
            return Err(message!(
                "expected `meta.current_offset` {offset} with `offset={offset}`, received {at}"
            ));
        }
    }
    Ok(())
}

/// `tfe.registry-filters`: every module listed has `member` equal to `wanted`.
pub fn registry_filtered(
    doc: &Value,
    member: &str,
    wanted: &Value,
    sent: &str,
) -> Result<(), Message> {
    let Some(modules) = registry_modules(doc) else {
        return Ok(());
    };
    let others: Vec<String> = modules
        .iter()
        .filter(|m| m.get(member) != Some(wanted))
        .map(|m| {
            format!(
                "{} ({member} {})",
                registry_item_key(m),
                m.get(member)
                    .map(Value::to_string)
                    .unwrap_or_else(|| "absent".into())
            )
        })
        .collect();
    if others.is_empty() {
        Ok(())
    } else {
        Err(message!(
            "expected `{sent}` to list only modules whose `{member}` is {wanted}; it lists {}",
            others.join(", ")
        ))
    }
}

/// `tfe.registry-paging`: `offset=1&limit=1` answers another module than `offset=0&limit=1`
/// (`first` and `second`: the keys of the modules they answered).
pub fn registry_offset_moves(first: Option<&str>, second: Option<&str>) -> Result<(), Message> {
    match (first, second) {
        (Some(a), Some(b)) if a == b => Err(message!(
            "expected `offset=1&limit=1` to answer another module than `offset=0&limit=1`; both answered {a} (twice): the offset seems ignored"
        )),
        _ => Ok(()),
    }
}

/// `registry.search`, one half: `param=<name>` lists the module (`found`, after `pages` pages).
pub fn registry_search_finds(
    found: bool,
    param: &str,
    m: &ModuleRef,
    pages: usize,
) -> Result<(), Message> {
    if found {
        Ok(())
    } else {
        Err(message!(
            "expected `{param}={}` to list the module `{}`; it does not ({pages} page(s) read)",
            m.name,
            m.source()
        ))
    }
}

/// `registry.search`, the other half: `param=<no_match>`, a text no module matches, does not
/// list the module.
pub fn registry_search_excludes(
    listed: bool,
    param: &str,
    no_match: &str,
    m: &ModuleRef,
) -> Result<(), Message> {
    if listed {
        Err(message!(
            "expected `{param}={no_match}`, a text no module matches, not to list the module `{}`; it does: the search text is not read from `{param}`",
            m.source()
        ))
    } else {
        Ok(())
    }
}

/// `registry.search` judged with `q` (the main request's `query` was refused with 400 and
/// the test went on with `q`), when `q` does not search either (`why`).
pub fn registry_search_q_refused(why: &str) -> Message {
    message!("the spec's `query` was refused with 400, and with `q` instead: {why}")
}

/// `registry.search`: the search for a text no module matches (`param=<no_match>`) was not
/// answered with a list (`answered`: its status, and why its body is no JSON).
pub fn registry_search_unanswered(param: &str, no_match: &str, answered: &str) -> Message {
    message!("`{param}={no_match}` answered {answered}")
}

/// `registry.search` when the spec's `query` failed (`why`): says whether TFE's `q` works
/// instead (`q_result`), so the finding names the parameter the registry reads.
pub fn registry_search_with_q(
    why: &str,
    q_result: Result<(), Message>,
    m: &ModuleRef,
    no_match: &str,
) -> Message {
    match q_result {
        Ok(()) => message!(
            "{why}. With `q` instead the search works (`q={}` lists the module, `q={no_match}` does not): this registry reads `q`, not the spec's `query` (Query column: `query (the search text)`)",
            m.name
        ),
        Err(q_why) => {
            message!("{why}; `q`, TFE's name for the search text, does not work either: {q_why}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::m;
    use super::super::*;
    use serde_json::json;

    #[test]
    fn pages_and_filters() {
        let page = json!({"meta":{"limit":1,"current_offset":0},"modules":[{"provider":"aws"}]});
        assert!(registry_page(&page, 0, 1).is_ok());
        let ignored =
            json!({"meta":{"limit":15,"current_offset":0},"modules":[{"provider":"aws"}]});
        assert!(registry_page(&ignored, 0, 1)
            .unwrap_err()
            .contains("meta.limit"));
        assert!(registry_filtered(&page, "provider", &json!("aws"), "provider=aws").is_ok());
        assert!(registry_filtered(&page, "provider", &json!("zz"), "provider=zz").is_err());
        assert!(registry_shape(&page, RegistryShape::List).is_err());
        assert!(is_gzip(&[0x1f, 0x8b, 8]) && !is_gzip(b"PK\x03"));
    }

    #[test]
    fn offsets_move_and_searches_read_their_parameter() {
        assert!(registry_offset_moves(Some("a"), Some("b")).is_ok());
        assert!(registry_offset_moves(Some("a"), None).is_ok());
        assert!(registry_offset_moves(Some("a"), Some("a"))
            .unwrap_err()
            .contains("offset seems ignored"));
        let m = m();
        assert!(registry_search_finds(true, "query", &m, 1).is_ok());
        assert!(registry_search_finds(false, "query", &m, 2)
            .unwrap_err()
            .contains("(2 page(s) read)"));
        assert!(registry_search_excludes(false, "query", "zzz", &m).is_ok());
        assert!(registry_search_excludes(true, "query", "zzz", &m).is_err());
        let with_q = registry_search_with_q("why", Ok(()), &m, "zzz");
        assert!(with_q.contains("this registry reads `q`"), "{with_q}");
        let neither = registry_search_with_q("why", Err(Message::new("no")), &m, "zzz");
        assert!(neither.contains("does not work either: no"), "{neither}");
    }
}
