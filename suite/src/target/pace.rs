//! The target's rate, learned: a pace just under the limit a server enforces, so that a
//! limited server costs about requests / limit and a handful of 429s. A header that states
//! the limit and its window (`RateLimit-Policy: 30;w=1`, `RateLimit-Limit: 30, 30;w=1`,
//! `RateLimit: limit=30, ...`) is paced at directly, on its route until the same header is
//! seen on a second route, then for the whole client; a header saying nothing remains
//! (`RateLimit-Remaining: 0`, `X-RateLimit-Remaining: 0`) holds its scope until the reset
//! it names. Without headers, 429s on several routes at once are a limit on the whole
//! client: it is paced at what the server let through in the last second, then as TCP does,
//! additive increase while the pace held requests back, multiplicative decrease on a 429
//! (once per episode: a 429 of a request sent before the last decrease settled says nothing
//! new). A 429 on one route alone is that route's own (its pause, `Throttle::pause`, waits
//! it out) and a long wait asked for (a quota per minute or hour) is never taken for the
//! whole client. A target that never answers 429 and sends no such header is never paced.
//! `--rate` stays a separate ceiling (`throttle::Window`); the pace never grows past it.
//! Every function takes the time, so the tests run on a simulated clock.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

/// The pace after a 429, as a share of the rate it replaces (TCP halves; a server's limit
/// measured from what it let through needs less margin).
const DECREASE: f64 = 0.9;

/// The pace of a stated limit, as a share of it: just under, so that a window boundary
/// or a little jitter does not cross it.
const STATED_SHARE: f64 = 0.95;

/// The additive increase per second while the pace held requests back, as a share of the
/// limit learned (1 %: from the pace after a decrease back to the limit in about 10 s).
const INCREASE_SHARE: f64 = 0.01;

/// The smallest additive increase, requests per second per second.
const MIN_INCREASE: f64 = 0.2;

/// The slowest pace learned from 429s, requests per second.
const MIN_RATE: f64 = 1.0;

/// How long after a decrease a 429 of a request sent meanwhile says nothing new (the
/// server's window still full of what came before), at least.
const SETTLE: Duration = Duration::from_secs(1);

/// 429s within the last second on this many routes show a limit on the whole client (a
/// client of few workers meets few: a route's 429 pauses it).
const GLOBAL_ROUTES: usize = 3;

/// A 429 asking for a longer wait is a quota of its route (per minute, per hour), never
/// evidence of the whole client's pace.
const OWN_QUOTA_WAIT: Duration = Duration::from_secs(5);

/// Answers the target took in the last second, at least, for a first 429 to teach a rate:
/// a server that refuses everything for a while (its first requests, a burst of other
/// clients) shows no rate, only waits.
const MIN_TAKEN: f64 = 3.0;

/// The span over which answers are counted: a limit is measured as answers a second.
const SPAN: Duration = Duration::from_secs(1);

/// What rate-limit headers said of an answer: the limit and its window (seconds), the
/// requests remaining, and the seconds until the window resets.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Stated {
    /// Requests allowed in a window.
    pub limit: Option<f64>,
    /// The window, seconds.
    pub window: Option<f64>,
    /// Requests remaining in the current window.
    pub remaining: Option<f64>,
    /// Seconds until the current window resets.
    pub reset: Option<f64>,
}

impl Stated {
    /// Reads the `RateLimit-*` (IETF draft, also the combined `RateLimit` and
    /// `RateLimit-Policy` forms) and `X-RateLimit-*` headers. A reset above 10^9 is an epoch
    /// time, taken relative to `now`.
    pub fn parse(headers: &[(String, String)], now: SystemTime) -> Self {
        let mut stated = Self::default();
        for (name, value) in headers {
            let name = name.to_ascii_lowercase();
            let Some(field) = name
                .strip_prefix("x-ratelimit")
                .or_else(|| name.strip_prefix("ratelimit"))
            else {
                continue;
            };
            match field {
                "-limit" | "-policy" => stated.policy(value),
                "" => stated.combined(value),
                "-remaining" => stated.remaining = number(value),
                "-reset" => stated.reset = number(value),
                _ => {}
            }
        }
        if let Some(reset) = stated.reset.filter(|r| *r > 1e9) {
            let epoch = now
                .duration_since(SystemTime::UNIX_EPOCH)
                .unwrap_or_default()
                .as_secs_f64();
            stated.reset = Some((reset - epoch).max(0.0));
        }
        stated
    }

