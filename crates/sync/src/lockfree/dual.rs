//! The dual queue: one double-width word in which waiters of two kinds wait
//! for each other — the senders and receivers of a synchronous endpoint.
//! Waiters of both sides are served first-in first-out.
//!
//! An arriving party either *takes* a waiter of the other side (the partner
//! is then the caller's: the kernel hands the message over outside the
//! structure) or *waits* as a waiter of its own side, decided and done by
//! one successful compare-and-swap. The nodes are intrusive: a node is an
//! index (a thread's slot, at most [`MAX_WAITER`]), its link a word of the
//! caller's link array (see [`super::link`]).
//!
//! **Word layout** (one `AtomicU64`, changed only by compare-and-swap):
//!
//! ```text
//!  63                  35   34   33  32 31            16 15             0
//! +----------------------+------+-------+----------------+----------------+
//! |       tag (29)       | mark | kind  |    tail + 1    |   first + 1    |
//! +----------------------+------+-------+----------------+----------------+
//! ```
//!
//! * `kind`: 0 = nobody waits, 1 = side A waits, 2 = side B waits.
//! * `first + 1`: the waiter a partner would take — the oldest (the
//!   queue's head); `0` = none.
//! * `tail + 1`: the newest (the queue's tail; may lag, see `fifo.rs`).
//! * `mark`: one bit the owner sets and clears ([`DualQueue::set_mark`]);
//!   every operation keeps it. The kernel's meaning: "a waiter here must be
//!   taken by the exclusive path" (a sender transferring capabilities).
//! * `tag`: bumped (mod 2^29) by every successful CAS, so a CAS against a
//!   word read before a change fails, unless exactly a multiple of 2^29
//!   changes happened in between and the word came back to the same waiters
//!   (the ABA case). One word, not two: `cmpxchg8b`-width operations are
//!   inlined plain instructions, where a double-width word costs a call and
//!   a slower `cmpxchg16b` on the kernel's hottest path; 16-bit indices
//!   leave the tag 29 bits. A taker would have to stall inside one
//!   operation for 2^29 changes of this one word (minutes of back-to-back
//!   IPC on one endpoint) for the tag to wrap under it.
//!
//! Both sides' nodes are linked oldest to newest.
//!
//! **Both sides: the Michael–Scott queue without its dummy node**
//! (`fifo.rs`, M. M. Michael and M. L. Scott, PODC 1996): whichever side
//! waits is one FIFO queue, its head and tail in this word and `kind`
//! saying whose it is, so senders and receivers are both served in arrival
//! order (as seL4 serves them). The word's tag makes every CAS against a
//! word of the other side, or of an older queue, fail.
//!
//! So an uncontended wait on an empty word is one CAS, a take of a
//! non-last waiter one CAS; a wait behind others and a take of the last
//! waiter (the close, then the word) are two. (Before both sides were
//! FIFO, side B was a Treiber stack whose last take was one CAS.)
//!
//! **Orderings.** Successful CASes are `AcqRel` (a wait publishes what its
//! caller wrote before it; a take acquires it), loads `Acquire`, so a link
//! read after a word (or re-checked against it) is the one that word's
//! writer saw; links are written with `Release` ([`super::link`]).
//!
//! **Exclusive operations.** [`DualQueue::remove`] and [`DualQueue::iter`]
//! walk the links with plain loads and stores and are correct only while no
//! other operation runs (the kernel calls them with every lock-free path
//! excluded); they also bring a lagging tail up to date. Breaking that
//! contract can scramble the queue but is never undefined behaviour.

use super::fifo::{self, Cell, Ends, Step};
use super::link::{self, relink, Links, Rmw, NIL};
use crate::primitive::{AtomicU64, Ordering};

/// Largest node index a dual queue can hold.
pub const MAX_WAITER: u32 = (1 << 16) - 2;

const FIRST_MASK: u64 = (1 << 16) - 1;
const TAIL_SHIFT: u32 = 16;
const KIND_SHIFT: u32 = 32;
const KIND_MASK: u64 = 3 << KIND_SHIFT;
const MARK: u64 = 1 << 34;
const TAG_SHIFT: u32 = 35;

/// The two kinds of waiters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    /// The kernel's senders.
    A,
    /// The kernel's receivers.
    B,
}

