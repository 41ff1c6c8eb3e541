//! A test's own folder under the system's temporary folder, removed when the test ends
//! (passed or panicked), so that test runs leave nothing behind in /tmp.

use std::path::{Path, PathBuf};

/// A fresh, empty folder named after the test and the process; gone on drop.
pub struct Scratch(PathBuf);

impl Scratch {
    /// Makes `conform-{kind}-{name}-{pid}` in the temporary folder, empty.
    pub fn new(kind: &str, name: &str) -> Self {
        let dir =
            std::env::temp_dir().join(format!("conform-{kind}-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch folder");
        Self(dir)
    }
}

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl AsRef<std::ffi::OsStr> for Scratch {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.0.as_os_str()
    }
}
