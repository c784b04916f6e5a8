//! Kernel state and the one way to reach it: the access context [`Ctx`].
//!
//! [`State`] holds the slabs and the per-core cells. All of it is interior
//! mutable (`UnsafeCell`), and all of it is reached through a [`Ctx`], which
//! exists only while the regime grants its core access (see [`Ctx::new`]).
//!
//! A `Ctx` hands out references one at a time: every accessor takes
//! `&mut self` and returns a reference borrowing the context, so within one
//! core the borrow checker guarantees no two live references alias (the few
//! places that need two objects at once — copying a message between two IPC
//! buffers — have a dedicated accessor that checks the two are distinct).
//! Between cores, the regime's contract guarantees it: under a lock only one
//! core has a `Ctx`; under `none`, cores promise to touch disjoint objects.

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicU64, AtomicU8, Ordering};

use crossbeam_utils::CachePadded;
use granule_sync::lockfree::{Mappings, Pools};

pub(crate) use crate::counter::bump;

use crate::abi::{IpcBuffer, CAP_FIRST_UNTYPED, MAX_CORES, NUM_IRQS, UNTYPED_MIN_BITS};
use crate::config::{BootConfig, BootError};
use crate::exit::{CoreMask, IrqMask};
use crate::ids::ThreadId;
use crate::introspect::CoreStats;
use crate::object::{
    CNode, Cap, CapSlot, Endpoint, Frame, Header, IrqSlot, Notification, Ref, Reply, Slab, Slot, SlotAddr, Tcb,
    Untyped, VSpace,
};
use crate::sched::core_state::CoreState;

/// Pending-IPI bit: re-run the scheduler (a thread was woken for this core).
pub(crate) const IPI_RESCHEDULE: u64 = 1;
/// Pending-IPI bit: stop running the current thread (remote stall request).
pub(crate) const IPI_STALL: u64 = 2;

/// `CoreCell::trapped`: the core runs user code (or its idle thread).
pub(crate) const TRAP_NONE: u8 = 0;
/// The core entered the kernel for a system call of its current thread that
/// has not been handled yet.
pub(crate) const TRAP_SYSCALL: u8 = 1;
/// The core entered the kernel for another reason (interrupt, tick, IPI).
pub(crate) const TRAP_OTHER: u8 = 2;

/// One core's cell: scheduler state (under the regime) and the atomics other
/// cores or the platform touch without it.
pub(crate) struct CoreCell {
    sched: UnsafeCell<CoreState>,
    /// Pending remote requests (`IPI_*` bits), set by any core under the
    /// regime, cleared by this core.
    pub pending: AtomicU64,
    /// This core has trapped into the kernel (`TRAP_*`): its user thread is
    /// not running. Set (release) before entering the regime, cleared inside it.
    pub trapped: AtomicU8,
    pub idle_cycles: AtomicU64,
    pub syscalls: AtomicU64,
    pub other_entries: AtomicU64,
    pub switches: AtomicU64,
    pub fastpath: AtomicU64,
}

/// All kernel state.
pub(crate) struct State<W> {
    pub config: BootConfig,
    pub cores: Box<[CachePadded<CoreCell>]>,
    pub tcbs: Slab<Tcb>,
    /// One IPC buffer per TCB slot (as long as `tcbs`' capacity).
    ipc: Box<[UnsafeCell<IpcBuffer>]>,
    pub endpoints: Slab<Endpoint>,
    pub notifications: Slab<Notification>,
    pub cnodes: Slab<CNode>,
    pub replies: Slab<Reply>,
    pub frames: Slab<Frame>,
    pub vspaces: Slab<VSpace>,
    pub untypeds: Slab<Untyped>,
    irqs: Box<[UnsafeCell<IrqSlot>]>,
    global: UnsafeCell<Global>,
    /// Per VSpace slot: cores that have run it (`CoreMask` bits).
    vspace_cores: Box<[AtomicU64]>,
    /// Every VSpace's page table and every frame's mapping, for every regime
    /// (`object/vspace.rs`): lock-free words, which `lockfree`'s shared
    /// paths change and the lock regimes change under their locks.
    pub mappings: Mappings,
    /// The platform's hardware translation, told of every change to
    /// `mappings` (`translation.rs`; none on the hosted platform).
    pub translations: Option<&'static dyn crate::translation::Translations>,
    /// Per untyped (by slab index), the 4 KiB frames carved from it and
    /// freed since, memory kept (`object/frame_pool.rs`): lock-free lists,
    /// which `lockfree`'s shared paths pop and push and the lock regimes
    /// use under their locks.
    pub frame_pools: Pools,
    /// Where blocked threads wait beside the objects' own queues: the
    /// regime's [`Waits`](crate::waits::Waits) (nothing for the slab-linked
    /// queues, the CAS words under `lockfree`).
    pub waits: W,
    /// The sysctl registry and the kernel log (`subsys/`).
    pub subsys: crate::subsys::Subsystems,
}