    /// The strictest policy of a `RateLimit-Policy` or `RateLimit-Limit` value:
    /// `10, 100;w=60`, `"default";q=100;w=10`.
    fn policy(&mut self, value: &str) {
        for item in value.split(',') {
            let (mut limit, mut window) = (None, None);
            for (i, part) in item.split(';').enumerate() {
                match part.trim().split_once('=') {
                    Some(("q", v)) => limit = number(v),
                    Some(("w", v)) => window = number(v),
                    None if i == 0 => limit = number(part),
                    _ => {}
                }
            }
            self.keep_stricter(limit, window);
        }
    }

    /// A combined `RateLimit` value: `limit=10, remaining=5, reset=2` (an early draft) or
    /// `"default";r=5;t=2` (the later one; its limit is in `RateLimit-Policy`).
    fn combined(&mut self, value: &str) {
        let (mut limit, mut window) = (None, None);
        for part in value.split([',', ';']) {
            match part.trim().split_once('=') {
                Some(("limit" | "q", v)) => limit = number(v),
                Some(("w", v)) => window = number(v),
                Some(("remaining" | "r", v)) => self.remaining = number(v),
                Some(("reset" | "t", v)) => self.reset = number(v),
                _ => {}
            }
        }
        self.keep_stricter(limit, window);
    }

    /// Keeps `limit` in `window` when it is the stricter rate (a limit without a window
    /// only while none with one is known).
    fn keep_stricter(&mut self, limit: Option<f64>, window: Option<f64>) {
        let Some(limit) = limit else { return };
        let rate = |l: f64, w: Option<f64>| w.map_or(f64::INFINITY, |w| l / w);
        let stricter = match (self.limit, self.window) {
            (None, _) => true,
            (Some(_), None) => window.is_some(),
            (Some(l), w) => window.is_some() && rate(limit, window) < rate(l, w),
        };
        if stricter {
            (self.limit, self.window) = (Some(limit), window);
        }
    }

    /// The stated rate, requests per second: a limit with its window.
    pub fn rate(&self) -> Option<f64> {
        let rate = self.limit? / self.window?;
        (rate.is_finite() && rate > 0.0).then_some(rate)
    }

    /// True when any rate-limit header was there.
    fn any(&self) -> bool {
        *self != Self::default()
    }
}

/// A header value as a number of at least 0.
fn number(text: &str) -> Option<f64> {
    let n: f64 = text.trim().trim_matches('"').parse().ok()?;
    (n.is_finite() && n >= 0.0).then_some(n)
}

/// The pace of one scope (the whole client, or one route).
#[derive(Debug, Clone)]
struct Pace {
    /// The limit, requests per second: stated, or what the server let through when it
    /// refused; infinite for a scope only held until a reset.
    limit: f64,
    /// The pace, requests per second (infinite: not paced, only held).
    rate: f64,
    /// True while the pace is a header's (it does not grow).
    stated: bool,
    /// The additive increase, requests per second per second of being the bottleneck.
    step: f64,
    /// When the next request may go.
    next: Instant,
    /// Until when every request of the scope waits (a window with nothing remaining).
    held_until: Option<Instant>,
    /// Since when the pace grew last, and whether it held a request back since.
    grown_at: Instant,
    bottleneck: bool,
    /// A 429 of a request sent before then leads to no decrease.
    settled_at: Instant,
}

impl Pace {
    /// A pace at `share` of `limit`.
    fn at(limit: f64, share: f64, stated: bool, now: Instant) -> Self {
        Self {
            limit,
            rate: limit * share,
            stated,
            step: (limit * INCREASE_SHARE).max(MIN_INCREASE),
            next: now,
            held_until: None,
            grown_at: now,
            bottleneck: false,
            settled_at: now,
        }
    }

    /// A scope only held until `until`, not paced.
    fn held(now: Instant, until: Instant) -> Self {
        Self {
            held_until: Some(until),
            ..Self::at(f64::INFINITY, 1.0, true, now)
        }
    }

    /// The earliest a request may go, the pace grown first if a second passed.
    fn earliest(&mut self, now: Instant, ceiling: f64) -> Instant {
        if !self.stated && now >= self.grown_at + SPAN {
            if self.bottleneck {
                self.rate = (self.rate + self.step).min(ceiling.max(MIN_RATE));
            }
            self.grown_at = now;
            self.bottleneck = false;
        }
        let held = self.held_until.filter(|t| *t > now).unwrap_or(now);
        now.max(self.next).max(held)
    }

