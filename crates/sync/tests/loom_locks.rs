//! Model-checked properties of the kernel locks (TTAS, ticket, CLH, MCS).
//!
//! Run with
//! `LOOM_MAX_PREEMPTIONS=3 RUSTFLAGS="--cfg loom" cargo test -p granule-sync --release --test loom_locks`.
//! Every model sets its own preemption bound (stated at each test), so the
//! environment variable does not change what is explored.
//!
//! The data a lock protects is a loom `UnsafeCell`: loom reports any two
//! accesses to it that are not ordered by happens-before, so a critical
//! section that overlaps another — or merely is not *ordered* after it by the
//! lock's acquire/release — fails the model, on top of the counters checked
//! at the end.
//!
//! Two limits of loom 0.7 shape the models:
//!
//! * **Several spinners.** A spin iteration ends in `yield_now`, and loom may
//!   switch from a yielding thread to *any* runnable thread without counting a
//!   preemption. With two threads spinning at once (on the same word, or at
//!   a preemption bound above 2) loom explores ever longer "the spinners take
//!   turns, the holder never runs" schedules and gives up ("exceeded maximum
//!   number of branches"). Models with two waiters at once therefore wait
//!   through a *blocking* spin hook ([`Releases`]): a waiter sleeps on a loom
//!   condvar until the next release is announced. The condvar adds
//!   happens-before edges from each release to the woken waiters, so those
//!   models check the queueing logic (exclusion, order) while the two-core
//!   models — and, for CLH and MCS, whose waiters spin on separate words, a
//!   three-core model at bound 2 — spin for real, add no synchronisation, and
//!   check the memory orderings of the hand-off.
//! * **A failed read-modify-write must not write.** loom orders an atomic's
//!   stores by happens-before only, so a failed `swap(true)` would leave a
//!   stray `true` unordered with the holder's release. TTAS therefore takes
//!   the lock with `compare_exchange(false, true)`, which writes nothing when
//!   it fails (and costs the same as `xchg` on x86), and all its models run.
//!
//! Cores waiting in `acquire` call the spin hook only once they are queued
//! (after the ticket `xadd`, the CLH/MCS tail swap and, for MCS, the link to
//! the predecessor), so the FIFO models learn from the hook that a waiter is
//! queued and need no test-only accessor in the locks.
#![cfg(loom)]

use std::sync::atomic::Ordering::SeqCst as StdSeqCst;

use granule_sync::lock::{no_hook, Clh, Mcs, RawLock, Ticket, Ttas};
use loom::cell::UnsafeCell;
use loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use loom::sync::{Arc, Condvar, Mutex};
use loom::thread;

/// A lock under test and the data it protects.
struct Guarded<L> {
    lock: L,
    data: UnsafeCell<usize>,
}

// SAFETY: `data` is only accessed through `Guarded::bump`, whose callers hold
// `lock`, and `Guarded::read`, called after every other thread was joined;
// whether the lock really orders every access is exactly what loom checks (it
// tracks each access to a loom `UnsafeCell` and fails on an unordered pair).
unsafe impl<L: Sync> Sync for Guarded<L> {}

impl<L: RawLock> Guarded<L> {
    fn new(cores: usize) -> Self {
        Self { lock: L::with_cores(cores), data: UnsafeCell::new(0) }
    }

    /// Increment the protected counter with a non-atomic read-modify-write.
    /// The caller must hold `lock`.
    fn bump(&self) {
        // SAFETY: the caller holds `lock` (see the `Sync` impl); loom's cell
        // detects any access that is not ordered with this one.
        self.data.with_mut(|p| unsafe { *p += 1 });
    }

    /// The protected counter; only after all other threads were joined.
    fn read(&self) -> usize {
        // SAFETY: every other thread was joined (see the `Sync` impl).
        self.data.with(|p| unsafe { *p })
    }
}

/// Release announcements, for blocking spin hooks (see the module docs), and
/// the "queued" flags waiters raise from their hook.
struct Releases {
    state: Mutex<(u64, [bool; 3])>,
    changed: Condvar,
}

impl Releases {
    fn new() -> Self {
        Self { state: Mutex::new((0, [false; 3])), changed: Condvar::new() }
    }

