//! Kernel objects: typed slabs, generation-checked references, capabilities.
//!
//! Every object type has a [`Slab`]: a fixed array of slots allocated at boot
//! (so slot addresses never move and no core ever reallocates memory another
//! core may be reading). A slot holds a generation, a [`Header`] (how many
//! capabilities name the object, which untyped it was carved from and how
//! many bytes it was charged) and the object. A reference ([`Ref`]) is a slot
//! index plus the generation it was created with; freeing a slot bumps its
//! generation, so an old reference is *detected* as stale and never followed.
//!
//! Free slots form a singly linked free list through the slots. Slab access
//! is `unsafe`: the caller must hold the regime's permission for the slot (see
//! [`crate::state::Ctx`], the only caller).

pub(crate) mod cnode;
pub(crate) mod endpoint;
pub(crate) mod frame;
pub(crate) mod frame_pool;
pub(crate) mod irq;
pub(crate) mod notification;
pub(crate) mod page_tables;
pub(crate) mod reply;
pub(crate) mod slot_cap;
pub(crate) mod tcb;
pub(crate) mod thread;
pub(crate) mod untyped;
pub(crate) mod vspace;

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::cell::UnsafeCell;
use core::fmt;
use core::marker::PhantomData;
use core::num::NonZeroU64;

use crate::abi::{CapRights, ObjectType, Word};
use crate::ids::ObjectId;

pub(crate) use cnode::{CNode, CapSlot, SlotAddr};
pub(crate) use endpoint::Endpoint;
pub(crate) use frame::Frame;
pub(crate) use irq::{IrqRef, IrqSlot};
pub(crate) use notification::Notification;
pub(crate) use reply::Reply;
pub(crate) use thread::Tcb;
pub(crate) use untyped::Untyped;
pub(crate) use vspace::VSpace;

/// "No slot" in intrusive links and free lists.
pub(crate) const NIL: u32 = u32::MAX;

/// A generation-checked reference to an object of type `T`: slab index in
/// the low 32 bits, generation (never 0) in the high 32 bits, so that
/// `Option<Ref<T>>` is one word, written and read whole.
pub(crate) struct Ref<T> {
    raw: NonZeroU64,
    _t: PhantomData<fn() -> T>,
}

impl<T> Ref<T> {
    /// A reference to slot `index` with generation `gen` (0 is read as 1:
    /// slots never have generation 0).
    #[inline(always)]
    pub const fn new(index: u32, gen: u32) -> Self {
        let gen = if gen == 0 { 1 } else { gen };
        match NonZeroU64::new((gen as u64) << 32 | index as u64) {
            Some(raw) => Self { raw, _t: PhantomData },
            None => panic!("generation is never 0"),
        }
    }
    /// The reference as one word (`gen << 32 | index`, never 0).
    #[inline(always)]
    pub const fn raw(self) -> NonZeroU64 {
        self.raw
    }

    /// The reference whose word is `raw` (from [`Ref::raw`]).
    #[inline(always)]
    pub const fn from_raw(raw: NonZeroU64) -> Self {
        Self { raw, _t: PhantomData }
    }

    /// The slab index.
    #[inline(always)]
    pub const fn index(self) -> u32 {
        self.raw.get() as u32
    }
    /// The generation.
    #[inline(always)]
    pub const fn gen(self) -> u32 {
        (self.raw.get() >> 32) as u32
    }
}

impl<T> Clone for Ref<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Ref<T> {}
impl<T> PartialEq for Ref<T> {
    #[inline(always)]
    fn eq(&self, o: &Self) -> bool {
        self.raw == o.raw
    }
}
impl<T> Eq for Ref<T> {}
impl<T> fmt::Debug for Ref<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}.{}", self.index(), self.gen())
    }
}

/// Bookkeeping common to every object.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Header {
    /// Capabilities naming the object; it is destroyed when this reaches 0.
    pub caps: u32,
    /// The untyped it was carved from (its bytes go back there when destroyed).
    pub parent: Option<Ref<Untyped>>,
    /// Bytes charged to `parent`.
    pub bytes: u64,
}

/// One slab slot.
#[derive(Debug)]
pub(crate) struct Slot<T> {
    pub gen: u32,
    pub hdr: Header,
    pub obj: Option<T>,
    next_free: u32,
}

