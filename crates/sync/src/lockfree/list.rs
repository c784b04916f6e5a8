//! The linked list with insert and delete at the head (Synthesis Figure 2).
//!
//! **Word layout.**
//! * `head`, `free`: [`TaggedHead`] — 128 bits, `tag << 64 | index`
//!   (see [`super::tagged`]); `index` = `u32::MAX` means empty.
//! * `next[i]`: `AtomicU64` link word of node `i`, bits 0..32 the successor
//!   index (or `u32::MAX`), the other bits zero.
//! * `value[i]`: `AtomicU64`, the node's payload word.
//!
//! **Algorithm** (Massalin & Pu 1991, Figure 2). Insert reads the head,
//! copies it into the new node's link, and CASes the head from the old
//! first node to the new one. Delete reads the head and the first node's
//! link, and swaps the head to that successor. The 68030 version of delete
//! uses `CAS2` to check the head *and* the first node's link in one
//! instruction, because a node deleted and re-inserted between the read and
//! the CAS (ABA) would otherwise let the head jump to a stale successor.
//! x86-64 has no two-address CAS, so the head carries a version tag in the
//! same 128-bit word and the CAS is a one-address `cmpxchg16b`: any change
//! to the head in between bumps the tag and fails the CAS, which is what the
//! second comparison of `CAS2` guaranteed. This is Treiber's stack.
//!
//! **Nodes** come from a type-stable pool owned by the list: `capacity`
//! nodes allocated once and never returned to the allocator while the list
//! lives; free nodes sit on a second tagged LIFO (`free`) linked through the
//! same `next` words. A node is handed out as a [`Node`] token that is
//! neither `Copy` nor `Clone`, so a node is in at most one place — the free
//! pool, the list, or one caller's hands — and the type system, not a
//! comment, rules out inserting it twice. (Forging is impossible: the token
//! has no public constructor. A token used with a list other than the one
//! that allocated it is a logic error that can scramble that list's order
//! or panic on a bad index, but never causes undefined behaviour.)

use alloc::boxed::Box;

use crossbeam_utils::CachePadded;

use super::interference::{Interference, NoInterference, Retried};
use super::tagged::{TaggedHead, NIL};
use crate::primitive::{AtomicU64, Ordering};

/// A node of a [`List`] (or a [`SeqList`]): a linear token for the node's
/// index. Obtained from `alloc` or `delete`, consumed by `insert` or `free`.
#[derive(Debug, PartialEq, Eq)]
#[must_use = "a dropped node is leaked from the pool"]
pub struct Node {
    index: u32,
}

impl Node {
    /// The node's index in its list's pool (`0..capacity`), e.g. to keep a
    /// side table indexed like the nodes.
    #[inline]
    pub fn index(&self) -> u32 {
        self.index
    }
}

/// Largest pool a list can have (indices are 32 bits, one value is `NIL`).
pub const MAX_NODES: usize = (u32::MAX - 1) as usize;

/// A lock-free singly linked list with insert and delete at the head.
#[derive(Debug)]
pub struct List {
    head: CachePadded<TaggedHead>,
    free: CachePadded<TaggedHead>,
    next: Box<[AtomicU64]>,
    value: Box<[AtomicU64]>,
}

impl List {
    /// An empty list with a pool of `capacity` nodes.
    ///
    /// # Panics
    /// If `capacity` exceeds [`MAX_NODES`].
    pub fn new(capacity: usize) -> Self {
        assert!(capacity <= MAX_NODES, "list capacity {capacity} exceeds {MAX_NODES}");
        // Free pool: 0 -> 1 -> ... -> capacity-1 -> NIL.
        let next = (0..capacity)
            .map(|i| AtomicU64::new(if i + 1 < capacity { (i + 1) as u64 } else { u64::from(NIL) }))
            .collect();
        let value = (0..capacity).map(|_| AtomicU64::new(0)).collect();
        let first_free = if capacity == 0 { NIL } else { 0 };
        Self {
            head: CachePadded::new(TaggedHead::new(NIL)),
            free: CachePadded::new(TaggedHead::new(first_free)),
            next,
            value,
        }
    }

    /// Number of nodes in the pool.
    pub fn capacity(&self) -> usize {
        self.next.len()
    }

