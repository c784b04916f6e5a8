//! One core's scheduler state as data: its current thread, what the end of
//! the entry does with it ([`Action`]), its ready queues ([`ReadyQueues`]:
//! a bitmap of non-empty priority levels and a FIFO per level). The
//! scheduling itself is `Ctx`'s (`sched/mod.rs`).

use crate::abi::NUM_PRIORITIES;
use crate::object::{Ref, Tcb, NIL};

/// What the end of the entry does with the current thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Action {
    /// Keep the current thread if it is still runnable here.
    Resume,
    /// Run this woken thread if it outranks the alternatives.
    SwitchTo(Ref<Tcb>),
    /// Run this thread, of priority `prio` (`lockfree`'s shared paths): it
    /// is runnable here, in no queue, and outranked by nothing ready, the
    /// current thread blocked (or the core was idle) and no core is held
    /// (seL4's direct switch at the end of `fastpath.c`). The entry's end
    /// checks that it is live.
    Direct { to: Ref<Tcb>, prio: u8 },
    /// Re-choose; a still-runnable current thread goes to the back of its
    /// level if `yielded`, else to the front.
    Choose { yielded: bool },
}

/// The IPC fast path's decision, returned as a value rather than left in
/// [`Action`]: run `to`, of priority `prio` — runnable here, in no queue,
/// outranked by nothing ready; the current thread blocked and no core is
/// held (seL4's direct switch at the end of `fastpath.c`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Direct {
    to: Ref<Tcb>,
    prio: u8,
}

impl Direct {
    /// Run `to`, of priority `prio`, at the entry's end.
    ///
    /// # Safety
    /// `to` is live and stays so until the entry ends (as for
    /// [`crate::state::Ctx::get_live`]): the entry's end reaches it without
    /// checking.
    #[inline(always)]
    pub(crate) unsafe fn new(to: Ref<Tcb>, prio: u8) -> Self {
        Self { to, prio }
    }

    /// The thread to run.
    #[inline(always)]
    pub(crate) fn to(self) -> Ref<Tcb> {
        self.to
    }

    /// Its priority.
    #[inline(always)]
    pub(crate) fn prio(self) -> u8 {
        self.prio
    }
}

/// Ready queues: a bitmap of non-empty levels and a FIFO per level. The
/// bitmap has two levels, as seL4's: bit `w` of `words` says whether
/// `bitmap[w]` has a bit set, so the highest level is found with two
/// leading-zero counts and no loop.
#[derive(Debug)]
pub(crate) struct ReadyQueues {
    pub(super) words: u64,
    pub(super) bitmap: [u64; NUM_PRIORITIES / 64],
    pub(super) head: [u32; NUM_PRIORITIES],
    pub(super) tail: [u32; NUM_PRIORITIES],
}

impl ReadyQueues {
    pub(super) fn new() -> Self {
        Self { words: 0, bitmap: [0; 4], head: [NIL; NUM_PRIORITIES], tail: [NIL; NUM_PRIORITIES] }
    }

    /// The highest non-empty level.
    #[inline]
    pub fn highest(&self) -> Option<u8> {
        if self.words == 0 {
            return None;
        }
        let w = (63 - self.words.leading_zeros()) as usize % (NUM_PRIORITIES / 64);
        let b = self.bitmap[w];
        Some((w * 64 + 63 - b.leading_zeros() as usize) as u8)
    }

    /// Whether a level above `p` is non-empty (`highest() > Some(p)`,
    /// without finding which: the fast path's guard).
    #[inline(always)]
    pub fn any_above(&self, p: u8) -> bool {
        let (w, b) = (p as usize / 64, p as usize % 64);
        // Words above `w` (a shift of 64 or more is 0), then the bits above
        // `b` in word `w`.
        self.words.checked_shr(w as u32 + 1).unwrap_or(0) != 0 || (self.bitmap[w] >> b) >> 1 != 0
    }

    /// Head of level `p`.
    pub fn head(&self, p: u8) -> u32 {
        self.head[p as usize]
    }

    pub(super) fn set_bit(&mut self, p: u8, on: bool) {
        let (w, b) = (p as usize / 64, p as usize % 64);
        if on {
            self.bitmap[w] |= 1 << b;
            self.words |= 1 << w;
        } else {
            self.bitmap[w] &= !(1 << b);
            if self.bitmap[w] == 0 {
                self.words &= !(1 << w);
            }
        }
    }

    /// The summary word and the words it should say are non-empty (for
    /// the invariants: the two agree).
    pub fn summary(&self) -> (u64, u64) {
        let words = self.bitmap.iter().enumerate().filter(|(_, &b)| b != 0).fold(0, |m, (w, _)| m | 1 << w);
        (self.words, words)
    }

    /// Whether level `p`'s bit is set (for the invariants).
    pub fn bit(&self, p: u8) -> bool {
        self.bitmap[p as usize / 64] & (1 << (p as usize % 64)) != 0
    }
}

/// One core's scheduler state.
#[derive(Debug)]
pub(crate) struct CoreState {
    pub current: Option<Ref<Tcb>>,
    pub action: Action,
    pub ready: ReadyQueues,
    /// Threads holding this core stalled (it runs the idle thread meanwhile).
    pub held: u32,
    /// The thread the last plan ran (for the switch counter).
    pub last_run: Option<Ref<Tcb>>,
    /// The priority of `current` (meaningful while it is `Some`): other
    /// cores deciding whether a wake-up outranks it read this copy under the
    /// core's scheduler lock instead of the current thread's TCB, which its
    /// own core may be using (see the `fine` regime).
    pub current_prio: u8,
}

impl CoreState {
    pub fn new() -> Self {
        Self {
            current: None,
            action: Action::Resume,
            ready: ReadyQueues::new(),
            held: 0,
            last_run: None,
            current_prio: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ReadyQueues;

    /// `any_above` agrees with `highest` for every level, whatever levels
    /// are set (the summary word kept by `set_bit` included).
    #[test]
    fn any_above_agrees_with_highest() {
        let sets: [&[u8]; 6] = [&[], &[0], &[255], &[63, 64], &[100, 7, 200], &[1, 127, 128, 191, 192]];
        for set in sets {
            let mut q = ReadyQueues::new();
            for &p in set {
                q.set_bit(p, true);
            }
            for p in 0..=255u8 {
                assert_eq!(q.any_above(p), q.highest().is_some_and(|h| h > p), "levels {set:?}, p {p}");
            }
            for &p in set {
                q.set_bit(p, false);
            }
            assert_eq!((q.highest(), q.summary()), (None, (0, 0)), "levels {set:?} cleared");
        }
    }
}
