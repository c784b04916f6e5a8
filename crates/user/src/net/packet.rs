//! Packets: fixed-size buffers in a frame shared by everyone on the path
//! (the far side of the card, the driver, the network stacks), named by a
//! descriptor word.
//!
//! **Layout of a buffer** (`BUF_BYTES` = 2048 bytes, little-endian):
//!
//! ```text
//! 0..2  destination port     2..4  source port
//! 4..6  payload length       6..8  flags (FIN = 1: the sender closes;
//!                                         TICK = 2: a wake-up, no payload)
//! 8..   payload (at most PAYLOAD_MAX = 2040 bytes)
//! ```
//!
//! **Ownership.** A buffer is owned by whoever holds its descriptor: the
//! pool's free list, then the producer that took it, then each queue or
//! ring it travels through (granule-sync queues publish the word with
//! release and take it with acquire ordering, so the bytes written before
//! the hand-off are visible after it), until its last consumer returns it
//! with [`PacketPool::free`]. Only the owner reads or writes the bytes. This
//! is the contract that makes the raw accesses below sound.

use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering};

use granule_sync::lockfree::{IndexStack, MAX_INDICES};

/// Bytes of one buffer.
pub const BUF_BYTES: usize = 2048;
/// Bytes of the header.
pub const HEADER_BYTES: usize = 8;
/// Most payload bytes one packet carries.
pub const PAYLOAD_MAX: usize = BUF_BYTES - HEADER_BYTES;
/// Flag: the sender closes the connection after this packet's payload.
pub const FIN: u16 = 1;
/// Flag: a wake-up for the application behind port `dst`, on no
/// connection and with no payload: the time it asked to be woken at came
/// (see `crate::kv::system::ServerState::wake_at_ms`).
pub const TICK: u16 = 2;

/// A packet's header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// Where it goes (the driver demultiplexes on it).
    pub dst: u16,
    /// Where it came from (a connection is the pair of ports).
    pub src: u16,
    /// Payload bytes.
    pub len: u16,
    /// [`FIN`], [`TICK`] or 0.
    pub flags: u16,
}

/// A pool of packet buffers in shared memory, with a lock-free free list
/// that any thread allocates from and frees to. The list is last-in
/// first-out (granule-sync's [`IndexStack`]): the buffer freed last, its
/// bytes likely still in the cache, is the next one handed out. A
/// first-in first-out list used every buffer of the frame in turn, each one
/// cold by the time it came round, and a locked instruction after the copy
/// into it waited for those stores (`docs/kv.md`).
pub struct PacketPool {
    base: NonNull<u8>,
    /// Its capacity is the pool's buffer count.
    free: IndexStack,
    /// Buffers in `free`, or a few more while frees and allocations are
    /// under way (relaxed: a reading for the far side's reserve, which
    /// needs no more).
    free_count: AtomicUsize,
}

// SAFETY: the pool hands out each buffer to one owner at a time (the
// descriptor-ownership contract of the module documentation); the memory it
// points into is a frame that outlives the pool (`PacketPool::new`'s
// contract), and the free list is a lock-free queue of plain words.
unsafe impl Send for PacketPool {}
// SAFETY: as above: shared access only ever touches the free list (atomic)
// and buffers owned by the caller.
unsafe impl Sync for PacketPool {}

impl std::fmt::Debug for PacketPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PacketPool").field("count", &self.count()).field("free", &self.free_now()).finish()
    }
}

impl PacketPool {
    /// A pool over `bytes` bytes at `base` (whole buffers only, at most
    /// [`MAX_INDICES`] of them).
    ///
    /// # Safety
    ///
    /// `base..base + bytes` must be memory that nothing else uses while the
    /// pool or any descriptor it handed out is alive: a frame mapped for the
    /// experiment's lifetime.
    pub unsafe fn new(base: NonNull<u8>, bytes: usize) -> Self {
        let count = (bytes / BUF_BYTES).min(MAX_INDICES);
        Self { base, free: IndexStack::full(count), free_count: AtomicUsize::new(count) }
    }

    /// Buffers in the pool.
    pub fn count(&self) -> usize {
        self.free.capacity()
    }

    /// Buffers free now.
    pub fn free_now(&self) -> usize {
        self.free_count.load(Ordering::Relaxed)
    }

    /// Take a free buffer (`None`: all in flight).
    pub fn alloc(&self) -> Option<u64> {
        let d = self.free.pop()?;
        self.free_count.fetch_sub(1, Ordering::Relaxed);
        Some(d as u64)
    }

    /// Return a buffer the caller owns.
    pub fn free(&self, desc: u64) {
        if (desc as usize) < self.count() {
            // Counted before it is pushed (and after it is popped), so the
            // count never falls below what the list holds, nor below 0.
            self.free_count.fetch_add(1, Ordering::Relaxed);
            self.free.push(desc as usize);
        }
    }

    fn buf(&self, desc: u64) -> Option<*mut u8> {
        let i = desc as usize;
        // SAFETY: `i < count`, so the offset stays inside the pool's memory
        // (`new`'s contract).
        (i < self.count()).then(|| unsafe { self.base.as_ptr().add(i * BUF_BYTES) })
    }

