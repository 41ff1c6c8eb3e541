//! A module's source archive unpacked as terraform's getter unpacks it (go-getter's
//! decompressors): the compression stream read whole (a stream cut short, or with a trailer
//! that does not match, stops `terraform init`), the tar or zip inside it read entry by entry,
//! and its regular files listed with a digest of their bytes. Pure functions over the fetched
//! bytes; what they unpack is streamed through a fixed buffer and never kept, and at most
//! [`UNPACKED_LIMIT`] bytes are unpacked, so memory never follows what a target sends.

use std::io::{self, Read};

use md5::{Digest, Md5};

use super::ArchiveKind;

/// Bytes unpacked at most from one archive: past it the archive is not judged.
pub const UNPACKED_LIMIT: u64 = 256 << 20;

/// A regular file an archive holds: its path (without a leading `./` or `/`) and its bytes'
/// digest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchiveFile {
    /// The path inside the archive.
    pub path: String,
    /// The MD5 of its bytes.
    pub md5: Vec<u8>,
}

/// Why an archive was not unpacked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unpack {
    /// It does not unpack as terraform would unpack it (the words say how: a finding).
    Broken(String),
    /// It was not judged (a kind conform does not unpack, more than [`UNPACKED_LIMIT`]).
    NotJudged(String),
}

/// The regular files of an archive of `kind`, unpacked as go-getter does; a gzip stream must be
/// whole and hold a tar, and the archive at least one regular file (a directory, a link or an
/// empty tar gives terraform no module).
pub fn unpack(bytes: &[u8], kind: ArchiveKind) -> Result<Vec<ArchiveFile>, Unpack> {
    unpack_within(bytes, kind, UNPACKED_LIMIT)
}

/// [`unpack`], unpacking at most `limit` bytes.
fn unpack_within(bytes: &[u8], kind: ArchiveKind, limit: u64) -> Result<Vec<ArchiveFile>, Unpack> {
    let gunzip = flate2::read::MultiGzDecoder::new(bytes);
    let files = match kind {
        ArchiveKind::Gzip => untar(Layer::new(gunzip, limit), true)?,
        ArchiveKind::Tar => untar(Layer::new(bytes, limit), false)?,
        ArchiveKind::Zip => unzip(bytes, limit)?,
        other => {
            return Err(Unpack::NotJudged(format!(
                "conform does not unpack {} archives",
                other.word()
            )))
        }
    };
    if files.is_empty() {
        return Err(Unpack::Broken(format!(
            "{} holds no regular file (terraform would find no module in it)",
            if kind == ArchiveKind::Zip {
                "the zip archive"
            } else {
                "the tar"
            }
        )));
    }
    Ok(files)
}

/// The reader under the tar: counts what it gives (at most [`UNPACKED_LIMIT`]) and keeps its
/// own error, so that a broken compression stream is told from a broken tar.
struct Layer<R> {
    inner: R,
    given: u64,
    limit: u64,
    failed: Option<String>,
}

impl<R: Read> Layer<R> {
    fn new(inner: R, limit: u64) -> Self {
        Self {
            inner,
            given: 0,
            limit,
            failed: None,
        }
    }
}

impl<R: Read> Read for Layer<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.given >= self.limit {
            self.failed = Some("limit".into());
            return Err(io::Error::other("unpack limit"));
        }
        match self.inner.read(buf) {
            Ok(n) => {
                self.given += n as u64;
                Ok(n)
            }
            Err(e) => {
                self.failed = Some(e.to_string());
                Err(e)
            }
        }
    }
}

/// Reads `from` to its end into `hash` (when given), through one fixed buffer.
fn drain(from: &mut impl Read, mut hash: Option<&mut Md5>) -> io::Result<()> {
    let mut buf = [0u8; 16 * 1024];
    loop {
        let n = from.read(&mut buf)?;
        if n == 0 {
            return Ok(());
        }
        if let Some(h) = hash.as_deref_mut() {
            h.update(&buf[..n]);
        }
    }
}

/// A path as terraform writes it into the module's directory.
fn clean(path: &str) -> String {
    let mut p = path;
    while let Some(rest) = p.strip_prefix("./").or_else(|| p.strip_prefix('/')) {
        p = rest;
    }
    p.to_string()
}

