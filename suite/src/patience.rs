//! The consistency window (`--consistency-window`): the one way an observation the spec does
//! not promise to be immediate is given time. An item in a list after its create, an item gone
//! after its delete (above all one answered `202 Accepted`), a change visible after an update:
//! each is read once, and only when it does not hold is it read again, with backoff, until it
//! holds or the window has passed. An observation that holds at once costs nothing more.
//!
//! The runner, the sequence engine, teardown and sweep all observe through [`Patience`], got
//! from [`crate::target::Target::patience`]: the window is set once per run, and what it hid
//! (how many observations held only after waiting, the longest wait) is metered in one place
//! ([`LagStats`]) for the reports.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The window a run gives observations when none is configured.
pub const DEFAULT_WINDOW: Duration = Duration::from_secs(5);

/// The first pause between two reads of one observation; each next one doubles, up to
/// [`LONGEST_PAUSE`].
const FIRST_PAUSE: Duration = Duration::from_millis(100);

/// The longest pause between two reads of one observation.
const LONGEST_PAUSE: Duration = Duration::from_secs(1);

/// The run's window and the meter of what it hid, shared by every observation of the run.
#[derive(Debug, Default)]
pub struct Consistency {
    window_ms: AtomicU64,
    held_late: AtomicU64,
    longest_ms: AtomicU64,
    total_ms: AtomicU64,
    never_held: AtomicU64,
}

impl Consistency {
    /// Sets the window (`Duration::ZERO`: every observation is read once).
    pub fn set_window(&self, window: Duration) {
        let ms = u64::try_from(window.as_millis()).unwrap_or(u64::MAX);
        self.window_ms.store(ms, Ordering::Relaxed);
    }

    /// The window in force.
    pub fn window(&self) -> Duration {
        Duration::from_millis(self.window_ms.load(Ordering::Relaxed))
    }

    /// What the window hid so far.
    pub fn stats(&self) -> LagStats {
        LagStats {
            window: self.window(),
            held_late: self.held_late.load(Ordering::Relaxed),
            longest: Duration::from_millis(self.longest_ms.load(Ordering::Relaxed)),
            total: Duration::from_millis(self.total_ms.load(Ordering::Relaxed)),
            never_held: self.never_held.load(Ordering::Relaxed),
        }
    }
}

/// What the consistency window hid in a run: the observations that held only after waiting.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LagStats {
    /// The window in force.
    pub window: Duration,
    /// Observations that did not hold at once and held within the window.
    pub held_late: u64,
    /// The longest wait of those.
    pub longest: Duration,
    /// Their waits added up.
    pub total: Duration,
    /// Observations waited for the whole window that never held (each a finding).
    pub never_held: u64,
}

impl LagStats {
    /// The reports' line: `3 observations held only after waiting (up to 1.2 s; consistency
    /// window 5.0 s)`; `None` when nothing was waited for.
    pub fn line(&self) -> Option<String> {
        if self.held_late == 0 && self.never_held == 0 {
            return None;
        }
        let mut parts = Vec::new();
        if self.held_late > 0 {
            parts.push(format!(
                "{} observation{} held only after waiting (up to {}, {} in all)",
                self.held_late,
                if self.held_late == 1 { "" } else { "s" },
                crate::clock::human(self.longest),
                crate::clock::human(self.total)
            ));
        }
        if self.never_held > 0 {
            parts.push(format!(
                "{} did not hold within the window",
                self.never_held
            ));
        }
        Some(format!(
            "consistency: {} (--consistency-window {}): the target's lists, shows and deletes lag",
            parts.join("; "),
            crate::clock::human(self.window)
        ))
    }
}

/// One observation's patience: read, and while it does not hold, [`Patience::again`] waits
/// with backoff and says whether to read once more; [`Patience::done`] says how it ended.
#[derive(Debug)]
pub struct Patience {
    meter: Arc<Consistency>,
    window: Duration,
    started: Instant,
    pause: Duration,
    waits: u32,
}

