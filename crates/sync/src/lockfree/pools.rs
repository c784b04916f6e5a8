//! Free lists of type-stable objects, one per owner, without locks: the
//! Synthesis kernel's free list of physical pages (seed `004` §5.3, "insert
//! and delete at the head with a tagged pointer against ABA").
//!
//! The kernel keeps one list per untyped object, of the 4 KiB frames carved
//! from it and freed since: a freed frame keeps its memory and its slab
//! slot, and the next allocation from the same untyped pops it instead of
//! asking the host's allocator.
//!
//! **Layout.** One [`super::tagged`] head (`cmpxchg16b` word: tag << 64 |
//! node index, `NIL` when empty) per list, cache-line padded; one
//! `AtomicU64` link word per node (bits 0..32 the successor), shared by all
//! the lists: a node is in at most one list at a time (the caller's
//! contract; the kernel's frames are, because only the core that owns a
//! frame pushes it).
//!
//! **Algorithm.** Treiber's stack with a version tag (`tagged.rs`): push
//! links the node to the head it read and CASes the head to it; pop reads
//! the head and its successor and CASes the head to the successor. The tag
//! changes with every successful CAS, so a popper that read a head whose
//! node was popped, reused and pushed back meanwhile fails its CAS instead
//! of installing a stale successor. The node array is type-stable, so such
//! a popper's read of the stale link is harmless.
//!
//! Every operation is one `cmpxchg16b` when uncontended, reported through
//! the caller's `rmw` (the kernel counts them).

use alloc::boxed::Box;
use alloc::vec::Vec;

use crossbeam_utils::CachePadded;

use super::interference::NoInterference;
use super::link::Rmw;
use super::tagged::{link_index, TaggedHead, NIL};
use crate::primitive::{AtomicU64, Ordering};

/// `lists` free lists over nodes `0..nodes`.
#[derive(Debug)]
pub struct Pools {
    heads: Box<[CachePadded<TaggedHead>]>,
    links: Box<[AtomicU64]>,
}

impl Pools {
    /// `lists` empty lists over `nodes` nodes.
    pub fn new(lists: usize, nodes: usize) -> Self {
        Self {
            heads: (0..lists).map(|_| CachePadded::new(TaggedHead::new(NIL))).collect(),
            links: (0..nodes).map(|_| AtomicU64::new(u64::from(NIL))).collect(),
        }
    }

    /// Push `node` on list `list`. The caller owns `node` (it is in no
    /// list) until the CAS publishes it. Out-of-range arguments are ignored
    /// and give `false`.
    pub fn push(&self, list: u32, node: u32, rmw: &impl Fn(Rmw)) -> bool {
        let (Some(head), true) = (self.heads.get(list as usize), (node as usize) < self.links.len()) else {
            return false;
        };
        let retries = head.push(|i| &self.links[i as usize], node, &mut NoInterference);
        for _ in 0..=retries {
            rmw(Rmw::Cmpxchg16b);
        }
        true
    }

    /// Pop the first node of list `list`, now the caller's; `None` if the
    /// list is empty (or out of range).
    pub fn pop(&self, list: u32, rmw: &impl Fn(Rmw)) -> Option<u32> {
        let head = self.heads.get(list as usize)?;
        if head.load().0 == NIL {
            return None;
        }
        let (node, retries) = head.pop(|i| &self.links[i as usize], &mut NoInterference);
        for _ in 0..=retries {
            rmw(Rmw::Cmpxchg16b);
        }
        node
    }

    /// Whether list `list` is empty now (a plain load of its head).
    pub fn is_empty(&self, list: u32) -> bool {
        self.heads.get(list as usize).map_or(true, |h| h.load().0 == NIL)
    }

    /// The nodes of list `list`, first to last. Only while nothing pushes
    /// or pops (the kernel: a management operation, or its checker).
    pub fn quiescent_nodes(&self, list: u32) -> Vec<u32> {
        let mut v = Vec::new();
        let Some(head) = self.heads.get(list as usize) else { return v };
        let mut cur = head.load().0;
        while cur != NIL && v.len() < self.links.len() {
            v.push(cur);
            cur = self.links.get(cur as usize).map_or(NIL, |l| link_index(l.load(Ordering::Relaxed)));
        }
        v
    }

    /// Empty list `list` and return its nodes, first to last. Only while
    /// nothing pushes or pops.
    pub fn quiescent_take(&self, list: u32) -> Vec<u32> {
        let v = self.quiescent_nodes(list);
        if let Some(head) = self.heads.get(list as usize) {
            let seen = head.load();
            // Nothing else changes the head now, so the CAS succeeds.
            let _ = head.replace(seen, NIL);
        }
        v
    }

    /// Number of lists.
    pub fn lists(&self) -> usize {
        self.heads.len()
    }
}