    /// The number of releases announced so far.
    fn count(&self) -> u64 {
        self.state.lock().unwrap().0
    }

    /// Announce a release; call it right after `release`.
    fn announce(&self) {
        self.state.lock().unwrap().0 += 1;
        self.changed.notify_all();
    }

    /// A spin hook for `core` that marks it queued and sleeps until a release
    /// newer than `seen` (the count read before `acquire` was called) is
    /// announced. No release is missed: one that happened before `seen` was
    /// read is visible to the waiter's next look at the lock.
    fn hook(&self, core: usize, mut seen: u64) -> impl FnMut() + '_ {
        move || {
            let mut s = self.state.lock().unwrap();
            if !s.1[core] {
                s.1[core] = true;
                self.changed.notify_all();
            }
            while s.0 == seen {
                s = self.changed.wait(s).unwrap();
            }
            seen = s.0;
        }
    }

    /// Sleep until `core` has marked itself queued.
    fn wait_queued(&self, core: usize) {
        let mut s = self.state.lock().unwrap();
        while !s.1[core] {
            s = self.changed.wait(s).unwrap();
        }
    }
}

fn model<F: Fn() + Send + Sync + 'static>(preemption_bound: usize, f: F) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(preemption_bound);
    builder.check(f);
}

/// Two cores, each taking the lock `rounds` times, spinning for real.
fn mutual_exclusion_2<L: RawLock + 'static>(rounds: usize) {
    let g = Arc::new(Guarded::<L>::new(2));
    let other = {
        let g = Arc::clone(&g);
        thread::spawn(move || {
            for _ in 0..rounds {
                g.lock.acquire(1, no_hook);
                g.bump();
                g.lock.release(1);
            }
        })
    };
    for _ in 0..rounds {
        g.lock.acquire(0, no_hook);
        g.bump();
        g.lock.release(0);
    }
    other.join().unwrap();
    assert!(!g.lock.is_locked());
    assert_eq!(g.read(), 2 * rounds);
}

/// Two cores, two acquisitions each, through the kernel's way in: core 1
/// always with `acquire_held` / `release_held`, core 0 first with the
/// checked calls and then with the held ones (one lock state, both ways
/// in, across a release that does not note what it holds).
fn mutual_exclusion_held_2<L: RawLock + 'static>() {
    let g = Arc::new(Guarded::<L>::new(2));
    let other = {
        let g = Arc::clone(&g);
        thread::spawn(move || {
            for _ in 0..2 {
                // SAFETY: core 1 is below the lock's 2 cores.
                let (_, held) = unsafe { g.lock.acquire_held(1, no_hook) };
                g.bump();
                // SAFETY: as above; `held` is this hold's.
                unsafe { g.lock.release_held(1, held) };
            }
        })
    };
    g.lock.acquire(0, no_hook);
    g.bump();
    g.lock.release(0);
    // SAFETY: core 0 is below the lock's 2 cores.
    let (_, held) = unsafe { g.lock.acquire_held(0, no_hook) };
    g.bump();
    // SAFETY: as above; `held` is this hold's.
    unsafe { g.lock.release_held(0, held) };
    other.join().unwrap();
    assert!(!g.lock.is_locked());
    assert_eq!(g.read(), 4);
}

/// Three cores, one acquisition each; waiters spin for real or, with
/// `blocking`, sleep in the spin hook until the next release.
fn mutual_exclusion_3<L: RawLock + 'static>(blocking: bool) {
    let g = Arc::new(Guarded::<L>::new(3));
    let r = Arc::new(Releases::new());
    let enter = move |g: &Guarded<L>, r: &Releases, core: usize| {
        if blocking {
            let seen = r.count();
            g.lock.acquire(core, r.hook(core, seen));
        } else {
            g.lock.acquire(core, no_hook);
        }
        g.bump();
        g.lock.release(core);
        if blocking {
            r.announce();
        }
    };
    let threads: Vec<_> = (1..3)
        .map(|core| {
            let (g, r) = (Arc::clone(&g), Arc::clone(&r));
            thread::spawn(move || enter(&g, &r, core))
        })
        .collect();
    enter(&g, &r, 0);
    for t in threads {
        t.join().unwrap();
    }
    assert!(!g.lock.is_locked());
    assert_eq!(g.read(), 3);
}

