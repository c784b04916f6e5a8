//! Typed slabs and the references into them.
//!
//! Every object type has a [`Slab`]: a fixed array of slots allocated at boot
//! (so slot addresses never move and no core ever reallocates memory another
//! core may be reading). A slot holds a generation, a [`Header`] and the
//! object. A reference ([`Ref`]) is a slot index plus the generation it was
//! made with; freeing a slot moves its generation on, so an old reference is
//! *detected* as stale and never followed.
//!
//! Two invariants make following a reference one comparison, with no bounds
//! check and no test of the slot's `Option` (the kernel's path is the big
//! lock's hold time; these checks were about one instruction in ten of an IPC
//! round trip):
//!
//! * **A `Ref<T>`'s index is below the capacity of the `T` slab of the kernel
//!   that uses it, and its generation is live-shaped** (not 0, [`FREE`]
//!   clear). Every reference is made by its slab (a live slot's) or from a
//!   word such a reference was turned into ([`Ref::raw`]), which is why
//!   [`Ref::from_raw`] is `unsafe`; an index or thread identity from outside
//!   the kernel becomes a reference only through [`Slab::ref_at`], which
//!   checks it.
//! * **A slot holds an object exactly when its generation has [`FREE`]
//!   clear.** Only this file writes a slot's generation or object (both are
//!   private to it), in `alloc`, `free` and `renew`, which keep it so. A
//!   reference's generation equal to its slot's therefore means the object is
//!   there.
//!
//! Free slots form a singly linked free list through the slots. Slab access
//! is `unsafe`: the caller must hold the regime's permission for the slot (see
//! [`crate::state::Ctx`], the only caller).

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::cell::UnsafeCell;
use core::fmt;
use core::marker::PhantomData;
use core::num::NonZeroU64;

use super::NIL;

/// The generation bit that marks a free slot. A live slot's generation, and
/// every reference's, has it clear.
const FREE: u32 = 1 << 31;

/// The generation after `gen` (live-shaped: never 0, [`FREE`] clear).
const fn next_gen(gen: u32) -> u32 {
    let g = gen.wrapping_add(1) & !FREE;
    if g == 0 {
        1
    } else {
        g
    }
}

/// A generation-checked reference to an object of type `T`: slab index in
/// the low 32 bits, generation (never 0, [`FREE`] clear) in the high 32 bits,
/// so that `Option<Ref<T>>` is one word, written and read whole. See the
/// module documentation for the invariant every reference keeps.
pub(crate) struct Ref<T> {
    raw: NonZeroU64,
    _t: PhantomData<fn() -> T>,
}

impl<T> Ref<T> {
    /// A reference to slot `index` with the live generation `gen` (this
    /// file's constructor: `gen` is read from a live slot).
    #[inline(always)]
    fn made(index: u32, gen: u32) -> Self {
        debug_assert!(gen != 0 && gen & FREE == 0, "a live generation");
        // SAFETY: a live generation is never 0 (`next_gen`, `Slab::new`), so
        // neither is the word.
        let raw = unsafe { NonZeroU64::new_unchecked(u64::from(gen) << 32 | u64::from(index)) };
        Self { raw, _t: PhantomData }
    }

    /// The reference as one word (`gen << 32 | index`, never 0).
    #[inline(always)]
    pub const fn raw(self) -> NonZeroU64 {
        self.raw
    }

    /// The reference whose word is `raw`.
    ///
    /// # Safety
    /// `raw` is [`Ref::raw`] of a `Ref<T>` of the kernel that will use the
    /// result (so it keeps the module's reference invariant).
    #[inline(always)]
    pub const unsafe fn from_raw(raw: NonZeroU64) -> Self {
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
    pub parent: Option<Ref<super::Untyped>>,
    /// Bytes charged to `parent`.
    pub bytes: u64,
}

/// One slab slot. Outside this file a `&Slot` or `&mut Slot` exists only for
/// a live slot (handed out by [`Slab::live`] and [`Slab::live_ref`]).
#[derive(Debug)]
pub(crate) struct Slot<T> {
    gen: u32,
    pub hdr: Header,
    obj: Option<T>,
    next_free: u32,
}

impl<T> Slot<T> {
    /// The slot's object.
    #[inline(always)]
    pub fn obj(&mut self) -> &mut T {
        // SAFETY: slots outside this file are live (the type's
        // documentation), and a live slot holds its object (the module's
        // slot invariant).
        unsafe { self.obj.as_mut().unwrap_unchecked() }
    }

