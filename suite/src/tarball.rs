//! Tarballs made in code: the upload tests' configuration, and `conform certify`'s bundle.

use std::io::Write;

/// A tar of `files` (path, bytes), in the order given, the same bytes for the same files:
/// every entry a regular file of mode 0644 dated 1970.
pub fn tar_of(files: &[(String, Vec<u8>)]) -> std::io::Result<Vec<u8>> {
    let mut builder = tar::Builder::new(Vec::new());
    for (path, bytes) in files {
        let mut header = tar::Header::new_gnu();
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        header.set_mtime(0);
        header.set_cksum();
        builder.append_data(&mut header, path, &bytes[..])?;
    }
    builder.into_inner()
}

/// A gzip tarball holding one `main.tf` at the archive root, the same bytes every call.
pub fn config_tarball() -> Vec<u8> {
    let content = b"# made by conform\noutput \"hello\" {\n  value = \"world\"\n}\n";
    let tar = tar_of(&[("main.tf".to_string(), content.to_vec())]).unwrap_or_default();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let _ = gz.write_all(&tar);
    gz.finish().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    #[test]
    fn tarball_is_gzip_and_stable() {
        let a = super::config_tarball();
        assert_eq!(&a[..2], &[0x1f, 0x8b]);
        assert_eq!(a, super::config_tarball());
    }
}
