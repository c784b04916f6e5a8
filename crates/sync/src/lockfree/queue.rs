//! Bounded FIFO queues of words in the four Synthesis kinds (single or
//! multiple producers × single or multiple consumers), with the four
//! Synthesis callbacks.
//!
//! **Word layout.**
//! * `enq`, `deq`: `AtomicU64` positions, each alone in a cache line. A
//!   position counts the puts (gets) claimed since creation; its slot is
//!   `position & mask`. They never wrap in practice (2^64 operations).
//! * `slots[i]`: two `AtomicU64` side by side, `seq` and `value`. `seq` says
//!   whose turn the slot is: `seq == p` — free for the put at position `p`;
//!   `seq == p + 1` — holds the element put at position `p`, for the get at
//!   position `p`; the get then sets `seq = p + capacity`, freeing the slot
//!   for the put one lap later. Differences are taken wrapping, as `i64`.
//!
//! **Algorithm.** Dmitry Vyukov's bounded MPMC queue ("Bounded MPMC queue",
//! 1024cores.net, 2010; also the basis of crossbeam's `ArrayQueue`). A put
//! reads `enq`, checks the slot's `seq`, claims the position with a CAS on
//! `enq`, writes the value and publishes it by storing `seq`; a get mirrors
//! it on `deq`. Synthesis's queues (Massalin & Pu 1989, 1991 §3.2) are also
//! circular arrays with CAS on the head or tail index; the per-slot sequence
//! number is what lets several producers (consumers) fill (drain) different
//! slots at once without a two-address CAS. As in Synthesis, each kind does
//! the minimum its use needs: a side with a single producer (consumer) does
//! not CAS its position, it stores it, because nobody else writes it. The
//! kind is a type parameter ([`Spsc`], [`Spmc`], [`Mpsc`], [`Mpmc`]), so the
//! unused branch is compiled away.
//!
//! **Contract.** On a single-producer side at most one thread may be inside
//! `put` at a time (likewise for single-consumer and `get`). Breaking this
//! can lose or duplicate elements but is never undefined behaviour: all
//! state is atomics. Puts never wait for gets and vice versa: a put whose
//! slot has not been released yet reports full, and a get whose slot has
//! been claimed but not yet published reports empty.
//!
//! **Interference.** On a multi-producer (multi-consumer) side the hook runs
//! after reading the position and the slot, before the CAS on the position.
//! The write that makes that CAS fail is another producer's (consumer's)
//! claim, so a test injects one by calling `put` (`get`) on the same queue
//! from inside the hook; there is no cheaper non-destructive write, because
//! the position carries no tag. Single sides have no CAS and never call it.
//!
//! **Callbacks** ([`Callbacks`]), with `e` the producers' position and `d`
//! the consumers' position:
//! * `full` (Synthesis `Q_full`): a put found its slot not yet released
//!   (the queue is full, as producers see it) and is returning `Err`.
//! * `empty` (`Q_empty`): a get found its slot not yet published (the queue
//!   is empty, as consumers see it) and is returning `None`.
//! * `full_minus_one` (`Q_full-1`): the get of position `p` has released
//!   its slot and then saw `e == p + capacity`: the producers are stopped at
//!   exactly the slot it freed (the queue was full, now has room).
//! * `empty_plus_one` (`Q_empty+1`): the put of position `p` has published
//!   its element and then saw `d == p`: the consumers are stopped at exactly
//!   the element it published (the queue was empty, now has one).
//!
//! Guarantee under concurrency: if a put calls `full` at position `e`, then
//! the get that frees `e`'s slot calls `full_minus_one`, unless another put
//! claims that slot before the get looks (then that put succeeded, and the
//! queue is full again at `e + 1`). Symmetrically, if a get calls `empty` at
//! `d`, the put that publishes position `d` calls `empty_plus_one` unless
//! another get has taken that element first. So a producer (consumer) that
//! suspends in `full` (`empty`) and resumes in `full_minus_one`
//! (`empty_plus_one`) — Synthesis's blocking queue — never misses its
//! wake-up, provided suspend/resume tolerate the resume arriving first (a
//! wake-up token, as usual). Callbacks can also fire with nobody waiting (a
//! put into an empty queue fires `empty_plus_one` whether or not a get ever
//! looked). This needs one `SeqCst` fence on each side between the write and
//! the read of the other side's position; [`NoCallbacks`] has
//! `ENABLED = false`, which removes the fences, the checks and the calls at
//! compile time. Callbacks run on the calling thread after the operation
//! took effect, so they may call `put`/`get` themselves.

