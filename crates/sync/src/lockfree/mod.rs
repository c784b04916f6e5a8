//! Synthesis's lock-free objects ("quajects"), on x86-64.
//!
//! Massalin and Pu built Synthesis V.1 (Columbia CUCS-005-91, 1991), a
//! dual-68030 kernel with threads, virtual memory and I/O, with no locks at
//! all. Their recipe: squeeze shared state into one or two words and update
//! it with compare-and-swap; where it does not fit, use one of a few
//! lock-free objects — a counter, LIFO stacks, FIFO queues, linked lists —
//! and otherwise write an *optimistic* critical section that reads, works on
//! private copies, and commits with one CAS, retrying if anyone interfered.
//! These are those objects, with the operations of the paper's Figures 1–3,
//! so the kernel's `lockfree` regime and the `granule quaject` benchmark
//! (the paper's Table 1) can use them.
//!
//! | object | file | words CASed | source |
//! |---|---|---|---|
//! | [`Counter`] | `counter.rs` | 1 × 64 bit | §3.1 |
//! | [`List`] (insert/delete at head) | `list.rs` | 128-bit tagged head | Figure 2, Treiber 1986 |
//! | [`Stack`] of words | `stack.rs` | 128-bit tagged top + pool head | Figure 1 → Treiber |
//! | [`Queue`] (SPSC/SPMC/MPSC/MPMC) | `queue.rs` | 64-bit positions | §3.2, Vyukov 2010 |
//! | [`RcList`] (traversal, marked deletion) | `refcount_list.rs` | 64-bit links and counts | Figure 3, §3.3, Valois 1995 |
//! | [`DualQueue`] (senders *or* receivers waiting, FIFO) | `dual.rs`, `fifo.rs` | 64-bit tagged word, tagged links | Michael & Scott 1996 |
//! | [`SignalStack`] (badge bits + FIFO waiters) | `signal.rs`, `fifo.rs` | 128-bit word, tagged links | §2.3 "squeeze into two words", Michael & Scott 1996 |
//! | [`Inbox`] (MPSC, take-all) | `inbox.rs` | 64-bit head | Treiber push, Linux `llist` |
//! | [`IndexStack`] (LIFO free list of indices: buffer pools) | `index_stack.rs` | 64-bit head, 48-bit tag | Treiber 1986 |
//! | [`LogRing`] (byte messages, drop when full, sleeping reader) | `log_ring.rs` | 64-bit positions and sequences | Vyukov 2010 |
//! | [`rcu_tree::Tree`] (named nodes, byte values) | `rcu_tree.rs` | one body pointer per node | §4 optimistic update, RCU (McKenney 1998) |
//! | [`StopWord`] (suspend, resume, kill, the owner's stop) | `stop_word.rs` | 32-bit flags and home core | §4.2 `STOPME` |
//!
//! The kernel's `lockfree` regime uses the last six. `DualQueue`,
//! `SignalStack` and `Inbox` are *intrusive*: their nodes are indices into a link array
//! the caller owns (one `AtomicU64` per thread, layout in `link.rs`),
//! because a waiting thread is the node. The caller passes that array as a
//! [`Links`] view, which also receives a report of every atomic
//! read-modify-write the operation executes (the kernel counts them for
//! `granule ipc`; a plain closure ignores them).
//!
//! **No CAS2.** The 68030 has `CAS2`, a compare-and-swap over two
//! *unrelated* addresses, and Synthesis leans on it: stack push checks the
//! stack pointer and the slot above it, list delete checks the head and the
//! first node's link, traversal checks a link and a reference count. x86-64
//! has only `cmpxchg16b`, a CAS over two *adjacent* words. We use it to put
//! a version tag next to every head index, which gives delete-at-head the
//! ABA safety `CAS2` gave it; for traversal we emulate `CAS2` by
//! incrementing the count and then validating the link; the array stack of
//! Figure 1 becomes a linked (Treiber) stack. Each file says what it does
//! instead and why.
//!
//! **Type-stable nodes.** Stacks and lists take their nodes from a fixed
//! pool allocated with the object and never returned to the allocator while
//! it lives; nodes are named by 32-bit index. A reader that lost a race may
//! read a node that has been reused, but never freed memory, and the CAS (or
//! the validation) that follows fails. All shared state is atomics and the
//! module has no `unsafe`; a caller breaking a documented contract (two
//! producers on a single-producer queue) can lose elements, never memory
//! safety.
//!
//! **Interference.** Every read-then-CAS takes a hook ([`Interference`])
//! called between the read and the CAS with the attempt number, and every
//! operation can report its retries ([`Retried`]). A benchmark injects
//! exactly one conflicting write on attempt 0 — the objects with a tagged
//! or counted word offer `interfere()`, the cheapest such write — to measure
//! the seed's "1 retry" column, and a test asserts that exactly one retry
//! happened. [`NoInterference`] compiles to nothing.
//!
//! **No Sync.** Each object has a sequential twin ([`SeqCounter`],
//! [`SeqList`], [`SeqStack`], [`SeqQueue`], [`SeqRcList`]) with the same
//! layout and plain loads and stores, for the benchmark's baseline.
//!
//! Values are `u64` words, like Synthesis's longword queues: the kernel
//! stores thread and object indices in them. Full and empty are ordinary
//! results ([`Full`], `None`), never panics. Retry loops do not pause: a
//! failed CAS means another core made progress, so retrying at once is the
//! lock-free thing to do, and a pause would dominate the 1-retry cost.

mod counter;
mod dual;
mod fifo;
mod inbox;
mod index_stack;
mod interference;
mod link;
mod list;
mod log_ring;
mod mapping;
mod pools;
mod queue;
pub mod rcu_tree;
mod refcount_list;
mod seq_cell;
mod signal;
mod stack;
mod stop_word;
mod tagged;

pub use counter::{Counter, SeqCounter};
pub use dual::{DualQueue, Side, Snapshot, MAX_WAITER};
pub use inbox::{Drained, Inbox};
pub use index_stack::{IndexStack, MAX_INDICES};
pub use interference::{Interference, NoInterference, OnFirstAttempt, Retried};
pub use link::{new_link, Links, Rmw, MAX_NODE, NIL};
pub use list::{List, Node, SeqList, MAX_NODES};
pub use log_ring::{Appended, LogRing, Taken};
pub use mapping::{
    Geometry, MapError, Mapped, Mappings, MAX_CORES as MAPPING_MAX_CORES, MAX_PAGE_BITS, MAX_SPACES, PAGE_BITS,
};
pub use pools::Pools;
pub use queue::{
    Callbacks, Kind, Mpmc, MpmcQueue, Mpsc, MpscQueue, NoCallbacks, Queue, SeqQueue, Spmc, SpmcQueue, Spsc, SpscQueue,
    MAX_CAPACITY,
};
pub use refcount_list::{Iter, NodeRef, RcList, SeqRcList};
pub use seq_cell::{SeqCell, Value as SeqValue, WRITING as SEQ_WRITING};
pub use signal::{SignalStack, SignalState, Waited};
pub use stack::{SeqStack, Stack};
pub use stop_word::{Claim, Killed, Resumed, StopWord, Suspended};

/// A put or push found the object full; the rejected word is returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Full(pub u64);

impl core::fmt::Display for Full {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "full (rejected {})", self.0)
    }
}
