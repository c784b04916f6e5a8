//! Concurrency-control regimes: how cores are kept from corrupting the kernel.
//!
//! Every kernel entry point is `enter → (decode → lock set → execute) → exit`.
//! A [`Regime`] supplies `enter`, `lock_set` and `exit`; the kernel is
//! generic over it ([`crate::Kernel<R>`]) and monomorphised, so the `none`
//! regime has no lock code at all, not a lock that is skipped at run time.
//!
//! * [`NoLock`] (`none`): nothing. Sound only if no two cores ever touch the
//!   same kernel object at the same time, a promise made by whoever
//!   constructs it (`unsafe`). This is the ideal baseline of the seeds.
//! * [`BigLock`] (`bkl`): one lock around the whole kernel except the entry
//!   and exit code, CLH by default, ticket or MCS selectable, with the
//!   granule-sync profiler as a type parameter.
//! * [`Fine`] (`fine`): a big-reader lock plus one ticket lock per object and
//!   per core's scheduler; IPC, notification and interrupt paths take the
//!   read side and lock exactly the objects they touch, everything else takes
//!   the write side (see `fine.rs` for the protocol and the lock order).
//! * [`Transactional`] (`rtm`): the whole kernel entry as one hardware
//!   transaction, the CLH big lock as its fallback.
//! * [`LockFree`] (`lockfree`): IPC and notification paths without locks
//!   (`crate::lockfree`); every other operation is a management operation
//!   behind a gate ([`Regime::enter`]/[`Regime::exit`]) that excludes them.
//!
//! The lock set of the operation (the objects it touches, see [`LockSet`]) is
//! offered to the regime between decode and execute by the drives that use
//! it. `none` and `bkl` are offered none; `rtm` aborts to its fallback lock
//! when the set is exclusive (the operation may allocate or touch
//! unboundedly many objects); `fine`'s entries have held every object of the
//! set before they read it (`hold.rs`), so it is offered the set only when it
//! checks that (its tests and `granule verify`,
//! [`ObjectLocks::checks_lock_sets`]).

mod biglock;
mod fine;
mod none;
mod rtm;

pub use crate::lockfree::{CountingLockFree, LockFree, LockFreeOf, RmwCounts, Shared};
pub use biglock::{BigLock, BigLockClh, BigLockMcs, BigLockTicket};
pub use fine::{Fine, FineCounts, FineOptions};
pub use none::NoLock;
pub use rtm::{Transactional, NEEDS_LOCK};

pub use crate::drive::{Drive, GeneralOnly, Objects, Whole, WholeChecked, WholeKernel};
pub use crate::ids::ObjectId;
pub use crate::waits::{Queues, Waits};

use crate::exit::CoreMask;

/// `LockSet::whole` bit: the operation needs the whole kernel.
const EXCLUSIVE: u64 = 1;
/// `LockSet::whole` bit: the operation must not run in a transaction.
const OUTSIDE_TRANSACTIONS: u64 = 2;

/// What a kernel entry touches: objects by kind and slab index, plus the
/// ready queues of `cores`.
///
/// Kept small and cheap on the system-call path: each object is one packed
/// word ([`ObjectId::key`]), kept sorted, so that adding an object is a short
/// scan and an insertion by swaps (no call to `memmove`), and every field is
/// a whole word (copying a set never loads a word that narrower stores have
/// just written, which would stall store-to-load forwarding).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LockSet {
    keys: [u64; LockSet::MAX],
    len: usize,
    /// Cores whose scheduler state (ready queue, current thread) is touched.
    pub cores: CoreMask,
    /// Bit 0: see [`LockSet::exclusive`]; bit 1: see
    /// [`LockSet::outside_transactions`] (a whole word, see above).
    whole: u64,
}

/// The lock-set check a general entry hands its body: `None` when the
/// regime has no use for the set (it is then not even built).
pub(crate) type SetCheck<'a> = Option<&'a dyn Fn(&LockSet) -> bool>;