    /// A request goes `at` (`now` or later).
    fn take(&mut self, at: Instant, now: Instant) {
        self.bottleneck |= at > now;
        if self.rate.is_finite() {
            self.next = at + Duration::from_secs_f64(1.0 / self.rate);
        }
    }

    /// The pace learned from a first 429: `accepted` answers in the last second.
    fn learned(accepted: f64, wait: Duration, now: Instant) -> Self {
        let mut pace = Self::at(f64::INFINITY, 1.0, false, now);
        pace.decrease(now, accepted, wait, now);
        // the wait the 429 asked for is the whole client's: its window is full
        pace.held_until = Some(now + wait.min(OWN_QUOTA_WAIT));
        pace
    }

    /// A 429 of a request sent `sent_at`, `accepted` answers of the scope in the last
    /// second, the wait the answer asked for: a decrease, unless an earlier one still
    /// settles. Answers whether it decreased.
    fn decrease(&mut self, sent_at: Instant, accepted: f64, wait: Duration, now: Instant) -> bool {
        if sent_at < self.settled_at {
            return false;
        }
        let measured = accepted.max(MIN_RATE);
        let before = if self.rate.is_finite() {
            self.rate.min(measured)
        } else {
            measured
        };
        *self = Self {
            rate: (before * DECREASE).max(MIN_RATE),
            stated: false,
            limit: measured,
            step: self.step.min((measured * INCREASE_SHARE).max(MIN_INCREASE)),
            settled_at: now + wait.clamp(SETTLE, OWN_QUOTA_WAIT),
            grown_at: now,
            bottleneck: false,
            ..self.clone()
        };
        true
    }
}

/// Answers within the last [`SPAN`].
#[derive(Debug, Default)]
struct Recent<T>(VecDeque<(Instant, T)>);

impl<T> Recent<T> {
    fn push(&mut self, now: Instant, item: T) {
        self.prune(now);
        self.0.push_back((now, item));
    }

    fn prune(&mut self, now: Instant) {
        while self.0.front().is_some_and(|(t, _)| *t + SPAN < now) {
            self.0.pop_front();
        }
    }

    fn count(&mut self, now: Instant) -> usize {
        self.prune(now);
        self.0.len()
    }
}

/// What the pacer knows.
#[derive(Debug, Default)]
struct Learned {
    /// The whole client's pace, once learned.
    global: Option<Pace>,
    /// A route's pace, from headers seen on that route only, by route key.
    routes: HashMap<String, Pace>,
    /// Answers other than 429 in the last second, by route.
    answers: Recent<String>,
    /// 429s in the last second, by route.
    refusals: Recent<String>,
    /// The first route whose answers carried rate-limit headers; `None` in it once a second
    /// route's did too (the headers are then the whole client's).
    headers_on: Option<Option<String>>,
}

/// The learned pace of one target, shared by all its requests.
#[derive(Debug)]
pub struct Pacer {
    /// False with `--no-rate-learning`: nothing is learned, nothing paced.
    learning: bool,
    /// `--rate`, the ceiling no pace grows past.
    ceiling: f64,
    learned: Mutex<Learned>,
}

impl Pacer {
    /// A pacer that learns (or not) under `ceiling` requests a second.
    pub fn new(learning: bool, ceiling: Option<f64>) -> Self {
        Self {
            learning,
            ceiling: ceiling.unwrap_or(f64::INFINITY),
            learned: Mutex::default(),
        }
    }

    /// When a request of `route` may go (`None`: now, nothing learned), its place taken.
    pub fn slot(&self, route: &str, now: Instant) -> Option<Instant> {
        let mut learned = self.learned.lock().ok()?;
        let learned = &mut *learned;
        if learned.global.is_none() && learned.routes.is_empty() {
            return None;
        }
        let mut paces: Vec<&mut Pace> = learned
            .global
            .iter_mut()
            .chain(learned.routes.get_mut(route))
            .collect();
        let at = paces
            .iter_mut()
            .map(|pace| pace.earliest(now, self.ceiling))
            .max()?;
        for pace in paces {
            pace.take(at, now);
        }
        Some(at)
    }

