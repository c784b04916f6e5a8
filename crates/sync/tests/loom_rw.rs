//! Model-checked properties of the reader-writer locks (big-reader lock and
//! shared/exclusive lock).
//!
//! Run with
//! `LOOM_MAX_PREEMPTIONS=3 RUSTFLAGS="--cfg loom" cargo test -p granule-sync --release --test loom_rw`.
//! Every model sets its own preemption bound (stated at each test).
//!
//! Protected data is a loom `UnsafeCell`: writers write it (`with_mut`),
//! readers read it (`with`), and loom fails the model on any write that is
//! not ordered by happens-before with another access — so a reader inside
//! with a writer, or two writers at once, or a hold not properly ordered
//! after the previous one, is caught. Values are checked too, for the
//! properties loom's race detection cannot see (e.g. that `downgrade` lets no
//! writer in between the exclusive and the shared hold).
//!
//! As in `loom_locks.rs`, models with two threads waiting at once use a
//! blocking spin hook (a waiter sleeps on a loom condvar until the next
//! release is announced), because loom cannot bound schedules in which two
//! spinners take turns; models with one waiter spin for real.
#![cfg(loom)]

use granule_sync::lock::{no_hook, Clh, Mcs, RawLock, Ticket};
use granule_sync::rw::{BrLock, Sx};
use loom::cell::UnsafeCell;
use loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use loom::sync::{Arc, Condvar, Mutex};
use loom::thread;

/// Data protected by the reader-writer lock under test.
struct Data(UnsafeCell<u64>);

// SAFETY: the cell is written only by callers holding the write side of the
// lock under test and read only by callers holding at least the read side (or
// after every other thread was joined). Whether the lock really orders those
// accesses is exactly what loom checks on its `UnsafeCell`.
unsafe impl Sync for Data {}

impl Data {
    fn new() -> Self {
        Self(UnsafeCell::new(0))
    }

    /// Write `v`; the caller holds the write side.
    fn write(&self, v: u64) {
        // SAFETY: see the `Sync` impl; loom checks the exclusion.
        self.0.with_mut(|p| unsafe { *p = v });
    }

    /// Read; the caller holds the read side (or every thread was joined).
    fn read(&self) -> u64 {
        // SAFETY: see the `Sync` impl; loom checks the exclusion.
        self.0.with(|p| unsafe { *p })
    }
}

/// Release announcements for blocking spin hooks (see the module docs), and
/// flags a thread can sleep on.
struct Releases {
    state: Mutex<(u64, [bool; 2])>,
    changed: Condvar,
}

impl Releases {
    fn new() -> Self {
        Self { state: Mutex::new((0, [false; 2])), changed: Condvar::new() }
    }

    /// The number of releases announced so far; read it before acquiring.
    fn count(&self) -> u64 {
        self.state.lock().unwrap().0
    }

    /// Announce a release (or downgrade); call it right after.
    fn announce(&self) {
        self.state.lock().unwrap().0 += 1;
        self.changed.notify_all();
    }

    /// A spin hook that sleeps until a release newer than `seen` (the count
    /// read before acquiring) is announced; with `flag`, it raises that flag
    /// first ("I am waiting").
    fn hook(&self, flag: Option<usize>, mut seen: u64) -> impl FnMut() + '_ {
        move || {
            let mut s = self.state.lock().unwrap();
            if let Some(f) = flag {
                if !s.1[f] {
                    s.1[f] = true;
                    self.changed.notify_all();
                }
            }
            while s.0 == seen {
                s = self.changed.wait(s).unwrap();
            }
            seen = s.0;
        }
    }

    /// Sleep until `flag` is raised.
    fn wait_flag(&self, flag: usize) {
        let mut s = self.state.lock().unwrap();
        while !s.1[flag] {
            s = self.changed.wait(s).unwrap();
        }
    }
}

fn model<F: Fn() + Send + Sync + 'static>(preemption_bound: usize, f: F) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(preemption_bound);
    builder.check(f);
}

fn spawn<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> thread::JoinHandle<T> {
    thread::spawn(f)
}

