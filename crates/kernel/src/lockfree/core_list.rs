//! A short fixed list of slot entries that one core keeps for management
//! to finish: the detached frames (`detached.rs`) and the doomed threads
//! (`doomed.rs`) of `lockfree`'s shared paths.
//!
//! The list is its core's: written by that core's shared paths and by
//! management, never by two cores at once, so it is plain data. It is
//! small because management empties it at its next entry, and a shared
//! path that finds it full goes to management instead.

use crate::object::SlotAddr;

/// An entry that names the slot it is about.
pub(crate) trait Slotted: Copy {
    fn slot(&self) -> SlotAddr;
}

/// At most `N` entries of type `T`.
#[derive(Clone, Debug)]
pub(crate) struct CoreList<T, const N: usize> {
    entries: [Option<T>; N],
    /// How many entries are `Some` (every management entry asks).
    len: usize,
}

impl<T: Copy, const N: usize> Default for CoreList<T, N> {
    fn default() -> Self {
        Self { entries: [None; N], len: 0 }
    }
}

impl<T: Slotted, const N: usize> CoreList<T, N> {
    /// Note `entry`; `false` if the list is full.
    pub fn push(&mut self, entry: T) -> bool {
        match self.entries.iter_mut().find(|e| e.is_none()) {
            Some(e) => {
                *e = Some(entry);
                self.len += 1;
                true
            }
            None => false,
        }
    }

    /// Whether there is room for one more.
    pub fn has_room(&self) -> bool {
        self.len < N
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The entry of `slot`, if it is on the list.
    pub fn find(&self, slot: SlotAddr) -> Option<T> {
        self.iter().find(|e| e.slot() == slot)
    }

    /// Take `slot`'s entry off the list, if it was there.
    pub fn remove(&mut self, slot: SlotAddr) -> Option<T> {
        let e = self.entries.iter_mut().find(|e| e.is_some_and(|e| e.slot() == slot))?;
        self.len -= 1;
        e.take()
    }

    /// Empty the list, returning what was on it.
    pub fn take_all(&mut self) -> impl Iterator<Item = T> {
        self.len = 0;
        core::mem::replace(&mut self.entries, [None; N]).into_iter().flatten()
    }

    /// What is on the list.
    pub fn iter(&self) -> impl Iterator<Item = T> + '_ {
        self.entries.iter().flatten().copied()
    }
}
