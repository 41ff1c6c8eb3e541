//! A download: the source address it gives (`X-Terraform-Get`, a JSON `location`) and the
//! archive fetched from it.

use super::{status_text, transport_or_status};
use crate::checks::Message;
use crate::target::Exchange;

/// `tfe.registry-download`: a download answers with an `X-Terraform-Get` header.
pub fn registry_download_header(ex: &Exchange) -> Result<(), Message> {
    if ex.header("x-terraform-get").is_some() {
        Ok(())
    } else {
        Err(message!(
            "expected 204 with an X-Terraform-Get header, received {} without it",
            status_text(ex.status())
        ))
    }
}

/// `registry.download-source`: the download named a source at all (`offered`).
pub fn registry_source_offered(offered: bool, ex: &Exchange) -> Result<(), Message> {
    if offered {
        Ok(())
    } else {
        Err(message!(
            "expected the download to give the module's source (an X-Terraform-Get address, a redirect or the archive); it answered {} with neither",
            transport_or_status(ex)
        ))
    }
}

/// The kinds of archive a module source may be: go-getter unpacks each of them, told by the
/// address's `archive=` parameter or its file name's ending (the module registry protocol:
/// "a source address", go-getter's "Unarchiving"), not only the gzip tarball TFE serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArchiveKind {
    /// `zip`.
    Zip,
    /// gzip: `tar.gz`, `tgz`, `gz`.
    Gzip,
    /// bzip2: `tar.bz2`, `tbz2`, `bz2`.
    Bzip2,
    /// xz: `tar.xz`, `txz`, `xz`.
    Xz,
    /// zstd: `tar.zst`, `tzst`, `zst`.
    Zstd,
    /// A plain `tar`.
    Tar,
}

impl ArchiveKind {
    /// The kind a name says (`zip`, `tar.gz`, `tgz`…: an `archive=` value or a file name's
    /// ending), if any.
    pub fn named(name: &str) -> Option<Self> {
        let name = name.to_ascii_lowercase();
        let ends = |e: &[&str]| {
            e.iter()
                .any(|x| name == *x || name.ends_with(&format!(".{x}")))
        };
        if ends(&["zip"]) {
            Some(Self::Zip)
        } else if ends(&["tar.gz", "tgz", "gz"]) {
            Some(Self::Gzip)
        } else if ends(&["tar.bz2", "tbz2", "bz2"]) {
            Some(Self::Bzip2)
        } else if ends(&["tar.xz", "txz", "xz"]) {
            Some(Self::Xz)
        } else if ends(&["tar.zst", "tzst", "zst"]) {
            Some(Self::Zstd)
        } else if ends(&["tar"]) {
            Some(Self::Tar)
        } else {
            None
        }
    }

    /// The kind the bytes are, by their magic numbers, if an archive at all.
    pub fn of(bytes: &[u8]) -> Option<Self> {
        if is_gzip(bytes) {
            Some(Self::Gzip)
        } else if bytes.starts_with(b"PK\x03\x04") || bytes.starts_with(b"PK\x05\x06") {
            Some(Self::Zip)
        } else if bytes.starts_with(b"BZh") {
            Some(Self::Bzip2)
        } else if bytes.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0]) {
            Some(Self::Xz)
        } else if bytes.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Some(Self::Zstd)
        } else if bytes.get(257..262) == Some(b"ustar") {
            Some(Self::Tar)
        } else {
            None
        }
    }

    /// The name said in findings.
    pub fn word(self) -> &'static str {
        match self {
            Self::Zip => "zip",
            Self::Gzip => "gzip",
            Self::Bzip2 => "bzip2",
            Self::Xz => "xz",
            Self::Zstd => "zstd",
            Self::Tar => "tar",
        }
    }
}

