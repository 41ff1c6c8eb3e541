//! The pacer on a simulated clock: servers limited to N a second, met by a client of several
//! workers as `Throttle` meets them (a route's 429 pauses that route for its `Retry-After`).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};

use proptest::prelude::*;

use super::*;

fn h(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// A server's limit, as the simulation meets it.
#[derive(Clone, Copy)]
enum Limit {
    /// At most N requests in any second (the reference's `rate-limit-per-second`),
    /// answered 429 with `Retry-After: 1` and no window stated.
    Sliding(usize),
    /// The same, stating `RateLimit-Policy: N;w=1` on every answer.
    Stated(usize),
    /// None.
    Unlimited,
}

/// What a simulated run saw.
#[derive(Debug, Default)]
struct Seen {
    /// Each request's arrival (seconds from the start) and whether it was refused.
    arrivals: Vec<(f64, bool)>,
    pacer_limit: Option<f64>,
}

impl Seen {
    fn refused(&self, from: f64) -> usize {
        self.arrivals
            .iter()
            .filter(|(t, r)| *r && *t >= from)
            .count()
    }

    /// Accepted requests a second between `from` and `to`.
    fn accepted_rate(&self, from: f64, to: f64) -> f64 {
        let n = self
            .arrivals
            .iter()
            .filter(|(t, r)| !r && *t >= from && *t < to)
            .count();
        n as f64 / (to - from)
    }
}

#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    /// A worker is ready to send its next request.
    Ready(usize),
    /// A worker's request reaches the server, on its route, sent at the given time.
    Arrive(usize),
    /// A worker's answer arrives: refused or not.
    Answer(usize, bool),
}

/// `workers` sending as fast as they may over `routes` routes for `secs` seconds, each
/// answer `latency` after it was sent (sent at its slot, arriving at once), against `limit`.
fn simulate(limit: Limit, workers: usize, routes: usize, latency: Duration, secs: f64) -> Seen {
    let start = Instant::now();
    let wall = SystemTime::now();
    let pacer = Pacer::new(true, None);
    let at = |t: Instant| (t - start).as_secs_f64();
    let mut queue = BinaryHeap::new();
    let mut seq = 0u64;
    let mut push = |queue: &mut BinaryHeap<_>, t: Instant, e: Event| {
        seq += 1;
        queue.push(Reverse((t, seq, e)));
    };
    for w in 0..workers {
        push(&mut queue, start, Event::Ready(w));
    }
    let (mut paused, mut accepted) = (HashMap::<String, Instant>::new(), VecDeque::new());
    let mut route_of = vec![String::new(); workers];
    let mut sent = vec![start; workers];
    let (mut count, mut seen) = (0usize, Seen::default());
    while let Some(Reverse((t, _, event))) = queue.pop() {
        if at(t) > secs {
            break;
        }
        match event {
            Event::Ready(w) => {
                if route_of[w].is_empty() {
                    count += 1;
                    route_of[w] = format!("GET /r{}", count % routes);
                }
                if let Some(until) = paused.get(&route_of[w]).filter(|u| **u > t) {
                    push(&mut queue, *until, Event::Ready(w));
                    continue;
                }
                let slot = pacer.slot(&route_of[w], t).unwrap_or(t);
                sent[w] = slot;
                push(&mut queue, slot, Event::Arrive(w));
            }
            Event::Arrive(w) => {
                while accepted.front().is_some_and(|a| *a + SPAN <= t) {
                    accepted.pop_front();
                }
                let n = match limit {
                    Limit::Sliding(n) | Limit::Stated(n) => n,
                    Limit::Unlimited => usize::MAX,
                };
                let refused = accepted.len() >= n;
                if !refused {
                    accepted.push_back(t);
                }
                seen.arrivals.push((at(t), refused));
                push(&mut queue, t + latency, Event::Answer(w, refused));
            }
            Event::Answer(w, refused) => {
                let mut headers = match limit {
                    Limit::Stated(n) => h(&[("RateLimit-Policy", &format!("{n};w=1"))]),
                    _ => Vec::new(),
                };
                let status = if refused {
                    paused.insert(route_of[w].clone(), t + Duration::from_secs(1));
                    headers.extend(h(&[("Retry-After", "1")]));
                    429
                } else {
                    200
                };
                pacer.answered(&route_of[w], status, &headers, sent[w], t, wall);
                if !refused {
                    route_of[w].clear();
                }
                push(&mut queue, t, Event::Ready(w));
            }
        }
    }
    seen.pacer_limit = pacer.limit();
    seen
}