use alloc::boxed::Box;
use core::fmt;
use core::marker::PhantomData;

use crossbeam_utils::CachePadded;

use super::interference::{Interference, NoInterference, Retried};
use super::Full;
use crate::primitive::{fence, AtomicU64, Ordering};

/// Which sides of a queue may have several threads (see the module docs).
pub trait Kind: 'static {
    /// Several threads may `put` at once.
    const MULTI_PRODUCER: bool;
    /// Several threads may `get` at once.
    const MULTI_CONSUMER: bool;
    /// Short name for tables.
    const NAME: &'static str;
}

/// Single producer, single consumer.
#[derive(Debug)]
pub enum Spsc {}
/// Single producer, multiple consumers.
#[derive(Debug)]
pub enum Spmc {}
/// Multiple producers, single consumer.
#[derive(Debug)]
pub enum Mpsc {}
/// Multiple producers, multiple consumers.
#[derive(Debug)]
pub enum Mpmc {}

impl Kind for Spsc {
    const MULTI_PRODUCER: bool = false;
    const MULTI_CONSUMER: bool = false;
    const NAME: &'static str = "spsc";
}
impl Kind for Spmc {
    const MULTI_PRODUCER: bool = false;
    const MULTI_CONSUMER: bool = true;
    const NAME: &'static str = "spmc";
}
impl Kind for Mpsc {
    const MULTI_PRODUCER: bool = true;
    const MULTI_CONSUMER: bool = false;
    const NAME: &'static str = "mpsc";
}
impl Kind for Mpmc {
    const MULTI_PRODUCER: bool = true;
    const MULTI_CONSUMER: bool = true;
    const NAME: &'static str = "mpmc";
}

/// The four Synthesis queue callbacks; see the module documentation for
/// exactly when each fires. All default to doing nothing.
pub trait Callbacks: Sync {
    /// `false` removes every callback check at compile time.
    const ENABLED: bool = true;
    /// `Q_full`: a put found the queue full.
    fn full(&self) {}
    /// `Q_empty`: a get found the queue empty.
    fn empty(&self) {}
    /// `Q_full-1`: a get took an element from a full queue.
    fn full_minus_one(&self) {}
    /// `Q_empty+1`: a put added an element to an empty queue.
    fn empty_plus_one(&self) {}
}

/// No callbacks: compiles to nothing.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoCallbacks;

impl Callbacks for NoCallbacks {
    const ENABLED: bool = false;
}

#[derive(Debug)]
struct Slot {
    seq: AtomicU64,
    value: AtomicU64,
}

/// A bounded lock-free FIFO queue of `u64` words of kind `K`.
pub struct Queue<K: Kind, C: Callbacks = NoCallbacks> {
    enq: CachePadded<AtomicU64>,
    deq: CachePadded<AtomicU64>,
    slots: Box<[Slot]>,
    mask: u64,
    callbacks: C,
    kind: PhantomData<fn() -> K>,
}

/// Single producer, single consumer queue.
pub type SpscQueue<C = NoCallbacks> = Queue<Spsc, C>;
/// Single producer, multiple consumer queue.
pub type SpmcQueue<C = NoCallbacks> = Queue<Spmc, C>;
/// Multiple producer, single consumer queue.
pub type MpscQueue<C = NoCallbacks> = Queue<Mpsc, C>;
/// Multiple producer, multiple consumer queue.
pub type MpmcQueue<C = NoCallbacks> = Queue<Mpmc, C>;