#[derive(Debug)]
struct SlabHead {
    free: u32,
    live: u32,
}

/// A fixed-capacity array of object slots (see the module documentation).
pub(crate) struct Slab<T> {
    slots: Box<[UnsafeCell<Slot<T>>]>,
    head: UnsafeCell<SlabHead>,
}

impl<T> fmt::Debug for Slab<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Slab").field("capacity", &self.slots.len()).finish()
    }
}

impl<T> Slab<T> {
    /// A slab of `capacity` free slots (capacity < 2^32 - 1).
    pub fn new(capacity: usize) -> Self {
        let slots: Vec<UnsafeCell<Slot<T>>> = (0..capacity)
            .map(|i| {
                let next = if i + 1 < capacity { (i + 1) as u32 } else { NIL };
                UnsafeCell::new(Slot { gen: 1, hdr: Header::default(), obj: None, next_free: next })
            })
            .collect();
        let free = if capacity == 0 { NIL } else { 0 };
        Self { slots: slots.into_boxed_slice(), head: UnsafeCell::new(SlabHead { free, live: 0 }) }
    }

    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// The slot at `i`, or `None` if out of range.
    ///
    /// # Safety
    /// The caller has the regime's permission to access slot `i` and holds no
    /// other reference to it.
    #[inline(always)]
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn slot(&self, i: u32) -> Option<&mut Slot<T>> {
        let cell = self.slots.get(i as usize)?;
        // SAFETY: by the caller's contract no other reference to this slot is
        // live and no other core accesses it.
        Some(unsafe { &mut *cell.get() })
    }

    /// Shared access to the slot at `i`, or `None` if out of range.
    ///
    /// # Safety
    /// The caller has the regime's permission to read slot `i`: no reference
    /// that allows writing it is live, here or on another core.
    #[inline(always)]
    pub unsafe fn slot_ref(&self, i: u32) -> Option<&Slot<T>> {
        let cell = self.slots.get(i as usize)?;
        // SAFETY: by the caller's contract nobody writes the slot meanwhile.
        Some(unsafe { &*cell.get() })
    }

    /// The generation of slot `i`, or `None` if out of range. It changes
    /// only when the slot is allocated or freed.
    ///
    /// # Safety
    /// The caller has the regime's permission to read slot `i`'s generation:
    /// no allocation or freeing of the slot runs meanwhile (other fields of
    /// the slot may be in use elsewhere: only the generation is read, through
    /// a raw pointer, without a reference to the slot).
    #[inline(always)]
    pub unsafe fn gen(&self, i: u32) -> Option<u32> {
        let cell = self.slots.get(i as usize)?;
        // SAFETY: `cell.get()` points to a valid slot; by the caller's
        // contract nobody writes its `gen` field meanwhile, and reading one
        // field through a raw pointer creates no reference that could alias
        // another core's `&mut` to the rest of the slot.
        Some(unsafe { core::ptr::addr_of!((*cell.get()).gen).read() })
    }

    /// The capability count of slot `i`, read as [`Slab::gen`] reads the
    /// generation.
    ///
    /// # Safety
    /// As for [`Slab::gen`], for the header: nobody writes it meanwhile.
    #[inline(always)]
    pub unsafe fn caps(&self, i: u32) -> Option<u32> {
        let cell = self.slots.get(i as usize)?;
        // SAFETY: as in `gen`, for the `hdr.caps` field.
        Some(unsafe { core::ptr::addr_of!((*cell.get()).hdr.caps).read() })
    }

    /// Number of free slots.
    ///
    /// # Safety
    /// The caller has the regime's permission to use the slab's allocator.
    pub unsafe fn free_slots(&self) -> usize {
        // SAFETY: by the caller's contract.
        let head = unsafe { &*self.head.get() };
        self.slots.len() - head.live as usize
    }

    /// Put `obj` in a free slot.
    ///
    /// # Safety
    /// The caller has the regime's permission to use the slab's allocator and
    /// every free slot, and holds no reference into the slab.
    pub unsafe fn alloc(&self, obj: T, hdr: Header) -> Option<Ref<T>> {
        // SAFETY: by the caller's contract.
        let head = unsafe { &mut *self.head.get() };
        let i = head.free;
        // SAFETY: free slots are ours by the caller's contract.
        let slot = unsafe { self.slot(i) }?;
        debug_assert!(slot.obj.is_none());
        head.free = slot.next_free;
        head.live += 1;
        slot.obj = Some(obj);
        slot.hdr = hdr;
        slot.next_free = NIL;
        Some(Ref::new(i, slot.gen))
    }

