//! The one page follower: which page a walk over a list reads next and when it is over, from
//! what the pages say (`meta.pagination.next-page`, `links.next`, or a short page). It sends
//! nothing: the runner, the sequence engine and `sweep` send each page's request and hand the
//! answer back, so the same rules hold wherever a list is walked.

use serde_json::Value;

/// The page parameters a walk sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Paging {
    /// The spec's `page` and `page_size` ("Endpoints conventions (paged)").
    Spec,
    /// TFE's `page[number]` and `page[size]` (tfe-api-facts 0.5).
    Tfe,
}

impl Paging {
    /// The page parameters a run at `profile` pages with: TFE's at `--profile tfe`, where a
    /// list's paging is judged by TFE's rules, else the spec's.
    pub fn of(profile: crate::verdict::Profile) -> Self {
        match profile {
            crate::verdict::Profile::Tfe => Paging::Tfe,
            crate::verdict::Profile::Core => Paging::Spec,
        }
    }

    /// The names of the page number and page size parameters.
    pub fn names(self) -> (&'static str, &'static str) {
        match self {
            Paging::Spec => ("page", "page_size"),
            Paging::Tfe => ("page[number]", "page[size]"),
        }
    }

    /// The query string that asks for one page, percent-encoded.
    pub fn query(self, page: usize, size: usize) -> String {
        let (number, per_page) = self.names();
        url::form_urlencoded::Serializer::new(String::new())
            .append_pair(number, &page.to_string())
            .append_pair(per_page, &size.to_string())
            .finish()
    }
}

/// The most pages any walk reads (the runner's, the sequence engine's, sweep's): a longer
/// list whose filter is not served is not observed past it.
pub const MAX_PAGES: usize = 50;

/// A walk over a list's pages, page 1 first, bounded by a number of pages (never more than
/// [`MAX_PAGES`]), and over when a page repeats the one before it (a list that ignores paging
/// answers the whole list on every page: [`Walk::repeated`]).
#[derive(Debug, Clone)]
pub struct Walk {
    size: usize,
    max_pages: usize,
    page: usize,
    more: bool,
    cut_short: bool,
    previous: Vec<String>,
    repeated: Option<usize>,
}

impl Walk {
    /// A walk with pages of `size` items that reads at most `max_pages` pages.
    pub fn new(size: usize, max_pages: usize) -> Self {
        Walk {
            size: size.max(1),
            max_pages: max_pages.min(MAX_PAGES),
            page: 0,
            more: true,
            cut_short: false,
            previous: Vec::new(),
            repeated: None,
        }
    }

    /// The next page to read (from 1), or `None` when the walk is over: the list said it
    /// has no more, or the walk read its number of pages (see [`Walk::cut_short`]).
    pub fn next_page(&mut self) -> Option<usize> {
        if !self.more {
            return None;
        }
        if self.page >= self.max_pages {
            self.cut_short = true;
            return None;
        }
        self.page += 1;
        Some(self.page)
    }

    /// Takes the answer to the page [`Walk::next_page`] gave: returns its items and notes
    /// whether the list has more. A list that does not say so has more while a page is full.
    /// A page that holds the same items as the one before it ends the walk.
    pub fn read(&mut self, doc: &Value) -> Vec<Value> {
        let items = items(doc);
        let full = items.len() >= self.size;
        self.more = !items.is_empty() && has_next(doc).unwrap_or(full);
        let ids: Vec<&str> = items
            .iter()
            .filter_map(|item| item.get("id").and_then(Value::as_str))
            .collect();
        let ids: Vec<String> = ids.into_iter().map(str::to_string).collect();
        if self.page > 1 && !ids.is_empty() && ids == self.previous {
            self.repeated = Some(self.page);
            self.more = false;
        }
        self.previous = ids;
        items
    }

    /// The page that repeated the one before it, ending the walk (a list that ignores paging).
    pub fn repeated(&self) -> Option<usize> {
        self.repeated
    }