/// Largest capacity a queue can have.
pub const MAX_CAPACITY: usize = 1 << 31;

/// `capacity` rounded up to a power of two, at least 2 (a one-slot queue
/// cannot tell "full" from "free for the next lap" by sequence numbers).
fn slots_for(capacity: usize) -> usize {
    capacity.clamp(2, MAX_CAPACITY).next_power_of_two()
}

impl<K: Kind> Queue<K> {
    /// An empty queue holding at least `capacity` words (rounded up to a
    /// power of two, at least 2, at most [`MAX_CAPACITY`]).
    pub fn new(capacity: usize) -> Self {
        Self::with_callbacks(capacity, NoCallbacks)
    }
}

impl<K: Kind, C: Callbacks> Queue<K, C> {
    /// An empty queue with `callbacks`; capacity as in [`Queue::new`].
    pub fn with_callbacks(capacity: usize, callbacks: C) -> Self {
        let n = slots_for(capacity);
        Self {
            enq: CachePadded::new(AtomicU64::new(0)),
            deq: CachePadded::new(AtomicU64::new(0)),
            slots: (0..n as u64).map(|i| Slot { seq: AtomicU64::new(i), value: AtomicU64::new(0) }).collect(),
            mask: n as u64 - 1,
            callbacks,
            kind: PhantomData,
        }
    }

    /// The callbacks (e.g. to read counters a test keeps in them).
    pub fn callbacks(&self) -> &C {
        &self.callbacks
    }

    /// How many words the queue holds when full.
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// Number of claimed-but-not-yet-taken positions (a racy snapshot).
    pub fn len(&self) -> usize {
        let deq = self.deq.load(Ordering::Acquire);
        let enq = self.enq.load(Ordering::Acquire);
        (enq.saturating_sub(deq) as usize).min(self.capacity())
    }

    /// Whether the queue looked empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    #[inline(always)]
    fn slot(&self, pos: u64) -> &Slot {
        &self.slots[(pos & self.mask) as usize]
    }

    /// Put `value` at the tail (`Q_put`); `Err(Full(value))` if full.
    #[inline]
    pub fn put(&self, value: u64) -> Result<(), Full> {
        self.put_with(value, &mut NoInterference).value
    }

    /// Put, calling `hook` before each CAS on the producers' position
    /// (multi-producer kinds only).
    #[inline]
    pub fn put_with<I: Interference + ?Sized>(&self, value: u64, hook: &mut I) -> Retried<Result<(), Full>> {
        let mut attempt = 0;
        let mut pos = self.enq.load(Ordering::Acquire);
        loop {
            let slot = self.slot(pos);
            let dif = slot.seq.load(Ordering::Acquire).wrapping_sub(pos) as i64;
            if dif == 0 {
                if K::MULTI_PRODUCER {
                    hook.before_cas(attempt);
                    let next = pos.wrapping_add(1);
                    if let Err(now) = self.enq.compare_exchange(pos, next, Ordering::AcqRel, Ordering::Acquire) {
                        pos = now;
                        attempt += 1;
                        continue;
                    }
                } else {
                    self.enq.store(pos.wrapping_add(1), Ordering::Release);
                }
                // Point of no return: position `pos` is ours.
                slot.value.store(value, Ordering::Relaxed);
                slot.seq.store(pos.wrapping_add(1), Ordering::Release);
                if C::ENABLED {
                    fence(Ordering::SeqCst);
                    if self.deq.load(Ordering::Acquire) == pos {
                        self.callbacks.empty_plus_one();
                    }
                }
                return Retried { value: Ok(()), retries: attempt };
            } else if dif < 0 {
                if C::ENABLED {
                    fence(Ordering::SeqCst);
                    if slot.seq.load(Ordering::Acquire) == pos {
                        attempt += 1;
                        continue;
                    }
                    self.callbacks.full();
                }
                return Retried { value: Err(Full(value)), retries: attempt };
            } else {
                // Another producer claimed `pos` after we read it.
                pos = self.enq.load(Ordering::Acquire);
                attempt += 1;
            }
        }
    }