/// One lock a kernel entry names: a core's scheduler, or an object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockTarget {
    /// The scheduler state (ready queues, current thread) of a core.
    Core(usize),
    /// A kernel object.
    Object(ObjectId),
}

impl LockSet {
    /// Most objects an operation names; more makes the set exclusive.
    pub const MAX: usize = 8;

    /// The set holding only core `core`'s scheduler.
    #[inline(always)]
    pub fn core(core: usize) -> Self {
        let mut s = Self::default();
        s.cores.insert(core);
        s
    }

    /// An exclusive set (the operation needs the whole kernel).
    pub fn whole() -> Self {
        Self { whole: EXCLUSIVE, ..Self::default() }
    }

    /// Whether the operation may create or destroy objects, or touch an
    /// unbounded number of them (retype, delete, revoke…): it needs the
    /// whole kernel.
    #[inline(always)]
    pub fn exclusive(&self) -> bool {
        self.whole & EXCLUSIVE != 0
    }

    /// Whether the operation allocates or frees memory, or spins on locks
    /// of its own: it touches no more objects than its set names, but must
    /// not run inside a hardware transaction (`rtm` takes its fallback
    /// lock for it; the lock regimes need nothing more than the set).
    #[inline(always)]
    pub fn outside_transactions(&self) -> bool {
        self.whole & OUTSIDE_TRANSACTIONS != 0
    }

    /// Mark the set as [`Self::outside_transactions`].
    #[inline(always)]
    pub fn set_outside_transactions(&mut self) {
        self.whole |= OUTSIDE_TRANSACTIONS;
    }

    /// Mark the set exclusive (see [`Self::exclusive`]).
    #[inline(always)]
    pub fn set_exclusive(&mut self) {
        self.whole |= EXCLUSIVE;
    }

    /// Number of objects (cores not counted).
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the set names no object (cores not counted).
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Add one lock target.
    #[inline]
    pub fn add_target(&mut self, target: LockTarget) {
        match target {
            LockTarget::Core(c) if c < crate::abi::MAX_CORES => self.cores.insert(c),
            // A core that cannot exist: the set cannot be held.
            LockTarget::Core(_) => self.whole |= EXCLUSIVE,
            LockTarget::Object(id) => self.add(id),
        }
    }

    /// Add everything `other` names.
    #[inline]
    pub fn extend(&mut self, other: &LockSet) {
        for &key in other.keys() {
            self.add_key(key);
        }
        self.cores = CoreMask(self.cores.0 | other.cores.0);
        self.whole |= other.whole;
    }

    /// Add an object (duplicates are ignored). The set stays sorted.
    #[inline(always)]
    pub fn add(&mut self, id: ObjectId) {
        self.add_key(id.key());
    }

    #[inline(always)]
    fn add_key(&mut self, key: u64) {
        if self.keys().contains(&key) {
            return;
        }
        if self.len == Self::MAX {
            self.whole |= EXCLUSIVE;
            return;
        }
        // Append, then swap down into place (sets are tiny and usually
        // built in order, so this rarely swaps at all).
        let mut i = self.len;
        self.keys[i] = key;
        self.len += 1;
        while i > 0 && self.keys[i - 1] > key {
            self.keys.swap(i - 1, i);
            i -= 1;
        }
    }

    /// The objects as packed keys ([`ObjectId::key`]), in lock order.
    #[inline(always)]
    pub fn keys(&self) -> &[u64] {
        &self.keys[..self.len.min(Self::MAX)]
    }

    /// The objects, in (kind, index) order — the lock order of the `fine`
    /// regime.
    #[inline]
    pub fn objects(&self) -> impl Iterator<Item = ObjectId> + '_ {
        self.keys().iter().map(|&k| ObjectId::from_key(k))
    }
}

