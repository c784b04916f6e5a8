//! The signal stack: a binary-semaphore word with accumulated badge bits
//! and a stack of waiters, in one double-width word (an seL4 notification).
//!
//! **Word layout** (one [`AtomicU128`], changed only by `cmpxchg16b`):
//!
//! ```text
//!  127                         90    89    88              64 63                     0
//! +------------------------------+--------+------------------+------------------------+
//! |           tag (38)           | active |   top + 1 (25)   |       bits (64)        |
//! +------------------------------+--------+------------------+------------------------+
//! ```
//!
//! * `bits`: the OR of the badges signalled since the last consumption.
//! * `top + 1`: the top waiter's index plus one, `0` = no waiter (indices
//!   at most [`super::MAX_NODE`]). Waiters are linked newest to oldest
//!   through the caller's link array (see [`super::link`]): waiters are
//!   woken last-in first-out.
//! * `active`: signalled and not yet consumed. Invariant: never `active`
//!   with waiters (a signal pops a waiter instead of accumulating, a wait
//!   consumes instead of pushing), and `bits == 0` unless `active`.
//! * `tag`: bumped (mod 2^38) by every successful CAS, for the waiter pops
//!   (a waker that read the link of a top that left and came back fails).
//!
//! **Algorithm.** Synthesis's recipe (Massalin & Pu 1991, §2.3): squeeze
//! the shared state into two words and change it with one double-word
//! compare-and-swap. `signal` either pops a waiter (Treiber pop; the caller
//! hands the badge to it) or ORs its badge into `bits` and sets `active`;
//! `wait` either consumes `bits` (clearing `active`) or pushes the waiter
//! (Treiber push). Deciding and acting in the same CAS is what rules out
//! the lost wake-up of a check-then-block.
//!
//! **Orderings.** Successful CASes are `AcqRel` (a push publishes the
//! waiter's state, a pop acquires it; a consume acquires what the
//! signallers wrote before signalling); loads and failed CASes `Acquire`;
//! links read after the word that made their node the top.
//!
//! Under loom the 128-bit word is modelled by one 64-bit loom atomic that
//! keeps the low 32 bits of each half (see [`crate::primitive`]): models
//! must keep badges below 2^32 and make fewer than 64 CASes per word.
//!
//! [`SignalStack::remove`], [`SignalStack::iter`] and
//! [`SignalStack::reset`] are **exclusive** (no concurrent operation on the
//! word), like [`super::DualQueue::remove`].

use super::link::{self, relink, MAX_NODE, NIL};
use crate::primitive::{AtomicU128, AtomicU64, Ordering};

const TOP_MASK: u64 = (1 << 25) - 1;
const ACTIVE_BIT: u64 = 1 << 25;
const TAG_SHIFT: u32 = 26;

/// A snapshot of a signal stack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SignalState {
    /// The top waiter, if any.
    pub waiter: Option<u32>,
    /// Signalled and not yet consumed.
    pub active: bool,
    /// The accumulated badge bits.
    pub bits: u64,
}

/// What [`SignalStack::wait`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Waited {
    /// The word was active: its bits were consumed.
    Took(u64),
    /// It was not: the node now waits on the stack.
    Pushed,
}

#[inline(always)]
fn parts(w: u128) -> (u64, u64) {
    ((w >> 64) as u64, w as u64)
}

#[inline(always)]
fn top_of(hi: u64) -> u32 {
    ((hi & TOP_MASK) as u32).wrapping_sub(1)
}

/// The word after a successful CAS from high half `hi`: top `node` (`NIL`
/// = none), `active`, `bits`, the tag bumped.
#[inline(always)]
fn make(hi: u64, node: u32, active: bool, bits: u64) -> u128 {
    let tag = (hi >> TAG_SHIFT).wrapping_add(1) << TAG_SHIFT;
    let hi = tag | if active { ACTIVE_BIT } else { 0 } | (u64::from(node.wrapping_add(1)) & TOP_MASK);
    (u128::from(hi) << 64) | u128::from(bits)
}

/// A notification word; see the module documentation.
#[derive(Debug)]
pub struct SignalStack {
    word: AtomicU128,
}

impl Default for SignalStack {
    fn default() -> Self {
        Self::new()
    }
}

impl SignalStack {
    /// Inactive, no bits, no waiter.
    pub fn new() -> Self {
        Self { word: AtomicU128::new(0) }
    }

    /// The current state.
    #[inline]
    pub fn state(&self) -> SignalState {
        let (hi, bits) = parts(self.word.load(Ordering::Acquire));
        let t = top_of(hi);
        SignalState { waiter: (t != NIL).then_some(t), active: hi & ACTIVE_BIT != 0, bits }
    }

    /// Signal `badge`: pop the top waiter (returned: the caller delivers the
    /// badge to it), or, with nobody waiting, OR `badge` into the bits and
    /// make the word active (`None`).
    #[inline]
    pub fn signal<'a, L>(&self, links: L, badge: u64) -> Option<u32>
    where
        L: Fn(u32) -> &'a AtomicU64,
    {
        let mut w = self.word.load(Ordering::Acquire);
        loop {
            let (hi, bits) = parts(w);
            let top = top_of(hi);
            let new = if top != NIL {
                make(hi, link::load(links(top)).next, false, bits)
            } else {
                make(hi, NIL, true, bits | badge)
            };
            match self.word.compare_exchange(w, new, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return (top != NIL).then_some(top),
                Err(now) => w = now,
            }
        }
    }

