//! The `fine` regime: a big-reader lock plus one ticket lock per object.
//!
//! The design of the seeds' fine-grained seL4 (Peters et al., §3.3), less
//! its TCB locks (see "What a held lock protects"):
//!
//! * **Shared entries.** IPC, notification, interrupt, tick and IPI entries
//!   take the *read side* of a big-reader lock (one ticket lock per core,
//!   the algorithm of [`granule_sync::rw::BrLock`]), then ticket locks on
//!   exactly what they touch: the endpoint or notification, the reply
//!   objects and the partner core's scheduler. The kernel's paths hold each one
//!   just before they read it (`hold.rs`: the fast path's guards, the
//!   resolvers of the general path), so every object is *identified* from
//!   what is already held before anything reads it. The operation's lock
//!   set names nothing more, so it is not offered again
//!   ([`FineOptions::check_holds`] turns that into a check, for tests).
//! * **A core's reader lock is its scheduler lock.** The brlock's reader
//!   lock of core `c` also guards `c`'s scheduler state (ready queues,
//!   current thread). A shared entry of core `c` holds it from the start —
//!   that is its read side — and a wake-up from another core takes it as
//!   "the remote core's ready queue". Holding *any* reader lock excludes the
//!   write side (which holds them all), so one ticket lock per entry does
//!   both jobs and a shared entry pays no separate atomic for the read side.
//! * **Exclusive entries.** Every other system call (object invocations,
//!   capability transfer, waking a bound thread, faults, introspection) takes
//!   the *write side*, which holds every core's reader lock and so excludes
//!   every other entry. Objects are allocated and freed only there.
//!
//! # Lock order
//!
//! Locks are numbered in this order: the cores' reader (= scheduler) locks
//! by core, then endpoints, notifications, reply objects and IRQ handlers,
//! each by slab index. All of them live in one array in that order
//! (so a lock number is an index, and the order is also their address
//! order); the reader locks are its first `cores` entries, laid out as
//! `BrLock` lays out its own, so that one lookup serves every class. The
//! write side takes every
//! reader lock in core order, so it follows the same order; it excludes
//! every shared entry.
//!
//! [`Regime::lock_more`] *waits* for a lock only if its index is above every
//! lock the core already holds; any other lock it only *tries*. So every wait
//! follows the order and no cycle of waiting cores can form. When a try fails
//! the kernel releases everything and starts the entry again, this time
//! taking the whole set it learnt in order from the start (re-validating the
//! state it reads on the way), and after a few failed rounds it takes the
//! write side instead.
//!
//! # What a held lock protects
//!
//! A lock protects its object, and a few objects are protected by the lock of
//! the structure they sit in: a thread waiting in an endpoint's or a
//! notification's queue by that endpoint's or notification's lock, a thread
//! waiting for a reply by the reply object's lock, a thread in a ready queue
//! by its core's lock, and a core's current thread by that core's lock. A
//! thread leaves one of these places only while its lock is held, and a
//! shared entry reaches a thread only through a place it holds, so these
//! rules cover every thread a shared entry touches. The seeds' kernel also
//! locks the caller's and the partner's TCB; here those two locks per call
//! would guard nothing more, so TCBs have no lock (`hold.rs`). The
//! capability slots of CNodes, TCB
//! affinity, priority, CSpace and bound notification, IRQ handler bindings
//! and every slot's generation change only under the write side, so shared
//! entries may read them unlocked.
//!
//! # Fault injection
//!
//! [`FineOptions`] can make a core spin for a random time right after it took
//! new object locks, which widens the windows in which another core meets
//! them held (`granule verify --fault-injection`).

#[cfg(test)]
mod tests;

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::cell::UnsafeCell;
use core::panic::Location;
use core::sync::atomic::{AtomicU64, Ordering};

use crossbeam_utils::CachePadded;
use granule_sync::cycles;
use granule_sync::lock::{RawLock, Ticket};
use granule_sync::profile::{LockStats, NoStats};

use super::{LockSet, LockTarget, ObjectId, ObjectLocks, Objects, Queues, Regime};
use crate::abi::ObjectType;
use crate::config::BootConfig;
use crate::counter::bump;
use crate::object::KIND_IRQ;