/// Kernel-wide scheduling state.
#[derive(Debug, Default)]
pub(crate) struct Global {
    /// The one thread allowed to hold remote cores stalled (see `sched.rs`).
    pub stall_owner: Option<Ref<Tcb>>,
}

// SAFETY: every `UnsafeCell` in `State` is accessed only through a `Ctx`,
// whose existence means the regime granted its core access to what it
// touches (`Regime`'s contract: a lock excludes all other cores; `NoLock`'s
// creator promised disjoint objects), with acquire/release between
// consecutive holders. The atomics are accessed directly. The frames' raw
// memory pointers are owned by their `Frame` and freed only through it.
// The wait representation `W` is shared only if it is `Sync` itself.
unsafe impl<W: Sync> Sync for State<W> {}
// SAFETY: `State` owns all its data (the frame memory included); moving it
// to another thread moves that ownership, which is sound for the same data
// types (`Vec`s, `Box`es, plain values, owned allocations).
unsafe impl<W: Send> Send for State<W> {}

/// Types that live in a slab of [`State`].
pub(crate) trait Object: Sized + 'static {
    fn slab<W>(s: &State<W>) -> &Slab<Self>;
}

/// Object types whose slabs differ from `B`'s, so that one object of each
/// can be borrowed at once ([`Ctx::get_pair`]): a queue and its member.
pub(crate) trait Distinct<B: Object>: Object {}
impl Distinct<Tcb> for Endpoint {}
impl Distinct<Tcb> for Notification {}
impl Distinct<Tcb> for Reply {}

macro_rules! object {
    ($t:ty, $field:ident) => {
        impl Object for $t {
            #[inline(always)]
            fn slab<W>(s: &State<W>) -> &Slab<Self> {
                &s.$field
            }
        }
    };
}
object!(Tcb, tcbs);
object!(Endpoint, endpoints);
object!(Notification, notifications);
object!(CNode, cnodes);
object!(Reply, replies);
object!(Frame, frames);
object!(VSpace, vspaces);
object!(Untyped, untypeds);

fn check_capacity(n: usize, min: usize) -> Result<(), BootError> {
    if n < min || n > (1 << 24) {
        Err(BootError::Capacity)
    } else {
        Ok(())
    }
}