    /// Ends the walk (its caller has read what it needed).
    pub fn stop(&mut self) {
        self.more = false;
    }

    /// Starts over from page 1 with another page size.
    pub fn restart(&mut self, size: usize) {
        *self = Walk::new(size, self.max_pages);
    }

    /// Lets the walk read at least `max_pages` pages in all.
    /// (never more than [`MAX_PAGES`]).
    pub fn allow_pages(&mut self, max_pages: usize) {
        self.max_pages = self.max_pages.max(max_pages).min(MAX_PAGES);
    }

    /// The page size.
    pub fn size(&self) -> usize {
        self.size
    }

    /// The page last given by [`Walk::next_page`] (0 before the first).
    pub fn page(&self) -> usize {
        self.page
    }

    /// Whether the walk stopped at its bound while the list said it had more.
    pub fn cut_short(&self) -> bool {
        self.cut_short
    }
}

/// The items of a list document (`data`, an array; none otherwise).
pub fn items(doc: &Value) -> Vec<Value> {
    doc.get("data")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// Whether a list document says there is a next page: `Some(true/false)` from
/// `meta.pagination.next-page` or `links.next`, `None` when it says nothing.
pub fn has_next(doc: &Value) -> Option<bool> {
    if let Some(next) = doc.pointer("/meta/pagination/next-page") {
        return Some(!next.is_null());
    }
    doc.pointer("/links/next").map(|next| !next.is_null())
}

/// The address `links.next` gives, as the document wrote it.
pub fn next_link(doc: &Value) -> Option<&str> {
    doc.pointer("/links/next").and_then(Value::as_str)
}

/// The page after `doc`, page `page` of the list read at `current`, for a list that gives no
/// `links.next` (the spec asks for none): `current` with the page number `paging` names set to
/// `meta.pagination.next-page`, or to `page + 1` where the list does not say and answered
/// items. `None` when the list says it has no more, or the page is empty.
pub fn numbered_next(
    doc: &Value,
    current: &url::Url,
    page: usize,
    paging: Paging,
) -> Option<url::Url> {
    if has_next(doc) == Some(false) || items(doc).is_empty() {
        return None;
    }
    let next = doc
        .pointer("/meta/pagination/next-page")
        .and_then(Value::as_u64)
        .and_then(|n| usize::try_from(n).ok())
        .unwrap_or(page + 1);
    let (number, _) = paging.names();
    let kept: Vec<(String, String)> = current
        .query_pairs()
        .filter(|(name, _)| name != number)
        .map(|(name, value)| (name.into_owned(), value.into_owned()))
        .collect();
    let mut url = current.clone();
    url.query_pairs_mut()
        .clear()
        .extend_pairs(kept)
        .append_pair(number, &next.to_string());
    Some(url)
}

/// `meta.pagination.total-count` of a list document.
pub fn total_count(doc: &Value) -> Option<usize> {
    doc.pointer("/meta/pagination/total-count")
        .and_then(Value::as_u64)
        .and_then(|n| usize::try_from(n).ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn page(ids: &[&str], next: Option<Value>) -> Value {
        let data: Vec<Value> = ids.iter().map(|id| json!({"id": id})).collect();
        match next {
            Some(next) => json!({"data": data, "meta": {"pagination": {"next-page": next}}}),
            None => json!({"data": data}),
        }
    }

    #[test]
    fn a_list_without_links_is_followed_by_its_page_number() {
        let current = url::Url::parse("http://t/api/v2/teams?q=x&page=1").unwrap();
        let said = json!({"data": [{"id": "a"}], "meta": {"pagination": {"next-page": 3}}});
        let next = numbered_next(&said, &current, 1, Paging::Spec).unwrap();
        assert_eq!(next.as_str(), "http://t/api/v2/teams?q=x&page=3");
        let unsaid = page(&["a"], None);
        let next = numbered_next(&unsaid, &current, 1, Paging::Tfe).unwrap();
        assert_eq!(next.query(), Some("q=x&page=1&page%5Bnumber%5D=2"));
        assert!(
            numbered_next(&page(&["a"], Some(Value::Null)), &current, 1, Paging::Spec).is_none()
        );
        assert!(numbered_next(&page(&[], None), &current, 1, Paging::Spec).is_none());
    }

    #[test]
    fn a_walk_follows_what_the_list_says() {
        let mut walk = Walk::new(2, 10);
        assert_eq!(walk.next_page(), Some(1));
        assert_eq!(walk.read(&page(&["a", "b"], Some(json!(2)))).len(), 2);
        assert_eq!(walk.next_page(), Some(2));
        walk.read(&page(&["c"], Some(Value::Null)));
        assert_eq!(walk.next_page(), None);
        assert!(!walk.cut_short());
    }

    #[test]
    fn a_list_that_says_nothing_has_more_while_its_pages_are_full() {
        let mut walk = Walk::new(2, 10);
        walk.next_page();
        walk.read(&page(&["a", "b"], None));
        assert_eq!(walk.next_page(), Some(2));
        walk.read(&page(&["c"], None));
        assert_eq!(walk.next_page(), None);
        // an empty page ends the walk, whatever the meta says
        let mut walk = Walk::new(2, 10);
        walk.next_page();
        walk.read(&page(&[], Some(json!(2))));
        assert_eq!(walk.next_page(), None);
    }

    #[test]
    fn a_walk_ends_where_a_page_repeats_the_one_before() {
        let page = json!({"data": [{"id": "a"}, {"id": "b"}], "links": {"next": "x"}});
        let mut walk = Walk::new(1, 1000);
        assert_eq!(walk.next_page(), Some(1));
        walk.read(&page);
        assert_eq!(walk.next_page(), Some(2));
        walk.read(&page);
        assert_eq!(walk.repeated(), Some(2));
        assert_eq!(walk.next_page(), None);
        assert!(!walk.cut_short());
    }

    #[test]
    fn no_walk_reads_more_than_the_cap() {
        let mut walk = Walk::new(1, 1000);
        walk.allow_pages(5000);
        let mut pages = 0;
        while let Some(page) = walk.next_page() {
            walk.read(&json!({"data": [{"id": page.to_string()}], "links": {"next": "x"}}));
            pages += 1;
        }
        assert_eq!(pages, MAX_PAGES);
        assert!(walk.cut_short());
    }

    #[test]
    fn a_walk_stops_at_its_bound_and_says_so() {
        let mut walk = Walk::new(1, 2);
        for expected in 1..=2 {
            assert_eq!(walk.next_page(), Some(expected));
            let id = expected.to_string();
            walk.read(&page(&[id.as_str()], Some(json!(expected + 1))));
        }
        assert_eq!(walk.next_page(), None);
        assert!(walk.cut_short());
        walk.restart(5);
        assert_eq!((walk.next_page(), walk.size()), (Some(1), 5));
    }

    #[test]
    fn next_pages_are_read_from_meta_or_links() {
        assert_eq!(has_next(&page(&[], Some(json!(3)))), Some(true));
        assert_eq!(has_next(&page(&[], Some(Value::Null))), Some(false));
        assert_eq!(
            has_next(&json!({"links": {"next": "/x?page=2"}})),
            Some(true)
        );
        assert_eq!(has_next(&json!({"links": {"next": null}})), Some(false));
        assert_eq!(has_next(&json!({"links": {"self": "/x"}})), None);
        assert_eq!(has_next(&json!({"data": []})), None);
        assert_eq!(
            next_link(&json!({"links": {"next": "/x?page=2"}})),
            Some("/x?page=2")
        );
        assert_eq!(
            total_count(&json!({"meta": {"pagination": {"total-count": 7}}})),
            Some(7)
        );
        assert_eq!(
            Paging::Tfe.query(2, 5),
            "page%5Bnumber%5D=2&page%5Bsize%5D=5"
        );
        assert_eq!(Paging::Spec.query(2, 5), "page=2&page_size=5");
    }
}