/// The regular files of the tar `layer` gives; `gzip`: the layer is a gzip stream, read to its
/// end after the tar (its trailer checks that it is whole).
fn untar<R: Read>(layer: Layer<R>, gzip: bool) -> Result<Vec<ArchiveFile>, Unpack> {
    let mut archive = tar::Archive::new(layer);
    let mut files = Vec::new();
    let mut tar_error = None;
    match archive.entries() {
        Err(e) => tar_error = Some(e.to_string()),
        Ok(entries) => {
            for entry in entries {
                let read = entry.and_then(|mut e| {
                    let regular = e.header().entry_type().is_file();
                    let path = clean(&String::from_utf8_lossy(&e.path_bytes()));
                    let mut hash = Md5::new();
                    drain(&mut e, Some(&mut hash))?;
                    Ok(regular.then(|| ArchiveFile {
                        path,
                        md5: hash.finalize().to_vec(),
                    }))
                });
                match read {
                    Ok(file) => files.extend(file),
                    Err(e) => {
                        tar_error = Some(e.to_string());
                        break;
                    }
                }
            }
        }
    }
    let mut layer = archive.into_inner();
    if tar_error.is_none() && gzip {
        // what follows the tar's end, to the gzip trailer
        let _ = drain(&mut layer, None);
    }
    match (layer.failed, tar_error) {
        (Some(e), _) if e == "limit" => Err(too_large(layer.limit)),
        (Some(e), _) => Err(Unpack::Broken(format!(
            "the gzip stream is not whole: {e} after {} bytes unpacked (terraform could not decompress it)",
            layer.given
        ))),
        (None, Some(e)) => Err(Unpack::Broken(format!(
            "{} is not a tar: {e} (terraform could not unpack it)",
            if gzip {
                format!("what the gzip stream holds ({} bytes)", layer.given)
            } else {
                "the archive".to_string()
            }
        ))),
        (None, None) => Ok(files),
    }
}

/// An archive that unpacks to more than `limit` bytes: not judged.
fn too_large(limit: u64) -> Unpack {
    Unpack::NotJudged(format!(
        "the archive unpacks to more than {} KiB, which conform does not read",
        limit >> 10
    ))
}

/// A little-endian number of `width` bytes at `at`, if the bytes reach that far.
fn le(bytes: &[u8], at: usize, width: usize) -> Option<u64> {
    let field = bytes.get(at..at.checked_add(width)?)?;
    Some(
        field
            .iter()
            .rev()
            .fold(0u64, |n, b| (n << 8) | u64::from(*b)),
    )
}

/// The regular files of a zip archive (its central directory, each entry's local header and
/// data: stored or deflated, its CRC-32 and size checked), as go-getter's unzip reads them.
fn unzip(bytes: &[u8], limit: u64) -> Result<Vec<ArchiveFile>, Unpack> {
    let broken = |why: &str| Unpack::Broken(format!("the zip archive is broken: {why}"));
    let floor = bytes.len().saturating_sub(22 + 0xffff);
    let end = (floor..bytes.len().saturating_sub(21))
        .rev()
        .find(|&i| bytes[i..].starts_with(b"PK\x05\x06"))
        .ok_or_else(|| broken("no end of central directory"))?;
    let count = le(bytes, end + 10, 2).unwrap_or(0);
    let mut at = le(bytes, end + 16, 4).unwrap_or(u64::MAX) as usize;
    let mut files = Vec::new();
    let mut unpacked = 0u64;
    for _ in 0..count {
        if !bytes
            .get(at..)
            .is_some_and(|b| b.starts_with(b"PK\x01\x02"))
        {
            return Err(broken("a central directory entry is missing"));
        }
        let field = |off: usize, width: usize| le(bytes, at + off, width).unwrap_or(0);
        let (method, crc, packed, size) = (field(10, 2), field(16, 4), field(20, 4), field(24, 4));
        let (name_len, extra, comment) = (field(28, 2), field(30, 2), field(32, 2));
        let local = field(42, 4) as usize;
        let name_at = at + 46;
        let name = bytes
            .get(name_at..name_at + name_len as usize)
            .ok_or_else(|| broken("an entry's name runs past the end"))?;
        let name = String::from_utf8_lossy(name).to_string();
        at = name_at + (name_len + extra + comment) as usize;
        if name.ends_with('/') {
            continue;
        }
        if packed == 0xffff_ffff || size == 0xffff_ffff {
            return Err(Unpack::NotJudged(
                "conform does not unpack zip64 archives".into(),
            ));
        }
        unpacked += size;
        if unpacked > limit {
            return Err(too_large(limit));
        }
        if !bytes
            .get(local..)
            .is_some_and(|b| b.starts_with(b"PK\x03\x04"))
        {
            return Err(broken(&format!("`{name}` has no local header")));
        }
        let data_at = local
            + 30
            + (le(bytes, local + 26, 2).unwrap_or(0) + le(bytes, local + 28, 2).unwrap_or(0))
                as usize;
        let data = bytes
            .get(data_at..data_at + packed as usize)
            .ok_or_else(|| broken(&format!("`{name}` runs past the end")))?;
        let mut reader: Box<dyn Read> = match method {
            0 => Box::new(data),
            8 => Box::new(flate2::read::DeflateDecoder::new(data)),
            m => {
                return Err(Unpack::NotJudged(format!(
                    "conform does not unpack zip compression method {m}"
                )))
            }
        };
        let mut content = CrcMd5::default();
        let mut reader = (&mut reader).take(size + 1);
        drain(&mut content.reading(&mut reader), None)
            .map_err(|e| broken(&format!("`{name}` does not inflate: {e}")))?;
        if content.crc.sum() != crc as u32 || u64::from(content.crc.amount()) != size {
            return Err(broken(&format!(
                "`{name}` does not match its CRC-32 or size"
            )));
        }
        files.push(ArchiveFile {
            path: clean(&name),
            md5: content.md5.finalize().to_vec(),
        });
    }
    Ok(files)
}

