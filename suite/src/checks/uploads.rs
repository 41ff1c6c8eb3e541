//! Checks of uploads and downloads: the upload address a create answers, its form, and the
//! bytes a download gives back.
//! Each answers `Ok(())` or `Err(message)` in the form "expected …, received …"; the
//! caller records it under the check's id.

use crate::checks::Message;
use serde_json::Value;

use super::{status_text, succeeds};
use crate::target::Exchange;

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

/// `upload.url-form`: `what` (a create's answer, `doc`) offers an upload address: one of
/// [`upload_candidates`].
pub fn upload_offered(
    candidates: &[(String, String)],
    what: &str,
    doc: &Value,
) -> Result<(), Message> {
    if candidates.is_empty() {
        Err(message!(
            "expected {what} to hold an upload address (any attribute or link); it holds none: {doc}"
        ))
    } else {
        Ok(())
    }
}

/// The upload address a create answered (`url`), absolute or relative to the target's `root`;
/// an error (for `upload.url-form`) when it is no URL.
pub fn upload_address(url: &str, root: &url::Url) -> Result<url::Url, Message> {
    url::Url::parse(url)
        .or_else(|_| root.join(url))
        .map_err(|e| message!("expected the upload address to be a URL, received `{url}`: {e}"))
}

/// A download's answer: `upload.applied` with the `uploaded` bytes (they come back whole),
/// `endpoint.succeeds` without (some bytes come back).
pub fn downloaded(ex: &Exchange, uploaded: Option<&[u8]>) -> Result<(), Message> {
    match uploaded {
        Some(bytes) if ex.is_success() && ex.body() == bytes => Ok(()),
        Some(bytes) => Err(message!(
            "expected the download to give back the {} bytes uploaded, received status {} with {} bytes",
            bytes.len(),
            status_text(ex.status()),
            ex.body().len()
        )),
        None => succeeds(ex).and_then(|()| {
            if ex.body().is_empty() {
                Err(Message::new("expected the downloaded bytes, received an empty body"))
            } else {
                Ok(())
            }
        }),
    }
}

/// `upload.url-form`: the path ends in `/v1/object/<object_id>` (Versioning 2).
pub fn upload_url_form(url: &str) -> Result<(), Message> {
    let path = url::Url::parse(url)
        .map(|u| u.path().to_string())
        .unwrap_or_else(|_| url.split('?').next().unwrap_or(url).to_string());
    let ok = path
        .rsplit_once("/v1/object/")
        .is_some_and(|(_, id)| !id.is_empty() && !id.contains('/'));
    if ok {
        Ok(())
    } else {
        Err(message!("expected an upload address whose path has the form /v1/object/<object_id>, received `{url}`"))
    }
}

/// [`upload_url_form`] of the address a create answer gives at `pointer`: the finding names
/// where it was.
pub fn upload_url_form_at(url: &str, pointer: &str) -> Result<(), Message> {
    upload_url_form(url).map_err(|e| message!("{e} (at {pointer})"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn downloads_give_the_bytes_back() {
        use crate::checks::testing::exchange;
        let ex = exchange(200, "application/octet-stream", "abc");
        assert!(downloaded(&ex, Some(b"abc")).is_ok());
        assert!(downloaded(&ex, Some(b"abcd"))
            .unwrap_err()
            .contains("4 bytes uploaded"));
        assert!(downloaded(&ex, None).is_ok());
        assert!(downloaded(&exchange(200, "", ""), None).is_err());
        assert!(upload_offered(&[], "the answer", &json!({})).is_err());
        let root = url::Url::parse("http://h/base/").unwrap();
        assert_eq!(
            upload_address("/v1/object/x", &root).unwrap().as_str(),
            "http://h/v1/object/x"
        );
        assert_eq!(
            upload_address("https://o/v1/object/x", &root)
                .unwrap()
                .as_str(),
            "https://o/v1/object/x"
        );
    }

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
