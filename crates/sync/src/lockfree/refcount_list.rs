//! The general linked list: reference-counted traversal (Synthesis Figure 3)
//! and marked deletion (mark, then unlink on a later traversal).
//!
//! **Word layout.**
//! * `head`, `free`: [`TaggedHead`], 128 bits, `tag << 64 | index`
//!   (`index = u32::MAX` = none); see [`super::tagged`].
//! * per node, `next`: `AtomicU64` link word — bits 0..32 the successor's
//!   index (`u32::MAX` = none), bit 32 `MARK` (this node is deleted), bits
//!   33..64 zero. While the node is free the same word links the free pool.
//! * per node, `rc`: `AtomicU64` — bits 0..32 the reference count, bit 32
//!   `FREE` (the node has been reclaimed into the pool), bits 33..64 zero.
//! * per node, `value`: `AtomicU64` payload, written before the node is
//!   published and never changed while it is in the list.
//!
//! **Insert** is at the head only (Figure 2's insert: read the head, link
//! the node to it, CAS the head; the head is version-tagged because x86-64
//! has no `CAS2`, see [`super::list`]).
//!
//! **Reference counts** (Herlihy 1991, as used by Synthesis; Valois, "Lock-
//! free linked lists using compare-and-swap", PODC 1995; with the correction
//! of Michael & Scott, TR 599, Rochester 1995). A node's count is the number
//! of links pointing at it (from the head or from another node's `next`)
//! plus the number of traversers holding it ([`NodeRef`]). A node is
//! reclaimed — pushed back on the free pool, never to the allocator — by
//! whoever drops its count to zero; reclaiming releases the node's own link
//! to its successor, which can cascade.
//!
//! **Visiting the next node** (Figure 3's `VisitNextNode`). The 68030 does
//! it with one `CAS2(next_node, old_ref; next_node, old_ref + 1; nextp,
//! refp)`: increment the successor's count *if* the predecessor's link still
//! points at it. x86-64 has no two-address CAS, so we emulate it by
//! **increment-then-validate**: read the link, increment the count of the
//! node it names, re-read the link; if it changed, decrement and retry. The
//! increment may land on a node that was reclaimed meanwhile (or even
//! reused) — harmless, because nodes are type-stable (the array lives as
//! long as the list) and the count word tolerates such transient
//! references: reclaiming sets `FREE` in the same CAS that takes the count
//! to zero, a transient holder's later decrement sees `FREE` and does not
//! reclaim twice, and allocation clears `FREE` but keeps the count. The
//! re-read cannot be fooled by a reused node: links only ever point from a
//! node to one inserted earlier (insertion is at the head, and unlinking
//! copies an older successor into a newer predecessor), while a reused node
//! is newer than every node that existed before it was reclaimed; at the
//! head the tag rules out ABA. A validated node is referenced by a live link
//! at the moment of validation and by us afterwards, so it stays allocated
//! and its `next` and `value` stay meaningful until we release it.
//!
//! **Marked deletion** (Massalin & Pu 1991 §3.3; the mark-in-the-link of
//! Harris, "A pragmatic implementation of non-blocking linked-lists", DISC
//! 2001). Deleting is two steps: (1) CAS the deleted node's own link from
//! `succ` to `succ | MARK` — the node stays in the list, and its link is
//! frozen from then on, because every other CAS on a link expects it
//! unmarked; (2) a later traversal sitting on an *unmarked* predecessor
//! (or on the head) swaps the predecessor's link from the node to its frozen
//! successor, the step Synthesis describes as "sit on it and delete the
//! original node". A marked predecessor cannot be used (its link is frozen),
//! so the traversal steps over such nodes and leaves them for a later pass.
//! Traversal returns only unmarked nodes.
//!
//! **Orderings.** Count changes are `AcqRel` read-modify-writes, links and
//! the head are loaded `Acquire` and CASed `AcqRel`. The validation is a
//! store-then-load against the unlinker's CAS-then-release; both of the
//! unlinker's steps are read-modify-writes with release semantics, which
//! is what orders them against the traverser's increment.

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::fmt;

use crossbeam_utils::CachePadded;

use super::interference::{Interference, NoInterference, Retried};
use super::list::MAX_NODES;
use super::tagged::{link_index, Seen, TaggedHead, MARK, NIL};
use super::Full;
use crate::primitive::{AtomicU64, Ordering};

/// `rc` bit: the node has been reclaimed into the free pool.
const FREE: u64 = 1 << 32;
/// `rc` bits holding the count.
const COUNT: u64 = FREE - 1;

#[derive(Debug)]
struct RcNode {
    next: AtomicU64,
    rc: AtomicU64,
    value: AtomicU64,
}

