//! The signal word: a binary-semaphore word with accumulated badge bits
//! and a FIFO of waiters, in one double-width word (an seL4 notification).
//! (The type keeps its historical name, [`SignalStack`]; its waiters were
//! once a stack.)
//!
//! **Word layout** (one [`AtomicU128`], changed only by `cmpxchg16b`):
//!
//! ```text
//!  127                         90    89    88              64 63                     0
//! +------------------------------+--------+------------------+------------------------+
//! |           tag (38)           | active |  head + 1 (25)   |   bits, or tail + 1    |
//! +------------------------------+--------+------------------+------------------------+
//! ```
//!
//! * `head + 1`: the oldest waiter's index plus one, `0` = no waiter
//!   (indices at most [`super::MAX_NODE`]).
//! * low half: with no waiter, `bits`, the OR of the badges signalled since
//!   the last consumption; with waiters, the newest waiter's index plus one
//!   (the queue's tail; may lag, see `fifo.rs`). Waiters are linked oldest
//!   to newest through the caller's link array (see [`super::link`]) and
//!   woken first-in first-out, as seL4 wakes them.
//! * `active`: signalled and not yet consumed. Invariant: never `active`
//!   with waiters (a signal takes a waiter instead of accumulating, a wait
//!   consumes instead of queueing), and `bits == 0` unless `active` — which
//!   is what frees the low half for the tail while anyone waits.
//! * `tag`: bumped (mod 2^38) by every successful CAS, so that a CAS against
//!   a word read before a change fails (a waker that read the link of a
//!   head that left and came back, an enqueuer that read a tail's link).
//!
//! **Algorithm.** Synthesis's recipe (Massalin & Pu 1991, §2.3): squeeze
//! the shared state into two words and change it with one double-word
//! compare-and-swap. `signal` either takes the oldest waiter (the caller
//! hands the badge to it) or ORs its badge into `bits` and sets `active`;
//! `wait` either consumes `bits` (clearing `active`) or queues the waiter.
//! Deciding and acting on the same word is what rules out the lost wake-up
//! of a check-then-block: a wait on an inactive word without waiters is one
//! CAS; a queue that is not empty is the Michael–Scott queue without a
//! dummy node of `fifo.rs` (M. M. Michael and M. L. Scott, PODC 1996), whose
//! every word CAS also checks `active` is clear. So an uncontended signal
//! or wait is one CAS, except that taking the last waiter (close its link,
//! then empty the word) and waiting behind another (link, then swing the
//! tail) are two.
//!
//! **Orderings.** Successful CASes are `AcqRel` (a queueing publishes the
//! waiter's state, a take acquires it; a consume acquires what the
//! signallers wrote before signalling); loads and failed CASes `Acquire`;
//! links are read before re-checking the word that names their node.
//!
//! Under loom the 128-bit word is modelled by one 64-bit loom atomic that
//! keeps the low 32 bits of each half (see [`crate::primitive`]): models
//! must keep badges below 2^32 and make fewer than 64 CASes per word.
//!
//! [`SignalStack::remove`], [`SignalStack::iter`] and
//! [`SignalStack::reset`] are **exclusive** (no concurrent operation on the
//! word), like [`super::DualQueue::remove`].

use super::fifo::{self, Cell, Ends, Step};
use super::link::{self, relink, Links, Rmw, MAX_NODE, NIL};
use crate::primitive::{AtomicU128, Ordering};

const HEAD_MASK: u64 = (1 << 25) - 1;
const ACTIVE_BIT: u64 = 1 << 25;
const TAG_SHIFT: u32 = 26;

/// A snapshot of a signal word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SignalState {
    /// The oldest waiter (the next a signal wakes), if any.
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
    /// It was not: the node now waits, behind any older waiters.
    Pushed,
}

/// `index + 1` in a 25-bit field (`NIL` → 0).
#[inline(always)]
fn field(index: u32) -> u64 {
    u64::from(index.wrapping_add(1)) & HEAD_MASK
}

/// A decoded word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Sig(u128);

impl Sig {
    #[inline(always)]
    fn hi(self) -> u64 {
        (self.0 >> 64) as u64
    }
    #[inline(always)]
    fn lo(self) -> u64 {
        self.0 as u64
    }
    #[inline(always)]
    fn active(self) -> bool {
        self.hi() & ACTIVE_BIT != 0
    }
    /// The badge bits (only meaningful without waiters).
    #[inline(always)]
    fn bits(self) -> u64 {
        if self.head() == NIL {
            self.lo()
        } else {
            0
        }
    }
    /// The word after a successful CAS from this one: `active` with `bits`
    /// and no waiters, the tag bumped.
    #[inline(always)]
    fn signalled(self, active: bool, bits: u64) -> Sig {
        self.make(NIL, active, bits)
    }
    #[inline(always)]
    fn make(self, head: u32, active: bool, lo: u64) -> Sig {
        let tag = (self.hi() >> TAG_SHIFT).wrapping_add(1) << TAG_SHIFT;
        let hi = tag | if active { ACTIVE_BIT } else { 0 } | field(head);
        Sig((u128::from(hi) << 64) | u128::from(lo))
    }
}

