//! Ping-pong: the IPC benchmark of the seeds.
//!
//! A *pair* is a client and a server thread on one core, sharing one
//! endpoint. The client `Call`s the endpoint with a message of `words` words;
//! the server, which received it (first with `Recv`, then with `ReplyRecv`),
//! busy-waits an exponentially distributed number of cycles with mean
//! `delay_mean_cycles` (0: no delay at all), and answers every word plus one
//! with `ReplyRecv`, which also waits for the next call. A round trip is one
//! `Call` + one `ReplyRecv`: two kernel entries, two context switches.
//!
//! Pairs share no kernel object: each has its own endpoint, reply object and
//! TCBs, so the multicore version (one pair per core) is embarrassingly
//! parallel and any slowdown is the kernel's locking.
//!
//! The outside world (the `granule` command, tests) observes a run through
//! [`PingPong`]: per-pair round-trip counters (one cache line per pair,
//! written with a plain store by the client only) and a count of replies that
//! failed verification.

use alloc_crate::vec::Vec;
use core::sync::atomic::{AtomicU64, Ordering};

use crossbeam_utils::CachePadded;
use granule_kernel::abi::{Error, ObjectType};
use granule_kernel::{BootInfo, MessageInfo, Word};
use rand::rngs::SmallRng;
use rand::SeedableRng;
use rand_distr::{Distribution, Exp};

use crate::alloc::Allocator;
use crate::build_status::BuildStatus;
use crate::env::{CPtr, Env, NULL};
use crate::trap::Trap;

/// Priority of the ping-pong threads (below the root task's 255, so the
/// root finishes building before any pair on its core runs).
pub const PAIR_PRIORITY: u8 = 100;

/// Unused endpoints and reply objects created between two pairs' (see
/// [`PingPong::build`]).
const PAD_OBJECTS: usize = 2;

/// One pair's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PairSpec {
    /// The core both threads run on.
    pub core: usize,
    /// Mean of the server's exponential busy delay, in cycles (0: none).
    pub delay_mean_cycles: f64,
    /// Seed of the server's random number generator.
    pub seed: u64,
}

/// What one pair's client publishes.
#[derive(Debug, Default)]
pub struct PairStats {
    round_trips: AtomicU64,
    bad_replies: AtomicU64,
}

/// A ping-pong experiment: its pairs and their counters.
#[derive(Debug)]
pub struct PingPong {
    pairs: Vec<PairSpec>,
    words: usize,
    stats: Vec<CachePadded<PairStats>>,
    status: BuildStatus,
}

/// A pair thread's argument word: pair index and capability pointers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PairArg {
    /// Index of the pair.
    pub pair: usize,
    /// The pair's endpoint.
    pub ep: CPtr,
    /// The server's reply object ([`NULL`] for the client).
    pub reply: CPtr,
}

impl PairArg {
    /// `pair << 32 | reply << 16 | ep` (slots fit 16 bits: root CNodes have
    /// at most 2^16 slots).
    pub fn pack(self) -> Word {
        (self.pair as Word) << 32 | (self.reply & 0xffff) << 16 | (self.ep & 0xffff)
    }

    /// The inverse of [`PairArg::pack`].
    pub fn unpack(w: Word) -> Self {
        Self { pair: (w >> 32) as usize, ep: w & 0xffff, reply: (w >> 16) & 0xffff }
    }
}

impl PingPong {
    /// An experiment with these pairs, sending `words` message words per call
    /// (at most 64).
    pub fn new(pairs: Vec<PairSpec>, words: usize) -> Self {
        let stats = pairs.iter().map(|_| CachePadded::new(PairStats::default())).collect();
        Self { pairs, words: words.min(64), stats, status: BuildStatus::default() }
    }

    /// One pair per core `0..cores`, all with the same mean delay.
    pub fn per_core(cores: usize, delay_mean_cycles: f64, words: usize) -> Self {
        let pairs =
            (0..cores).map(|core| PairSpec { core, delay_mean_cycles, seed: 0x5eed_0000 + core as u64 }).collect();
        Self::new(pairs, words)
    }

    /// The pairs.
    pub fn pairs(&self) -> &[PairSpec] {
        &self.pairs
    }

    /// Round trips completed so far by each pair.
    pub fn round_trips(&self) -> Vec<u64> {
        self.stats.iter().map(|s| s.round_trips.load(Ordering::Relaxed)).collect()
    }

    /// Replies that failed verification (wrong length or words), all pairs.
    pub fn bad_replies(&self) -> u64 {
        self.stats.iter().map(|s| s.bad_replies.load(Ordering::Relaxed)).sum()
    }

    /// Whether the root task has built every pair.
    pub fn is_ready(&self) -> bool {
        self.status.is_ready()
    }

    /// The error that stopped the root task building, if any.
    pub fn setup_error(&self) -> Option<Error> {
        self.status.error()
    }

