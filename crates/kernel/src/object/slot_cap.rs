//! The capability in a CNode slot, readable while a `lockfree` shared path
//! writes it: a sequence lock over four words.
//!
//! Every regime keeps a slot's capability here, so there is one capability
//! logic. Management (and every lock regime) changes it through `&mut`,
//! with the whole kernel to itself. `lockfree`'s shared paths also allocate
//! frames into empty slots, free them again (`lockfree/pages.rs`) and
//! kill the slot of a thread they destroy (`lockfree/finish_destroy.rs`),
//! while other cores look up capabilities in the same CNode: those writes
//! and every read go through the sequence word.
//!
//! **Layout and algorithm**: a [`SeqCell`] (`granule_sync`,
//! `lockfree/seq_cell.rs`, with its loom models): a sequence lock whose
//! sequence number shares the head word with the kind, here the object
//! kind (0: empty), and three payload words, here the object's reference
//! ([`Ref::raw`], or `gen << 32 | line` for an IRQ handler), the rights and
//! the badge. A reader that meets a replacement under way reads the slot
//! as empty, without waiting: a claim of an empty slot takes effect at its
//! last store (the slot is empty until then) and a clear at its CAS (empty
//! from then on). Only another shared writer waits.
//!
//! Kind [`DEAD`] (payload 0) marks a slot whose thread capability a shared
//! destroy deleted and whose place in the derivation tree waits for
//! management (`lockfree/finish_destroy.rs`): it reads as empty, but no
//! shared writer fills it.

use core::num::NonZeroU64;

use granule_sync::lockfree::{Rmw, SeqCell, SeqValue};

use crate::abi::CapRights;
use crate::object::irq::IrqRef;
use crate::object::{Cap, CapObj, Ref};

/// A slot's capability; see the module documentation.
#[derive(Debug, Default)]
pub(crate) struct SlotCap(SeqCell);

/// The kind of a dead slot (see the module documentation); it decodes as
/// the null capability, so a look-up pays nothing for it.
const DEAD: u8 = 11;

#[inline(always)]
fn encode(c: Cap) -> SeqValue {
    let r = |raw: NonZeroU64| raw.get();
    let (kind, reference) = match c.obj {
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
    };
    (kind, [reference, c.rights.0, c.badge])
}

#[inline(always)]
fn decode((kind, [reference, rights, badge]): SeqValue) -> Cap {
    // SAFETY: the block's only unsafe calls are the `from_raw`s. A slot's
    // value comes from `encode` (the cell's only writers, `new`,
    // `replace_shared` and `revive_shared`, store what it returns, and the
    // cell hands out consistent snapshots), which stores `Ref::raw` of a
    // reference of this kernel under the kind of its type.
    let obj = unsafe {
        match (kind, NonZeroU64::new(reference)) {
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
        }
    };
    Cap { obj, rights: CapRights(rights), badge }
}

impl SlotCap {
    pub fn new(c: Cap) -> Self {
        Self(SeqCell::new(encode(c)))
    }

    /// The capability (a consistent snapshot, whoever writes meanwhile); a
    /// slot being written, or dead, reads as empty.
    #[inline(always)]
    pub fn get(&self) -> Cap {
        match self.0.read() {
            Some(v) => decode(v),
            None => Cap::NULL,
        }
    }

    /// [`SlotCap::get`] where no shared writer can run meanwhile (every
    /// regime but `lockfree`, whose shared paths write slots while others
    /// read them: [`crate::waits::Waits::SHARED_CAP_WRITES`]): one load of
    /// the head and the payload, no second head load.
    #[inline(always)]
    pub fn get_settled(&self) -> Cap {
        decode(self.0.read_settled())
    }

    /// A shared writer's change from what `accept` says yes to, to `new`:
    /// the one CAS of the head decides between writers racing for one
    /// slot. `false`: the capability there was not accepted (a dead slot
    /// never is).
    pub fn replace_shared(&self, accept: impl Fn(Cap) -> bool, new: Cap, rmw: &impl Fn(Rmw)) -> bool {
        self.0.replace(|v| v.0 != DEAD && accept(decode(v)), encode(new), rmw)
    }

    /// A shared destroy's deletion: `expect` goes and the slot dies.
    /// `false`: the slot no longer held `expect`.
    pub fn kill_shared(&self, expect: Cap, rmw: &impl Fn(Rmw)) -> bool {
        self.0.replace(|v| v.0 != DEAD && decode(v) == expect, (DEAD, [0; 3]), rmw)
    }

    /// A withdrawn shared destroy: the dead slot holds `cap` again.
    pub fn revive_shared(&self, cap: Cap, rmw: &impl Fn(Rmw)) -> bool {
        self.0.replace(|v| v.0 == DEAD, encode(cap), rmw)
    }

    /// Whether the slot is dead.
    pub fn is_dead(&self) -> bool {
        self.0.kind() == DEAD
    }

    /// Whether the slot is empty: neither dead nor being written (one load).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.0.kind() == 0
    }
}

impl Clone for SlotCap {
    fn clone(&self) -> Self {
        Self::new(self.get())
    }
}
