//! The blast-radius guard: a mutating request (POST, PATCH, DELETE) is sent only when every
//! id in its path is one this run created (or found under what it created) or one the user
//! declared with `--fixture`. Which path segments are ids comes from the catalog's path
//! templates: the `:param` positions of the best-matching template. Singletons (admin
//! settings, the account) have no ids and pass. What the user gives (`--fixture`,
//! `--organization`) may be named as the parent of a create, but is never itself changed:
//! PATCH, DELETE and actions on it are refused. With `--read-only` nothing but GET and HEAD
//! is sent at all.

use std::collections::HashSet;
use std::sync::RwLock;

use reqwest::Method;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Seg {
    Lit(String),
    Param,
}

#[derive(Debug, Default)]
struct State {
    armed: bool,
    read_only: bool,
    templates: Vec<Vec<Seg>>,
    words: HashSet<String>,
    known: HashSet<String>,
    declared: HashSet<String>,
    given: HashSet<String>,
    /// Why no resource may be created any more (the ledger cannot be written).
    creates_stopped: Option<String>,
}

/// The guard of one target. Unarmed (lets everything through) until [`Guard::arm`].
#[derive(Debug, Default)]
pub struct Guard {
    state: RwLock<State>,
}

/// Path segments without the `/api/v2` prefix.
fn normalize(path: &str) -> Vec<String> {
    let mut segs: Vec<String> = path
        .split('/')
        .filter(|s| !s.is_empty())
        .map(percent_decode)
        .collect();
    if segs.len() >= 2 && segs[0] == "api" && segs[1] == "v2" {
        segs.drain(..2);
    }
    segs
}