impl<W> State<W> {
    /// Kernel state for `config`: checked, every slab and cell allocated,
    /// nothing in it yet (`boot.rs` makes the root thread and its objects).
    pub(crate) fn new(config: &BootConfig, waits: W) -> Result<Self, BootError> {
        let c = config;
        if c.cores == 0 || c.cores > MAX_CORES {
            return Err(BootError::Cores);
        }
        if c.timeslice_ticks == 0 {
            return Err(BootError::Timeslice);
        }
        if c.untyped_count == 0 || c.untyped_bytes / (c.untyped_count as u64) < (1 << UNTYPED_MIN_BITS) {
            return Err(BootError::Untyped);
        }
        if !(4..=16).contains(&c.root_cnode_bits)
            || (CAP_FIRST_UNTYPED as usize + c.untyped_count) > (1usize << c.root_cnode_bits)
        {
            return Err(BootError::RootCNode);
        }
        check_capacity(c.max_threads, 1)?;
        check_capacity(c.max_cnodes, 1)?;
        check_capacity(c.max_vspaces, 1)?;
        if c.max_vspaces > crate::object::page_tables::MAX_VSPACES {
            return Err(BootError::Capacity);
        }
        check_capacity(c.max_page_tables, 0)?;
        check_capacity(c.max_untypeds, c.untyped_count)?;
        check_capacity(c.max_endpoints, 0)?;
        check_capacity(c.max_notifications, 0)?;
        check_capacity(c.max_replies, 0)?;
        check_capacity(c.max_frames, 0)?;
        check_capacity(c.sysctl_max_nodes, 0)?;
        check_capacity(c.klog_capacity, 1)?;

        let cores: Vec<CachePadded<CoreCell>> = (0..c.cores)
            .map(|_| {
                CachePadded::new(CoreCell {
                    sched: UnsafeCell::new(CoreState::new()),
                    pending: AtomicU64::new(0),
                    trapped: AtomicU8::new(TRAP_NONE),
                    idle_cycles: AtomicU64::new(0),
                    syscalls: AtomicU64::new(0),
                    other_entries: AtomicU64::new(0),
                    switches: AtomicU64::new(0),
                    fastpath: AtomicU64::new(0),
                })
            })
            .collect();
        let ipc: Vec<UnsafeCell<IpcBuffer>> = (0..c.max_threads).map(|_| UnsafeCell::new(IpcBuffer::new())).collect();
        let irqs: Vec<UnsafeCell<IrqSlot>> = (0..NUM_IRQS).map(|_| UnsafeCell::new(IrqSlot::new())).collect();
        let state = State {
            config: c.clone(),
            cores: cores.into_boxed_slice(),
            tcbs: Slab::new(c.max_threads),
            ipc: ipc.into_boxed_slice(),
            endpoints: Slab::new(c.max_endpoints),
            notifications: Slab::new(c.max_notifications),
            cnodes: Slab::new(c.max_cnodes),
            replies: Slab::new(c.max_replies),
            frames: Slab::new(c.max_frames),
            vspaces: Slab::new(c.max_vspaces),
            untypeds: Slab::new(c.max_untypeds),
            irqs: irqs.into_boxed_slice(),
            global: UnsafeCell::new(Global::default()),
            vspace_cores: (0..c.max_vspaces).map(|_| AtomicU64::new(0)).collect(),
            mappings: crate::object::page_tables::new_mappings(c),
            translations: None,
            frame_pools: Pools::new(c.max_untypeds, c.max_frames),
            waits,
            subsys: crate::subsys::Subsystems::boot(c),
        };
        Ok(state)
    }

    /// The atomics of `core`, without a bounds check.
    ///
    /// # Safety
    /// `core` is below the number of cores the state was made for (as the
    /// index of a [`crate::CoreHandle`] of its kernel is: handles are made at
    /// boot, one per core).
    #[inline(always)]
    pub unsafe fn core_cell(&self, core: usize) -> &CoreCell {
        debug_assert!(core < self.cores.len());
        // SAFETY: by the caller's contract.
        unsafe { self.cores.get_unchecked(core) }
    }

    /// Publish that `core` trapped (`TRAP_SYSCALL` or `TRAP_OTHER`).
    ///
    /// # Safety
    /// As for [`State::core_cell`].
    #[inline(always)]
    pub unsafe fn trap(&self, core: usize, kind: u8) {
        // SAFETY: by the caller's contract.
        unsafe { self.core_cell(core) }.trapped.store(kind, Ordering::Release);
    }

    pub fn add_idle_cycles(&self, core: usize, cycles: u64) {
        let c = &self.cores[core].idle_cycles;
        // Only `core` writes its counter: a load and a store, no RMW needed.
        c.store(c.load(Ordering::Relaxed).wrapping_add(cycles), Ordering::Relaxed);
    }

    pub fn idle_cycles(&self, core: usize) -> u64 {
        self.cores.get(core).map_or(0, |c| c.idle_cycles.load(Ordering::Relaxed))
    }

