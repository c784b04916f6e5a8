//! The one place atomics, spinning and threads come from.
//!
//! Every algorithm in this crate imports its atomics from here, so that
//! `RUSTFLAGS="--cfg loom"` swaps in [`loom`]'s model-checked types (the
//! convention crossbeam uses). Nothing else in the crate may name
//! `core::sync::atomic` directly.
//!
//! Under loom, `AtomicU128` is modelled by a loom mutex around a `u128`: loom
//! has no 128-bit atomic, and a mutex is exactly the atomicity a double-width
//! compare-and-swap provides (one indivisible read-compare-write of both words).

#[cfg(not(loom))]
pub use core::sync::atomic::{fence, AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering};
#[cfg(loom)]
pub use loom::sync::atomic::{fence, AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering};

#[cfg(not(loom))]
pub use portable_atomic::AtomicU128;

/// Busy-wait hint for one iteration of a spin loop.
///
/// Under loom this yields to the model checker, which must see every spin
/// iteration as a scheduling point or it would explore an infinite loop.
#[inline(always)]
pub fn spin_loop() {
    #[cfg(not(loom))]
    core::hint::spin_loop();
    #[cfg(loom)]
    loom::thread::yield_now();
}

#[cfg(loom)]
mod loom_u128 {
    use super::Ordering;

    /// Loom model of a 128-bit atomic (see the module documentation).
    #[derive(Debug)]
    pub struct AtomicU128(loom::sync::Mutex<u128>);

    impl AtomicU128 {
        /// A new atomic holding `v`.
        pub fn new(v: u128) -> Self {
            Self(loom::sync::Mutex::new(v))
        }
        /// Atomic load.
        pub fn load(&self, _: Ordering) -> u128 {
            *self.0.lock().unwrap()
        }
        /// Atomic store.
        pub fn store(&self, v: u128, _: Ordering) {
            *self.0.lock().unwrap() = v;
        }
        /// Atomic compare-and-swap.
        pub fn compare_exchange(&self, current: u128, new: u128, _: Ordering, _: Ordering) -> Result<u128, u128> {
            let mut g = self.0.lock().unwrap();
            if *g == current {
                *g = new;
                Ok(current)
            } else {
                Err(*g)
            }
        }
    }
}
#[cfg(loom)]
pub use loom_u128::AtomicU128;
