//! Model-checked properties of the sequence-locked cell
//! (`lockfree/seq_cell.rs`), which holds every CNode slot's capability:
//! a reader never sees a torn value, and of writers racing from one value
//! exactly one wins.
//!
//! Run with
//! `LOOM_MAX_PREEMPTIONS=3 RUSTFLAGS="--cfg loom" cargo test -p granule-sync --release --test loom_seq_cell`.
//! Every value written has all three payload words equal to its kind, so a
//! torn read shows as a payload that disagrees with itself or its kind.
//! Each party runs on a spawned thread: loom (0.7) explored a single
//! interleaving of this file's first model when its reader ran on the
//! model's main thread against one spawned writer, and the model passed
//! even with the reader's second head load removed; as written, it fails.
#![cfg(loom)]

mod loom_common;

use granule_sync::lockfree::{SeqCell, SeqValue};
use loom::sync::Arc;
use loom::thread;
use loom_common::{model, quiet};

/// The value of kind `k`: every payload word `k`.
fn value(k: u8) -> SeqValue {
    (k, [u64::from(k); 3])
}

const EMPTY: SeqValue = (0, [0; 3]);

#[test]
fn a_reader_sees_the_old_value_or_the_new_never_a_mix() {
    model(|| {
        let cell = Arc::new(SeqCell::new(value(1)));
        let (w, r) = (cell.clone(), cell.clone());
        let writer = thread::spawn(move || {
            assert!(w.replace(|v| v.0 == 1, value(2), &quiet));
        });
        let reader = thread::spawn(move || r.read());
        if let Some(v) = reader.join().unwrap() {
            assert!(v == value(1) || v == value(2), "torn read {v:?}");
        }
        writer.join().unwrap();
        assert_eq!(cell.read(), Some(value(2)));
    });
}

#[test]
fn of_two_writers_claiming_an_empty_cell_one_wins() {
    model(|| {
        let cell = Arc::new(SeqCell::new(EMPTY));
        let (a, b) = (cell.clone(), cell.clone());
        let first = thread::spawn(move || a.replace(|v| v == EMPTY, value(1), &quiet));
        let second = thread::spawn(move || b.replace(|v| v == EMPTY, value(2), &quiet));
        let (one, two) = (first.join().unwrap(), second.join().unwrap());
        assert!(one != two, "both or neither claimed the cell");
        let want = if one { value(1) } else { value(2) };
        assert_eq!(cell.read(), Some(want));
    });
}

#[test]
fn a_clear_racing_a_replacement_leaves_one_of_the_orders() {
    model(|| {
        let cell = Arc::new(SeqCell::new(value(1)));
        let (a, b) = (cell.clone(), cell.clone());
        // One core replaces the value; another clears the value it knows.
        let replacer = thread::spawn(move || a.replace(|v| v.0 == 1, value(2), &quiet));
        let clearer = thread::spawn(move || b.replace(|v| v == value(1), EMPTY, &quiet));
        let (replaced, cleared) = (replacer.join().unwrap(), clearer.join().unwrap());
        let now = cell.read();
        match (replaced, cleared) {
            (true, false) => assert_eq!(now, Some(value(2))),
            (false, true) => assert_eq!(now, Some(EMPTY)),
            other => panic!("replaced and cleared: {other:?}, now {now:?}"),
        }
    });
}
