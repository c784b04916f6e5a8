//! Single-threaded behaviour of the reader-writer locks: what each operation
//! returns and what state it leaves (the concurrent properties are in
//! `loom_rw.rs` and `validate_locks.rs`).
#![cfg(not(loom))]

use granule_sync::lock::{no_hook, Clh, Mcs, RawLock, Ticket, Ttas};
use granule_sync::profile::Profile;
use granule_sync::rw::{BrLock, Sx, SxRwLock};

// ------------------------------------------------------------------------ Sx

#[test]
fn sx_starts_free() {
    let sx = Sx::new();
    assert!(!sx.is_locked());
    assert!(!sx.is_xlocked());
    assert_eq!(sx.sharers(), 0);
    assert!(!sx.writer_waiting());
    let sx = Sx::default();
    assert!(!sx.is_locked());
}

#[test]
fn sx_shared_holds_count_and_exclude_writers() {
    let sx = Sx::new();
    assert!(!sx.slock(no_hook), "uncontended slock reports no contention");
    assert!(sx.try_slock());
    assert_eq!(sx.sharers(), 2);
    assert!(sx.is_locked());
    assert!(!sx.is_xlocked());
    assert!(!sx.try_xlock(), "try_xlock must fail while shared");
    sx.sunlock();
    assert_eq!(sx.sharers(), 1);
    assert!(!sx.try_xlock(), "try_xlock must fail while one sharer remains");
    sx.sunlock();
    assert!(!sx.is_locked());
    assert!(sx.try_xlock());
    sx.xunlock();
    assert!(!sx.is_locked());
}

#[test]
fn sx_exclusive_excludes_everyone() {
    let sx = Sx::new();
    assert!(!sx.xlock(no_hook));
    assert!(sx.is_locked());
    assert!(sx.is_xlocked());
    assert_eq!(sx.sharers(), 0);
    assert!(!sx.try_slock());
    assert!(!sx.try_xlock());
    sx.xunlock();
    assert!(!sx.is_locked());
    assert!(sx.try_slock());
    sx.sunlock();
}

#[test]
fn sx_try_upgrade_only_for_sole_sharer() {
    let sx = Sx::new();
    sx.slock(no_hook);
    sx.slock(no_hook);
    assert!(!sx.try_upgrade(), "two sharers: upgrade must fail");
    assert_eq!(sx.sharers(), 2, "a failed upgrade keeps the shared hold");
    sx.sunlock();
    assert!(sx.try_upgrade(), "sole sharer: upgrade must succeed");
    assert!(sx.is_xlocked());
    assert_eq!(sx.sharers(), 0);
    assert!(!sx.try_slock());
    assert!(!sx.try_xlock());
    sx.xunlock();
    assert!(!sx.is_locked());
}

#[test]
fn sx_downgrade_admits_readers_not_writers() {
    let sx = Sx::new();
    sx.xlock(no_hook);
    sx.downgrade();
    assert!(!sx.is_xlocked());
    assert_eq!(sx.sharers(), 1);
    assert!(!sx.try_xlock(), "a writer must not enter after downgrade");
    assert!(sx.try_slock(), "a reader may enter after downgrade");
    assert_eq!(sx.sharers(), 2);
    sx.sunlock();
    assert!(!sx.try_xlock());
    sx.sunlock();
    assert!(sx.try_xlock());
    sx.xunlock();
}

#[test]
fn sx_upgrade_downgrade_round_trip() {
    let sx = Sx::new();
    sx.slock(no_hook);
    assert!(sx.try_upgrade());
    sx.downgrade();
    assert_eq!(sx.sharers(), 1);
    assert!(sx.try_upgrade());
    sx.xunlock();
    assert!(!sx.is_locked());
}

#[test]
fn sx_waiting_writer_blocks_new_readers() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    let sx = Arc::new(Sx::new());
    sx.slock(no_hook);
    let started = Arc::new(AtomicBool::new(false));
    let writer = {
        let (sx, started) = (Arc::clone(&sx), Arc::clone(&started));
        std::thread::spawn(move || {
            let contended = sx.xlock(|| started.store(true, Ordering::SeqCst));
            sx.xunlock();
            contended
        })
    };
    // The spin hook runs only after the writer has announced itself.
    while !started.load(Ordering::SeqCst) {
        std::thread::yield_now();
    }
    assert!(sx.writer_waiting());
    assert!(!sx.try_slock(), "a new reader must not pass a waiting writer");
    assert!(sx.try_upgrade(), "the sole sharer may still upgrade past a waiting writer");
    assert!(sx.writer_waiting(), "the upgrade keeps the writer's announcement");
    sx.downgrade();
    assert!(sx.writer_waiting(), "the downgrade keeps the writer's announcement");
    assert!(!sx.try_slock(), "downgrade admits no reader while a writer waits");
    sx.sunlock();
    assert!(writer.join().unwrap(), "the writer waited");
    assert!(!sx.is_locked());
    assert!(!sx.writer_waiting(), "no writer left, no announcement left");
    assert!(sx.try_slock());
    sx.sunlock();
}

