//! A run's cancel: SIGINT or SIGTERM stops it gracefully (no new test starts, the running ones
//! get [`GRACE`] to finish, then teardown and the reports), a second signal stops the process
//! at once. [`Cancel`] is the shared flag the trials look at before they start.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::watch;

use crate::exit::ExitCodes;

/// How long the tests running at the first signal may go on sending requests; after it the
/// target refuses new ones.
pub const GRACE: Duration = Duration::from_secs(5);

/// How long past [`GRACE`] a test may wait for the request it has in flight before it is cut
/// off.
pub const IN_FLIGHT: Duration = Duration::from_secs(5);

/// How the reason of a test a signal kept from running or finishing starts.
pub const INTERRUPTED: &str = "interrupted by";

/// The signals that cancel a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// Ctrl-C.
    Interrupt,
    /// A CI job's cancel, `kill`.
    Terminate,
    /// The reader of standard output went away (`conform … | head`): no signal, but the
    /// same graceful stop.
    ClosedOutput,
}

impl Signal {
    /// `SIGINT` or `SIGTERM`.
    pub fn name(self) -> &'static str {
        match self {
            Signal::Interrupt => "SIGINT",
            Signal::Terminate => "SIGTERM",
            Signal::ClosedOutput => "EPIPE (standard output closed)",
        }
    }

    /// The shell's code of a process ended by the signal: 128 + its number (130, 143; 141,
    /// SIGPIPE's, for a closed standard output).
    pub fn exit_code(self) -> u8 {
        match self {
            Signal::Interrupt => ExitCodes::INTERRUPTED,
            Signal::Terminate => ExitCodes::TERMINATED,
            Signal::ClosedOutput => ExitCodes::OUTPUT_CLOSED,
        }
    }
}

/// When and by what a run was interrupted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interrupt {
    /// The first signal.
    pub signal: Signal,
    /// When it came.
    pub at: Instant,
}

impl Interrupt {
    /// When the target stops sending new requests.
    pub fn stop_sending(&self) -> Instant {
        self.at + GRACE
    }

    /// When a test still running is cut off.
    pub fn cut_off(&self) -> Instant {
        self.at + GRACE + IN_FLIGHT
    }
}

/// The shared cancel flag of a run; clones share it. Never fired unless someone calls
/// [`Cancel::fire`] (the signal listener of [`listen`]).
#[derive(Debug, Clone)]
pub struct Cancel {
    state: Arc<watch::Sender<Option<Interrupt>>>,
}

impl Default for Cancel {
    fn default() -> Self {
        Self {
            state: Arc::new(watch::channel(None).0),
        }
    }
}

impl Cancel {
    /// The interrupt, once a signal came.
    pub fn interrupted(&self) -> Option<Interrupt> {
        *self.state.borrow()
    }

    /// Records the first signal (a later one changes nothing); answers the interrupt.
    pub fn fire(&self, signal: Signal) -> Interrupt {
        let now = Interrupt {
            signal,
            at: Instant::now(),
        };
        self.state.send_if_modified(|state| {
            let first = state.is_none();
            if first {
                *state = Some(now);
            }
            first
        });
        self.interrupted().unwrap_or(now)
    }

    /// Waits for the first signal.
    pub async fn fired(&self) -> Interrupt {
        let mut watcher = self.state.subscribe();
        loop {
            if let Some(interrupt) = *watcher.borrow_and_update() {
                return interrupt;
            }
            if watcher.changed().await.is_err() {
                return std::future::pending().await;
            }
        }
    }
}

/// Listens for SIGINT and SIGTERM on a thread of its own, until the process ends (the
/// default dispositions are replaced before this returns): the first fires `cancel` and calls
/// `first`, the next calls `again`, which ends the process.
pub fn listen(
    cancel: Cancel,
    first: impl Fn(Interrupt) + Send + 'static,
    again: impl Fn(Interrupt) + Send + 'static,
) -> std::io::Result<Injector> {
    let (injector, mut injected) = tokio::sync::mpsc::unbounded_channel::<Signal>();
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let (mut interrupts, mut terminates) = {
            let _entered = runtime.enter();
            (
                signal(SignalKind::interrupt())?,
                signal(SignalKind::terminate())?,
            )
        };
        std::thread::Builder::new()
            .name("conform-signals".into())
            .spawn(move || {
                runtime.block_on(async move {
                    let mut seen = 0;
                    loop {
                        let signal = tokio::select! {
                            Some(()) = interrupts.recv() => Signal::Interrupt,
                            Some(()) = terminates.recv() => Signal::Terminate,
                            Some(signal) = injected.recv() => signal,
                            else => return,
                        };
                        seen += 1;
                        let interrupt = cancel.fire(signal);
                        if seen == 1 {
                            first(interrupt);
                        } else {
                            again(interrupt);
                        }
                    }
                })
            })?;
    }
    #[cfg(not(unix))]
    {
        let _ = (cancel, first, again, &mut injected);
    }
    Ok(Injector(injector))
}

/// Cancels the run as a signal would, from elsewhere in the process (the standard output
/// relay when its reader goes away).
#[derive(Clone)]
pub struct Injector(tokio::sync::mpsc::UnboundedSender<Signal>);

impl Injector {
    /// Cancels as `signal` does.
    pub fn fire(&self, signal: Signal) {
        let _ = self.0.send(signal);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_signal_is_kept_and_wakes_the_waiters() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let cancel = Cancel::default();
        assert!(cancel.interrupted().is_none());
        let waiter = {
            let cancel = cancel.clone();
            runtime.spawn(async move { cancel.fired().await })
        };
        let first = cancel.fire(Signal::Terminate);
        let again = cancel.fire(Signal::Interrupt);
        assert_eq!(first, again);
        assert_eq!(first.signal.exit_code(), 143);
        assert_eq!(runtime.block_on(waiter).unwrap(), first);
    }
}
