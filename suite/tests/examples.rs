//! The shell examples of README.md and docs/guide/*.md (issue 44): each fenced block whose
//! info string is `sh` runs, as one bash script with `set -eo pipefail`, in a scratch folder
//! of its own, with `conform` the binary under test (its folder first on PATH), against a
//! `conform serve` this file starts on loopback; a block marked `sh no-run` is shown only, and
//! its first line is a comment saying why. Every other shell fence (`bash`, `console`,
//! `shell`, a bare `sh` with other words) is refused, so no example goes untested unmarked.
//! The placeholders, as `docs/guide/README.md` documents them: `https://tfe.example.com`
//! in a tested block is replaced by the served address, `$TOKEN` and `$ADMIN_TOKEN` are its
//! tokens, and it has seeded the organization `example`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::processes::{scratch, Served};

pub fn tests() -> Vec<crate::harness::Test> {
    crate::harness::tests![
        every_shell_example_is_tested_or_marked,
        every_tested_example_runs_against_conform_serve,
    ]
}

/// The address the tested examples name, replaced by the served one.
const PLACEHOLDER_TARGET: &str = "https://tfe.example.com";
/// `$TOKEN` and `$ADMIN_TOKEN` of the tested examples.
const TOKEN: &str = "examples-token-0123";
const ADMIN_TOKEN: &str = "examples-admin-token-0123";
/// The organization the served reference seeds, for `--organization example`.
const SEEDED_ORGANIZATION: &str = "example";
/// How long one block may run.
const BLOCK_WITHIN: Duration = Duration::from_secs(180);

/// Fence languages that are shell.
const SHELL: [&str; 5] = ["sh", "bash", "shell", "console", "zsh"];

/// One fenced shell block: where it is, its lines, and whether it runs.
struct Block {
    /// `README.md` or `docs/guide/NAME.md`.
    file: String,
    /// The line of the opening fence (1-based).
    fence: usize,
    text: String,
    runs: bool,
}

impl Block {
    fn at(&self, line: usize) -> String {
        format!("{}:{}", self.file, self.fence + line)
    }
}

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the repository")
        .to_path_buf()
}

/// README.md, then the guide's pages in name order.
fn documents() -> Vec<PathBuf> {
    let root = repository();
    let mut guide: Vec<PathBuf> = std::fs::read_dir(root.join("docs/guide"))
        .expect("docs/guide")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    guide.sort();
    std::iter::once(root.join("README.md"))
        .chain(guide)
        .collect()
}

/// The shell blocks of every document, or the fences that are neither tested nor marked.
fn blocks() -> (Vec<Block>, Vec<String>) {
    let root = repository();
    let (mut found, mut wrong) = (Vec::new(), Vec::new());
    for path in documents() {
        let file = path
            .strip_prefix(&root)
            .unwrap_or(&path)
            .display()
            .to_string();
        let text = std::fs::read_to_string(&path).expect("a document");
        let mut open: Option<(usize, String, Vec<&str>)> = None;
        for (n, line) in text.lines().enumerate() {
            let fence = line.trim_start().strip_prefix("```");
            match (open.take(), fence) {
                (None, Some(info)) => open = Some((n + 1, info.trim().to_string(), Vec::new())),
                (None, None) => {}
                (Some((at, info, body)), Some(_)) => {
                    if let Some(block) = shell_block(&file, at, &info, body, &mut wrong) {
                        found.push(block);
                    }
                }
                (Some((at, info, mut body)), None) => {
                    body.push(line);
                    open = Some((at, info, body));
                }
            }
        }
    }
    (found, wrong)
}

/// The block when it is shell (`sh` runs, `sh no-run` with a first comment line is shown);
/// any other shell fence is noted in `wrong`.
fn shell_block(
    file: &str,
    fence: usize,
    info: &str,
    body: Vec<&str>,
    wrong: &mut Vec<String>,
) -> Option<Block> {
    let language = info.split_whitespace().next().unwrap_or_default();
    if !SHELL.contains(&language) {
        return None;
    }
    let runs = match info {
        "sh" => true,
        "sh no-run" if body.first().is_some_and(|l| l.starts_with("# ")) => false,
        "sh no-run" => {
            wrong.push(format!(
                "{file}:{fence}: a `sh no-run` block begins with a `# ` line saying why it is not run"
            ));
            return None;
        }
        _ => {
            wrong.push(format!(
                "{file}:{fence}: shell fence ```{info}: write ```sh (tested) or ```sh no-run (see docs/guide/README.md)"
            ));
            return None;
        }
    };
    Some(Block {
        file: file.to_string(),
        fence,
        text: body.join("\n"),
        runs,
    })
}