#[test]
fn a_server_limited_to_30_a_second_is_paced_just_under_it_with_few_429s() {
    let seen = simulate(Limit::Sliding(30), 16, 40, Duration::from_millis(5), 60.0);
    let after_learning = seen.refused(2.0);
    let rate = seen.accepted_rate(2.0, 60.0);
    eprintln!(
        "{} requests, {} 429s ({after_learning} after 2 s), {rate:.1}/s, learned {:?}",
        seen.arrivals.len(),
        seen.refused(0.0),
        seen.pacer_limit
    );
    assert!(rate >= 27.0, "paced at {rate:.1}/s under a 30/s limit");
    assert!(after_learning <= 12, "{after_learning} 429s after learning");
    assert!(seen.refused(0.0) <= 60, "{} 429s in all", seen.refused(0.0));
    let limit = seen.pacer_limit.expect("a limit learned");
    assert!((27.0..=33.0).contains(&limit), "learned {limit}");
}

#[test]
fn a_stated_limit_is_paced_at_directly_and_never_refused() {
    let seen = simulate(Limit::Stated(20), 8, 10, Duration::from_millis(5), 20.0);
    // the first requests went before any answer stated the limit
    assert!(
        seen.refused(0.0) <= 8,
        "paced from the first answers: {}",
        seen.refused(0.0)
    );
    let rate = seen.accepted_rate(1.0, 20.0);
    assert!((17.5..=20.0).contains(&rate), "{rate:.1}/s");
    assert_eq!(seen.pacer_limit, Some(20.0));
}

#[test]
fn a_target_that_never_refuses_is_never_paced() {
    let pacer = Pacer::new(true, None);
    let now = Instant::now();
    for i in 0..1000 {
        let route = format!("GET /r{}", i % 7);
        assert_eq!(pacer.slot(&route, now), None);
        pacer.answered(&route, 200, &[], now, now, SystemTime::now());
    }
    let seen = simulate(Limit::Unlimited, 16, 40, Duration::from_millis(1), 2.0);
    assert!(seen.arrivals.len() > 30_000, "{}", seen.arrivals.len());
    assert_eq!(seen.pacer_limit, None);
}

#[test]
fn learning_off_learns_nothing() {
    let pacer = Pacer::new(false, None);
    let now = Instant::now();
    let stated = h(&[("RateLimit-Policy", "5;w=1")]);
    for route in ["GET /a", "GET /b", "GET /c", "GET /d", "GET /e", "GET /f"] {
        pacer.answered(route, 429, &stated, now, now, SystemTime::now());
    }
    assert_eq!(pacer.slot("GET /a", now), None);
}

/// 429s of one route alone, or asking for a quota's long wait, are that route's own: the
/// whole client is not paced.
#[test]
fn a_routes_own_429s_pace_nothing_else() {
    let pacer = Pacer::new(true, None);
    let now = Instant::now();
    let wall = SystemTime::now();
    let second = h(&[("Retry-After", "1")]);
    for route in ["GET /x", "GET /y", "GET /z"] {
        pacer.answered(route, 200, &[], now, now, wall);
    }
    for _ in 0..10 {
        pacer.answered("GET /teams", 429, &second, now, now, wall);
    }
    let minute = h(&[("Retry-After", "60")]);
    for route in ["POST /tokens", "POST /e", "POST /f", "POST /g", "POST /h"] {
        pacer.answered(route, 429, &minute, now, now, wall);
    }
    assert_eq!(pacer.slot("GET /other", now), None);
    assert_eq!(pacer.limit(), None);
}

/// A server that refuses everything for a moment (its first requests) shows no rate.
#[test]
fn refusals_with_nothing_taken_teach_no_rate() {
    let pacer = Pacer::new(true, None);
    let now = Instant::now();
    let second = h(&[("Retry-After", "1")]);
    for route in ["GET /a", "GET /b", "GET /c", "GET /d", "GET /e"] {
        pacer.answered(route, 429, &second, now, now, SystemTime::now());
    }
    assert_eq!(pacer.slot("GET /a", now), None);
}