/// A snapshot of a dual queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Snapshot {
    /// The side that waits, if any.
    pub waiting: Option<Side>,
    /// The waiter a partner would take next.
    pub first: Option<u32>,
    /// The owner's mark bit.
    pub marked: bool,
}

/// A decoded word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Word(u64);

/// `index + 1` in a 16-bit field (`NIL` → 0).
#[inline(always)]
fn field(index: u32) -> u64 {
    u64::from(index.wrapping_add(1)) & FIRST_MASK
}

impl Word {
    #[inline(always)]
    fn waiting(self) -> Option<Side> {
        match (self.0 & KIND_MASK) >> KIND_SHIFT {
            1 => Some(Side::A),
            2 => Some(Side::B),
            _ => None,
        }
    }
    #[inline(always)]
    fn first(self) -> u32 {
        match (self.0 & FIRST_MASK) as u32 {
            0 => NIL,
            f => f - 1,
        }
    }
    #[inline(always)]
    fn tail(self) -> u32 {
        match ((self.0 >> TAIL_SHIFT) & FIRST_MASK) as u32 {
            0 => NIL,
            f => f - 1,
        }
    }
    #[inline(always)]
    fn marked(self) -> bool {
        self.0 & MARK != 0
    }
    /// The word after a successful CAS from this one: `waiting` with
    /// `first` and `tail` (`NIL` where meaningless), the mark kept, the tag
    /// bumped.
    #[inline(always)]
    fn then(self, waiting: Option<Side>, first: u32, tail: u32) -> Word {
        let kind = match waiting {
            None => 0,
            Some(Side::A) => 1,
            Some(Side::B) => 2,
        };
        let first = if waiting.is_none() { NIL } else { first };
        let tail = if waiting.is_none() { NIL } else { tail };
        let tag = (self.0 >> TAG_SHIFT).wrapping_add(1) << TAG_SHIFT;
        Word(tag | (self.0 & MARK) | (kind << KIND_SHIFT) | (field(tail) << TAIL_SHIFT) | field(first))
    }
    #[inline(always)]
    fn empty(self) -> Word {
        self.then(None, NIL, NIL)
    }
}

impl Ends for Word {
    #[inline(always)]
    fn head(self) -> u32 {
        self.first()
    }
    #[inline(always)]
    fn tail(self) -> u32 {
        Word::tail(self)
    }
    #[inline(always)]
    fn ends(self, head: u32, tail: u32) -> Word {
        if head == NIL {
            self.empty()
        } else {
            self.then(self.waiting(), head, tail)
        }
    }
}

/// A dual queue word; see the module documentation.
#[derive(Debug)]
pub struct DualQueue {
    word: AtomicU64,
}

impl Default for DualQueue {
    fn default() -> Self {
        Self::new()
    }
}

impl Cell for DualQueue {
    type W = Word;
    const RMW: Rmw = Rmw::Cmpxchg;
    #[inline(always)]
    fn load(&self) -> Word {
        Word(self.word.load(Ordering::Acquire))
    }
    #[inline(always)]
    fn cas(&self, seen: Word, new: Word) -> Result<(), Word> {
        self.word.compare_exchange(seen.0, new.0, Ordering::AcqRel, Ordering::Acquire).map(|_| ()).map_err(Word)
    }
}

impl DualQueue {
    /// Nobody waiting, unmarked.
    pub fn new() -> Self {
        Self { word: AtomicU64::new(0) }
    }

    /// Who waits, and who would be taken next.
    #[inline(always)]
    pub fn snapshot(&self) -> Snapshot {
        let w = self.load();
        let first = w.first();
        Snapshot { waiting: w.waiting(), first: (first != NIL).then_some(first), marked: w.marked() }
    }

    /// Take the oldest waiter of `side`, or `None` if nobody of that side waits. The taken node is
    /// the caller's.
    #[inline(always)]
    pub fn take<'a, L>(&self, links: L, side: Side) -> Option<u32>
    where
        L: Links<'a>,
    {
        let mut w = self.load();
        loop {
            if w.waiting() != Some(side) {
                return None;
            }
            match fifo::take_step(self, &links, w) {
                Step::Done(p) => return p,
                Step::Retry(now) => w = now,
            }
        }
    }

