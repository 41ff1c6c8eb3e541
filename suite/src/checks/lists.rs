//! Checks of lists: a list holds what the run made in it, a page holds at most its page size,
//! and the pages of a walk partition the list. Each answers `Ok(())` or `Err(message)`; the
//! caller walks the pages (with [`crate::pages`]) and records the result under the check's id.

use crate::checks::Message;
use std::collections::BTreeSet;

use serde_json::Value;

use super::{envelope_list, status_text, Schemas};
use crate::target::Exchange;

/// `paging.accepted`: a list asked for with page parameters (`query`) is answered with a list.
/// Returns the document.
pub fn paged(ex: &Exchange, schemas: &Schemas, query: &str) -> Result<Value, Message> {
    if !ex.is_success() {
        return Err(message!(
            "expected {query} to be answered with a list, received {}",
            status_text(ex.status())
        ));
    }
    let doc = ex.json().map_err(Message::new)?;
    envelope_list(schemas, &doc)?;
    Ok(doc)
}

/// Whether a list request (`url`) names TFE's page parameters (`page[number]`, `page[size]`),
/// to which TFE answers `meta.pagination`.
pub fn tfe_paged(url: &str) -> bool {
    [
        "page%5Bsize%5D",
        "page[size]",
        "page%5Bnumber%5D",
        "page[number]",
    ]
    .iter()
    .any(|p| url.contains(p))
}

/// `tfe.pagination-meta`: a list answered to TFE's page parameters carries `meta.pagination`
/// (schema `tfe/pagination`).
pub fn pagination_meta(schemas: &Schemas, doc: &Value) -> Result<(), Message> {
    schemas
        .validate("tfe/pagination", doc)
        .map_err(|e| message!("expected meta.pagination (schema tfe/pagination); {e}"))
}

/// `list.contains`: the ids read hold `wanted`, the resource (`what`) the run made.
pub fn holds(ids: &[String], wanted: &str, what: &str) -> Result<(), Message> {
    if ids.iter().any(|id| id == wanted) {
        Ok(())
    } else {
        Err(message!(
            "expected the list to hold the {what} {wanted} this run made; it does not (pages read up to the end)"
        ))
    }
}

/// `list.contains` (or the caller's check for a list read): `place` (a list, a search, a
/// walk) holds `what`, an item the run made and has not deleted. `listed` is what it holds.
pub fn listed(holds: bool, what: &str, place: &str, listed: &[String]) -> Result<(), Message> {
    if holds {
        Ok(())
    } else {
        Err(message!(
            "expected {place} to hold {what}; it holds {listed:?}"
        ))
    }
}

/// `tfe.list-filter`: the list sent with `filter` (`param=value`) answered (`ok`) and holds
/// `wanted`; with `exact`, nothing else. `ids` are the ids it held (pages read up to `wanted`,
/// or its first page for an exact filter).
pub fn filtered(
    ok: Result<(), Message>,
    ids: &[String],
    wanted: &str,
    exact: bool,
    filter: &str,
) -> Result<(), Message> {
    ok.map_err(|e| message!("the list filtered by {filter}: {e}"))?;
    if !ids.iter().any(|id| id == wanted) {
        return Err(message!(
            "expected the list filtered by {filter} to hold {wanted}, which the filter names; it holds {ids:?}"
        ));
    }
    let others: Vec<&String> = ids.iter().filter(|id| *id != wanted).collect();
    if exact && !others.is_empty() {
        return Err(message!(
            "expected the list filtered by {filter} to hold only {wanted}, the one item the filter names; it also holds {others:?} (the filter is ignored)"
        ));
    }
    Ok(())
}

/// `tfe.unpaginated`: a list asked for without page parameters (`doc`) carries no
/// `meta.pagination` (TFE answers such a list whole).
pub fn unpaginated(doc: &Value) -> Result<(), Message> {
    match doc.pointer("/meta/pagination") {
        None | Some(Value::Null) => Ok(()),
        Some(p) => Err(message!(
            "expected the list asked for without page parameters to be answered whole, without meta.pagination (as TFE answers it); it carries {p}"
        )),
    }
}

/// `delete.then-gone`: `place` no longer holds `what`, deleted earlier by the run.
pub fn gone_from(holds: bool, what: &str, place: &str) -> Result<(), Message> {
    if holds {
        Err(message!(
            "expected {what}, deleted earlier, to be gone from {place}; it is still there"
        ))
    } else {
        Ok(())
    }
}