/// Most locks a core holds at once in a shared entry; an entry that needs
/// more is run exclusively.
const MAX_HELD: usize = 24;

/// [`Held::flags`]: the core's next system call must be exclusive.
const ESCALATE: u8 = 1;
/// [`Held::flags`]: fault injection is on (a copy of the options' test).
const DELAYS: u8 = 2;
/// [`Held::flags`]: the core holds the write side.
const EXCLUSIVE: u8 = 4;
/// [`Held::flags`]: `Held::idx[0]` may not be the core's own number (a
/// retry round took its learnt set from nothing, `lock_more`): the next
/// shared entry starts the flagged way, which writes it.
const REFILL: u8 = 8;

/// The classes of object locks, in lock order after the cores.
const CLASSES: [(u8, &str); 4] = [
    (ObjectType::Endpoint as u8, "fine.endpoint"),
    (ObjectType::Notification as u8, "fine.notification"),
    (ObjectType::Reply as u8, "fine.reply"),
    (KIND_IRQ, "fine.irq"),
];

/// Object kinds ([`ObjectId::kind`] values), lockable or not.
const KINDS: usize = KIND_IRQ as usize + 1;

/// Options of the `fine` regime.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FineOptions {
    /// Fault injection: after taking new object locks, spin for a random
    /// number of cycles below this bound (0: never).
    pub delay_max_cycles: u64,
    /// Fault injection: how often (out of 1000 lock steps) to spin.
    pub delay_permille: u32,
    /// Seed of the per-core random streams.
    pub seed: u64,
    /// Checking (`granule verify`, the kernel's `under_fine` suites and its
    /// `fine` stress tests): the kernel offers
    /// each operation's lock set before its point of no return, and the
    /// regime asserts that the entry's holds already cover it — that every
    /// resolver held what its operation touches. Off, the kernel offers no
    /// set: the holds are the whole protocol.
    pub check_holds: bool,
}

/// What one core holds; touched only by that core.
///
/// `idx[0]` is the core's own number whenever an entry starts with its
/// flags clear: the first lock of a shared entry is the core's reader lock
/// (`start_shared`), except in a retry round, whose `lock_more` takes its
/// learnt set from nothing in lock order and sets [`REFILL`]. So the
/// common start need not write it.
///
/// `len` and `above` are adjacent 32-bit fields (`repr(C)`), so that the
/// end of an entry clears both with one store.
#[derive(Debug)]
#[repr(C)]
struct Held {
    idx: [u32; MAX_HELD],
    len: u32,
    /// One above the highest lock number held; 0 when none is (so that
    /// "below something held" is one comparison).
    above: u32,
    /// [`ESCALATE`], [`DELAYS`], [`EXCLUSIVE`] and [`REFILL`]: a shared
    /// entry's start tests them all in one comparison; a hold tests
    /// [`EXCLUSIVE`] before its lock and [`DELAYS`] after it.
    flags: u8,
    /// xorshift state for fault injection.
    rng: u64,
}

impl Held {
    /// Whether lock `i` is held.
    #[inline(always)]
    fn holds(&self, i: u32) -> bool {
        self.taken().contains(&i)
    }

    /// The lock numbers held, in the order taken. (`len` never exceeds
    /// `MAX_HELD`: `take` and `take_below` refuse a lock beyond it; the
    /// `min` says so to the compiler, which then checks no bound.)
    #[inline(always)]
    fn taken(&self) -> &[u32] {
        &self.idx[..(self.len as usize).min(MAX_HELD)]
    }
}

#[derive(Debug)]
struct PerCore {
    held: UnsafeCell<Held>,
    /// Event counts (kept only when `S` profiles; written by this core).
    counts: [AtomicU64; 5],
}

/// What the `fine` regime did, summed over cores (counted only when the
/// regime is profiled, so unprofiled runs pay nothing for it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FineCounts {
    /// Shared entries (their read side is their core's reader lock, counted
    /// in `waited` or `tried` with the other locks).
    pub shared: u64,
    /// Exclusive entries (write side taken).
    pub exclusive: u64,
    /// Object locks taken by waiting (`lock xadd`).
    pub waited: u64,
    /// Object locks taken by trying (`lock cmpxchg`), successful or not.
    pub tried: u64,
    /// Tries that failed (the entry released everything and started again).
    pub failed: u64,
}

