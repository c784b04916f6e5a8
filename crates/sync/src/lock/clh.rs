//! CLH queue lock, laid out as seL4's big kernel lock.
//!
//! Algorithm: Craig (1993) and Magnusson, Landin & Hagersten (1994); layout
//! after seL4's `clh_lock_t` (`include/smp/lock.h`). The lock holds `cores + 1`
//! queue nodes, each alone in a cache line, and per core a pointer to the
//! node it will queue next (`mine`) and to the node it queued last (`held`).
//! Node word layout: one `AtomicBool`, `true` = "my owner holds or waits for
//! the lock". The tail points to the last node queued.
//!
//! * acquire(core): note `mine` as `held` and mark it waiting; swap it into
//!   the tail (`xchg`), which returns the predecessor's node; adopt that node
//!   as the next `mine` (once its flag clears nobody else writes it — its
//!   old owner moved on and the only spinner on it is us); spin on its flag,
//!   which lives in the predecessor's cache line and is written once, at its
//!   release.
//! * release(core): clear the flag of `held` — one load and one store. A
//!   kernel's path takes the lock with `acquire_held`, which returns the
//!   queued node instead of noting it as `held`, and ends the hold with
//!   `release_held` of that node: one store, and none at the acquire.
//!   (seL4 adopts the predecessor's node at release instead; adopting it at
//!   acquire, where the `xchg` returns it, leaves release nothing else to do.)
//!
//! Each waiter spins on a different line, so a hand-off moves exactly one line
//! between exactly two cores: the property the queueing model relies on.
//! Nodes are named by pointer, as seL4 names them, so reaching one costs no
//! index arithmetic on the kernel's path; `mine`/`held` are atomics written
//! only by their core and read with relaxed ordering. Every node pointer the
//! lock holds (`tail`, each core's `mine` and `held`) is one `new` made, into
//! the lock's own node array, which is never resized or freed while the lock
//! lives; the lock only moves pointers between those words, never computes
//! one. So following one is sound ([`Clh::node`], the file's one `unsafe`).

use alloc::boxed::Box;
use crossbeam_utils::CachePadded;

use super::RawLock;
use crate::primitive::{spin_loop, AtomicBool, AtomicPtr, Ordering};

/// Under loom only: how many times a successful `try_acquire` found itself
/// queued behind a held node (the T -> X -> T case) and waited, so a model
/// can prove it reached that case. A plain core atomic on purpose: a loom
/// atomic would add synchronisation to the model it observes.
#[cfg(loom)]
pub static LOOM_TRY_WAITS: core::sync::atomic::AtomicUsize = core::sync::atomic::AtomicUsize::new(0);

/// A node pointer as the lock holds it (see the module documentation).
type NodePtr = *mut AtomicBool;

#[derive(Debug)]
struct PerCore {
    /// The node this core queues at its next acquire.
    mine: AtomicPtr<AtomicBool>,
    /// The node this core queued at its last acquire (while it holds the
    /// lock, the one its successor spins on).
    held: AtomicPtr<AtomicBool>,
}

/// CLH queue lock with per-core nodes (seL4's BKL).
#[derive(Debug)]
pub struct Clh {
    tail: CachePadded<AtomicPtr<AtomicBool>>,
    /// The nodes every pointer of the lock points into: never resized,
    /// moved or freed while the lock lives (a boxed slice's heap block
    /// stays where it is when the lock moves).
    nodes: Box<[CachePadded<AtomicBool>]>,
    cores: Box<[CachePadded<PerCore>]>,
}

impl Clh {
    /// A free lock for cores `0..cores`.
    pub fn new(cores: usize) -> Self {
        assert!(cores >= 1, "a lock needs at least one core");
        let nodes: Box<[CachePadded<AtomicBool>]> =
            (0..=cores).map(|_| CachePadded::new(AtomicBool::new(false))).collect();
        let ptr = |i: usize| -> NodePtr { core::ptr::from_ref::<AtomicBool>(&nodes[i]).cast_mut() };
        // Node `cores` starts as the (released) tail; core i starts owning node i.
        let tail = CachePadded::new(AtomicPtr::new(ptr(cores)));
        let cores = (0..cores)
            .map(|i| CachePadded::new(PerCore { mine: AtomicPtr::new(ptr(i)), held: AtomicPtr::new(ptr(i)) }))
            .collect();
        Self { tail, nodes, cores }
    }

    /// The node `p` points to, a pointer the lock holds (see the module
    /// documentation).
    #[inline(always)]
    fn node(&self, p: NodePtr) -> &AtomicBool {
        debug_assert!(self.nodes.iter().any(|n| core::ptr::eq(&**n, p)));
        // SAFETY: `p` is a node pointer the lock holds: `new` made it point
        // into `self.nodes`, which lives as long as `self` and is never
        // resized or moved, and the lock only moves such pointers between
        // `tail`, `mine` and `held` (module documentation). Only shared
        // references to the node, an atomic, are made from it.
        unsafe { &*p }
    }

