//! The names of kernel things that cross module boundaries: a thread as the
//! platform sees it ([`ThreadId`]) and an object as a lock set names it
//! ([`ObjectId`]). Plain values, depending on nothing else in the kernel.

use core::fmt;

/// A thread: the slab index of its TCB plus the slot's generation.
///
/// The platform keys a thread's context by [`ThreadId::index`] (below
/// [`Kernel::max_threads`]); when the same index comes back with another
/// generation, it is a new thread in a reused slot.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ThreadId {
    pub(crate) index: u32,
    pub(crate) gen: u32,
}

impl ThreadId {
    /// The TCB slab index (stable for the thread's life, reused afterwards).
    pub const fn index(self) -> usize {
        self.index as usize
    }
    /// The slot generation.
    pub const fn generation(self) -> u32 {
        self.gen
    }
    /// Index and generation in one word (for logs and maps).
    pub const fn as_u64(self) -> u64 {
        (self.gen as u64) << 32 | self.index as u64
    }
}

impl fmt::Debug for ThreadId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "T{}.{}", self.index, self.gen)
    }
}

/// A kernel object: its kind and slab index (what a lock set names).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjectId {
    /// The kind ([`crate::abi::ObjectType`] as a number, or 8 for an IRQ handler).
    pub kind: u8,
    /// Index in the kind's slab.
    pub index: u32,
}

impl ObjectId {
    /// Kind and index packed in one word, ordered as `(kind, index)`.
    #[inline(always)]
    pub const fn key(self) -> u64 {
        (self.kind as u64) << 32 | self.index as u64
    }

    /// The object a [`Self::key`] packs.
    #[inline(always)]
    pub const fn from_key(key: u64) -> Self {
        Self { kind: (key >> 32) as u8, index: key as u32 }
    }
}

/// An address space: the slab index of its VSpace (reused after the
/// VSpace is destroyed, which `Translations::cleared` announces).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SpaceId(pub(crate) u32);

impl SpaceId {
    /// The VSpace's slab index.
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}