const C_SHARED: usize = 0;
const C_EXCLUSIVE: usize = 1;
const C_WAITED: usize = 2;
const C_TRIED: usize = 3;
const C_FAILED: usize = 4;

/// The `fine` regime (see the module documentation). `S` profiles the brlock's
/// write side and each class of locks (one profile per class, named
/// `fine.core` — the reader locks —, `fine.endpoint`, …).
#[derive(Debug)]
pub struct Fine<S: LockStats = NoStats> {
    /// Every lock, by lock number: the cores' reader locks, then the
    /// objects' (each `Ticket` is alone in its cache lines).
    locks: Box<[Ticket]>,
    /// Profile of the write side (`fine.brlock`).
    write_stats: S,
    /// Start of each class in the lock numbers (index 0 = cores), plus the end.
    base: [u32; CLASSES.len() + 2],
    /// By object kind ([`ObjectId::kind`]): the start of its locks in
    /// `locks` and how many there are (0 for kinds that have no lock).
    kinds: [(u32, u32); KINDS],
    stats: Vec<S>,
    cores: usize,
    per_core: Box<[CachePadded<PerCore>]>,
    options: FineOptions,
}

// SAFETY: `per_core[c].held` is only ever accessed by the thread acting as
// core `c` (the kernel calls the regime as `core` only with that core's
// `CoreHandle`, which is `&mut`-exclusive), so the `UnsafeCell` is never
// shared between threads; everything else is `Sync` already.
unsafe impl<S: LockStats> Sync for Fine<S> {}

impl<S: LockStats> Fine<S> {
    /// The regime for a kernel booted with `config`, without fault injection.
    pub fn new(config: &BootConfig) -> Self {
        Self::with_options(config, FineOptions::default())
    }

    /// The regime for a kernel booted with `config`, with `options`.
    pub fn with_options(config: &BootConfig, options: FineOptions) -> Self {
        let cores = config.cores.max(1);
        let sizes = [cores, config.max_endpoints, config.max_notifications, config.max_replies, crate::abi::NUM_IRQS];
        let mut base = [0u32; CLASSES.len() + 2];
        for (i, n) in sizes.iter().enumerate() {
            base[i + 1] = base[i] + *n as u32;
        }
        let total = base[sizes.len()] as usize;
        let mut kinds = [(0u32, 0u32); KINDS];
        for (class, (kind, _)) in CLASSES.iter().enumerate() {
            kinds[*kind as usize] = (base[class + 1], base[class + 2] - base[class + 1]);
        }
        let locks = (0..total).map(|_| Ticket::with_cores(cores)).collect();
        let mut stats = Vec::with_capacity(CLASSES.len() + 1);
        stats.push(S::new("fine.core", cores));
        for (_, name) in CLASSES {
            stats.push(S::new(name, cores));
        }
        let per_core = (0..cores)
            .map(|c| {
                CachePadded::new(PerCore {
                    held: UnsafeCell::new(Held {
                        idx: core::array::from_fn(|i| if i == 0 { c as u32 } else { 0 }),
                        len: 0,
                        above: 0,
                        flags: if options.delay_max_cycles != 0 && options.delay_permille != 0 { DELAYS } else { 0 },
                        rng: options.seed ^ (0x9e37_79b9_7f4a_7c15u64.wrapping_mul(c as u64 + 1)) | 1,
                    }),
                    counts: Default::default(),
                })
            })
            .collect();
        let write_stats = S::new("fine.brlock", cores);
        Self { locks, write_stats, base, kinds, stats, cores, per_core, options }
    }

    /// The profile of the big-reader lock's write side.
    pub fn write_stats(&self) -> &S {
        &self.write_stats
    }

    /// The profiles of the object-lock classes: `fine.core`,
    /// `fine.endpoint`, `fine.notification`, `fine.reply`, `fine.irq`.
    pub fn class_stats(&self) -> &[S] {
        &self.stats
    }

