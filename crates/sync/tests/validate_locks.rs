//! Concurrency-Kit-style validation of every lock on real threads.
//!
//! After ck's `regressions/ck_spinlock/validate` (and `ck_rwlock/validate`):
//! a few threads repeatedly take the lock, write their own id into every
//! word of a shared array, spin a little so that a second holder would have
//! time to interfere, check that every word still holds their id, and
//! release. Readers of the reader-writer locks check that all words agree and
//! do not change while they hold the read side. A non-atomic increment of a
//! shared counter (load, then store) made under the exclusive side must end
//! at the number of exclusive holds. Any mismatch is counted and reported at
//! the end (a thread must not panic while holding a spin lock: the others
//! would spin for ever).
//!
//! The shared words are relaxed atomics, so the test needs no `unsafe`: the
//! lock is what orders them, and two holders at once would overwrite each
//! other's ids. Threads are not pinned (the test machine may have fewer cores
//! than threads); waiting cores call `yield_now` from the spin hook so an
//! oversubscribed FIFO lock still hands over promptly. The lock_api mutexes
//! spin without a hook and run with two threads only.
//!
//! With `Profile` statistics the profiler's acquisition and hold counts must
//! equal the acquisitions made.
#![cfg(not(loom))]

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::thread;

use granule_sync::lock::{Clh, Lock, Mcs, RawLock, Ticket, TicketMutex, Ttas, TtasMutex};
use granule_sync::profile::{LockStats, NoStats, Profile};
use granule_sync::rw::{BrLock, Sx, SxRwLock};

/// Threads (= cores) taking each lock.
const THREADS: usize = 3;
/// Critical sections per thread.
const ROUNDS: u64 = 20_000;
/// Words written by each holder.
const WORDS: usize = 8;
/// Spin iterations inside each critical section.
const HOLD_SPINS: u32 = 64;

/// Sleeping-free spin hook for oversubscribed machines.
fn yield_hook() {
    thread::yield_now();
}

fn hold_a_while() {
    for _ in 0..HOLD_SPINS {
        std::hint::spin_loop();
    }
}

/// The shared state a lock protects, and the error count.
#[derive(Default)]
struct Shared {
    words: [AtomicU64; WORDS],
    /// Incremented non-atomically under the exclusive side.
    count: AtomicU64,
    errors: AtomicU64,
}

impl Shared {
    /// Exclusive holder `id` (never 0): write, wait, check, count.
    fn exclusive(&self, id: u64) {
        for w in &self.words {
            w.store(id, Relaxed);
        }
        hold_a_while();
        self.expect_all(id);
        let c = self.count.load(Relaxed);
        self.count.store(c + 1, Relaxed);
    }

    /// Every word holds `id` (e.g. still, after a downgrade).
    fn expect_all(&self, id: u64) {
        if self.words.iter().any(|w| w.load(Relaxed) != id) {
            self.errors.fetch_add(1, Relaxed);
        }
    }

    /// Shared holder: all words agree and stay unchanged while held.
    fn shared(&self) {
        let first = self.words[0].load(Relaxed);
        self.expect_all(first);
        hold_a_while();
        self.expect_all(first);
    }

    /// Panic unless no error was seen and `exclusive_holds` increments landed.
    fn assert_ok(&self, what: &str, exclusive_holds: u64) {
        let errors = self.errors.load(Relaxed);
        assert_eq!(errors, 0, "{what}: {errors} critical sections saw another holder's writes");
        assert_eq!(self.count.load(Relaxed), exclusive_holds, "{what}: increments under the lock were lost");
    }
}

/// Run `f(core)` on `threads` threads and return the sum of their results.
fn on_threads(threads: usize, f: impl Fn(usize) -> u64 + Sync) -> u64 {
    let f = &f;
    thread::scope(|s| {
        let handles: Vec<_> = (0..threads).map(|core| s.spawn(move || f(core))).collect();
        handles.into_iter().map(|h| h.join().expect("validation thread panicked")).sum()
    })
}

/// Profiler totals over every site: (acquisitions, holds).
fn profile_totals(p: &Profile) -> (u64, u64) {
    p.snapshot().iter().fold((0, 0), |(a, h), r| (a + r.acquisitions, h + r.holds))
}

// ------------------------------------------------------------- kernel locks

