//! The data a family is written in, and the model of what should exist.
//!
//! A family is a set of collections (workspaces, configuration versions, runs, ...). Each
//! collection says, as path and body templates, how to create, show, list, update and delete
//! one of its items, and optionally which state machine its items follow. The model keeps
//! every item a sequence made, whether it is deleted, the attributes an update sent and the
//! state its actions should have left it in.
//!
//! Templates take `{org}` (the sequence's organization), `{ns}` (its name prefix),
//! `{unique}` (a counter unique in the sequence), `{id}` and `{name}` (the item), `{parent}`
//! and `{parent_name}` (its parent), `{other}` (the item of the collection's `with`).

use std::collections::BTreeMap;

/// A request template.
#[derive(Debug, Clone, Copy)]
pub struct Route {
    /// HTTP method.
    pub method: &'static str,
    /// Path (and query) template, without `/api/v2`.
    pub path: &'static str,
    /// JSON body template, if any.
    pub body: Option<&'static str>,
}

/// A `GET` of a path template.
pub const fn get(path: &'static str) -> Route {
    Route {
        method: "GET",
        path,
        body: None,
    }
}

/// A request with a method, path template and optional body template.
pub const fn route(method: &'static str, path: &'static str, body: Option<&'static str>) -> Route {
    Route { method, path, body }
}

/// An update: the request and the attribute it sets (JSON pointer in the resource object,
/// and the value template, the same as in the body).
#[derive(Debug, Clone, Copy)]
pub struct UpdateDef {
    /// The request.
    pub route: Route,
    /// Where the attribute is in the resource object (`/attributes/email`).
    pub pointer: &'static str,
    /// The value the body sends (a template).
    pub value: &'static str,
}

/// How a list treats items the sequence did not make.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Foreign {
    /// Every item must be one the sequence made (a fresh organization holds nothing else).
    Fail,
    /// Items whose id does not start with the sequence's name prefix belong to others.
    OutsidePrefix,
    /// Items whose `attributes.name` is this value come with the parent (the `owners` team).
    Named(&'static str),
}

/// One action of a state machine: allowed from some states, leading to one.
#[derive(Debug, Clone, Copy)]
pub struct ActionDef {
    /// Its name in the report.
    pub name: &'static str,
    /// The request; for an upload the path is ignored and the item's `upload` field is used.
    pub route: Route,
    /// A PUT of a tarball to the upload address the create answer gave.
    pub upload: bool,
    /// States it is allowed from.
    pub from: &'static [&'static str],
    /// The state it leads to.
    pub to: &'static str,
    /// Outside `from` the service must refuse it (4xx); else it is not specified.
    pub refused_elsewhere: bool,
    /// Instead of `from` / `to`: the state the action leads to from a state (`None`: not
    /// allowed there), for states that combine flags (a user suspended and an administrator).
    pub transition: Option<fn(&str) -> Option<&'static str>>,
}

/// The states of a collection's items.
#[derive(Debug, Clone, Copy)]
pub struct StateDef {
    /// Where the state is in the resource object (`/attributes/status`).
    pub pointer: &'static str,
    /// The state a new item starts in (`None`: not known; the first read tells).
    pub initial: fn(&Model, Option<usize>) -> Option<String>,
    /// Instead of `pointer`: the state a resource object shows (`None`: it does not say).
    pub read: Option<fn(&serde_json::Value) -> Option<String>>,
    /// The actions.
    pub actions: &'static [ActionDef],
}

/// Another delete form of a collection (a deprecated form, the spec's other path).
#[derive(Debug, Clone, Copy)]
pub struct AltDelete {
    /// The request.
    pub route: Route,
    /// It deletes every live item of the collection with the same `attributes.name` (a
    /// registry module name with all its providers).
    pub same_name: bool,
}

/// A list that is not a JSON:API list: a relationship of the parent's document, or a
/// registry read answer (plain JSON).
#[derive(Debug, Clone, Copy)]
pub struct ListRead {
    /// The path is under the registry read address (`Target::registry_url`), not the API.
    pub registry: bool,
    /// Where the array of items is (`/data/relationships/workspaces/data`).
    pub items: &'static str,
    /// The member of each array element that names an item (`id`, `version`).
    pub key: &'static str,
    /// The remembered field the key is compared with (`None`: the item id).
    pub field: Option<&'static str>,
    /// Only items in this state are listed (a registry lists published versions).
    pub only_state: Option<&'static str>,
    /// The read answers 404 while nothing is listed (a module without published versions).
    pub absent_when_empty: bool,
}