/// A list read that filters (by state): `place` does not hold `what`, which the filter leaves
/// out.
pub fn left_out(holds: bool, what: &str, place: &str) -> Result<(), Message> {
    if holds {
        Err(message!("expected {place} not to list {what}; it does"))
    } else {
        Ok(())
    }
}

/// `list.exact`: `place` holds only what the run made there; `extra` is the first item it
/// holds that the run did not make (and that is not someone else's by the family's rule).
pub fn only_made(extra: Option<&str>, place: &str) -> Result<(), Message> {
    match extra {
        Some(extra) => Err(message!(
            "expected {place} to hold only what this run made; it holds {extra}"
        )),
        None => Ok(()),
    }
}

/// `tfe.page-size`: page `page` holds at most `size` items.
pub fn page_size(count: usize, size: usize, page: usize) -> Result<(), Message> {
    if count <= size {
        Ok(())
    } else {
        Err(message!(
            "expected page {page} to hold at most {size} item(s) (the page size asked for), it holds {count}"
        ))
    }
}

/// `tfe.page-size`: page 2 is another page than page 1 (with one item a page): a server that
/// ignores the page number answers page 1 twice.
pub fn pages_differ(first: &[String], second: &[String]) -> Result<(), Message> {
    match second.first() {
        Some(id) if first == second => Err(message!(
            "page 2 repeats page 1 ({id}) with a page size of 1: the page number seems ignored"
        )),
        _ => Ok(()),
    }
}

/// `tfe.page-size`: a walk with pages of `size` read each of the `stable` items (those in the
/// list before and after the walk) exactly once.
pub fn partition(stable: &[String], walked: &[String], size: usize) -> Result<(), Message> {
    let missing: Vec<&String> = stable.iter().filter(|id| !walked.contains(id)).collect();
    let mut seen = BTreeSet::new();
    let twice: Vec<&String> = walked
        .iter()
        .filter(|id| stable.contains(id) && !seen.insert(*id))
        .collect();
    if missing.is_empty() && twice.is_empty() {
        Ok(())
    } else {
        Err(message!(
            "expected a walk with pages of {size} to read each of the {} items once; missing {missing:?}, read twice {twice:?}",
            stable.len()
        ))
    }
}

/// `tfe.page-size`: what one walk shows, `None` when it shows nothing. Only the items in the
/// list read whole `before` and `after` the walk count ([`partition`]); a walk that read one of
/// them twice or missed it is a finding only if the list stood still (`before` and `after`
/// the same ids in the same order): in a list others change, an item added at the front pushes
/// the last of a page onto the next, and one removed pulls the first of the next onto this.
pub fn walk_shows(
    before: &[String],
    after: &[String],
    walked: &[String],
    size: usize,
) -> Option<Result<(), Message>> {
    let stable: Vec<String> = before
        .iter()
        .filter(|id| after.contains(id))
        .cloned()
        .collect();
    let result = partition(&stable, walked, size);
    (result.is_ok() || before == after).then_some(result)
}

/// The ids a walk read on two pages, in the order it read them first: (id, first page, again
/// page). `seen` is every id read with the page it was on, in order.
pub fn repeated(seen: &[(String, usize)]) -> impl Iterator<Item = (String, usize, usize)> + '_ {
    seen.iter().enumerate().filter_map(|(i, (id, page))| {
        seen[i + 1..]
            .iter()
            .find(|(other, _)| other == id)
            .map(|(_, again)| (id.clone(), *page, *again))
    })
}

/// `tfe.page-size`: the message for an item a walk read on two pages.
pub fn read_twice(id: &str, first: usize, again: usize, size: usize) -> Result<(), Message> {
    Err(message!(
        "expected the pages to partition the list; {id} is on page {first} and again on page {again} (page size {size})"
    ))
}

/// A walk's finding (`message`), with the walk that showed it: `pages` pages of `size`, and
/// where the list repeated a page (`repeated`: the page, and the list's path), the walk
/// ending there.
pub fn walked(
    message: Message,
    pages: usize,
    size: usize,
    repeated: Option<(usize, &str)>,
) -> Message {
    let message = message!("{message} (a walk of {pages} page(s) of {size})");
    match repeated {
        Some((page, path)) => message!(
            "{message}; page {page} of {path} repeated page {} (the list ignores paging: the walk ended there)",
            page - 1
        ),
        None => message,
    }
}