/// Validate `Lock<L, S>`; returns the number of acquisitions made.
fn validate_lock<L: RawLock, S: LockStats>(lock: &Lock<L, S>) -> u64 {
    let shared = Shared::default();
    let total = on_threads(THREADS, |core| {
        let id = core as u64 + 1;
        for round in 0..ROUNDS {
            // Checked, unchecked and held calls mixed: one lock state,
            // three ways in.
            if round % 8 == 3 {
                // SAFETY: `core` is below `THREADS`, the lock's cores.
                let held = unsafe { lock.acquire_held(core, yield_hook) };
                shared.exclusive(id);
                // SAFETY: as above; `held` is this hold's.
                unsafe { lock.release_held(core, held) };
                continue;
            }
            if round % 8 == 7 {
                while !lock.try_acquire(core) {
                    thread::yield_now();
                }
            } else if round % 2 == 1 {
                // SAFETY: `core` is below `THREADS`, the lock's cores.
                unsafe { lock.acquire_unchecked(core, yield_hook) };
            } else {
                lock.acquire(core, yield_hook);
            }
            shared.exclusive(id);
            if round % 4 < 2 {
                // SAFETY: as above.
                unsafe { lock.release_unchecked(core) };
            } else {
                lock.release(core);
            }
        }
        ROUNDS
    });
    assert!(!lock.is_locked());
    shared.assert_ok(L::NAME, total);
    total
}

fn validate_raw_lock<L: RawLock>() {
    let lock: Lock<L, NoStats> = Lock::new(L::NAME, THREADS);
    validate_lock(&lock);
}

fn validate_profiled_lock<L: RawLock>() {
    let lock: Lock<L, Profile> = Lock::new(L::NAME, THREADS);
    let made = validate_lock(&lock);
    assert_eq!(profile_totals(lock.stats()), (made, made), "{}: profile counts", L::NAME);
}

#[test]
fn ttas() {
    validate_raw_lock::<Ttas>();
}

#[test]
fn ticket() {
    validate_raw_lock::<Ticket>();
}

#[test]
fn clh() {
    validate_raw_lock::<Clh>();
}

#[test]
fn mcs() {
    validate_raw_lock::<Mcs>();
}

#[test]
fn ttas_profiled() {
    validate_profiled_lock::<Ttas>();
}

#[test]
fn ticket_profiled() {
    validate_profiled_lock::<Ticket>();
}

#[test]
fn clh_profiled() {
    validate_profiled_lock::<Clh>();
}

#[test]
fn mcs_profiled() {
    validate_profiled_lock::<Mcs>();
}

// --------------------------------------------------------- lock_api mutexes

/// lock_api mutexes spin without a hook: two threads, so that no waiter spins
/// away a time slice behind a preempted holder on a two-core machine.
const MUTEX_THREADS: usize = 2;

macro_rules! validate_mutex {
    ($name:ident, $mutex:ident) => {
        #[test]
        fn $name() {
            let m = $mutex::new(([0u64; WORDS], 0u64));
            let errors = AtomicU64::new(0);
            on_threads(MUTEX_THREADS, |core| {
                let id = core as u64 + 1;
                for round in 0..ROUNDS {
                    let mut g = if round % 8 == 7 {
                        loop {
                            if let Some(g) = m.try_lock() {
                                break g;
                            }
                            thread::yield_now();
                        }
                    } else {
                        m.lock()
                    };
                    g.0 = [id; WORDS];
                    // Keep the compiler from folding the check into the write.
                    std::hint::black_box(&mut g.0);
                    hold_a_while();
                    if std::hint::black_box(&g.0).iter().any(|&w| w != id) {
                        errors.fetch_add(1, Relaxed);
                    }
                    g.1 += 1;
                }
                0
            });
            assert!(!m.is_locked());
            assert_eq!(errors.load(Relaxed), 0, "another holder's writes were seen");
            assert_eq!(m.into_inner().1, MUTEX_THREADS as u64 * ROUNDS);
        }
    };
}

validate_mutex!(ttas_mutex, TtasMutex);
validate_mutex!(ticket_mutex, TicketMutex);

// ------------------------------------------------------------------ BrLock

/// Each core mostly reads (its own reader lock) and writes every fourth
/// round (all reader locks); some rounds use the `try_` forms. Returns the
/// number of (read, write) acquisitions.
fn validate_brlock_with<L: RawLock, S: LockStats>(br: &BrLock<L, S>) -> (u64, u64) {
    let shared = Shared::default();
    let reads = AtomicU64::new(0);
    let writes = on_threads(THREADS, |core| {
        let id = core as u64 + 1;
        let mut writes = 0;
        for round in 0..ROUNDS {
            match (round + core as u64) % 8 {
                0 | 4 => {
                    br.write_acquire(core, yield_hook);
                    shared.exclusive(id);
                    br.write_release(core);
                    writes += 1;
                }
                6 => {
                    if br.try_write_acquire(core) {
                        shared.exclusive(id);
                        br.write_release(core);
                        writes += 1;
                    }
                }
                7 => {
                    if br.try_read_acquire(core) {
                        shared.shared();
                        br.read_release(core);
                        reads.fetch_add(1, Relaxed);
                    }
                }
                _ => {
                    br.read_acquire(core, yield_hook);
                    shared.shared();
                    br.read_release(core);
                    reads.fetch_add(1, Relaxed);
                }
            }
        }
        writes
    });
    assert!(!br.is_locked());
    assert!(!br.is_write_locked());
    shared.assert_ok("brlock", writes);
    (reads.load(Relaxed), writes)
}

