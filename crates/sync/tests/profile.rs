//! The lock profiler records per site, prints the FreeBSD and Linux tables
//! and JSON, and `NoStats` records nothing.

use granule_sync::lock::{Clh, Lock, Ticket};
use granule_sync::profile::{
    freebsd_table, lock_stat_table, to_json_lines, AbortCause, ElisionEvent, LockStats, Profile,
};

fn site_a(l: &Lock<Clh, Profile>) {
    l.acquire(0, || {});
    l.release(0);
}

fn site_b(l: &Lock<Clh, Profile>) {
    l.acquire(1, || {});
    l.release(1);
}

#[test]
fn counts_acquisitions_per_site() {
    let l: Lock<Clh, Profile> = Lock::new("bkl", 2);
    for _ in 0..3 {
        site_a(&l);
    }
    for _ in 0..5 {
        site_b(&l);
    }
    let snap = l.stats().snapshot();
    assert_eq!(snap.len(), 2, "two distinct acquisition sites: {snap:?}");
    let mut counts: Vec<u64> = snap.iter().map(|r| r.acquisitions).collect();
    counts.sort();
    assert_eq!(counts, vec![3, 5]);
    for r in &snap {
        assert_eq!(r.lock, "bkl");
        assert!(r.file.ends_with("profile.rs"), "site file is the caller's: {}", r.file);
        assert_eq!(r.holds, r.acquisitions, "every acquisition was released");
        assert_eq!(r.contended, 0, "single thread never contends");
        assert!(r.hold_max >= r.hold_min);
        assert!(r.hold_total >= r.hold_max);
    }
    // Three acquisitions on core 0, then five on core 1: the lock's line
    // moved once (the very first acquisition is not a bounce).
    let bounces: u64 = snap.iter().map(|r| r.acq_bounces).sum();
    assert_eq!(bounces, 1);
}

#[test]
fn contended_acquisitions_are_counted() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let l: Lock<Ticket, Profile> = Lock::new("t", 2);
    let waiting = AtomicBool::new(false);
    let holder_site = std::thread::scope(|s| {
        l.acquire(0, || {});
        let holder_site = std::panic::Location::caller().line();
        s.spawn(|| {
            // The spin hook runs only while core 1 waits for the lock.
            l.acquire(1, || waiting.store(true, Ordering::Relaxed));
            l.release(1);
        });
        // Release only once core 1 is certainly waiting: its acquisition is
        // contended, and this site held the lock while it waited.
        while !waiting.load(Ordering::Relaxed) {
            std::hint::spin_loop();
        }
        l.release(0);
        holder_site
    });
    let snap = l.stats().snapshot();
    let total: u64 = snap.iter().map(|r| r.acquisitions).sum();
    assert_eq!(total, 2);
    let contended: u64 = snap.iter().map(|r| r.contended).sum();
    assert_eq!(contended, 1, "core 1 waited: {snap:?}");
    let cnt_hold: u64 = snap.iter().map(|r| r.cnt_hold).sum();
    assert_eq!(cnt_hold, 1, "the waiting is attributed to the holder's site: {snap:?}");
    assert!(snap.iter().any(|r| r.cnt_hold == 1 && r.contended == 0), "{snap:?} (holder near line {holder_site})");
    assert!(snap.iter().all(|r| r.wait_max >= r.wait_min));
}

#[test]
fn elision_events_are_recorded() {
    let p = Profile::new("e", 1);
    let site = std::panic::Location::caller();
    p.elision(site, ElisionEvent::Commit);
    p.elision(site, ElisionEvent::Abort(AbortCause::Conflict));
    p.elision(site, ElisionEvent::Abort(AbortCause::LockBusy));
    p.elision(site, ElisionEvent::Abort(AbortCause::LockBusy));
    p.elision(site, ElisionEvent::Fallback);
    let snap = p.snapshot();
    assert_eq!(snap.len(), 1);
    let r = &snap[0];
    assert_eq!((r.commits, r.aborts_conflict, r.aborts_lock_busy, r.fallbacks), (1, 1, 2, 1));
    assert_eq!(r.aborts(), 3);
    assert!(freebsd_table(&snap).contains("lockbusy"), "elision columns appear when used");
}

#[test]
fn printers_have_the_documented_columns() {
    let l: Lock<Clh, Profile> = Lock::new("bkl", 2);
    site_a(&l);
    let snap = l.stats().snapshot();
    let bsd = freebsd_table(&snap);
    let header = bsd.lines().nth(1).unwrap();
    let cols: Vec<&str> = header.split_whitespace().collect();
    assert_eq!(
        cols,
        ["max", "wait_max", "total", "wait_total", "count", "avg", "wait_avg", "cnt_hold", "cnt_lock", "name"]
    );
    assert!(bsd.contains("(bkl)"));
    let linux = lock_stat_table(&snap);
    for col in ["con-bounces", "contentions", "waittime-min", "acquisitions", "holdtime-avg"] {
        assert!(linux.contains(col), "lock_stat column {col}");
    }
    let json = to_json_lines(&snap);
    assert_eq!(json.lines().count(), 1);
    assert!(json.contains("\"record\":\"lock_profile\""));
    assert!(json.contains("\"acquisitions\":1"));
}

#[track_caller]
fn here() -> &'static std::panic::Location<'static> {
    std::panic::Location::caller()
}

#[test]
fn sites_beyond_the_table_share_the_overflow_slot() {
    let p = Profile::new("many", 1);
    // Forty calls at forty distinct source positions.
    let sites = [
        here(),
        here(),
        here(),
        here(),
        here(),
        here(),
        here(),
        here(),
        here(),
        here(),
        here(),
        here(),
        here(),
        here(),
        here(),
        here(),
        here(),
        here(),
        here(),
        here(),
        here(),
        here(),
        here(),
        here(),
        here(),
        here(),
        here(),
        here(),
        here(),
        here(),
        here(),
        here(),
        here(),
        here(),
        here(),
        here(),
        here(),
        here(),
        here(),
        here(),
    ];
    for s in sites {
        p.acquired(0, s, 1, false, 0);
        p.releasing(0, 5);
    }
    let snap = p.snapshot();
    assert_eq!(snap.len(), granule_sync::profile::MAX_SITES);
    let total: u64 = snap.iter().map(|r| r.acquisitions).sum();
    assert_eq!(total, 40, "nothing is lost when the table is full");
    let other: Vec<_> = snap.iter().filter(|r| r.file == "(other sites)").collect();
    assert_eq!(other.len(), 1);
    assert_eq!(other[0].acquisitions, 40 - (granule_sync::profile::MAX_SITES as u64 - 1));
}