    /// The general counters of `core` (the wait representation adds its
    /// own: `Kernel::core_stats`).
    pub fn core_stats(&self, core: usize) -> CoreStats {
        self.cores.get(core).map_or(CoreStats::default(), |c| CoreStats {
            syscalls: c.syscalls.load(Ordering::Relaxed),
            other_entries: c.other_entries.load(Ordering::Relaxed),
            switches: c.switches.load(Ordering::Relaxed),
            fastpath: c.fastpath.load(Ordering::Relaxed),
            idle_cycles: c.idle_cycles.load(Ordering::Relaxed),
            ..CoreStats::default()
        })
    }

    pub fn ipc_buffer_ptr(&self, index: u32) -> *mut IpcBuffer {
        self.ipc.get(index as usize).map_or(core::ptr::null_mut(), UnsafeCell::get)
    }
}

/// The part of a wait representation ([`crate::waits::Waits`]) that the
/// access context carries: the way to its own state of one core (`lockfree`:
/// a reference to its cell of inbox, published priority and counters;
/// nothing for the objects' own queues, so that their contexts carry
/// nothing), found once per entry ([`Ctx::waits_here`]). Sealed as `Waits`
/// is.
pub trait WaitsHere {
    /// The way to one core's state.
    #[doc(hidden)]
    type Here<'k>: Copy
    where
        Self: 'k;

    /// Core `core`'s [`WaitsHere::Here`].
    ///
    /// # Safety
    /// `core` is below the cores the representation was made for (the
    /// configuration's).
    #[doc(hidden)]
    unsafe fn here(&self, core: usize) -> Self::Here<'_>;
}

/// The access context of one kernel entry on one core.
pub(crate) struct Ctx<'k, W: WaitsHere> {
    pub s: &'k State<W>,
    pub core: usize,
    /// `core`'s cell, found once when the context is made (the hot paths
    /// reach their own core's state through it, with no index check).
    here: &'k CoreCell,
    /// `core`'s state of the wait representation, found likewise.
    waits_here: W::Here<'k>,
    /// Cores to interrupt when this entry returns.
    pub ipis: CoreMask,
    /// IRQs to acknowledge when this entry returns.
    pub irq_acks: IrqMask,
}

impl<'k, W: WaitsHere> Ctx<'k, W> {
    /// # Safety
    ///
    /// Until the context is dropped, the regime grants core `core` access to
    /// every object the context will touch (the caller entered the regime as
    /// `core`, or nothing else can reach `s`), and no other thread acts as
    /// `core`. (Under `lockfree`'s shared paths the grant is per object, by
    /// the ownership protocol of `crate::lockfree`, and the context is used
    /// only as that protocol allows.) `core` is below the number of cores
    /// `s` was made for ([`State::core_cell`]).
    pub unsafe fn new(s: &'k State<W>, core: usize) -> Self {
        // SAFETY: by the caller's contract.
        let here = unsafe { s.core_cell(core) };
        // SAFETY: by the caller's contract, `core` is below the cores `s`
        // (and so its wait representation) was made for.
        let waits_here = unsafe { s.waits.here(core) };
        Self { s, core, here, waits_here, ipis: CoreMask::EMPTY, irq_acks: IrqMask(0) }
    }

