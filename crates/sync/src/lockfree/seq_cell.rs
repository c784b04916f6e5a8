//! A small value readable while another core replaces it: a *kind* byte and
//! three payload words behind a sequence lock whose sequence number shares
//! a word with the kind. The kernel keeps every CNode slot's capability in
//! one (`kernel/src/object/slot_cap.rs`: kind = object type, payload =
//! reference, rights, badge).
//!
//! **Layout.** Four `AtomicU64`: the *head* — the kind in bits 0..8 and a
//! sequence number in bits 8..64 — and the three payload words. Kind 0 is
//! *empty*: its payload reads as zeros without being loaded. Kind
//! [`WRITING`] (`0xff`) marks a replacement under way.
//!
//! **Algorithm** (a sequence lock, as Linux's `seqcount_t` and crossbeam's
//! `AtomicCell` fallback; H.-J. Boehm, *Can seqlocks get along with
//! programming language memory models?*, MSPC 2012, for the fences). A
//! reader loads the head (acquire); an empty head is the whole value. Else
//! it loads the payload (relaxed), issues an acquire fence and loads the
//! head again (relaxed): unchanged, the payload belongs to that head. A
//! writer CASes the head from the value it read to `WRITING` with the next
//! sequence number — so of two writers starting from one value only one
//! proceeds —, issues a release fence, stores the payload and then the
//! head with the new kind and the sequence after that (release).
//!
//! A reader that meets `WRITING` does not wait: [`SeqCell::read`] reports
//! it, and the caller decides (the kernel reads a slot being written as
//! empty: a claim of an empty slot takes effect at its last store, a clear
//! at its CAS). Only a writer waits for a replacement to end, a few stores.
//! The sequence number wraps after 2^56 replacements: a reader would have
//! to stall between its two head loads for that many for a torn value to
//! pass.
//!
//! Loom models: `tests/loom_seq_cell.rs`. The torn-read model fails when
//! the reader's second head load is removed, the two racing-writer models
//! when the writer's CAS to `WRITING` becomes a plain store.

use super::link::Rmw;
use crate::primitive::{fence, spin_loop, AtomicU64, Ordering};

/// The kind bits of the head.
const KIND: u64 = 0xff;
/// The head's kind while a writer replaces the value.
pub const WRITING: u8 = 0xff;
/// One step of the head's sequence number.
const SEQ: u64 = 1 << 8;

/// A kind and its payload.
pub type Value = (u8, [u64; 3]);

/// See the module documentation.
#[derive(Debug, Default)]
pub struct SeqCell {
    head: AtomicU64,
    words: [AtomicU64; 3],
}

impl SeqCell {
    /// A cell holding `kind` (not [`WRITING`]) and `words`.
    pub fn new((kind, words): Value) -> Self {
        debug_assert_ne!(kind, WRITING);
        Self { head: AtomicU64::new(u64::from(kind)), words: words.map(AtomicU64::new) }
    }

    /// The value, or `None` while a writer replaces it (a consistent
    /// snapshot either way).
    #[inline(always)]
    pub fn read(&self) -> Option<Value> {
        self.read_at().1
    }

    /// The value, read where no writer can run meanwhile (the caller's
    /// regime excludes every writer of this cell while it reads): the head
    /// and the payload, without the second head load that validates a
    /// snapshot. With a writer running the value may be torn, never unsafe.
    #[inline(always)]
    pub fn read_settled(&self) -> Value {
        let h = self.head.load(Ordering::Acquire);
        let kind = (h & KIND) as u8;
        if kind == 0 {
            return (0, [0; 3]);
        }
        (kind, self.payload())
    }

    /// The three payload words (relaxed: a reader orders them against the
    /// head). Three plain loads: an array `map` here was not inlined.
    #[inline(always)]
    fn payload(&self) -> [u64; 3] {
        let [a, b, c] = &self.words;
        [a.load(Ordering::Relaxed), b.load(Ordering::Relaxed), c.load(Ordering::Relaxed)]
    }

    /// The value's kind alone (one load; [`WRITING`] while a writer
    /// replaces it).
    #[inline(always)]
    pub fn kind(&self) -> u8 {
        (self.head.load(Ordering::Acquire) & KIND) as u8
    }

    /// The head and the value it was read at.
    #[inline(always)]
    fn read_at(&self) -> (u64, Option<Value>) {
        loop {
            let h = self.head.load(Ordering::Acquire);
            let kind = (h & KIND) as u8;
            if kind == 0 {
                return (h, Some((0, [0; 3])));
            }
            if kind == WRITING {
                return (h, None);
            }
            let w = self.payload();
            fence(Ordering::Acquire);
            if self.head.load(Ordering::Relaxed) == h {
                return (h, Some((kind, w)));
            }
            spin_loop();
        }
    }

    /// Replace a value that `accept` says yes to by `new` (kind not
    /// [`WRITING`]): the one CAS of the head decides between writers racing
    /// for the cell. `false`: the value there was not accepted. `rmw`
    /// hears of each CAS attempt.
    pub fn replace(&self, accept: impl Fn(Value) -> bool, (kind, words): Value, rmw: &impl Fn(Rmw)) -> bool {
        debug_assert_ne!(kind, WRITING);
        loop {
            let (h, now) = self.read_at();
            let Some(now) = now else {
                spin_loop();
                continue;
            };
            if !accept(now) {
                return false;
            }
            let seq = (h & !KIND).wrapping_add(SEQ);
            rmw(Rmw::Cmpxchg);
            if self.head.compare_exchange(h, seq | KIND, Ordering::Relaxed, Ordering::Relaxed).is_err() {
                continue;
            }
            fence(Ordering::Release);
            for (slot, w) in self.words.iter().zip(words) {
                slot.store(w, Ordering::Relaxed);
            }
            self.head.store(seq.wrapping_add(SEQ) | u64::from(kind), Ordering::Release);
            return true;
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn quiet(_: Rmw) {}

    /// With no writer running, the settled read is the validated read:
    /// empty, a first value, and a replacement of it.
    #[test]
    fn a_settled_read_agrees_with_a_validated_read() {
        let cell = SeqCell::new((0, [0; 3]));
        assert_eq!(cell.read_settled(), (0, [0; 3]));
        assert_eq!(Some(cell.read_settled()), cell.read());
        assert!(cell.replace(|v| v.0 == 0, (3, [7, 8, 9]), &quiet));
        assert_eq!(cell.read_settled(), (3, [7, 8, 9]));
        assert!(cell.replace(|v| v == (3, [7, 8, 9]), (5, [1, 2, 3]), &quiet));
        assert_eq!(cell.read_settled(), (5, [1, 2, 3]));
        assert_eq!(Some(cell.read_settled()), cell.read());
    }
}
