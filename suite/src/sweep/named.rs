//! `conform sweep --prefix`: what a run's prefix names, for runs whose ledger is lost
//! (organizations, and user accounts an invitation in flight made), each removed as teardown
//! removes it and reported.

use std::time::{Duration, SystemTime};

use reqwest::Method;
use serde_json::Value;

use super::{report, Tally};
use crate::catalog::{fill_params, path_for, Catalog, Variant};
use crate::cli::SweepArgs;
use crate::clock::parse_rfc3339;
use crate::pages::{Paging, Walk};
use crate::removal::{Reads, Remover};
use crate::target::{Auth, Request, Target};

/// A collection swept by name: what the run's prefix names in it is the run's.
pub(super) struct Named {
    /// The kind, for messages.
    kind: &'static str,
    /// The list, `{prefix}` filled in, without paging parameters.
    list: String,
    /// Where an item's name is.
    name: &'static str,
    /// The delete (and show) path, its `:param` filled with the id.
    item: String,
    /// The credential.
    auth: Auth,
    /// Whether the item can be shown after its delete (`item` is also its show).
    shown: bool,
}

/// Organizations named with the prefix, where the catalog says organizations live.
pub(super) fn organizations(catalog: &Catalog) -> Named {
    let orgs = catalog.organizations();
    Named {
        kind: "organization",
        list: format!("{}?", path_for(&orgs.collection, Variant::ApiV2)),
        name: "/attributes/name",
        item: path_for(&orgs.item, Variant::ApiV2),
        auth: Auth::User,
        shown: true,
    }
}

/// User accounts whose email starts with the prefix (an invitation in flight at a kill makes
/// one the ledger never saw); administrator API.
pub(super) fn users() -> Named {
    Named {
        kind: "user",
        list: path_for("/admin/users?q={prefix}&", Variant::ApiV2),
        name: "/attributes/email",
        item: path_for("/admin/users/:id", Variant::ApiV2),
        auth: Auth::Admin,
        shown: false,
    }
}

/// Sweeps what `named` lists under `prefix` (older than `older_than`, when given).
pub(super) async fn sweep_named(
    args: &SweepArgs,
    target: &Target,
    remover: &mut Remover<'_>,
    (prefix, older_than): (&str, Option<Duration>),
    tally: &mut Tally,
    named: &Named,
) {
    let now = SystemTime::now();
    let mut found = Vec::new();
    let list = named
        .list
        .replace("{prefix}", &crate::catalog::encode_segment(prefix));
    let mut walk = Walk::new(100, crate::pages::MAX_PAGES);
    while let Some(page) = walk.next_page() {
        let query = Paging::Tfe.query(page, walk.size());
        let url = target.url(&format!("{list}{query}"));
        let ex = target
            .send(Request::new(Method::GET, url, named.auth))
            .await;
        let doc = match (ex.is_success(), ex.json()) {
            (true, Ok(doc)) => doc,
            _ => {
                tally.failed.push(format!(
                    "{}s named {prefix}...: listing them failed ({})",
                    named.kind,
                    ex.status()
                        .map(|s| format!("status {s}"))
                        .or_else(|| ex.response.as_ref().err().map(ToString::to_string))
                        .unwrap_or_default()
                ));
                return;
            }
        };
        for item in &walk.read(&doc) {
            let name = item
                .pointer(named.name)
                .or_else(|| item.get("id"))
                .and_then(Value::as_str)
                .unwrap_or("");
            let id = item.get("id").and_then(Value::as_str).unwrap_or(name);
            if name.starts_with(prefix) {
                let created = item
                    .pointer("/attributes/created-at")
                    .and_then(Value::as_str)
                    .and_then(parse_rfc3339);
                found.push((name.to_string(), id.to_string(), created));
            }
        }
    }
    for (name, id, created) in found {
        let what = format!("{} {name}", named.kind);
        if let Some(age) = older_than {
            match created.map(|c| now.duration_since(c).unwrap_or_default()) {
                Some(actual) if actual >= age => {}
                Some(_) => continue,
                None => {
                    println!("left alone: {what} (no created-at, so its age is unknown)");
                    continue;
                }
            }
        }
        if args.dry_run {
            println!("would delete {what}");
            tally.deleted += 1;
            continue;
        }
        let url = target.url(&fill_params(&named.item, &id));
        // listed a moment ago: a 404 to its delete is a missing route, not "gone"
        let show = (url.clone(), named.auth);
        let show = named.shown.then_some(&show);
        // where it was listed: the read that tells whether it is gone, when it has no show
        let listed = (target.url(&list), named.auth);
        let reads = Reads::of(show, Some(&listed), &id);
        let removed = remover
            .remove(named.kind, &(Method::DELETE, url, named.auth), reads, false)
            .await;
        report(&what, remover.settle(show, removed), tally);
    }
}