fn wait_for(flag: &AtomicBool) {
    while !flag.load(SeqCst) {
        thread::yield_now();
    }
}

// ---------------------------------------------------------------- BrLock

/// A writer on core 0 and a reader on core 1: the reader sees the value
/// before or after the write, never during it.
fn brlock_writer_vs_reader<L: RawLock + 'static>() {
    let br = Arc::new(BrLock::<L>::new(2));
    let data = Arc::new(Data::new());
    let reader = {
        let (br, data) = (Arc::clone(&br), Arc::clone(&data));
        spawn(move || {
            br.read_acquire(1, no_hook);
            let v = data.read();
            br.read_release(1);
            v
        })
    };
    br.write_acquire(0, no_hook);
    assert_eq!(br.writer(), Some(0));
    data.write(7);
    br.write_release(0);
    let seen = reader.join().unwrap();
    assert!(seen == 0 || seen == 7);
    assert!(!br.is_locked());
}

/// Big-reader lock over ticket locks: writer excludes reader; bound 3.
#[test]
fn brlock_ticket_writer_excludes_reader() {
    model(3, brlock_writer_vs_reader::<Ticket>);
}

/// Over MCS locks; bound 3.
#[test]
fn brlock_mcs_writer_excludes_reader() {
    model(3, brlock_writer_vs_reader::<Mcs>);
}

/// Over CLH locks; bound 3.
#[test]
fn brlock_clh_writer_excludes_reader() {
    model(3, brlock_writer_vs_reader::<Clh>);
}

/// Two writers (cores 0 and 1) exclude each other and cannot deadlock (both
/// take the per-core locks in index order); bound 3.
#[test]
fn brlock_writers_exclude_each_other() {
    model(3, || {
        let br = Arc::new(BrLock::<Ticket>::new(2));
        let data = Arc::new(Data::new());
        let other = {
            let (br, data) = (Arc::clone(&br), Arc::clone(&data));
            spawn(move || {
                br.write_acquire(1, no_hook);
                let v = data.read();
                data.write(v + 1);
                br.write_release(1);
            })
        };
        br.write_acquire(0, no_hook);
        let v = data.read();
        data.write(v + 1);
        br.write_release(0);
        other.join().unwrap();
        assert_eq!(data.read(), 2);
        assert!(!br.is_locked());
    });
}

/// Readers on two cores are inside at the same time (each waits inside for
/// the other; without sharing the model could not finish); bound 3.
#[test]
fn brlock_readers_share() {
    model(3, || {
        let br = Arc::new(BrLock::<Ticket>::new(2));
        let inside = Arc::new([AtomicBool::new(false), AtomicBool::new(false)]);
        let read = |br: &BrLock<Ticket>, inside: &[AtomicBool; 2], core: usize| {
            br.read_acquire(core, no_hook);
            inside[core].store(true, SeqCst);
            wait_for(&inside[1 - core]);
            br.read_release(core);
        };
        let other = {
            let (br, inside) = (Arc::clone(&br), Arc::clone(&inside));
            spawn(move || read(&br, &inside, 1))
        };
        read(&br, &inside, 0);
        other.join().unwrap();
        assert!(!br.is_locked());
    });
}

/// A writer (core 0) and readers on cores 1 and 2; waiters use the blocking
/// hook; bound 3.
#[test]
fn brlock_writer_and_two_readers() {
    model(3, || {
        let br = Arc::new(BrLock::<Ticket>::new(3));
        let data = Arc::new(Data::new());
        let r = Arc::new(Releases::new());
        let readers: Vec<_> = (1..3)
            .map(|core| {
                let (br, data, r) = (Arc::clone(&br), Arc::clone(&data), Arc::clone(&r));
                spawn(move || {
                    let seen = r.count();
                    br.read_acquire(core, r.hook(None, seen));
                    let v = data.read();
                    br.read_release(core);
                    r.announce();
                    assert!(v == 0 || v == 9);
                })
            })
            .collect();
        let seen = r.count();
        br.write_acquire(0, r.hook(None, seen));
        data.write(9);
        br.write_release(0);
        r.announce();
        for t in readers {
            t.join().unwrap();
        }
        assert!(!br.is_locked());
    });
}

