//! Politeness: a client-side rate limit shared by every request (`--rate`), a pause that a
//! 429 imposes on the whole client, the wait a 429 asks for (`Retry-After`,
//! `X-RateLimit-Reset`), and a request sent again after a moment of unavailability (502, 503,
//! 504). Time spent held back is measured as wall time (periods in which at
//! least one request waited), so it can be set against the run's wall time.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

/// Longest a request waits out 429s in all; a longer wait gives up and keeps the 429.
pub const MAX_WAIT: Duration = Duration::from_secs(60);

/// How often a request waits out a 429 at most.
pub const MAX_RETRIES: u32 = 20;

/// How often a request is sent again after the target said it was unavailable.
pub const MAX_UNAVAILABLE_RETRIES: u32 = 3;

/// Whether an answer says the target was unavailable for a moment, so that the request is
/// sent again: a 503 with `Retry-After` (RFC 9110 15.6.4: the server did not handle it, so
/// any request may be repeated), or a 502, 503 or 504 to a request that is idempotent (a
/// gateway may have passed a POST on before it failed).
pub fn retry_unavailable(status: u16, headers: &[(String, String)], idempotent: bool) -> bool {
    let asked = status == 503
        && headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("retry-after"));
    asked || (idempotent && matches!(status, 502..=504))
}

/// Parses `--rate`: `30/s`, `600/m`, `2/h`, or a bare number per second.
pub fn parse_rate(text: &str) -> Result<f64, String> {
    let (number, per) = text.trim().split_once('/').unwrap_or((text.trim(), "s"));
    let n: f64 = number
        .trim()
        .parse()
        .map_err(|_| format!("--rate `{text}` is not N/s, N/m or N/h"))?;
    let secs = match per.trim() {
        "s" | "sec" | "second" => 1.0,
        "m" | "min" | "minute" => 60.0,
        "h" | "hour" => 3600.0,
        other => {
            return Err(format!(
                "--rate `{text}`: unknown period `{other}` (s, m or h)"
            ))
        }
    };
    let rate = n / secs;
    if !(rate.is_finite() && rate > 0.0 && rate <= 100_000.0) {
        return Err(format!("--rate `{text}` must be above 0"));
    }
    Ok(rate)
}

/// The wait a 429 (or 503) answer asks for: `Retry-After` in seconds or as an HTTP date,
/// else `X-RateLimit-Reset` in (fractional) seconds.
pub fn requested_wait(headers: &[(String, String)], now: SystemTime) -> Option<Duration> {
    let header = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.trim())
    };
    if let Some(v) = header("retry-after") {
        if let Ok(secs) = v.parse::<u64>() {
            return Some(Duration::from_secs(secs));
        }
        if let Ok(secs) = v.parse::<f64>() {
            if secs.is_finite() && secs >= 0.0 {
                return Some(Duration::from_secs_f64(secs.min(1e6)));
            }
        }
        if let Ok(at) = httpdate::parse_http_date(v) {
            return Some(at.duration_since(now).unwrap_or_default());
        }
    }
    let reset = header("x-ratelimit-reset")?.parse::<f64>().ok()?;
    (reset.is_finite() && reset >= 0.0).then(|| Duration::from_secs_f64(reset.min(1e6)))
}

/// Exponential backoff with a little jitter: 0.5 s, 1 s, 2 s, ... capped at 8 s.
pub fn backoff(attempt: u32) -> Duration {
    let base = 0.5 * f64::from(1u32 << attempt.min(4));
    let nanos = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let jitter = 1.0 + f64::from(nanos % 1000) / 10_000.0;
    Duration::from_secs_f64((base * jitter).min(8.0))
}

/// Wall time during which at least one request waited.
#[derive(Debug, Default)]
struct Meter {
    state: Mutex<(usize, Option<Instant>, Duration)>,
}

