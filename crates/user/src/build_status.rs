//! Whether a root task finished building an experiment, or the error that
//! stopped it: what the outside world waits on before it measures.

use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use granule_kernel::abi::Error;

/// Set once by the root task, read by anyone.
#[derive(Debug, Default)]
pub struct BuildStatus {
    ready: AtomicBool,
    error: AtomicU64,
}

impl BuildStatus {
    /// Record how building went.
    pub fn record(&self, built: Result<(), Error>) {
        match built {
            Ok(()) => self.ready.store(true, Ordering::Release),
            Err(e) => self.error.store(e.word(), Ordering::Release),
        }
    }

    /// Whether everything was built.
    pub fn is_ready(&self) -> bool {
        self.ready.load(Ordering::Acquire)
    }

    /// The error that stopped the root task, if any.
    pub fn error(&self) -> Option<Error> {
        match self.error.load(Ordering::Acquire) {
            0 => None,
            w => Error::result_from_word(w).err(),
        }
    }
}
