//! Checks of uploads: the upload address a create answers and its form.
//! Each answers `Ok(())` or `Err(message)` in the form "expected …, received …"; the
//! caller records it under the check's id.

use serde_json::Value;

/// Every string in the document that looks like an upload address: (JSON pointer, URL).
/// The spec names no field, so any attribute or link counts.
pub fn upload_candidates(doc: &Value) -> Vec<(String, String)> {
    let mut found = Vec::new();
    walk(doc, String::new(), &mut |pointer, s| {
        let lower = pointer.to_ascii_lowercase();
        let is_url = s.starts_with("http://") || s.starts_with("https://") || s.starts_with('/');
        if is_url && (s.contains("/v1/object/") || lower.contains("upload")) {
            found.push((pointer.to_string(), s.to_string()));
        }
    });
    // Those already on the documented form first.
    found.sort_by_key(|(_, url)| !url.contains("/v1/object/"));
    found
}

fn walk(v: &Value, at: String, f: &mut dyn FnMut(&str, &str)) {
    match v {
        Value::Object(map) => map
            .iter()
            .for_each(|(k, v)| walk(v, format!("{at}/{k}"), f)),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .for_each(|(i, v)| walk(v, format!("{at}/{i}"), f)),
        Value::String(s) => f(&at, s),
        _ => {}
    }
}

/// `upload.url-form`: the path ends in `/v1/object/<object_id>` (Versioning 2).
pub fn upload_url_form(url: &str) -> Result<(), String> {
    let path = url::Url::parse(url)
        .map(|u| u.path().to_string())
        .unwrap_or_else(|_| url.split('?').next().unwrap_or(url).to_string());
    let ok = path
        .rsplit_once("/v1/object/")
        .is_some_and(|(_, id)| !id.is_empty() && !id.contains('/'));
    if ok {
        Ok(())
    } else {
        Err(format!("expected an upload address whose path has the form /v1/object/<object_id>, received `{url}`"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn upload_form_accepts_only_v1_object_paths() {
        assert!(upload_url_form("https://h/v1/object/abc").is_ok());
        assert!(upload_url_form("https://h/_archivist/v1/object/abc").is_ok());
        assert!(upload_url_form("https://h/uploads/abc").is_err());
        assert!(upload_url_form("https://h/v1/object/").is_err());
        let doc = json!({"data":{"attributes":{"upload-url":"http://h/v1/object/x"},"links":{"self":"/x"}}});
        assert_eq!(upload_candidates(&doc)[0].0, "/data/attributes/upload-url");
    }
}
