//! The lock-free representation: the words the shared paths change with
//! compare-and-swap, kept beside the slabs and indexed like them.
//!
//! Under `lockfree` the queues and the reply state of endpoints,
//! notifications and reply objects live *here*, not in the objects' slab
//! slots (whose `queue`, `state`, `word`, `active`, `caller` and `receiver`
//! fields stay empty): a slab slot is plain memory, reachable through `&mut`
//! only by one owner, while these words are atomics any core may touch.
//! Keeping them beside the slabs leaves the objects — and the `none` and
//! `bkl` kernels — exactly as they were.
//!
//! Every element is cache-line padded: the words of two objects used by two
//! cores must not share a line (one ping-pong pair per core would otherwise
//! bounce a line on every call).
//!
//! | array | per | word |
//! |---|---|---|
//! | `eps` | endpoint slot | [`DualQueue`]: waiting senders or receivers (FIFO) |
//! | `ntfns` | notification slot | [`SignalStack`]: badge bits, active, waiters (FIFO) |
//! | `replies` | reply slot | [`ReplyWord`]: empty, the caller, or the receiver |
//! | `threads` | TCB slot | [`ThreadCell`]: the thread's link in whichever of the above holds it, its link in an inbox, and its control word (`control.rs`) |
//! | `cores` | core | [`LfCore`]: wake-up inbox, published priority, what its shared paths leave management ([`CoreLists`]), counters |
//!
//! Every object operation takes a core's [`CoreLinks`]: the link array, and
//! where the object's read-modify-writes are counted when the regime counts
//! them (`LockFree::counting`).

use alloc::boxed::Box;
use core::cell::UnsafeCell;
use core::num::NonZeroU64;
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

use crossbeam_utils::CachePadded;
use granule_sync::lockfree::{new_link, DualQueue, Inbox, Links, Rmw, SignalStack, StopWord};

use super::Tallies;
use crate::config::BootConfig;
use crate::object::{Endpoint, Notification, Ref, Reply, Tcb};

use super::detached::Detached;
use super::doomed::Doomed;

/// The lock-free words of one kernel (see the module documentation): the
/// `lockfree` regime's [`crate::waits::Waits`].
pub struct LfState {
    pub(crate) eps: Box<[CachePadded<DualQueue>]>,
    pub(crate) ntfns: Box<[CachePadded<SignalStack>]>,
    pub(crate) replies: Box<[CachePadded<ReplyWord>]>,
    threads: Box<[CachePadded<ThreadCell>]>,
    pub(crate) cores: Box<[CachePadded<LfCore>]>,
    /// The regime's per-core counters, if it counts.
    tally: Option<Tallies>,
}

/// One core's view of the link array (see the module documentation);
/// reports are counted only with `COUNTING` (the shared paths pass the
/// regime's constant, so an uncounted kernel has no counting code there)
/// and when the regime counts. `WAKE`: the inboxes' links
/// ([`ThreadCell::wake`]) instead of the objects'.
#[derive(Clone, Copy)]
pub(crate) struct CoreLinks<'a, const COUNTING: bool, const WAKE: bool = false> {
    lf: &'a LfState,
    core: usize,
}

impl<'a, const COUNTING: bool, const WAKE: bool> Links<'a> for CoreLinks<'a, COUNTING, WAKE> {
    /// Slot indices come from references and from the lock-free objects,
    /// which only ever hold TCB slot indices.
    #[inline(always)]
    fn link(&self, i: u32) -> &'a AtomicU64 {
        let cell = &self.lf.threads[i as usize];
        if WAKE {
            &cell.wake
        } else {
            &cell.link
        }
    }

    #[inline(always)]
    fn rmw(&self, op: Rmw) {
        if COUNTING {
            if let Some(t) = &self.lf.tally {
                t[self.core].add(op);
            }
        }
    }
}

/// One thread's lock-free words, on one cache line: a taker that has just
/// closed the thread's link reads its control word from the same line.
pub(crate) struct ThreadCell {
    /// The thread's link (`granule_sync::lockfree::link`) in an endpoint
    /// or notification word.
    pub link: AtomicU64,
    /// Its link in an inbox: a thread a signal woke out of an endpoint
    /// receive may still have its node there (`bound.rs`) when it is pushed
    /// on its core's inbox.
    pub wake: AtomicU64,
    /// The endpoint it last waited on as a bound receiver: where a signal
    /// that claimed it left its node (`bound.rs`). Written by management
    /// when it queues the thread, read by management when it purges.
    pub ghost_ep: AtomicU32,
    /// Suspension requests and the home core (`control.rs`).
    pub ctl: StopWord,
}

