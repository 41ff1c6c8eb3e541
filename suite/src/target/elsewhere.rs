//! Uploads to another origin than the target's: the spec lets the service name any
//! `{upload_url}`, and the run follows it (never with the token), but says so once per origin,
//! before the first upload goes there.

use std::sync::Mutex;

use url::Url;

/// The origins other than the target's that the run has uploaded to, each with the warning
/// said about it.
#[derive(Debug, Default)]
pub struct Elsewhere(Mutex<Vec<(String, String)>>);

impl Elsewhere {
    /// The warning about an upload to `url`, on another origin than `root`'s, the first time
    /// the run uploads to that origin; `None` after.
    pub fn first_upload(&self, url: &Url, root: &Url) -> Option<String> {
        let origin = url.origin().ascii_serialization();
        let mut seen = self.0.lock().ok()?;
        if seen.iter().any(|(o, _)| *o == origin) {
            return None;
        }
        let warning = format!(
            "uploads go to another host: the target named an upload address on {origin}, not on --target's origin {}; the run sends its uploads there (the spec lets the service name any {{upload_url}}), never with the token",
            root.origin().ascii_serialization()
        );
        seen.push((origin, warning.clone()));
        Some(warning)
    }

    /// Every warning said so far, in the order said.
    pub fn warnings(&self) -> Vec<String> {
        self.0
            .lock()
            .map(|seen| seen.iter().map(|(_, w)| w.clone()).collect())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_other_origin_is_named_once() {
        let root = Url::parse("http://127.0.0.1:8080/").unwrap();
        let elsewhere = Elsewhere::default();
        let store = Url::parse("https://store.example:9000/v1/object/a").unwrap();
        let first = elsewhere.first_upload(&store, &root).expect("said once");
        assert!(first.contains("https://store.example:9000"), "{first}");
        assert!(first.contains("http://127.0.0.1:8080"), "{first}");
        let again = Url::parse("https://store.example:9000/v1/object/b").unwrap();
        assert_eq!(elsewhere.first_upload(&again, &root), None);
        assert_eq!(elsewhere.warnings(), vec![first]);
    }
}
