//! The logic a family file names: functions a table cannot say. A file names them by
//! string (`initial_from = "run"`, `read = "user"`, `transition = "suspend"`,
//! `allowed_when = "superseded"`); an unknown
//! name is an error listing these.

use serde_json::Value;

use super::model::{Family, GuardFn, InitialFn, Model, ReadFn, TransitionFn};

/// Initial-state functions (`state.initial_from`), with the collection kinds of the same
/// family each one reads.
pub const INITIAL: &[(&str, InitialFn, &[&str])] = &[("run", run, &["configuration version"])];

/// State readers (`state.read`).
pub const READ: &[(&str, ReadFn)] = &[("user", user)];

/// Transition functions (`transition` of an action).
pub const TRANSITIONS: &[(&str, TransitionFn)] = &[
    ("suspend", suspend),
    ("unsuspend", unsuspend),
    ("grant_admin", grant_admin),
    ("revoke_admin", revoke_admin),
];

/// Guards (`allowed_when` of an action).
pub const GUARDS: &[(&str, GuardFn)] = &[("superseded", superseded)];

/// The entry of `table` named `name`, or an error listing the valid names.
pub fn lookup<T: Copy>(
    table: &[T],
    name_of: impl Fn(&T) -> &'static str,
    what: &str,
    name: &str,
) -> Result<T, String> {
    table
        .iter()
        .find(|t| name_of(t) == name)
        .copied()
        .ok_or_else(|| {
            let names: Vec<&str> = table.iter().map(&name_of).collect();
            format!("unknown {what} `{name}`; valid names: {}", names.join(", "))
        })
}

/// A run of the workspace's newest configuration version: `planned` when it is uploaded,
/// `pending` when it is not (or there is none); unknown when its state is unknown
/// (reference/README.md, "Runs").
fn run(family: &Family, model: &Model, workspace: Option<usize>) -> Option<String> {
    let ws = workspace?;
    let cv = family.coll_index("configuration version")?;
    match model.newest_under(cv, ws) {
        None => Some("pending".into()),
        Some(cv) => match model.items[cv].state.as_deref() {
            Some("uploaded") => Some("planned".into()),
            Some(_) => Some("pending".into()),
            None => None,
        },
    }
}

/// `active`, `suspended`, `admin` or `suspended admin`, from `is-suspended` and `is-admin`.
fn user(object: &Value) -> Option<String> {
    let flag = |name: &str| {
        object
            .pointer(&format!("/attributes/{name}"))
            .and_then(Value::as_bool)
    };
    let state = match (flag("is-suspended")?, flag("is-admin")?) {
        (false, false) => "active",
        (true, false) => "suspended",
        (false, true) => "admin",
        (true, true) => "suspended admin",
    };
    Some(state.into())
}

fn suspend(s: &str) -> Option<&'static str> {
    match s {
        "active" => Some("suspended"),
        "admin" => Some("suspended admin"),
        _ => None,
    }
}

fn unsuspend(s: &str) -> Option<&'static str> {
    match s {
        "suspended" => Some("active"),
        "suspended admin" => Some("admin"),
        _ => None,
    }
}

fn grant_admin(s: &str) -> Option<&'static str> {
    match s {
        "active" => Some("admin"),
        "suspended" => Some("suspended admin"),
        _ => None,
    }
}

fn revoke_admin(s: &str) -> Option<&'static str> {
    match s {
        "admin" => Some("active"),
        "suspended admin" => Some("suspended"),
        _ => None,
    }
}

/// A configuration version TFE archives (tfe-api-facts 2.4): not its workspace's current one
/// (the newest: "could not be archived because it is current", 409, until a newer version
/// exists); and not one a run may still use: while a run of the workspace is not in a final
/// state, the model cannot tell which version it runs (`None`).
fn superseded(family: &Family, model: &Model, item: usize) -> Option<bool> {
    let it = &model.items[item];
    let workspace = it.parent?;
    if model.newest_under(it.coll, workspace) == Some(item) {
        return Some(false);
    }
    if let Some(runs) = family.coll_index("run") {
        const FINAL: [&str; 5] = [
            "applied",
            "discarded",
            "canceled",
            "force_canceled",
            "errored",
        ];
        let active = model.of(runs).into_iter().any(|r| {
            model.items[r].parent == Some(workspace)
                && model.live(r)
                && !model.items[r]
                    .current_state()
                    .is_some_and(|s| FINAL.contains(&s))
        });
        if active {
            return None;
        }
    }
    Some(true)
}

#[cfg(test)]
mod tests {
    use super::super::model::Item;
    use super::*;

    fn item(coll: usize, parent: Option<usize>, state: &str) -> Item {
        Item {
            coll,
            id: format!("i{coll}"),
            name: None,
            parent,
            other: None,
            deleted: false,
            expect: Default::default(),
            state: Some(state.into()),
            reached: true,
            seen: None,
            fields: Default::default(),
            step: 1,
        }
    }

    #[test]
    fn a_configuration_version_is_archived_once_superseded_and_no_run_may_use_it() {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../cases/sequences/workspaces.toml"
        ))
        .unwrap();
        let family = super::super::file::parse("workspaces", &text).unwrap();
        let (ws, cv, run) = (
            family.coll_index("workspace").unwrap(),
            family.coll_index("configuration version").unwrap(),
            family.coll_index("run").unwrap(),
        );
        let mut model = Model::default();
        model.items.push(item(ws, None, "-"));
        model.items.push(item(cv, Some(0), "uploaded"));
        // the workspace's newest version is its current one: refused
        assert_eq!(superseded(&family, &model, 1), Some(false));
        model.items.push(item(cv, Some(0), "pending"));
        assert_eq!(superseded(&family, &model, 1), Some(true));
        // a run not yet final may use it: the model cannot tell
        model.items.push(item(run, Some(0), "planned"));
        assert_eq!(superseded(&family, &model, 1), None);
        model.items[3].state = Some("discarded".into());
        assert_eq!(superseded(&family, &model, 1), Some(true));
    }
}
