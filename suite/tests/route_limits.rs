//! Pacing and 429s, as a server that counts requests sees them: `--rate` holds in every
//! second the server counts, a route's 429s hold back that route's requests only, and a limit
//! on every route slows every route without an idle run (issue 22, item 3; issue 31, item 4).

use std::time::{Duration, SystemTime};

use crate::support::limiter::{self, busiest_seconds, matches, Arrival, Limiter, Policy};
use crate::support::processes::{scratch, text, Served};
use serde_json::Value;

/// A finished run through a limiter: whether it passed, what it printed, its
/// `results.json`, its wall time.
struct Run {
    passed: bool,
    said: String,
    results: Value,
    wall: Duration,
}

/// Runs `conform` against the limiter over the `groups` with `extra` arguments.
fn run_through(limiter: &Limiter, name: &str, groups: &str, extra: &[&str]) -> Run {
    let dir = scratch("route-limits", name);
    let started = std::time::Instant::now();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_conform"))
        .args(["--target", &limiter.url, "--token", "routes-user"])
        .args(["--group", groups, "--reports"])
        .arg(&dir)
        .args(extra)
        .env_remove("CONFORM_TOKEN")
        .env_remove("CONFORM_ADMIN_TOKEN")
        .output()
        .expect("conform runs");
    let wall = started.elapsed();
    let said = text(&out);
    let results = std::fs::read(dir.join("results.json"))
        .map_err(|e| e.to_string())
        .and_then(|bytes| serde_json::from_slice(&bytes).map_err(|e| e.to_string()))
        .unwrap_or_else(|e| panic!("results.json: {e}\n{said}"));
    Run {
        passed: out.status.success(),
        said,
        results,
        wall,
    }
}

/// A server that limits `GET /organizations/{name}/teams` hard after its first requests, and
/// serves everything else at a distance.
struct OneRouteHard;

/// The route [`OneRouteHard`] limits, as the throttle names it.
const LIMITED: &str = "GET /organizations/:id/teams";

/// How many of the limited route's requests answer 429.
const LIMITED_ANSWERS: usize = 4;

/// What each 429 of [`OneRouteHard`] asks the client to wait.
const RETRY_AFTER: Duration = Duration::from_secs(2);

/// True for `GET /api/v2/organizations/{name}/teams`.
fn is_teams_list(route: &str) -> bool {
    route
        .strip_prefix("GET ")
        .is_some_and(|path| matches(path, "organizations/*/teams"))
}

impl Policy for OneRouteHard {
    fn refuse(&self, seen: &[Arrival], _: Duration, method: &str, path: &str) -> Option<Duration> {
        // preflight's requests, sent one at a time, pass
        let warm = seen.len() >= 20;
        let refused = seen.iter().filter(|a| a.refused.is_some()).count();
        (warm && is_teams_list(&format!("{method} {path}")) && refused < LIMITED_ANSWERS)
            .then_some(RETRY_AFTER)
    }

    fn distance(&self, method: &str, path: &str) -> Duration {
        // the run is still busy while the limited route is held: a target at a distance
        if is_teams_list(&format!("{method} {path}")) {
            Duration::ZERO
        } else {
            Duration::from_millis(40)
        }
    }
}

fn a_route_limited_hard_holds_back_only_its_own_requests() {
    let served = Served::start("routes-user", "routes-admin", &[]);
    let limiter = limiter::start(&served.url, OneRouteHard);
    let run = run_through(&limiter, "one-route", "teams,organizations,runs", &[]);
    assert!(run.passed, "{}", run.said);

    let seen = limiter.seen.lock().unwrap();
    let refused: Vec<Duration> = seen
        .iter()
        .filter(|a| a.refused.is_some())
        .map(|a| a.at)
        .collect();
    assert_eq!(refused.len(), LIMITED_ANSWERS, "the limited route was used");
    // Requests of other routes arrived while the limited route was held (a whole-client
    // pause would have let none through but those already on their way).
    let margin = Duration::from_millis(200);
    let during_holds = seen
        .iter()
        .filter(|a| {
            !is_teams_list(&a.route)
                && refused
                    .iter()
                    .any(|r| a.at > *r + margin && a.at < *r + RETRY_AFTER)
        })
        .count();
    assert!(
        during_holds > 0,
        "no other request went on during the hold: 429s at {refused:?}, {} requests",
        seen.len()
    );

    let figures = &run.results["figures"];
    let routes = figures["throttled_routes"].as_array().unwrap();
    assert_eq!(routes.len(), 1, "{figures}");
    assert_eq!(routes[0]["route"], LIMITED, "{figures}");
    assert!(
        routes[0]["waited_seconds"].as_f64().unwrap() >= 1.5,
        "{figures}"
    );
    let line = run
        .said
        .lines()
        .find(|l| l.starts_with("waiting by route: "))
        .unwrap_or_else(|| panic!("no route line:\n{}", run.said));
    assert!(line.contains(LIMITED), "{line}");
}