/// One core's lock-free cell: the regime's per-core state
/// ([`crate::state::WaitsHere`]).
pub struct LfCore {
    /// Threads of this core woken by other cores' shared paths; drained by
    /// this core at every kernel entry (management entries other than
    /// looks drain every core's).
    pub(crate) inbox: Inbox,
    /// The priority of the thread this core runs, plus one (`0`: idle), for
    /// other cores' "does the woken thread outrank it?" decision. Written by
    /// this core at the end of each shared entry (and by management).
    pub(crate) prio: AtomicU32,
    /// Bound receivers this core's signals claimed since management last
    /// purged their nodes (`bound.rs`); only this core adds to it.
    pub(crate) ghosts: AtomicU32,
    /// A stop request for a thread of this core interrupted it, and no
    /// entry of the core has begun since: the kernel's record of the owed
    /// interrupt (what `Kernel::pending_ipi` reports). Set by a `swap`
    /// (`control.rs` says why not a plain store), taken by the core's
    /// entries with a `swap`, so no request's flag is lost. The request itself is met wherever an entry
    /// ends (`finish_entry`'s `dispatchable`), so it sets no IPI bit.
    /// Wake-ups need no flag: the inbox is drained at every entry.
    pub(crate) stop_ipi: AtomicBool,
    /// Plain data of this core, reached only through `Ctx::lists` (see
    /// there for who may touch it when).
    pub(crate) lists: UnsafeCell<CoreLists>,
    /// 4 KiB frames this core's shared paths allocated or freed
    /// (`pages.rs`; reported as `CoreStats::shared_pages`).
    pub(crate) pages: AtomicU64,
    /// Threads this core's shared paths destroyed (`destroy.rs`).
    pub(crate) destroys: AtomicU64,
    /// Bound receivers this core's shared signals woke (`bound.rs`).
    pub(crate) bound_wakes: AtomicU64,
    /// Suspends and resumes this core's shared paths ran (`control.rs`).
    pub(crate) controls: AtomicU64,
}

impl core::fmt::Debug for LfCore {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("LfCore").field("prio", &self.prio).finish_non_exhaustive()
    }
}

impl LfCore {
    /// Publish `p` as this core's priority (by this core) if it is not below
    /// the one published (`true`): other cores read the word only to decide
    /// whether a thread they wake outranks this core's, so a raise needs no
    /// fence and no second look at the inbox. `false`: a lowering, which
    /// `Ctx::lf_publish` makes.
    #[inline(always)]
    pub(crate) fn raise_prio(&self, p: u32) -> bool {
        let old = self.prio.load(Ordering::Relaxed);
        if p < old {
            return false;
        }
        if p != old {
            self.prio.store(p, Ordering::Relaxed);
        }
        true
    }
}

// SAFETY: every field but `lists` is an atomic or a lock-free object; `lists`
// is reached only through `Ctx::lists`, whose contract (its own core's on a
// shared path of that core, any core's in a management entry, which
// excludes every shared path; acquire/release through the gate between
// them) gives one core at a time access to it.
unsafe impl Sync for LfCore {}

/// What one core's shared paths leave for management to finish, and its
/// last suspend's request: plain data of the core (`LfCore::lists`).
#[derive(Debug, Default)]
pub(crate) struct CoreLists {
    /// Frame capabilities this core's shared paths allocated and not yet
    /// linked into the derivation tree (`detached.rs`).
    pub detached: Detached,
    /// Thread capabilities this core's shared paths deleted, whose deletion
    /// management finishes (`doomed.rs`).
    pub doomed: Doomed,
    /// This core's last shared suspend made the thread's only stop
    /// request (new, or renewing a cancelled one): a withdrawal may take it
    /// back (`control.rs`).
    pub own_request: bool,
}

/// The published-priority encoding of "runs nothing".
pub(crate) const IDLE: u32 = 0;

/// The published-priority encoding of a thread of priority `p`.
#[inline(always)]
pub(crate) fn published(p: u8) -> u32 {
    u32::from(p) + 1
}

fn padded<T>(n: usize, f: impl Fn() -> T) -> Box<[CachePadded<T>]> {
    (0..n).map(|_| CachePadded::new(f())).collect()
}