/// Why a suspected paging fault around the item `id` is confirmed, the list read whole
/// twice while it stood still (`whole`: its ids): the item is not in it, or its pages of
/// `size` hold it on pages `on` rather than on the one it belongs on alone. `None` when the
/// pages hold it where they should.
pub fn paging_confirmed(id: &str, whole: &[String], on: &[usize], size: usize) -> Option<Message> {
    let Some(p) = whole.iter().position(|i| i == id) else {
        return Some(message!(
            "a read of the whole list, while it stood still, does not hold {id} either"
        ));
    };
    let expected = p / size + 1;
    if on == [expected] {
        return None;
    }
    Some(message!(
        "read again while the list stood still, {id} (item {} of {}) is on page(s) {on:?} of size {size}, where it belongs on page {expected} alone",
        p + 1,
        whole.len()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_list_holds_what_was_made() {
        assert!(holds(&ids(&["a", "b"]), "b", "workspace").is_ok());
        assert!(holds(&ids(&["a"]), "b", "workspace")
            .unwrap_err()
            .contains("workspace b"));
    }

    #[test]
    fn a_list_agrees_with_what_the_run_made() {
        assert!(listed(true, "ws #0", "the list", &[]).is_ok());
        let e = listed(false, "ws #0", "the list", &ids(&["a"])).unwrap_err();
        assert!(e.contains("to hold ws #0") && e.contains(r#"["a"]"#), "{e}");
        assert!(gone_from(false, "ws #0", "the list").is_ok());
        assert!(gone_from(true, "ws #0", "the list")
            .unwrap_err()
            .contains("still there"));
        assert!(left_out(false, "run #1", "the runs").is_ok());
        assert!(left_out(true, "run #1", "the runs").is_err());
        assert!(only_made(None, "the list").is_ok());
        assert!(only_made(Some("ws-x"), "the list")
            .unwrap_err()
            .contains("ws-x"));
    }

    #[test]
    fn pages_hold_at_most_their_size_and_move_on() {
        assert!(page_size(2, 2, 1).is_ok());
        assert!(page_size(3, 2, 1).is_err());
        assert!(pages_differ(&ids(&["a"]), &ids(&["b"])).is_ok());
        assert!(pages_differ(&ids(&["a"]), &ids(&[])).is_ok());
        assert!(pages_differ(&ids(&["a"]), &ids(&["a"]))
            .unwrap_err()
            .contains("repeats page 1 (a)"));
    }

    #[test]
    fn a_walk_partitions_the_stable_items() {
        let stable = ids(&["a", "b", "c"]);
        assert!(partition(&stable, &ids(&["a", "b", "c"]), 2).is_ok());
        // an item that came during the walk may be read twice without a finding
        assert!(partition(&stable, &ids(&["a", "n", "n", "b", "c"]), 2).is_ok());
        let e = partition(&stable, &ids(&["a", "b", "b"]), 2).unwrap_err();
        assert!(
            e.contains(r#"missing ["c"]"#) && e.contains(r#"read twice ["b"]"#),
            "{e}"
        );
        // newest first, "n" added during the walk pushed "b" onto page 2: no finding, since
        // the list moved; the same walk of a list that stood still is one
        let (before, after) = (ids(&["a", "b", "c"]), ids(&["n", "a", "b", "c"]));
        let walked = ids(&["a", "b", "b", "c"]);
        assert!(walk_shows(&before, &after, &walked, 2).is_none());
        let shown = walk_shows(&before, &before, &walked, 2).expect("a still list is judged");
        assert!(shown.unwrap_err().contains(r#"read twice ["b"]"#));
        assert!(walk_shows(&before, &after, &ids(&["n", "a", "b", "c"]), 2)
            .expect("a walk that partitions is judged")
            .is_ok());
        let seen = vec![("a".into(), 1), ("b".into(), 1), ("a".into(), 2)];
        assert_eq!(repeated(&seen).next(), Some(("a".into(), 1, 2)));
        assert_eq!(repeated(&seen).count(), 1);
        assert!(read_twice("a", 1, 2, 2)
            .unwrap_err()
            .contains("page 1 and again on page 2"));
    }

    #[test]
    fn a_paged_list_is_a_list() {
        use crate::checks::testing::{exchange, schemas};
        let s = schemas();
        let list = exchange(
            200,
            "application/json",
            r#"{"data":[{"id":"a","type":"t"}]}"#,
        );
        assert!(paged(&list, &s, "page=1").is_ok());
        let refused = exchange(400, "application/json", "{}");
        assert!(paged(&refused, &s, "page=1")
            .unwrap_err()
            .contains("page=1 to be answered with a list, received 400"));
        let one = exchange(200, "application/json", r#"{"data":{"id":"a"}}"#);
        assert!(paged(&one, &s, "page=1").is_err());
    }
}
