//! The state every handler and every layer of the gate shares: the store behind its lock, the
//! faults and shapes on, the tokens, and what the eventually consistent shapes remember.

use std::collections::HashMap;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, Instant};

use crate::compat::Compat;
use crate::faults::{Faults, Kind};
use crate::shapes::Shapes;
use crate::store::{Kept, Store};

/// The state every handler shares.
#[derive(Clone)]
pub(crate) struct AppState {
    pub store: Arc<RwLock<Store>>,
    pub faults: Arc<Faults>,
    pub shapes: Arc<Shapes>,
    pub token: Arc<str>,
    pub admin_token: Arc<str>,
    pub body_limit: usize,
    pub requests: Arc<AtomicU64>,
    /// Requests seen, for the `unavailable-now-and-then` shape.
    pub seen: Arc<AtomicU64>,
    /// Arrival instants of the latest requests, for `rate-limit-per-second`.
    pub arrivals: Arc<std::sync::Mutex<std::collections::VecDeque<std::time::Instant>>>,
    /// Held for writing by a request whose fault restores the store afterwards, for reading
    /// by every other request (only while such a fault is on).
    pub exclusive: Arc<tokio::sync::RwLock<()>>,
    /// The configured public URL (`--public-url`), without a trailing slash.
    pub public_url: Option<Arc<str>>,
    /// Whether the service is served over TLS (absolute URLs default to `https`).
    pub tls: bool,
    /// Whose words to use where the spec and TFE disagree.
    pub compat: Compat,
    /// What the `generic-store` shape keeps.
    pub kept: Arc<Kept>,
    /// What `list-lag` has seen created, and when.
    pub lagging: Arc<Lagging>,
}

impl AppState {
    /// Reads the store (a poisoned lock is still usable: handlers never leave it half-written).
    pub fn read(&self) -> RwLockReadGuard<'_, Store> {
        self.store.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Writes the store.
    pub fn write(&self) -> RwLockWriteGuard<'_, Store> {
        self.store.write().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether a fault without argument is on.
    pub fn fault(&self, kind: Kind) -> bool {
        self.faults.has(&kind)
    }
}

/// How late a list shows a new item, and a delete answered 202 takes effect.
pub(crate) const LAG: Duration = Duration::from_millis(1500);

/// The ids `list-lag` has seen created, with when (forgotten once they are listed).
#[derive(Debug, Default)]
pub(crate) struct Lagging {
    created: Mutex<HashMap<String, Instant>>,
}

impl Lagging {
    pub(crate) fn note(&self, id: &str) {
        let mut created = self.created.lock().unwrap_or_else(|p| p.into_inner());
        created.retain(|_, at| at.elapsed() < LAG);
        created.insert(id.to_string(), Instant::now());
    }

    pub(crate) fn hidden(&self, id: &str) -> bool {
        let created = self.created.lock().unwrap_or_else(|p| p.into_inner());
        created.get(id).is_some_and(|at| at.elapsed() < LAG)
    }
}