    /// Take the next waiter of the *other* side if one waits (returned, now
    /// the caller's); otherwise make `node` wait as a waiter of `side`
    /// (`None`). The caller owns `node` until it waits, and must not touch
    /// what waiting publishes afterwards.
    #[inline(always)]
    pub fn offer<'a, L>(&self, links: L, side: Side, node: u32) -> Option<u32>
    where
        L: Links<'a>,
    {
        debug_assert!(node <= MAX_WAITER);
        let mut w = self.load();
        loop {
            let step = match w.waiting() {
                Some(s) if s != side => fifo::take_step(self, &links, w),
                None => {
                    relink(links.link(node), NIL);
                    match fifo::cas(self, &links, w, w.then(Some(side), node, node)) {
                        Ok(()) => Step::Done(None),
                        Err(now) => Step::Retry(now),
                    }
                }
                Some(_) => fifo::enqueue_step(self, &links, w, node),
            };
            match step {
                Step::Done(p) => return p,
                Step::Retry(now) => w = now,
            }
        }
    }

    /// Set or clear the mark bit (a CAS loop: safe beside other operations;
    /// `links` only takes the account of its CASes).
    pub fn set_mark<'a, L: Links<'a>>(&self, links: L, on: bool) {
        let mut w = self.load();
        loop {
            let v = if on { w.0 | MARK } else { w.0 & !MARK };
            if v == w.0 {
                return;
            }
            let tag = (w.0 >> TAG_SHIFT).wrapping_add(1) << TAG_SHIFT;
            let new = Word(tag | (v & !(u64::MAX << TAG_SHIFT)));
            match fifo::cas(self, &links, w, new) {
                Ok(()) => return,
                Err(now) => w = now,
            }
        }
    }