impl Patience {
    /// A fresh observation under the run's window.
    pub fn new(meter: Arc<Consistency>) -> Self {
        Self {
            window: meter.window(),
            meter,
            started: Instant::now(),
            pause: FIRST_PAUSE,
            waits: 0,
        }
    }

    /// The observation did not hold: waits for the next read and answers true, or answers
    /// false at once when the window is over (a window of 0 never waits).
    pub async fn again(&mut self) -> bool {
        let spent = self.started.elapsed();
        if spent >= self.window {
            return false;
        }
        let pause = self.pause.min(self.window - spent);
        tokio::time::sleep(pause).await;
        self.pause = (self.pause * 2).min(LONGEST_PAUSE);
        self.waits += 1;
        true
    }

    /// The time waited since the first read, when there was a wait.
    pub fn waited(&self) -> Option<Duration> {
        (self.waits > 0).then(|| self.started.elapsed())
    }

    /// The observation is over: `held` or not. Meters a wait, and returns the time waited
    /// (for a finding to say), `None` when the first read decided.
    pub fn done(self, held: bool) -> Option<Duration> {
        self.note(held)
    }

    /// One of several observations that share this patience (a batch read again within one
    /// window) is over: meters it as [`Patience::done`] does, and returns the time waited.
    pub fn note(&self, held: bool) -> Option<Duration> {
        let waited = self.waited()?;
        let ms = u64::try_from(waited.as_millis()).unwrap_or(u64::MAX);
        if held {
            self.meter.held_late.fetch_add(1, Ordering::Relaxed);
            self.meter.total_ms.fetch_add(ms, Ordering::Relaxed);
            self.meter.longest_ms.fetch_max(ms, Ordering::Relaxed);
        } else {
            self.meter.never_held.fetch_add(1, Ordering::Relaxed);
        }
        Some(waited)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meter(window: Duration) -> Arc<Consistency> {
        let meter = Arc::new(Consistency::default());
        meter.set_window(window);
        meter
    }

    #[tokio::test]
    async fn a_zero_window_never_waits() {
        let meter = meter(Duration::ZERO);
        let mut p = Patience::new(meter.clone());
        assert!(!p.again().await);
        assert_eq!(p.done(false), None);
        assert_eq!(meter.stats().never_held, 0);
    }

    #[tokio::test]
    async fn what_holds_at_once_is_not_metered() {
        let meter = meter(Duration::from_secs(5));
        let p = Patience::new(meter.clone());
        assert_eq!(p.done(true), None);
        assert_eq!(meter.stats().line(), None);
    }

    #[tokio::test]
    async fn waits_end_with_the_window_and_are_metered() {
        let meter = meter(Duration::from_millis(350));
        let mut p = Patience::new(meter.clone());
        let started = Instant::now();
        let mut reads = 1;
        while p.again().await {
            reads += 1;
        }
        let elapsed = started.elapsed();
        assert!(elapsed >= Duration::from_millis(350), "{elapsed:?}");
        assert!(elapsed < Duration::from_millis(900), "{elapsed:?}");
        // 100 + 200, then the 50 left of the window
        assert_eq!(reads, 4);
        assert!(p.done(false).is_some());
        let stats = meter.stats();
        assert_eq!((stats.held_late, stats.never_held), (0, 1));
        assert!(stats.line().unwrap().contains("1 did not hold"));
    }

    #[tokio::test]
    async fn a_late_hold_is_counted_with_its_wait() {
        let meter = meter(Duration::from_secs(5));
        let mut p = Patience::new(meter.clone());
        assert!(p.again().await);
        let waited = p.done(true).unwrap();
        assert!(waited >= Duration::from_millis(100));
        let stats = meter.stats();
        assert_eq!(stats.held_late, 1);
        assert!(stats.longest >= Duration::from_millis(100));
        let line = stats.line().unwrap();
        assert!(
            line.contains("1 observation held only after waiting"),
            "{line}"
        );
    }
}