/// `try_write_acquire` against a reader: when it fails part way it must give
/// back the locks it took (the reader must still get in), and when it
/// succeeds it excludes the reader; bound 3.
#[test]
fn brlock_try_write_acquire_rolls_back() {
    model(3, || {
        let br = Arc::new(BrLock::<Ticket>::new(2));
        let data = Arc::new(Data::new());
        let reader = {
            let (br, data) = (Arc::clone(&br), Arc::clone(&data));
            spawn(move || {
                for _ in 0..2 {
                    br.read_acquire(1, no_hook);
                    let v = data.read();
                    assert!(v == 0 || v == 3);
                    br.read_release(1);
                }
            })
        };
        if br.try_write_acquire(0) {
            data.write(3);
            br.write_release(0);
        }
        reader.join().unwrap();
        assert!(!br.is_locked());
        assert!(br.try_write_acquire(0), "the lock must be free again");
        br.write_release(0);
    });
}

// -------------------------------------------------------------------- Sx

/// A writer and a reader; bound 3.
#[test]
fn sx_writer_excludes_reader() {
    model(3, || {
        let sx = Arc::new(Sx::new());
        let data = Arc::new(Data::new());
        let reader = {
            let (sx, data) = (Arc::clone(&sx), Arc::clone(&data));
            spawn(move || {
                sx.slock(no_hook);
                let v = data.read();
                sx.sunlock();
                v
            })
        };
        sx.xlock(no_hook);
        data.write(5);
        sx.xunlock();
        let v = reader.join().unwrap();
        assert!(v == 0 || v == 5);
        assert!(!sx.is_locked());
        assert!(!sx.writer_waiting());
    });
}

/// Two writers, each incrementing twice; bound 3.
#[test]
fn sx_writers_exclude_each_other() {
    model(3, || {
        let sx = Arc::new(Sx::new());
        let data = Arc::new(Data::new());
        let inc = |sx: &Sx, data: &Data| {
            for _ in 0..2 {
                sx.xlock(no_hook);
                data.write(data.read() + 1);
                sx.xunlock();
            }
        };
        let other = {
            let (sx, data) = (Arc::clone(&sx), Arc::clone(&data));
            spawn(move || inc(&sx, &data))
        };
        inc(&sx, &data);
        other.join().unwrap();
        assert_eq!(data.read(), 4);
        assert!(!sx.is_locked());
        assert!(!sx.writer_waiting(), "W must be clear once no writer waits");
    });
}

/// Two readers are inside at the same time (each waits inside for the other;
/// without sharing the model could not finish); bound 3.
#[test]
fn sx_readers_share() {
    model(3, || {
        let sx = Arc::new(Sx::new());
        let inside = Arc::new([AtomicBool::new(false), AtomicBool::new(false)]);
        let read = |sx: &Sx, inside: &[AtomicBool; 2], me: usize| {
            sx.slock(no_hook);
            inside[me].store(true, SeqCst);
            wait_for(&inside[1 - me]);
            sx.sunlock();
        };
        let other = {
            let (sx, inside) = (Arc::clone(&sx), Arc::clone(&inside));
            spawn(move || read(&sx, &inside, 1))
        };
        read(&sx, &inside, 0);
        other.join().unwrap();
        assert!(!sx.is_locked());
    });
}

