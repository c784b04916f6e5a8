//! A last-in first-out free list of small indices in one word: the buffer
//! pool's free list, where the index freed last is the one handed out next
//! (its memory still in the cache).
//!
//! **Word layout** (one `AtomicU64`, changed only by `lock cmpxchg`):
//!
//! ```text
//!  63                                          16 15               0
//! +----------------------------------------------+------------------+
//! |                  tag (48 bits)               |      index       |
//! +----------------------------------------------+------------------+
//! ```
//!
//! `index` is the index on top (`EMPTY` = `0xFFFF` = none); `tag` counts
//! the successful CASes on the word, modulo 2^48, and every one bumps it.
//! **Links:** one `AtomicU32` per index, the index below it (`EMPTY` at the
//! bottom).
//!
//! **Algorithm.** Treiber's stack (R. K. Treiber, *Systems Programming:
//! Coping with Parallelism*, IBM RJ 5118, 1986) with the version tag of the
//! IBM System/370 `CDS` idiom, as `tagged.rs` does with a 128-bit word. Push:
//! read the head, link the index to it, CAS the head to the index. Pop: read
//! the head, read its link, CAS the head to the link. A popper that read a
//! head whose index was popped, reused and pushed back meanwhile (the ABA
//! case) fails its CAS on the tag. The tag has 48 bits so that head and tag
//! fit one word and one `lock cmpxchg` (no `cmpxchg16b`): a popper would
//! have to stall across 2^48 successful CASes on the one list, days of
//! nothing but pops and pushes, for a stale tag to compare equal. A stale
//! read of a link is harmless: the links are type-stable atomics owned by
//! the stack.
//!
//! Orderings: a successful CAS is `AcqRel` (it publishes the pushed index's
//! link, and orders the previous owner's use of what the index names before
//! the next owner's); loads of the head are `Acquire`; links are read
//! `Relaxed` after the `Acquire` of the head that made them visible.

use alloc::boxed::Box;

use crossbeam_utils::CachePadded;

use crate::primitive::{AtomicU32, AtomicU64, Ordering};

/// The index meaning "none" (so at most `EMPTY` indices, `0..EMPTY`).
const EMPTY: u64 = 0xFFFF;
/// Bits of the word below the tag.
const INDEX_BITS: u32 = 16;

/// Most indices an [`IndexStack`] can hold.
pub const MAX_INDICES: usize = EMPTY as usize;

#[inline(always)]
fn index_of(word: u64) -> u64 {
    word & EMPTY
}

#[inline(always)]
fn bumped(word: u64, index: u64) -> u64 {
    ((word >> INDEX_BITS).wrapping_add(1) << INDEX_BITS) | index
}

/// A lock-free LIFO of the indices `0..capacity`, each in it at most once;
/// see the module documentation.
#[derive(Debug)]
pub struct IndexStack {
    head: CachePadded<AtomicU64>,
    links: Box<[AtomicU32]>,
}

impl IndexStack {
    /// A stack holding every index `0..capacity`, 0 on top.
    ///
    /// # Panics
    /// If `capacity` exceeds [`MAX_INDICES`].
    pub fn full(capacity: usize) -> Self {
        assert!(capacity <= MAX_INDICES, "an IndexStack holds at most {MAX_INDICES} indices, not {capacity}");
        let below = |i: usize| if i + 1 < capacity { (i + 1) as u32 } else { EMPTY as u32 };
        let top = if capacity == 0 { EMPTY } else { 0 };
        Self {
            head: CachePadded::new(AtomicU64::new(top)),
            links: (0..capacity).map(|i| AtomicU32::new(below(i))).collect(),
        }
    }

    /// How many indices the stack ranges over.
    #[inline]
    pub fn capacity(&self) -> usize {
        self.links.len()
    }

    /// Push `index`, which the caller owns (it is not in the stack) until
    /// the CAS publishes it. An index out of range is ignored and gives
    /// `false`.
    #[inline]
    pub fn push(&self, index: usize) -> bool {
        let Some(link) = self.links.get(index) else { return false };
        let mut seen = self.head.load(Ordering::Acquire);
        loop {
            link.store(index_of(seen) as u32, Ordering::Relaxed);
            match self.head.compare_exchange_weak(seen, bumped(seen, index as u64), Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return true,
                Err(now) => seen = now,
            }
        }
    }

    /// Pop the index on top, now the caller's; `None` if the stack is empty.
    #[inline]
    pub fn pop(&self) -> Option<usize> {
        let mut seen = self.head.load(Ordering::Acquire);
        loop {
            let top = index_of(seen);
            // `top` came from a push of an index in range (or is EMPTY).
            let link = self.links.get(top as usize)?;
            let below = u64::from(link.load(Ordering::Relaxed));
            match self.head.compare_exchange_weak(seen, bumped(seen, below), Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return Some(top as usize),
                Err(now) => seen = now,
            }
        }
    }

    /// Whether the stack is empty now (a plain load of its head).
    pub fn is_empty(&self) -> bool {
        index_of(self.head.load(Ordering::Acquire)) == EMPTY
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    #[test]
    fn last_in_is_first_out_and_every_index_comes_back() {
        let s = IndexStack::full(3);
        assert_eq!(s.capacity(), 3);
        assert_eq!(s.pop(), Some(0));
        assert_eq!(s.pop(), Some(1));
        assert!(s.push(0));
        assert_eq!(s.pop(), Some(0), "the index freed last is handed out first");
        assert_eq!(s.pop(), Some(2));
        assert!(s.is_empty());
        assert_eq!(s.pop(), None);
        assert!(!s.push(3), "out of range");
        for i in [2, 0, 1] {
            assert!(s.push(i));
        }
        let all: Vec<usize> = core::iter::from_fn(|| s.pop()).collect();
        assert_eq!(all, [1, 0, 2]);
    }

    #[test]
    fn empty_and_largest_stacks() {
        let none = IndexStack::full(0);
        assert!(none.is_empty());
        assert_eq!(none.pop(), None);
        assert!(!none.push(0));
        let big = IndexStack::full(MAX_INDICES);
        let all: Vec<usize> = core::iter::from_fn(|| big.pop()).collect();
        assert_eq!(all.len(), MAX_INDICES);
        assert_eq!(all.last(), Some(&(MAX_INDICES - 1)));
        assert!(big.push(MAX_INDICES - 1));
        assert_eq!(big.pop(), Some(MAX_INDICES - 1));
    }

    #[test]
    #[should_panic(expected = "at most")]
    fn too_many_indices_is_refused() {
        let _ = IndexStack::full(MAX_INDICES + 1);
    }

    #[test]
    fn the_tag_changes_with_every_cas_and_wraps_without_touching_the_index() {
        let s = IndexStack::full(2);
        let before = s.head.load(Ordering::Relaxed);
        assert_eq!(s.pop(), Some(0));
        assert!(s.push(0));
        let after = s.head.load(Ordering::Relaxed);
        assert_eq!(index_of(after), index_of(before));
        assert_ne!(after, before, "same top, new tag: a stalled pop's CAS fails");
        let top_tag = !EMPTY;
        assert_eq!(bumped(top_tag | 1, 5), 5, "the tag wraps to 0, the index is the new one");
    }
}