/// A lock-free list with insert at the head, reference-counted traversal
/// and marked deletion of any node.
pub struct RcList {
    head: CachePadded<TaggedHead>,
    free: CachePadded<TaggedHead>,
    nodes: Box<[RcNode]>,
}

/// A counted reference to a node of an [`RcList`], obtained by traversal.
/// While it lives the node is not reclaimed; dropping it releases the
/// reference (Figure 3's `ReleaseNode`).
pub struct NodeRef<'a> {
    list: &'a RcList,
    index: u32,
}

impl RcList {
    /// An empty list with a pool of `capacity` nodes.
    ///
    /// # Panics
    /// If `capacity` exceeds [`MAX_NODES`].
    pub fn new(capacity: usize) -> Self {
        assert!(capacity <= MAX_NODES, "list capacity {capacity} exceeds {MAX_NODES}");
        let nodes = (0..capacity)
            .map(|i| RcNode {
                next: AtomicU64::new(if i + 1 < capacity { (i + 1) as u64 } else { u64::from(NIL) }),
                rc: AtomicU64::new(FREE),
                value: AtomicU64::new(0),
            })
            .collect();
        Self {
            head: CachePadded::new(TaggedHead::new(NIL)),
            free: CachePadded::new(TaggedHead::new(if capacity == 0 { NIL } else { 0 })),
            nodes,
        }
    }

    /// Number of nodes in the pool.
    pub fn capacity(&self) -> usize {
        self.nodes.len()
    }

    #[inline(always)]
    fn node(&self, i: u32) -> &RcNode {
        &self.nodes[i as usize]
    }