/// A concurrency-control regime (see the module documentation).
///
/// A regime is three things: its entry and exit (`enter`/`exit`), what its
/// entry grants — the kernel's [`Drive`](Regime::Drive) — and where blocked
/// threads wait — its [`Waits`](Regime::Waits). Both are types, so the
/// kernel's entry points are monomorphised per regime and no regime's code
/// tests another's at run time.
///
/// # Safety
///
/// [`Regime::cores`] never changes during the regime's life, and every
/// per-core array the regime indexes without a bounds check (trusting the
/// contract of [`Regime::enter`]) has at least that many entries.
///
/// The kernel's soundness rests on this promise. For the drives that grant
/// the whole kernel ([`Whole`], [`WholeChecked`]): between `enter(core, _)` and
/// the following `exit(core)`, no other core is between its own `enter` and
/// `exit` *and touching the same kernel object* — for a lock regime, because
/// at most one core is inside; for [`NoLock`], because its constructor's
/// caller promised disjoint objects. `enter` must synchronise-with the
/// previous `exit` (acquire/release), so that kernel memory written by one
/// core is visible to the next. [`Objects`] adds the contract of
/// [`ObjectLocks`]; `lockfree`'s drive, that of `crate::lockfree`.
pub unsafe trait Regime: Send + Sync + Sized + 'static {
    /// Name on the command line and in tables (`none`, `bkl`, `bkl-ticket`…).
    const NAME: &'static str;

    /// How the kernel drives this regime (see [`crate::drive`]).
    type Drive: Drive<Self>;

    /// Where blocked threads wait ([`Queues`] for every regime but
    /// `lockfree`).
    type Waits: Waits;

    /// Whether a `ReplyRecv` may deliver its reply and then return
    /// `restart` (its receive half could not be held, past the point of no
    /// return; `hold.rs`): true exactly where the drive's guard can stop.
    /// A model of the kernel (the linearizability check of `granule
    /// verify`) must then allow a restarted `ReplyRecv` that replied.
    const REPLY_THEN_RESTART: bool = <Self::Drive as Drive<Self>>::REPLY_THEN_RESTART;

    /// How many cores the regime was built for: [`crate::Kernel::boot`]
    /// refuses a configuration with more, so that every core the kernel
    /// runs is one the regime serves.
    fn cores(&self) -> usize;

    /// What an entry's [`Regime::enter`] hands its [`Regime::exit`]: a word
    /// the exit needs that the enter had in hand (the CLH big lock's queued
    /// node, whether an RTM entry took the lock), so that the
    /// entry does not store it in the regime and load it back; `()` where
    /// the exit needs nothing more than the core.
    type Held<'a>
    where
        Self: 'a;

    /// Begin a kernel entry as `core`, calling `spin` while waiting; what
    /// the entry's [`Regime::exit`] is given.
    ///
    /// # Safety
    /// `core` is below [`Regime::cores`], and no other thread acts as
    /// `core` meanwhile (the kernel keeps both: its core handles are below
    /// the configuration's cores, which boot checked, and `&mut`). A regime
    /// may then index its per-core state without a bounds check.
    unsafe fn enter<F: FnMut()>(&self, core: usize, spin: F) -> Self::Held<'_>;

    /// The objects the decoded operation touches, offered before it executes
    /// by the drives that use it ([`WholeChecked`]; [`Objects`] when the
    /// regime checks its holds). `false` means the
    /// regime cannot let the operation run as it stands: the kernel restarts
    /// the system call, and the regime makes that core's next system call
    /// exclusive.
    ///
    /// # Safety
    /// As for [`Regime::enter`], from inside `core`'s entry.
    #[inline(always)]
    unsafe fn lock_set(&self, _core: usize, _set: &LockSet) -> bool {
        true
    }

    /// End the kernel entry of `core`, whose [`Regime::enter`] returned
    /// `held`.
    ///
    /// # Safety
    /// As for [`Regime::enter`], whose entry this ends.
    unsafe fn exit(&self, core: usize, held: Self::Held<'_>);
}

