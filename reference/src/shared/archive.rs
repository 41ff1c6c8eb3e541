//! The archive `GET /v1/object/<id>` serves for a module version ([`served_object`]): what was
//! uploaded, or what a fault makes of it. `registry-source-zip` packs its files again as a zip
//! archive of stored (uncompressed) files, a source the module registry protocol allows as
//! well as a gzip tarball; the `registry-archive-*` faults serve archives terraform could not
//! unpack.

use std::io::Read;

use crate::faults::Kind;
use crate::jsonapi::Ctx;
use crate::shapes::{gzip, tar};

/// The bytes `GET /v1/object/<id>` serves for an object of `kind`: what was uploaded, except
/// for a module version's archive under a fault: `registry-download-wrong-bytes` (other bytes),
/// `registry-source-zip` (its files as a zip archive), `registry-archive-truncated` (its first
/// half), `registry-archive-not-tar` (a gzip stream of text), `registry-archive-empty-tar`
/// (a gzip stream of an empty tar).
pub(crate) fn served_object(ctx: &Ctx, kind: &str, bytes: Vec<u8>) -> Vec<u8> {
    let fault = |k| kind == "registry-module-versions" && ctx.state.fault(k);
    if fault(Kind::RegistrySourceZip) {
        return match files_of(&bytes) {
            Some(files) if !files.is_empty() => stored(&files),
            _ => stored(&[(
                "main.tf".into(),
                b"# the module, served by conform-reference as a zip archive\n".to_vec(),
            )]),
        };
    }
    if fault(Kind::RegistryArchiveTruncated) {
        return bytes[..bytes.len() / 2].to_vec();
    }
    if fault(Kind::RegistryArchiveNotTar) {
        return gzip(b"# conform-reference: a gzip stream that holds no tar\n");
    }
    if fault(Kind::RegistryArchiveEmptyTar) {
        return gzip(&tar(&[]));
    }
    if !fault(Kind::RegistryDownloadWrongBytes) {
        return bytes;
    }
    let other = crate::shapes::seeded_archive();
    if bytes != other {
        other
    } else {
        bytes[..bytes.len() / 2].to_vec()
    }
}

/// The regular files of a gzip tarball (ustar or GNU headers, each name as its header's
/// `name` field writes it), or `None` when it is not one.
fn files_of(tar_gz: &[u8]) -> Option<Vec<(String, Vec<u8>)>> {
    let mut tar = Vec::new();
    flate2::read::GzDecoder::new(tar_gz)
        .take(64 << 20)
        .read_to_end(&mut tar)
        .ok()?;
    let mut files = Vec::new();
    let mut at = 0;
    while let Some(header) = tar.get(at..at + 512) {
        if header.iter().all(|b| *b == 0) {
            break;
        }
        let field = |from: usize, to: usize| {
            let text = &header[from..to];
            let end = text.iter().position(|b| *b == 0).unwrap_or(text.len());
            String::from_utf8_lossy(&text[..end]).trim().to_string()
        };
        let size = usize::from_str_radix(&field(124, 136), 8).ok()?;
        let content = tar.get(at + 512..at + 512 + size)?;
        if matches!(header[156], b'0' | 0) {
            files.push((field(0, 100), content.to_vec()));
        }
        at += 512 + size.div_ceil(512) * 512;
    }
    Some(files)
}

/// The CRC-32 (IEEE) of `bytes`, as a zip entry records it.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = 0xffff_ffffu32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            let mask = (crc & 1).wrapping_neg();
            crc = (crc >> 1) ^ (0xedb8_8320 & mask);
        }
    }
    !crc
}

/// A zip archive holding these files (name, content), stored without compression.
fn stored(files: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut central = Vec::new();
    for (name, content) in files {
        entry(&mut out, &mut central, name, content);
    }
    let central_len = u32::try_from(central.len()).unwrap_or(u32::MAX);
    let central_at = u32::try_from(out.len()).unwrap_or(u32::MAX);
    let count = u16::try_from(files.len()).unwrap_or(u16::MAX);
    out.extend_from_slice(&central);
    // end of central directory
    out.extend_from_slice(b"PK\x05\x06");
    out.extend_from_slice(&[0; 4]); // disk numbers
    out.extend_from_slice(&count.to_le_bytes());
    out.extend_from_slice(&count.to_le_bytes());
    out.extend_from_slice(&central_len.to_le_bytes());
    out.extend_from_slice(&central_at.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes()); // comment
    out
}

/// One stored file: its local header and data into `out`, its central directory entry into
/// `central`.
fn entry(out: &mut Vec<u8>, central: &mut Vec<u8>, name: &str, content: &[u8]) {
    let crc = crc32(content);
    let size = u32::try_from(content.len()).unwrap_or(u32::MAX);
    let name_len = u16::try_from(name.len()).unwrap_or(u16::MAX);
    let local_at = u32::try_from(out.len()).unwrap_or(u32::MAX);
    // local file header
    out.extend_from_slice(b"PK\x03\x04");
    out.extend_from_slice(&20u16.to_le_bytes()); // version needed
    out.extend_from_slice(&0u16.to_le_bytes()); // flags
    out.extend_from_slice(&0u16.to_le_bytes()); // method: stored
    out.extend_from_slice(&0u32.to_le_bytes()); // time and date
    out.extend_from_slice(&crc.to_le_bytes());
    out.extend_from_slice(&size.to_le_bytes());
    out.extend_from_slice(&size.to_le_bytes());
    out.extend_from_slice(&name_len.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes()); // extra
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(content);
    // central directory
    central.extend_from_slice(b"PK\x01\x02");
    central.extend_from_slice(&20u16.to_le_bytes()); // version made by
    central.extend_from_slice(&20u16.to_le_bytes()); // version needed
    central.extend_from_slice(&0u16.to_le_bytes());
    central.extend_from_slice(&0u16.to_le_bytes());
    central.extend_from_slice(&0u32.to_le_bytes());
    central.extend_from_slice(&crc.to_le_bytes());
    central.extend_from_slice(&size.to_le_bytes());
    central.extend_from_slice(&size.to_le_bytes());
    central.extend_from_slice(&name_len.to_le_bytes());
    central.extend_from_slice(&[0; 8]); // extra, comment, disk, internal attributes
    central.extend_from_slice(&0u32.to_le_bytes()); // external attributes
    central.extend_from_slice(&local_at.to_le_bytes()); // offset of the local header
    central.extend_from_slice(name.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stored_zip_has_its_signatures_and_crc() {
        assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
        let zip = stored(&[("main.tf".into(), b"# module\n".to_vec())]);
        assert!(zip.starts_with(b"PK\x03\x04"));
        assert_eq!(&zip[zip.len() - 22..zip.len() - 18], b"PK\x05\x06");
        // the central directory's entry: 46 bytes, then its name
        let central = zip.len() - 22 - (46 + 7);
        assert_eq!(&zip[central..central + 4], b"PK\x01\x02");
        assert_eq!(&zip[central + 46..central + 53], b"main.tf");
    }

    #[test]
    fn a_tarball_is_read_back_into_its_files() {
        let files = files_of(&crate::shapes::seeded_archive()).unwrap();
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].0, "main.tf");
        assert!(files_of(b"not gzip").is_none());
    }
}
