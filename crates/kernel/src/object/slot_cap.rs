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
//! **Layout.** Four `AtomicU64` words: the *head* — the object kind in bits
//! 0..8 (0: empty) and a sequence number in bits 8..64 that every shared
//! write moves on —, the object's reference ([`Ref::raw`], or `gen << 32 |
//! line` for an IRQ handler), the rights and the badge. Kind [`DEAD`]
//! (rights and badge 0) marks a slot whose thread capability a shared
//! destroy deleted and whose place in the derivation tree waits for
//! management (`object/shared_destroy.rs`): it reads as empty, but no
//! shared writer fills it.
//!
//! **Algorithm** (a sequence lock whose sequence shares a word with the
//! kind, as in Linux's `seqcount_t` and crossbeam's `AtomicCell` fallback;
//! H.-J. Boehm, *Can seqlocks get along with programming language memory
//! models?*, MSPC 2012, for the fences). A reader loads the head (acquire),
//! the other words (relaxed), an acquire fence, and the head again: equal,
//! the words are one capability. An empty head is read alone. A shared
//! writer CASes the head from the value at which it read the slot to
//! `WRITING` with the next sequence number (so two writers cannot both
//! start from one state), issues a release fence, stores the words and
//! then the head with the new kind and the sequence after that (release).
//!
//! A reader that meets `WRITING` reads the slot as empty, without waiting:
//! a claim of an empty slot takes effect at its last store (the slot is
//! empty until then) and a clear at its CAS (empty from then on). Only
//! another shared writer waits for `WRITING` to end, a few stores inside a
//! kernel entry.

use core::num::NonZeroU64;
use core::sync::atomic::{fence, AtomicU64, Ordering};

use granule_sync::lockfree::Rmw;

use crate::abi::CapRights;
use crate::object::irq::IrqRef;
use crate::object::{Cap, CapObj, Ref};

/// A slot's capability; see the module documentation.
#[derive(Debug, Default)]
pub(crate) struct SlotCap {
    head: AtomicU64,
    reference: AtomicU64,
    rights: AtomicU64,
    badge: AtomicU64,
}

/// The kind bits of the head.
const KIND: u64 = 0xff;
/// The head's kind while a shared writer writes.
const WRITING: u64 = KIND;
/// One step of the head's sequence number.
const SEQ: u64 = 1 << 8;
/// The kind of a dead slot (see the module documentation); it decodes as
/// the null capability, so a look-up pays nothing for it.
const DEAD: u64 = 11;

#[inline(always)]
fn encode(c: Cap) -> (u64, u64) {
    let r = |raw: NonZeroU64| raw.get();
    match c.obj {
        CapObj::Null => (0, 0),
        CapObj::Untyped(x) => (1, r(x.raw())),
        CapObj::Tcb(x) => (2, r(x.raw())),
        CapObj::Endpoint(x) => (3, r(x.raw())),
        CapObj::Notification(x) => (4, r(x.raw())),
        CapObj::CNode(x) => (5, r(x.raw())),
        CapObj::Reply(x) => (6, r(x.raw())),
        CapObj::Frame(x) => (7, r(x.raw())),
        CapObj::VSpace(x) => (8, r(x.raw())),
        CapObj::IrqControl => (9, 0),
        CapObj::IrqHandler(x) => (10, u64::from(x.gen) << 32 | u64::from(x.irq)),
    }
}

#[inline(always)]
fn decode(kind: u64, reference: u64, rights: u64, badge: u64) -> Cap {
    let obj = match (kind, NonZeroU64::new(reference)) {
        (1, Some(r)) => CapObj::Untyped(Ref::from_raw(r)),
        (2, Some(r)) => CapObj::Tcb(Ref::from_raw(r)),
        (3, Some(r)) => CapObj::Endpoint(Ref::from_raw(r)),
        (4, Some(r)) => CapObj::Notification(Ref::from_raw(r)),
        (5, Some(r)) => CapObj::CNode(Ref::from_raw(r)),
        (6, Some(r)) => CapObj::Reply(Ref::from_raw(r)),
        (7, Some(r)) => CapObj::Frame(Ref::from_raw(r)),
        (8, Some(r)) => CapObj::VSpace(Ref::from_raw(r)),
        (9, _) => CapObj::IrqControl,
        (10, _) => CapObj::IrqHandler(IrqRef { irq: reference as u16, gen: (reference >> 32) as u32 }),
        _ => CapObj::Null,
    };
    Cap { obj, rights: CapRights(rights), badge }
}

