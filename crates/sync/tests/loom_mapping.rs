//! Model-checked properties of lock-free mappings (`lockfree/mapping.rs`):
//! two cores mapping, unmapping and looking up frames of one address space.
//!
//! Run with
//! `LOOM_MAX_PREEMPTIONS=3 RUSTFLAGS="--cfg loom" cargo test -p granule-sync --release --test loom_mapping`.
//!
//! The tables are tiny (two root entries of two pages) so that every slot
//! and the table race are in play. The pool has four leaf tables: one per
//! root entry, and one per core for the table a core holds between popping
//! it and installing it (or giving it back) — with fewer, a map can find
//! the pool empty for a moment while a table is in transit (see "Tables"
//! in `mapping.rs`).
//! After the threads finish, each model checks the object with
//! `check_quiescent` (no request in flight, every mapped frame's claim in
//! its slot, no stale claim left) and that no leaf table leaked.
//! Each party runs on a spawned thread (see `loom_seq_cell.rs` for why).
#![cfg(loom)]

mod loom_common;

use granule_sync::lockfree::{Geometry, MapError, Mapped, Mappings};
use loom::sync::Arc;
use loom::thread;
use loom_common::{model, quiet};

/// One space of 2 × 2 pages (a root entry maps 8 KiB), four leaf tables, four frames, two cores.
fn tables() -> Arc<Mappings> {
    Arc::new(Mappings::new(Geometry { root_bits: 1, leaf_bits: 1 }, 2, 1, 4, 4))
}

fn tables_in_use(m: &Mappings) -> usize {
    4 - m.free_tables()
}

#[test]
fn mapping_two_frames_racing_for_one_page_one_wins() {
    model(|| {
        let m = tables();
        let m2 = m.clone();
        let b = thread::spawn(move || m2.map(1, 1, 0, 0x1000, false, &quiet));
        let m1 = m.clone();
        let a = thread::spawn(move || m1.map(0, 0, 0, 0x1000, false, &quiet));
        let b = b.join().unwrap();
        let a = a.join().unwrap();
        let winner = match (a, b) {
            (Ok(()), Err(MapError::Occupied)) => 0,
            (Err(MapError::Occupied), Ok(())) => 1,
            other => panic!("not exactly one winner: {other:?}"),
        };
        assert_eq!(m.translate(0, 0x1000), Some(winner));
        assert_eq!(m.mapped(1 - winner, &quiet), None);
        m.check_quiescent().unwrap();
        assert_eq!(tables_in_use(&m), 1, "the losing core's table went back to the pool");
    });
}

#[test]
fn mapping_one_frame_at_two_places_one_wins() {
    model(|| {
        let m = tables();
        let m2 = m.clone();
        let b = thread::spawn(move || m2.map(1, 0, 0, 0x2000, true, &quiet));
        let m1 = m.clone();
        let a = thread::spawn(move || m1.map(0, 0, 0, 0x0000, false, &quiet));
        let b = b.join().unwrap();
        let a = a.join().unwrap();
        let at = match (a, b) {
            (Ok(()), Err(MapError::FrameMapped)) => Mapped { space: 0, vaddr: 0, large: false },
            (Err(MapError::FrameMapped), Ok(())) => Mapped { space: 0, vaddr: 0x2000, large: true },
            other => panic!("not exactly one winner: {other:?}"),
        };
        assert_eq!(m.mapped(0, &quiet), Some(at));
        m.check_quiescent().unwrap();
    });
}

#[test]
fn mapping_a_large_page_races_a_small_one_in_its_region() {
    model(|| {
        let m = tables();
        let m2 = m.clone();
        let b = thread::spawn(move || m2.map(1, 1, 0, 0x1000, false, &quiet));
        let m1 = m.clone();
        let a = thread::spawn(move || m1.map(0, 0, 0, 0x0000, true, &quiet));
        let b = b.join().unwrap();
        let a = a.join().unwrap();
        match (a, b) {
            (Ok(()), Err(MapError::Occupied)) => {
                assert_eq!(m.translate(0, 0x1000), Some(0));
                assert_eq!(tables_in_use(&m), 0);
            }
            (Err(MapError::Occupied), Ok(())) => assert_eq!(m.translate(0, 0x1000), Some(1)),
            other => panic!("not exactly one winner: {other:?}"),
        }
        m.check_quiescent().unwrap();
    });
}

#[test]
fn mapping_an_unmap_frees_the_page_for_the_other_core() {
    model(|| {
        let m = tables();
        assert_eq!(m.map(0, 0, 0, 0x1000, false, &quiet), Ok(()));
        let m2 = m.clone();
        let b = thread::spawn(move || m2.map(1, 1, 0, 0x1000, false, &quiet));
        let m1 = m.clone();
        let a = thread::spawn(move || m1.unmap(0, &quiet));
        let b = b.join().unwrap();
        assert_eq!(a.join().unwrap(), Some(Mapped { space: 0, vaddr: 0x1000, large: false }));
        // Frame 1 may lose only to the mapping the unmap removes.
        match b {
            Ok(()) => assert_eq!(m.translate(0, 0x1000), Some(1)),
            Err(e) => {
                assert_eq!(e, MapError::Occupied);
                assert_eq!(m.translate(0, 0x1000), None);
            }
        }
        assert_eq!(m.mapped(0, &quiet), None);
        m.check_quiescent().unwrap();
    });
}

#[test]
fn mapping_an_overtaken_requester_still_learns_it_mapped() {
    model(|| {
        // Core 0 maps frame 0; core 1 unmaps frame 0 and maps it
        // elsewhere, and may move the frame's word on (a new request)
        // before core 0 reads its answer, which it then finds in its record.
        let m = tables();
        let m2 = m.clone();
        let b = thread::spawn(move || {
            let was = m2.unmap(0, &quiet);
            (was, m2.map(1, 0, 0, 0x3000, false, &quiet))
        });
        let m1 = m.clone();
        let a = thread::spawn(move || m1.map(0, 0, 0, 0x0000, false, &quiet));
        let (was, again) = b.join().unwrap();
        let a = a.join().unwrap();
        let low = Mapped { space: 0, vaddr: 0, large: false };
        let high = Mapped { space: 0, vaddr: 0x3000, large: false };
        if let Some(gone) = was {
            assert_eq!(gone, Mapped { space: 0, vaddr: 0, large: false });
            // The unmap removed core 0's mapping: both maps succeeded.
            assert_eq!((a, again), (Ok(()), Ok(())));
            assert_eq!(m.mapped(0, &quiet), Some(high));
        } else {
            let at = match (a, again) {
                (Ok(()), Err(MapError::FrameMapped)) => low,
                (Err(MapError::FrameMapped), Ok(())) => high,
                other => panic!("not exactly one winner: {other:?}"),
            };
            assert_eq!(m.mapped(0, &quiet), Some(at));
        }
        m.check_quiescent().unwrap();
    });
}
