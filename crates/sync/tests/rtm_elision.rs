//! Lock elision: detection, abort decoding, the retry policy, the wait for a
//! free lock, fallback, statistics and mutual exclusion.
//!
//! Most tests use [`AlwaysAbort`], a test HTM whose every transaction aborts
//! with a chosen cause, so they run on any machine. Tests named `hw_rtm_*`
//! need a CPU whose RTM transactions commit: where [`detect`] says otherwise
//! they print `skipped: RTM unavailable: <reason>` and return (they pass
//! without checking anything). Nothing here asserts a timing.
#![cfg(not(loom))]

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use granule_sync::lock::{no_hook, Clh, Mcs, RawLock, Ticket, Ttas};
use granule_sync::profile::{AbortCause, NoStats, Profile, SiteRecord};
use granule_sync::rtm::{
    cpuid_reports_rtm, detect, AbortStatus, AlwaysAbort, Elided, Htm, Mode, RetryPolicy, Rtm, RtmSupport, LOCK_BUSY,
};

/// Upper bound on any wait in these tests, so a bug fails instead of hanging.
const PATIENCE: Duration = Duration::from_secs(20);

/// Totals over every site of a profile.
#[derive(Debug, Default, PartialEq, Eq)]
struct Totals {
    acquisitions: u64,
    holds: u64,
    commits: u64,
    aborts: [u64; 4],
    fallbacks: u64,
}

fn totals(records: &[SiteRecord]) -> Totals {
    let mut t = Totals::default();
    for r in records {
        t.acquisitions += r.acquisitions;
        t.holds += r.holds;
        t.commits += r.commits;
        t.aborts[AbortCause::Conflict.index()] += r.aborts_conflict;
        t.aborts[AbortCause::Capacity.index()] += r.aborts_capacity;
        t.aborts[AbortCause::LockBusy.index()] += r.aborts_lock_busy;
        t.aborts[AbortCause::Other.index()] += r.aborts_other;
        t.fallbacks += r.fallbacks;
    }
    t
}

fn profile_totals<L: RawLock, H: Htm>(lock: &Elided<L, Profile, H>) -> Totals {
    totals(&lock.stats().snapshot())
}

/// Returns whether real RTM tests can run; prints the skip line if not.
fn rtm_or_skip() -> bool {
    let support = detect();
    if !support.is_available() {
        // `support` displays as "unavailable: <reason>".
        println!("skipped: RTM {support}");
    }
    support.is_available()
}

// ---------------------------------------------------------------- detection