/// The kind of archive a source address names: its `archive=` parameter, else its file
/// name's ending (go-getter's rules), without a forced getter (`https::`) or a `//subdir`.
pub fn archive_named(address: &str) -> Option<ArchiveKind> {
    let text = address.trim();
    let text = match text.split_once("::") {
        Some((getter, rest)) if getter.chars().all(|c| c.is_ascii_alphanumeric()) => rest,
        _ => text,
    };
    let (path, query) = text.split_once('?').unwrap_or((text, ""));
    let param = query
        .split('&')
        .find_map(|pair| pair.strip_prefix("archive="));
    if let Some(value) = param {
        return ArchiveKind::named(value);
    }
    let start = path.find("://").map_or(0, |i| i + 3);
    let path = match path[start..].find("//") {
        Some(at) => &path[..start + at],
        None => path,
    };
    ArchiveKind::named(path.rsplit('/').next().unwrap_or(path))
}

/// Where a registry download gives the module's source: its `X-Terraform-Get` header, else
/// the `location` member of a JSON body (the registry protocol's other form of a download's
/// answer); `None` when it gives neither.
pub fn registry_source_address(ex: &Exchange) -> Option<String> {
    if let Some(value) = ex.header("x-terraform-get") {
        return Some(value.to_string());
    }
    let doc = ex.json().ok()?;
    doc.get("location")?.as_str().map(str::to_string)
}

/// How a fetched source was judged, when it passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceSeen {
    /// The very bytes the run uploaded.
    Uploaded,
    /// An archive of the kind its address names (or, unnamed, of a kind go-getter unpacks),
    /// not compared byte for byte: a `--module` module, or a server that serves the module
    /// in another kind of archive than the one uploaded.
    ArchiveOfItsKind(ArchiveKind),
}

/// `registry.download-source`: the fetched source (`ex`) of `module`, whose address names an
/// archive kind (`named`, [`archive_named`]), is the archive the run `uploaded`; or an archive
/// of another kind than the upload (a server may repack what it serves: the protocol promises
/// a source go-getter can fetch, not the uploaded bytes) that is of the kind its address
/// names; for a module given with `--module`, a non-empty archive of the kind its address
/// names (unnamed: any kind go-getter unpacks).
pub fn registry_source(
    ex: &Exchange,
    module: &str,
    uploaded: Option<&[u8]>,
    named: Option<ArchiveKind>,
) -> Result<SourceSeen, Message> {
    let body = ex.body();
    let got = format!(
        "received {} with {} bytes{}",
        transport_or_status(ex),
        body.len(),
        if ex.response.as_ref().is_ok_and(|r| r.truncated) {
            " (cut at the response size cap)"
        } else {
            ""
        }
    );
    let kind = ArchiveKind::of(body).filter(|_| ex.is_success());
    let of_its_kind = kind.filter(|k| named.is_none_or(|n| n == *k));
    let mismatch = match (kind, named) {
        (Some(k), Some(n)) if k != n => format!(
            ", a {} archive where its address names a {} one",
            k.word(),
            n.word()
        ),
        _ => String::new(),
    };
    match uploaded {
        Some(bytes) if ex.is_success() && body == bytes && mismatch.is_empty() => {
            Ok(SourceSeen::Uploaded)
        }
        Some(bytes) => match of_its_kind {
            Some(k) if ArchiveKind::of(bytes).is_some_and(|u| u != k) => Ok(SourceSeen::ArchiveOfItsKind(k)),
            _ => Err(message!(
                "expected the source of `{module}` to be the archive the run uploaded ({} bytes), or an archive of another kind that its address names; {got}{mismatch}",
                bytes.len()
            )),
        },
        None => match of_its_kind {
            Some(k) => Ok(SourceSeen::ArchiveOfItsKind(k)),
            None => Err(message!(
                "expected the source of `{module}` (given with --module) to be a non-empty archive{}; {got}{}",
                named.map(|n| format!(" ({}, as its address names)", n.word())).unwrap_or_default(),
                if !mismatch.is_empty() {
                    mismatch
                } else if ex.is_success() && !body.is_empty() {
                    ", which starts with the magic bytes of no archive (gzip 1f 8b, zip PK)".to_string()
                } else {
                    String::new()
                }
            )),
        },
    }
}

