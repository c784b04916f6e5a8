//! [`InjectAborts`]: fault injection for lock elision — an [`Htm`] that makes
//! a chosen fraction of transactions abort before they start.

use super::htm::{AbortStatus, Htm};
use crate::primitive::{AtomicU64, Ordering};
use crate::profile::AbortCause;

/// Wraps an [`Htm`] and aborts roughly `permille` of every 1000 `begin`s at
/// once, with a conflict, capacity or other status (chosen at random), so the
/// retry policy, the wait for a free lock and the fallback run often even
/// where real transactions rarely abort. The random stream is one shared
/// counter hashed with SplitMix64, advanced outside any transaction.
#[derive(Debug)]
pub struct InjectAborts<H: Htm> {
    inner: H,
    permille: u32,
    state: AtomicU64,
}

impl<H: Htm> InjectAborts<H> {
    /// Abort about `permille` / 1000 of the transactions of `inner`
    /// (values above 1000 abort all), with the random stream `seed`.
    pub fn new(inner: H, permille: u32, seed: u64) -> Self {
        Self { inner, permille, state: AtomicU64::new(seed) }
    }

    /// The wrapped HTM.
    pub fn inner(&self) -> &H {
        &self.inner
    }

    fn next(&self) -> u64 {
        let mut z = self.state.fetch_add(0x9e37_79b9_7f4a_7c15, Ordering::Relaxed).wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

// SAFETY: an injected abort returns `Err` before `inner.begin` runs, i.e.
// before any transaction started, which is exactly what contract 1 requires
// of an abort (nothing happened; `begin` returned `Err`). Every other call is
// the inner implementation's, which meets the contract by its own `unsafe
// impl`; `end`'s precondition is forwarded unchanged.
unsafe impl<H: Htm> Htm for InjectAborts<H> {
    #[inline]
    fn begin(&self) -> Result<(), AbortStatus> {
        if self.permille > 0 {
            let r = self.next();
            if (r % 1000) < u64::from(self.permille) {
                let cause = match (r >> 32) % 3 {
                    0 => AbortCause::Conflict,
                    1 => AbortCause::Capacity,
                    _ => AbortCause::Other,
                };
                return Err(AbortStatus::synthetic(cause));
            }
        }
        self.inner.begin()
    }

    #[inline]
    unsafe fn end(&self) {
        // SAFETY: forwarded: the caller is inside a transaction of `inner`
        // (injected aborts never start one).
        unsafe { self.inner.end() }
    }

    #[inline]
    fn abort(&self, code: u8) {
        self.inner.abort(code);
    }

    #[inline]
    fn in_transaction(&self) -> bool {
        self.inner.in_transaction()
    }
}
