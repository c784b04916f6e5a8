//! The capability in a CNode slot, readable while a `lockfree` shared path
//! writes it: a sequence lock over four words.
//!
//! Every regime keeps a slot's capability here, so there is one capability
//! logic. Management (and every lock regime) changes it through `&mut`,
//! with the whole kernel to itself. `lockfree`'s shared paths also allocate
//! frames into empty slots and free them again (`crate::lockfree::pages`),
//! while other cores look up capabilities in the same CNode: those writes
//! and every read go through the sequence word.
//!
//! **Layout.** `seq: AtomicU32`, even when the words are stable, odd while
//! a shared writer changes them; four `AtomicU64` words: the object kind,
//! its reference (`gen << 32 | index`, or `gen << 32 | line` for an IRQ
//! handler), the rights and the badge.
//!
//! **Algorithm** (the sequence lock, as in Linux's `seqcount_t` and
//! crossbeam's `AtomicCell` fallback; H.-J. Boehm, *Can seqlocks get along
//! with programming language memory models?*, MSPC 2012, for the fences).
//! A reader loads `seq` (acquire), the words (relaxed), an acquire fence,
//! and `seq` again: equal and even, the words are one capability. A shared
//! writer CASes `seq` from the even value at which it read the slot to odd
//! (so two writers cannot both start from one state), issues a release
//! fence, stores the words and stores `seq + 2` (release).

use core::sync::atomic::{fence, AtomicU32, AtomicU64, Ordering};

use granule_sync::lockfree::Rmw;

use crate::abi::CapRights;
use crate::object::irq::IrqRef;
use crate::object::{Cap, CapObj, Ref};

/// A slot's capability; see the module documentation.
#[derive(Debug, Default)]
pub(crate) struct SlotCap {
    seq: AtomicU32,
    words: [AtomicU64; 4],
}

type Words = [u64; 4];

fn encode(c: Cap) -> Words {
    let r = |index: u32, gen: u32| u64::from(gen) << 32 | u64::from(index);
    let (kind, reference) = match c.obj {
        CapObj::Null => (0, 0),
        CapObj::Untyped(x) => (1, r(x.index(), x.gen())),
        CapObj::Tcb(x) => (2, r(x.index(), x.gen())),
        CapObj::Endpoint(x) => (3, r(x.index(), x.gen())),
        CapObj::Notification(x) => (4, r(x.index(), x.gen())),
        CapObj::CNode(x) => (5, r(x.index(), x.gen())),
        CapObj::Reply(x) => (6, r(x.index(), x.gen())),
        CapObj::Frame(x) => (7, r(x.index(), x.gen())),
        CapObj::VSpace(x) => (8, r(x.index(), x.gen())),
        CapObj::IrqControl => (9, 0),
        CapObj::IrqHandler(x) => (10, r(u32::from(x.irq), x.gen)),
    };
    [kind, reference, c.rights.0, c.badge]
}

#[inline(always)]
fn decode(w: Words) -> Cap {
    let (index, gen) = (w[1] as u32, (w[1] >> 32) as u32);
    let obj = match w[0] {
        1 => CapObj::Untyped(Ref::new(index, gen)),
        2 => CapObj::Tcb(Ref::new(index, gen)),
        3 => CapObj::Endpoint(Ref::new(index, gen)),
        4 => CapObj::Notification(Ref::new(index, gen)),
        5 => CapObj::CNode(Ref::new(index, gen)),
        6 => CapObj::Reply(Ref::new(index, gen)),
        7 => CapObj::Frame(Ref::new(index, gen)),
        8 => CapObj::VSpace(Ref::new(index, gen)),
        9 => CapObj::IrqControl,
        10 => CapObj::IrqHandler(IrqRef { irq: index as u16, gen }),
        _ => CapObj::Null,
    };
    Cap { obj, rights: CapRights(w[2]), badge: w[3] }
}

impl SlotCap {
    pub fn new(c: Cap) -> Self {
        let w = encode(c);
        Self { seq: AtomicU32::new(0), words: w.map(AtomicU64::new) }
    }

    /// The capability (a consistent snapshot, whoever writes meanwhile).
    #[inline(always)]
    pub fn get(&self) -> Cap {
        self.read().1
    }

    /// The capability and the even sequence value it was read at.
    #[inline(always)]
    fn read(&self) -> (u32, Cap) {
        loop {
            let s1 = self.seq.load(Ordering::Acquire);
            if s1 & 1 == 0 {
                let w = [0, 1, 2, 3].map(|i| self.words[i].load(Ordering::Relaxed));
                fence(Ordering::Acquire);
                if self.seq.load(Ordering::Relaxed) == s1 {
                    return (s1, decode(w));
                }
            }
            core::hint::spin_loop();
        }
    }

    /// A shared writer's change from what `accept` says yes to, to `new`:
    /// the one CAS of the sequence word decides between writers racing
    /// for one slot. `false`: the capability there was not accepted.
    pub fn replace_shared(&self, accept: impl Fn(Cap) -> bool, new: Cap, rmw: &impl Fn(Rmw)) -> bool {
        loop {
            let (s, now) = self.read();
            if !accept(now) {
                return false;
            }
            rmw(Rmw::Cmpxchg);
            if self.seq.compare_exchange(s, s.wrapping_add(1), Ordering::Relaxed, Ordering::Relaxed).is_err() {
                continue;
            }
            fence(Ordering::Release);
            for (word, v) in self.words.iter().zip(encode(new)) {
                word.store(v, Ordering::Relaxed);
            }
            self.seq.store(s.wrapping_add(2), Ordering::Release);
            return true;
        }
    }
}

impl Clone for SlotCap {
    fn clone(&self) -> Self {
        Self::new(self.get())
    }
}
