//! Link words of the intrusive objects ([`super::DualQueue`],
//! [`super::SignalStack`], [`super::Inbox`]).
//!
//! The nodes of these objects are indices chosen by the caller (thread
//! slots, in the kernel), and each node's link is one `AtomicU64` in an
//! array the caller owns and passes in as `links(i) -> &AtomicU64`. A node
//! is in at most one object at a time, so one array serves them all.
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