    /// Pop the top waiter, if any (the word is otherwise unchanged).
    #[inline]
    pub fn pop_waiter<'a, L>(&self, links: L) -> Option<u32>
    where
        L: Fn(u32) -> &'a AtomicU64,
    {
        let mut w = self.word.load(Ordering::Acquire);
        loop {
            let (hi, bits) = parts(w);
            let top = top_of(hi);
            if top == NIL {
                return None;
            }
            let new = make(hi, link::load(links(top)).next, hi & ACTIVE_BIT != 0, bits);
            match self.word.compare_exchange(w, new, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return Some(top),
                Err(now) => w = now,
            }
        }
    }

    /// Wait: consume the bits if the word is active, else push `node` (the
    /// caller's until the push publishes it).
    #[inline]
    pub fn wait<'a, L>(&self, links: L, node: u32) -> Waited
    where
        L: Fn(u32) -> &'a AtomicU64,
    {
        debug_assert!(node <= MAX_NODE);
        let mut w = self.word.load(Ordering::Acquire);
        loop {
            let (hi, bits) = parts(w);
            let top = top_of(hi);
            let active = hi & ACTIVE_BIT != 0;
            let new = if active {
                make(hi, top, false, 0)
            } else {
                relink(links(node), top);
                make(hi, node, false, bits)
            };
            match self.word.compare_exchange(w, new, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) if active => return Waited::Took(bits),
                Ok(_) => return Waited::Pushed,
                Err(now) => w = now,
            }
        }
    }

    /// Consume the bits if the word is active (`Some(bits)`), else `None`.
    #[inline]
    pub fn poll(&self) -> Option<u64> {
        let mut w = self.word.load(Ordering::Acquire);
        loop {
            let (hi, bits) = parts(w);
            if hi & ACTIVE_BIT == 0 {
                return None;
            }
            match self.word.compare_exchange(w, make(hi, top_of(hi), false, 0), Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return Some(bits),
                Err(now) => w = now,
            }
        }
    }

    /// Unlink waiter `node`; `false` if it is not waiting here. **Exclusive.**
    pub fn remove<'a, L>(&self, links: L, node: u32) -> bool
    where
        L: Fn(u32) -> &'a AtomicU64,
    {
        let w = self.word.load(Ordering::Acquire);
        let (hi, bits) = parts(w);
        let active = hi & ACTIVE_BIT != 0;
        let mut prev = NIL;
        let mut cur = top_of(hi);
        let mut steps = 0u64;
        while cur != NIL && steps <= u64::from(MAX_NODE) {
            let next = link::load(links(cur)).next;
            if cur == node {
                let top = if prev == NIL { next } else { top_of(hi) };
                if prev != NIL {
                    relink(links(prev), next);
                }
                self.word.store(make(hi, top, active, bits), Ordering::Release);
                relink(links(node), NIL);
                return true;
            }
            prev = cur;
            cur = next;
            steps += 1;
        }
        false
    }

    /// The waiters from top to bottom (at most `limit`). **Exclusive.**
    pub fn iter<'a, L>(&self, links: L, limit: usize) -> impl Iterator<Item = u32> + 'a
    where
        L: Fn(u32) -> &'a AtomicU64 + 'a,
    {
        let mut cur = top_of(parts(self.word.load(Ordering::Acquire)).0);
        let mut left = limit;
        core::iter::from_fn(move || {
            if cur == NIL || left == 0 {
                return None;
            }
            left -= 1;
            let n = cur;
            cur = link::load(links(n)).next;
            Some(n)
        })
    }

    /// Forget the bits and the active flag, keeping any waiters (a reused
    /// notification starts clean). **Exclusive.**
    pub fn reset(&self) {
        let (hi, _) = parts(self.word.load(Ordering::Acquire));
        self.word.store(make(hi, top_of(hi), false, 0), Ordering::Release);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    fn links(n: usize) -> Vec<AtomicU64> {
        (0..n).map(|_| AtomicU64::new(link::new_link())).collect()
    }

    #[test]
    fn signal_accumulates_and_wait_consumes() {
        let l = links(2);
        let at = |i: u32| &l[i as usize];
        let s = SignalStack::new();
        assert_eq!(s.poll(), None);
        assert_eq!(s.signal(at, 0b01), None);
        assert_eq!(s.signal(at, 0b10), None);
        assert_eq!(s.state(), SignalState { waiter: None, active: true, bits: 0b11 });
        assert_eq!(s.wait(at, 0), Waited::Took(0b11));
        assert_eq!(s.state(), SignalState { waiter: None, active: false, bits: 0 });
        // A zero badge still activates.
        assert_eq!(s.signal(at, 0), None);
        assert_eq!(s.poll(), Some(0));
        assert_eq!(s.poll(), None);
    }

    #[test]
    fn waiters_are_popped_by_signals() {
        let l = links(3);
        let at = |i: u32| &l[i as usize];
        let s = SignalStack::new();
        assert_eq!(s.wait(at, 0), Waited::Pushed);
        assert_eq!(s.wait(at, 1), Waited::Pushed);
        assert_eq!(s.wait(at, 2), Waited::Pushed);
        assert!(s.remove(at, 1));
        assert_eq!(s.iter(at, 9).collect::<Vec<_>>(), [2, 0]);
        assert_eq!(s.signal(at, 5), Some(2));
        assert_eq!(s.pop_waiter(at), Some(0));
        assert_eq!(s.pop_waiter(at), None);
        assert_eq!(s.state(), SignalState { waiter: None, active: false, bits: 0 });
        assert_eq!(s.signal(at, 7), None);
        s.reset();
        assert_eq!(s.state(), SignalState { waiter: None, active: false, bits: 0 });
    }
}