/// The word of the object `r` names, in `words`, one word per slot of its
/// slab, without a bounds check: `new` makes each array exactly as long as
/// its slab's capacity (`max_endpoints`, `max_notifications`,
/// `max_replies`, `max_threads`; none changes), and a reference's index is
/// below that capacity (the slabs' reference invariant, `object/slab.rs`).
#[inline(always)]
fn by_ref<W, T>(words: &[CachePadded<W>], r: Ref<T>) -> &W {
    let i = r.index() as usize;
    debug_assert!(i < words.len(), "a reference beyond its slab");
    // SAFETY: `i < words.len()` (above).
    unsafe { words.get_unchecked(i) }
}

impl core::fmt::Debug for LfState {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("LfState").field("endpoints", &self.eps.len()).field("cores", &self.cores.len()).finish()
    }
}

impl LfState {
    /// The words of a kernel booted with `config`, counting into `tally`.
    pub(crate) fn new(config: &BootConfig, tally: Option<Tallies>) -> Self {
        Self {
            eps: padded(config.max_endpoints, DualQueue::new),
            ntfns: padded(config.max_notifications, SignalStack::new),
            replies: padded(config.max_replies, ReplyWord::new),
            threads: padded(config.max_threads, || ThreadCell {
                link: AtomicU64::new(new_link()),
                wake: AtomicU64::new(new_link()),
                ghost_ep: AtomicU32::new(0),
                ctl: StopWord::new(),
            }),
            cores: padded(config.cores, || LfCore {
                inbox: Inbox::new(),
                prio: AtomicU32::new(IDLE),
                ghosts: AtomicU32::new(0),
                stop_ipi: AtomicBool::new(false),
                lists: UnsafeCell::new(CoreLists::default()),
                pages: AtomicU64::new(0),
                destroys: AtomicU64::new(0),
                bound_wakes: AtomicU64::new(0),
                controls: AtomicU64::new(0),
            }),
            tally,
        }
    }

    /// The word of endpoint `ep`.
    #[inline(always)]
    pub(crate) fn ep(&self, ep: Ref<Endpoint>) -> &DualQueue {
        by_ref(&self.eps, ep)
    }

    /// The word of notification `n`.
    #[inline(always)]
    pub(crate) fn ntfn(&self, n: Ref<Notification>) -> &SignalStack {
        by_ref(&self.ntfns, n)
    }

    /// The word of reply object `r`.
    #[inline(always)]
    pub(crate) fn reply(&self, r: Ref<Reply>) -> &ReplyWord {
        by_ref(&self.replies, r)
    }

    /// Thread slot `i`'s endpoint as a bound receiver (`bound.rs`).
    #[inline(always)]
    pub(crate) fn ghost_ep(&self, i: u32) -> &AtomicU32 {
        &self.threads[i as usize].ghost_ep
    }

    /// Thread `t`'s control word (`control.rs`).
    #[inline(always)]
    pub(crate) fn ctl_of(&self, t: Ref<Tcb>) -> &StopWord {
        &by_ref(&self.threads, t).ctl
    }

    /// Thread slot `i`'s control word (`control.rs`).
    #[inline(always)]
    pub(crate) fn ctl(&self, i: u32) -> &StopWord {
        &self.threads[i as usize].ctl
    }

    /// Count one read-modify-write of core `core` (the control words',
    /// which are not a `granule_sync` object), if `COUNTING`.
    #[inline(always)]
    pub(crate) fn count<const COUNTING: bool>(&self, core: usize, op: Rmw) {
        self.links::<COUNTING>(core).rmw(op);
    }

    /// The link array as core `core` passes it to the lock-free objects.
    #[inline(always)]
    pub(crate) fn links<const COUNTING: bool>(&self, core: usize) -> CoreLinks<'_, COUNTING> {
        CoreLinks { lf: self, core }
    }

    /// Whether other cores' shared paths left core `c` something to do at
    /// its next entry: a woken thread in its inbox, or a stop request's
    /// interrupt.
    #[inline(always)]
    pub(crate) fn asks(&self, c: usize) -> bool {
        let cell = &self.cores[c];
        !cell.inbox.is_empty() || cell.stop_ipi.load(Ordering::Relaxed)
    }

    /// The inboxes' link array, as core `core` passes it to them.
    #[inline(always)]
    pub(crate) fn wake_links<const COUNTING: bool>(&self, core: usize) -> CoreLinks<'_, COUNTING, true> {
        CoreLinks { lf: self, core }
    }
}

pub(crate) use crate::object::reply::ReplyState;