impl Ends for Sig {
    #[inline(always)]
    fn head(self) -> u32 {
        ((self.hi() & HEAD_MASK) as u32).wrapping_sub(1)
    }
    #[inline(always)]
    fn tail(self) -> u32 {
        if self.head() == NIL {
            NIL
        } else {
            ((self.lo() & HEAD_MASK) as u32).wrapping_sub(1)
        }
    }
    #[inline(always)]
    fn ends(self, head: u32, tail: u32) -> Sig {
        if head == NIL {
            self.make(NIL, false, 0)
        } else {
            self.make(head, false, field(tail))
        }
    }
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

impl Cell for SignalStack {
    type W = Sig;
    const RMW: Rmw = Rmw::Cmpxchg16b;
    #[inline(always)]
    fn load(&self) -> Sig {
        Sig(self.word.load(Ordering::Acquire))
    }
    #[inline(always)]
    fn cas(&self, seen: Sig, new: Sig) -> Result<(), Sig> {
        self.word.compare_exchange(seen.0, new.0, Ordering::AcqRel, Ordering::Acquire).map(|_| ()).map_err(Sig)
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
        let w = self.load();
        let h = w.head();
        SignalState { waiter: (h != NIL).then_some(h), active: w.active(), bits: w.bits() }
    }

    /// Signal `badge`: take the oldest waiter (returned: the caller delivers
    /// the badge to it), or, with nobody waiting, OR `badge` into the bits
    /// and make the word active (`None`).
    #[inline]
    pub fn signal<'a, L>(&self, links: L, badge: u64) -> Option<u32>
    where
        L: Links<'a>,
    {
        let mut w = self.load();
        loop {
            let step = if w.head() != NIL {
                fifo::take_step(self, &links, w)
            } else {
                match fifo::cas(self, &links, w, w.signalled(true, w.bits() | badge)) {
                    Ok(()) => Step::Done(None),
                    Err(now) => Step::Retry(now),
                }
            };
            match step {
                Step::Done(p) => return p,
                Step::Retry(now) => w = now,
            }
        }
    }

    /// Take the oldest waiter, if any (the word is otherwise unchanged).
    #[inline]
    pub fn pop_waiter<'a, L>(&self, links: L) -> Option<u32>
    where
        L: Links<'a>,
    {
        let mut w = self.load();
        loop {
            if w.head() == NIL {
                return None;
            }
            match fifo::take_step(self, &links, w) {
                Step::Done(p) => return p,
                Step::Retry(now) => w = now,
            }
        }
    }

    /// Wait: consume the bits if the word is active, else queue `node` (the
    /// caller's until queueing publishes it) behind any older waiters.
    #[inline]
    pub fn wait<'a, L>(&self, links: L, node: u32) -> Waited
    where
        L: Links<'a>,
    {
        debug_assert!(node <= MAX_NODE);
        let mut w = self.load();
        loop {
            let step = if w.active() {
                match fifo::cas(self, &links, w, w.signalled(false, 0)) {
                    Ok(()) => return Waited::Took(w.bits()),
                    Err(now) => Step::Retry(now),
                }
            } else if w.head() == NIL {
                relink(links.link(node), NIL);
                match fifo::cas(self, &links, w, w.ends(node, node)) {
                    Ok(()) => Step::Done(None),
                    Err(now) => Step::Retry(now),
                }
            } else {
                fifo::enqueue_step(self, &links, w, node)
            };
            match step {
                Step::Done(_) => return Waited::Pushed,
                Step::Retry(now) => w = now,
            }
        }
    }

    /// Consume the bits if the word is active (`Some(bits)`), else `None`
    /// (`links` only takes the account of its CASes).
    #[inline]
    pub fn poll<'a, L: Links<'a>>(&self, links: L) -> Option<u64> {
        let mut w = self.load();
        loop {
            if !w.active() {
                return None;
            }
            match fifo::cas(self, &links, w, w.signalled(false, 0)) {
                Ok(()) => return Some(w.bits()),
                Err(now) => w = now,
            }
        }
    }

