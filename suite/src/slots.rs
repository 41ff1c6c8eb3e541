//! The run's sending budget: how many things send requests at once (`--test-threads`, the
//! plan's concurrency). A test holds one slot while it runs, and so does each case of a
//! sequence family, whose cases run side by side: a family that runs sixteen cases at once
//! takes sixteen slots, not one.

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The slots of one run, shared by its tests and its sequence cases (cloning shares them).
#[derive(Debug, Clone)]
pub struct Slots {
    semaphore: Arc<Semaphore>,
    width: usize,
}

/// One slot, held until dropped.
pub struct Slot {
    _permit: Option<OwnedSemaphorePermit>,
}

impl Slots {
    /// `width` slots (at least one).
    pub fn new(width: usize) -> Self {
        let width = width.max(1);
        Self {
            semaphore: Arc::new(Semaphore::new(width)),
            width,
        }
    }

    /// How many things may send at once.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Waits for a free slot (first come, first served). The semaphore is never closed, so
    /// a slot always comes; were it closed, the caller would go on without one.
    pub async fn take(&self) -> Slot {
        Slot {
            _permit: self.semaphore.clone().acquire_owned().await.ok(),
        }
    }
}