/// Two sharers both try to upgrade. An upgrade succeeds only for a sole
/// sharer and then excludes everyone; a failed upgrade keeps the shared hold;
/// bound 3.
#[test]
fn sx_try_upgrade_only_for_sole_sharer() {
    model(3, || {
        let sx = Arc::new(Sx::new());
        let data = Arc::new(Data::new());
        // Sharers inside, counted by the test (SeqCst, inside the holds).
        let sharers = Arc::new(AtomicUsize::new(0));
        let run = |sx: &Sx, data: &Data, sharers: &AtomicUsize, me: u64| -> bool {
            sx.slock(no_hook);
            sharers.fetch_add(1, SeqCst);
            let _ = data.read();
            sharers.fetch_sub(1, SeqCst);
            if sx.try_upgrade() {
                assert_eq!(sharers.load(SeqCst), 0, "upgraded while another sharer was inside");
                assert!(sx.is_xlocked());
                data.write(me);
                assert_eq!(data.read(), me);
                sx.xunlock();
                true
            } else {
                let _ = data.read();
                sx.sunlock();
                false
            }
        };
        let other = {
            let (sx, data, sharers) = (Arc::clone(&sx), Arc::clone(&data), Arc::clone(&sharers));
            spawn(move || run(&sx, &data, &sharers, 2))
        };
        let mine = run(&sx, &data, &sharers, 1);
        let theirs = other.join().unwrap();
        // If neither upgraded, both were sharers at each other's attempt.
        let v = data.read();
        match (mine, theirs) {
            (true, false) => assert_eq!(v, 1),
            (false, true) => assert_eq!(v, 2),
            (true, true) => assert!(v == 1 || v == 2),
            (false, false) => assert_eq!(v, 0),
        }
        assert!(!sx.is_locked());
    });
}

/// After `downgrade` a reader can enter while the downgrader still holds its
/// shared hold (the downgrader waits inside for the reader); bound 3.
#[test]
fn sx_downgrade_admits_readers() {
    model(3, || {
        let sx = Arc::new(Sx::new());
        let data = Arc::new(Data::new());
        let downgraded = Arc::new(AtomicBool::new(false));
        let reader_in = Arc::new(AtomicBool::new(false));
        let reader = {
            let (sx, data, downgraded, reader_in) =
                (Arc::clone(&sx), Arc::clone(&data), Arc::clone(&downgraded), Arc::clone(&reader_in));
            spawn(move || {
                wait_for(&downgraded);
                sx.slock(no_hook);
                assert_eq!(data.read(), 4);
                reader_in.store(true, SeqCst);
                sx.sunlock();
            })
        };
        sx.xlock(no_hook);
        data.write(4);
        sx.downgrade();
        downgraded.store(true, SeqCst);
        wait_for(&reader_in);
        assert_eq!(data.read(), 4);
        sx.sunlock();
        reader.join().unwrap();
        assert!(!sx.is_locked());
    });
}

/// `downgrade` is atomic: a competing writer gets in before the exclusive
/// hold or after the shared one, never between; bound 3.
#[test]
fn sx_downgrade_excludes_writers() {
    model(3, || {
        let sx = Arc::new(Sx::new());
        let data = Arc::new(Data::new());
        let writer = {
            let (sx, data) = (Arc::clone(&sx), Arc::clone(&data));
            spawn(move || {
                sx.xlock(no_hook);
                data.write(2);
                sx.xunlock();
            })
        };
        sx.xlock(no_hook);
        data.write(1);
        sx.downgrade();
        assert_eq!(data.read(), 1, "a writer got in during the downgrade");
        assert!(!sx.try_xlock());
        sx.sunlock();
        writer.join().unwrap();
        assert!(!sx.is_locked());
    });
}

/// Writers first: once a writer waits (its spin hook ran, so it has set the
/// waiting bit), a new reader cannot enter even though only readers hold the
/// lock; the writer gets the lock when the old reader leaves; bound 3.
#[test]
fn sx_waiting_writer_blocks_new_readers() {
    model(3, || {
        let sx = Arc::new(Sx::new());
        let data = Arc::new(Data::new());
        let announced = Arc::new(AtomicBool::new(false));
        sx.slock(no_hook);
        let writer = {
            let (sx, data, announced) = (Arc::clone(&sx), Arc::clone(&data), Arc::clone(&announced));
            spawn(move || {
                let contended = sx.xlock(|| announced.store(true, SeqCst));
                data.write(8);
                sx.xunlock();
                contended
            })
        };
        wait_for(&announced);
        assert!(sx.writer_waiting());
        assert!(!sx.try_slock(), "a new reader passed a waiting writer");
        let _ = data.read();
        sx.sunlock();
        assert!(writer.join().unwrap());
        assert_eq!(data.read(), 8);
        assert!(!sx.is_locked());
        assert!(!sx.writer_waiting());
    });
}

