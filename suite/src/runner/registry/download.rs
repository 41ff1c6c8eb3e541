//! Registry downloads: the `X-Terraform-Get` header, and the source it leads to fetched
//! (wherever it is, as terraform fetches it: the token only on the target's own origin, read
//! within the response size cap as every answer is) for `checks` to unpack and compare with
//! what the run published.

use url::Url;

use super::{without_params, Probe, Subject, MAX_REDIRECTS};
use crate::checks::{self as c};

/// The checks of a registry download after its answer (exchange `index`, redirects to the
/// target's origin already followed): `tfe.registry-download`, `endpoint.succeeds` and, with
/// the module known, `registry.download-source`.
pub async fn after_download(p: &mut Probe<'_>, subject: Option<&Subject>, index: usize) {
    let result = c::registry_download_header(p.ex(index));
    p.check(&c::TFE_REGISTRY_DOWNLOAD, Some(index), result);
    let result = c::succeeds(p.ex(index));
    if !p.check(&c::ENDPOINT_SUCCEEDS, Some(index), result) {
        return;
    }
    if let Some(subject) = subject {
        source(p, subject, index).await;
    }
}

/// Where a download's `X-Terraform-Get` points: an HTTP URL (relative ones resolved against
/// the download URL), without go-getter's own parts (a forced `http::` getter, a `//subdir`,
/// the `archive`, `checksum` and `filename` parameters); or why it is not fetched.
pub fn source_url(download: &Url, value: &str) -> Result<Url, String> {
    let mut text = value.trim();
    if let Some((getter, rest)) = text.split_once("::") {
        if !getter.is_empty() && getter.chars().all(|c| c.is_ascii_alphanumeric()) {
            if getter != "http" && getter != "https" {
                return Err(format!(
                    "the source `{value}` is for go-getter's `{getter}` getter, which conform does not fetch"
                ));
            }
            text = rest;
        }
    }
    let relative = text.starts_with('/') || text.starts_with("./") || text.starts_with("../");
    let url = if relative {
        download.join(text)
    } else {
        Url::parse(text)
    }
    .map_err(|_| {
        format!("the source `{value}` is neither a URL nor a path relative to the download URL (a go-getter shorthand), which conform does not fetch")
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!(
            "the source `{value}` is not an HTTP address, which conform does not fetch"
        ));
    }
    let mut url = without_params(&url, &["archive", "checksum", "filename"]);
    let path = url.path().to_string();
    if let Some(at) = path.get(1..).and_then(|p| p.find("//")) {
        url.set_path(&path[..=at]);
    }
    Ok(url)
}

/// `registry.download-source`: follow the source (anywhere; the token only on the target's
/// origin) and judge it (a source conform does not fetch, or an archive `checks` could not
/// judge, leaves the test unobserved: `skipped` with the reason, never passed):
/// the address is `X-Terraform-Get` or a JSON body's `location`
/// ([`c::registry_source_address`]); a body that is neither is the archive itself.
async fn source(p: &mut Probe<'_>, subject: &Subject, index: usize) {
    let ex = p.ex(index);
    let address = c::registry_source_address(ex);
    let has_body = !ex.body().is_empty();
    let Ok(download) = Url::parse(&ex.request.url) else {
        return;
    };
    let (fetched, named) = match address {
        Some(value) => {
            let url = match source_url(&download, &value) {
                Ok(url) => url,
                Err(why) => {
                    p.unobserved.push(format!(
                        "registry.download-source not checked: {why} (not followed, so not judged)"
                    ));
                    return;
                }
            };
            match follow(p, url).await {
                Some(i) => (i, c::archive_named(&value)),
                None => return,
            }
        }
        // A download that answers the archive itself gives its source in the body.
        None if has_body => (index, None),
        None => {
            let result = c::registry_source_offered(false, p.ex(index));
            p.check(&c::REGISTRY_DOWNLOAD_SOURCE, Some(index), result);
            return;
        }
    };
    let result = c::registry_source(
        p.ex(fetched),
        &subject.module.to_string(),
        subject.uploaded.as_deref(),
        named,
    );
    let result = match result {
        Ok(c::SourceSeen::NotJudged(why)) => {
            p.unobserved
                .push(format!("registry.download-source: {why}"));
            return;
        }
        Ok(c::SourceSeen::Unpacked(kind)) => {
            p.notes.push(format!(
                "registry.download-source: `{}` was given with --module, not published by this run, so its source was checked to be a whole {} archive holding at least one regular file{}, not compared with what was published",
                subject.module,
                kind.word(),
                if named.is_some() { " (the kind its address names)" } else { "" }
            ));
            Ok(())
        }
        Ok(c::SourceSeen::Published(_)) => Ok(()),
        Err(e) => Err(e),
    };
    p.check(&c::REGISTRY_DOWNLOAD_SOURCE, Some(fetched), result);
}

/// GETs a source as terraform does, following redirects (bounded): on another origin (an
/// archive store, a CDN) without the token. `None` when no answer came from another origin:
/// whether the source holds the module is then not observed (`unobserved` says so), and the
/// test cannot pass on it.
async fn follow(p: &mut Probe<'_>, url: Url) -> Option<usize> {
    let mut next = url;
    let mut index = None;
    for _ in 0..=MAX_REDIRECTS {
        let i = p.get(next.clone()).await;
        index = Some(i);
        let ex = p.ex(i);
        if let (Err(e), false) = (&ex.response, p.target.same_origin(&next)) {
            p.unobserved.push(format!(
                "registry.download-source: the source on another origin ({}) gave no answer ({e})",
                next.origin().ascii_serialization()
            ));
            return None;
        }
        let location = ex
            .status()
            .filter(|s| (300..400).contains(s))
            .and_then(|_| ex.header("location"))
            .and_then(|l| next.join(l).ok());
        match location {
            Some(l) => next = l,
            None => return index,
        }
    }
    index
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_resolve_like_terraform() {
        let d =
            Url::parse("https://tfe.example/api/registry/v1/modules/a/b/c/1.0.0/download").unwrap();
        let u = source_url(&d, "/_archivist/v1/object/x?archive=tar.gz").unwrap();
        assert_eq!(u.as_str(), "https://tfe.example/_archivist/v1/object/x");
        let u = source_url(&d, "./archive.tgz").unwrap();
        assert_eq!(
            u.as_str(),
            "https://tfe.example/api/registry/v1/modules/a/b/c/1.0.0/archive.tgz"
        );
        let u = source_url(
            &d,
            "https::https://other.example/m.tgz//sub?archive=tgz&x=1",
        )
        .unwrap();
        assert_eq!(u.as_str(), "https://other.example/m.tgz?x=1");
        assert!(source_url(&d, "git::https://github.com/a/b?ref=v1").is_err());
        assert!(source_url(&d, "github.com/a/b").is_err());
    }
}