    /// Give the live slot `r` a new generation, keeping its object (whose
    /// capability count goes to 0): every reference made before is stale.
    /// Returns the new reference.
    ///
    /// # Safety
    /// The caller has the regime's permission to write slot `r` and its
    /// generation: nobody else reads or writes it meanwhile.
    pub unsafe fn renew(&self, r: Ref<T>) -> Option<Ref<T>> {
        // SAFETY: by the caller's contract.
        let slot = unsafe { self.slot(r.index()) }?;
        if slot.gen != r.gen() || slot.obj.is_none() {
            return None;
        }
        slot.gen = slot.gen.wrapping_add(1).max(1);
        slot.hdr.caps = 0;
        Some(Ref::new(r.index(), slot.gen))
    }

    /// Free the live slot `r` (bumping its generation); returns its object.
    ///
    /// # Safety
    /// As for [`Slab::alloc`].
    pub unsafe fn free(&self, r: Ref<T>) -> Option<T> {
        // SAFETY: by the caller's contract.
        let head = unsafe { &mut *self.head.get() };
        // SAFETY: by the caller's contract.
        let slot = unsafe { self.slot(r.index()) }?;
        if slot.gen != r.gen() || slot.obj.is_none() {
            return None;
        }
        let obj = slot.obj.take();
        slot.gen = slot.gen.wrapping_add(1).max(1);
        slot.hdr = Header::default();
        slot.next_free = head.free;
        head.free = r.index();
        head.live -= 1;
        obj
    }
}

/// What a capability points to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) enum CapObj {
    #[default]
    Null,
    Untyped(Ref<Untyped>),
    Tcb(Ref<Tcb>),
    Endpoint(Ref<Endpoint>),
    Notification(Ref<Notification>),
    CNode(Ref<CNode>),
    Reply(Ref<Reply>),
    Frame(Ref<Frame>),
    VSpace(Ref<VSpace>),
    IrqControl,
    IrqHandler(IrqRef),
}

/// Kind numbers of [`ObjectId`] for objects that are not an [`ObjectType`].
pub(crate) const KIND_IRQ: u8 = 8;

impl CapObj {
    pub fn is_null(self) -> bool {
        matches!(self, CapObj::Null)
    }

    /// The object as a lock-set identifier (`None` for null and IRQ control).
    pub fn id(self) -> Option<ObjectId> {
        let (kind, index) = match self {
            CapObj::Null | CapObj::IrqControl => return None,
            CapObj::Untyped(r) => (ObjectType::Untyped as u8, r.index()),
            CapObj::Tcb(r) => (ObjectType::Tcb as u8, r.index()),
            CapObj::Endpoint(r) => (ObjectType::Endpoint as u8, r.index()),
            CapObj::Notification(r) => (ObjectType::Notification as u8, r.index()),
            CapObj::CNode(r) => (ObjectType::CNode as u8, r.index()),
            CapObj::Reply(r) => (ObjectType::Reply as u8, r.index()),
            CapObj::Frame(r) => (ObjectType::Frame as u8, r.index()),
            CapObj::VSpace(r) => (ObjectType::VSpace as u8, r.index()),
            CapObj::IrqHandler(r) => (KIND_IRQ, r.irq as u32),
        };
        Some(ObjectId { kind, index })
    }

    /// Whether badges mean anything for this object.
    pub fn badgeable(self) -> bool {
        matches!(self, CapObj::Endpoint(_) | CapObj::Notification(_))
    }
}

/// A capability: an object, rights and a badge.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) struct Cap {
    pub obj: CapObj,
    pub rights: CapRights,
    pub badge: Word,
}

impl Cap {
    pub const NULL: Cap = Cap { obj: CapObj::Null, rights: CapRights::NONE, badge: 0 };

    pub fn new(obj: CapObj) -> Self {
        Self { obj, rights: CapRights::ALL, badge: 0 }
    }
}

/// Lock-set identifier of a TCB.
pub(crate) fn tcb_id(index: u32) -> ObjectId {
    ObjectId { kind: ObjectType::Tcb as u8, index }
}
