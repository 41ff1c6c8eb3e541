//! `cases/sequences/<family>.toml`: a family as data (format in `cases/README.md`,
//! "sequences/"). Collections name each other by `kind`; functions are named from
//! [`super::named`].

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;

use crate::catalog::HttpMethod;

use super::model::{
    ActionDef, AltDelete, Coll, Family, Foreign, Initial, ListRead, Route, StateDef, UpdateDef,
};
use super::named;

/// The file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FamilyFile {
    family: String,
    #[serde(default = "yes")]
    namespace: bool,
    #[serde(default)]
    requires: Vec<String>,
    collections: Vec<CollFile>,
}

fn yes() -> bool {
    true
}

fn unknown_id() -> String {
    "conform-unknown-0000".into()
}

fn id_pointer() -> String {
    "/data/id".into()
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CollFile {
    kind: String,
    #[serde(default)]
    parent: Option<String>,
    #[serde(default)]
    with: Option<String>,
    #[serde(default)]
    needs: Option<String>,
    #[serde(default)]
    weight: usize,
    create: Route,
    #[serde(default)]
    create_alt: Option<Route>,
    #[serde(default)]
    id_pointer: Option<String>,
    #[serde(default)]
    show: Option<String>,
    #[serde(default)]
    show_alt: Option<String>,
    #[serde(default)]
    show_list: bool,
    #[serde(default)]
    list: Option<String>,
    #[serde(default)]
    paged: bool,
    #[serde(default)]
    list_read: Option<ListRead>,
    #[serde(default)]
    foreign: Foreign,
    #[serde(default)]
    name_pointer: Option<String>,
    #[serde(default)]
    search: Option<String>,
    #[serde(default)]
    update: Option<UpdateFile>,
    #[serde(default)]
    delete: Option<Route>,
    #[serde(default)]
    delete_alt: Vec<AltDeleteFile>,
    #[serde(default)]
    cleanup: Option<Route>,
    #[serde(default = "unknown_id")]
    unknown_id: String,
    #[serde(default)]
    remember: BTreeMap<String, String>,
    #[serde(default)]
    unique_pair: bool,
    #[serde(default)]
    relation: bool,
    #[serde(default)]
    last_takes_parent: bool,
    #[serde(default)]
    admin: bool,
    #[serde(default)]
    state: Option<StateFile>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct UpdateFile {
    method: HttpMethod,
    path: String,
    #[serde(default)]
    body: Option<String>,
    pointer: String,
    value: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct AltDeleteFile {
    method: HttpMethod,
    path: String,
    #[serde(default)]
    body: Option<String>,
    #[serde(default)]
    same_name: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct StateFile {
    pointer: String,
    #[serde(default)]
    initial: Option<String>,
    #[serde(default)]
    initial_from: Option<String>,
    #[serde(default)]
    read: Option<String>,
    #[serde(default)]
    eventually: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    actions: Vec<ActionFile>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ActionFile {
    name: String,
    #[serde(default)]
    method: Option<HttpMethod>,
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    body: Option<String>,
    #[serde(default)]
    upload: bool,
    #[serde(default)]
    from: Vec<String>,
    #[serde(default)]
    to: Option<String>,
    #[serde(default)]
    refused_elsewhere: bool,
    #[serde(default)]
    transition: Option<String>,
    #[serde(default)]
    allowed_if: Option<String>,
    #[serde(default)]
    allowed_when: Option<String>,
}

/// Reads a family file; `name` is the file's stem, which must be the `family` it declares.
/// The error says what is wrong (the caller names the file).
pub fn parse(name: &str, text: &str) -> Result<Family, String> {
    let file: FamilyFile = toml::from_str(text).map_err(|e| e.to_string())?;
    if file.family != name {
        return Err(format!(
            "`family = \"{}\"` differs from the file name `{name}`",
            file.family
        ));
    }
    if file.collections.is_empty() {
        return Err("no `[[collections]]`".into());
    }
    let mut kinds = BTreeSet::new();
    for c in &file.collections {
        if !kinds.insert(c.kind.as_str()) {
            return Err(format!("collection `{}` defined twice", c.kind));
        }
    }
    let mut colls = Vec::new();
    for c in &file.collections {
        colls.push(collection(c, &file, &kinds)?);
    }
    Ok(Family {
        name: file.family,
        namespace: file.namespace,
        requires: file.requires,
        colls,
    })
}

/// One collection of a family file, its references resolved and its routes checked.
fn collection(c: &CollFile, file: &FamilyFile, kinds: &BTreeSet<&str>) -> Result<Coll, String> {
    let index = |kind: &str, key: &str, of: &str| {
        file.collections
            .iter()
            .position(|c| c.kind == kind)
            .ok_or_else(|| {
                let names: Vec<&str> = kinds.iter().copied().collect();
                format!(
                    "collection `{of}`: `{key} = \"{kind}\"` names no collection of the file; kinds: {}",
                    names.join(", ")
                )
            })
    };
    let at = |m: String| format!("collection `{}`: {m}", c.kind);
    let parent = c
        .parent
        .as_deref()
        .map(|p| index(p, "parent", &c.kind))
        .transpose()?;
    let with = c
        .with
        .as_deref()
        .map(|w| index(w, "with", &c.kind))
        .transpose()?;
    let needs = c
        .needs
        .as_deref()
        .map(|n| index(n, "needs", &c.kind))
        .transpose()?;
    check_routes(c, file.namespace).map_err(at)?;
    let update = update_def(c).map_err(at)?;
    let delete_alt = delete_alts(c).map_err(at)?;
    if c.relation && with.is_none() {
        return Err(at("`relation = true` needs `with`".into()));
    }
    if c.show_list && c.show.is_none() {
        return Err(at("`show_list = true` needs `show`".into()));
    }
    let state = c
        .state
        .as_ref()
        .map(|s| state(s, kinds))
        .transpose()
        .map_err(at)?;
    Ok(Coll {
        kind: c.kind.clone(),
        parent,
        with,
        needs,
        create: c.create.clone(),
        show: c.show.clone(),
        list: c.list.clone(),
        paged: c.paged,
        update,
        delete: c.delete.clone(),
        unknown_id: c.unknown_id.clone(),
        foreign: c.foreign.clone(),
        name_pointer: c
            .name_pointer
            .clone()
            .unwrap_or_else(|| "/attributes/name".into()),
        search: c.search.clone(),
        remember: c
            .remember
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        state,
        unique_pair: c.unique_pair,
        create_alt: c.create_alt.clone(),
        show_alt: c.show_alt.clone(),
        delete_alt,
        id_pointer: c.id_pointer.clone().unwrap_or_else(id_pointer),
        admin: c.admin,
        show_list: c.show_list,
        list_read: c.list_read.clone(),
        relation: c.relation,
        last_takes_parent: c.last_takes_parent,
        cleanup: c.cleanup.clone(),
        weight: c.weight,
    })
}

/// Every route of a collection is well formed; in a family with a namespace, every name its
/// bodies give is in it.
fn check_routes(c: &CollFile, namespace: bool) -> Result<(), String> {
    check_route(&c.create, "create")?;
    if namespace {
        for (key, body) in [
            ("create", c.create.body.as_deref()),
            (
                "create_alt",
                c.create_alt.as_ref().and_then(|r| r.body.as_deref()),
            ),
            ("update", c.update.as_ref().and_then(|u| u.body.as_deref())),
        ] {
            names_in_namespace(key, body)?;
        }
    }
    if let Some(p) = c.name_pointer.as_deref().filter(|p| !p.starts_with('/')) {
        return Err(format!(
            "`name_pointer = \"{p}\"` is not a JSON pointer (one starts with `/`)"
        ));
    }
    for (key, r) in [
        ("create_alt", &c.create_alt),
        ("delete", &c.delete),
        ("cleanup", &c.cleanup),
    ] {
        if let Some(r) = r {
            check_route(r, key)?;
        }
    }
    Ok(())
}

/// The collection's `update`, its route checked.
fn update_def(c: &CollFile) -> Result<Option<UpdateDef>, String> {
    c.update
        .as_ref()
        .map(|u| {
            let route = Route {
                method: u.method.clone(),
                path: u.path.clone(),
                body: u.body.clone(),
            };
            check_route(&route, "update")?;
            Ok::<_, String>(UpdateDef {
                route,
                pointer: u.pointer.clone(),
                value: u.value.clone(),
            })
        })
        .transpose()
}

/// The collection's other ways to delete, their routes checked.
fn delete_alts(c: &CollFile) -> Result<Vec<AltDelete>, String> {
    let mut delete_alt = Vec::new();
    for d in &c.delete_alt {
        let route = Route {
            method: d.method.clone(),
            path: d.path.clone(),
            body: d.body.clone(),
        };
        check_route(&route, "delete_alt")?;
        delete_alt.push(AltDelete {
            route,
            same_name: d.same_name,
        });
    }
    Ok(delete_alt)
}

fn state(s: &StateFile, kinds: &BTreeSet<&str>) -> Result<StateDef, String> {
    let initial = match (&s.initial, &s.initial_from) {
        (Some(_), Some(_)) => {
            return Err("state: give `initial` or `initial_from`, not both".into());
        }
        (Some(state), None) => Initial::State(state.clone()),
        (None, Some(name)) => {
            let (_, f, needs) =
                named::lookup(named::INITIAL, |e| e.0, "state.initial_from function", name)?;
            if let Some(missing) = needs.iter().find(|k| !kinds.contains(*k)) {
                return Err(format!(
                    "state: `initial_from = \"{name}\"` reads the collection `{missing}`, which the file does not have"
                ));
            }
            Initial::Computed(f)
        }
        (None, None) => Initial::Unknown,
    };
    let read = s
        .read
        .as_deref()
        .map(|name| named::lookup(named::READ, |e| e.0, "state.read function", name).map(|e| e.1))
        .transpose()?;
    let mut actions = Vec::new();
    let mut names = BTreeSet::new();
    for a in &s.actions {
        if !names.insert(a.name.as_str()) {
            return Err(format!("action `{}`: defined twice", a.name));
        }
        actions.push(action(a)?);
    }
    if let Some(p) = s
        .actions
        .iter()
        .filter_map(|a| a.allowed_if.as_deref())
        .find(|p| !p.starts_with('/'))
    {
        return Err(format!(
            "`allowed_if = \"{p}\"` is not a JSON pointer (one starts with `/`)"
        ));
    }
    if let Some((to, _)) = s.eventually.iter().find(|(_, via)| via.is_empty()) {
        return Err(format!(
            "state: `eventually.{to}` lists no state a read may show on the way there"
        ));
    }
    Ok(StateDef {
        pointer: s.pointer.clone(),
        initial,
        read,
        actions,
        eventually: s.eventually.clone(),
    })
}

/// One action of a state machine: its route (or upload), its transition and its guard.
fn action(a: &ActionFile) -> Result<ActionDef, String> {
    let at = |m: String| format!("action `{}`: {m}", a.name);
    let route = if a.upload {
        if a.method.is_some() || a.path.is_some() || a.body.is_some() {
            return Err(at(
                "an upload (`upload = true`) PUTs a tarball to the item's `upload` field: no `method`, `path` or `body`".into(),
            ));
        }
        Route {
            method: HttpMethod::parse("PUT")?,
            path: String::new(),
            body: None,
        }
    } else {
        let route = Route {
            method: match a.method.clone() {
                Some(method) => method,
                None => HttpMethod::parse("POST")?,
            },
            path: a
                .path
                .clone()
                .ok_or_else(|| at("`path` is required (or `upload = true`)".into()))?,
            body: a.body.clone(),
        };
        check_route(&route, "action").map_err(at)?;
        route
    };
    let transition = match &a.transition {
        Some(name) => {
            if !a.from.is_empty() || a.to.is_some() {
                return Err(at("give `transition` or `from` / `to`, not both".into()));
            }
            Some(
                named::lookup(named::TRANSITIONS, |e| e.0, "transition function", name)
                    .map_err(at)?
                    .1,
            )
        }
        None => {
            if a.from.is_empty() != a.to.is_none() {
                return Err(at("`from` and `to` go together".into()));
            }
            None
        }
    };
    Ok(ActionDef {
        name: a.name.clone(),
        route,
        upload: a.upload,
        from: a.from.clone(),
        to: a.to.clone().unwrap_or_default(),
        refused_elsewhere: a.refused_elsewhere,
        transition,
        allowed_if: a.allowed_if.clone(),
        allowed_when: match &a.allowed_when {
            Some(name) => Some(
                named::lookup(named::GUARDS, |e| e.0, "guard function", name)
                    .map_err(at)?
                    .1,
            ),
            None => None,
        },
    })
}

/// In a family with a namespace, every `"name"` and `"email"` a body gives starts with
/// `{ns}-`: that prefix keeps a sequence's items apart from everything else in the
/// organization it works in (other sequences, other people's items in a given organization).
fn names_in_namespace(key: &str, body: Option<&str>) -> Result<(), String> {
    let Some(body) = body else { return Ok(()) };
    for field in ["\"name\":\"", "\"email\":\""] {
        for (at, _) in body.match_indices(field) {
            let value = &body[at + field.len()..];
            if !value.starts_with("{ns}-") {
                let shown: String = value.chars().take_while(|c| *c != '"').collect();
                return Err(format!(
                    "`{key}`: {field}{shown}\" does not start with `{{ns}}-` (the sequence's name prefix keeps its items apart from everything else in the organization)"
                ));
            }
        }
    }
    Ok(())
}

fn check_route(route: &Route, key: &str) -> Result<(), String> {
    if let Some(body) = &route.body {
        // Placeholders stand inside JSON strings, so a template is JSON as written.
        serde_json::from_str::<serde_json::Value>(body)
            .map_err(|e| format!("`{key}`: body is not JSON: {e}"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::parse;

    const THINGS: &str = r#"
family = "things"

[[collections]]
kind = "thing"
create = { method = "POST", path = "/organizations/{org}/things", body = '{"data":{"type":"things","attributes":{"name":"{ns}-t{unique}"}}}' }
show = "/things/{id}"
"#;

    const STATE: &str = "[collections.state]\npointer = \"/attributes/status\"\ninitial = \"a\"\n";

    #[test]
    fn names_in_a_namespace_start_with_its_prefix() {
        let f = parse("things", THINGS).unwrap();
        assert_eq!(f.colls[0].name_pointer, "/attributes/name");
        let e = parse("things", &THINGS.replace("{ns}-t{unique}", "t{unique}")).unwrap_err();
        assert!(
            e.contains(
                "collection `thing`: `create`: \"name\":\"t{unique}\" does not start with `{ns}-`"
            ),
            "{e}"
        );
        // the organizations family names organizations, not items of one: `{ns}` ends in `-`
        let orgs = THINGS.replace("{ns}-t{unique}", "{ns}{unique}");
        assert!(parse("things", &orgs).is_err());
        assert!(parse("things", &format!("namespace = false\n{orgs}")).is_ok());
        let e = parse(
            "things",
            &format!("{THINGS}name_pointer = \"attributes/name\"\n"),
        )
        .unwrap_err();
        assert!(e.contains("not a JSON pointer"), "{e}");
    }

    #[test]
    fn eventual_states_and_action_flags_are_read() {
        let text = format!(
            "{THINGS}{STATE}eventually = {{ b = [\"a\", \"a2\"] }}\n\n\
             [[collections.state.actions]]\nname = \"go\"\npath = \"/things/{{id}}/go\"\n\
             allowed_if = \"/attributes/actions/can-go\"\nfrom = [\"b\"]\nto = \"c\"\n"
        );
        let f = parse("things", &text).unwrap();
        let state = f.colls[0].state.as_ref().unwrap();
        assert!(state.is_eventual("b") && !state.is_eventual("c"));
        assert!(state.on_the_way("b", "a2") && !state.on_the_way("b", "c"));
        assert_eq!(
            state.actions[0].allowed_if.as_deref(),
            Some("/attributes/actions/can-go")
        );
        let e = parse(
            "things",
            &format!("{THINGS}{STATE}eventually = {{ b = [] }}\n"),
        )
        .unwrap_err();
        assert!(e.contains("`eventually.b` lists no state"), "{e}");
        let e = parse(
            "things",
            &text.replace("\"/attributes/actions/can-go\"", "\"can-go\""),
        )
        .unwrap_err();
        assert!(
            e.contains("`allowed_if = \"can-go\"` is not a JSON pointer"),
            "{e}"
        );
    }
}