impl Meter {
    fn enter(&self) -> MeterGuard<'_> {
        if let Ok(mut s) = self.state.lock() {
            if s.0 == 0 {
                s.1 = Some(Instant::now());
            }
            s.0 += 1;
        }
        MeterGuard(self)
    }

    fn total(&self) -> Duration {
        self.state
            .lock()
            .map(|s| {
                s.2 + s
                    .1
                    .filter(|_| s.0 > 0)
                    .map(|t| t.elapsed())
                    .unwrap_or_default()
            })
            .unwrap_or_default()
    }
}

struct MeterGuard<'a>(&'a Meter);

impl Drop for MeterGuard<'_> {
    fn drop(&mut self) {
        if let Ok(mut s) = self.0.state.lock() {
            s.0 = s.0.saturating_sub(1);
            if s.0 == 0 {
                if let Some(start) = s.1.take() {
                    s.2 += start.elapsed();
                }
            }
        }
    }
}

/// How many distinct routes answering 429 within [`GLOBAL_SPAN`] show a limit on the whole
/// client rather than on one route: from then on a 429 holds back every request.
pub const GLOBAL_ROUTES: usize = 3;

/// The span within which 429s on [`GLOBAL_ROUTES`] distinct routes show a global limit.
pub const GLOBAL_SPAN: Duration = Duration::from_secs(10);

/// Routes the figures name at most, those that waited longest.
pub const TOP_ROUTES: usize = 5;

/// The waiting of one route (method and path template, [`super::route_key`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RouteWait {
    /// The route: `POST /organizations/:id/authentication-token`.
    pub route: String,
    /// Answers 429 it received.
    pub rate_limited: u64,
    /// Wall time in which requests of this route waited because the target asked.
    pub waited: Duration,
}

/// What the throttle measured.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ThrottleStats {
    /// Answers 429 received.
    pub rate_limited: u64,
    /// The routes that got 429s, longest waiting first, at most `TOP_ROUTES`.
    pub routes: Vec<RouteWait>,
    /// True when 429s on several routes at once showed a limit on the whole client.
    pub global: bool,
    /// Wall time in which requests waited because the target asked (429, 503).
    pub throttled: Duration,
    /// Wall time in which requests waited for the client-side rate limit (`--rate`).
    pub paced: Duration,
    /// Requests sent again after a transient connection error.
    pub retried: u64,
    /// Requests sent again after the target answered it was unavailable (502, 503, 504).
    pub unavailable: u64,
}

/// One route's hold: until when its requests wait, and what it cost.
#[derive(Debug, Default)]
struct RouteHold {
    until: Option<Instant>,
    rate_limited: u64,
    held: std::sync::Arc<Meter>,
}

/// The shared throttle of one target. A 429 holds back the requests of its route only
/// (method and path template), unless 429s on [`GLOBAL_ROUTES`] distinct routes within
/// [`GLOBAL_SPAN`] show a limit on the whole client: then every request waits.
#[derive(Debug)]
pub struct Throttle {
    /// The client-side rate limit (`--rate`), when set.
    window: Option<Window>,
    /// The pause of every request (a global limit).
    paused_until: Mutex<Option<Instant>>,
    /// Each route's pause, by route key.
    routes: Mutex<std::collections::HashMap<String, RouteHold>>,
    /// The recent 429s, oldest first: when, and on which route.
    recent: Mutex<std::collections::VecDeque<(Instant, String)>>,
    global: std::sync::atomic::AtomicBool,
    deadline: Mutex<Option<Instant>>,
    held: Meter,
    paced: Meter,
    rate_limited: AtomicU64,
    retried: AtomicU64,
    unavailable: AtomicU64,
}

/// What a rate window adds to its span, for the varying time a request takes to arrive.
const WINDOW_MARGIN: Duration = Duration::from_millis(50);

/// A sliding-window limit: at most `capacity` admissions in any span of `span`. For
/// `--rate N/s` with N >= 1 that is N in any one second, so a server that counts requests
/// per second never sees more than N from the run, whichever second it counts.
#[derive(Debug)]
struct Window {
    capacity: usize,
    span: Duration,
    /// The instants of the last `capacity` admissions, oldest first.
    admitted: Mutex<std::collections::VecDeque<Instant>>,
}

