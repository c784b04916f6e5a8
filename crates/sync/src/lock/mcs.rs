//! MCS queue lock with one queue node per core kept inside the lock.
//!
//! Algorithm: Mellor-Crummey & Scott (1991), Fig. 5. Layout: `tail` holds the
//! index of the last queued core's node, or `NONE`; node `i` (one cache line
//! each) belongs to core `i` for ever (unlike CLH, nodes are not swapped) and
//! holds `next` (successor's index or `NONE`) and `locked` (`true` while its
//! owner waits). A waiter spins on its own node, which its predecessor writes
//! once at hand-off.
//!
//! Release with no visible successor must CAS the tail back to `NONE`; if that
//! fails, a successor is between its `xchg` of the tail and its link store, and
//! we wait for the link. That CAS is the cost MCS pays over CLH.

use alloc::vec::Vec;
use crossbeam_utils::CachePadded;

use super::RawLock;
use crate::primitive::{spin_loop, AtomicBool, AtomicUsize, Ordering};

const NONE: usize = usize::MAX;

#[derive(Debug)]
struct Node {
    next: AtomicUsize,
    locked: AtomicBool,
}

/// MCS queue lock with per-core nodes.
#[derive(Debug)]
pub struct Mcs {
    tail: CachePadded<AtomicUsize>,
    nodes: Vec<CachePadded<Node>>,
}

impl Mcs {
    /// A free lock for cores `0..cores`.
    pub fn new(cores: usize) -> Self {
        assert!(cores >= 1, "a lock needs at least one core");
        Self {
            tail: CachePadded::new(AtomicUsize::new(NONE)),
            nodes: (0..cores)
                .map(|_| CachePadded::new(Node { next: AtomicUsize::new(NONE), locked: AtomicBool::new(false) }))
                .collect(),
        }
    }

    /// Acquire as `core`, whose node is `node`.
    #[inline(always)]
    fn acquire_as<F: FnMut()>(&self, core: usize, node: &Node, mut spin: F) -> bool {
        node.next.store(NONE, Ordering::Relaxed);
        let prev = self.tail.swap(core, Ordering::AcqRel);
        if prev == NONE {
            return false;
        }
        // As in the paper, `locked` is set only when there is a predecessor
        // to wait for: it cannot clear it before it finds us linked, and
        // the link's Release publishes `locked = true` first.
        node.locked.store(true, Ordering::Relaxed);
        self.nodes[prev].next.store(core, Ordering::Release);
        while node.locked.load(Ordering::Acquire) {
            spin();
            spin_loop();
        }
        true
    }

    /// Release as `core`, whose node is `node`.
    #[inline(always)]
    fn release_as(&self, core: usize, node: &Node) {
        let mut next = node.next.load(Ordering::Acquire);
        if next == NONE {
            if self.tail.compare_exchange(core, NONE, Ordering::Release, Ordering::Relaxed).is_ok() {
                return;
            }
            // A successor swapped the tail but has not linked yet.
            loop {
                next = node.next.load(Ordering::Acquire);
                if next != NONE {
                    break;
                }
                spin_loop();
            }
        }
        self.nodes[next].locked.store(false, Ordering::Release);
    }
}

impl RawLock for Mcs {
    const NAME: &'static str = "mcs";

    fn with_cores(cores: usize) -> Self {
        Self::new(cores)
    }

    #[inline]
    fn acquire<F: FnMut()>(&self, core: usize, spin: F) -> bool {
        self.acquire_as(core, &self.nodes[core], spin)
    }

    #[inline]
    unsafe fn acquire_unchecked<F: FnMut()>(&self, core: usize, spin: F) -> bool {
        debug_assert!(core < self.nodes.len());
        // SAFETY: the caller promises `core < cores` (`RawLock`'s contract
        // for this method), the length of `self.nodes`.
        self.acquire_as(core, unsafe { self.nodes.get_unchecked(core) }, spin)
    }

    held_is_unit!();

    #[inline]
    fn try_acquire(&self, core: usize) -> bool {
        let node = &self.nodes[core];
        node.next.store(NONE, Ordering::Relaxed);
        node.locked.store(true, Ordering::Relaxed);
        self.tail.compare_exchange(NONE, core, Ordering::AcqRel, Ordering::Relaxed).is_ok()
    }

    #[inline]
    fn release(&self, core: usize) {
        self.release_as(core, &self.nodes[core]);
    }

    #[inline]
    unsafe fn release_unchecked(&self, core: usize) {
        debug_assert!(core < self.nodes.len());
        // SAFETY: as in `acquire_unchecked`.
        self.release_as(core, unsafe { self.nodes.get_unchecked(core) });
    }

    #[inline]
    fn is_locked(&self) -> bool {
        // Acquire: see `Ttas::is_locked`.
        self.tail.load(Ordering::Acquire) != NONE
    }
}
