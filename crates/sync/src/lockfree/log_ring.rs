//! [`LogRing`]: a bounded ring of short byte messages that any core appends
//! to and a reader drains, correct with no lock at all (the kernel log's
//! buffer, `granule-kernel`'s `subsys/klog.rs`).
//!
//! **Algorithm.** Dmitry Vyukov's bounded multi-producer multi-consumer
//! queue ("Bounded MPMC queue", 1024cores.net, 2010), used with one
//! consumer at a time in practice. Each slot has a sequence word; a
//! producer claims position `p` by CAS on the tail when slot `p % N`'s
//! sequence is `p`, writes the message, and publishes it by storing
//! `p + 1`; a consumer claims position `p` by CAS on the head when the
//! sequence is `p + 1`, reads, and frees the slot for the next lap by
//! storing `p + N`. A producer that finds the slot of its position still
//! unread (sequence below `p`) finds the ring full: the message is dropped
//! and counted — an append never waits.
//!
//! **Word layout.** `tail`, `head`: positions (`u64`, never wrapping in
//! practice). Slot: `seq: u64`, `len: u64` (bytes), `data`: the message
//! bytes packed little-endian into `u64` words (atomics, so a reader racing
//! a writer of the next lap is a race on atomics, never a data race; the
//! sequence protocol makes it impossible anyway).
//!
//! **Reads are linearizable, not lock-free.** A producer claims a
//! position before it publishes; a reader that finds the oldest position
//! claimed and not yet published waits for that producer rather than
//! report an empty ring (Vyukov's queue would, although a later append has
//! already completed). The producer's window between claim and publish
//! never waits, so the reader waits only while another core is inside
//! those few instructions. Appends stay lock-free and never wait.
//!
//! **Sleeping reader.** A read that finds the ring empty *arms* the ring
//! (`armed` set, `SeqCst` fence, look again — the look-again may find a
//! message and disarm); an append publishes, fences, and if it finds the
//! ring armed, disarms it and signals the bound notification. The two
//! fences are ordered one way or the other, so a message published while
//! the reader goes to sleep is either seen by the reader or wakes it.
//!
use alloc::boxed::Box;
use alloc::vec::Vec;

use crossbeam_utils::CachePadded;

use crate::primitive::{fence, spin_loop, AtomicBool, AtomicU64, Ordering};

struct Slot<const WORDS: usize> {
    seq: AtomicU64,
    len: AtomicU64,
    data: [AtomicU64; WORDS],
}

/// The ring (see the module documentation) of messages up to `WORDS`
/// words (`8 × WORDS` bytes).
pub struct LogRing<const WORDS: usize> {
    slots: Box<[CachePadded<Slot<WORDS>>]>,
    mask: u64,
    tail: CachePadded<AtomicU64>,
    head: CachePadded<AtomicU64>,
    dropped: AtomicU64,
    appended: AtomicU64,
    armed: AtomicBool,
}

impl<const WORDS: usize> core::fmt::Debug for LogRing<WORDS> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("LogRing").field("capacity", &self.slots.len()).field("dropped", &self.dropped()).finish()
    }
}

/// What a [`LogRing::take_fitting`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Taken {
    /// The oldest message, now in the caller's buffer.
    Message,
    /// The oldest message is longer than the caller can take (left in).
    TooLong,
    /// No message.
    Empty,
}

/// What an append did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Appended {
    /// Stored; `wake`: the reader was asleep and must be signalled.
    Stored { wake: bool },
    /// The ring was full: dropped and counted.
    Dropped,
}

impl<const WORDS: usize> LogRing<WORDS> {
    /// The longest message, in bytes.
    pub const MAX_MESSAGE: usize = 8 * WORDS;

    /// A ring of `capacity` messages (rounded up to a power of two, at
    /// least 2).
    pub fn new(capacity: usize) -> Self {
        let n = capacity.max(2).next_power_of_two();
        Self {
            slots: (0..n)
                .map(|i| {
                    CachePadded::new(Slot {
                        seq: AtomicU64::new(i as u64),
                        len: AtomicU64::new(0),
                        data: core::array::from_fn(|_| AtomicU64::new(0)),
                    })
                })
                .collect(),
            mask: n as u64 - 1,
            tail: CachePadded::new(AtomicU64::new(0)),
            head: CachePadded::new(AtomicU64::new(0)),
            dropped: AtomicU64::new(0),
            appended: AtomicU64::new(0),
            armed: AtomicBool::new(false),
        }
    }