fn validate_brlock<L: RawLock>() {
    let br: BrLock<L> = BrLock::new(THREADS);
    validate_brlock_with(&br);
}

#[test]
fn brlock_ticket() {
    validate_brlock::<Ticket>();
}

#[test]
fn brlock_ttas() {
    validate_brlock::<Ttas>();
}

#[test]
fn brlock_clh() {
    validate_brlock::<Clh>();
}

#[test]
fn brlock_mcs() {
    validate_brlock::<Mcs>();
}

#[test]
fn brlock_profiled() {
    let br: BrLock<Ticket, Profile> = BrLock::named("brlock", THREADS);
    let (reads, writes) = validate_brlock_with(&br);
    let made = reads + writes;
    assert_eq!(profile_totals(br.stats()), (made, made), "brlock: profile counts");
}

// ---------------------------------------------------------------------- Sx

#[test]
fn sx() {
    let sx = Sx::new();
    let shared = Shared::default();
    let exclusive = on_threads(THREADS, |core| {
        let id = core as u64 + 1;
        let mut exclusive = 0;
        for round in 0..ROUNDS {
            match (round + core as u64) % 8 {
                0 | 4 => {
                    sx.xlock(yield_hook);
                    shared.exclusive(id);
                    sx.xunlock();
                    exclusive += 1;
                }
                1 => {
                    // Exclusive, then downgrade: readers may join, no writer may.
                    sx.xlock(yield_hook);
                    shared.exclusive(id);
                    exclusive += 1;
                    sx.downgrade();
                    hold_a_while();
                    shared.expect_all(id);
                    sx.sunlock();
                }
                2 => {
                    // Shared, then upgrade if we are the only sharer.
                    sx.slock(yield_hook);
                    shared.shared();
                    if sx.try_upgrade() {
                        shared.exclusive(id);
                        exclusive += 1;
                        if round % 2 == 0 {
                            sx.downgrade();
                            shared.expect_all(id);
                            sx.sunlock();
                        } else {
                            sx.xunlock();
                        }
                    } else {
                        sx.sunlock();
                    }
                }
                3 => {
                    if sx.try_xlock() {
                        shared.exclusive(id);
                        sx.xunlock();
                        exclusive += 1;
                    }
                }
                5 => {
                    if sx.try_slock() {
                        shared.shared();
                        sx.sunlock();
                    }
                }
                _ => {
                    sx.slock(yield_hook);
                    shared.shared();
                    sx.sunlock();
                }
            }
        }
        exclusive
    });
    assert!(!sx.is_locked());
    assert!(!sx.writer_waiting(), "no writer waits any more");
    shared.assert_ok("sx", exclusive);
}

#[test]
fn sx_rwlock() {
    let lock = SxRwLock::new(([0u64; WORDS], 0u64));
    let errors = AtomicU64::new(0);
    let writes = on_threads(MUTEX_THREADS, |core| {
        let id = core as u64 + 1;
        let mut writes = 0;
        for round in 0..ROUNDS {
            if round % 3 == 0 {
                let mut g = lock.write();
                g.0 = [id; WORDS];
                g.1 += 1;
                writes += 1;
                std::hint::black_box(&mut g.0);
                hold_a_while();
                let g = lock_api::RwLockWriteGuard::downgrade(g);
                hold_a_while();
                if std::hint::black_box(&g.0).iter().any(|&w| w != id) {
                    errors.fetch_add(1, Relaxed);
                }
            } else {
                let g = lock.read();
                let first = g.0[0];
                hold_a_while();
                if std::hint::black_box(&g.0).iter().any(|&w| w != first) {
                    errors.fetch_add(1, Relaxed);
                }
            }
        }
        writes
    });
    assert!(!lock.is_locked());
    assert_eq!(errors.load(Relaxed), 0, "sx rwlock: inconsistent words seen");
    assert_eq!(lock.into_inner().1, writes);
}