/// Core 0 holds the lock; core 1 queues; only then does core 2 start to
/// acquire. When core 0 releases, core 1 must enter before core 2.
fn fifo_handoff<L: RawLock + 'static>() {
    let g = Arc::new(Guarded::<L>::new(3));
    let r = Arc::new(Releases::new());
    let entered = Arc::new(AtomicUsize::new(0));
    assert!(!g.lock.acquire(0, no_hook));
    let waiter = |core: usize, expect_position: usize| {
        let (g, r, entered) = (Arc::clone(&g), Arc::clone(&r), Arc::clone(&entered));
        thread::spawn(move || {
            let seen = r.count();
            g.lock.acquire(core, r.hook(core, seen));
            // Ordered by the lock, so this counter gives the entry order.
            let position = entered.fetch_add(1, SeqCst);
            assert_eq!(position, expect_position, "core {core} entered out of queue order");
            g.bump();
            g.lock.release(core);
            r.announce();
        })
    };
    let first = waiter(1, 0);
    r.wait_queued(1);
    let second = waiter(2, 1);
    g.bump();
    g.lock.release(0);
    r.announce();
    first.join().unwrap();
    second.join().unwrap();
    assert_eq!(g.read(), 3);
    assert!(!g.lock.is_locked());
}

/// While core 0 holds the lock, core 1's `try_acquire` fails (and leaves the
/// lock usable).
fn try_fails_while_held<L: RawLock + 'static>() {
    let g = Arc::new(Guarded::<L>::new(2));
    let held = Arc::new(AtomicBool::new(false));
    let tried = Arc::new(AtomicBool::new(false));
    let holder = {
        let (g, held, tried) = (Arc::clone(&g), Arc::clone(&held), Arc::clone(&tried));
        thread::spawn(move || {
            g.lock.acquire(0, no_hook);
            held.store(true, SeqCst);
            while !tried.load(SeqCst) {
                thread::yield_now();
            }
            g.bump();
            g.lock.release(0);
        })
    };
    while !held.load(SeqCst) {
        thread::yield_now();
    }
    assert!(g.lock.is_locked());
    assert!(!g.lock.try_acquire(1), "try_acquire succeeded on a held lock");
    tried.store(true, SeqCst);
    holder.join().unwrap();
    assert!(g.lock.try_acquire(1), "try_acquire failed on a free lock");
    g.bump();
    g.lock.release(1);
    assert_eq!(g.read(), 2);
}

/// Two cores each try twice; every successful try excludes the other core.
fn try_vs_try<L: RawLock + 'static>() {
    let g = Arc::new(Guarded::<L>::new(2));
    let attempt = |g: &Guarded<L>, core: usize| -> usize {
        let mut got = 0;
        for _ in 0..2 {
            if g.lock.try_acquire(core) {
                g.bump();
                g.lock.release(core);
                got += 1;
            }
        }
        got
    };
    let other = {
        let g = Arc::clone(&g);
        thread::spawn(move || attempt(&g, 1))
    };
    let mine = attempt(&g, 0);
    let theirs = other.join().unwrap();
    // A try may fail on a free lock (it read a stale word), but the first
    // try of all finds the lock free.
    assert!(mine + theirs >= 1, "every try failed");
    assert_eq!(g.read(), mine + theirs);
    assert!(!g.lock.is_locked());
}

/// Core 0 takes the lock twice while core 1 tries once; whenever the try
/// succeeds it must exclude core 0 (see also
/// `clh_try_acquire_aba_keeps_mutual_exclusion`).
fn try_acquire_excludes<L: RawLock + 'static>() {
    let g = Arc::new(Guarded::<L>::new(2));
    let other = {
        let g = Arc::clone(&g);
        thread::spawn(move || {
            for _ in 0..2 {
                g.lock.acquire(0, no_hook);
                g.bump();
                g.lock.release(0);
            }
        })
    };
    let got = g.lock.try_acquire(1);
    if got {
        g.bump();
        g.lock.release(1);
    }
    other.join().unwrap();
    assert_eq!(g.read(), 2 + usize::from(got));
    assert!(!g.lock.is_locked());
    // The lock still works for both cores afterwards.
    for core in [1, 0] {
        assert!(g.lock.try_acquire(core));
        g.lock.release(core);
    }
}

