//! Paging checks of a list: the spec's parameters accepted, TFE's page size, meta and a walk
//! that partitions the list (through [`crate::pages::Walk`]).

use super::{TestRun, MAX_PAGES};
use crate::checks as c;
use crate::pages::{Paging, Walk};

impl TestRun<'_> {
    pub(super) async fn paging(&mut self, _main: usize) {
        let Some(first) = self.list_request(Some((1, 1)), true) else {
            return;
        };
        let index = self.send(first).await;
        let accepted = c::lists::paged(self.ex(index), &self.ctx.schemas, "`page=1&page_size=1`");
        if !self.check(&c::PAGING_ACCEPTED, Some(index), accepted.map(|_| ())) {
            return;
        }
        // The spec's `page`/`page_size` are judged above (core); TFE's conventions are judged
        // with TFE's own parameters, `page[number]`/`page[size]` (tfe-api-facts 0.5).
        let Some(first) = self.list_request_as(Some((1, 1)), true, Paging::Tfe) else {
            return;
        };
        let index = self.send(first).await;
        let what = "`page[number]=1&page[size]=1` to be answered with a list";
        let Some(doc) = self.answered_document(index, &c::TFE_PAGE_SIZE, what) else {
            return;
        };
        let meta = c::lists::pagination_meta(&self.ctx.schemas, &doc);
        self.check(&c::TFE_PAGINATION_META, Some(index), meta);
        // Page 1 holds at most one item, and page 2 is another page: a server that ignores
        // `page` answers page 1 twice. Only a pair read while the list stood still counts
        // (page 1 read again after page 2 is unchanged): in a list that others add to, newest
        // first, page 2 holds what page 1 held a moment before. Three tries; a list that moves
        // under every one is judged by the walk below alone.
        let size = c::lists::page_size(c::list_ids(&doc).len(), 1, 1);
        if size.is_err() {
            self.check(&c::TFE_PAGE_SIZE, Some(index), size);
            return;
        }
        let mut repeated = Ok(());
        let mut last = index;
        for _attempt in 0..3 {
            let (Some((_, ids_one)), Some((two, ids_two)), Some((_, ids_again))) = (
                self.page_ids(1, 1).await,
                self.page_ids(2, 1).await,
                self.page_ids(1, 1).await,
            ) else {
                return;
            };
            if ids_one != ids_again {
                continue;
            }
            (last, repeated) = (two, c::lists::pages_differ(&ids_one, &ids_two));
            if repeated.is_ok() {
                break;
            }
        }
        if repeated.is_err() {
            self.check(&c::TFE_PAGE_SIZE, Some(last), repeated);
            return;
        }
        match self.page_walk().await {
            Some((index, result)) => self.check(&c::TFE_PAGE_SIZE, Some(index), result),
            None => self.check(&c::TFE_PAGE_SIZE, None, Ok(())),
        };
    }

    /// The ids of one page read with TFE's parameters (`None` when the answer is no list).
    pub(super) async fn page_ids(
        &mut self,
        page: usize,
        size: usize,
    ) -> Option<(usize, Vec<String>)> {
        let request = self.list_request_as(Some((page, size)), true, Paging::Tfe)?;
        let index = self.send(request).await;
        if !self.ex(index).is_success() {
            return None;
        }
        let doc = self.ex(index).json().ok()?;
        doc.get("data")?.as_array()?;
        Some((index, c::list_ids(&doc)))
    }

    /// A walk with a small page size reads every item of the list exactly once
    /// ([`c::lists::partition`]). A list that others change while it is walked shifts its
    /// items across page boundaries, so a walk that missed an item or read one twice counts
    /// only when the list stood still ([`c::lists::walk_shows`]). The walk is tried three times,
    /// then again within the consistency window (`crate::patience`: a list may show a new item
    /// a moment late), before a finding is made. `None` when the list cannot be walked (too
    /// short, too long, or not readable as a list) or moved under every walk: nothing is
    /// judged.
    pub(super) async fn page_walk(&mut self) -> Option<(usize, Result<(), c::Message>)> {
        let mut last = None;
        let mut patience = self.ctx.target.patience();
        for attempt in 0.. {
            let (_, before) = self.page_ids(1, 100).await?;
            if before.len() < 2 || before.len() >= 100 {
                return None;
            }
            let mut walk = Walk::new(before.len().div_ceil(3), MAX_PAGES);
            let mut walked: Vec<String> = Vec::new();
            let mut index = 0;
            while let Some(page) = walk.next_page() {
                let request = self.list_request_as(Some((page, walk.size())), true, Paging::Tfe)?;
                index = self.send(request).await;
                let doc = self
                    .ex(index)
                    .json()
                    .ok()
                    .filter(|_| self.ex(index).is_success())?;
                doc.get("data")?.as_array()?;
                walked.extend(c::item_ids(&walk.read(&doc)));
                if walked.len() >= before.len() + walk.size() {
                    walk.stop();
                }
            }
            let (_, after) = self.page_ids(1, 100).await?;
            let shown = c::lists::walk_shows(&before, &after, &walked, walk.size());
            let ok = shown.as_ref().is_some_and(Result::is_ok);
            if let Some(result) = shown {
                last = Some((index, result));
            }
            if ok || (attempt >= 2 && !patience.again().await) {
                let waited = patience.done(ok);
                return last.map(|(index, result)| (index, c::waited(result, waited)));
            }
        }
        last
    }
}