/// Writers first, for `slock`: a reader arriving while a writer waits must
/// wait too (its spin hook runs before the old reader leaves) and gets in
/// only after the writer. All waits sleep on the test's condvar; bound 3.
#[test]
fn sx_waiting_writer_makes_new_readers_wait() {
    const WRITER_WAITS: usize = 0;
    const READER_WAITS: usize = 1;
    model(3, || {
        let sx = Arc::new(Sx::new());
        let data = Arc::new(Data::new());
        let r = Arc::new(Releases::new());
        sx.slock(no_hook);
        let writer = {
            let (sx, data, r) = (Arc::clone(&sx), Arc::clone(&data), Arc::clone(&r));
            spawn(move || {
                sx.xlock(r.hook(Some(WRITER_WAITS), r.count()));
                data.write(8);
                sx.xunlock();
                r.announce();
            })
        };
        let reader = {
            let (sx, data, r) = (Arc::clone(&sx), Arc::clone(&data), Arc::clone(&r));
            spawn(move || {
                r.wait_flag(WRITER_WAITS);
                let contended = sx.slock(r.hook(Some(READER_WAITS), r.count()));
                assert!(contended);
                assert_eq!(data.read(), 8, "the new reader got in before the waiting writer");
                sx.sunlock();
                r.announce();
            })
        };
        // Without writers-first the reader would never wait and this would
        // never finish (loom reports a deadlock).
        r.wait_flag(READER_WAITS);
        sx.sunlock();
        r.announce();
        writer.join().unwrap();
        reader.join().unwrap();
        assert!(!sx.is_locked());
        assert!(!sx.writer_waiting());
    });
}

/// One writer and two readers, with the blocking hook; bound 3.
#[test]
fn sx_writer_and_two_readers() {
    model(3, || {
        let sx = Arc::new(Sx::new());
        let data = Arc::new(Data::new());
        let r = Arc::new(Releases::new());
        let readers: Vec<_> = (0..2)
            .map(|_| {
                let (sx, data, r) = (Arc::clone(&sx), Arc::clone(&data), Arc::clone(&r));
                spawn(move || {
                    let seen = r.count();
                    sx.slock(r.hook(None, seen));
                    let v = data.read();
                    sx.sunlock();
                    r.announce();
                    assert!(v == 0 || v == 6);
                })
            })
            .collect();
        let seen = r.count();
        sx.xlock(r.hook(None, seen));
        data.write(6);
        sx.xunlock();
        r.announce();
        for t in readers {
            t.join().unwrap();
        }
        assert!(!sx.is_locked());
        assert!(!sx.writer_waiting());
    });
}

/// Two writers and a reader, with the blocking hook: the single waiting bit
/// shared by two waiting writers must neither strand the reader nor let it
/// in with a writer; bound 3.
#[test]
fn sx_two_writers_and_a_reader() {
    model(3, || {
        let sx = Arc::new(Sx::new());
        let data = Arc::new(Data::new());
        let r = Arc::new(Releases::new());
        let writers: Vec<_> = (0..2)
            .map(|_| {
                let (sx, data, r) = (Arc::clone(&sx), Arc::clone(&data), Arc::clone(&r));
                spawn(move || {
                    let seen = r.count();
                    sx.xlock(r.hook(None, seen));
                    data.write(data.read() + 1);
                    sx.xunlock();
                    r.announce();
                })
            })
            .collect();
        let seen = r.count();
        sx.slock(r.hook(None, seen));
        let v = data.read();
        sx.sunlock();
        r.announce();
        assert!(v <= 2);
        for t in writers {
            t.join().unwrap();
        }
        assert_eq!(data.read(), 2);
        assert!(!sx.is_locked());
        assert!(!sx.writer_waiting());
    });
}