    /// Write a packet into buffer `desc` (owned by the caller); the payload
    /// is truncated to [`PAYLOAD_MAX`]. Returns the bytes written.
    pub fn write(&self, desc: u64, dst: u16, src: u16, flags: u16, payload: &[u8]) -> usize {
        let Some(p) = self.buf(desc) else { return 0 };
        let n = payload.len().min(PAYLOAD_MAX);
        let mut h = [0u8; HEADER_BYTES];
        h[0..2].copy_from_slice(&dst.to_le_bytes());
        h[2..4].copy_from_slice(&src.to_le_bytes());
        h[4..6].copy_from_slice(&(n as u16).to_le_bytes());
        h[6..8].copy_from_slice(&flags.to_le_bytes());
        // SAFETY: the caller owns the buffer (module contract), `p` points
        // to BUF_BYTES bytes of it, and HEADER_BYTES + n <= BUF_BYTES; the
        // sources are local or caller slices, which cannot overlap it.
        unsafe {
            std::ptr::copy_nonoverlapping(h.as_ptr(), p, HEADER_BYTES);
            std::ptr::copy_nonoverlapping(payload.as_ptr(), p.add(HEADER_BYTES), n);
        }
        n
    }

    /// Fill buffer `desc` (owned by the caller) from `fill`, which writes
    /// at most [`PAYLOAD_MAX`] payload bytes into the slice it is given and
    /// returns how many; then write the header. Returns the payload length.
    pub fn fill(&self, desc: u64, dst: u16, src: u16, flags: u16, fill: impl FnOnce(&mut [u8]) -> usize) -> usize {
        let Some(p) = self.buf(desc) else { return 0 };
        // SAFETY: the caller owns the buffer (module contract): nobody else
        // reads or writes its bytes until the descriptor is handed on, which
        // needs this borrow to have ended.
        let payload = unsafe { std::slice::from_raw_parts_mut(p.add(HEADER_BYTES), PAYLOAD_MAX) };
        let n = fill(payload).min(PAYLOAD_MAX);
        let mut h = [0u8; HEADER_BYTES];
        h[0..2].copy_from_slice(&dst.to_le_bytes());
        h[2..4].copy_from_slice(&src.to_le_bytes());
        h[4..6].copy_from_slice(&(n as u16).to_le_bytes());
        h[6..8].copy_from_slice(&flags.to_le_bytes());
        // SAFETY: as above; the header bytes are disjoint from `payload`,
        // whose borrow ended with `fill`.
        unsafe { std::ptr::copy_nonoverlapping(h.as_ptr(), p, HEADER_BYTES) };
        n
    }

    /// Read buffer `desc` (owned by the caller): its header and payload.
    /// A header whose length exceeds [`PAYLOAD_MAX`] is clamped.
    pub fn read<T>(&self, desc: u64, f: impl FnOnce(Header, &[u8]) -> T) -> Option<T> {
        let p = self.buf(desc)?;
        // SAFETY: the caller owns the buffer (module contract), so nobody
        // writes it during this shared borrow; `p` points to BUF_BYTES bytes.
        let b = unsafe { std::slice::from_raw_parts(p, BUF_BYTES) };
        let word = |i: usize| u16::from_le_bytes([b[i], b[i + 1]]);
        let h = Header { dst: word(0), src: word(2), len: word(4).min(PAYLOAD_MAX as u16), flags: word(6) };
        Some(f(h, &b[HEADER_BYTES..HEADER_BYTES + h.len as usize]))
    }

    /// Just the header of buffer `desc` (owned by the caller).
    pub fn header(&self, desc: u64) -> Option<Header> {
        self.read(desc, |h, _| h)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packets_round_trip_and_buffers_are_reused() {
        let mut mem = vec![0u64; 4 * BUF_BYTES / 8];
        let base = NonNull::new(mem.as_mut_ptr().cast::<u8>()).unwrap();
        // SAFETY: `mem` outlives the pool and nothing else touches it.
        let pool = unsafe { PacketPool::new(base, 4 * BUF_BYTES) };
        assert_eq!(pool.count(), 4);
        let d = pool.alloc().unwrap();
        assert_eq!(pool.write(d, 6379, 40000, FIN, b"hello"), 5);
        let got = pool.read(d, |h, p| (h, p.to_vec())).unwrap();
        assert_eq!(got, (Header { dst: 6379, src: 40000, len: 5, flags: FIN }, b"hello".to_vec()));
        let big = vec![7u8; 5000];
        assert_eq!(
            pool.fill(d, 1, 2, 0, |buf| {
                buf.copy_from_slice(&big[..buf.len()]);
                buf.len()
            }),
            PAYLOAD_MAX
        );
        assert_eq!(pool.header(d).unwrap().len as usize, PAYLOAD_MAX);
        let taken: Vec<u64> = std::iter::from_fn(|| pool.alloc()).collect();
        assert_eq!(taken.len(), 3);
        assert_eq!(pool.free_now(), 0);
        pool.free(d);
        pool.free(99);
        assert_eq!(pool.free_now(), 1);
        pool.free(taken[1]);
        assert_eq!(pool.free_now(), 2);
        assert_eq!(pool.alloc(), Some(taken[1]), "the buffer freed last is handed out first");
        assert_eq!(pool.alloc(), Some(d));
    }
}
