//! Memory does not follow what a target sends: against a server whose every answer but the
//! preflight's is an endless stream (2 GiB announced), the run's peak memory stays within
//! 24 MB of the same run's against a server that sends nothing large (and under 96 MB), at the
//! default `--max-body`.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// Peak memory (VmHWM) of a running process, in KiB.
fn peak_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// Answers the reads preflight makes with small JSON documents, and everything else with
/// 2 GiB: half announced by Content-Length, half an endless chunked stream.
fn flood_server() -> String {
    server(true)
}

/// The same server answering every request with the small document: the run's own memory.
fn quiet_server() -> String {
    server(false)
}

fn server(flood: bool) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = format!("http://{}", listener.local_addr().expect("addr"));
    thread::spawn(move || {
        for (n, stream) in listener.incoming().flatten().enumerate() {
            thread::spawn(move || serve(stream, n % 2 == 0, flood));
        }
    });
    addr
}

fn serve(mut stream: TcpStream, chunked: bool, flood: bool) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
    loop {
        let mut first = String::new();
        if reader.read_line(&mut first).unwrap_or(0) == 0 {
            return;
        }
        let mut length = 0usize;
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = v.trim().parse().unwrap_or(0);
            }
            if line == "\r\n" {
                break;
            }
        }
        let mut body = vec![0; length];
        if std::io::Read::read_exact(&mut reader, &mut body).is_err() {
            return;
        }
        let path = first.split_whitespace().nth(1).unwrap_or("");
        if !flood
            || path.starts_with("/api/v2/organizations")
            || path.starts_with("/api/v2/account")
        {
            let doc = r#"{"data":[]}"#;
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/vnd.api+json\r\ncontent-length: {}\r\n\r\n{doc}",
                doc.len()
            );
            if stream.write_all(head.as_bytes()).is_err() {
                return;
            }
            continue;
        }
        let block = vec![b' '; 64 * 1024];
        let head = if chunked {
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n".to_string()
        } else {
            format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
                2u64 << 30
            )
        };
        if stream.write_all(head.as_bytes()).is_err() {
            return;
        }
        let mut sent = 0u64;
        while sent < 2 << 30 {
            let ok = if chunked {
                stream
                    .write_all(format!("{:x}\r\n", block.len()).as_bytes())
                    .and_then(|_| stream.write_all(&block))
                    .and_then(|_| stream.write_all(b"\r\n"))
            } else {
                stream.write_all(&block)
            };
            if ok.is_err() {
                return; // the client stopped reading: what it should do
            }
            sent += block.len() as u64;
        }
        return;
    }
}

/// Runs conform with `args` to its end; answers its peak memory in KiB and its exit code.
fn peak_of_run(args: &[&str]) -> (u64, Option<i32>) {
    let reports = std::env::temp_dir().join(format!(
        "conform-bounded-{}-{}",
        std::process::id(),
        args.len()
    ));
    let mut child = Command::new(env!("CARGO_BIN_EXE_conform"))
        .args(args)
        .arg("--reports")
        .arg(&reports)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("conform runs");
    let pid = child.id();
    let started = Instant::now();
    let mut peak = 0;
    loop {
        if let Some(kib) = peak_kib(pid) {
            peak = peak.max(kib);
        }
        if child.try_wait().expect("wait").is_some() {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(300),
            "the run did not end within 5 minutes"
        );
        thread::sleep(Duration::from_millis(10));
    }
    let status = child.wait().expect("exit");
    eprintln!(
        "peak memory {} MB in {:.1} s (exit {:?}): {args:?}",
        peak / 1024,
        started.elapsed().as_secs_f64(),
        status.code()
    );
    let _ = std::fs::remove_dir_all(&reports);
    assert!(peak > 0, "no memory reading");
    (peak, status.code())
}

fn memory_stays_bounded_whatever_the_target_sends() {
    let quiet = quiet_server();
    let (own, _) = peak_of_run(&["--target", &quiet, "--token", "flood-token"]);
    let target = flood_server();
    let (peak, code) = peak_of_run(&["--target", &target, "--token", "flood-token"]);
    // 2 GiB per answer may cost one buffered answer (--max-body, 8 MiB) and the small reads
    // in flight beyond what the same run costs against a server that sends nothing large
    assert!(
        peak < own + 24 * 1024 && peak < 96 * 1024,
        "peak memory {} MB against the flood, {} MB against a quiet server",
        peak / 1024,
        own / 1024
    );
    assert_eq!(code, Some(1), "tests fail, and say why");
}

/// `conform serve` with these tokens and these faults, on a free loopback port: the process
/// and its root URL.
fn serve_with_faults(faults: &[String]) -> (std::process::Child, String) {
    let mut serve = Command::new(env!("CARGO_BIN_EXE_conform"));
    serve.args([
        "serve",
        "--port",
        "0",
        "--token",
        "huge-token",
        "--admin-token",
        "huge-admin",
    ]);
    for fault in faults {
        serve.args(["--fault", fault]);
    }
    let mut server = serve
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("serve starts");
    let mut first = String::new();
    BufReader::new(server.stdout.as_mut().expect("stdout"))
        .read_line(&mut first)
        .expect("serve prints its address");
    let url = first
        .trim()
        .strip_prefix("reference service at ")
        .expect("address line")
        .to_string();
    (server, url)
}

/// The peak memory and exit code of a run against `conform serve` with these faults.
fn peak_against(faults: &[String]) -> (u64, Option<i32>) {
    let (mut server, url) = serve_with_faults(faults);
    let measured = peak_of_run(&[
        "--target",
        &url,
        "--token",
        "huge-token",
        "--admin-token",
        "huge-admin",
        "--cases",
        "4",
    ]);
    let _ = server.kill();
    let _ = server.wait();
    measured
}

/// A real server whose shows and lists answer 1 GiB each, while everything else works:
/// hundreds of cut answers in one run, none of them kept. Judged against the same run against
/// the same server without the huge bodies (a debug build's own peak is 47-64 MB), as the
/// flood is.
fn memory_stays_bounded_when_a_working_server_answers_huge_bodies() {
    let (own, _) = peak_against(&[]);
    let huge: Vec<String> = [
        "GET /organizations/:organization_name",
        "GET /organizations",
        "GET /workspaces/:workspace_id",
        "GET /organizations/:organization_name/workspaces",
        "GET /runs/:run_id",
        "GET /teams/:team_id",
        "GET /workspaces/:workspace_id/vars",
        "GET /policy-sets/:policy_set_id",
    ]
    .iter()
    .map(|route| format!("huge-body={route}"))
    .collect();
    let (peak, code) = peak_against(&huge);
    assert!(
        peak < own + 24 * 1024 && peak < 96 * 1024,
        "peak memory {} MB against huge bodies, {} MB against the same server without them",
        peak / 1024,
        own / 1024
    );
    assert_eq!(code, Some(1), "the huge answers fail their tests");
}

/// This file's tests.
pub fn tests() -> Vec<crate::harness::Test> {
    crate::harness::tests![
        memory_stays_bounded_whatever_the_target_sends,
        memory_stays_bounded_when_a_working_server_answers_huge_bodies
    ]
}