impl Window {
    fn new(rate: f64) -> Self {
        let capacity = rate.floor().max(1.0);
        Self {
            capacity: capacity as usize,
            // a little over the window, so that the way to the server (a few ms that vary)
            // cannot put two windows' requests into one second at the server
            span: Duration::from_secs_f64(capacity / rate) + WINDOW_MARGIN,
            admitted: Mutex::new(std::collections::VecDeque::new()),
        }
    }

    /// Takes a slot now and answers `None`, or answers when the next slot frees. A slot is
    /// taken only when it is due, so a request cancelled while it waits leaves none behind.
    fn try_admit(&self, now: Instant) -> Option<Instant> {
        let Ok(mut admitted) = self.admitted.lock() else {
            return None;
        };
        if admitted.len() >= self.capacity {
            let frees = admitted[0] + self.span;
            if frees > now {
                return Some(frees);
            }
            admitted.pop_front();
        }
        admitted.push_back(now);
        None
    }
}

impl Throttle {
    /// A throttle; `rate` in requests per second (at most that many in any second).
    pub fn new(rate: Option<f64>) -> Self {
        Self {
            window: rate.map(Window::new),
            paused_until: Mutex::new(None),
            routes: Mutex::new(std::collections::HashMap::new()),
            recent: Mutex::new(std::collections::VecDeque::new()),
            global: std::sync::atomic::AtomicBool::new(false),
            deadline: Mutex::new(None),
            held: Meter::default(),
            paced: Meter::default(),
            rate_limited: AtomicU64::new(0),
            retried: AtomicU64::new(0),
            unavailable: AtomicU64::new(0),
        }
    }

    /// Sets (or clears) the instant after which no wait is started.
    pub fn set_deadline(&self, deadline: Option<Instant>) {
        if let Ok(mut d) = self.deadline.lock() {
            *d = deadline;
        }
    }

    /// True when the deadline has passed.
    pub fn deadline_passed(&self) -> bool {
        self.would_pass_deadline(Duration::ZERO)
    }

    /// True when waiting `wait` from now would pass the deadline.
    pub fn would_pass_deadline(&self, wait: Duration) -> bool {
        let deadline = self.deadline.lock().ok().and_then(|d| *d);
        deadline.is_some_and(|d| Instant::now() + wait > d)
    }

    /// Waits until a request of `route` may be sent: the pause a 429 imposed on its route or
    /// on every request, then the rate limit.
    pub async fn admit(&self, route: &str) {
        loop {
            let global = self.paused_until.lock().ok().and_then(|p| *p);
            let (own, meter) = self
                .routes
                .lock()
                .ok()
                .and_then(|r| r.get(route).map(|h| (h.until, h.held.clone())))
                .unwrap_or_default();
            let until = global.max(own);
            match until {
                Some(t) if t > Instant::now() => {
                    let _all = self.held.enter();
                    let _own = (own == until).then(|| meter.enter());
                    tokio::time::sleep_until(t.into()).await;
                }
                _ => break,
            }
        }
        let Some(window) = &self.window else {
            return;
        };
        let mut waiting = None;
        while let Some(due) = window.try_admit(Instant::now()) {
            if waiting.is_none() {
                waiting = Some(self.paced.enter());
            }
            tokio::time::sleep_until(due.into()).await;
        }
    }

    /// A 429 arrived on `route`: that route's requests hold back for `wait`, and every
    /// request does when the 429s show a global limit (`Throttle::is_global`).
    pub fn pause(&self, route: &str, wait: Duration) {
        self.rate_limited.fetch_add(1, Ordering::Relaxed);
        let now = Instant::now();
        let until = now + wait;
        if let Ok(mut routes) = self.routes.lock() {
            let hold = routes.entry(route.to_string()).or_default();
            hold.rate_limited += 1;
            hold.until = Some(hold.until.map_or(until, |old| old.max(until)));
        }
        if self.is_global(route, now) {
            self.global.store(true, Ordering::Relaxed);
            if let Ok(mut p) = self.paused_until.lock() {
                *p = Some(p.map_or(until, |old| old.max(until)));
            }
        }
    }

