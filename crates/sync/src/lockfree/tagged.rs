//! The tagged head: a node index and a version tag in one 128-bit word, and
//! the LIFO algorithm over it (Treiber's stack).
//!
//! **Word layout** (one [`AtomicU128`], changed only by `cmpxchg16b`):
//!
//! ```text
//!  127                        64 63              32 31               0
//! +----------------------------+------------------+------------------+
//! |            tag             |        0         |      index       |
//! +----------------------------+------------------+------------------+
//! ```
//!
//! `index` names a node of the owning object's type-stable node array
//! (`NIL` = `u32::MAX` = no node); `tag` counts the successful CASes on the
//! word and is bumped by every one of them, so an index that left and came
//! back (the ABA case) never compares equal to what an old reader saw.
//! 2^64 changes do not happen while the object lives.
//!
//! **Link word layout** (one `AtomicU64` per node, in the owner's array):
//! bits 0..32 the successor's index (`NIL` = none), bit 32 the deletion
//! mark ([`MARK`], used only by the reference-counted list), bits 33..64 zero.
//!
//! **Algorithm.** R. K. Treiber, *Systems Programming: Coping with
//! Parallelism*, IBM RJ 5118, 1986, with the version tag of the IBM
//! System/370 `CDS` idiom. Push: read the head, link the node to it, CAS
//! the head to the node. Pop: read the head, read its successor, CAS the
//! head to the successor. Synthesis (Massalin & Pu 1991, Figure 2) does the
//! same with the 68030's `CAS2`, which compares the head *and* the first
//! node's link; x86-64 has no two-address CAS, so we compare the head and a
//! tag instead. A popper may read the link of a node that another core has
//! already popped and reused: the node array is type-stable (never freed
//! while the object lives) and the link is an atomic, so the read is
//! harmless, and the tag makes the following CAS fail.
//!
//! Orderings: a successful CAS is `AcqRel` (it publishes the node's link and
//! value, and acquires those of the node it unlinks); loads of the head are
//! `Acquire`; links are read `Relaxed` after an `Acquire` of the head that
//! made them visible.

use super::interference::Interference;
use crate::primitive::{AtomicU128, AtomicU64, Ordering};

/// The index meaning "no node".
pub(crate) const NIL: u32 = u32::MAX;

/// Deletion mark in a link word (bit 32).
pub(crate) const MARK: u64 = 1 << 32;

/// The successor index stored in a link word (mark ignored).
#[inline(always)]
pub(crate) fn link_index(link: u64) -> u32 {
    link as u32
}

/// A snapshot of a tagged head: `(index, tag)`.
pub(crate) type Seen = (u32, u64);

#[inline(always)]
fn pack(index: u32, tag: u64) -> u128 {
    (u128::from(tag) << 64) | u128::from(index)
}

#[inline(always)]
fn unpack(word: u128) -> Seen {
    (word as u32, (word >> 64) as u64)
}

/// A 128-bit `(index, tag)` word; see the module documentation.
#[derive(Debug)]
pub(crate) struct TaggedHead {
    word: AtomicU128,
}

impl TaggedHead {
    /// A head naming `index` with tag 0.
    pub(crate) fn new(index: u32) -> Self {
        Self { word: AtomicU128::new(pack(index, 0)) }
    }

    /// The current `(index, tag)`.
    #[inline(always)]
    pub(crate) fn load(&self) -> Seen {
        unpack(self.word.load(Ordering::Acquire))
    }

    /// CAS from `seen` to `index` with the tag bumped; on failure returns
    /// what the head holds now.
    #[inline(always)]
    pub(crate) fn replace(&self, seen: Seen, index: u32) -> Result<(), Seen> {
        let new = pack(index, seen.1.wrapping_add(1));
        self.word
            .compare_exchange(pack(seen.0, seen.1), new, Ordering::AcqRel, Ordering::Acquire)
            .map(|_| ())
            .map_err(unpack)
    }

    /// Bump the tag and keep the index: the one write that makes every
    /// in-flight CAS on this head fail without changing what it holds.
    /// (A CAS loop, so it is safe to call while other cores work.)
    pub(crate) fn bump_tag(&self) {
        let mut seen = self.load();
        while let Err(now) = self.replace(seen, seen.0) {
            seen = now;
        }
    }

    /// Treiber push of `node`, whose link is `link(node)`; the caller owns
    /// `node` exclusively until the CAS publishes it. Returns the retries.
    #[inline(always)]
    pub(crate) fn push<'a, L, I>(&self, link: L, node: u32, hook: &mut I) -> u32
    where
        L: Fn(u32) -> &'a AtomicU64,
        I: Interference + ?Sized,
    {
        let mut attempt = 0;
        let mut seen = self.load();
        loop {
            link(node).store(u64::from(seen.0), Ordering::Relaxed);
            hook.before_cas(attempt);
            match self.replace(seen, node) {
                Ok(()) => return attempt,
                Err(now) => {
                    seen = now;
                    attempt += 1;
                }
            }
        }
    }

    /// Treiber pop: the node that was first, now owned by the caller, or
    /// `None` if the head was `NIL`. Returns the retries too.
    #[inline(always)]
    pub(crate) fn pop<'a, L, I>(&self, link: L, hook: &mut I) -> (Option<u32>, u32)
    where
        L: Fn(u32) -> &'a AtomicU64,
        I: Interference + ?Sized,
    {
        let mut attempt = 0;
        let mut seen = self.load();
        loop {
            if seen.0 == NIL {
                return (None, attempt);
            }
            let next = link_index(link(seen.0).load(Ordering::Relaxed));
            hook.before_cas(attempt);
            match self.replace(seen, next) {
                Ok(()) => return (Some(seen.0), attempt),
                Err(now) => {
                    seen = now;
                    attempt += 1;
                }
            }
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn pack_round_trips() {
        for (i, t) in [(0, 0), (NIL, u64::MAX), (7, 1 << 40)] {
            assert_eq!(unpack(pack(i, t)), (i, t));
        }
    }

    #[test]
    fn bump_tag_keeps_index_and_fails_cas() {
        let h = TaggedHead::new(3);
        let seen = h.load();
        h.bump_tag();
        assert_eq!(h.load(), (3, 1));
        assert_eq!(h.replace(seen, 4), Err((3, 1)));
    }
}