/// `true` when the bytes start with the gzip magic bytes (`1f 8b`).
pub fn is_gzip(bytes: &[u8]) -> bool {
    bytes.len() > 2 && bytes[0] == 0x1f && bytes[1] == 0x8b
}

#[cfg(test)]
mod tests {
    use super::super::*;

    #[test]
    fn a_download_gives_its_source_and_the_source_is_the_archive() {
        use crate::checks::testing::exchange;
        assert!(registry_download_header(&exchange(204, "", "")).is_err());
        assert!(registry_source_offered(true, &exchange(204, "", "")).is_ok());
        assert!(registry_source_offered(false, &exchange(204, "", "")).is_err());
        let mut archive = exchange(200, "application/gzip", "");
        let bytes = vec![0x1f, 0x8b, 8, 0];
        if let Ok(answer) = &mut archive.response {
            answer.body = bytes.clone();
        }
        let gz = Some(ArchiveKind::Gzip);
        assert_eq!(
            registry_source(&archive, "acme/network/aws", Some(&bytes), gz),
            Ok(SourceSeen::Uploaded)
        );
        assert!(registry_source(&archive, "acme/network/aws", None, gz).is_ok());
        assert!(registry_source(&archive, "acme/network/aws", None, None).is_ok());
        assert!(registry_source(&archive, "acme/network/aws", Some(b"other"), gz).is_err());
        // a gzip where the address names a zip is not the archive it says
        let err = registry_source(&archive, "m", None, Some(ArchiveKind::Zip)).unwrap_err();
        assert!(
            err.contains("a gzip archive where its address names a zip one"),
            "{err}"
        );
        let text = exchange(200, "text/plain", "plain");
        assert!(registry_source(&text, "acme/network/aws", None, None)
            .unwrap_err()
            .contains("magic bytes of no archive"));
    }

    #[test]
    fn a_source_may_be_any_archive_the_protocol_allows() {
        use crate::checks::testing::exchange;
        assert_eq!(
            archive_named("/v1/object/x?archive=zip"),
            Some(ArchiveKind::Zip)
        );
        assert_eq!(
            archive_named("https::https://h/m.tgz//sub?x=1"),
            Some(ArchiveKind::Gzip)
        );
        assert_eq!(archive_named("https://h/m.zip"), Some(ArchiveKind::Zip));
        assert_eq!(
            archive_named("https://h/m.tar.bz2"),
            Some(ArchiveKind::Bzip2)
        );
        assert_eq!(archive_named("https://h/object/x"), None);
        assert_eq!(ArchiveKind::of(b"PK\x03\x04rest"), Some(ArchiveKind::Zip));
        assert_eq!(ArchiveKind::of(b"plain"), None);
        let mut zip = exchange(200, "application/zip", "");
        if let Ok(answer) = &mut zip.response {
            answer.body = b"PK\x03\x04zipped".to_vec();
        }
        let uploaded = [0x1f, 0x8b, 8, 0];
        // the run uploaded a gzip tarball; the server serves a zip its address names
        let zipped = Some(ArchiveKind::Zip);
        assert_eq!(
            registry_source(&zip, "m", Some(&uploaded), zipped),
            Ok(SourceSeen::ArchiveOfItsKind(ArchiveKind::Zip))
        );
        // ... but not a zip its address calls a gzip tarball
        assert!(registry_source(&zip, "m", Some(&uploaded), Some(ArchiveKind::Gzip)).is_err());
        // nor the uploaded gzip tarball at an address that names a zip
        let mut gzip = exchange(200, "application/gzip", "");
        if let Ok(answer) = &mut gzip.response {
            answer.body = uploaded.to_vec();
        }
        let err = registry_source(&gzip, "m", Some(&uploaded), zipped).unwrap_err();
        assert!(
            err.contains("a gzip archive where its address names a zip one"),
            "{err}"
        );
        let location = exchange(200, "application/json", r#"{"location":"./m.zip"}"#);
        assert_eq!(
            registry_source_address(&location).as_deref(),
            Some("./m.zip")
        );
        assert_eq!(registry_source_address(&exchange(204, "", "")), None);
    }
}