/// A reply object's state in one word.
///
/// **Layout** (`AtomicU64`): bits 32..64 the thread's slot generation, bits
/// 0..24 its slot index (TCB slabs hold at most 2^24 slots), bits 24..26 the
/// state (0 empty, 1 receiver, 2 caller), bit 26 the grant flag; `0` =
/// empty. One word for both "caller" and "receiver" (an seL4 reply object
/// never has both) makes the `ReplyRecv` hand-over — answer the caller and
/// claim the object for the next receive — a single CAS.
///
/// **Protocol.** `Empty` and `Caller` are contended (any receiver may claim
/// an empty object, any holder of the reply capability may answer the
/// caller): they change only by CAS, and the winner owns the outcome (for
/// `Caller(t)`, the thread `t`). `Receiver(r)` belongs to whoever owns `r`
/// (the core running it, or the core that popped it from an endpoint):
/// only that owner changes it, with a release store. No tag is needed: a
/// CAS that succeeds against a recurring value (the same caller calling
/// again) acts on the current value, which is a correct linearisation.
#[derive(Debug)]
pub(crate) struct ReplyWord(AtomicU64);

const KIND_SHIFT: u32 = 24;
const KIND_RECEIVER: u64 = 1 << KIND_SHIFT;
const KIND_CALLER: u64 = 2 << KIND_SHIFT;
const KIND_MASK: u64 = 3 << KIND_SHIFT;
const GRANT: u64 = 1 << 26;
const INDEX_MASK: u64 = (1 << KIND_SHIFT) - 1;

impl ReplyWord {
    pub fn new() -> Self {
        Self(AtomicU64::new(0))
    }

    #[inline(always)]
    fn encode(s: ReplyState) -> u64 {
        let t = |r: Ref<Tcb>| (u64::from(r.gen()) << 32) | u64::from(r.index());
        match s {
            ReplyState::Empty => 0,
            ReplyState::Receiver(r) => t(r) | KIND_RECEIVER,
            ReplyState::Caller(r, g) => t(r) | KIND_CALLER | if g { GRANT } else { 0 },
        }
    }

    #[inline(always)]
    fn decode(w: u64) -> ReplyState {
        let r = || {
            let raw = (w >> 32) << 32 | (w & INDEX_MASK);
            // SAFETY: a receiver or caller word is `encode`d from a `Ref<Tcb>`
            // of this kernel (the word's only writer), whose generation is
            // never 0; `raw` is that reference's word without the kind bits.
            unsafe { Ref::from_raw(NonZeroU64::new_unchecked(raw)) }
        };
        match w & KIND_MASK {
            KIND_RECEIVER => ReplyState::Receiver(r()),
            KIND_CALLER => ReplyState::Caller(r(), w & GRANT != 0),
            _ => ReplyState::Empty,
        }
    }

    /// The raw word (for [`ReplyWord::cas`]) and its meaning.
    #[inline(always)]
    pub fn load(&self) -> (u64, ReplyState) {
        let w = self.0.load(Ordering::Acquire);
        (w, Self::decode(w))
    }

    /// CAS from raw word `seen` to `new`, counted by `links`; on failure,
    /// the word now.
    #[inline(always)]
    pub fn cas<'a>(&self, seen: u64, new: ReplyState, links: impl Links<'a>) -> Result<(), (u64, ReplyState)> {
        links.rmw(Rmw::Cmpxchg);
        self.0
            .compare_exchange(seen, Self::encode(new), Ordering::AcqRel, Ordering::Acquire)
            .map(|_| ())
            .map_err(|w| (w, Self::decode(w)))
    }

    /// Overwrite (the owner of the current state only; see the protocol).
    #[inline(always)]
    pub fn set(&self, new: ReplyState) {
        self.0.store(Self::encode(new), Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reply_states_round_trip() {
        // The largest index and generation a word holds.
        let raw = NonZeroU64::new(u64::from(u32::MAX >> 1) << 32 | ((1 << 24) - 1)).unwrap();
        // SAFETY: the reference is only encoded and decoded, never followed.
        let t = unsafe { Ref::<Tcb>::from_raw(raw) };
        for s in [ReplyState::Empty, ReplyState::Receiver(t), ReplyState::Caller(t, true), ReplyState::Caller(t, false)]
        {
            assert_eq!(ReplyWord::decode(ReplyWord::encode(s)), s);
        }
        assert_eq!(ReplyWord::encode(ReplyState::Empty), 0);
    }
}