    #[inline(always)]
    fn link<'a>(&'a self) -> impl Fn(u32) -> &'a AtomicU64 + 'a {
        |i| &self.nodes[i as usize].next
    }

    /// Add one reference to node `i` (possibly a transient one, see the
    /// module documentation).
    #[inline]
    fn acquire(&self, i: u32) {
        self.node(i).rc.fetch_add(1, Ordering::AcqRel);
    }

    /// Drop one reference to node `i`; reclaim it (and cascade to its
    /// successor) if that was the last.
    fn release(&self, mut i: u32) {
        loop {
            let rc = &self.node(i).rc;
            let mut old = rc.load(Ordering::Acquire);
            let reclaim = loop {
                debug_assert!(old & COUNT != 0, "release of node {i} without a reference");
                let (new, reclaim) = if old == 1 { (FREE, true) } else { (old.wrapping_sub(1), false) };
                match rc.compare_exchange(old, new, Ordering::AcqRel, Ordering::Acquire) {
                    Ok(_) => break reclaim,
                    Err(now) => old = now,
                }
            };
            if !reclaim {
                return;
            }
            // We own node `i` now: nothing links to it and nobody holds it.
            // Read its link before the pool reuses the word.
            let succ = link_index(self.node(i).next.load(Ordering::Acquire));
            self.free.push(self.link(), i, &mut NoInterference);
            if succ == NIL {
                return;
            }
            i = succ;
        }
    }

    /// Take a node from the pool with one reference (its future head link).
    fn alloc(&self, value: u64) -> (Option<u32>, u32) {
        let (index, retries) = self.free.pop(self.link(), &mut NoInterference);
        if let Some(i) = index {
            let node = self.node(i);
            let mut old = node.rc.load(Ordering::Acquire);
            // Clear FREE, keep transient references, add ours.
            while let Err(now) = node.rc.compare_exchange(old, (old & COUNT) + 1, Ordering::AcqRel, Ordering::Acquire) {
                old = now;
            }
            node.value.store(value, Ordering::Relaxed);
        }
        (index, retries)
    }

    /// Insert `value` at the head; returns the node's index, or
    /// `Err(Full(value))` if the pool is exhausted.
    #[inline]
    pub fn insert(&self, value: u64) -> Result<u32, Full> {
        self.insert_with(value, &mut NoInterference).value
    }

    /// Insert at the head, calling `hook` before each CAS on the head.
    pub fn insert_with<I: Interference + ?Sized>(&self, value: u64, hook: &mut I) -> Retried<Result<u32, Full>> {
        let (index, pool_retries) = self.alloc(value);
        let Some(i) = index else {
            return Retried { value: Err(Full(value)), retries: pool_retries };
        };
        // The head's old reference to its first node moves into our link;
        // the reference `alloc` gave us becomes the head's.
        let retries = self.head.push(self.link(), i, hook);
        Retried { value: Ok(i), retries: retries + pool_retries }
    }

    /// One conflicting write: bump the head's tag. Makes an in-flight
    /// insert's CAS fail.
    pub fn interfere(&self) {
        self.head.bump_tag();
    }

    /// The first live node, referenced.
    pub fn first(&self) -> Option<NodeRef<'_>> {
        self.advance(None).map(|index| NodeRef { list: self, index })
    }

    /// Iterate over the live nodes from the head.
    pub fn iter(&self) -> Iter<'_> {
        Iter { list: self, cur: None, started: false }
    }

    /// Traverse the whole list, unlinking every deleted node that has a live
    /// predecessor (step 2 of marked deletion). Returns the live nodes seen.
    pub fn purge(&self) -> usize {
        self.iter().count()
    }

    /// Mark `node` deleted (step 1 of marked deletion). Returns whether this
    /// call deleted it (`false`: someone else already had).
    pub fn delete(&self, node: &NodeRef<'_>) -> bool {
        self.delete_with(node, &mut NoInterference).value
    }

    /// Mark `node` deleted, calling `hook` before each CAS on its link. A
    /// node of another list is not deleted (`false`, no retries).
    pub fn delete_with<I: Interference + ?Sized>(&self, node: &NodeRef<'_>, hook: &mut I) -> Retried<bool> {
        if !core::ptr::eq(node.list, self) {
            return Retried { value: false, retries: 0 };
        }
        let next = &self.node(node.index).next;
        let mut attempt = 0;
        let mut old = next.load(Ordering::Acquire);
        loop {
            if old & MARK != 0 {
                return Retried { value: false, retries: attempt };
            }
            hook.before_cas(attempt);
            match next.compare_exchange(old, old | MARK, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return Retried { value: true, retries: attempt },
                Err(now) => {
                    old = now;
                    attempt += 1;
                }
            }
        }
    }

    /// Number of nodes in the free pool (walks the pool; a racy snapshot,
    /// meant for tests run when no other thread uses the list).
    pub fn free_nodes(&self) -> usize {
        let mut n = 0;
        let mut i = self.free.load().0;
        while i != NIL && n < self.capacity() {
            n += 1;
            i = link_index(self.node(i).next.load(Ordering::Acquire));
        }
        n
    }

    /// Starting after `start` (the head for `None`, else a node the caller
    /// holds a reference on), the first unmarked node, with a reference
    /// taken for the caller. Unlinks deleted nodes on the way.
    fn advance(&self, start: Option<u32>) -> Option<u32> {
        // `pred`: where we stand; `own_pred`: whether we (not the caller)
        // hold the reference on it.
        let mut pred = start;
        let mut own_pred = false;
        let found = loop {
            // Read the link (VisitNextNode: `next_node = *nextp`).
            let (x, head_seen): (u32, Option<Seen>) = match pred {
                None => {
                    let seen = self.head.load();
                    (seen.0, Some(seen))
                }
                Some(p) => (link_index(self.node(p).next.load(Ordering::Acquire)), None),
            };
            if x == NIL {
                break None;
            }
            // Emulated CAS2: increment, then validate the link.
            self.acquire(x);
            let valid = match (pred, head_seen) {
                (None, Some(seen)) => self.head.load() == seen,
                (Some(p), _) => link_index(self.node(p).next.load(Ordering::Acquire)) == x,
                (None, None) => false,
            };
            if !valid {
                self.release(x);
                continue;
            }
            let x_link = self.node(x).next.load(Ordering::Acquire);
            if x_link & MARK == 0 {
                break Some(x);
            }
            // `x` is deleted. Unlink it if we stand on a live predecessor.
            let pred_live = match pred {
                None => true,
                Some(p) => self.node(p).next.load(Ordering::Acquire) & MARK == 0,
            };
            if pred_live {
                let succ = link_index(x_link);
                if succ != NIL {
                    // The reference the predecessor's link will hold; `succ`
                    // is alive because `x`'s frozen link holds one.
                    self.acquire(succ);
                }
                let unlinked = match (pred, head_seen) {
                    (None, Some(seen)) => self.head.replace(seen, succ).is_ok(),
                    (Some(p), _) => self
                        .node(p)
                        .next
                        .compare_exchange(u64::from(x), u64::from(succ), Ordering::AcqRel, Ordering::Acquire)
                        .is_ok(),
                    (None, None) => false,
                };
                if unlinked {
                    self.release(x); // the predecessor's link
                } else if succ != NIL {
                    self.release(succ);
                }
                self.release(x); // ours
                continue;
            }
            // The predecessor is deleted too: its link is frozen, so step
            // onto `x` and leave both for a later pass.
            if own_pred {
                if let Some(p) = pred {
                    self.release(p);
                }
            }
            pred = Some(x);
            own_pred = true;
        };
        if own_pred {
            if let Some(p) = pred {
                self.release(p);
            }
        }
        found
    }
}