    /// Messages dropped because the ring was full, since boot.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Messages stored since boot.
    pub fn appended(&self) -> u64 {
        self.appended.load(Ordering::Relaxed)
    }

    /// Messages stored and not yet read (exact when nothing runs).
    pub fn held(&self) -> u64 {
        self.tail.load(Ordering::Acquire).saturating_sub(self.head.load(Ordering::Acquire))
    }

    /// Append `msg` (bytes past [`Self::MAX_MESSAGE`] are cut off: the
    /// caller bounds it).
    pub fn append(&self, msg: &[u8]) -> Appended {
        let msg = &msg[..msg.len().min(Self::MAX_MESSAGE)];
        let mut pos = self.tail.load(Ordering::Relaxed);
        loop {
            let slot = &self.slots[(pos & self.mask) as usize];
            let seq = slot.seq.load(Ordering::Acquire);
            if seq == pos {
                match self.tail.compare_exchange_weak(pos, pos + 1, Ordering::Relaxed, Ordering::Relaxed) {
                    Ok(_) => {
                        slot.len.store(msg.len() as u64, Ordering::Relaxed);
                        for (w, chunk) in slot.data.iter().zip(msg.chunks(8)) {
                            let mut b = [0u8; 8];
                            b[..chunk.len()].copy_from_slice(chunk);
                            w.store(u64::from_le_bytes(b), Ordering::Relaxed);
                        }
                        slot.seq.store(pos + 1, Ordering::Release);
                        self.appended.fetch_add(1, Ordering::Relaxed);
                        fence(Ordering::SeqCst);
                        let wake = self.armed.load(Ordering::Relaxed) && self.armed.swap(false, Ordering::AcqRel);
                        return Appended::Stored { wake };
                    }
                    Err(now) => pos = now,
                }
            } else if seq < pos {
                self.dropped.fetch_add(1, Ordering::Relaxed);
                return Appended::Dropped;
            } else {
                pos = self.tail.load(Ordering::Relaxed);
            }
        }
    }

    /// Take the oldest message into `out` (cleared first); `false` if
    /// there is none.
    pub fn take(&self, out: &mut Vec<u8>) -> bool {
        self.take_fitting(out, usize::MAX) == Taken::Message
    }

    /// Take the oldest message into `out` (cleared first) if it is at most
    /// `max` bytes long. The length is read before the message is claimed:
    /// a claim succeeds only while no other reader has taken that position,
    /// and no producer rewrites a slot before its reader frees it, so the
    /// length read is the claimed message's.
    pub fn take_fitting(&self, out: &mut Vec<u8>, max: usize) -> Taken {
        let mut pos = self.head.load(Ordering::Relaxed);
        loop {
            let slot = &self.slots[(pos & self.mask) as usize];
            let seq = slot.seq.load(Ordering::Acquire);
            if seq == pos + 1 {
                let len = (slot.len.load(Ordering::Relaxed) as usize).min(Self::MAX_MESSAGE);
                if len > max {
                    // Look again if another reader took it meanwhile.
                    let now = self.head.load(Ordering::Relaxed);
                    if now != pos {
                        pos = now;
                        continue;
                    }
                    return Taken::TooLong;
                }
                match self.head.compare_exchange_weak(pos, pos + 1, Ordering::Relaxed, Ordering::Relaxed) {
                    Ok(_) => {
                        out.clear();
                        for w in slot.data.iter().take(len.div_ceil(8)) {
                            out.extend_from_slice(&w.load(Ordering::Relaxed).to_le_bytes());
                        }
                        out.truncate(len);
                        slot.seq.store(pos + self.mask + 1, Ordering::Release);
                        return Taken::Message;
                    }
                    Err(now) => pos = now,
                }
            } else if seq < pos + 1 {
                // Claimed by a producer that has not published yet: wait
                // for it (its claim-to-publish window never waits), so a
                // read after a completed append always sees it.
                if self.tail.load(Ordering::Acquire) > pos {
                    spin_loop();
                    continue;
                }
                return Taken::Empty;
            } else {
                pos = self.head.load(Ordering::Relaxed);
            }
        }
    }