/// The CRC-32 and MD5 of what passes through.
#[derive(Default)]
struct CrcMd5 {
    crc: flate2::Crc,
    md5: Md5,
}

impl CrcMd5 {
    fn reading<'a, R: Read>(&'a mut self, from: &'a mut R) -> impl Read + 'a {
        struct Tee<'a, R> {
            from: &'a mut R,
            to: &'a mut CrcMd5,
        }
        impl<R: Read> Read for Tee<'_, R> {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                let n = self.from.read(buf)?;
                self.to.crc.update(&buf[..n]);
                self.to.md5.update(&buf[..n]);
                Ok(n)
            }
        }
        Tee { from, to: self }
    }
}

/// The files the run published that `got` lacks or holds with other bytes, said for a finding;
/// `None` when it holds every one of them as published.
pub fn published_missing(got: &[ArchiveFile], published: &[ArchiveFile]) -> Option<String> {
    let wrong: Vec<String> = published
        .iter()
        .filter_map(|p| match got.iter().find(|g| g.path == p.path) {
            None => Some(format!("`{}` is missing", p.path)),
            Some(g) if g.md5 != p.md5 => Some(format!("`{}` holds other bytes", p.path)),
            Some(_) => None,
        })
        .collect();
    (!wrong.is_empty()).then(|| wrong.join(", "))
}

#[cfg(test)]
pub(crate) mod tests {
    use std::io::{Read, Write};

    use super::*;

    /// A gzip tarball of these regular files.
    pub(crate) fn gzip_tar(files: &[(&str, &[u8])]) -> Vec<u8> {
        gzip(&tar_of(files, &[]))
    }