#[test]
fn detection_is_stable_and_agrees_with_cpuid() {
    let first = detect();
    assert_eq!(first, detect(), "detection must be cached and stable");
    #[cfg(target_arch = "x86_64")]
    {
        assert_eq!(cpuid_reports_rtm(), std::arch::is_x86_feature_detected!("rtm"));
        if !cpuid_reports_rtm() {
            // No probe may run (xbegin could #UD), so the answer is exactly this.
            assert_eq!(first, RtmSupport::NotReported);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    assert!(matches!(first, RtmSupport::Unsupported { .. }));
    if !first.is_available() {
        assert!(first.to_string().starts_with("unavailable: "), "{first}");
    }
}

#[test]
fn elided_over_rtm_refuses_without_rtm_and_says_why() {
    let support = detect();
    let made = Elided::<Ttas, NoStats, Rtm>::new("bkl", 2);
    if support.is_available() {
        assert!(made.is_ok() && Rtm::new().is_ok());
        return;
    }
    let err = made.expect_err("Elided<_, _, Rtm> must not be built without working RTM");
    assert_eq!(err.support(), support);
    let msg = err.to_string();
    assert!(msg.contains("RTM"), "{msg}");
    assert!(msg.contains(&support.to_string()), "the error must carry the detection result: {msg}");
    assert!(Rtm::new().is_err());
    assert!(Elided::<Ticket, Profile, Rtm>::with_policy("bkl", 2, RetryPolicy::NO_RETRY).is_err());
}

// ------------------------------------------------------------ abort status

#[test]
fn abort_status_decodes_intel_bits() {
    let cause = |raw| AbortStatus::from_raw(raw).expect("an abort status").cause();
    assert_eq!(AbortStatus::from_raw(u32::MAX), None, "u32::MAX means 'started'");
    assert_eq!(cause(0), AbortCause::Other, "status 0: interrupt, fault, or TSX off");
    assert_eq!(cause(AbortStatus::CONFLICT | AbortStatus::RETRY), AbortCause::Conflict);
    assert_eq!(cause(AbortStatus::CAPACITY), AbortCause::Capacity);
    assert_eq!(cause(AbortStatus::CONFLICT | AbortStatus::CAPACITY), AbortCause::Conflict);
    assert_eq!(cause(AbortStatus::DEBUG), AbortCause::Other);
    assert_eq!(cause(AbortStatus::NESTED | AbortStatus::CAPACITY), AbortCause::Capacity);
    assert_eq!(cause(u32::from(LOCK_BUSY) << 24 | AbortStatus::EXPLICIT), AbortCause::LockBusy);
    // Any other explicit code is "other", even with more bits set.
    assert_eq!(cause(0x42 << 24 | AbortStatus::EXPLICIT | AbortStatus::NESTED), AbortCause::Other);
    let s = AbortStatus::from_raw(0x42 << 24 | AbortStatus::EXPLICIT).unwrap();
    assert_eq!(s.code(), Some(0x42));
    assert!(s.is_explicit() && !s.may_retry());
    assert_eq!(AbortStatus::from_raw(0xff00_0000).unwrap().code(), None, "code is valid only when explicit");
    for c in AbortCause::ALL {
        assert_eq!(AbortStatus::synthetic(c).cause(), c);
        assert_eq!(AlwaysAbort::new(c).status().cause(), c);
    }
    assert_eq!(
        AbortStatus::from_raw(u32::from(LOCK_BUSY) << 24 | 1).unwrap().to_string(),
        "0xff000001 (explicit, code 0xff)"
    );
    assert_eq!(AbortStatus::from_raw(0).unwrap().to_string(), "0x0 (no cause given)");
}

// ------------------------------------------------------- policy and stats

fn check_budget<L: RawLock>(cause: AbortCause, policy: RetryPolicy) {
    const N: u64 = 5;
    let lock = Elided::<L, Profile, AlwaysAbort>::with_htm("elided", 2, AlwaysAbort::new(cause), policy);
    for i in 0..N {
        let core = (i % 2) as usize;
        let mode = lock.acquire(core, no_hook);
        assert_eq!(mode, Mode::Locked, "every transaction aborts, so every acquisition falls back");
        assert!(lock.is_locked());
        lock.release(core, mode);
        assert!(!lock.is_locked());
    }
    let attempts = u64::from(policy.attempts_if_always(cause));
    let mut aborts = [0; 4];
    aborts[cause.index()] = N * attempts;
    let want = Totals { acquisitions: N, holds: N, commits: 0, aborts, fallbacks: N };
    assert_eq!(profile_totals(&lock), want, "{} {cause:?} {policy:?}", L::NAME);
}

#[test]
fn retry_budgets_are_respected_exactly_for_each_cause() {
    let policies = [
        RetryPolicy::DEFAULT,
        RetryPolicy::NO_RETRY,
        RetryPolicy::NEVER,
        RetryPolicy { conflict: 6, capacity: 2, lock_busy: 0, other: 3, max_attempts: 4 },
        RetryPolicy { conflict: 0, capacity: 9, lock_busy: 7, other: 1, max_attempts: 100 },
    ];
    for policy in policies {
        for cause in AbortCause::ALL {
            check_budget::<Ttas>(cause, policy);
        }
    }
    for cause in AbortCause::ALL {
        check_budget::<Ticket>(cause, RetryPolicy::DEFAULT);
        check_budget::<Clh>(cause, RetryPolicy::DEFAULT);
        check_budget::<Mcs>(cause, RetryPolicy::DEFAULT);
    }
}

#[test]
fn default_policy_attempts_per_cause() {
    let p = RetryPolicy::default();
    let attempts = AbortCause::ALL.map(|c| p.attempts_if_always(c));
    // conflict 1 + 3 retries, capacity none, lock busy 1 + 3, other 1 + 1.
    assert_eq!(attempts, [4, 1, 4, 2]);
}

#[test]
fn with_runs_the_section_and_returns_its_value() {
    let lock = Elided::<Ttas, Profile, AlwaysAbort>::with_htm(
        "elided",
        1,
        AlwaysAbort::new(AbortCause::Other),
        RetryPolicy::DEFAULT,
    );
    let v = lock.with(0, no_hook, || {
        assert!(lock.is_locked(), "the fallback holds the lock");
        assert!(!lock.htm().in_transaction());
        lock.htm().abort(0x42); // outside a transaction: does nothing
        7
    });
    assert_eq!(v, 7);
    assert!(!lock.is_locked());
    let t = profile_totals(&lock);
    assert_eq!((t.acquisitions, t.holds, t.fallbacks, t.commits), (1, 1, 1, 0));
    assert_eq!(t.aborts[AbortCause::Other.index()], 2);
}

#[test]
#[should_panic(expected = "outside a transaction")]
fn releasing_elided_mode_outside_a_transaction_panics() {
    let lock = Elided::<Ttas, NoStats, AlwaysAbort>::with_htm(
        "elided",
        1,
        AlwaysAbort::new(AbortCause::Conflict),
        RetryPolicy::DEFAULT,
    );
    lock.release(0, Mode::Elided);
}

#[test]
#[should_panic(expected = "out of range")]
fn core_out_of_range_panics() {
    let lock = Elided::<Ttas, NoStats, AlwaysAbort>::with_htm(
        "elided",
        2,
        AlwaysAbort::new(AbortCause::Conflict),
        RetryPolicy::DEFAULT,
    );
    let _ = lock.acquire(2, no_hook);
}

// --------------------------------------------------- waiting for the lock

/// Waits (bounded by [`PATIENCE`]) until `cond` holds.
fn wait_until(what: &str, cond: impl Fn() -> bool) {
    let t0 = Instant::now();
    while !cond() {
        assert!(t0.elapsed() < PATIENCE, "gave up waiting for {what}");
        std::thread::yield_now();
    }
}

#[test]
fn lock_busy_abort_waits_for_a_free_lock_before_retrying() {
    let policy = RetryPolicy { conflict: 0, capacity: 0, lock_busy: 1, other: 0, max_attempts: 5 };
    let lock =
        Elided::<Ttas, Profile, AlwaysAbort>::with_htm("elided", 2, AlwaysAbort::new(AbortCause::LockBusy), policy);
    // Core 1 falls back (2 attempts) and holds the lock.
    let held = lock.acquire(1, no_hook);
    assert_eq!(held, Mode::Locked);
    assert_eq!(profile_totals(&lock).aborts[AbortCause::LockBusy.index()], 2);

    let spins = AtomicUsize::new(0);
    let released = AtomicBool::new(false);
    std::thread::scope(|s| {
        let waiter = s.spawn(|| {
            let mode = lock.acquire(0, || {
                spins.fetch_add(1, Ordering::Relaxed);
            });
            // Core 1 released before we got in.
            assert!(released.load(Ordering::SeqCst), "entered while core 1 held the lock");
            assert_eq!(mode, Mode::Locked);
            lock.release(0, mode);
        });
        wait_until("core 0 to spin", || spins.load(Ordering::Relaxed) > 0);
        // Core 0 made one attempt, aborted, and now waits for the lock to be
        // free *before* its retry: it has not fallen back to the lock yet.
        let t = profile_totals(&lock);
        assert_eq!(t.aborts[AbortCause::LockBusy.index()], 3, "{t:?}");
        assert_eq!(t.fallbacks, 1, "{t:?}");
        released.store(true, Ordering::SeqCst);
        lock.release(1, held);
        waiter.join().unwrap();
    });
    let t = profile_totals(&lock);
    assert_eq!(t.aborts[AbortCause::LockBusy.index()], 4, "{t:?}");
    assert_eq!((t.fallbacks, t.acquisitions, t.holds, t.commits), (2, 2, 2, 0), "{t:?}");
    assert!(!lock.is_locked());
}

// ------------------------------------------------------ mutual exclusion

const WORDS: usize = 8;

/// Concurrency Kit's validation (`ck_spinlock` regression tests): inside the
/// critical section each thread writes its id into every shared word, then
/// checks that they all still hold it; an increment by plain load + store
/// loses updates if two threads overlap. Violations are counted, not
/// asserted inside, so a failure never leaves a lock held.
struct Shared {
    words: [AtomicUsize; WORDS],
    count: AtomicUsize,
    violations: AtomicUsize,
}

impl Shared {
    fn new() -> Self {
        Self {
            words: std::array::from_fn(|_| AtomicUsize::new(usize::MAX)),
            count: AtomicUsize::new(0),
            violations: AtomicUsize::new(0),
        }
    }

    fn critical_section(&self, id: usize) {
        for w in &self.words {
            w.store(id, Ordering::Relaxed);
        }
        // A short delay without PAUSE: PAUSE aborts an RTM transaction.
        for i in 0..16 {
            std::hint::black_box(i);
        }
        let c = self.count.load(Ordering::Relaxed);
        self.count.store(c + 1, Ordering::Relaxed);
        if self.words.iter().any(|w| w.load(Ordering::Relaxed) != id) {
            self.violations.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// Two threads, `iters` critical sections each; returns the shared state.
fn hammer<L: RawLock, S: granule_sync::profile::LockStats, H: Htm>(lock: &Elided<L, S, H>, iters: usize) -> Shared {
    let shared = Shared::new();
    std::thread::scope(|s| {
        for core in 0..2 {
            let (lock, shared) = (&lock, &shared);
            s.spawn(move || {
                for _ in 0..iters {
                    lock.with(core, no_hook, || shared.critical_section(core));
                }
            });
        }
    });
    shared
}

fn check_exclusion<L: RawLock>(cause: AbortCause) {
    const ITERS: usize = 400;
    let lock = Elided::<L, Profile, AlwaysAbort>::with_htm("elided", 2, AlwaysAbort::new(cause), RetryPolicy::DEFAULT);
    let shared = hammer(&lock, ITERS);
    assert_eq!(shared.violations.load(Ordering::Relaxed), 0, "{} {cause:?}: overlap", L::NAME);
    assert_eq!(shared.count.load(Ordering::Relaxed), 2 * ITERS, "{} {cause:?}: lost update", L::NAME);
    let t = profile_totals(&lock);
    let n = 2 * ITERS as u64;
    assert_eq!((t.acquisitions, t.holds, t.fallbacks, t.commits), (n, n, n, 0), "{} {cause:?}", L::NAME);
    let per = u64::from(RetryPolicy::DEFAULT.attempts_if_always(cause));
    assert_eq!(t.aborts[cause.index()], n * per, "{} {cause:?}", L::NAME);
    assert!(!lock.is_locked());
}

#[test]
fn fallback_keeps_mutual_exclusion_under_two_threads() {
    for cause in AbortCause::ALL {
        check_exclusion::<Ttas>(cause);
    }
    check_exclusion::<Ticket>(AbortCause::Conflict);
    check_exclusion::<Clh>(AbortCause::LockBusy);
    check_exclusion::<Mcs>(AbortCause::Capacity);
}

// ------------------------------------------------- real RTM (or skipped)

/// Needs working RTM, else prints "skipped: RTM unavailable: …" and passes.
#[test]
fn hw_rtm_commits_are_counted_skipped_without_rtm() {
    if !rtm_or_skip() {
        return;
    }
    const N: u64 = 1000;
    let lock = Elided::<Ttas, Profile, Rtm>::new("elided", 1).expect("detect() said RTM is available");
    let counter = AtomicUsize::new(0);
    for _ in 0..N {
        lock.with(0, no_hook, || {
            let c = counter.load(Ordering::Relaxed);
            counter.store(c + 1, Ordering::Relaxed);
        });
    }
    assert_eq!(counter.load(Ordering::Relaxed), N as usize);
    let t = profile_totals(&lock);
    assert_eq!(t.commits + t.fallbacks, N, "{t:?}");
    assert_eq!(t.acquisitions, t.fallbacks, "{t:?}");
    assert!(t.commits > 0, "single-threaded empty-ish sections should commit: {t:?}");
}

/// Needs working RTM, else prints "skipped: RTM unavailable: …" and passes.
#[test]
fn hw_rtm_explicit_abort_forces_fallback_skipped_without_rtm() {
    if !rtm_or_skip() {
        return;
    }
    const N: u64 = 50;
    let lock = Elided::<Ttas, Profile, Rtm>::new("elided", 1).expect("detect() said RTM is available");
    for _ in 0..N {
        let mode = lock.acquire(0, no_hook);
        if lock.htm().in_transaction() {
            lock.htm().abort(0x42);
        }
        // Every transactional run was rolled back by the abort, so only the
        // fallback run gets here.
        assert_eq!(mode, Mode::Locked);
        lock.release(0, mode);
    }
    let t = profile_totals(&lock);
    assert_eq!((t.commits, t.fallbacks, t.acquisitions), (0, N, N), "{t:?}");
    assert!(t.aborts[AbortCause::Other.index()] >= N, "explicit code 0x42 counts as other: {t:?}");
}

/// Needs working RTM, else prints "skipped: RTM unavailable: …" and passes.
#[test]
fn hw_rtm_keeps_mutual_exclusion_skipped_without_rtm() {
    if !rtm_or_skip() {
        return;
    }
    const ITERS: usize = 2000;
    let lock = Elided::<Ttas, Profile, Rtm>::new("elided", 2).expect("detect() said RTM is available");
    let shared = hammer(&lock, ITERS);
    assert_eq!(shared.violations.load(Ordering::Relaxed), 0);
    assert_eq!(shared.count.load(Ordering::Relaxed), 2 * ITERS);
    let t = profile_totals(&lock);
    assert_eq!(t.commits + t.fallbacks, 2 * ITERS as u64, "{t:?}");
    assert!(t.commits > 0, "with working RTM some critical sections must commit: {t:?}");
}