/// A header stated on one route paces that route; seen on a second route, it is the whole
/// client's.
#[test]
fn stated_headers_pace_their_route_then_the_whole_client() {
    let pacer = Pacer::new(true, Some(100.0));
    let now = Instant::now();
    let wall = SystemTime::now();
    let policy = h(&[("RateLimit-Limit", "10, 10;w=1")]);
    pacer.answered("GET /a", 200, &policy, now, now, wall);
    assert_eq!(
        pacer.slot("GET /b", now),
        None,
        "another route is not paced"
    );
    assert_eq!(pacer.slot("GET /a", now), Some(now));
    let next = pacer.slot("GET /a", now).unwrap();
    assert!(next > now + Duration::from_millis(100), "{:?}", next - now);
    assert_eq!(pacer.limit(), None);
    pacer.answered("GET /b", 200, &policy, now, now, wall);
    assert_eq!(pacer.limit(), Some(10.0));
    assert!(
        pacer.slot("GET /c", now).unwrap() > now,
        "every route paced"
    );
}

#[test]
fn nothing_remaining_holds_until_the_reset() {
    let pacer = Pacer::new(true, None);
    let now = Instant::now();
    let wall = SystemTime::now();
    let empty = h(&[("X-RateLimit-Remaining", "0"), ("X-RateLimit-Reset", "0.5")]);
    pacer.answered("GET /a", 200, &empty, now, now, wall);
    assert_eq!(
        pacer.slot("GET /a", now),
        Some(now + Duration::from_millis(500))
    );
    assert_eq!(pacer.slot("GET /b", now), None, "its route only");
}

#[test]
fn headers_parse_in_every_form() {
    let wall = SystemTime::UNIX_EPOCH + Duration::from_secs(2_000_000_000);
    let rate = |pairs: &[(&str, &str)]| Stated::parse(&h(pairs), wall).rate();
    assert_eq!(rate(&[("RateLimit-Policy", "30;w=1")]), Some(30.0));
    assert_eq!(
        rate(&[("ratelimit-policy", "\"default\";q=600;w=60")]),
        Some(10.0)
    );
    assert_eq!(
        rate(&[("RateLimit-Limit", "100, 100;w=60, 5;w=1")]),
        Some(100.0 / 60.0)
    );
    assert_eq!(
        rate(&[("RateLimit", "limit=10, remaining=5, reset=2")]),
        None
    );
    assert_eq!(rate(&[("RateLimit-Limit", "30")]), None, "no window");
    assert_eq!(rate(&[("X-RateLimit-Limit", "30")]), None);
    assert_eq!(rate(&[("RateLimit-Policy", "0;w=1")]), None);
    assert_eq!(rate(&[("RateLimit-Policy", "ten;w=x")]), None);
    let combined = Stated::parse(&h(&[("RateLimit", "\"default\";r=0;t=3")]), wall);
    assert_eq!((combined.remaining, combined.reset), (Some(0.0), Some(3.0)));
    let epoch = Stated::parse(&h(&[("X-RateLimit-Reset", "2000000004")]), wall);
    assert_eq!(epoch.reset, Some(4.0));
    assert!(!Stated::parse(&h(&[("Retry-After", "1")]), wall).any());
}

#[test]
fn the_pace_never_grows_past_the_ceiling() {
    let pacer = Pacer::new(true, Some(12.0));
    let start = Instant::now();
    let wall = SystemTime::now();
    for route in ["GET /x", "GET /y", "GET /z"] {
        pacer.answered(route, 200, &[], start, start, wall);
    }
    for route in ["GET /a", "GET /b", "GET /c", "GET /d", "GET /e"] {
        pacer.answered(route, 429, &[], start, start, wall);
    }
    // a minute of being the bottleneck
    let mut t = start;
    for _ in 0..600 {
        t += Duration::from_millis(100);
        for _ in 0..5 {
            pacer.slot("GET /a", t);
        }
    }
    let learned = pacer.learned.lock().unwrap();
    let rate = learned.global.as_ref().unwrap().rate;
    assert!(rate <= 12.0, "{rate}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Whatever the limit, the workers and the distance: within a few seconds the run goes
    /// at 85 % of the limit or more, and 429s after learning stay few.
    #[test]
    fn the_pace_converges_under_any_limit(
        limit in 5usize..80,
        workers in 4usize..24,
        latency_ms in 1u64..40,
    ) {
        let latency = Duration::from_millis(latency_ms);
        // enough demand to meet the limit
        prop_assume!(workers as f64 / latency.as_secs_f64() >= 2.0 * limit as f64);
        let seen = simulate(Limit::Sliding(limit), workers, 30, latency, 40.0);
        let rate = seen.accepted_rate(5.0, 40.0);
        prop_assert!(rate >= 0.85 * limit as f64, "{rate:.1}/s under {limit}/s");
        let late = seen.refused(5.0);
        prop_assert!(late <= 10, "{late} 429s after 5 s under {limit}/s");
    }
}
