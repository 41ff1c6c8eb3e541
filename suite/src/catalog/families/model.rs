//! The data a family is written in, and the model of what should exist.
//!
//! A family is a set of collections (workspaces, configuration versions, runs, ...). Each
//! collection says, as path and body templates, how to create, show, list, update and delete
//! one of its items, and optionally which state machine its items follow. The model keeps
//! every item a sequence made, whether it is deleted, the attributes an update sent and the
//! state its actions should have left it in.
//!
//! Templates take `{org}` (the sequence's organization: its own, or the one given with
//! `--organization`), `{ns}` (its name prefix),
//! `{unique}` (a counter unique in the sequence), `{id}` and `{name}` (the item), `{parent}`
//! and `{parent_name}` (its parent), `{other}` (the item of the collection's `with`).

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::catalog::HttpMethod;

/// A request template.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Route {
    /// HTTP method.
    pub method: HttpMethod,
    /// Path (and query) template, without `/api/v2`.
    pub path: String,
    /// JSON body template, if any.
    #[serde(default)]
    pub body: Option<String>,
}

/// A `GET` of a path template.
pub fn get(path: &str) -> Route {
    Route {
        method: HttpMethod::get(),
        path: path.to_string(),
        body: None,
    }
}

/// An update: the request and the attribute it sets (JSON pointer in the resource object,
/// and the value template, the same as in the body).
#[derive(Debug, Clone)]
pub struct UpdateDef {
    /// The request.
    pub route: Route,
    /// Where the attribute is in the resource object (`/attributes/email`).
    pub pointer: String,
    /// The value the body sends (a template).
    pub value: String,
}

/// How a list treats items the sequence did not make.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Foreign {
    /// Every item must be one the sequence made (a fresh organization holds nothing else).
    #[default]
    Fail,
    /// The installation's list (organizations, administrator users), narrowed to the
    /// sequence's name prefix where the server serves the filter its path carries: an item
    /// whose name (at `name_pointer`) does not start with the prefix belongs to others, and
    /// the list is walked as a shared one (only the sequence's own items are judged).
    Installation,
    /// Items whose `attributes.name` is this value come with the parent (the `owners` team).
    Named(String),
}

/// A transition function: the state an action leads to from a state (`None`: not allowed
/// there).
pub type TransitionFn = fn(&str) -> Option<&'static str>;

/// A state reader: the state a resource object shows (`None`: it does not say).
pub type ReadFn = fn(&serde_json::Value) -> Option<String>;

/// An initial-state function: the state a new item of a collection starts in, from the
/// family, the model and the item's parent (`None`: not known).
pub type InitialFn = fn(&Family, &Model, Option<usize>) -> Option<String>;

/// A guard: whether an action the item's state allows is allowed now, from the family, the
/// model and the item (`Some(false)`: it must be refused; `None`: the model cannot tell, so
/// any answer is taken and the next read tells the state).
pub type GuardFn = fn(&Family, &Model, usize) -> Option<bool>;

/// One action of a state machine: allowed from some states, leading to one.
#[derive(Debug, Clone)]
pub struct ActionDef {
    /// Its name in the report.
    pub name: String,
    /// The request; for an upload the path is ignored and the item's `upload` field is used.
    pub route: Route,
    /// A PUT of a tarball to the upload address the create answer gave.
    pub upload: bool,
    /// States it is allowed from.
    pub from: Vec<String>,
    /// The state it leads to.
    pub to: String,
    /// Outside `from` the service must refuse it (4xx); else it is not specified.
    pub refused_elsewhere: bool,
    /// Instead of `from` / `to`: the state the action leads to from a state (`None`: not
    /// allowed there), for states that combine flags (a user suspended and an administrator).
    pub transition: Option<TransitionFn>,
    /// A boolean in the resource object by which the service says whether the action is
    /// allowed now (TFE's `/attributes/actions/is-discardable`). Read before the action where
    /// the model allows it: `false` makes it refused by the item's state (a run that waits for
    /// a runner that never comes cannot be discarded).
    pub allowed_if: Option<String>,
    /// Where the model allows it by the item's state: a guard on the rest of the model (a
    /// configuration version TFE archives only once a newer one exists), see [`GuardFn`].
    pub allowed_when: Option<GuardFn>,
}

/// The state a new item starts in.
#[derive(Debug, Clone)]
pub enum Initial {
    /// Not known: the first read tells.
    Unknown,
    /// Always this state.
    State(String),
    /// Computed from the model (a run's state from its configuration version).
    Computed(InitialFn),
}

/// The states of a collection's items.
#[derive(Debug, Clone)]
pub struct StateDef {
    /// Where the state is in the resource object (`/attributes/status`).
    pub pointer: String,
    /// The state a new item starts in.
    pub initial: Initial,
    /// Instead of `pointer`: the state a resource object shows (`None`: it does not say).
    pub read: Option<ReadFn>,
    /// The actions.
    pub actions: Vec<ActionDef>,
    /// States the service reaches on its own, some time after the request that leads there
    /// (a run is planned once a runner has planned it): each with the states a read may show
    /// on the way (`planned` through `pending`, `plan_queued`, `planning`).
    pub eventually: BTreeMap<String, Vec<String>>,
}

impl StateDef {
    /// Whether a read showing `seen` is consistent with an item expected in `want` that has
    /// not been seen there yet.
    pub fn on_the_way(&self, want: &str, seen: &str) -> bool {
        self.eventually
            .get(want)
            .is_some_and(|via| via.iter().any(|s| s == seen))
    }

