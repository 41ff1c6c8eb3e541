//! The route class of a request: its method and its path with the id-like segments replaced,
//! the unit a 429 holds back (`Throttle`).

/// What an id-like segment becomes in a route key.
const ID: &str = ":id";

/// The route key of a request: `GET /organizations/:id/teams` for
/// `GET /api/v2/organizations/conform-4f2a-org/teams?page[number]=2`. `path` is the URL path
/// under the service root; the `/api/v2` prefix is dropped (both forms are one route), and a
/// segment is taken for an id when it holds a digit, an upper-case letter or anything but
/// `a`-`z`, `-` and `_` (TFE's ids, `ws-4Xa9...`, and the run's names, which carry its
/// prefix, all do; the path's words, `workspaces`, `actions`, `lock`, do not).
pub fn route_key(method: &str, path: &str) -> String {
    let path = path.split('?').next().unwrap_or_default();
    let path = path.strip_prefix("/api/v2").unwrap_or(path);
    let mut key = String::with_capacity(method.len() + path.len() + 1);
    key.push_str(method);
    key.push(' ');
    let mut any = false;
    for segment in path.split('/').filter(|s| !s.is_empty()) {
        key.push('/');
        key.push_str(if is_word(segment) { segment } else { ID });
        any = true;
    }
    if !any {
        key.push('/');
    }
    key
}

/// True for a segment that names a collection or an action rather than an item.
fn is_word(segment: &str) -> bool {
    segment
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b == b'-' || b == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_names_become_one_route_and_both_forms_agree() {
        assert_eq!(
            route_key("GET", "/api/v2/organizations/conform-4f2a-org/teams"),
            "GET /organizations/:id/teams"
        );
        assert_eq!(
            route_key(
                "GET",
                "/organizations/conform-99b1-org/teams?page[number]=2"
            ),
            "GET /organizations/:id/teams"
        );
        assert_eq!(
            route_key("POST", "/api/v2/workspaces/ws-4XaZ9/actions/lock"),
            "POST /workspaces/:id/actions/lock"
        );
        assert_eq!(route_key("GET", "/api/v2"), "GET /");
        assert_ne!(
            route_key("GET", "/api/v2/teams/team-1"),
            route_key("DELETE", "/api/v2/teams/team-1")
        );
    }
}