    /// The waiters in the order they would be taken (at most `limit`).
    /// **Exclusive**: no other operation may run meanwhile.
    pub fn iter<'a, L>(&self, links: L, limit: usize) -> impl Iterator<Item = u32> + 'a
    where
        L: Links<'a> + 'a,
    {
        let mut cur = self.load().first();
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

    /// Unlink `node` wherever it waits; `false` if it does not wait here.
    /// **Exclusive**: no other operation may run meanwhile.
    pub fn remove<'a, L>(&self, links: L, node: u32) -> bool
    where
        L: Links<'a>,
    {
        let w = self.load();
        let Some(side) = w.waiting() else { return false };
        let (mut prev, mut cur, mut steps) = (NIL, w.first(), 0u64);
        while cur != NIL && cur != node {
            if steps > u64::from(MAX_WAITER) {
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
        let first = if prev == NIL {
            next
        } else {
            relink(links.link(prev), next);
            w.first()
        };
        relink(links.link(node), NIL);
        // The true tail: the last node reachable (the word's may lag).
        let mut tail = NIL;
        let mut cur = first;
        while cur != NIL && steps <= u64::from(MAX_WAITER) {
            tail = cur;
            cur = link::load(links.link(cur)).next;
            steps += 1;
        }
        let new = if first == NIL { w.empty() } else { w.then(Some(side), first, tail) };
        self.word.store(new.0, Ordering::Release);
        true
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
    fn both_sides_are_fifo() {
        let l = links(6);
        let at = |i: u32| &l[i as usize];
        let q = DualQueue::new();
        assert_eq!(q.snapshot(), Snapshot { waiting: None, first: None, marked: false });
        for n in 0..3 {
            assert_eq!(q.offer(at, Side::A, n), None);
        }
        assert_eq!(q.snapshot(), Snapshot { waiting: Some(Side::A), first: Some(0), marked: false });
        assert_eq!(q.take(at, Side::B), None, "side A waits");
        assert_eq!(q.offer(at, Side::B, 5), Some(0));
        assert_eq!(q.take(at, Side::A), Some(1));
        assert_eq!(q.take(at, Side::A), Some(2));
        assert_eq!(q.take(at, Side::A), None);
        for n in 3..6 {
            assert_eq!(q.offer(at, Side::B, n), None);
        }
        assert_eq!(q.snapshot(), Snapshot { waiting: Some(Side::B), first: Some(3), marked: false });
        assert_eq!(q.offer(at, Side::A, 0), Some(3));
        assert_eq!(q.iter(at, 9).collect::<Vec<_>>(), [4, 5]);
        assert_eq!(q.take(at, Side::B), Some(4));
        assert_eq!(q.offer(at, Side::B, 3), None, "behind 5");
        assert_eq!(q.take(at, Side::B), Some(5));
        assert_eq!(q.take(at, Side::B), Some(3));
        assert_eq!(q.snapshot().waiting, None);
        // A node taken last from side A can wait again at once.
        assert_eq!(q.offer(at, Side::A, 1), None);
        assert_eq!(q.take(at, Side::A), Some(1));
        assert_eq!(q.offer(at, Side::A, 1), None);
        assert_eq!(q.offer(at, Side::A, 2), None);
        assert_eq!(q.iter(at, 9).collect::<Vec<_>>(), [1, 2]);
    }

    #[test]
    fn remove_and_mark() {
        let l = links(5);
        let at = |i: u32| &l[i as usize];
        let q = DualQueue::new();
        for n in 0..4 {
            assert_eq!(q.offer(at, Side::A, n), None);
        }
        q.set_mark(at, true);
        assert!(q.remove(at, 3), "the tail");
        assert!(!q.remove(at, 3));
        assert!(q.remove(at, 1), "the middle");
        assert!(q.remove(at, 0), "the head");
        assert_eq!(q.iter(at, 9).collect::<Vec<_>>(), [2]);
        assert!(q.snapshot().marked, "operations keep the mark");
        assert_eq!(q.offer(at, Side::A, 4), None);
        assert_eq!(q.iter(at, 9).collect::<Vec<_>>(), [2, 4]);
        assert!(q.remove(at, 2));
        assert!(q.remove(at, 4));
        assert_eq!(q.snapshot(), Snapshot { waiting: None, first: None, marked: true });
        q.set_mark(at, false);
        for n in 0..3 {
            assert_eq!(q.offer(at, Side::B, n), None);
        }
        assert!(q.remove(at, 1));
        assert_eq!(q.iter(at, 9).collect::<Vec<_>>(), [0, 2]);
        assert_eq!(q.offer(at, Side::B, 3), None);
        assert_eq!(q.offer(at, Side::A, 4), Some(0));
        assert_eq!(q.take(at, Side::B), Some(2));
        assert_eq!(q.take(at, Side::B), Some(3));
        assert_eq!(q.take(at, Side::B), None);
    }

    #[test]
    fn a_lagging_tail_is_helped_along() {
        let l = links(3);
        let at = |i: u32| &l[i as usize];
        let q = DualQueue::new();
        assert_eq!(q.offer(at, Side::A, 0), None);
        // Link 1 behind 0 without swinging the tail (an enqueuer that
        // stopped after its linearisation point).
        let l0 = link::load(at(0));
        relink(at(1), NIL);
        at(0).store(l0.to(1), Ordering::Relaxed);
        assert_eq!(q.offer(at, Side::A, 2), None);
        assert_eq!(q.iter(at, 9).collect::<Vec<_>>(), [0, 1, 2]);
        assert_eq!(q.take(at, Side::A), Some(0));
        assert_eq!(q.take(at, Side::A), Some(1));
        assert_eq!(q.take(at, Side::A), Some(2));
        assert_eq!(q.take(at, Side::A), None);
    }

    #[test]
    fn reports_the_documented_cas_counts() {
        use crate::lockfree::link::counted::Counted;
        use Rmw::Cmpxchg as C;
        let l = Counted::new(3);
        let q = DualQueue::new();
        assert_eq!(q.offer(&l, Side::A, 0), None);
        assert_eq!(l.take(), [C], "wait on an empty word: one CAS");
        assert_eq!(q.offer(&l, Side::A, 1), None);
        assert_eq!(l.take(), [C, C], "wait behind another: link, then swing the tail");
        assert_eq!(q.offer(&l, Side::B, 2), Some(0));
        assert_eq!(l.take(), [C], "take a waiter that is not the last: one CAS");
        assert_eq!(q.take(&l, Side::A), Some(1));
        assert_eq!(l.take(), [C, C], "take the last waiter: close its link, then empty the word");
        assert_eq!(q.take(&l, Side::A), None);
        q.set_mark(&l, false);
        assert_eq!(l.take(), [], "nothing to take, nothing to change: no CAS");
        q.set_mark(&l, true);
        assert_eq!(l.take(), [C]);
    }
}