/// A collection of a family.
#[derive(Debug, Clone, Copy)]
pub struct Coll {
    /// Singular name (`workspace`).
    pub kind: &'static str,
    /// The collection its items live in (`None`: the organization).
    pub parent: Option<usize>,
    /// Another collection whose live item the create names (`{other}`), e.g. the workspace
    /// of a team access.
    pub with: Option<usize>,
    /// Create.
    pub create: Route,
    /// Show of one item (`{id}`).
    pub show: Option<&'static str>,
    /// The list of a parent's items.
    pub list: Option<&'static str>,
    /// The list takes `page` and `page_size`.
    pub paged: bool,
    /// Update.
    pub update: Option<UpdateDef>,
    /// Delete (`{id}`).
    pub delete: Option<Route>,
    /// An id of this collection's form that no item has.
    pub unknown_id: &'static str,
    /// Items of lists the sequence did not make.
    pub foreign: Foreign,
    /// Fields kept from the create answer: (name, JSON pointer).
    pub remember: &'static [(&'static str, &'static str)],
    /// The state machine, if any.
    pub state: Option<StateDef>,
    /// At most one live item per (parent, `with`) pair: a second create is refused (4xx).
    pub unique_pair: bool,
    /// Another create form (`Op::form` odd picks it), e.g. the deprecated one.
    pub create_alt: Option<Route>,
    /// Another show form that must show the same resource (`Op::form` odd shows through it).
    pub show_alt: Option<&'static str>,
    /// Other delete forms (`Op::form` picks among `delete` and these).
    pub delete_alt: &'static [AltDelete],
    /// Where the create answer holds the item's id.
    pub id_pointer: &'static str,
    /// Every request but the create needs the administrator token.
    pub admin: bool,
    /// The show is a search (`?q={email}`): a list that must hold exactly the item.
    pub show_list: bool,
    /// The list is read from another document (see [`ListRead`]).
    pub list_read: Option<ListRead>,
    /// Items are links between the parent and the `with` item: create and delete answer no
    /// document, the item's id is the `with` item's; linking again is idempotent and a link
    /// made again after an unlink is the same item.
    pub relation: bool,
    /// Deleting the last live item of a parent deletes the parent (a module's last version).
    pub last_takes_parent: bool,
    /// Run at the end of a sequence for every live item (things the organization's deletion
    /// does not take along, e.g. users).
    pub cleanup: Option<Route>,
    /// How often its operations are drawn (0: 2 for the organization's collections, 1 for
    /// those below them).
    pub weight: usize,
}

impl Coll {
    /// A collection with only a create; the rest is filled in with struct update syntax.
    pub const fn new(kind: &'static str, create: Route) -> Self {
        Self {
            kind,
            parent: None,
            with: None,
            create,
            show: None,
            list: None,
            paged: false,
            update: None,
            delete: None,
            unknown_id: "conform-unknown-0000",
            foreign: Foreign::Fail,
            remember: &[],
            state: None,
            unique_pair: false,
            create_alt: None,
            show_alt: None,
            delete_alt: &[],
            id_pointer: "/data/id",
            admin: false,
            show_list: false,
            list_read: None,
            relation: false,
            last_takes_parent: false,
            cleanup: None,
            weight: 0,
        }
    }
}

/// A family: one libtest trial, `sequences::<name>`.
#[derive(Debug, Clone, Copy)]
pub struct Family {
    /// Test name suffix.
    pub name: &'static str,
    /// Sequences work in a fresh organization (else the collection is organizations).
    pub namespace: bool,
    /// The collections.
    pub colls: &'static [Coll],
}

/// One item a sequence made.
#[derive(Debug, Clone)]
pub struct Item {
    /// Its collection.
    pub coll: usize,
    /// Its id.
    pub id: String,
    /// `attributes.name`, when it has one.
    pub name: Option<String>,
    /// Its parent item.
    pub parent: Option<usize>,
    /// The item of the collection's `with`.
    pub other: Option<usize>,
    /// Deleted by the sequence.
    pub deleted: bool,
    /// Attributes an update set: pointer -> value.
    pub expect: BTreeMap<&'static str, String>,
    /// The state it should be in (`None`: not known).
    pub state: Option<String>,
    /// Remembered fields of the create answer.
    pub fields: BTreeMap<&'static str, String>,
    /// The step that made it (1-based).
    pub step: usize,
}

/// What should exist.
#[derive(Debug, Clone, Default)]
pub struct Model {
    /// Every item made, in order.
    pub items: Vec<Item>,
}

impl Model {
    /// True when the item and all its ancestors (and its `with` item) exist.
    pub fn live(&self, index: usize) -> bool {
        let item = &self.items[index];
        !item.deleted
            && item.parent.is_none_or(|p| self.live(p))
            && item.other.is_none_or(|o| self.live(o))
    }

    /// Indices of the items of a collection, oldest first.
    pub fn of(&self, coll: usize) -> Vec<usize> {
        (0..self.items.len())
            .filter(|&i| self.items[i].coll == coll)
            .collect()
    }

    /// Indices of the live items of a collection.
    pub fn live_of(&self, coll: usize) -> Vec<usize> {
        self.of(coll)
            .into_iter()
            .filter(|&i| self.live(i))
            .collect()
    }

    /// The item with that id in a collection.
    pub fn find(&self, coll: usize, id: &str) -> Option<usize> {
        self.of(coll).into_iter().find(|&i| self.items[i].id == id)
    }

    /// The newest item of `coll` under `parent`.
    pub fn newest_under(&self, coll: usize, parent: usize) -> Option<usize> {
        self.of(coll)
            .into_iter()
            .rev()
            .find(|&i| self.items[i].parent == Some(parent))
    }

    /// `#n` of an item within its collection, for the report.
    pub fn ordinal(&self, index: usize) -> usize {
        let coll = self.items[index].coll;
        self.of(coll).iter().position(|&i| i == index).unwrap_or(0)
    }
}
