//! Politeness: a client-side rate limit shared by every request (`--rate`), held as the
//! server counts (a request holds its place in the window until its answer began), the pause
//! a 429 imposes on its route, the wait a 429 asks for (`Retry-After`, `X-RateLimit-Reset`),
//! and a request sent again after a moment of unavailability (502, 503, 504); the pace learned
//! from 429s and rate-limit headers is `super::pace`'s. Time spent held back is measured as wall time (periods in which at least one request waited), so it can be
//! set against the run's wall time.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

use super::pace::Pacer;

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
    /// Wall time in which requests waited because the target asked (429, 503).
    pub throttled: Duration,
    /// Wall time in which requests waited for the client-side rate limit (`--rate`).
    pub paced: Duration,
    /// The target's limit on the whole client, requests per second, where one was learned
    /// from its 429s or stated by its headers (`super::pace`).
    pub learned_limit: Option<f64>,
    /// Wall time in which requests waited for the pace learned of the target.
    pub learned: Duration,
    /// The client-side rate limit (`--rate`), requests per second.
    pub ceiling: Option<f64>,
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
/// (method and path template, [`super::route_key`]), never the others': a limit on one
/// route (5 tokens a minute) says nothing of the rest, and 429s on several routes at once
/// cannot be told from several routes' own limits. A limit on the whole client is honoured
/// all the same, route by route: each route waits out its own 429, so it costs one 429 per
/// route and wait, and a request that met one sends nothing until its wait is over.
#[derive(Debug)]
pub struct Throttle {
    /// The client-side rate limit (`--rate`), when set.
    window: Option<Window>,
    /// Each route's pause, by route key.
    routes: Mutex<std::collections::HashMap<String, RouteHold>>,
    /// The pace learned of the target.
    pace: Pacer,
    deadline: Mutex<Option<Instant>>,
    held: Meter,
    paced: Meter,
    learned: Meter,
    rate_limited: AtomicU64,
    retried: AtomicU64,
    unavailable: AtomicU64,
}

/// A rate limit as the server counts it: at most `capacity` requests reach the server in any
/// span of `span` (for `--rate N/s`, N in any one second, so in every wall-clock second the
/// server counts). When a request reaches the server the client cannot see: any time from its
/// admission (a new connection, a busy client, a queue in front of the server's limiter may
/// come between) until its answer begins. So an admitted request holds its place from its
/// admission until `span` after its answer began (or it failed, or it was never sent), and a
/// request is admitted only while fewer than `capacity` places are held: every request that
/// can arrive within `span` of a new one holds a place when it is admitted. The price is the
/// answer's time: at `N/s` with answers taking `t`, a run sends at most `N / (1 s + t)` a
/// second.
#[derive(Debug)]
struct Window {
    capacity: usize,
    span: Duration,
    /// The places held, each until a `span` after its answer began.
    places: Mutex<Places>,
    /// Told when a request was answered: a place may be due now.
    answered: tokio::sync::Notify,
}

/// The places a [`Window`] holds.
#[derive(Debug, Default)]
struct Places {
    /// The id of the last place taken.
    last: u64,
    /// Each place held: its id and, once its request was answered, when the answer began.
    held: Vec<(u64, Option<Instant>)>,
}

impl Window {
    /// The window of `rate` requests a second: `floor(rate)` in any second, or for a rate
    /// under one a second, one in every `1 / rate` seconds.
    fn new(rate: f64) -> Self {
        let (capacity, span) = if rate >= 1.0 {
            (rate.floor() as usize, Duration::from_secs(1))
        } else {
            (1, Duration::from_secs_f64(1.0 / rate))
        };
        Self {
            capacity,
            span,
            places: Mutex::default(),
            answered: tokio::sync::Notify::new(),
        }
    }

    /// The requests a second it admits at most.
    fn rate(&self) -> f64 {
        self.capacity as f64 / self.span.as_secs_f64()
    }