    #[inline(always)]
    fn link<'a>(&'a self) -> impl Fn(u32) -> &'a AtomicU64 + 'a {
        |i| &self.next[i as usize]
    }

    /// Take a node from the pool and store `value` in it; `None` if the pool
    /// is exhausted.
    #[inline]
    pub fn alloc(&self, value: u64) -> Option<Node> {
        self.alloc_counted(value).0
    }

    /// [`List::alloc`] that also returns the free list's retries.
    #[inline]
    pub(crate) fn alloc_counted(&self, value: u64) -> (Option<Node>, u32) {
        let (index, retries) = self.free.pop(self.link(), &mut NoInterference);
        let node = index.map(|index| {
            // Published by the release CAS that later inserts the node.
            self.value[index as usize].store(value, Ordering::Relaxed);
            Node { index }
        });
        (node, retries)
    }

    /// Return a node to the pool.
    #[inline]
    pub fn free(&self, node: Node) {
        let _ = self.free_counted(node);
    }

    /// [`List::free`] that returns the free list's retries.
    #[inline]
    pub(crate) fn free_counted(&self, node: Node) -> u32 {
        self.free.push(self.link(), node.index, &mut NoInterference)
    }

    /// The payload word of a node the caller holds.
    #[inline]
    pub fn value(&self, node: &Node) -> u64 {
        self.value[node.index as usize].load(Ordering::Relaxed)
    }

    /// Change the payload word of a node the caller holds (not in the list).
    #[inline]
    pub fn set_value(&self, node: &Node, value: u64) {
        self.value[node.index as usize].store(value, Ordering::Relaxed);
    }

    /// Insert `node` at the head (Figure 2 `Insert`).
    #[inline]
    pub fn insert(&self, node: Node) {
        let _ = self.insert_with(node, &mut NoInterference);
    }

    /// Insert `node` at the head, calling `hook` before each CAS.
    #[inline]
    pub fn insert_with<I: Interference + ?Sized>(&self, node: Node, hook: &mut I) -> Retried<()> {
        let retries = self.head.push(self.link(), node.index, hook);
        Retried { value: (), retries }
    }

    /// Remove and return the first node (Figure 2 `Delete`), `None` if the
    /// list is empty.
    #[inline]
    pub fn delete(&self) -> Option<Node> {
        self.delete_with(&mut NoInterference).value
    }

    /// Delete at the head, calling `hook` before each CAS.
    #[inline]
    pub fn delete_with<I: Interference + ?Sized>(&self, hook: &mut I) -> Retried<Option<Node>> {
        let (index, retries) = self.head.pop(self.link(), hook);
        Retried { value: index.map(|index| Node { index }), retries }
    }

    /// One conflicting write: bump the head's tag (as if another core had
    /// inserted and deleted a node). Makes an in-flight CAS on the head fail.
    #[inline]
    pub fn interfere(&self) {
        self.head.bump_tag();
    }

    /// Whether the list was empty when looked at.
    pub fn is_empty(&self) -> bool {
        self.head.load().0 == NIL
    }
}

/// The list without synchronisation (the "No Sync" column): the same head,
/// links, values and free pool, as plain words.
#[derive(Debug)]
pub struct SeqList {
    head: u32,
    free: u32,
    next: Box<[u32]>,
    value: Box<[u64]>,
}

impl SeqList {
    /// An empty list with a pool of `capacity` nodes.
    ///
    /// # Panics
    /// If `capacity` exceeds [`MAX_NODES`].
    pub fn new(capacity: usize) -> Self {
        assert!(capacity <= MAX_NODES, "list capacity {capacity} exceeds {MAX_NODES}");
        Self {
            head: NIL,
            free: if capacity == 0 { NIL } else { 0 },
            next: (0..capacity).map(|i| if i + 1 < capacity { (i + 1) as u32 } else { NIL }).collect(),
            value: alloc::vec![0; capacity].into_boxed_slice(),
        }
    }

    /// Take a node from the pool and store `value` in it.
    #[inline]
    pub fn alloc(&mut self, value: u64) -> Option<Node> {
        let index = self.free;
        if index == NIL {
            return None;
        }
        self.free = self.next[index as usize];
        self.value[index as usize] = value;
        Some(Node { index })
    }

    /// Return a node to the pool.
    #[inline]
    pub fn free(&mut self, node: Node) {
        self.next[node.index as usize] = self.free;
        self.free = node.index;
    }

    /// The payload word of a node.
    #[inline]
    pub fn value(&self, node: &Node) -> u64 {
        self.value[node.index as usize]
    }

    /// Insert at the head.
    #[inline]
    pub fn insert(&mut self, node: Node) {
        self.next[node.index as usize] = self.head;
        self.head = node.index;
    }

    /// Delete at the head.
    #[inline]
    pub fn delete(&mut self) -> Option<Node> {
        let index = self.head;
        if index == NIL {
            return None;
        }
        self.head = self.next[index as usize];
        Some(Node { index })
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.head == NIL
    }
}