#[test]
#[cfg(debug_assertions)]
#[should_panic(expected = "sunlock without a shared hold")]
fn sx_sunlock_unheld_is_caught() {
    Sx::new().sunlock();
}

#[test]
#[cfg(debug_assertions)]
#[should_panic(expected = "xunlock without the exclusive hold")]
fn sx_xunlock_unheld_is_caught() {
    Sx::new().xunlock();
}

#[test]
#[cfg(debug_assertions)]
#[should_panic(expected = "downgrade without the exclusive hold")]
fn sx_downgrade_shared_is_caught() {
    let sx = Sx::new();
    sx.slock(no_hook);
    sx.downgrade();
}

#[test]
fn sx_rwlock_adapter() {
    let lock = SxRwLock::new(5u32);
    {
        let a = lock.read();
        let b = lock.try_read().expect("readers share");
        assert_eq!(*a + *b, 10);
        assert!(lock.try_write().is_none());
    }
    {
        let mut w = lock.write();
        *w = 7;
        assert!(lock.try_read().is_none());
        let r = lock_api::RwLockWriteGuard::downgrade(w);
        assert_eq!(*r, 7);
        assert!(lock.try_read().is_some());
        assert!(lock.try_write().is_none());
    }
    assert!(!lock.is_locked());
    assert_eq!(lock.into_inner(), 7);
}

// -------------------------------------------------------------------- BrLock

fn brlock_single_core_behaviour<L: RawLock>() {
    const CORES: usize = 3;
    let br: BrLock<L> = BrLock::new(CORES);
    assert_eq!(br.cores(), CORES);
    assert!(!br.is_locked());
    assert!(!br.is_write_locked());
    assert_eq!(br.writer(), None);

    // Readers on different cores do not interfere.
    assert!(!br.read_acquire(0, no_hook), "{}: uncontended read", L::NAME);
    assert!(br.try_read_acquire(2));
    assert!(br.is_read_locked(0) && !br.is_read_locked(1) && br.is_read_locked(2));
    assert!(br.is_locked());
    assert!(!br.is_write_locked());
    assert!(!br.try_write_acquire(1), "{}: a writer must not pass readers", L::NAME);
    assert!(!br.is_read_locked(1), "{}: a failed try_write_acquire releases what it took", L::NAME);
    br.read_release(0);
    assert!(!br.try_write_acquire(1), "{}: one reader left", L::NAME);
    br.read_release(2);
    assert!(!br.is_locked());

    // A writer excludes readers on every core and other writers.
    assert!(!br.write_acquire(1, no_hook), "{}: uncontended write", L::NAME);
    assert!(br.is_write_locked());
    assert_eq!(br.writer(), Some(1));
    for core in 0..CORES {
        assert!(br.is_read_locked(core));
        assert!(!br.try_read_acquire(core), "{}: reader on core {core} passed a writer", L::NAME);
    }
    assert!(!br.try_write_acquire(0));
    br.write_release(1);
    assert!(!br.is_locked());
    assert_eq!(br.writer(), None);

    assert!(br.try_write_acquire(2));
    assert_eq!(br.writer(), Some(2));
    br.write_release(2);
    assert!(br.try_read_acquire(1));
    br.read_release(1);
    assert!(!br.is_locked());
}

#[test]
fn brlock_ticket() {
    brlock_single_core_behaviour::<Ticket>();
}

#[test]
fn brlock_ttas() {
    brlock_single_core_behaviour::<Ttas>();
}

#[test]
fn brlock_clh() {
    brlock_single_core_behaviour::<Clh>();
}

#[test]
fn brlock_mcs() {
    brlock_single_core_behaviour::<Mcs>();
}

#[test]
fn brlock_default_is_ticket() {
    let br: BrLock = BrLock::new(2);
    let _: &Ticket = br.reader_lock(1);
}

#[test]
#[should_panic(expected = "at least one core")]
fn brlock_needs_a_core() {
    let _ = BrLock::<Ticket>::new(0);
}

#[test]
#[should_panic]
fn brlock_core_out_of_range() {
    BrLock::<Ticket>::new(2).read_acquire(2, no_hook);
}

#[test]
#[cfg(debug_assertions)]
#[should_panic(expected = "not the writer")]
fn brlock_write_release_by_other_core_is_caught() {
    let br = BrLock::<Ticket>::new(2);
    br.write_acquire(0, no_hook);
    br.write_release(1);
}

#[test]
fn brlock_profile_counts_sites() {
    let br: BrLock<Ticket, Profile> = BrLock::named("kernel", 2);
    for _ in 0..3 {
        br.read_acquire(0, no_hook);
        br.read_release(0);
    }
    br.write_acquire(1, no_hook);
    br.write_release(1);
    assert!(br.try_read_acquire(1));
    br.read_release(1);
    let snap = br.stats().snapshot();
    assert_eq!(br.stats().name(), "kernel");
    assert_eq!(snap.iter().map(|r| r.acquisitions).sum::<u64>(), 5);
    assert_eq!(snap.iter().map(|r| r.holds).sum::<u64>(), 5);
    assert_eq!(snap.len(), 3, "three call sites: {snap:?}");
    assert!(snap.iter().all(|r| r.file.ends_with("rw_locks.rs")));
}
