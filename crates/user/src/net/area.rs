//! A socket's shared area: the two halves of a frame that an application
//! thread and its network stack share, one for each direction.
//!
//! **Protocol.** The application writes its outgoing bytes into `to_stack`
//! and then `Call`s the stack with their length; the stack reads them while
//! the application is blocked in that call, writes incoming bytes into
//! `to_app`, and replies with their length; the application reads them after
//! the call returned. The kernel's rendezvous orders each side's accesses
//! after the other's (the call and the reply are kernel entries that
//! synchronise both threads), so at any moment exactly one of them touches
//! each half: the contract [`Area::new`] states and the raw accesses rely on.

use std::ptr::NonNull;

/// One direction's half of a socket area.
#[derive(Clone, Copy, Debug)]
pub struct Half {
    base: NonNull<u8>,
    bytes: usize,
}

// SAFETY: a half is plain memory whose accesses the socket protocol (module
// documentation) serialises between the two threads that share it.
unsafe impl Send for Half {}
// SAFETY: as above.
unsafe impl Sync for Half {}

impl Half {
    /// Bytes it holds.
    pub fn capacity(&self) -> usize {
        self.bytes
    }

    /// Copy `data` (truncated to the capacity) in; returns the bytes copied.
    ///
    /// Only the side whose turn it is may call this (module protocol).
    pub fn write(&self, data: &[u8]) -> usize {
        let n = data.len().min(self.bytes);
        // SAFETY: the caller has the turn (the other thread is blocked in, or
        // not yet past, the rendezvous), `base` points to `bytes` bytes of a
        // mapped frame (`Area::new`), and `data` cannot overlap it (it is the
        // caller's own memory).
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), self.base.as_ptr(), n) };
        n
    }

    /// The first `len` bytes (clamped to the capacity), read in place.
    ///
    /// Only the side whose turn it is may call this (module protocol).
    pub fn read<T>(&self, len: usize, f: impl FnOnce(&[u8]) -> T) -> T {
        let n = len.min(self.bytes);
        // SAFETY: as in `write`: nobody writes the half while the turn holder
        // reads it, and the slice stays inside the frame.
        f(unsafe { std::slice::from_raw_parts(self.base.as_ptr(), n) })
    }

    /// Let `f` fill the half in place; returns what `f` reports written
    /// (clamped to the capacity).
    pub fn fill(&self, f: impl FnOnce(&mut [u8]) -> usize) -> usize {
        // SAFETY: as in `write`: the turn holder has exclusive access.
        f(unsafe { std::slice::from_raw_parts_mut(self.base.as_ptr(), self.bytes) }).min(self.bytes)
    }
}

/// Both halves of one socket's area.
#[derive(Clone, Copy, Debug)]
pub struct Area {
    /// Application → stack.
    pub to_stack: Half,
    /// Stack → application.
    pub to_app: Half,
}

impl Area {
    /// The area of `2 * half` bytes at `base`: `to_stack` first.
    ///
    /// # Safety
    ///
    /// `base..base + 2 * half` must be mapped memory used by nothing but one
    /// application thread and its stack, following the module's protocol,
    /// for as long as the area or a copy of it is alive.
    pub unsafe fn new(base: NonNull<u8>, half: usize) -> Self {
        // SAFETY: `base + half` is inside the region (the caller's contract).
        let second = unsafe { NonNull::new_unchecked(base.as_ptr().add(half)) };
        Self { to_stack: Half { base, bytes: half }, to_app: Half { base: second, bytes: half } }
    }
}
