//! Paths: the `/api/v2` prefix, the kinds of path the service tells apart, and routes as the
//! spec writes them (`GET /runs/:run_id`), which faults and shapes name.

/// The body limit of `PUT /v1/object/...` (tarballs).
pub(crate) const UPLOAD_LIMIT: usize = 64 * 1024 * 1024;

/// The object store (`{upload_url}`), in either form.
pub(crate) fn is_upload_path(bare: &str) -> bool {
    bare.starts_with("/v1/object/") || bare.starts_with("/uploads/")
}

/// A bare (unprefixed) API path: not the registry read protocol, discovery or the object
/// store, which have no `/api/v2` form. The `no-bare` fault and the `api-v2-only` shape drop
/// these.
pub(crate) fn is_bare_api(bare: &str, prefixed: bool) -> bool {
    let registry_protocol = bare.starts_with("/api/registry/") || bare.starts_with("/.well-known/");
    !prefixed && !registry_protocol && !is_upload_path(bare)
}

/// A route as the spec writes it: a method and a path with `:param` segments.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RouteSpec {
    method: String,
    segments: Vec<String>,
}

impl RouteSpec {
    pub(crate) fn parse(text: &str) -> Result<Self, String> {
        let mut parts = text.split_whitespace();
        let (Some(method), Some(path), None) = (parts.next(), parts.next(), parts.next()) else {
            return Err(format!("route `{text}` must be \"METHOD PATH\""));
        };
        let path = path
            .replace("{registry_url}", "/api/registry/v1/modules")
            .replace("{upload_url}", "/v1/object/:object_id");
        let path = bare_path(&path).0;
        Ok(RouteSpec {
            method: method.to_ascii_uppercase(),
            segments: segments(&path),
        })
    }

    /// Whether a request matches a route written as text (false when the text is no route).
    pub(crate) fn matches_text(route: &str, method: &str, bare: &str) -> bool {
        RouteSpec::parse(route).is_ok_and(|r| r.matches(method, bare))
    }

    /// Whether a request (method and bare path) is this route.
    pub fn matches(&self, method: &str, bare: &str) -> bool {
        if !self.method.eq_ignore_ascii_case(method) {
            return false;
        }
        let request = segments(bare);
        let same = |pattern: &[String]| {
            pattern.len() == request.len()
                && pattern
                    .iter()
                    .zip(&request)
                    .all(|(p, r)| p.starts_with(':') || p == r)
        };
        if same(&self.segments) {
            return true;
        }
        // The upload route also answers at the wrong-form address.
        if self.segments.len() == 3 && self.segments[0] == "v1" && self.segments[1] == "object" {
            let alt = vec!["uploads".to_string(), self.segments[2].clone()];
            return same(&alt);
        }
        false
    }
}

fn segments(path: &str) -> Vec<String> {
    path.split('/')
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

/// Strips the `/api/v2` prefix (and maps `/api/meta/...` to `/meta/...`). Answers the bare
/// path and whether the prefix was there.
pub fn bare_path(path: &str) -> (String, bool) {
    if path == "/api/v2" {
        return ("/".into(), true);
    }
    if let Some(rest) = path.strip_prefix("/api/v2/") {
        return (format!("/{rest}"), true);
    }
    if let Some(rest) = path.strip_prefix("/api/meta/") {
        return (format!("/meta/{rest}"), false);
    }
    (path.to_string(), false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_match_segment_wise_on_both_prefixes() {
        let r = RouteSpec::parse("GET /runs/:run_id").unwrap();
        assert!(r.matches("GET", "/runs/run-1"));
        assert!(!r.matches("POST", "/runs/run-1"));
        assert!(!r.matches("GET", "/runs/run-1/comments"));
        let r = RouteSpec::parse("GET /api/v2/assessment-results/:assessment_result_id").unwrap();
        assert!(r.matches("GET", "/assessment-results/x"));
        let r = RouteSpec::parse("PUT {upload_url}").unwrap();
        assert!(r.matches("PUT", "/v1/object/abc"));
        assert!(r.matches("PUT", "/uploads/abc"));
    }
}