impl SlotCap {
    pub fn new(c: Cap) -> Self {
        let (kind, reference) = encode(c);
        Self {
            head: AtomicU64::new(kind),
            reference: AtomicU64::new(reference),
            rights: AtomicU64::new(c.rights.0),
            badge: AtomicU64::new(c.badge),
        }
    }

    /// The capability (a consistent snapshot, whoever writes meanwhile).
    #[inline(always)]
    pub fn get(&self) -> Cap {
        self.read().1.unwrap_or(Cap::NULL)
    }

    /// The capability and the head it was read at; `None` while a shared
    /// writer writes.
    #[inline(always)]
    fn read(&self) -> (u64, Option<Cap>) {
        loop {
            let h = self.head.load(Ordering::Acquire);
            let kind = h & KIND;
            if kind == 0 {
                return (h, Some(Cap::NULL));
            }
            if kind == WRITING {
                return (h, None);
            }
            let (r, ri, b) = (
                self.reference.load(Ordering::Relaxed),
                self.rights.load(Ordering::Relaxed),
                self.badge.load(Ordering::Relaxed),
            );
            fence(Ordering::Acquire);
            if self.head.load(Ordering::Relaxed) == h {
                return (h, Some(decode(kind, r, ri, b)));
            }
        }
    }

    /// A shared writer's change from what `accept` says yes to, to `new`:
    /// the one CAS of the head decides between writers racing for one
    /// slot. `false`: the capability there was not accepted (a dead slot
    /// never is).
    pub fn replace_shared(&self, accept: impl Fn(Cap) -> bool, new: Cap, rmw: &impl Fn(Rmw)) -> bool {
        self.swap_shared(|now| now.is_some_and(&accept), Some(new), rmw)
    }

    /// A shared destroy's deletion: `expect` goes and the slot dies.
    /// `false`: the slot no longer held `expect`.
    pub fn kill_shared(&self, expect: Cap, rmw: &impl Fn(Rmw)) -> bool {
        self.swap_shared(|now| now == Some(expect), None, rmw)
    }

    /// A withdrawn shared destroy: the dead slot holds `cap` again.
    pub fn revive_shared(&self, cap: Cap, rmw: &impl Fn(Rmw)) -> bool {
        self.swap_shared(|now| now.is_none(), Some(cap), rmw)
    }

    /// Whether the slot is dead.
    pub fn is_dead(&self) -> bool {
        self.head.load(Ordering::Acquire) & KIND == DEAD
    }

    /// From what `accept` says yes to (`None`: a dead slot) to `new`
    /// (`None`: kill the slot), by the algorithm of the module
    /// documentation.
    fn swap_shared(&self, accept: impl Fn(Option<Cap>) -> bool, new: Option<Cap>, rmw: &impl Fn(Rmw)) -> bool {
        let (kind, reference) = new.map_or((DEAD, 0), encode);
        let new = new.unwrap_or(Cap::NULL);
        loop {
            let (h, now) = self.read();
            let Some(now) = now else {
                core::hint::spin_loop();
                continue;
            };
            if !accept((h & KIND != DEAD).then_some(now)) {
                return false;
            }
            let seq = (h & !KIND).wrapping_add(SEQ);
            rmw(Rmw::Cmpxchg);
            if self.head.compare_exchange(h, seq | WRITING, Ordering::Relaxed, Ordering::Relaxed).is_err() {
                continue;
            }
            fence(Ordering::Release);
            self.reference.store(reference, Ordering::Relaxed);
            self.rights.store(new.rights.0, Ordering::Relaxed);
            self.badge.store(new.badge, Ordering::Relaxed);
            self.head.store(seq.wrapping_add(SEQ) | kind, Ordering::Release);
            return true;
        }
    }
}

impl Clone for SlotCap {
    fn clone(&self) -> Self {
        Self::new(self.get())
    }
}