/// A server whose limiter sits behind a queue: a request waits 0, 250 or 500 ms (in turn)
/// before the limiter sees (and counts) it, as behind a load balancer or a busy accept queue.
struct Queued;

impl Policy for Queued {
    fn queue(&self, n: usize) -> Duration {
        Duration::from_millis(250 * (n % 3) as u64)
    }

    fn refuse(&self, _: &[Arrival], _: Duration, _: &str, _: &str) -> Option<Duration> {
        None
    }
}

/// The `--rate` of the pacing test, requests per second.
const RATE: usize = 10;

fn rate_holds_in_every_second_the_server_counts() {
    let served = Served::start("routes-user", "routes-admin", &[]);
    let limiter = limiter::start(&served.url, Queued);
    let rate = format!("{RATE}/s");
    let run = run_through(
        &limiter,
        "pacing",
        "teams,organizations",
        &["--rate", &rate, "--test-threads", "16"],
    );
    assert!(run.passed, "{}", run.said);
    let seen = limiter.seen.lock().unwrap();
    let (per_second, sliding) = busiest_seconds(&seen);
    eprintln!(
        "--rate {rate}: {} requests in {:.1} s; busiest wall-clock second {per_second}, busiest sliding second {sliding}",
        seen.len(),
        run.wall.as_secs_f64()
    );
    assert!(seen.len() > 4 * RATE, "the run was paced: {}", seen.len());
    assert!(
        per_second <= RATE,
        "{per_second} requests in one wall-clock second at --rate {rate}"
    );
    assert!(
        sliding <= RATE,
        "{sliding} requests in one sliding second at --rate {rate}"
    );
}

/// A server that issues 5 organization tokens a minute (each 429 asks for the wait until the
/// oldest of the 5 is a minute old) and now and then answers 429 on two busy routes, the
/// organization show and its tags list (after preflight's 20 requests, the first of each,
/// then each 10th, 1 s): three routes' 429s within seconds, each route's own limit.
struct TokenLimit;

/// The token-issuance route of [`TokenLimit`].
const TOKEN_ROUTE: &str = "organizations/*/authentication-token";

/// Tokens [`TokenLimit`] issues a minute.
const TOKENS_PER_MINUTE: usize = 5;

fn is_token_issuance(route: &str) -> bool {
    route
        .strip_prefix("POST ")
        .is_some_and(|path| matches(path, TOKEN_ROUTE))
}

/// The two busy routes [`TokenLimit`] answers 429 on now and then: which of them `route` is.
fn busy(route: &str) -> Option<&'static str> {
    let path = route.strip_prefix("GET ")?;
    ["organizations/*", "organizations/*/tags"]
        .into_iter()
        .find(|pattern| matches(path, pattern))
}

fn is_busy(route: &str) -> bool {
    busy(route).is_some()
}

impl Policy for TokenLimit {
    fn refuse(
        &self,
        seen: &[Arrival],
        now: Duration,
        method: &str,
        path: &str,
    ) -> Option<Duration> {
        let route = format!("{method} {path}");
        if is_token_issuance(&route) {
            let minute = Duration::from_secs(60);
            let issued: Vec<Duration> = seen
                .iter()
                .filter(|a| is_token_issuance(&a.route) && a.refused.is_none())
                .filter(|a| a.at + minute > now)
                .map(|a| a.at)
                .collect();
            return (issued.len() >= TOKENS_PER_MINUTE).then(|| issued[0] + minute - now);
        }
        let kind = busy(&route)?;
        let before = seen
            .iter()
            .skip(20)
            .filter(|a| busy(&a.route) == Some(kind))
            .count();
        (seen.len() >= 20 && before % 10 == 0).then_some(Duration::from_secs(1))
    }
}