    /// The options.
    pub fn options(&self) -> &FineOptions {
        &self.options
    }

    /// What the regime did so far (all zero unless `S` profiles).
    pub fn counts(&self) -> FineCounts {
        let sum = |i: usize| self.per_core.iter().map(|p| p.counts[i].load(Ordering::Relaxed)).sum();
        FineCounts {
            shared: sum(C_SHARED),
            exclusive: sum(C_EXCLUSIVE),
            waited: sum(C_WAITED),
            tried: sum(C_TRIED),
            failed: sum(C_FAILED),
        }
    }

    /// Count event `i` of `core` (profiled regimes only; only `core` writes).
    #[inline(always)]
    fn count(&self, core: usize, i: usize) {
        if S::ENABLED {
            bump(&self.per_core[core].counts[i]);
        }
    }

    /// The lock numbers of `set`: its cores', then its objects' in (kind,
    /// index) order, which is the order of their lock numbers — a set is
    /// taken in lock order. `None` for a core or object this regime has no
    /// lock for.
    fn numbers<'a>(&'a self, set: &'a LockSet) -> impl Iterator<Item = Option<u32>> + 'a {
        let cores = set.cores.iter().map(LockTarget::Core);
        let objects = set.keys().iter().map(|&key| LockTarget::Object(ObjectId::from_key(key)));
        cores.chain(objects).map(|t| self.lock_number(t))
    }

    /// Lock index of `id`, if it names a lockable object in range.
    #[inline(always)]
    fn index_of(&self, id: ObjectId) -> Option<u32> {
        let (start, len) = *self.kinds.get(id.kind as usize)?;
        (id.index < len).then(|| start + id.index)
    }

    /// Hold lock `i` too: wait for it if it comes after every lock held,
    /// else only try. `false` if it could not be had.
    #[inline(always)]
    fn take<F: FnMut()>(
        &self,
        core: usize,
        h: &mut Held,
        i: u32,
        spin: &mut F,
        site: &'static Location<'static>,
    ) -> bool {
        let len = h.len as usize;
        if i < h.above {
            return self.take_below(core, h, i, site);
        }
        // Above everything held (the common case: plans name objects in lock
        // order): not held yet, and safe to wait for.
        if len >= MAX_HELD {
            return false;
        }
        self.wait_above(core, h, len, i, spin, site);
        true
    }

    /// Wait for lock `i`, which comes after every lock `h` holds, and
    /// record it as the `len`-th held (`len` is `h.len`, below
    /// [`MAX_HELD`]).
    #[inline(always)]
    fn wait_above<F: FnMut()>(
        &self,
        core: usize,
        h: &mut Held,
        len: usize,
        i: u32,
        spin: &mut F,
        site: &'static Location<'static>,
    ) {
        debug_assert!(
            len > 0 || i as usize == core || h.flags & REFILL != 0,
            "fine: another core's lock recorded at index 0 without REFILL"
        );
        self.acquire_above(core, i, spin, site);
        h.idx[len] = i;
        h.len = len as u32 + 1;
        h.above = i + 1;
    }

    /// Wait for lock `i` (the bookkeeping is the caller's).
    #[inline(always)]
    fn acquire_above<F: FnMut()>(&self, core: usize, i: u32, spin: &mut F, site: &'static Location<'static>) {
        let t0 = if S::ENABLED { cycles::now() } else { 0 };
        self.count(core, C_WAITED);
        let contended = self.lock_at(i).acquire(core, &mut *spin);
        if S::ENABLED {
            let now = cycles::now();
            self.stats[self.class_of(i)].acquired(core, site, now.saturating_sub(t0), contended, now);
        }
    }

    /// [`Self::take`] for a lock that does not come after everything held:
    /// it may be held already; otherwise it may only be tried.
    #[inline]
    fn take_below(&self, core: usize, h: &mut Held, i: u32, site: &'static Location<'static>) -> bool {
        if h.holds(i) {
            return true;
        }
        let len = h.len;
        debug_assert!(len > 0, "fine: a lock tried with none held");
        let Some(slot) = h.idx.get_mut(len as usize) else { return false };
        self.count(core, C_TRIED);
        if !self.lock_at(i).try_acquire(core) {
            self.count(core, C_FAILED);
            return false;
        }
        if S::ENABLED {
            let now = cycles::now();
            self.stats[self.class_of(i)].acquired(core, site, 0, false, now);
        }
        *slot = i;
        h.len = len + 1;
        true
    }