    /// Take the word at the head (`Q_get`); `None` if empty.
    #[inline]
    pub fn get(&self) -> Option<u64> {
        self.get_with(&mut NoInterference).value
    }

    /// Get, calling `hook` before each CAS on the consumers' position
    /// (multi-consumer kinds only).
    #[inline]
    pub fn get_with<I: Interference + ?Sized>(&self, hook: &mut I) -> Retried<Option<u64>> {
        let mut attempt = 0;
        let mut pos = self.deq.load(Ordering::Acquire);
        loop {
            let slot = self.slot(pos);
            let published = pos.wrapping_add(1);
            let dif = slot.seq.load(Ordering::Acquire).wrapping_sub(published) as i64;
            if dif == 0 {
                if K::MULTI_CONSUMER {
                    hook.before_cas(attempt);
                    if let Err(now) = self.deq.compare_exchange(pos, published, Ordering::AcqRel, Ordering::Acquire) {
                        pos = now;
                        attempt += 1;
                        continue;
                    }
                } else {
                    self.deq.store(published, Ordering::Release);
                }
                // Point of no return: the element at `pos` is ours.
                let value = slot.value.load(Ordering::Relaxed);
                slot.seq.store(pos.wrapping_add(self.mask).wrapping_add(1), Ordering::Release);
                if C::ENABLED {
                    fence(Ordering::SeqCst);
                    if self.enq.load(Ordering::Acquire) == pos.wrapping_add(self.mask).wrapping_add(1) {
                        self.callbacks.full_minus_one();
                    }
                }
                return Retried { value: Some(value), retries: attempt };
            } else if dif < 0 {
                if C::ENABLED {
                    fence(Ordering::SeqCst);
                    if slot.seq.load(Ordering::Acquire) == published {
                        attempt += 1;
                        continue;
                    }
                    self.callbacks.empty();
                }
                return Retried { value: None, retries: attempt };
            } else {
                // Another consumer took `pos` after we read it.
                pos = self.deq.load(Ordering::Acquire);
                attempt += 1;
            }
        }
    }
}

impl<K: Kind, C: Callbacks> fmt::Debug for Queue<K, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Queue")
            .field("kind", &K::NAME)
            .field("capacity", &self.capacity())
            .field("enq", &self.enq.load(Ordering::Relaxed))
            .field("deq", &self.deq.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

/// The circular queue without synchronisation (the "No Sync" column):
/// the same positions and power-of-two ring, as plain words.
#[derive(Debug)]
pub struct SeqQueue {
    enq: u64,
    deq: u64,
    mask: u64,
    slots: Box<[u64]>,
}

impl SeqQueue {
    /// An empty queue; capacity as in [`Queue::new`].
    pub fn new(capacity: usize) -> Self {
        let n = slots_for(capacity);
        Self { enq: 0, deq: 0, mask: n as u64 - 1, slots: alloc::vec![0; n].into_boxed_slice() }
    }

    /// Put at the tail; `Err(Full(value))` if full.
    #[inline]
    pub fn put(&mut self, value: u64) -> Result<(), Full> {
        if self.enq.wrapping_sub(self.deq) > self.mask {
            return Err(Full(value));
        }
        self.slots[(self.enq & self.mask) as usize] = value;
        self.enq = self.enq.wrapping_add(1);
        Ok(())
    }

    /// Take from the head.
    #[inline]
    pub fn get(&mut self) -> Option<u64> {
        if self.enq == self.deq {
            return None;
        }
        let value = self.slots[(self.deq & self.mask) as usize];
        self.deq = self.deq.wrapping_add(1);
        Some(value)
    }

    /// Number of words held.
    pub fn len(&self) -> usize {
        self.enq.wrapping_sub(self.deq) as usize
    }

    /// Whether the queue is empty.
    pub fn is_empty(&self) -> bool {
        self.enq == self.deq
    }
}