    /// Unlink waiter `node`; `false` if it is not waiting here. **Exclusive.**
    pub fn remove<'a, L>(&self, links: L, node: u32) -> bool
    where
        L: Links<'a>,
    {
        let w = self.load();
        let (mut prev, mut cur, mut steps) = (NIL, w.head(), 0u64);
        while cur != NIL && cur != node {
            if steps > u64::from(MAX_NODE) {
                return false;
            }
            prev = cur;
            cur = link::load(links.link(cur)).next;
            steps += 1;
        }
        if cur == NIL {
            return false;
        }
        let next = link::load(links.link(node)).next;
        let head = if prev == NIL {
            next
        } else {
            relink(links.link(prev), next);
            w.head()
        };
        relink(links.link(node), NIL);
        // The true tail: the last node reachable (the word's may lag).
        let (mut tail, mut cur) = (NIL, head);
        while cur != NIL && steps <= u64::from(MAX_NODE) {
            tail = cur;
            cur = link::load(links.link(cur)).next;
            steps += 1;
        }
        self.word.store(w.ends(head, tail).0, Ordering::Release);
        true
    }

    /// The waiters from oldest to newest (at most `limit`). **Exclusive.**
    pub fn iter<'a, L>(&self, links: L, limit: usize) -> impl Iterator<Item = u32> + 'a
    where
        L: Links<'a> + 'a,
    {
        let mut cur = self.load().head();
        let mut left = limit;
        core::iter::from_fn(move || {
            if cur == NIL || left == 0 {
                return None;
            }
            left -= 1;
            let n = cur;
            cur = link::load(links.link(n)).next;
            Some(n)
        })
    }

    /// Forget the bits and the active flag, keeping any waiters (a reused
    /// notification starts clean). **Exclusive.**
    pub fn reset(&self) {
        let w = self.load();
        if w.head() == NIL {
            self.word.store(w.signalled(false, 0).0, Ordering::Release);
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::primitive::AtomicU64;
    use alloc::vec::Vec;

    fn links(n: usize) -> Vec<AtomicU64> {
        (0..n).map(|_| AtomicU64::new(link::new_link())).collect()
    }

    #[test]
    fn signal_accumulates_and_wait_consumes() {
        let l = links(2);
        let at = |i: u32| &l[i as usize];
        let s = SignalStack::new();
        assert_eq!(s.poll(at), None);
        assert_eq!(s.signal(at, 0b01), None);
        assert_eq!(s.signal(at, 0b10), None);
        assert_eq!(s.state(), SignalState { waiter: None, active: true, bits: 0b11 });
        assert_eq!(s.wait(at, 0), Waited::Took(0b11));
        assert_eq!(s.state(), SignalState { waiter: None, active: false, bits: 0 });
        // A zero badge still activates.
        assert_eq!(s.signal(at, 0), None);
        assert_eq!(s.poll(at), Some(0));
        assert_eq!(s.poll(at), None);
    }

    #[test]
    fn waiters_are_woken_in_arrival_order() {
        let l = links(3);
        let at = |i: u32| &l[i as usize];
        let s = SignalStack::new();
        assert_eq!(s.wait(at, 0), Waited::Pushed);
        assert_eq!(s.wait(at, 1), Waited::Pushed);
        assert_eq!(s.wait(at, 2), Waited::Pushed);
        assert_eq!(s.state(), SignalState { waiter: Some(0), active: false, bits: 0 });
        assert!(s.remove(at, 1));
        assert_eq!(s.iter(at, 9).collect::<Vec<_>>(), [0, 2]);
        assert_eq!(s.signal(at, 5), Some(0), "the oldest first");
        assert_eq!(s.wait(at, 1), Waited::Pushed);
        assert_eq!(s.iter(at, 9).collect::<Vec<_>>(), [2, 1]);
        assert_eq!(s.pop_waiter(at), Some(2));
        assert_eq!(s.signal(at, 6), Some(1));
        assert_eq!(s.pop_waiter(at), None);
        assert_eq!(s.state(), SignalState { waiter: None, active: false, bits: 0 });
        assert_eq!(s.signal(at, 7), None);
        s.reset();
        assert_eq!(s.state(), SignalState { waiter: None, active: false, bits: 0 });
    }

    #[test]
    fn reports_the_documented_cas_counts() {
        use crate::lockfree::link::counted::Counted;
        use Rmw::{Cmpxchg as C, Cmpxchg16b as W};
        let l = Counted::new(2);
        let s = SignalStack::new();
        assert_eq!(s.poll(&l), None);
        assert_eq!(l.take(), [], "an inactive word: no CAS");
        assert_eq!(s.signal(&l, 1), None);
        assert_eq!(s.poll(&l), Some(1));
        assert_eq!(l.take(), [W, W], "signal, then consume: one double-width CAS each");
        assert_eq!(s.wait(&l, 0), Waited::Pushed);
        assert_eq!(s.wait(&l, 1), Waited::Pushed);
        assert_eq!(l.take(), [W, C, W], "wait on an empty word, then behind it: link, then swing");
        assert_eq!(s.signal(&l, 2), Some(0));
        assert_eq!(s.pop_waiter(&l), Some(1));
        assert_eq!(l.take(), [W, C, W], "take a waiter, then the last: close its link, empty the word");
    }
}