    /// Lock number `i`: a core's reader lock, or an object's lock.
    #[inline(always)]
    fn lock_at(&self, i: u32) -> &Ticket {
        debug_assert!((i as usize) < self.locks.len());
        // SAFETY: every lock number this regime uses is a core below
        // `cores` (`lock_one`, `lock_more`) or comes from `index_of`, whose
        // `start + index` is below `start + len` of its kind; `with_options`
        // makes every kind's `start + len` and `cores` at most
        // `base[CLASSES.len() + 1]`, the length of `locks`, which never
        // changes. `Held::idx` holds only numbers those made.
        unsafe { self.locks.get_unchecked(i as usize) }
    }

    /// The write side: every core's reader lock, in core order (the lock
    /// order, so two writers meet at lock 0 and cannot deadlock).
    fn write_acquire<F: FnMut()>(&self, site: &'static Location<'static>, core: usize, mut spin: F) {
        let t0 = if S::ENABLED { cycles::now() } else { 0 };
        let mut contended = false;
        for lock in &self.locks[..self.cores] {
            contended |= lock.acquire(core, &mut spin);
        }
        if S::ENABLED {
            let t1 = cycles::now();
            self.write_stats.acquired(core, site, t1.saturating_sub(t0), contended, t1);
        }
    }

    fn write_release(&self, core: usize) {
        if S::ENABLED {
            self.write_stats.releasing(core, cycles::now());
        }
        for lock in &self.locks[..self.cores] {
            lock.release(core);
        }
    }

    /// Class (profile index) of lock `i`.
    fn class_of(&self, i: u32) -> usize {
        (1..self.base.len()).find(|&c| i < self.base[c]).map_or(0, |c| c - 1)
    }

    /// The held set of `core`.
    ///
    /// # Safety
    /// `core` is below the regime's cores, only the thread acting as `core`
    /// may call this, and it must not keep another reference from an earlier
    /// call alive.
    #[allow(clippy::mut_from_ref)]
    #[inline(always)]
    unsafe fn held(&self, core: usize) -> &mut Held {
        debug_assert!(core < self.per_core.len());
        // SAFETY: `core` is below `cores`, the length of `per_core`, and by
        // the caller's contract this is the only reference, made by the
        // only thread acting as `core` (see the `Sync` impl).
        unsafe { &mut *self.per_core.get_unchecked(core).held.get() }
    }

    /// [`ObjectLocks::start_shared`] with a flag set: an escalated system
    /// call starts no shared entry (the flag is cleared); otherwise the
    /// core's lock, recorded at index 0 ([`REFILL`] cleared), then fault
    /// injection's delay.
    #[cold]
    #[inline(never)]
    fn start_shared_flagged<F: FnMut()>(
        &self,
        core: usize,
        h: &mut Held,
        syscall: bool,
        spin: &mut F,
        site: &'static Location<'static>,
    ) -> bool {
        if syscall && h.flags & ESCALATE != 0 {
            h.flags &= !ESCALATE;
            return false;
        }
        self.count(core, C_SHARED);
        // (This writes `idx[0]`.)
        h.flags &= !REFILL;
        self.wait_above(core, h, 0, core as u32, spin, site);
        self.maybe_delay(h);
        true
    }

    /// Lock number of `target`, if this regime has a lock for it.
    #[inline(always)]
    fn lock_number(&self, target: LockTarget) -> Option<u32> {
        match target {
            LockTarget::Core(c) => (c < self.cores).then_some(c as u32),
            LockTarget::Object(id) => self.index_of(id),
        }
    }

    /// Spin a random while, if fault injection asks for it.
    #[cold]
    #[inline(never)]
    fn maybe_delay(&self, h: &mut Held) {
        if h.flags & DELAYS == 0 {
            return;
        }
        let o = &self.options;
        h.rng ^= h.rng << 13;
        h.rng ^= h.rng >> 7;
        h.rng ^= h.rng << 17;
        if (h.rng % 1000) as u32 >= o.delay_permille {
            return;
        }
        let d = (h.rng >> 20) % o.delay_max_cycles;
        let t0 = cycles::now();
        while cycles::now().wrapping_sub(t0) < d {
            core::hint::spin_loop();
        }
    }
}