    /// The length of the oldest message, if any (for a reader deciding
    /// whether it fits); waits for a producer that claimed the oldest slot
    /// and has not published yet, as `take` does.
    pub fn peek_len(&self) -> Option<usize> {
        loop {
            let pos = self.head.load(Ordering::Acquire);
            let slot = &self.slots[(pos & self.mask) as usize];
            let seq = slot.seq.load(Ordering::Acquire);
            if seq == pos + 1 {
                return Some(slot.len.load(Ordering::Relaxed) as usize);
            }
            if seq > pos + 1 || self.tail.load(Ordering::Acquire) <= pos {
                // Taken by another reader meanwhile (look again), or empty.
                if self.head.load(Ordering::Acquire) != pos {
                    continue;
                }
                return None;
            }
            spin_loop();
        }
    }

    /// The positions agree (nothing runs meanwhile): the head is not past
    /// the tail, nor the tail more than a lap ahead, and every held slot is
    /// published.
    pub fn check(&self) -> Result<(), alloc::string::String> {
        let (head, tail) = (self.head.load(Ordering::Acquire), self.tail.load(Ordering::Acquire));
        if head > tail || tail - head > self.mask + 1 {
            return Err(alloc::format!("head {head}, tail {tail}, capacity {}", self.mask + 1));
        }
        for pos in head..tail {
            let seq = self.slots[(pos & self.mask) as usize].seq.load(Ordering::Acquire);
            if seq != pos + 1 {
                return Err(alloc::format!("held position {pos} has sequence {seq}"));
            }
        }
        Ok(())
    }

    /// The ring looked empty: arm it, then look again (see the module
    /// documentation). Returns whether it is still empty (the reader
    /// sleeps); if not, it disarms.
    pub fn arm(&self) -> bool {
        self.armed.store(true, Ordering::Relaxed);
        fence(Ordering::SeqCst);
        if self.peek_len().is_some() {
            self.armed.store(false, Ordering::Relaxed);
            return false;
        }
        true
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn messages_come_out_in_order_and_a_full_ring_drops_and_counts() {
        let k = LogRing::<30>::new(4);
        for i in 0..6u8 {
            let r = k.append(&[i; 3]);
            assert_eq!(r == Appended::Dropped, i >= 4, "append {i}");
        }
        assert_eq!((k.appended(), k.dropped(), k.held()), (4, 2, 4));
        let mut out = Vec::new();
        for i in 0..4u8 {
            assert!(k.take(&mut out));
            assert_eq!(out, [i; 3]);
        }
        assert!(!k.take(&mut out));
        assert!(k.arm(), "empty: the reader sleeps");
        assert_eq!(k.append(b"wake"), Appended::Stored { wake: true });
        assert_eq!(k.append(b"again"), Appended::Stored { wake: false });
    }

    #[test]
    fn a_message_of_the_largest_size_survives_the_ring() {
        let k = LogRing::<30>::new(2);
        let msg: Vec<u8> = (0..LogRing::<30>::MAX_MESSAGE).map(|i| i as u8).collect();
        assert_eq!(k.append(&msg), Appended::Stored { wake: false });
        let mut out = Vec::new();
        assert!(k.take(&mut out));
        assert_eq!(out, msg);
    }

    #[test]
    fn a_message_too_long_for_the_reader_stays_in_the_ring() {
        let k = LogRing::<30>::new(4);
        k.append(&[9; 100]);
        let mut out = Vec::new();
        assert_eq!(k.take_fitting(&mut out, 99), Taken::TooLong);
        assert_eq!(k.held(), 1);
        assert_eq!(k.take_fitting(&mut out, 100), Taken::Message);
        assert_eq!(out, [9; 100]);
        assert_eq!(k.take_fitting(&mut out, 100), Taken::Empty);
    }

    #[test]
    fn arming_a_ring_with_a_message_disarms() {
        let k = LogRing::<30>::new(2);
        k.append(b"x");
        assert!(!k.arm());
        assert_eq!(k.append(b"y"), Appended::Stored { wake: false });
    }
}