    /// This core's state of the wait representation ([`WaitsHere`]).
    #[inline(always)]
    pub(crate) fn waits_here(&self) -> W::Here<'k> {
        self.waits_here
    }

    /// The slot behind `r` if it is live with `r`'s generation.
    #[inline(always)]
    pub fn slot<T: Object>(&mut self, r: Ref<T>) -> Option<&mut Slot<T>> {
        // SAFETY: `Ctx::new`'s contract gives this core access; `&mut self`
        // makes this the only live reference handed out by this context.
        unsafe { T::slab(self.s).live(r) }
    }

    /// The object behind `r`, if live.
    #[inline(always)]
    pub fn get<T: Object>(&mut self, r: Ref<T>) -> Option<&mut T> {
        Some(self.slot(r)?.obj())
    }

    /// Read-only access to the object behind `r`, if live. Lookups use this,
    /// so that cores sharing an object they only read (a CNode holding both
    /// ping-pong pairs' capabilities) never create `&mut` to it.
    #[inline(always)]
    pub fn read<T: Object>(&self, r: Ref<T>) -> Option<&T> {
        // SAFETY: `Ctx::new`'s contract gives this core access; `&self`
        // excludes every `&mut` handed out by this context for as long as the
        // result lives, and the regime's contract excludes writers on other
        // cores.
        Some(unsafe { T::slab(self.s).live_ref(r) }?.obj_ref())
    }

    /// Whether `r` names a live object: its generation is the slot's (a
    /// slot's generation moves on when it is freed, and references are only
    /// made from live slots). Reads the generation alone, so it may ask about
    /// an object another core is using under a lock (see the `fine` regime).
    #[inline(always)]
    pub fn live<T: Object>(&self, r: Ref<T>) -> bool {
        // SAFETY: allocation and freeing happen only where the regime grants
        // the whole kernel (`Regime`'s contract), never while this context
        // exists beside another core's, so the generation is stable here.
        // The one exception, a frame renewed on `lockfree`'s shared path
        // (`lockfree/pages.rs`), is renewed only after a grace period
        // in which every core that could name it has left its entry.
        unsafe { T::slab(self.s).is_live(r) }
    }

    /// The live TCB a thread identity from outside the kernel names.
    #[inline(always)]
    pub fn tcb_of(&self, t: ThreadId) -> Option<Ref<Tcb>> {
        self.ref_at::<Tcb>(t.index).filter(|r| r.gen() == t.gen)
    }

    /// The live TCB a thread identity names, itself (one look at its slot).
    #[inline(always)]
    pub fn thread_mut(&mut self, t: ThreadId) -> Option<&mut Tcb> {
        self.at::<Tcb>(t.index).filter(|(r, _)| r.gen() == t.gen).map(|(_, x)| x)
    }

    /// The object behind `r`, known to be live: [`Ctx::get`] without the
    /// generation check, for the IPC fast path's steps after it has checked
    /// (`fastpath.rs`).
    ///
    /// # Safety
    /// `r` is live, and stays so while the result lives: this entry found it
    /// live (a [`Ctx::get`], a capability look-up's liveness check, or
    /// [`Ctx::ref_at`]) and has freed no object since. (Outside `lockfree`'s
    /// shared paths only a whole-kernel entry frees objects, and no other
    /// entry runs beside one; a shared path frees no thread, and its fast
    /// path calls this only for threads.)
    #[inline(always)]
    pub unsafe fn get_live<T: Object>(&mut self, r: Ref<T>) -> &mut T {
        // SAFETY: as in `slot`; `r` is live by the caller's contract.
        unsafe { T::slab(self.s).live_known(r) }.obj()
    }

    /// [`Ctx::get_pair`] of two objects known to be live.
    ///
    /// # Safety
    /// As for [`Ctx::get_live`], for both.
    #[inline(always)]
    pub unsafe fn get_pair_live<A: Object + Distinct<B>, B: Object>(
        &mut self,
        a: Ref<A>,
        b: Ref<B>,
    ) -> (&mut A, &mut B) {
        // SAFETY: as in `get_pair`, and both are live by the caller's
        // contract.
        let sa = unsafe { A::slab(self.s).live_known(a) };
        // SAFETY: as above.
        let sb = unsafe { B::slab(self.s).live_known(b) };
        (sa.obj(), sb.obj())
    }

    /// [`Ctx::get_pair`] of `a`, known to be live, and `b`, checked: `None`
    /// if `b` is not live.
    ///
    /// # Safety
    /// As for [`Ctx::get_live`], for `a`.
    #[inline(always)]
    pub unsafe fn get_live_and<A: Object + Distinct<B>, B: Object>(
        &mut self,
        a: Ref<A>,
        b: Ref<B>,
    ) -> Option<(&mut A, &mut B)> {
        // SAFETY: as in `get_pair`; `a` is live by the caller's contract.
        let sa = unsafe { A::slab(self.s).live_known(a) };
        // SAFETY: as in `get_pair`.
        let sb = unsafe { B::slab(self.s).live(b) }?;
        Some((sa.obj(), sb.obj()))
    }

    /// Two live objects of two different types at once (see [`Distinct`]).
    #[inline(always)]
    pub fn get_pair<A: Object + Distinct<B>, B: Object>(&mut self, a: Ref<A>, b: Ref<B>) -> Option<(&mut A, &mut B)> {
        // SAFETY: as in `slot`, for one slot of each of two slabs: `Distinct`
        // types live in different slabs, so the two references never alias
        // each other, and `&mut self` keeps every other reference this
        // context hands out away while they live.
        let sa = unsafe { A::slab(self.s).live(a) }?;
        // SAFETY: as above.
        let sb = unsafe { B::slab(self.s).live(b) }?;
        Some((sa.obj(), sb.obj()))
    }

    /// The live object at slab index `i`, with its reference.
    #[inline(always)]
    pub fn at<T: Object>(&mut self, i: u32) -> Option<(Ref<T>, &mut T)> {
        // SAFETY: as in `slot`.
        unsafe { T::slab(self.s).at(i) }
    }

    /// The first slot of `T`'s slab whose generation and object disagree
    /// (the invariant checker's question; see `object/slab.rs`).
    pub fn inconsistent_slot<T: Object>(&mut self) -> Option<u32> {
        // SAFETY: as in `slot`, for every slot of the slab.
        unsafe { T::slab(self.s).inconsistent_slot() }
    }

    /// The reference of the live object at slab index `i`, an index from
    /// anywhere (checked); its generation is read as [`Ctx::live`] reads it,
    /// without a reference to the slot.
    #[inline(always)]
    pub fn ref_at<T: Object>(&self, i: u32) -> Option<Ref<T>> {
        // SAFETY: as in `live`.
        unsafe { T::slab(self.s).ref_at(i) }
    }

    pub fn alloc<T: Object>(&mut self, obj: T, hdr: Header) -> Option<Ref<T>> {
        // SAFETY: as in `slot`; the allocator is part of what the regime grants
        // (a `NoLock` platform promised no concurrent allocation), and no
        // reference into the slab is live while `&mut self` is borrowed here.
        unsafe { T::slab(self.s).alloc(obj, hdr) }
    }

    pub fn free<T: Object>(&mut self, r: Ref<T>) -> Option<T> {
        // SAFETY: as in `alloc`.
        unsafe { T::slab(self.s).free(r) }
    }

    pub fn free_slots<T: Object>(&mut self) -> usize {
        // SAFETY: as in `alloc`.
        unsafe { T::slab(self.s).free_slots() }
    }

    #[inline(always)]
    pub fn tcb_mut(&mut self, r: Ref<Tcb>) -> Option<&mut Tcb> {
        self.get(r)
    }

    /// The TCB at index `i`, which the caller knows is live (intrusive list
    /// members are). Panics otherwise: a broken kernel invariant, never
    /// reachable from user input.
    #[inline(always)]
    pub fn tcb_at(&mut self, i: u32) -> &mut Tcb {
        match self.at::<Tcb>(i) {
            Some((_, t)) => t,
            None => panic!("kernel invariant: TCB {i} in a queue is not live"),
        }
    }

    /// The IPC buffer cell of TCB `t`'s slot, without a bounds check.
    #[inline(always)]
    fn ipc_cell(&self, t: Ref<Tcb>) -> &UnsafeCell<IpcBuffer> {
        debug_assert!((t.index() as usize) < self.s.ipc.len());
        // SAFETY: `ipc` has one buffer per slot of the TCB slab (`State::new`
        // makes both `max_threads` long, and neither changes), and a
        // reference's index is below its slab's capacity (`object/slab.rs`).
        unsafe { self.s.ipc.get_unchecked(t.index() as usize) }
    }

    /// The IPC buffer of TCB `t`'s slot.
    #[inline(always)]
    pub fn ipc(&mut self, t: Ref<Tcb>) -> &mut IpcBuffer {
        // SAFETY: the buffer's thread is this core's current thread inside its
        // system call, or not running anywhere (`IpcBuffer`'s contract), so
        // neither user code nor another core touches it; `&mut self` makes
        // this the only reference handed out by this context.
        unsafe { &mut *self.ipc_cell(t).get() }
    }

    /// The IPC buffers of two distinct TCB slots: `src` to read, `dst` to write.
    #[inline(always)]
    pub fn ipc_pair(&mut self, src: Ref<Tcb>, dst: Ref<Tcb>) -> Option<(&IpcBuffer, &mut IpcBuffer)> {
        if src.index() == dst.index() {
            return None;
        }
        let (a, b) = (self.ipc_cell(src), self.ipc_cell(dst));
        // SAFETY: as in `ipc`, for two distinct cells.
        Some(unsafe { (&*a.get(), &mut *b.get()) })
    }

    /// The scheduler state of `core` (any core: remote ready queues too).
    #[inline(always)]
    pub fn cs(&mut self, core: usize) -> &mut CoreState {
        // SAFETY: per-core scheduler state is kernel state like any object:
        // the regime grants access to it (`NoLock` platforms promised not to
        // touch another core's while it is in the kernel); `&mut self` makes
        // this the only reference handed out by this context.
        unsafe { &mut *self.s.cores[core].sched.get() }
    }

    /// This core's scheduler state (`cs(self.core)`, without the index).
    #[inline(always)]
    pub fn own(&mut self) -> &mut CoreState {
        // SAFETY: as in `cs`, for this context's own core.
        unsafe { &mut *self.here.sched.get() }
    }

    /// This core's atomics (`cell(self.core)`, without the index).
    #[inline(always)]
    pub fn own_cell(&self) -> &'k CoreCell {
        self.here
    }

    /// The atomics of `core`.
    #[inline(always)]
    pub fn cell(&self, core: usize) -> &'k CoreCell {
        &self.s.cores[core]
    }

    /// Read-only IRQ slot `irq` (`irq < NUM_IRQS`).
    pub fn irq_ref(&self, irq: usize) -> &IrqSlot {
        // SAFETY: as in `read`.
        unsafe { &*self.s.irqs[irq].get() }
    }

    /// IRQ slot `irq` (`irq < NUM_IRQS`).
    pub fn irq(&mut self, irq: usize) -> &mut IrqSlot {
        // SAFETY: as in `cs`.
        unsafe { &mut *self.s.irqs[irq].get() }
    }

    /// The capability slot at `a` if its CNode is live and the index in range.
    #[inline(always)]
    pub fn cap_slot(&mut self, a: SlotAddr) -> Option<&mut CapSlot> {
        self.get(a.cnode)?.slots.get_mut(a.index as usize)
    }

    /// Read-only access to the capability slot at `a`.
    #[inline(always)]
    pub fn cap_ref(&self, a: SlotAddr) -> Option<&CapSlot> {
        self.read(a.cnode)?.slots.get(a.index as usize)
    }

    /// The capability at `a` (null if the slot does not exist).
    #[inline(always)]
    pub fn cap_at(&self, a: SlotAddr) -> Cap {
        self.cap_ref(a).map_or(Cap::NULL, |s| s.cap.get())
    }

    /// The bitmap of cores that have run VSpace slot `i` (an atomic outside
    /// the slab: every core sets its own bit on every switch, and address
    /// spaces are commonly shared by threads of different cores).
    #[inline(always)]
    pub fn vspace_cores(&self, i: u32) -> Option<&'k AtomicU64> {
        self.s.vspace_cores.get(i as usize)
    }

    /// Kernel-wide scheduling state.
    pub fn global(&mut self) -> &mut Global {
        // SAFETY: as in `cs`.
        unsafe { &mut *self.s.global.get() }
    }

    /// The thread holding remote cores stalled, if any: a read through the
    /// cell, with no reference to the whole `Global` made, since shared
    /// paths on several cores may ask at once (`lockfree`'s decoders).
    pub fn stall_owner(&self) -> Option<Ref<Tcb>> {
        // SAFETY: the regime grants access as in `cs`; the owner is written
        // only where the whole kernel is held (`sched.rs`), never beside a
        // shared path, so a read from one is a read of a value no one
        // writes meanwhile.
        unsafe { (*self.s.global.get()).stall_owner }
    }
}
