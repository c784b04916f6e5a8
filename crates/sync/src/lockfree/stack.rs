//! The LIFO stack of words (Synthesis Figure 1, on x86-64).
//!
//! **Word layout.** The stack is a [`List`]: a 128-bit tagged `top`
//! (`tag << 64 | index`, `index = u32::MAX` when empty), a second tagged
//! head for the free pool, and per node an `AtomicU64` link (bits 0..32 the
//! successor's index) and an `AtomicU64` value. See [`super::list`].
//!
//! **Algorithm.** Synthesis's stack (Massalin & Pu 1991, Figure 1) is an
//! array with a stack pointer: pop is a one-word CAS on the pointer, and push
//! is a `CAS2` that checks the stack pointer *and* the word above the top,
//! then writes both — the check on the slot stops a concurrent push from
//! being overwritten. x86-64 has no two-address CAS, and emulating it over a
//! pointer and an array slot needs a helping protocol that costs more than
//! it saves. So this is Treiber's linked stack with a version-tagged top
//! word changed by `cmpxchg16b` (the double-width CAS covers pointer + tag,
//! which makes it ABA-safe; see [`super::tagged`]):
//!
//! * `push(v)`: take a node from the free pool (one CAS on the pool's
//!   tagged head), store `v` in it, then the Treiber push on `top` (read
//!   top, link, CAS).
//! * `pop()`: Treiber pop on `top` (read top, read its link, CAS), read the
//!   value, return the node to the pool (one CAS on the pool's head).
//!
//! So each operation is two CASes where Synthesis's array stack had one;
//! the benchmark reports it as such. The interference hook applies to the
//! CAS on `top` (the stack's own word); the pool's CAS runs without a hook.
//! Retries reported count both loops.

use super::interference::{Interference, NoInterference, Retried};
use super::list::{List, SeqList};
use super::Full;

/// A lock-free bounded stack of `u64` words.
#[derive(Debug)]
pub struct Stack {
    list: List,
}

impl Stack {
    /// An empty stack that can hold `capacity` words.
    ///
    /// # Panics
    /// If `capacity` exceeds [`super::list::MAX_NODES`].
    pub fn new(capacity: usize) -> Self {
        Self { list: List::new(capacity) }
    }

    /// How many words the stack can hold.
    pub fn capacity(&self) -> usize {
        self.list.capacity()
    }

    /// Push `value`; `Err(Full(value))` if the stack is full.
    #[inline]
    pub fn push(&self, value: u64) -> Result<(), Full> {
        self.push_with(value, &mut NoInterference).value
    }

    /// Push, calling `hook` before each CAS on the top.
    #[inline]
    pub fn push_with<I: Interference + ?Sized>(&self, value: u64, hook: &mut I) -> Retried<Result<(), Full>> {
        let (node, pool_retries) = self.list.alloc_counted(value);
        match node {
            None => Retried { value: Err(Full(value)), retries: pool_retries },
            Some(node) => self.list.insert_with(node, hook).map(Ok).add_retries(pool_retries),
        }
    }

    /// Pop the top word; `None` if the stack is empty.
    #[inline]
    pub fn pop(&self) -> Option<u64> {
        self.pop_with(&mut NoInterference).value
    }

    /// Pop, calling `hook` before each CAS on the top.
    #[inline]
    pub fn pop_with<I: Interference + ?Sized>(&self, hook: &mut I) -> Retried<Option<u64>> {
        let Retried { value: node, retries } = self.list.delete_with(hook);
        match node {
            None => Retried { value: None, retries },
            Some(node) => {
                let value = self.list.value(&node);
                let pool_retries = self.list.free_counted(node);
                Retried { value: Some(value), retries: retries + pool_retries }
            }
        }
    }

    /// One conflicting write: bump the top's tag. Makes an in-flight CAS on
    /// the top fail.
    #[inline]
    pub fn interfere(&self) {
        self.list.interfere();
    }

    /// Whether the stack was empty when looked at.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }
}

/// The stack without synchronisation (the "No Sync" column): the same
/// linked layout and free pool as plain words.
#[derive(Debug)]
pub struct SeqStack {
    list: SeqList,
}

impl SeqStack {
    /// An empty stack that can hold `capacity` words.
    ///
    /// # Panics
    /// If `capacity` exceeds [`super::list::MAX_NODES`].
    pub fn new(capacity: usize) -> Self {
        Self { list: SeqList::new(capacity) }
    }

    /// Push `value`; `Err(Full(value))` if the stack is full.
    #[inline]
    pub fn push(&mut self, value: u64) -> Result<(), Full> {
        let node = self.list.alloc(value).ok_or(Full(value))?;
        self.list.insert(node);
        Ok(())
    }

    /// Pop the top word.
    #[inline]
    pub fn pop(&mut self) -> Option<u64> {
        let node = self.list.delete()?;
        let value = self.list.value(&node);
        self.list.free(node);
        Some(value)
    }

    /// Whether the stack is empty.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }
}