fn percent_decode(segment: &str) -> String {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let Some(v) = segment
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
            {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl Guard {
    /// Arms the guard: `templates` are path templates with `:params` (`/api/v2` optional),
    /// `fixed` are values the catalog itself puts in params (e.g. `private`), `declared` the
    /// ids given with `--fixture`.
    pub fn arm<T, F, D>(&self, templates: T, fixed: F, declared: D, read_only: bool)
    where
        T: IntoIterator<Item = String>,
        F: IntoIterator<Item = String>,
        D: IntoIterator<Item = String>,
    {
        let Ok(mut s) = self.state.write() else {
            return;
        };
        s.armed = true;
        s.read_only = read_only;
        for template in templates {
            if template.contains('{') {
                continue;
            }
            let segs: Vec<Seg> = normalize(&template)
                .into_iter()
                .map(|seg| match seg.strip_prefix(':') {
                    Some(_) => Seg::Param,
                    None => Seg::Lit(seg),
                })
                .collect();
            for seg in &segs {
                if let Seg::Lit(word) = seg {
                    s.words.insert(word.clone());
                }
            }
            if !s.templates.contains(&segs) {
                s.templates.push(segs);
            }
        }
        s.declared.extend(fixed);
        for id in declared.into_iter().filter(|d| !d.is_empty()) {
            s.declared.insert(id.clone());
            s.given.insert(id);
        }
    }

    /// True when armed.
    pub fn is_armed(&self) -> bool {
        self.state.read().map(|s| s.armed).unwrap_or(false)
    }

    /// Records an id (or name) of something this run created.
    pub fn allow(&self, id: &str) {
        if id.is_empty() {
            return;
        }
        if let Ok(mut s) = self.state.write() {
            s.known.insert(id.to_string());
        }
    }

    /// Records an id (or name) the run may name but never change, as one the user declared
    /// (the caller's own user, added to a team the run made).
    pub fn declare(&self, id: &str) {
        if id.is_empty() {
            return;
        }
        if let Ok(mut s) = self.state.write() {
            s.declared.insert(id.to_string());
        }
    }

    /// True when the run created or the user declared `id`.
    pub fn knows(&self, id: &str) -> bool {
        self.state
            .read()
            .map(|s| s.known.contains(id) || s.declared.contains(id))
            .unwrap_or(false)
    }

    /// The ids in a path: the `:param` positions of the best-matching template, else every
    /// segment that is no word of any template.
    fn ids_in(s: &State, segs: &[String]) -> Vec<String> {
        Self::positions(s, segs)
            .into_iter()
            .map(|i| segs[i].clone())
            .collect()
    }

    /// The positions of the ids in a path (see [`Guard::ids_in`]).
    fn positions(s: &State, segs: &[String]) -> Vec<usize> {
        let mut best: Option<(usize, &Vec<Seg>)> = None;
        for t in &s.templates {
            if t.len() != segs.len() {
                continue;
            }
            let mut literals = 0;
            let fits = t.iter().zip(segs).all(|(seg, actual)| match seg {
                Seg::Lit(word) => {
                    literals += 1;
                    word == actual
                }
                Seg::Param => true,
            });
            if fits && best.is_none_or(|(n, _)| literals > n) {
                best = Some((literals, t));
            }
        }
        match best {
            Some((_, t)) => t
                .iter()
                .enumerate()
                .filter(|(_, seg)| **seg == Seg::Param)
                .map(|(i, _)| i)
                .collect(),
            None => segs
                .iter()
                .enumerate()
                .filter(|(_, seg)| !s.words.contains(*seg))
                .map(|(i, _)| i)
                .collect(),
        }
    }

    /// The id a mutation acts on: the last id of its path, unless the request is a POST that
    /// creates a child under it (literal segments after the id, not an action or a
    /// relationship). A PATCH or DELETE always acts on its last id.
    fn acted_on(s: &State, method: &Method, segs: &[String]) -> Option<String> {
        let last = *Self::positions(s, segs).last()?;
        let rest = &segs[last + 1..];
        let child_create = *method == Method::POST
            && rest
                .first()
                .is_some_and(|r| !matches!(r.as_str(), "actions" | "relationships"));
        (!child_create).then(|| segs[last].clone())
    }

    /// From now on refuses every POST (what creates), with `why`; the first reason stays.
    /// Reads and deletes go on, so that teardown still runs.
    pub fn stop_creates(&self, why: String) {
        if let Ok(mut s) = self.state.write() {
            s.creates_stopped.get_or_insert(why);
        }
    }

    /// Why creates are stopped, once they are.
    pub fn creates_stopped(&self) -> Option<String> {
        self.state.read().ok()?.creates_stopped.clone()
    }

    /// `Ok` when the request may be sent; otherwise why not. `path` is the URL path relative
    /// to the service root.
    pub fn check(&self, method: &Method, path: &str) -> Result<(), String> {
        let Ok(s) = self.state.read() else {
            return Err("the guard's lock is poisoned".into());
        };
        if let Some(why) = s
            .creates_stopped
            .as_ref()
            .filter(|_| *method == Method::POST)
        {
            return Err(why.clone());
        }
        if !s.armed {
            return Ok(());
        }
        let reads = *method == Method::GET || *method == Method::HEAD;
        if s.read_only && !reads {
            return Err(format!(
                "--read-only: conform sends no {method} (it would change {path})"
            ));
        }
        if !(*method == Method::POST || *method == Method::PATCH || *method == Method::DELETE) {
            return Ok(());
        }
        let segs = normalize(path);
        let foreign: Vec<String> = Self::ids_in(&s, &segs)
            .into_iter()
            .filter(|id| !s.known.contains(id) && !s.declared.contains(id))
            .collect();
        if foreign.is_empty() {
            return match Self::acted_on(&s, method, &segs).filter(|id| s.given.contains(id)) {
                Some(id) => {
                    // a given workspace: say how to let the run use it as terraform does
                    let scratch = if path.contains(&format!("workspaces/{id}")) {
                        format!(
                            "; to let the run lock it and push state, configuration versions \
                             and runs to it (never delete it), give it as --scratch workspace={id}"
                        )
                    } else {
                        String::new()
                    };
                    Err(format!(
                        "blast-radius guard: {method} {path} would change `{id}`, which was given \
                         (--organization or --fixture) and is read-only to the run{scratch}"
                    ))
                }
                None => Ok(()),
            };
        }
        Err(format!(
            "blast-radius guard: {method} {path} would change `{}`, which this run did not create; \
             declare it with --fixture KIND={} to allow that",
            foreign.join("`, `"),
            foreign[0]
        ))
    }
}

impl Guard {
    /// `Ok` when a mutating request's JSON body names only ids this run made or the user
    /// declared: the members of a relationship document (`data[].id`, as in "add these
    /// users to the team") and the related resources of a create or update
    /// (`data.relationships.*.data.id`). A body may not reach what a path may not.
    pub fn check_body(
        &self,
        method: &Method,
        path: &str,
        body: &serde_json::Value,
    ) -> Result<(), String> {
        let Ok(s) = self.state.read() else {
            return Err("the guard's lock is poisoned".into());
        };
        if !s.armed
            || !(*method == Method::POST || *method == Method::PATCH || *method == Method::DELETE)
        {
            return Ok(());
        }
        let mut ids = Vec::new();
        let data = body.get("data");
        if let Some(items) = data.and_then(|d| d.as_array()) {
            ids.extend(items.iter().filter_map(|i| i.get("id")?.as_str()));
        }
        if let Some(relationships) = data
            .and_then(|d| d.get("relationships"))
            .and_then(|r| r.as_object())
        {
            for related in relationships.values().filter_map(|r| r.get("data")) {
                match related {
                    serde_json::Value::Array(items) => {
                        ids.extend(items.iter().filter_map(|i| i.get("id")?.as_str()))
                    }
                    other => ids.extend(other.get("id").and_then(|i| i.as_str())),
                }
            }
        }
        let foreign: Vec<&str> = ids
            .into_iter()
            .filter(|id| !s.known.contains(*id) && !s.declared.contains(*id))
            .collect();
        if foreign.is_empty() {
            return Ok(());
        }
        Err(format!(
            "blast-radius guard: {method} {path} names `{}` in its body, which this run did not create; \
             declare it with --fixture KIND={} to allow that",
            foreign.join("`, `"),
            foreign[0]
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard() -> Guard {
        let g = Guard::default();
        g.arm(
            [
                "/organizations",
                "/organizations/:organization_name",
                "/organizations/:organization_name/workspaces",
                "/api/v2/workspaces/:workspace_id",
                "/workspaces/:id/actions/lock",
                "/organizations/:organization_name/registry-modules/:registry_name/:namespace/:name/:provider",
                "/api/v2/admin/general-settings",
                "{registry_url}/:namespace/:name",
            ]
            .map(String::from),
            ["private".to_string()],
            ["given-org".to_string()],
            false,
        );
        g
    }

    #[test]
    fn unarmed_lets_everything_through() {
        assert!(Guard::default()
            .check(&Method::DELETE, "/organizations/x")
            .is_ok());
    }

    #[test]
    fn mutations_need_known_ids() {
        let g = guard();
        g.allow("conform-abc-0001");
        g.allow("ws-mine");
        assert!(g.check(&Method::POST, "/api/v2/organizations").is_ok());
        assert!(g
            .check(&Method::POST, "/organizations/conform-abc-0001/workspaces")
            .is_ok());
        assert!(g
            .check(&Method::DELETE, "/api/v2/workspaces/ws-mine")
            .is_ok());
        assert!(g
            .check(&Method::POST, "/workspaces/ws-mine/actions/lock")
            .is_ok());
        let e = g
            .check(&Method::DELETE, "/api/v2/workspaces/ws-theirs")
            .unwrap_err();
        assert!(e.contains("`ws-theirs`") && e.contains("--fixture"), "{e}");
        assert!(g.check(&Method::PATCH, "/workspaces/ws-theirs").is_err());
        assert!(g
            .check(&Method::POST, "/workspaces/ws-theirs/actions/lock")
            .is_err());
        // a given workspace's refusal says how to let the run use it
        let ws = Guard::default();
        ws.arm(
            ["/workspaces/:id/actions/lock".to_string()],
            Vec::<String>::new(),
            ["ws-given1".to_string()],
            false,
        );
        let refused = ws
            .check(&Method::POST, "/api/v2/workspaces/ws-given1/actions/lock")
            .unwrap_err();
        assert!(
            refused.contains("--scratch workspace=ws-given1"),
            "{refused}"
        );
        // a given resource is read-only: it may parent a create, never be changed itself
        let e = g
            .check(&Method::DELETE, "/organizations/given-org")
            .unwrap_err();
        assert!(e.contains("read-only"), "{e}");
        assert!(g
            .check(&Method::PATCH, "/api/v2/organizations/given-org")
            .is_err());
        assert!(g
            .check(&Method::POST, "/organizations/given-org/workspaces")
            .is_ok());
        // reads are never refused
        assert!(g.check(&Method::GET, "/workspaces/ws-theirs").is_ok());
        // a singleton has no id
        assert!(g
            .check(&Method::PATCH, "/api/v2/admin/general-settings")
            .is_ok());
    }

    #[test]
    fn a_word_in_an_id_position_is_still_an_id() {
        let g = guard();
        // an organization named like a path word is someone else's organization
        assert!(g
            .check(&Method::DELETE, "/organizations/workspaces")
            .is_err());
        g.allow("conform-abc-0001");
        g.allow("conform-abc-0002");
        g.allow("aws");
        assert!(g
            .check(
                &Method::DELETE,
                "/organizations/conform-abc-0001/registry-modules/private/conform-abc-0001/conform-abc-0002/aws"
            )
            .is_ok());
        // an unknown path: every segment that is no word counts
        assert!(g.check(&Method::POST, "/nowhere/ws-theirs").is_err());
        assert!(g.check(&Method::POST, "/nowhere/ws-mine2").is_err());
    }

    #[test]
    fn read_only_sends_only_reads() {
        let g = Guard::default();
        g.arm(Vec::<String>::new(), [], [], true);
        assert!(g.check(&Method::GET, "/organizations").is_ok());
        let e = g.check(&Method::POST, "/organizations").unwrap_err();
        assert!(e.contains("--read-only"), "{e}");
        assert!(g.check(&Method::PUT, "/v1/object/x").is_err());
    }

    #[test]
    fn encoded_segments_compare_decoded() {
        let g = guard();
        g.allow("a b");
        assert!(g.check(&Method::DELETE, "/organizations/a%20b").is_ok());
    }

    #[test]
    fn bodies_may_name_only_the_runs_own_ids() {
        let g = guard();
        g.allow("ws-mine");
        g.allow("team-mine");
        let attach = serde_json::json!({"data": [{"type": "workspaces", "id": "ws-mine"}]});
        assert!(g
            .check_body(
                &Method::POST,
                "/teams/team-mine/relationships/workspaces",
                &attach
            )
            .is_ok());
        let foreign = serde_json::json!({"data": [{"type": "workspaces", "id": "ws-theirs"}]});
        let refused = g.check_body(
            &Method::POST,
            "/teams/team-mine/relationships/workspaces",
            &foreign,
        );
        assert!(refused.unwrap_err().contains("ws-theirs"));
        let create = serde_json::json!({"data": {"type": "runs", "relationships": {"workspace": {"data": {"type": "workspaces", "id": "ws-theirs"}}}}});
        assert!(g.check_body(&Method::POST, "/runs", &create).is_err());
        assert!(
            g.check_body(&Method::GET, "/runs", &create).is_ok(),
            "reads are not judged"
        );
        let declared = serde_json::json!({"data": [{"type": "workspaces", "id": "given-org"}]});
        assert!(g.check_body(&Method::DELETE, "/x", &declared).is_ok());
    }
}