fn every_shell_example_is_tested_or_marked() {
    let (blocks, wrong) = blocks();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    let tested = blocks.iter().filter(|b| b.runs).count();
    assert!(tested > 0, "no tested example");
    assert!(
        blocks.iter().any(|b| b.file == "README.md" && b.runs),
        "README.md has no tested example"
    );
}

/// The folder of the binary under test, first on PATH.
fn path_with_conform() -> String {
    let bin = Path::new(env!("CARGO_BIN_EXE_conform"));
    let dir = bin.parent().expect("the binary's folder");
    match std::env::var("PATH") {
        Ok(path) => format!("{}:{path}", dir.display()),
        Err(_) => dir.display().to_string(),
    }
}

/// Runs one block in `dir`: `None` when it succeeded, else where and why it failed.
fn run_block(block: &Block, url: &str, dir: &Path) -> Option<String> {
    // The preamble is one line: bash's LINENO minus one is the block's line.
    let script = format!(
        "set -eo pipefail; trap 'echo \"example failed at line $((LINENO - 1))\" >&2' ERR\n{}\n",
        block.text.replace(PLACEHOLDER_TARGET, url)
    );
    let (out, err) = (dir.join("stdout"), dir.join("stderr"));
    let mut child = Command::new("bash")
        .args(["-c", &script])
        .current_dir(dir)
        .env("PATH", path_with_conform())
        .env("TOKEN", TOKEN)
        .env("ADMIN_TOKEN", ADMIN_TOKEN)
        .env("CI", "true")
        .env_remove("CONFORM_TOKEN")
        .env_remove("CONFORM_ADMIN_TOKEN")
        .env_remove("CONFORM_TARGET")
        .env_remove("TFE_ADDRESS")
        .env_remove("TFE_TOKEN")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).expect("stdout file"))
        .stderr(std::fs::File::create(&err).expect("stderr file"))
        .spawn()
        .expect("bash starts");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break Some(status);
        }
        if started.elapsed() > BLOCK_WITHIN {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let said = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
    let (stdout, stderr) = (said(&out), said(&err));
    let tail = |s: &str| {
        let lines: Vec<&str> = s.lines().collect();
        lines[lines.len().saturating_sub(25)..].join("\n")
    };
    match status {
        Some(s) if s.success() => None,
        Some(s) => {
            let line = stderr
                .lines()
                .rev()
                .find_map(|l| l.strip_prefix("example failed at line "))
                .and_then(|n| n.trim().parse::<usize>().ok())
                .unwrap_or(1);
            Some(format!(
                "{}: exit {:?}: {}\n--- stdout\n{}\n--- stderr\n{}",
                block.at(line),
                s.code(),
                block.text.lines().nth(line - 1).unwrap_or_default(),
                tail(&stdout),
                tail(&stderr)
            ))
        }
        None => Some(format!(
            "{}: still running after {BLOCK_WITHIN:?}",
            block.at(1)
        )),
    }
}

fn every_tested_example_runs_against_conform_serve() {
    let (blocks, _) = blocks();
    let served = Served::with_args(&[
        "--token",
        TOKEN,
        "--admin-token",
        ADMIN_TOKEN,
        "--seed-organization",
        SEEDED_ORGANIZATION,
    ]);
    let url = served.url.trim_end_matches('/').to_string();
    let failures: Vec<String> = blocks
        .iter()
        .filter(|b| b.runs)
        .filter_map(|block| {
            let name = format!("{}-{}", block.file.replace('/', "-"), block.fence);
            let dir = scratch("examples", &name);
            let failure = run_block(block, &url, &dir);
            if failure.is_none() {
                let _ = std::fs::remove_dir_all(&dir);
            }
            failure
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