// SAFETY: the write side holds every core's reader lock, so it excludes every
// other entry, shared or exclusive. A shared entry reads nothing before
// `lock_more` has granted it its own core's reader lock (the kernel's first
// step, see `Kernel::enter_objects`), which excludes writers; the locks it
// holds (ticket locks, each granting one core at a time with acquire/release
// hand-over) are released only in `unlock_objects`. `lock_more` returns `true` only when every lock
// of the set is held by `core`. Waiting happens only in lock order (see the
// module documentation), so entries cannot deadlock. Allocation and freeing
// happen only in exclusive entries (the kernel marks those operations
// exclusive, which `lock_more` refuses).
unsafe impl<S: LockStats + 'static> Regime for Fine<S> {
    const NAME: &'static str = "fine";
    // The fast path locks each object before it reads it (`fastpath.rs`),
    // taking the locks the general path of its call would take.
    type Drive = Objects;
    type Waits = Queues;

    type Held<'a> = ();

    /// A shared entry takes no lock here: its read side is its own core's
    /// reader lock, the first lock `lock_more` takes (see the module
    /// documentation).
    #[inline]
    unsafe fn enter<F: FnMut()>(&self, core: usize, _spin: F) {
        self.count(core, C_SHARED);
    }

    fn cores(&self) -> usize {
        self.cores
    }

    /// Offered only when checking ([`FineOptions::check_holds`]): the
    /// entry's holds must cover the set already.
    unsafe fn lock_set(&self, core: usize, set: &LockSet) -> bool {
        // SAFETY: this method's contract (`Regime::lock_set`): `core` is in
        // range and this is the thread acting as it, inside its entry; no
        // other reference to its held set is alive.
        let h = unsafe { self.held(core) };
        if h.flags & EXCLUSIVE != 0 {
            return true;
        }
        let covered = !set.exclusive() && self.numbers(set).all(|i| i.is_some_and(|i| h.holds(i)));
        assert!(covered, "fine: core {core} reached a point of no return without holding all of {set:?}");
        true
    }

    /// The read side is released with the other locks, in `unlock_objects`.
    #[inline]
    unsafe fn exit(&self, _core: usize, (): ()) {}
}

