//! The one place atomics, spinning and threads come from.
//!
//! Every algorithm in this crate imports its atomics from here, so that
//! `RUSTFLAGS="--cfg loom"` swaps in [`loom`]'s model-checked types (the
//! convention crossbeam uses). Nothing else in the crate may name
//! `core::sync::atomic` directly.
//!
//! Under loom, `AtomicU128` is modelled by one loom `AtomicU64` packing the
//! low 32 bits of each half: loom has no 128-bit atomic, this keeps the
//! atomicity of a double-width compare-and-swap (one indivisible
//! read-compare-write of both words) *and* lets loom check its orderings.

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

    /// Loom model of a 128-bit atomic (see the module documentation): one
    /// loom `AtomicU64` holding the low 32 bits of each 64-bit half, so loom
    /// checks the memory orderings the code asks for (a mutex model would
    /// order everything). Models never come near 2^32 operations, so the
    /// packing is lossless on every value they produce; it is asserted.
    #[derive(Debug)]
    pub struct AtomicU128(loom::sync::atomic::AtomicU64);

    fn pack(v: u128) -> u64 {
        let (hi, lo) = ((v >> 64) as u64, v as u64);
        assert!(hi <= u64::from(u32::MAX) && lo <= u64::from(u32::MAX), "loom AtomicU128 model: {v:#x} does not fit");
        (hi << 32) | lo
    }

    fn unpack(w: u64) -> u128 {
        (u128::from(w >> 32) << 64) | u128::from(w & u64::from(u32::MAX))
    }

    impl AtomicU128 {
        /// A new atomic holding `v`.
        pub fn new(v: u128) -> Self {
            Self(loom::sync::atomic::AtomicU64::new(pack(v)))
        }
        /// Atomic load.
        pub fn load(&self, order: Ordering) -> u128 {
            unpack(self.0.load(order))
        }
        /// Atomic store.
        pub fn store(&self, v: u128, order: Ordering) {
            self.0.store(pack(v), order)
        }
        /// Atomic compare-and-swap.
        pub fn compare_exchange(
            &self,
            current: u128,
            new: u128,
            success: Ordering,
            failure: Ordering,
        ) -> Result<u128, u128> {
            self.0.compare_exchange(pack(current), pack(new), success, failure).map(unpack).map_err(unpack)
        }
    }
}
#[cfg(loom)]
pub use loom_u128::AtomicU128;