    /// Whether the service reaches `state` on its own (an item expected there is polled for
    /// it before an action whose outcome depends on it).
    pub fn is_eventual(&self, state: &str) -> bool {
        self.eventually.contains_key(state)
    }

    /// The state a new item under `parent` starts in (`None`: not known).
    pub fn initial(&self, family: &Family, model: &Model, parent: Option<usize>) -> Option<String> {
        match &self.initial {
            Initial::Unknown => None,
            Initial::State(s) => Some(s.clone()),
            Initial::Computed(f) => f(family, model, parent),
        }
    }
}

/// Another delete form of a collection (a deprecated form, the spec's other path).
#[derive(Debug, Clone)]
pub struct AltDelete {
    /// The request.
    pub route: Route,
    /// It deletes every live item of the collection with the same `attributes.name` (a
    /// registry module name with all its providers).
    pub same_name: bool,
}

/// A list that is not a JSON:API list: a relationship of the parent's document, or a
/// registry read answer (plain JSON).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListRead {
    /// The path is under the registry read address (`Target::registry_url`), not the API.
    #[serde(default)]
    pub registry: bool,
    /// Where the array of items is (`/data/relationships/workspaces/data`).
    pub items: String,
    /// The member of each array element that names an item (`id`, `version`).
    pub key: String,
    /// The remembered field the key is compared with (`None`: the item id).
    #[serde(default)]
    pub field: Option<String>,
    /// Only items in this state are listed (a registry lists published versions).
    #[serde(default)]
    pub only_state: Option<String>,
    /// The read answers 404 while nothing is listed (a module without published versions).
    #[serde(default)]
    pub absent_when_empty: bool,
}

/// A collection of a family.
#[derive(Debug, Clone)]
pub struct Coll {
    /// Singular name (`workspace`).
    pub kind: String,
    /// The collection its items live in (`None`: the organization).
    pub parent: Option<usize>,
    /// Another collection whose live item the create names (`{other}`), e.g. the workspace
    /// of a team access.
    pub with: Option<usize>,
    /// A collection under the same parent the create needs an item of (a run needs the
    /// workspace's configuration version): without one, the create may be refused (4xx).
    pub needs: Option<usize>,
    /// Create.
    pub create: Route,
    /// Show of one item (`{id}`).
    pub show: Option<String>,
    /// The list of a parent's items.
    pub list: Option<String>,
    /// The list takes `page` and `page_size`.
    pub paged: bool,
    /// Update.
    pub update: Option<UpdateDef>,
    /// Delete (`{id}`).
    pub delete: Option<Route>,
    /// An id of this collection's form that no item has.
    pub unknown_id: String,
    /// Items of lists the sequence did not make.
    pub foreign: Foreign,
    /// Where a list item shows the name the sequence gave it (`{ns}-…`; default
    /// `/attributes/name`): inside a given organization, items of the organization's lists
    /// whose name does not start with the sequence's prefix belong to others.
    pub name_pointer: String,
    /// The list's documented name filter, a query parameter (`search[name]`, `q`): inside a
    /// given organization the list is read narrowed to the sequence's name prefix, so that a
    /// read costs what the sequence's own items cost, not what the shared list holds.
    pub search: Option<String>,
    /// Fields kept from the create answer: (name, JSON pointer).
    pub remember: Vec<(String, String)>,
    /// The state machine, if any.
    pub state: Option<StateDef>,
    /// At most one live item per (parent, `with`) pair: a second create is refused (4xx).
    pub unique_pair: bool,
    /// Another create form (`Op::form` odd picks it), e.g. the deprecated one.
    pub create_alt: Option<Route>,
    /// Another show form that must show the same resource (`Op::form` odd shows through it).
    pub show_alt: Option<String>,
    /// Other delete forms (`Op::form` picks among `delete` and these).
    pub delete_alt: Vec<AltDelete>,
    /// Where the create answer holds the item's id.
    pub id_pointer: String,
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

/// A family: one libtest trial, `sequences::<name>`. Read from `cases/sequences/<name>.toml`
/// (see [`super::file`]).
#[derive(Debug, Clone)]
pub struct Family {
    /// Test name suffix.
    pub name: String,
    /// Sequences work in an organization: one of their own each, or the one given with
    /// `--organization` (false: the collection is organizations).
    pub namespace: bool,
    /// Values the user must give, as an endpoint's `requires` (`notification_url`): without
    /// them the family is skipped with the reason; given, its templates may name them.
    pub requires: Vec<String>,
    /// The collections.
    pub colls: Vec<Coll>,
}

impl Family {
    /// The index of the collection of that kind.
    pub fn coll_index(&self, kind: &str) -> Option<usize> {
        self.colls.iter().position(|c| c.kind == kind)
    }
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
    pub expect: BTreeMap<String, String>,
    /// The state it should be in (`None`: not known).
    pub state: Option<String>,
    /// A read has shown it in `state` (false while the service has yet to get it to a state
    /// it reaches on its own, see [`StateDef::eventually`]).
    pub reached: bool,
    /// While not `reached`: the state the last read showed on the way there.
    pub seen: Option<String>,
    /// Remembered fields of the create answer.
    pub fields: BTreeMap<String, String>,
    /// The step that made it (1-based).
    pub step: usize,
}

/// What should exist.
#[derive(Debug, Clone, Default)]
pub struct Model {
    /// Every item made, in order.
    pub items: Vec<Item>,
}

impl Item {
    /// The state the item is in as far as the model knows: the expected one once a read has
    /// shown it, else the one last seen on the way there (`None`: not known).
    pub fn current_state(&self) -> Option<&str> {
        if self.reached {
            self.state.as_deref()
        } else {
            self.seen.as_deref()
        }
    }
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
