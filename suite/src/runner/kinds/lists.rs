//! The checks of a list after its request: the run's own items found in it, paging, the
//! filters TFE serves, the `include` names it refuses, the filters it requires.

use reqwest::Method;
use serde_json::Value;

use crate::checks as c;
use crate::checks::answer::Judgement;
use crate::fixtures::auth_for;
use crate::runner::{TestRun, MAX_PAGES};
use crate::target::Request;

impl TestRun<'_> {
    pub(in crate::runner) async fn after_list(&mut self, main: usize, judged: &[Judgement]) {
        let Some(doc) = self.main_document(main, judged) else {
            return;
        };
        if !c::answer::held(judged, &c::ENVELOPE_LIST) {
            return;
        }
        if let Some(kind) = self.endpoint.expect.contains.clone() {
            if let Some(wanted) = self.scope.get(&kind).map(|i| i.id.clone()) {
                let mut patience = self.ctx.target.patience();
                let (mut at, mut fresh) = (main, None::<Value>);
                while let Some((ids, last)) = self
                    .find_own_in_list(at, fresh.as_ref().unwrap_or(&doc), &wanted)
                    .await
                {
                    let held = ids.iter().any(|id| id == &wanted);
                    if held || !patience.again().await {
                        let result = c::lists::holds(&ids, &wanted, &kind);
                        let result = c::waited(result, patience.done(held));
                        self.check(&c::LIST_CONTAINS, Some(last), result);
                        break;
                    }
                    // the list may show the item a moment late: its first page again
                    let Ok(request) = self.main_request(&self.case.path, "GET", true) else {
                        break;
                    };
                    at = self.send(request).await;
                    let Ok(read) = self.ex(at).json() else { break };
                    fresh = Some(read);
                }
            }
        }
        if self.endpoint.paged {
            self.paging(main).await;
        }
        if self.endpoint.expect.unpaginated && !self.endpoint.paged {
            let result = c::lists::unpaginated(&doc);
            self.check(&c::TFE_UNPAGINATED, Some(main), result);
        }
        self.required_filters().await;
        self.list_filters().await;
        self.include_refused().await;
        self.variants_agree(main, &doc).await;
        self.unauthorized().await;
    }

    /// The list test's look for the run's own item `wanted`: its first page (`main`, `doc`),
    /// then the list narrowed by its filter (`finds` in `cases/`), then the whole list, walked
    /// once more from the start before the item counts as absent (a list that others change
    /// while it is walked can move an item across a page boundary). The ids seen and the
    /// index of the last page read; `None` when the walk stopped at its bound (not observed).
    pub(in crate::runner) async fn find_own_in_list(
        &mut self,
        main: usize,
        doc: &Value,
        wanted: &str,
    ) -> Option<(Vec<String>, usize)> {
        let first = c::list_ids(doc);
        if first.iter().any(|id| id == wanted) {
            return Some((first, main));
        }
        let request = self.main_request(&self.case.path, "GET", true).ok();
        if let Some(request) = &request {
            let endpoint = self.endpoint.clone();
            if let Some((last, Some(_))) = self.find_by_filter(&endpoint, request, wanted).await {
                return Some((vec![wanted.to_string()], last));
            }
        }
        let (ids, last) = self.find_in_list(main, doc, wanted).await?;
        if ids.iter().any(|id| id == wanted) {
            return Some((ids, last));
        }
        let Some(request) = request else {
            return Some((ids, last));
        };
        let again = self.send(request).await;
        match self.ex(again).json() {
            Ok(fresh) => self.find_in_list(again, &fresh, wanted).await,
            Err(_) => Some((ids, last)),
        }
    }

    /// The ids of the list up to `wanted`, following `links.next` (or, where the list gives
    /// none, the next page number: [`crate::pages::numbered_next`]; bounded), and the index
    /// of the last page read. When the walk stops at its bound with pages left and without
    /// `wanted`, `None`: whether the list holds it is not seen (`unobserved` says so).
    pub(in crate::runner) async fn find_in_list(
        &mut self,
        main: usize,
        doc: &Value,
        wanted: &str,
    ) -> Option<(Vec<String>, usize)> {
        let mut doc = doc.clone();
        let mut last = main;
        let mut ids: Vec<String> = Vec::new();
        let paging = crate::pages::Paging::of(self.ctx.profile);
        let mut numbered = false;
        let mut previous: Vec<String> = Vec::new();
        for page in 1..=MAX_PAGES {
            let on_page = c::list_ids(&doc);
            if page > 1 && !on_page.is_empty() && on_page == previous {
                // a page that repeats the one before: the list ignores paging and answers
                // the whole list on every page, which the first page already showed
                return Some((ids, last));
            }
            let new: Vec<String> = on_page
                .iter()
                .filter(|id| !ids.contains(id))
                .cloned()
                .collect();
            previous = on_page;
            if numbered && new.is_empty() {
                // a page asked for by number with nothing new: the list ignores the number
                return Some((ids, last));
            }
            ids.extend(new);
            if ids.iter().any(|id| id == wanted) {
                return Some((ids, last));
            }
            let current = url::Url::parse(&self.ex(last).request.url).ok();
            let linked = crate::pages::next_link(&doc)
                .map(|n| url::Url::parse(n).unwrap_or_else(|_| self.ctx.target.url(n)));
            numbered = linked.is_none();
            let next = linked.or_else(|| {
                current
                    .and_then(|current| crate::pages::numbered_next(&doc, &current, page, paging))
            });
            let Some(next) = next else {
                return Some((ids, last));
            };
            if !self.ctx.target.same_origin(&next) {
                return Some((ids, last));
            }
            last = self
                .send(Request::new(Method::GET, next, auth_for("")))
                .await;
            match self.ex(last).json() {
                Ok(d) if self.ex(last).is_success() => doc = d,
                _ => return Some((ids, last)),
            }
        }
        let why = format!(
            "whether the list holds {wanted} (not looked for past page {MAX_PAGES} of a list \
             its filter does not narrow)"
        );
        if !self.unobserved.contains(&why) {
            self.unobserved.push(why);
        }
        None
    }

    /// TFE's filters (`narrows` in cases/): the list sent with each, naming the run's own
    /// item, holds it (pages walked up to it), and an `exact` one holds nothing else (checked
    /// once per endpoint, in the canonical form).
    pub(in crate::runner) async fn list_filters(&mut self) {
        if !self.in_canonical_form() {
            return;
        }
        let Some(kind) = self.endpoint.expect.contains.clone() else {
            return;
        };
        let Some(wanted) = self.scope.get(&kind).map(|i| i.id.clone()) else {
            return;
        };
        let filters: Vec<(String, String, bool)> = self
            .endpoint
            .query
            .iter()
            .filter_map(|q| Some((q.name.clone(), q.narrows.clone()?, q.exact)))
            .collect();
        for (name, template, exact) in filters {
            let what = format!("{} ({name})", c::TFE_LIST_FILTER.id);
            let Ok(value) = self.ctx.fixtures.fill_text(&template, &self.scope) else {
                self.notes.push(format!(
                    "{what}: not evaluated, its value could not be filled"
                ));
                continue;
            };
            let Some(mut request) = self.list_request(None, true) else {
                return;
            };
            request.url.query_pairs_mut().append_pair(&name, &value);
            let index = self.send(request).await;
            let filter = format!("{name}={value}");
            let answered = c::answered_json(self.ex(index), "a list");
            let (ids, last) = match &answered {
                Ok(doc) if exact => (c::list_ids(doc), index),
                Ok(doc) => match self.find_in_list(index, &doc.clone(), &wanted).await {
                    Some(found) => found,
                    None => continue,
                },
                Err(_) => (Vec::new(), index),
            };
            let result = c::lists::filtered(answered.map(|_| ()), &ids, &wanted, exact, &filter);
            self.check(&c::TFE_LIST_FILTER, Some(last), result);
        }
    }

    /// TFE: a read with an `include` name the resource does not take is answered 400
    /// (`expect.refuses_include`; once per endpoint, in the canonical form).
    pub(in crate::runner) async fn include_refused(&mut self) {
        let Some(name) = self.endpoint.expect.refuses_include.clone() else {
            return;
        };
        if !self.in_canonical_form() {
            return;
        }
        let Ok(mut request) = self.main_request(&self.case.path, "GET", true) else {
            return;
        };
        request.url.query_pairs_mut().append_pair("include", &name);
        let index = self.send(request).await;
        let result = c::answered(
            self.ex(index).status(),
            400,
            &format!("with include={name}, a name it does not take"),
        );
        if self.check(&c::TFE_INCLUDE_REFUSED, Some(index), result) {
            self.error_document(index);
        }
    }

    pub(in crate::runner) async fn required_filters(&mut self) {
        if !self.endpoint.query.iter().any(|q| q.required) || !self.in_canonical_form() {
            return;
        }
        let Some(request) = self.list_request(None, false) else {
            return;
        };
        let index = self.send(request).await;
        let result = c::answered(self.ex(index).status(), 400, "without the required filter");
        if self.check(&c::TFE_REQUIRED_FILTER, Some(index), result) {
            self.error_document(index);
        }
    }
}