    /// Build every pair (the root task's work): endpoint, reply object and
    /// two threads per pair, started. Records readiness or the error.
    pub fn build<T: Trap>(
        &self,
        env: &mut Env<T>,
        info: &BootInfo,
        client_entry: Word,
        server_entry: Word,
    ) -> Result<(), Error> {
        let r = self.build_inner(env, info, client_entry, server_entry);
        self.status.record(r);
        r
    }

    fn build_inner<T: Trap>(
        &self,
        env: &mut Env<T>,
        info: &BootInfo,
        client_entry: Word,
        server_entry: Word,
    ) -> Result<(), Error> {
        let mut a = Allocator::from_boot(info);
        for (pair, spec) in self.pairs.iter().enumerate() {
            if pair > 0 {
                // Keep pairs' objects out of each other's cache lines: the
                // kernel's slabs place consecutive objects side by side
                // (unpadded), and two cores writing neighbouring endpoints
                // would share a line although they share no object.
                for _ in 0..PAD_OBJECTS {
                    a.create(env, ObjectType::Endpoint, 0)?;
                    a.create(env, ObjectType::Reply, 0)?;
                }
                a.create(env, ObjectType::Tcb, 0)?;
            }
            let ep = a.create(env, ObjectType::Endpoint, 0)?;
            let reply = a.create(env, ObjectType::Reply, 0)?;
            // The server first, so it is usually waiting when the first call comes.
            let s = PairArg { pair, ep, reply }.pack();
            a.thread(env, server_entry, s, spec.core, PAIR_PRIORITY, true)?;
            let c = PairArg { pair, ep, reply: NULL }.pack();
            a.thread(env, client_entry, c, spec.core, PAIR_PRIORITY, true)?;
        }
        Ok(())
    }
}

/// Word `i` of the client's `n`-th message of pair `pair`.
#[inline(always)]
fn pattern(pair: usize, n: u64, i: usize) -> Word {
    n.wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(i as u32) ^ pair as Word
}

/// The client: `Call` forever, verify each reply, count round trips.
pub fn client<T: Trap>(env: &mut Env<T>, pp: &PingPong, arg: Word) {
    let PairArg { pair, ep, .. } = PairArg::unpack(arg);
    let Some(stats) = pp.stats.get(pair) else { panic!("client of unknown pair {pair}") };
    let words = pp.words;
    let info = MessageInfo::new(0, 0, 0, words as Word);
    let mut n: u64 = 0;
    loop {
        n += 1;
        let msg = env.msg();
        for (i, w) in msg[..words].iter_mut().enumerate() {
            *w = pattern(pair, n, i);
        }
        let ok = match env.call(ep, info) {
            Ok(reply) => {
                let msg = env.msg();
                reply.length() as usize == words
                    && msg[..words].iter().enumerate().all(|(i, &w)| w == pattern(pair, n, i).wrapping_add(1))
            }
            Err(_) => false,
        };
        if !ok {
            stats.bad_replies.fetch_add(1, Ordering::Relaxed);
        }
        // Only this thread writes the counter: a plain store suffices.
        stats.round_trips.store(n, Ordering::Relaxed);
    }
}

/// The server: receive, busy-wait an exponential delay, answer every word
/// plus one and wait for the next call (`ReplyRecv`), forever.
pub fn server<T: Trap>(env: &mut Env<T>, pp: &PingPong, arg: Word) {
    let PairArg { pair, ep, reply } = PairArg::unpack(arg);
    let Some(spec) = pp.pairs.get(pair) else { panic!("server of unknown pair {pair}") };
    let mut rng = SmallRng::seed_from_u64(spec.seed);
    let delay = (spec.delay_mean_cycles > 0.0).then(|| Exp::new(1.0 / spec.delay_mean_cycles)).and_then(Result::ok);
    let mut got = env.recv(ep, reply).unwrap_or_else(|e| panic!("server {pair}: recv: {e}"));
    loop {
        if let Some(d) = &delay {
            spin_cycles(d.sample(&mut rng) as u64);
        }
        let len = (got.info.length() as usize).min(granule_kernel::abi::MSG_MAX_WORDS);
        for w in &mut env.msg()[..len] {
            *w = w.wrapping_add(1);
        }
        got = env
            .reply_recv(ep, MessageInfo::new(0, 0, 0, len as Word), reply)
            .unwrap_or_else(|e| panic!("server {pair}: reply_recv: {e}"));
    }
}

/// Busy-wait `n` cycles of the cycle counter (the "work" between receive
/// and reply).
#[inline]
pub fn spin_cycles(n: u64) {
    if n == 0 {
        return;
    }
    let t0 = granule_sync::cycles::now();
    while granule_sync::cycles::now().wrapping_sub(t0) < n {
        core::hint::spin_loop();
    }
}