    fn tar_of(files: &[(&str, &[u8])], dirs: &[&str]) -> Vec<u8> {
        let mut builder = tar::Builder::new(Vec::new());
        for dir in dirs {
            let mut header = tar::Header::new_gnu();
            header.set_entry_type(tar::EntryType::Directory);
            header.set_size(0);
            header.set_cksum();
            builder.append_data(&mut header, dir, io::empty()).unwrap();
        }
        for (name, content) in files {
            let mut header = tar::Header::new_gnu();
            header.set_size(content.len() as u64);
            header.set_cksum();
            builder.append_data(&mut header, name, *content).unwrap();
        }
        builder.into_inner().unwrap()
    }

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(bytes).unwrap();
        gz.finish().unwrap()
    }

    /// A zip archive of the regular files of a gzip tarball, the first stored, the others
    /// deflated.
    pub(crate) fn zip_of(tar_gz: &[u8]) -> Vec<u8> {
        let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(tar_gz));
        let mut out = Vec::new();
        let mut central = Vec::new();
        let mut count = 0u16;
        for entry in archive.entries().unwrap() {
            let mut entry = entry.unwrap();
            let name = String::from_utf8_lossy(&entry.path_bytes()).to_string();
            let mut content = Vec::new();
            entry.read_to_end(&mut content).unwrap();
            let mut crc = flate2::Crc::new();
            crc.update(&content);
            let (method, packed) = if count == 0 {
                (0u16, content.clone())
            } else {
                let mut d = flate2::write::DeflateEncoder::new(Vec::new(), Default::default());
                d.write_all(&content).unwrap();
                (8u16, d.finish().unwrap())
            };
            let header = |sig: &[u8], central: bool| {
                let mut h = sig.to_vec();
                if central {
                    h.extend_from_slice(&20u16.to_le_bytes());
                }
                h.extend_from_slice(&20u16.to_le_bytes());
                h.extend_from_slice(&0u16.to_le_bytes());
                h.extend_from_slice(&method.to_le_bytes());
                h.extend_from_slice(&0u32.to_le_bytes());
                h.extend_from_slice(&crc.sum().to_le_bytes());
                h.extend_from_slice(&(packed.len() as u32).to_le_bytes());
                h.extend_from_slice(&(content.len() as u32).to_le_bytes());
                h.extend_from_slice(&(name.len() as u16).to_le_bytes());
                h.extend_from_slice(&0u16.to_le_bytes());
                h
            };
            let mut c = header(b"PK\x01\x02", true);
            c.extend_from_slice(&[0; 6]);
            c.extend_from_slice(&0u32.to_le_bytes());
            c.extend_from_slice(&(out.len() as u32).to_le_bytes());
            c.extend_from_slice(name.as_bytes());
            central.extend(c);
            out.extend(header(b"PK\x03\x04", false));
            out.extend_from_slice(name.as_bytes());
            out.extend(packed);
            count += 1;
        }
        let at = out.len() as u32;
        out.extend_from_slice(&central);
        out.extend_from_slice(b"PK\x05\x06\0\0\0\0");
        out.extend_from_slice(&count.to_le_bytes());
        out.extend_from_slice(&count.to_le_bytes());
        out.extend_from_slice(&(central.len() as u32).to_le_bytes());
        out.extend_from_slice(&at.to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes());
        out
    }

    fn broken(result: Result<Vec<ArchiveFile>, Unpack>) -> String {
        match result {
            Err(Unpack::Broken(why)) => why,
            other => panic!("expected a broken archive, got {other:?}"),
        }
    }

    #[test]
    fn a_whole_gzip_tarball_unpacks_to_its_files() {
        let bytes = gzip_tar(&[("./main.tf", b"# a\n"), ("modules/x/main.tf", b"# b\n")]);
        let files = unpack(&bytes, ArchiveKind::Gzip).unwrap();
        let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["main.tf", "modules/x/main.tf"]);
        assert_eq!(files, unpack(&zip_of(&bytes), ArchiveKind::Zip).unwrap());
        let plain = tar_of(&[("main.tf", b"# a\n")], &[]);
        assert_eq!(unpack(&plain, ArchiveKind::Tar).unwrap()[0], files[0]);
        assert_eq!(published_missing(&files, &files[..1]), None);
        let other = unpack(&gzip_tar(&[("main.tf", b"# c\n")]), ArchiveKind::Gzip).unwrap();
        assert_eq!(
            published_missing(&other, &files).as_deref(),
            Some("`main.tf` holds other bytes, `modules/x/main.tf` is missing")
        );
    }

    #[test]
    fn a_truncated_gzip_stream_is_broken() {
        let bytes = crate::tarball::config_tarball();
        let why = broken(unpack(&bytes[..bytes.len() / 2], ArchiveKind::Gzip));
        assert!(why.starts_with("the gzip stream is not whole"), "{why}");
        // the trailer missing only: the stream is not whole either
        let why = broken(unpack(&bytes[..bytes.len() - 4], ArchiveKind::Gzip));
        assert!(why.starts_with("the gzip stream is not whole"), "{why}");
        let mut zip = zip_of(&bytes);
        zip.truncate(zip.len() - 30);
        assert!(broken(unpack(&zip, ArchiveKind::Zip)).contains("zip archive is broken"));
    }

    #[test]
    fn a_gzip_stream_without_a_tar_is_broken() {
        let why = broken(unpack(&gzip(b"# not a tar\n"), ArchiveKind::Gzip));
        assert!(why.contains("is not a tar"), "{why}");
        let why = broken(unpack(&gzip(&[b'x'; 4096]), ArchiveKind::Gzip));
        assert!(why.contains("is not a tar"), "{why}");
    }

    #[test]
    fn an_empty_tar_is_broken() {
        let why = broken(unpack(&gzip(&[0; 1024]), ArchiveKind::Gzip));
        assert!(why.contains("holds no regular file"), "{why}");
        let why = broken(unpack(&gzip(b""), ArchiveKind::Gzip));
        assert!(why.contains("holds no regular file"), "{why}");
    }

    #[test]
    fn a_tar_of_a_directory_only_is_broken() {
        let bytes = gzip(&tar_of(&[], &["modules/"]));
        let why = broken(unpack(&bytes, ArchiveKind::Gzip));
        assert!(why.contains("holds no regular file"), "{why}");
    }

    #[test]
    fn what_conform_does_not_unpack_is_not_judged() {
        assert!(matches!(
            unpack(b"BZh91AY", ArchiveKind::Bzip2),
            Err(Unpack::NotJudged(_))
        ));
        // a gzip bomb stops at the limit, unjudged
        let bomb = gzip(&vec![0u8; 1 << 20]);
        assert!(matches!(
            unpack_within(&bomb, ArchiveKind::Gzip, 1 << 19),
            Err(Unpack::NotJudged(why)) if why.contains("more than 512 KiB")
        ));
        let zip = zip_of(&gzip_tar(&[("main.tf", &[b'x'; 4096])]));
        assert!(matches!(
            unpack_within(&zip, ArchiveKind::Zip, 1024),
            Err(Unpack::NotJudged(why)) if why.contains("more than 1 KiB")
        ));
    }
}