fn a_token_route_429_slows_that_route_only() {
    let served = Served::start("routes-user", "routes-admin", &[]);
    let limiter = limiter::start(&served.url, TokenLimit);
    // at 25/s, a good 20 s of other work beside the token route's
    let run = run_through(
        &limiter,
        "token-limit",
        "organization_tags_and_tokens,teams,organizations,runs",
        &["--rate", "25/s", "--test-threads", "8"],
    );
    let seen = limiter.seen.lock().unwrap();
    let refused = |f: fn(&str) -> bool| {
        seen.iter()
            .filter(|a| f(&a.route) && a.refused.is_some())
            .count()
    };
    eprintln!(
        "token limit: {} requests ({} token issuances, {} refused; {} busy-route 429s) in {:.1} s, passed {}; throttled {} s; {}",
        seen.len(),
        seen.iter().filter(|a| is_token_issuance(&a.route)).count(),
        refused(is_token_issuance),
        refused(is_busy),
        run.wall.as_secs_f64(),
        run.passed,
        run.results["figures"]["throttled_seconds"],
        run.said.lines().find(|l| l.starts_with("waiting by route: ")).unwrap_or("")
    );
    let busy_429s: Vec<String> = seen
        .iter()
        .filter(|a| is_busy(&a.route) && a.refused.is_some())
        .map(|a| format!("{:.1}", a.at.as_secs_f64()))
        .collect();
    eprintln!("busy-route 429s at {}", busy_429s.join(" "));

    assert!(refused(is_busy) >= 2, "the busy routes answered 429");
    // While the token route waits out a long 429, the other routes keep the run's pace.
    let long = seen
        .iter()
        .find(|a| is_token_issuance(&a.route) && a.refused > Some(Duration::from_secs(5)))
        .expect("a token 429 asked for a long wait");
    let from = long.at + Duration::from_secs(1);
    let to = long.at + long.refused.unwrap().min(Duration::from_secs(10));
    let others = seen
        .iter()
        .filter(|a| !is_token_issuance(&a.route) && a.at > from && a.at < to)
        .count();
    let pace = others as f64 / (to - from).as_secs_f64();
    eprintln!(
        "the token route's 429 at {:.1} s asked for {:.0} s; other routes meanwhile at {pace:.1}/s",
        long.at.as_secs_f64(),
        long.refused.unwrap().as_secs_f64()
    );
    assert!(
        pace >= 5.0,
        "other routes slowed to {pace:.1}/s while the token route was held"
    );
}

/// A server with one limit on every route: at most 8 requests a wall-clock second, the rest
/// answered 429 with `Retry-After: 1`.
struct Global;

/// Requests [`Global`] passes a second.
const GLOBAL_PER_SECOND: usize = 8;

impl Policy for Global {
    fn refuse(&self, seen: &[Arrival], _: Duration, _: &str, _: &str) -> Option<Duration> {
        let second = |t: SystemTime| t.duration_since(SystemTime::UNIX_EPOCH).unwrap().as_secs();
        let now = second(SystemTime::now());
        let passed = seen
            .iter()
            .rev()
            .take_while(|a| second(a.wall) == now)
            .filter(|a| a.refused.is_none())
            .count();
        (passed >= GLOBAL_PER_SECOND).then_some(Duration::from_secs(1))
    }
}

fn a_global_429_limit_slows_every_route_and_the_run_finishes() {
    let served = Served::start("routes-user", "routes-admin", &[]);
    let limiter = limiter::start(&served.url, Global);
    let run = run_through(
        &limiter,
        "global",
        "teams,organizations",
        &["--test-threads", "8"],
    );
    assert!(
        run.passed,
        "the run finished, every test judged: {}",
        run.said
    );
    let seen = limiter.seen.lock().unwrap();
    let refused = seen.iter().filter(|a| a.refused.is_some()).count();
    let passed = seen.len() - refused;
    let figures = &run.results["figures"];
    eprintln!(
        "global limit: {passed} passed, {refused} refused in {:.1} s; throttled {} s; {}",
        run.wall.as_secs_f64(),
        figures["throttled_seconds"],
        run.said
            .lines()
            .find(|l| l.starts_with("waiting by route: "))
            .unwrap_or("")
    );
    assert!(refused > 0, "the limit was met");
    assert!(
        refused <= passed,
        "the run hammered a limited server: {refused} 429s for {passed} answers"
    );
    assert!(
        figures["throttled_seconds"].as_f64().unwrap() > 0.5,
        "{figures}"
    );
    assert!(
        figures["throttled_routes"].as_array().unwrap().len() > 1,
        "{figures}"
    );
    assert!(run.said.contains("throttled: "), "{}", run.said);
}

/// This file's tests.
pub fn tests() -> Vec<crate::harness::Test> {
    crate::harness::tests![
        a_route_limited_hard_holds_back_only_its_own_requests,
        rate_holds_in_every_second_the_server_counts,
        a_token_route_429_slows_that_route_only,
        a_global_429_limit_slows_every_route_and_the_run_finishes
    ]
}