    /// Takes a place now and answers its id, or answers when the next place frees (`None`
    /// while every place's request is still unanswered).
    fn try_admit(&self, now: Instant) -> Result<u64, Option<Instant>> {
        let Ok(mut places) = self.places.lock() else {
            return Ok(0);
        };
        let span = self.span;
        places
            .held
            .retain(|(_, answered)| answered.is_none_or(|t| t + span > now));
        if places.held.len() >= self.capacity {
            let first = places.held.iter().filter_map(|(_, t)| *t).min();
            return Err(first.map(|t| t + span));
        }
        places.last += 1;
        let id = places.last;
        places.held.push((id, None));
        Ok(id)
    }

    /// The request of place `id` was answered (or failed, or was not sent) `at`.
    fn answered(&self, id: u64, at: Instant) {
        if let Ok(mut places) = self.places.lock() {
            if let Some(place) = places.held.iter_mut().find(|(i, _)| *i == id) {
                place.1 = Some(at);
            }
        }
        self.answered.notify_waiters();
    }

    /// Waits for a place and takes it; `paced` measures the wait.
    async fn admit(&self, paced: &Meter) -> u64 {
        let mut waiting = None;
        loop {
            let answered = self.answered.notified();
            tokio::pin!(answered);
            answered.as_mut().enable();
            let due = match self.try_admit(Instant::now()) {
                Ok(id) => return id,
                Err(due) => due,
            };
            if waiting.is_none() {
                waiting = Some(paced.enter());
            }
            match due {
                Some(due) => tokio::select! {
                    () = tokio::time::sleep_until(due.into()) => {}
                    () = &mut answered => {}
                },
                None => answered.await,
            }
        }
    }
}

/// A request's place in the rate window, from its admission until its answer begins:
/// [`Place::answered`] then, or dropped (a request not sent, a send cut off) as if answered.
#[derive(Debug)]
pub struct Place<'a>(Option<(&'a Window, u64)>);

impl Place<'_> {
    /// The request's answer began (or it failed): from now on it cannot reach the server.
    pub fn answered(self) {}
}

impl Drop for Place<'_> {
    fn drop(&mut self) {
        if let Some((window, id)) = self.0.take() {
            window.answered(id, Instant::now());
        }
    }
}