impl fmt::Debug for RcList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RcList").field("capacity", &self.capacity()).field("head", &self.head.load()).finish()
    }
}

impl<'a> NodeRef<'a> {
    /// The node's index in the pool.
    pub fn index(&self) -> u32 {
        self.index
    }

    /// The node's payload word.
    pub fn value(&self) -> u64 {
        self.list.node(self.index).value.load(Ordering::Relaxed)
    }

    /// Whether the node has been marked deleted.
    pub fn is_deleted(&self) -> bool {
        self.list.node(self.index).next.load(Ordering::Acquire) & MARK != 0
    }

    /// The next live node after this one (Figure 3's `VisitNextNode`,
    /// skipping and unlinking deleted nodes).
    pub fn next(&self) -> Option<NodeRef<'a>> {
        self.list.advance(Some(self.index)).map(|index| NodeRef { list: self.list, index })
    }
}

impl Drop for NodeRef<'_> {
    fn drop(&mut self) {
        self.list.release(self.index);
    }
}

impl fmt::Debug for NodeRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NodeRef").field("index", &self.index).field("value", &self.value()).finish()
    }
}

/// Iterator over the live nodes of an [`RcList`].
#[derive(Debug)]
pub struct Iter<'a> {
    list: &'a RcList,
    cur: Option<NodeRef<'a>>,
    started: bool,
}

impl<'a> Iterator for Iter<'a> {
    type Item = NodeRef<'a>;

    fn next(&mut self) -> Option<NodeRef<'a>> {
        let next = if self.started {
            self.cur.as_ref()?.next()
        } else {
            self.started = true;
            self.list.first()
        };
        // Keep our own reference on the node we stand on; hand the caller
        // another.
        self.cur = next.as_ref().map(|n| {
            self.list.acquire(n.index);
            NodeRef { list: self.list, index: n.index }
        });
        next
    }
}

/// The general list without synchronisation (the "No Sync" column): the
/// same link words (index + mark) and pool, as plain words, no counts.
#[derive(Debug)]
pub struct SeqRcList {
    head: u32,
    free: u32,
    next: Box<[u64]>,
    value: Box<[u64]>,
}

impl SeqRcList {
    /// An empty list with a pool of `capacity` nodes.
    ///
    /// # Panics
    /// If `capacity` exceeds [`MAX_NODES`].
    pub fn new(capacity: usize) -> Self {
        assert!(capacity <= MAX_NODES, "list capacity {capacity} exceeds {MAX_NODES}");
        Self {
            head: NIL,
            free: if capacity == 0 { NIL } else { 0 },
            next: (0..capacity).map(|i| if i + 1 < capacity { (i + 1) as u64 } else { u64::from(NIL) }).collect(),
            value: alloc::vec![0; capacity].into_boxed_slice(),
        }
    }

    /// Insert at the head; returns the node's index.
    pub fn insert(&mut self, value: u64) -> Result<u32, Full> {
        let i = self.free;
        if i == NIL {
            return Err(Full(value));
        }
        self.free = link_index(self.next[i as usize]);
        self.value[i as usize] = value;
        self.next[i as usize] = u64::from(self.head);
        self.head = i;
        Ok(i)
    }

    /// Mark node `index` deleted; whether it was live.
    pub fn delete(&mut self, index: u32) -> bool {
        match self.next.get_mut(index as usize) {
            Some(link) if *link & MARK == 0 => {
                *link |= MARK;
                true
            }
            _ => false,
        }
    }

    /// Unlink and free every deleted node; returns the live nodes.
    pub fn purge(&mut self) -> usize {
        let mut live = 0;
        let mut pred: Option<u32> = None;
        let mut cur = self.head;
        while cur != NIL {
            let link = self.next[cur as usize];
            let succ = link_index(link);
            if link & MARK != 0 {
                match pred {
                    None => self.head = succ,
                    Some(p) => self.next[p as usize] = u64::from(succ),
                }
                self.next[cur as usize] = u64::from(self.free);
                self.free = cur;
            } else {
                live += 1;
                pred = Some(cur);
            }
            cur = succ;
        }
        live
    }

    /// `(index, value)` of the live nodes from the head.
    pub fn live(&self) -> Vec<(u32, u64)> {
        let mut out = Vec::new();
        let mut cur = self.head;
        while cur != NIL {
            let link = self.next[cur as usize];
            if link & MARK == 0 {
                out.push((cur, self.value[cur as usize]));
            }
            cur = link_index(link);
        }
        out
    }
}