    /// An answer of `status` with `headers` to a request of `route` sent `sent_at` arrived
    /// `now` (`wall` on the wall clock).
    pub fn answered(
        &self,
        route: &str,
        status: u16,
        headers: &[(String, String)],
        sent_at: Instant,
        now: Instant,
        wall: SystemTime,
    ) {
        if !self.learning {
            return;
        }
        let stated = Stated::parse(headers, wall);
        if status != 429 && !stated.any() {
            if let Ok(mut learned) = self.learned.lock() {
                learned.answers.push(now, route.to_string());
            }
            return;
        }
        let Ok(mut learned) = self.learned.lock() else {
            return;
        };
        if stated.any() {
            learned.heed(route, &stated, now);
        }
        if status == 429 {
            let wait = super::requested_wait(headers, wall).unwrap_or_default();
            learned.refused(route, sent_at, wait, now);
        } else {
            learned.answers.push(now, route.to_string());
        }
    }

    /// The whole client's limit, requests per second, where one was learned or stated.
    pub fn limit(&self) -> Option<f64> {
        let learned = self.learned.lock().ok()?;
        let limit = learned.global.as_ref()?.limit;
        limit.is_finite().then_some(limit)
    }
}

impl Learned {
    /// Rate-limit headers on an answer of `route`: a stated limit paced at, a window with
    /// nothing remaining held until its reset.
    fn heed(&mut self, route: &str, stated: &Stated, now: Instant) {
        let global = match self.headers_on.take() {
            None => {
                self.headers_on = Some(Some(route.to_string()));
                false
            }
            Some(Some(first)) if first != route => {
                // the same headers on a second route: the whole client's; what the first
                // route learned of them moves there
                self.headers_on = Some(None);
                let moved = self.routes.remove(&first);
                self.global = self.global.take().or(moved);
                true
            }
            Some(first) => {
                let global = first.is_none();
                self.headers_on = Some(first);
                global
            }
        };
        if global {
            Self::apply(&mut self.global, stated, now);
            return;
        }
        let mut pace = self.routes.remove(route);
        Self::apply(&mut pace, stated, now);
        if let Some(pace) = pace {
            self.routes.insert(route.to_string(), pace);
        }
    }

    /// `stated` applied to one scope's pace.
    fn apply(scope: &mut Option<Pace>, stated: &Stated, now: Instant) {
        if let Some(rate) = stated.rate() {
            let same = scope
                .as_ref()
                .is_some_and(|p| !p.stated || (p.limit - rate).abs() < f64::EPSILON);
            if !same {
                *scope = Some(Pace::at(rate, STATED_SHARE, true, now));
            }
        }
        let exhausted = stated.remaining.is_some_and(|r| r < 1.0);
        if let (true, Some(reset)) = (exhausted, stated.reset) {
            let until = now + Duration::from_secs_f64(reset.min(OWN_QUOTA_WAIT.as_secs_f64()));
            match scope {
                Some(pace) => pace.held_until = Some(until),
                None => *scope = Some(Pace::held(now, until)),
            }
        }
    }

    /// A 429 on `route`: a decrease of the scope it is evidence for.
    fn refused(&mut self, route: &str, sent_at: Instant, wait: Duration, now: Instant) {
        self.refusals.push(now, route.to_string());
        if let Some(pace) = self.routes.get_mut(route) {
            let accepted = self.answers.0.iter().filter(|(_, r)| r == route).count();
            pace.decrease(sent_at, accepted as f64, wait, now);
            return;
        }
        if wait > OWN_QUOTA_WAIT {
            return;
        }
        let accepted = self.answers.count(now) as f64;
        if let Some(pace) = &mut self.global {
            pace.decrease(sent_at, accepted, wait, now);
        } else if accepted >= MIN_TAKEN && self.whole_client_refused(now) {
            self.global = Some(Pace::learned(accepted, wait, now));
        }
    }

    /// True when the last second's 429s show a limit on the whole client.
    fn whole_client_refused(&mut self, now: Instant) -> bool {
        if self.refusals.count(now) < GLOBAL_ROUTES {
            return false;
        }
        let mut routes: Vec<&str> = self.refusals.0.iter().map(|(_, r)| r.as_str()).collect();
        routes.sort_unstable();
        routes.dedup();
        routes.len() >= GLOBAL_ROUTES
    }
}

#[cfg(test)]
#[path = "pace_tests.rs"]
mod tests;