impl Throttle {
    /// A throttle; `rate` in requests per second (at most that many in any second); whether
    /// it learns the target's pace (`--no-rate-learning` turns that off).
    pub fn new(rate: Option<f64>, learning: bool) -> Self {
        Self {
            window: rate.map(Window::new),
            routes: Mutex::new(std::collections::HashMap::new()),
            pace: Pacer::new(learning, rate),
            deadline: Mutex::new(None),
            held: Meter::default(),
            paced: Meter::default(),
            learned: Meter::default(),
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

    /// Waits until a request of `route` may be sent: the pause a 429 imposed on its route,
    /// then the pace learned of the target, then a place in the rate window, held until the request's answer begins (every send
    /// of a request, a retry's too, is admitted so).
    pub async fn admit(&self, route: &str) -> Place<'_> {
        loop {
            let (until, meter) = self
                .routes
                .lock()
                .ok()
                .and_then(|r| r.get(route).map(|h| (h.until, h.held.clone())))
                .unwrap_or_default();
            match until {
                Some(t) if t > Instant::now() => {
                    let _all = self.held.enter();
                    let _own = meter.enter();
                    tokio::time::sleep_until(t.into()).await;
                }
                _ => break,
            }
        }
        let now = Instant::now();
        if let Some(at) = self.pace.slot(route, now).filter(|at| *at > now) {
            let _waiting = self.learned.enter();
            tokio::time::sleep_until(at.into()).await;
        }
        match &self.window {
            Some(window) => Place(Some((window, window.admit(&self.paced).await))),
            None => Place(None),
        }
    }

    /// An answer to a request of `route` sent `sent_at`: what the pace learns of it.
    pub fn answered(
        &self,
        route: &str,
        status: u16,
        headers: &[(String, String)],
        sent_at: Instant,
    ) {
        let (now, wall) = (Instant::now(), SystemTime::now());
        self.pace
            .answered(route, status, headers, sent_at, now, wall);
    }

    /// A 429 arrived on `route`: that route's requests hold back for `wait`.
    pub fn pause(&self, route: &str, wait: Duration) {
        self.rate_limited.fetch_add(1, Ordering::Relaxed);
        let until = Instant::now() + wait;
        if let Ok(mut routes) = self.routes.lock() {
            let hold = routes.entry(route.to_string()).or_default();
            hold.rate_limited += 1;
            hold.until = Some(hold.until.map_or(until, |old| old.max(until)));
        }
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
            throttled: self.held.total(),
            paced: self.paced.total(),
            learned_limit: self.pace.limit(),
            learned: self.learned.total(),
            ceiling: self.window.as_ref().map(Window::rate),
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
        let throttle = std::sync::Arc::new(Throttle::new(Some(20.0), true));
        let start = Instant::now();
        let mut tasks = Vec::new();
        for _ in 0..50 {
            let throttle = throttle.clone();
            tasks.push(tokio::spawn(async move {
                let place = throttle.admit("GET /").await;
                let admitted = Instant::now();
                place.answered();
                admitted
            }));
        }
        let mut times = Vec::new();
        for task in tasks {
            times.push(task.await.unwrap());
        }
        times.sort();
        // 20 at once, 20 a second later, 10 a second after that
        let took = start.elapsed();
        assert!(took >= Duration::from_millis(2000), "{took:?}");
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
        let id = window.try_admit(now).unwrap();
        assert_eq!(window.try_admit(now), Err(None), "the first is on its way");
        window.answered(id, now);
        assert_eq!(
            window.try_admit(now),
            Err(Some(now + Duration::from_secs(2)))
        );
        assert!(window.try_admit(now + Duration::from_secs(2)).is_ok());
    }

    /// A request may reach the server as late as its answer begins, so its place is held a
    /// second from then: a slow answer delays the next admission, an unanswered one holds.
    #[test]
    fn a_place_is_held_a_second_past_its_answer() {
        let window = Window::new(2.0);
        let t = Instant::now();
        let (a, b) = (window.try_admit(t).unwrap(), window.try_admit(t).unwrap());
        let later = t + Duration::from_millis(1200);
        assert_eq!(
            window.try_admit(later),
            Err(None),
            "both still on their way"
        );
        window.answered(a, t + Duration::from_millis(400));
        assert_eq!(
            window.try_admit(later),
            Err(Some(t + Duration::from_millis(1400))),
            "not a second after its admission"
        );
        assert!(window.try_admit(t + Duration::from_millis(1400)).is_ok());
        window.answered(b, later);
        assert_eq!(
            window.try_admit(later + Duration::from_millis(999)),
            Err(Some(later + Duration::from_secs(1)))
        );
    }

    #[tokio::test]
    async fn a_pause_holds_its_route_only_and_is_measured() {
        let throttle = Throttle::new(None, true);
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
        assert!(stats.throttled >= Duration::from_millis(190));
        assert!(stats.throttled < Duration::from_millis(390), "{stats:?}");
        assert_eq!(stats.routes.len(), 1);
        assert_eq!(stats.routes[0].route, "POST /tokens");
        assert!(stats.routes[0].waited >= Duration::from_millis(190));
    }

    /// 429s on several routes at once hold each route, and nothing else: they cannot be
    /// told from several routes' own limits.
    #[tokio::test]
    async fn rate_limits_on_several_routes_hold_each_its_own_route() {
        let throttle = Throttle::new(None, true);
        for route in ["GET /a", "GET /b", "GET /a", "GET /c"] {
            throttle.pause(route, Duration::from_millis(200));
        }
        let start = Instant::now();
        throttle.admit("GET /elsewhere").await;
        assert!(
            start.elapsed() < Duration::from_millis(100),
            "another route waits"
        );
        throttle.admit("GET /c").await;
        assert!(start.elapsed() >= Duration::from_millis(190));
        let stats = throttle.stats();
        assert_eq!(stats.routes.len(), 3, "{stats:?}");
        assert_eq!(stats.routes[0].route, "GET /c", "the one that waited");
        let a = stats.routes.iter().find(|r| r.route == "GET /a").unwrap();
        assert_eq!(a.rate_limited, 2, "{stats:?}");
    }
}
