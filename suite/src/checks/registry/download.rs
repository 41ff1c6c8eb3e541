//! A download: the source address it gives (`X-Terraform-Get`, a JSON `location`) and the
//! archive fetched from it.

use super::archive::{published_missing, unpack, Unpack};
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

/// How a fetched source was judged, when it did not fail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceSeen {
    /// An archive of this kind that unpacks, holding every file the run published with the
    /// bytes it published (the very upload, or the same files packed again, in any kind).
    Published(ArchiveKind),
    /// An archive of this kind that unpacks to at least one regular file: a `--module`
    /// module, whose files the run does not know.
    Unpacked(ArchiveKind),
    /// Not judged, for this reason (a kind conform does not unpack, an archive past the
    /// response size cap or [`UNPACKED_LIMIT`](super::UNPACKED_LIMIT)): the test cannot pass on it.
    NotJudged(String),
}

/// `registry.download-source`: the fetched source (`ex`) of `module`, whose address names an
/// archive kind (`named`, [`archive_named`]), is an archive of that kind (unnamed: of any kind
/// go-getter unpacks) that unpacks as terraform unpacks it ([`unpack`]: a whole compression
/// stream, a tar or zip inside, at least one regular file) and, where the run published the
/// module (`uploaded`, its archive), holds every file it published with the same bytes.
pub fn registry_source(
    ex: &Exchange,
    module: &str,
    uploaded: Option<&[u8]>,
    named: Option<ArchiveKind>,
) -> Result<SourceSeen, Message> {
    let body = ex.body();
    let capped = ex.response.as_ref().is_ok_and(|r| r.truncated);
    let got = format!(
        "received {} with {} bytes{}",
        transport_or_status(ex),
        body.len(),
        if capped {
            " (cut at the response size cap)"
        } else {
            ""
        }
    );
    let whose = if uploaded.is_some() {
        format!("`{module}`")
    } else {
        format!("`{module}` (given with --module)")
    };
    let kind = ArchiveKind::of(body).filter(|_| ex.is_success());
    let Some(kind) = kind.filter(|k| named.is_none_or(|n| n == *k)) else {
        return Err(message!(
            "expected the source of {whose} to be a non-empty archive{}; {got}{}",
            named
                .map(|n| format!(" ({}, as its address names)", n.word()))
                .unwrap_or_default(),
            match (kind, named) {
                (Some(k), Some(n)) => format!(
                    ", a {} archive where its address names a {} one",
                    k.word(),
                    n.word()
                ),
                _ if ex.is_success() && !body.is_empty() =>
                    ", which starts with the magic bytes of no archive (gzip 1f 8b, zip PK)"
                        .to_string(),
                _ => String::new(),
            }
        ));
    };
    if capped {
        return Ok(SourceSeen::NotJudged(format!(
            "the source of {whose} is larger than the response size cap (--max-body), so it was not unpacked"
        )));
    }
    let files = match unpack(body, kind) {
        Ok(files) => files,
        Err(Unpack::NotJudged(why)) => return Ok(SourceSeen::NotJudged(why)),
        Err(Unpack::Broken(why)) => {
            return Err(message!(
                "expected the source of {whose} to unpack as terraform unpacks it (a whole {} archive holding at least one regular file); {got}, and {why}",
                kind.word()
            ))
        }
    };
    let Some(uploaded) = uploaded else {
        return Ok(SourceSeen::Unpacked(kind));
    };
    let published = ArchiveKind::of(uploaded)
        .and_then(|k| unpack(uploaded, k).ok())
        .unwrap_or_default();
    match published_missing(&files, &published) {
        None => Ok(SourceSeen::Published(kind)),
        Some(wrong) => Err(message!(
            "expected the source of {whose} to hold the files the run published ({}); {got}, a {} archive in which {wrong}",
            published
                .iter()
                .map(|f| format!("`{}`", f.path))
                .collect::<Vec<_>>()
                .join(", "),
            kind.word()
        )),
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
        let bytes = crate::tarball::config_tarball();
        if let Ok(answer) = &mut archive.response {
            answer.body = bytes.clone();
        }
        let gz = Some(ArchiveKind::Gzip);
        assert_eq!(
            registry_source(&archive, "acme/network/aws", Some(&bytes), gz),
            Ok(SourceSeen::Published(ArchiveKind::Gzip))
        );
        assert!(registry_source(&archive, "acme/network/aws", None, gz).is_ok());
        assert!(registry_source(&archive, "acme/network/aws", None, None).is_ok());
        // published other files: `main.tf` holds other bytes
        let other = super::super::archive::tests::gzip_tar(&[("main.tf", b"other")]);
        let err = registry_source(&archive, "acme/network/aws", Some(&other), gz).unwrap_err();
        assert!(err.contains("`main.tf` holds other bytes"), "{err}");
        // cut at the response size cap: not judged, neither passed nor failed
        if let Ok(answer) = &mut archive.response {
            answer.truncated = true;
        }
        assert!(matches!(
            registry_source(&archive, "m", Some(&bytes), gz),
            Ok(SourceSeen::NotJudged(_))
        ));
        if let Ok(answer) = &mut archive.response {
            answer.truncated = false;
        }
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
        let uploaded = crate::tarball::config_tarball();
        let published = unpack(&uploaded, ArchiveKind::Gzip).unwrap();
        if let Ok(answer) = &mut zip.response {
            answer.body = super::super::archive::tests::zip_of(&uploaded);
        }
        assert_eq!(
            unpack(zip.body(), ArchiveKind::Zip).as_ref(),
            Ok(&published)
        );
        // the run uploaded a gzip tarball; the server serves a zip its address names
        let zipped = Some(ArchiveKind::Zip);
        assert_eq!(
            registry_source(&zip, "m", Some(&uploaded), zipped),
            Ok(SourceSeen::Published(ArchiveKind::Zip))
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