macro_rules! lock_models {
    ($module:ident, $lock:ty) => {
        mod $module {
            use super::*;

            /// Two cores × two acquisitions, spinning; preemption bound 3.
            #[test]
            fn mutual_exclusion_two_cores() {
                model(3, || mutual_exclusion_2::<$lock>(2));
            }

            /// Two cores × two acquisitions, the held way in; preemption
            /// bound 3.
            #[test]
            fn mutual_exclusion_two_cores_held() {
                model(3, mutual_exclusion_held_2::<$lock>);
            }

            /// Three cores × one acquisition, blocking hook; preemption bound 3.
            #[test]
            fn mutual_exclusion_three_cores() {
                model(3, || mutual_exclusion_3::<$lock>(true));
            }

            /// Preemption bound 3.
            #[test]
            fn try_acquire_fails_while_held() {
                model(3, try_fails_while_held::<$lock>);
            }

            /// Two tries against two tries; preemption bound 3.
            #[test]
            fn try_acquire_against_try_acquire() {
                model(3, try_vs_try::<$lock>);
            }

            /// One try against two acquisitions; preemption bound 3.
            #[test]
            fn try_acquire_against_acquire() {
                model(3, try_acquire_excludes::<$lock>);
            }
        }
    };
}

// `cfg_attr(true/false, ..)` needs literal predicates that rustc accepts; use
// `all()` (always true) and `any()` (always false).
lock_models!(ttas, Ttas);
lock_models!(ticket, Ticket);
lock_models!(clh, Clh);
lock_models!(mcs, Mcs);

macro_rules! fifo_model {
    ($name:ident, $lock:ty) => {
        /// Three cores, blocking hook; preemption bound 3.
        #[test]
        fn $name() {
            model(3, fifo_handoff::<$lock>);
        }
    };
}

fifo_model!(ticket_fifo_handoff_to_first_waiter, Ticket);
fifo_model!(clh_fifo_handoff_to_first_waiter, Clh);
fifo_model!(mcs_fifo_handoff_to_first_waiter, Mcs);

/// The queue locks' waiters spin on separate lines, which loom can model
/// with real spinning even with two waiters at once — up to preemption bound
/// 2 (with 3 the spinners' turn-taking schedules exceed loom's branch limit).
#[test]
fn clh_mutual_exclusion_three_cores_spinning() {
    model(2, || mutual_exclusion_3::<Clh>(false));
}

/// As above for MCS; preemption bound 2.
#[test]
fn mcs_mutual_exclusion_three_cores_spinning() {
    model(2, || mutual_exclusion_3::<Mcs>(false));
}

/// CLH's `try_acquire` documents one bounded wait: the tail it read as a
/// released node T can go T -> X -> T before its CAS (T's new owner re-queued
/// it), and the CAS then queues behind a held node. Check that loom reaches
/// that case and that mutual exclusion holds in it (the model itself checks
/// exclusion in every execution); preemption bound 3.
#[test]
fn clh_try_acquire_aba_keeps_mutual_exclusion() {
    let waits_before = granule_sync::lock::LOOM_TRY_WAITS.load(StdSeqCst);
    model(3, || {
        try_acquire_excludes::<Clh>();
    });
    // The lock itself counts the executions where a successful try found its
    // predecessor node held again and had to wait: the case under test.
    let waits = granule_sync::lock::LOOM_TRY_WAITS.load(StdSeqCst) - waits_before;
    assert!(waits > 0, "no explored execution hit the T -> X -> T tail case");
}

/// The ticket lock's queue length sees a queued waiter; preemption bound 3.
#[test]
fn ticket_queue_length_counts_waiters() {
    model(3, || {
        let lock = Arc::new(Ticket::new());
        lock.acquire(0, no_hook);
        let waiter = {
            let lock = Arc::clone(&lock);
            thread::spawn(move || {
                lock.acquire(1, no_hook);
                lock.release(1);
            })
        };
        while lock.queue_length() < 2 {
            thread::yield_now();
        }
        lock.release(0);
        waiter.join().unwrap();
        assert_eq!(lock.queue_length(), 0);
    });
}