    /// Notes a 429 on `route` and answers whether the recent ones show a limit on the whole
    /// client: 429s on [`GLOBAL_ROUTES`] distinct routes within [`GLOBAL_SPAN`].
    fn is_global(&self, route: &str, now: Instant) -> bool {
        let Ok(mut recent) = self.recent.lock() else {
            return false;
        };
        while recent
            .front()
            .is_some_and(|(at, _)| now.duration_since(*at) > GLOBAL_SPAN)
        {
            recent.pop_front();
        }
        if !recent.iter().any(|(_, r)| r == route) {
            recent.push_back((now, route.to_string()));
        } else if let Some(entry) = recent.iter_mut().find(|(_, r)| r == route) {
            entry.0 = now;
        }
        recent.len() >= GLOBAL_ROUTES
    }

    /// A 429 arrived on `route` that will not be retried.
    pub fn note_rate_limited(&self, route: &str) {
        self.rate_limited.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut routes) = self.routes.lock() {
            routes.entry(route.to_string()).or_default().rate_limited += 1;
        }
    }

    /// Waits before resending after a transient connection error.
    pub async fn retry_pause(&self, attempt: u32) {
        self.retried.fetch_add(1, Ordering::Relaxed);
        tokio::time::sleep(backoff(attempt) / 2).await;
    }

    /// Waits `wait` before sending a request again that the target was unavailable for; only
    /// that request waits (a gateway's moment is no limit on the whole client).
    pub async fn unavailable_pause(&self, wait: Duration) {
        self.unavailable.fetch_add(1, Ordering::Relaxed);
        let _g = self.held.enter();
        tokio::time::sleep(wait).await;
    }

    /// The routes that got 429s, longest waiting first (then most 429s), at most
    /// [`TOP_ROUTES`].
    fn route_waits(&self) -> Vec<RouteWait> {
        let Ok(routes) = self.routes.lock() else {
            return Vec::new();
        };
        let mut waits: Vec<RouteWait> = routes
            .iter()
            .map(|(route, hold)| RouteWait {
                route: route.clone(),
                rate_limited: hold.rate_limited,
                waited: hold.held.total(),
            })
            .collect();
        waits.sort_by(|a, b| {
            (b.waited, b.rate_limited, &a.route).cmp(&(a.waited, a.rate_limited, &b.route))
        });
        waits.truncate(TOP_ROUTES);
        waits
    }

    /// The figures so far.
    pub fn stats(&self) -> ThrottleStats {
        ThrottleStats {
            rate_limited: self.rate_limited.load(Ordering::Relaxed),
            routes: self.route_waits(),
            global: self.global.load(Ordering::Relaxed),
            throttled: self.held.total(),
            paced: self.paced.total(),
            retried: self.retried.load(Ordering::Relaxed),
            unavailable: self.unavailable.load(Ordering::Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(name: &str, value: &str) -> Vec<(String, String)> {
        vec![(name.to_string(), value.to_string())]
    }

    #[test]
    fn unavailable_answers_are_sent_again_when_that_is_safe() {
        let asked = h("Retry-After", "1");
        assert!(retry_unavailable(503, &asked, false));
        assert!(retry_unavailable(503, &[], true));
        assert!(retry_unavailable(502, &[], true));
        assert!(retry_unavailable(504, &asked, true));
        assert!(!retry_unavailable(503, &[], false));
        assert!(!retry_unavailable(502, &asked, false));
        assert!(!retry_unavailable(500, &asked, true));
    }

    #[test]
    fn rates_parse() {
        assert_eq!(parse_rate("30/s").unwrap(), 30.0);
        assert_eq!(parse_rate("600/m").unwrap(), 10.0);
        assert_eq!(parse_rate("5").unwrap(), 5.0);
        assert!(parse_rate("0/s").is_err());
        assert!(parse_rate("fast").is_err());
        assert!(parse_rate("3/week").is_err());
    }

    #[test]
    fn waits_come_from_retry_after_or_ratelimit_reset() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(784_111_777);
        assert_eq!(
            requested_wait(&h("Retry-After", "3"), now),
            Some(Duration::from_secs(3))
        );
        assert_eq!(
            requested_wait(&h("retry-after", "Sun, 06 Nov 1994 08:49:47 GMT"), now),
            Some(Duration::from_secs(10))
        );
        assert_eq!(
            requested_wait(&h("X-RateLimit-Reset", "0.25"), now),
            Some(Duration::from_millis(250))
        );
        let both = vec![
            ("retry-after".to_string(), "2".to_string()),
            ("x-ratelimit-reset".to_string(), "0.2".to_string()),
        ];
        assert_eq!(requested_wait(&both, now), Some(Duration::from_secs(2)));
        assert_eq!(requested_wait(&h("retry-after", "soon"), now), None);
        assert_eq!(requested_wait(&[], now), None);
    }

    #[tokio::test]
    async fn the_rate_limit_never_admits_more_than_n_in_any_second() {
        let throttle = std::sync::Arc::new(Throttle::new(Some(20.0)));
        let start = Instant::now();
        let mut tasks = Vec::new();
        for _ in 0..50 {
            let throttle = throttle.clone();
            tasks.push(tokio::spawn(async move {
                throttle.admit("GET /").await;
                Instant::now()
            }));
        }
        let mut times = Vec::new();
        for task in tasks {
            times.push(task.await.unwrap());
        }
        times.sort();
        // 20 at once, 20 a second later, 10 a second after that
        let took = start.elapsed();
        assert!(took >= Duration::from_millis(1990), "{took:?}");
        for (i, t) in times.iter().enumerate() {
            let within = times[i..]
                .iter()
                .take_while(|u| **u < *t + Duration::from_secs(1))
                .count();
            assert!(within <= 20, "{within} admissions within one second");
        }
        assert!(throttle.stats().paced >= Duration::from_millis(1900));
    }

    #[test]
    fn a_rate_below_one_per_second_spaces_single_requests() {
        let window = Window::new(0.5);
        let now = Instant::now();
        assert_eq!(window.try_admit(now), None);
        assert_eq!(
            window.try_admit(now),
            Some(now + Duration::from_secs(2) + WINDOW_MARGIN)
        );
    }

    #[tokio::test]
    async fn a_pause_holds_its_route_only_and_is_measured() {
        let throttle = Throttle::new(None);
        throttle.pause("POST /tokens", Duration::from_millis(200));
        let start = Instant::now();
        throttle.admit("GET /teams").await;
        assert!(
            start.elapsed() < Duration::from_millis(100),
            "another route waits"
        );
        tokio::join!(
            throttle.admit("POST /tokens"),
            throttle.admit("POST /tokens")
        );
        assert!(start.elapsed() >= Duration::from_millis(190));
        let stats = throttle.stats();
        assert_eq!(stats.rate_limited, 1);
        assert!(!stats.global);
        assert!(stats.throttled >= Duration::from_millis(190));
        assert!(stats.throttled < Duration::from_millis(390), "{stats:?}");
        assert_eq!(stats.routes.len(), 1);
        assert_eq!(stats.routes[0].route, "POST /tokens");
        assert!(stats.routes[0].waited >= Duration::from_millis(190));
    }

    #[tokio::test]
    async fn rate_limits_on_several_routes_at_once_hold_every_request() {
        let throttle = Throttle::new(None);
        for route in ["GET /a", "GET /b", "GET /a", "GET /c"] {
            throttle.pause(route, Duration::from_millis(200));
        }
        let start = Instant::now();
        throttle.admit("GET /elsewhere").await;
        assert!(start.elapsed() >= Duration::from_millis(190));
        let stats = throttle.stats();
        assert!(stats.global);
        assert_eq!(stats.routes[0].rate_limited, 2, "{stats:?}");
    }
}
