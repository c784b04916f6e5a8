//! `lock_api` adapters, so users get guarded `Mutex<T>` types.
//!
//! Only the locks with no per-core node fit `lock_api::RawMutex`, whose
//! `lock(&self)` has no way to name the acquiring core: [`Ttas`] and
//! [`Ticket`]. The queue locks (CLH, MCS) need a core index and are used
//! through [`RawLock`] or [`super::Lock`] instead.

use super::{RawLock, Ticket, Ttas};

/// Raw test-and-test-and-set lock for `lock_api`.
#[derive(Debug, Default)]
pub struct RawTtas(Ttas);

/// Raw ticket lock for `lock_api`.
#[derive(Debug, Default)]
pub struct RawTicket(Ticket);

/// `Mutex<T>` over the test-and-test-and-set lock.
pub type TtasMutex<T> = lock_api::Mutex<RawTtas, T>;
/// `Mutex<T>` over the ticket lock.
pub type TicketMutex<T> = lock_api::Mutex<RawTicket, T>;

macro_rules! impl_raw_mutex {
    ($name:ident, $inner:ident) => {
        // SAFETY: `lock` returns only once this thread holds the inner lock,
        // `try_lock` returns true only if it acquired it, and the inner lock
        // gives mutual exclusion for any core index because it keeps no
        // per-core state (core 0 is passed and ignored). A guard may be
        // unlocked on another thread (`GuardSend`): the lock has no owner
        // identity.
        unsafe impl lock_api::RawMutex for $name {
            #[allow(clippy::declare_interior_mutable_const)]
            const INIT: Self = Self($inner::new_const());
            type GuardMarker = lock_api::GuardSend;

            fn lock(&self) {
                self.0.acquire(0, || {});
            }

            fn try_lock(&self) -> bool {
                self.0.try_acquire(0)
            }

            unsafe fn unlock(&self) {
                self.0.release(0);
            }

            fn is_locked(&self) -> bool {
                RawLock::is_locked(&self.0)
            }
        }
    };
}

impl_raw_mutex!(RawTtas, Ttas);
impl_raw_mutex!(RawTicket, Ticket);
