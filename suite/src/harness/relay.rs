//! Standard output through a relay, so that a reader that goes away (`conform … | head`)
//! cancels the run like a signal (teardown, reports, exit code) instead of panicking the
//! printer: the process writes into a pipe of its own, and a thread copies it to the real
//! standard output; when that write fails with a closed pipe, the thread says so once and
//! from then on drains what comes, discarding it. Installed only when standard output is not
//! a terminal (a terminal does not close, and libtest's colours look at it).

use std::io::{Read, Write};
use std::os::fd::{FromRawFd, RawFd};

/// The installed relay; [`Relay::finish`] puts the real standard output back and waits until
/// everything written has been passed on.
pub struct Relay {
    saved: RawFd,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Relay {
    /// Puts the relay in place of standard output when it is not a terminal; `closed` is
    /// called once, from the relay's thread, when the reader has gone away.
    pub fn install(closed: impl Fn() + Send + 'static) -> Option<Self> {
        // SAFETY: plain descriptor calls on this process's own descriptors; every one that
        // fails leaves standard output as it was.
        unsafe {
            if libc::isatty(1) == 1 {
                return None;
            }
            let mut ends = [0 as RawFd; 2];
            if libc::pipe(ends.as_mut_ptr()) != 0 {
                return None;
            }
            let saved = libc::dup(1);
            if saved < 0 || libc::dup2(ends[1], 1) < 0 {
                libc::close(ends[0]);
                libc::close(ends[1]);
                if saved >= 0 {
                    libc::close(saved);
                }
                return None;
            }
            libc::close(ends[1]);
            let mut from = std::fs::File::from_raw_fd(ends[0]);
            let out = libc::dup(saved);
            if out < 0 {
                libc::dup2(saved, 1);
                libc::close(saved);
                return None;
            }
            let mut to = std::fs::File::from_raw_fd(out);
            let thread = std::thread::Builder::new()
                .name("conform-stdout".into())
                .spawn(move || {
                    let mut buffer = [0u8; 8192];
                    let mut open = true;
                    loop {
                        match from.read(&mut buffer) {
                            Ok(0) => return,
                            Ok(n) if open => {
                                if to.write_all(&buffer[..n]).is_err() {
                                    open = false;
                                    closed();
                                }
                            }
                            Ok(_) => {}
                            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                            Err(_) => return,
                        }
                    }
                })
                .ok();
            Some(Self { saved, thread })
        }
    }

    /// Restores standard output and waits for the relay to pass on what it holds.
    pub fn finish(mut self) {
        let _ = std::io::stdout().flush();
        // SAFETY: the descriptor saved at install is ours; putting it back as 1 closes the
        // pipe's last write end, so the relay's thread reads to the end and stops.
        unsafe {
            libc::dup2(self.saved, 1);
            libc::close(self.saved);
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// `--format json`: standard output carries libtest's JSON lines only (a failed event's detail
/// as plain text, not libtest-mimic's `Error: "…"`); what the run says to a person (the
/// configuration, the group table, the reports written) goes to standard error instead,
/// around [`MachineOutput::machine`].
pub struct MachineOutput {
    saved: RawFd,
}

impl MachineOutput {
    /// From now on, standard output goes to standard error (until [`MachineOutput::machine`]).
    pub fn human_to_stderr() -> Option<Self> {
        let _ = std::io::stdout().flush();
        // SAFETY: descriptor calls on this process's own standard streams; on failure,
        // standard output stays as it was.
        unsafe {
            let saved = libc::dup(1);
            if saved < 0 {
                return None;
            }
            if libc::dup2(2, 1) < 0 {
                libc::close(saved);
                return None;
            }
            Some(Self { saved })
        }
    }

    /// Runs `f` with the real standard output (libtest's JSON lines, each passed through
    /// [`plain_failure`]), then sends standard output to standard error again.
    pub fn machine<T>(&self, f: impl FnOnce() -> T) -> T {
        let _ = std::io::stdout().flush();
        let mut rewriter = None;
        // SAFETY: as in `human_to_stderr`; when the pipe or its thread cannot be made, the
        // lines go to the real standard output as libtest writes them.
        unsafe {
            let mut ends = [0 as RawFd; 2];
            let out = libc::dup(self.saved);
            if out >= 0 && libc::pipe(ends.as_mut_ptr()) == 0 {
                let from = std::fs::File::from_raw_fd(ends[0]);
                let to = std::fs::File::from_raw_fd(out);
                rewriter = std::thread::Builder::new()
                    .name("conform-json".into())
                    .spawn(move || rewrite_lines(from, to))
                    .ok();
                libc::dup2(ends[1], 1);
                libc::close(ends[1]);
            } else if out >= 0 {
                libc::close(out);
            }
            if rewriter.is_none() {
                libc::dup2(self.saved, 1);
            }
        }
        let out = f();
        let _ = std::io::stdout().flush();
        // SAFETY: as in `human_to_stderr`; this closes the pipe's last write end, so the
        // rewriting thread reads to the end and stops.
        unsafe { libc::dup2(2, 1) };
        if let Some(thread) = rewriter {
            let _ = thread.join();
        }
        out
    }
}

/// Copies libtest's JSON lines from `from` to `to`, each through [`plain_failure`].
fn rewrite_lines(from: std::fs::File, mut to: std::fs::File) {
    use std::io::BufRead;
    let mut lines = std::io::BufReader::new(from);
    let mut line = String::new();
    loop {
        line.clear();
        match lines.read_line(&mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                let written = match plain_failure(&line) {
                    Some(plain) => to.write_all(plain.as_bytes()),
                    None => to.write_all(line.as_bytes()),
                };
                // a reader gone (the relay saw it too): go on reading, so libtest never blocks
                let _ = written;
            }
        }
    }
}

/// A libtest `failed` event whose `stdout` libtest-mimic wraps as `Error: "DETAIL"\n`,
/// written again with the detail as plain text (`DETAIL\n`); `None` for any other line.
pub fn plain_failure(line: &str) -> Option<String> {
    let event: serde_json::Value = serde_json::from_str(line.trim_end()).ok()?;
    if event.get("type")?.as_str()? != "test" || event.get("event")?.as_str()? != "failed" {
        return None;
    }
    let detail = event
        .get("stdout")?
        .as_str()?
        .strip_prefix("Error: \"")?
        .strip_suffix("\"\n")?;
    // libtest's own layout, the other lines'
    Some(format!(
        "{{ \"type\": \"test\", \"name\": {}, \"event\": \"failed\", \"stdout\": {} }}\n",
        event.get("name")?,
        serde_json::Value::from(format!("{detail}\n"))
    ))
}

impl Drop for MachineOutput {
    fn drop(&mut self) {
        let _ = std::io::stdout().flush();
        // SAFETY: the saved descriptor is ours.
        unsafe {
            libc::dup2(self.saved, 1);
            libc::close(self.saved);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::plain_failure;

    #[test]
    fn a_failed_events_detail_is_plain_text() {
        let line = r#"{ "type": "test", "name": "runs::show::bare", "event": "failed", "stdout": "Error: \"fail:\nendpoint.exists: 404\"\n" }"#;
        let plain = plain_failure(&format!("{line}\n")).expect("rewritten");
        let event: serde_json::Value = serde_json::from_str(&plain).expect("JSON");
        assert_eq!(event["stdout"], "fail:\nendpoint.exists: 404\n");
        assert_eq!(event["name"], "runs::show::bare");
        assert!(plain.ends_with('\n'));
        let ok = r#"{ "type": "test", "name": "a", "event": "ok" }"#;
        assert_eq!(plain_failure(ok), None);
    }
}