// SAFETY: see the `Regime` impl above: the write side excludes every entry,
// object locks are held from `lock_more`/`lock_one` until `unlock_objects`,
// taken in lock order, with acquire/release hand-over.
unsafe impl<S: LockStats + 'static> ObjectLocks for Fine<S> {
    #[track_caller]
    unsafe fn enter_exclusive<F: FnMut()>(&self, core: usize, spin: F) {
        self.write_acquire(Location::caller(), core, spin);
        self.count(core, C_EXCLUSIVE);
        // SAFETY: this method's contract (`ObjectLocks`): `core` is in
        // range and this is the thread acting as it, holding no other
        // reference to its held set.
        unsafe { self.held(core) }.flags |= EXCLUSIVE;
    }

    unsafe fn exit_exclusive(&self, core: usize) {
        // SAFETY: this method's contract (`ObjectLocks`): `core` is in
        // range and this is the thread acting as it, holding no other
        // reference to its held set.
        unsafe { self.held(core) }.flags &= !EXCLUSIVE;
        self.write_release(core);
    }

    #[track_caller]
    unsafe fn lock_more<F: FnMut()>(&self, core: usize, set: &LockSet, mut spin: F) -> bool {
        if set.exclusive() {
            return false;
        }
        let site = Location::caller();
        // SAFETY: this method's contract (`ObjectLocks`): `core` is in
        // range and this is the thread acting as it, holding no other
        // reference to its held set.
        let h = unsafe { self.held(core) };
        let before = h.len;
        if before == 0 {
            // The set's first lock, recorded at index 0, may be another
            // core's (`Held`).
            h.flags |= REFILL;
        }
        for i in self.numbers(set) {
            match i {
                Some(i) if self.take(core, h, i, &mut spin, site) => {}
                _ => return false,
            }
        }
        if h.len > before {
            self.maybe_delay(h);
        }
        true
    }

    #[inline(always)]
    #[track_caller]
    unsafe fn lock_one<F: FnMut()>(&self, core: usize, target: LockTarget, mut spin: F) -> bool {
        // SAFETY: this method's contract (`ObjectLocks`): `core` is in
        // range and this is the thread acting as it, holding no other
        // reference to its held set.
        let h = unsafe { self.held(core) };
        if h.flags & EXCLUSIVE != 0 {
            return true;
        }
        let Some(i) = self.lock_number(target) else { return false };
        if !self.take(core, h, i, &mut spin, Location::caller()) {
            return false;
        }
        if h.flags & DELAYS != 0 {
            self.maybe_delay(h);
        }
        true
    }

    /// The first lock of a shared entry: its own core's, taken with no lock
    /// held, so it is above everything held and the held list has room.
    /// An escalated system call, fault injection or a refill of `idx[0]`
    /// (one test of the flags) takes the slower way.
    #[inline(always)]
    #[track_caller]
    unsafe fn start_shared<F: FnMut()>(&self, core: usize, syscall: bool, mut spin: F) -> bool {
        // SAFETY: this method's contract (`ObjectLocks`): `core` is in
        // range and this is the thread acting as it, holding no other
        // reference to its held set, and it holds no lock.
        let h = unsafe { self.held(core) };
        debug_assert_eq!(h.len, 0, "fine: a shared entry began holding locks");
        if h.flags != 0 {
            return self.start_shared_flagged(core, h, syscall, &mut spin, Location::caller());
        }
        // What `Regime::enter` does (here and in the flagged start).
        self.count(core, C_SHARED);
        // `core` is below `cores`: lock number `core` is its reader lock.
        // `wait_above(core, h, 0, core)`, less the store of `idx[0]`, which
        // is `core` already (`Held`).
        let i = core as u32;
        self.acquire_above(core, i, &mut spin, Location::caller());
        debug_assert_eq!(h.idx[0], i);
        h.len = 1;
        h.above = i + 1;
        true
    }

    unsafe fn held_set(&self, core: usize) -> LockSet {
        // SAFETY: this method's contract (`ObjectLocks`): `core` is in
        // range and this is the thread acting as it, holding no other
        // reference to its held set.
        let h = unsafe { self.held(core) };
        let mut set = LockSet::default();
        for &i in h.taken() {
            let class = self.class_of(i);
            if class == 0 {
                set.cores.insert(i as usize);
            } else {
                let kind = CLASSES[class - 1].0;
                set.add(ObjectId { kind, index: i - self.base[class] });
            }
        }
        set
    }

    unsafe fn unlock_objects(&self, core: usize) {
        // SAFETY: this method's contract (`ObjectLocks`): `core` is in
        // range and this is the thread acting as it, holding no other
        // reference to its held set.
        let h = unsafe { self.held(core) };
        let release = |i: u32| {
            if S::ENABLED {
                self.stats[self.class_of(i)].releasing(core, cycles::now());
            }
            self.lock_at(i).release(core);
        };
        // Newest first. A shared IPC entry holds three locks (its core, the
        // endpoint, a reply object or partner core), a notification's two
        // (its core, the notification): those are released without a loop
        // or a jump table, whose set-up cost more than the releases.
        if matches!(h.len, 2 | 3) {
            if h.len == 3 {
                release(h.idx[2]);
            }
            release(h.idx[1]);
            release(h.idx[0]);
        } else {
            h.taken().iter().rev().for_each(|&i| release(i));
        }
        h.len = 0;
        h.above = 0;
    }

    unsafe fn escalate(&self, core: usize) {
        // SAFETY: this method's contract (`ObjectLocks`): `core` is in
        // range and this is the thread acting as it, holding no other
        // reference to its held set.
        unsafe { self.held(core) }.flags |= ESCALATE;
    }

    #[inline(always)]
    fn checks_lock_sets(&self) -> bool {
        self.options.check_holds
    }
}