    /// Acquire as the core whose state is `me`: whether that was
    /// contended, and the node queued (the one to release). With
    /// `NOTE_HELD` that node is also noted as `held`, for a release that
    /// finds it there (`RawLock::release`); `acquire_held`'s caller keeps
    /// it instead.
    #[inline(always)]
    fn acquire_as<F: FnMut(), const NOTE_HELD: bool>(&self, me: &PerCore, mut spin: F) -> (bool, &AtomicBool) {
        let mine = me.mine.load(Ordering::Relaxed);
        if NOTE_HELD {
            me.held.store(mine, Ordering::Relaxed);
        }
        let queued = self.node(mine);
        queued.store(true, Ordering::Relaxed);
        // AcqRel: publish our flag before anyone can reach it through the
        // tail, and see the predecessor's flag initialisation.
        let prev = self.tail.swap(mine, Ordering::AcqRel);
        me.mine.store(prev, Ordering::Relaxed);
        let node = self.node(prev);
        if !node.load(Ordering::Acquire) {
            return (false, queued);
        }
        while node.load(Ordering::Acquire) {
            spin();
            spin_loop();
        }
        (true, queued)
    }

    /// Release as the core whose state is `me`.
    #[inline(always)]
    fn release_as(&self, me: &PerCore) {
        let held = me.held.load(Ordering::Relaxed);
        self.node(held).store(false, Ordering::Release);
    }
}

impl RawLock for Clh {
    const NAME: &'static str = "clh";

    fn with_cores(cores: usize) -> Self {
        Self::new(cores)
    }

    #[inline]
    fn acquire<F: FnMut()>(&self, core: usize, spin: F) -> bool {
        self.acquire_as::<F, true>(&self.cores[core], spin).0
    }

    #[inline]
    unsafe fn acquire_unchecked<F: FnMut()>(&self, core: usize, spin: F) -> bool {
        debug_assert!(core < self.cores.len());
        // SAFETY: the caller promises `core < cores` (`RawLock`'s contract
        // for this method), the length of `self.cores`.
        self.acquire_as::<F, true>(unsafe { self.cores.get_unchecked(core) }, spin).0
    }

    /// The node queued: its release clears its flag, without the lock's
    /// `held` word (which this acquire does not write).
    type Held<'a> = &'a AtomicBool;

    #[inline(always)]
    unsafe fn acquire_held<F: FnMut()>(&self, core: usize, spin: F) -> (bool, &AtomicBool) {
        debug_assert!(core < self.cores.len());
        // SAFETY: as in `acquire_unchecked`.
        self.acquire_as::<F, false>(unsafe { self.cores.get_unchecked(core) }, spin)
    }

    #[inline(always)]
    unsafe fn release_held(&self, _core: usize, held: &AtomicBool) {
        held.store(false, Ordering::Release);
    }

    /// Succeeds only if the lock looked free. In one rare interleaving (see
    /// the comment inside) it then waits for up to `cores - 1` critical
    /// sections *without calling a spin hook*, because a CLH waiter cannot
    /// leave the queue: a core that must keep serving IPIs should use
    /// `acquire` with its hook rather than `try_acquire` on a CLH lock.
    #[inline]
    fn try_acquire(&self, core: usize) -> bool {
        let me = &self.cores[core];
        let tail = self.tail.load(Ordering::Acquire);
        if self.node(tail).load(Ordering::Acquire) {
            return false;
        }
        let mine = me.mine.load(Ordering::Relaxed);
        self.node(mine).store(true, Ordering::Relaxed);
        match self.tail.compare_exchange(tail, mine, Ordering::AcqRel, Ordering::Relaxed) {
            Ok(prev) => {
                me.held.store(mine, Ordering::Relaxed);
                me.mine.store(prev, Ordering::Relaxed);
                // We are queued now and a CLH waiter cannot leave the queue.
                // Usually `prev` is the released node we saw, but the tail can
                // have gone T -> X -> ... -> T in between (T re-queued by its
                // new owner): then we wait behind every core queued ahead of
                // T's owner, at most `cores - 1` critical sections, without a
                // spin hook. This is the only case where `try_acquire` waits.
                while self.node(prev).load(Ordering::Acquire) {
                    #[cfg(loom)]
                    LOOM_TRY_WAITS.fetch_add(1, core::sync::atomic::Ordering::Relaxed);
                    spin_loop();
                }
                true
            }
            Err(_) => {
                self.node(mine).store(false, Ordering::Relaxed);
                false
            }
        }
    }

    #[inline]
    fn release(&self, core: usize) {
        self.release_as(&self.cores[core]);
    }

    #[inline]
    unsafe fn release_unchecked(&self, core: usize) {
        debug_assert!(core < self.cores.len());
        // SAFETY: as in `acquire_unchecked`.
        self.release_as(unsafe { self.cores.get_unchecked(core) });
    }

    #[inline]
    fn is_locked(&self) -> bool {
        let tail = self.tail.load(Ordering::Acquire);
        self.node(tail).load(Ordering::Acquire)
    }
}
