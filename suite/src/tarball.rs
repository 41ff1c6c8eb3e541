//! Tarballs made in code for the upload tests.

use std::io::Write;

/// A gzip tarball holding one `main.tf` at the archive root, the same bytes every call.
pub fn config_tarball() -> Vec<u8> {
    let content = b"# made by conform\noutput \"hello\" {\n  value = \"world\"\n}\n";
    let mut builder = tar::Builder::new(Vec::new());
    let mut header = tar::Header::new_gnu();
    header.set_size(content.len() as u64);
    header.set_mode(0o644);
    header.set_mtime(0);
    header.set_cksum();
    let tar = builder
        .append_data(&mut header, "main.tf", &content[..])
        .and_then(|_| builder.into_inner())
        .unwrap_or_default();
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
