//! Link words of the intrusive objects ([`super::DualQueue`],
//! [`super::SignalStack`], [`super::Inbox`]).
//!
//! The nodes of these objects are indices chosen by the caller (thread
//! slots, in the kernel), and each node's link is one `AtomicU64` in an
//! array the caller owns and passes in as a [`Links`] view (any closure
//! `Fn(u32) -> &AtomicU64` is one). A node is in at most one object at a
//! time, so one array serves them all.
//!
//! The view is also where the objects account for their atomic
//! read-modify-write instructions ([`Links::rmw`], one call per instruction
//! executed, failed CAS attempts included): a closure ignores the account,
//! the kernel's counting view adds it up (the cost accounting of `granule
//! ipc`). Plain loads and stores are not reported.
//!
//! **Layout:**
//!
//! ```text
//!  63                                  26     25     24                 0
//! +--------------------------------------+--------+--------------------+
//! |               tag (38)               | closed |     next + 1       |
//! +--------------------------------------+--------+--------------------+
//! ```
//!
//! * `next + 1`: the successor's index plus one, `0` = none.
//! * `closed`: set on the last node of a FIFO by the thread removing it,
//!   so that no enqueuer can link behind it any more (see `dual.rs`).
//! * `tag`: bumped (mod 2^38) by every write. A FIFO enqueuer
//!   compare-and-swaps the tail's link from "no successor" to its node; the
//!   tag makes that CAS fail if the tail left the queue and came back (to
//!   any object) in between, because every object writes a link only
//!   through [`relink`] or a CAS that bumps it.

use crate::primitive::{AtomicU64, Ordering};

/// The index meaning "no node".
pub const NIL: u32 = u32::MAX;

/// Largest node index the intrusive objects can hold.
pub const MAX_NODE: u32 = (1 << 25) - 2;

const NEXT_MASK: u64 = (1 << 25) - 1;
const CLOSED: u64 = 1 << 25;
const TAG_SHIFT: u32 = 26;

/// An atomic read-modify-write instruction of x86-64: what the objects
/// report to [`Links::rmw`], and what their callers count beside them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rmw {
    /// `xchg` (an inbox's take-all).
    Xchg,
    /// `lock xadd` (no object here uses it; a ticket lock's acquire does).
    Xadd,
    /// `lock cmpxchg` on a 64-bit word (a link, a dual queue or inbox word).
    Cmpxchg,
    /// `lock cmpxchg16b` on a 128-bit word (a signal word).
    Cmpxchg16b,
}

/// The caller's link array as the intrusive objects see it, and the
/// account of their read-modify-writes (see the module documentation).
pub trait Links<'a> {
    /// The link word of node `i`.
    fn link(&self, i: u32) -> &'a AtomicU64;
    /// One `op` was executed (successful or not). Nothing by default.
    #[inline(always)]
    fn rmw(&self, op: Rmw) {
        let _ = op;
    }
}

impl<'a, F: Fn(u32) -> &'a AtomicU64> Links<'a> for F {
    #[inline(always)]
    fn link(&self, i: u32) -> &'a AtomicU64 {
        self(i)
    }
}

/// A decoded link word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Link {
    pub next: u32,
    pub closed: bool,
    raw: u64,
}

impl Link {
    #[inline(always)]
    pub(crate) fn decode(raw: u64) -> Self {
        Link { next: ((raw & NEXT_MASK) as u32).wrapping_sub(1), closed: raw & CLOSED != 0, raw }
    }

    /// The raw word (to compare-and-swap against).
    #[inline(always)]
    pub(crate) fn raw(self) -> u64 {
        self.raw
    }

    /// The word after this one with successor `next`, open, tag bumped.
    #[inline(always)]
    pub(crate) fn to(self, next: u32) -> u64 {
        let tag = (self.raw >> TAG_SHIFT).wrapping_add(1) << TAG_SHIFT;
        tag | (u64::from(next.wrapping_add(1)) & NEXT_MASK)
    }

    /// The word after this one, closed (no successor), tag bumped.
    #[inline(always)]
    pub(crate) fn closed(self) -> u64 {
        self.to(NIL) | CLOSED
    }
}

/// Load a link (`Acquire`: a link is read after the word that made its
/// node reachable, or before re-checking that word).
#[inline(always)]
pub(crate) fn load(link: &AtomicU64) -> Link {
    Link::decode(link.load(Ordering::Acquire))
}

/// Point the link of a node the caller owns (not reachable by anyone) at
/// `next`, bumping the tag. A store suffices: no CAS on this link can
/// succeed while nobody can reach the node (any CAS expects a value with an
/// older tag). It is a `Release` store so that a thread whose (`Acquire`)
/// load reads it also sees everything the owner did before — in
/// particular the change of the word from which the owner took the node,
/// so that a FIFO enqueuer re-checking that word notices the node left
/// (`dual.rs`). On x86-64 this is a plain `mov`.
#[inline(always)]
pub(crate) fn relink(link: &AtomicU64, next: u32) {
    let old = Link::decode(link.load(Ordering::Relaxed));
    link.store(old.to(next), Ordering::Release);
}

/// A fresh link word: no successor, tag 0 (for the caller's link array).
pub const fn new_link() -> u64 {
    0
}

/// A link array that counts the read-modify-writes reported to it (for the
/// objects' tests of their documented costs).
#[cfg(all(test, not(loom)))]
pub(crate) mod counted {
    use super::{Links, Rmw};
    use crate::primitive::AtomicU64;
    use alloc::vec::Vec;
    use core::cell::RefCell;

    /// `n` fresh links and the instructions reported so far.
    pub(crate) struct Counted {
        links: Vec<AtomicU64>,
        seen: RefCell<Vec<Rmw>>,
    }

    impl Counted {
        pub(crate) fn new(n: usize) -> Self {
            Self { links: (0..n).map(|_| AtomicU64::new(super::new_link())).collect(), seen: RefCell::default() }
        }

        /// The instructions reported since the last call.
        pub(crate) fn take(&self) -> Vec<Rmw> {
            self.seen.take()
        }
    }

    impl<'a> Links<'a> for &'a Counted {
        fn link(&self, i: u32) -> &'a AtomicU64 {
            &self.links[i as usize]
        }
        fn rmw(&self, op: Rmw) {
            self.seen.borrow_mut().push(op);
        }
    }
}