    /// The slot's object, to read.
    #[inline(always)]
    pub fn obj_ref(&self) -> &T {
        // SAFETY: as in `obj`.
        unsafe { self.obj.as_ref().unwrap_unchecked() }
    }

    /// Whether the slot holds its object as its generation says.
    fn consistent(&self) -> bool {
        (self.gen & FREE == 0) == self.obj.is_some() && self.gen & !FREE != 0
    }
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
                UnsafeCell::new(Slot { gen: 1 | FREE, hdr: Header::default(), obj: None, next_free: next })
            })
            .collect();
        let free = if capacity == 0 { NIL } else { 0 };
        Self { slots: slots.into_boxed_slice(), head: UnsafeCell::new(SlabHead { free, live: 0 }) }
    }

    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// The cell of `r`'s slot, without a bounds check.
    #[inline(always)]
    fn cell(&self, r: Ref<T>) -> &UnsafeCell<Slot<T>> {
        debug_assert!((r.index() as usize) < self.slots.len(), "a reference beyond its slab");
        // SAFETY: a reference's index is below its slab's capacity (the
        // module's reference invariant).
        unsafe { self.slots.get_unchecked(r.index() as usize) }
    }

    /// The slot at `i` in any state, or `None` if out of range.
    ///
    /// # Safety
    /// The caller has the regime's permission to access slot `i` and holds no
    /// other reference to it.
    #[inline(always)]
    #[allow(clippy::mut_from_ref)]
    unsafe fn slot(&self, i: u32) -> Option<&mut Slot<T>> {
        let cell = self.slots.get(i as usize)?;
        // SAFETY: by the caller's contract no other reference to this slot is
        // live and no other core accesses it.
        Some(unsafe { &mut *cell.get() })
    }

    /// The slot of the live object `r` names, or `None` if it is stale.
    ///
    /// # Safety
    /// The caller has the regime's permission to access `r`'s slot and holds
    /// no other reference to it.
    #[inline(always)]
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn live(&self, r: Ref<T>) -> Option<&mut Slot<T>> {
        // SAFETY: by the caller's contract no other reference to this slot is
        // live and no other core accesses it.
        let slot = unsafe { &mut *self.cell(r).get() };
        (slot.gen == r.gen()).then_some(slot)
    }

    /// The slot of `r`, known to be live: [`Slab::live`] without the
    /// generation check (checked only under debug assertions).
    ///
    /// # Safety
    /// As for [`Slab::live`], and `r` is live: its generation is its slot's.
    #[inline(always)]
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn live_known(&self, r: Ref<T>) -> &mut Slot<T> {
        // SAFETY: by the caller's contract no other reference to this slot is
        // live and no other core accesses it.
        let slot = unsafe { &mut *self.cell(r).get() };
        debug_assert_eq!(slot.gen, r.gen(), "a reference known to be live is stale");
        slot
    }

    /// Shared access to the slot of the live object `r` names, or `None`.
    ///
    /// # Safety
    /// The caller has the regime's permission to read `r`'s slot: no
    /// reference that allows writing it is live, here or on another core.
    #[inline(always)]
    pub unsafe fn live_ref(&self, r: Ref<T>) -> Option<&Slot<T>> {
        // SAFETY: by the caller's contract nobody writes the slot meanwhile.
        let slot = unsafe { &*self.cell(r).get() };
        (slot.gen == r.gen()).then_some(slot)
    }

    /// Whether `r` names a live object, reading the generation alone.
    ///
    /// # Safety
    /// The caller has the regime's permission to read `r`'s slot's
    /// generation: no allocation or freeing of the slot runs meanwhile (other
    /// fields of the slot may be in use elsewhere: only the generation is
    /// read, through a raw pointer, without a reference to the slot).
    #[inline(always)]
    pub unsafe fn is_live(&self, r: Ref<T>) -> bool {
        // SAFETY: `cell.get()` points to a valid slot; by the caller's
        // contract nobody writes its `gen` field meanwhile, and reading one
        // field through a raw pointer creates no reference that could alias
        // another core's `&mut` to the rest of the slot.
        let gen = unsafe { core::ptr::addr_of!((*self.cell(r).get()).gen).read() };
        gen == r.gen()
    }

    /// The reference to the live object at slab index `i` (an index from
    /// anywhere: checked), reading the generation as [`Slab::is_live`] does.
    ///
    /// # Safety
    /// As for [`Slab::is_live`], for slot `i`.
    #[inline(always)]
    pub unsafe fn ref_at(&self, i: u32) -> Option<Ref<T>> {
        let cell = self.slots.get(i as usize)?;
        // SAFETY: as in `is_live`.
        let gen = unsafe { core::ptr::addr_of!((*cell.get()).gen).read() };
        (gen & FREE == 0).then(|| Ref::made(i, gen))
    }

    /// The capability count of `r`'s slot if `r` is live, read as
    /// [`Slab::is_live`] reads the generation.
    ///
    /// # Safety
    /// As for [`Slab::is_live`], for the generation and the header: nobody
    /// writes them meanwhile.
    #[inline(always)]
    pub unsafe fn caps(&self, r: Ref<T>) -> Option<u32> {
        let cell = self.cell(r);
        // SAFETY: as in `is_live`, for the `gen` and `hdr.caps` fields.
        let (gen, caps) = unsafe {
            (core::ptr::addr_of!((*cell.get()).gen).read(), core::ptr::addr_of!((*cell.get()).hdr.caps).read())
        };
        (gen == r.gen()).then_some(caps)
    }

    /// The live object at slab index `i` (checked), with its reference.
    ///
    /// # Safety
    /// As for [`Slab::slot`].
    #[inline(always)]
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn at(&self, i: u32) -> Option<(Ref<T>, &mut T)> {
        // SAFETY: by the caller's contract.
        let slot = unsafe { self.slot(i) }?;
        let gen = slot.gen;
        slot.obj.as_mut().map(|o| (Ref::made(i, gen), o))
    }

    /// The first slot whose generation and object disagree, if any (the
    /// invariant checker's question).
    ///
    /// # Safety
    /// The caller has the regime's permission to read every slot.
    pub unsafe fn inconsistent_slot(&self) -> Option<u32> {
        (0..self.slots.len()).find_map(|i| {
            // SAFETY: by the caller's contract.
            let slot = unsafe { &*self.slots[i].get() };
            (!slot.consistent()).then_some(i as u32)
        })
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
        slot.gen &= !FREE;
        slot.hdr = hdr;
        slot.next_free = NIL;
        Some(Ref::made(i, slot.gen))
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
        let slot = unsafe { self.live(r) }?;
        slot.gen = next_gen(slot.gen);
        slot.hdr.caps = 0;
        Some(Ref::made(r.index(), slot.gen))
    }

    /// Free the live slot `r` (moving its generation on); returns its object.
    ///
    /// # Safety
    /// As for [`Slab::alloc`].
    pub unsafe fn free(&self, r: Ref<T>) -> Option<T> {
        // SAFETY: by the caller's contract.
        let head = unsafe { &mut *self.head.get() };
        // SAFETY: by the caller's contract.
        let slot = unsafe { self.live(r) }?;
        let obj = slot.obj.take();
        slot.gen = next_gen(slot.gen) | FREE;
        slot.hdr = Header::default();
        slot.next_free = head.free;
        head.free = r.index();
        head.live -= 1;
        obj
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generations_say_whether_a_slot_is_live() {
        let slab = Slab::<u64>::new(2);
        // SAFETY: the test owns the slab.
        unsafe {
            assert_eq!(slab.inconsistent_slot(), None);
            assert_eq!(slab.ref_at(0), None, "a free slot has no reference");
            assert_eq!(slab.ref_at(2), None, "beyond the slab");
            let a = slab.alloc(7, Header::default()).unwrap();
            assert_eq!(slab.ref_at(a.index()), Some(a));
            assert_eq!(*slab.live(a).unwrap().obj(), 7);
            let b = slab.renew(a).unwrap();
            assert!(slab.live(a).is_none() && !slab.is_live(a), "renewing makes the old reference stale");
            assert_eq!(*slab.live(b).unwrap().obj(), 7);
            assert_eq!(slab.free(b), Some(7));
            assert!(slab.live(b).is_none() && slab.caps(b).is_none() && slab.ref_at(b.index()).is_none());
            assert_eq!(slab.inconsistent_slot(), None);
            let c = slab.alloc(9, Header::default()).unwrap();
            assert_eq!(c.index(), b.index());
            assert!(c.gen() != b.gen() && c.gen() & FREE == 0);
            assert!(slab.live(b).is_none(), "a reference to the slot's earlier object stays stale");
        }
    }

    #[test]
    fn generations_wrap_past_zero_and_the_free_bit() {
        assert_eq!(next_gen(1), 2);
        assert_eq!(next_gen(FREE - 1), 1);
        assert_eq!(next_gen((FREE - 1) | FREE), 1);
        assert_eq!(next_gen(u32::MAX), 1);
    }
}