/// A regime that locks objects ([`Objects`] drive, `fine`): `enter` is a
/// shared entry that grants nothing by itself; the kernel then names the
/// objects it will touch, step by step, or asks for the whole kernel.
///
/// # Safety
///
/// Between `enter_exclusive` and `exit_exclusive` no other core is between
/// any of its entries and exits; between `enter` and `exit`, every object
/// (and core scheduler) in a set for which [`ObjectLocks::lock_more`] (or
/// [`Regime::lock_set`], or [`ObjectLocks::lock_one`] for one target)
/// returned `true` is held by `core` alone until
/// [`ObjectLocks::unlock_objects`]; objects are never freed or allocated
/// except under the exclusive side; and every hand-over of an object or of
/// the exclusive side is an acquire/release pair.
///
/// Its callers' part: every method that takes a `core` is `unsafe`, with the
/// contract of [`Regime::enter`] (`core` is below [`Regime::cores`] and no
/// other thread acts as `core`).
pub unsafe trait ObjectLocks: for<'a> Regime<Held<'a> = ()> {
    /// Begin an entry with the whole kernel.
    ///
    /// # Safety
    /// As for [`Regime::enter`].
    unsafe fn enter_exclusive<F: FnMut()>(&self, core: usize, spin: F);

    /// End an exclusive entry.
    ///
    /// # Safety
    /// As for [`Regime::enter`].
    unsafe fn exit_exclusive(&self, core: usize);

    /// Hold every object and core of `set` too (inside a shared entry).
    /// Waits only where that cannot deadlock and otherwise only tries;
    /// `false` if some lock could not be had (what is held stays held until
    /// [`ObjectLocks::unlock_objects`]), or if the set is exclusive.
    ///
    /// # Safety
    /// As for [`Regime::enter`].
    unsafe fn lock_more<F: FnMut()>(&self, core: usize, set: &LockSet, spin: F) -> bool;

    /// Hold `target` too: inside a shared entry on the terms of
    /// [`ObjectLocks::lock_more`]; inside an exclusive entry, which holds
    /// everything, `true`.
    ///
    /// # Safety
    /// As for [`Regime::enter`].
    unsafe fn lock_one<F: FnMut()>(&self, core: usize, target: LockTarget, spin: F) -> bool;

    /// Begin a shared entry of `core` (the regime's [`Regime::enter`]) and
    /// hold `core`'s own lock as its first lock (its read side), which a
    /// regime may take without the checks a later hold needs. `false` if
    /// the entry cannot be shared — the lock cannot be had, or `syscall`
    /// and a previous attempt of this core's system call made it exclusive
    /// ([`ObjectLocks::escalate`], cleared here) —: then nothing is held
    /// and the shared entry is left again.
    ///
    /// # Safety
    /// As for [`Regime::enter`], and `core` holds no lock.
    unsafe fn start_shared<F: FnMut()>(&self, core: usize, syscall: bool, spin: F) -> bool;

    /// What `core` holds now, as a set (to take it again in lock order after
    /// a failed round).
    ///
    /// # Safety
    /// As for [`Regime::enter`].
    unsafe fn held_set(&self, core: usize) -> LockSet;

    /// Release every object lock `core` holds.
    ///
    /// # Safety
    /// As for [`Regime::enter`].
    unsafe fn unlock_objects(&self, core: usize);

    /// Make `core`'s next system call exclusive (this one restarts after a
    /// change: see `hold.rs`).
    ///
    /// # Safety
    /// As for [`Regime::enter`].
    unsafe fn escalate(&self, core: usize);

    /// Whether the kernel offers each operation's lock set to
    /// [`Regime::lock_set`] before its point of no return. An entry holds
    /// every object before it reads it (`hold.rs`), so the set names
    /// nothing the entry does not hold already: offering it is a check,
    /// for testing, not a step of the protocol.
    #[inline(always)]
    fn checks_lock_sets(&self) -> bool {
        false
    }
}
