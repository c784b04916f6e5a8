//! The inbox: many producers push nodes, one consumer takes them all at
//! once, oldest first (a core's queue of threads woken by other cores).
//!
//! **Word layout.** `head`: one `AtomicU64` holding the index of the most
//! recently pushed node plus one, `0` = empty (as the links and the dual
//! queue's ends encode "none": the empty test is a compare with zero, one
//! instruction on every kernel entry). Nodes are linked newest to oldest
//! through the caller's link array (see [`super::link`]).
//!
//! **Algorithm.** A Treiber push (R. K. Treiber, IBM RJ 5118, 1986) and a
//! take-all by `swap(empty)`, the intrusive MPSC list of the Linux kernel's
//! `llist` (`llist_add` / `llist_del_all`). No node is ever popped singly,
//! so there is no ABA problem and the head needs no tag: a pusher's CAS
//! only ever compares against a head that no consumer can have recycled
//! without changing it. After `take_all` the consumer owns every taken node
//! and reverses the chain in place, so [`Drained`] yields them in push
//! order (FIFO per producer, and in the order the pushes took effect).
//!
//! **Orderings.** The push CAS is `Release` (`AcqRel`): it publishes what
//! the producer wrote before it; the `swap` of `take_all` is `Acquire`.
//! [`Inbox::is_empty`] is a `Relaxed` load. A Dekker-style handshake — a
//! consumer publishes a value and then asks `is_empty`, a producer pushes
//! and then reads the value, and one of them must see the other — needs a
//! `fence(SeqCst)` between the two accesses on each side (the kernel's "I
//! am about to run a lower-priority thread: did anyone just wake a thread
//! for me without interrupting me?"; modelled in `tests/loom_lockfree.rs`).

use core::marker::PhantomData;

use super::link::{self, relink, Links, Rmw, NIL};
use crate::primitive::{AtomicU64, Ordering};

/// The head word of an empty inbox.
const EMPTY: u64 = 0;

/// The head word naming `node` (not [`NIL`]) as the newest.
#[inline(always)]
fn word(node: u32) -> u64 {
    debug_assert_ne!(node, NIL);
    u64::from(node) + 1
}

/// The newest node a head word names ([`NIL`] for [`EMPTY`]).
#[inline(always)]
fn index(head: u64) -> u32 {
    (head as u32).wrapping_sub(1)
}

/// A multi-producer, single-consumer inbox of nodes; see the module
/// documentation.
#[derive(Debug)]
pub struct Inbox {
    head: AtomicU64,
}

impl Default for Inbox {
    fn default() -> Self {
        Self::new()
    }
}

impl Inbox {
    /// An empty inbox.
    pub fn new() -> Self {
        Self { head: AtomicU64::new(EMPTY) }
    }

    /// Push `node` (the caller's until the push publishes it).
    #[inline]
    pub fn push<'a, L>(&self, links: L, node: u32)
    where
        L: Links<'a>,
    {
        let mut h = self.head.load(Ordering::Relaxed);
        loop {
            relink(links.link(node), index(h));
            links.rmw(Rmw::Cmpxchg);
            match self.head.compare_exchange(h, word(node), Ordering::AcqRel, Ordering::Relaxed) {
                Ok(_) => return,
                Err(now) => h = now,
            }
        }
    }

    /// Whether the inbox is empty (a `Relaxed` load; see the module docs).
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.head.load(Ordering::Relaxed) == EMPTY
    }

    /// The nodes in the inbox, newest first, left in it. **Exclusive**: only
    /// while no push and no take can run (the caller excludes every other
    /// user, as the kernel's invariant checker does); each link is read
    /// with a plain load.
    pub fn members<'a, L>(&self, links: L) -> Drained<'a, L>
    where
        L: Links<'a>,
    {
        Drained { links, next: index(self.head.load(Ordering::Acquire)), _links: PhantomData }
    }

    /// Take every node pushed so far, oldest first. **Single consumer**: at
    /// most one thread may call this at a time (two would each get a valid
    /// chain, but a consumer racing its own reversal is a logic error).
    #[inline]
    pub fn take_all<'a, L>(&self, links: L) -> Drained<'a, L>
    where
        L: Links<'a>,
    {
        if self.head.load(Ordering::Relaxed) == EMPTY {
            return Drained { links, next: NIL, _links: PhantomData };
        }
        // Newest first; reverse in place (the nodes are ours now).
        links.rmw(Rmw::Xchg);
        let mut cur = index(self.head.swap(EMPTY, Ordering::Acquire));
        let mut prev = NIL;
        while cur != NIL {
            let next = link::load(links.link(cur)).next;
            relink(links.link(cur), prev);
            prev = cur;
            cur = next;
        }
        Drained { links, next: prev, _links: PhantomData }
    }
}

/// The nodes taken by [`Inbox::take_all`], oldest first (or looked at by
/// [`Inbox::members`], newest first, not taken). Each node's link is
/// read before the node is yielded, so after `take_all` the consumer may
/// reuse a yielded node's link at once.
#[derive(Debug)]
pub struct Drained<'a, L: Links<'a>> {
    links: L,
    next: u32,
    _links: PhantomData<&'a AtomicU64>,
}

impl<'a, L: Links<'a>> Iterator for Drained<'a, L> {
    type Item = u32;

    #[inline]
    fn next(&mut self) -> Option<u32> {
        if self.next == NIL {
            return None;
        }
        let n = self.next;
        self.next = link::load(self.links.link(n)).next;
        Some(n)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    #[test]
    fn take_all_yields_push_order() {
        let l: Vec<AtomicU64> = (0..4).map(|_| AtomicU64::new(link::new_link())).collect();
        let at = |i: u32| &l[i as usize];
        let q = Inbox::new();
        assert!(q.is_empty());
        assert_eq!(q.take_all(at).count(), 0);
        for n in [2, 0, 3] {
            q.push(at, n);
        }
        assert!(!q.is_empty());
        assert_eq!(q.take_all(at).collect::<Vec<_>>(), [2, 0, 3]);
        assert!(q.is_empty());
        q.push(at, 1);
        assert_eq!(q.take_all(at).collect::<Vec<_>>(), [1]);
    }

    #[test]
    fn members_are_looked_at_without_being_taken() {
        let l: Vec<AtomicU64> = (0..4).map(|_| AtomicU64::new(link::new_link())).collect();
        let at = |i: u32| &l[i as usize];
        let q = Inbox::new();
        assert_eq!(q.members(at).count(), 0);
        for n in [2, 0, 3] {
            q.push(at, n);
        }
        assert_eq!(q.members(at).collect::<Vec<_>>(), [3, 0, 2]);
        assert!(!q.is_empty());
        assert_eq!(q.take_all(at).collect::<Vec<_>>(), [2, 0, 3]);
    }

    #[test]
    fn reports_the_documented_rmw_counts() {
        use crate::lockfree::link::counted::Counted;
        let l = Counted::new(2);
        let q = Inbox::new();
        assert_eq!(q.take_all(&l).count(), 0);
        assert_eq!(l.take(), [], "an empty inbox is only read");
        q.push(&l, 0);
        q.push(&l, 1);
        assert_eq!(q.take_all(&l).collect::<Vec<_>>(), [0, 1]);
        assert_eq!(l.take(), [Rmw::Cmpxchg, Rmw::Cmpxchg, Rmw::Xchg]);
    }
}
