//! Model-checked properties of the one-word LIFO free list
//! (`lockfree/index_stack.rs`): two cores popping and pushing indices at
//! once, the ABA case (an index popped and pushed back while another core's
//! pop is between reading the head and its CAS) included.
//!
//! Run with
//! `LOOM_MAX_PREEMPTIONS=3 RUSTFLAGS="--cfg loom" cargo test -p granule-sync --release --test loom_index_stack`.
//! After the threads finish, each model checks that every index is in
//! exactly one place: the stack, or the hands of the thread that popped it.
//! Each party runs on a spawned thread (see `loom_seq_cell.rs` for why).
#![cfg(loom)]

mod loom_common;

use granule_sync::lockfree::IndexStack;
use loom::sync::Arc;
use loom::thread;
use loom_common::model;

/// Everything left in `s`, popped, with the indices held elsewhere, sorted.
fn everything(s: &IndexStack, held: impl IntoIterator<Item = Option<usize>>) -> Vec<usize> {
    let mut all: Vec<usize> = std::iter::from_fn(|| s.pop()).collect();
    all.extend(held.into_iter().flatten());
    all.sort_unstable();
    all
}

#[test]
fn a_pop_racing_a_pop_and_push_back_never_loses_or_doubles_an_index() {
    model(|| {
        // Indices 0 and 1 on the stack, 0 on top.
        let s = Arc::new(IndexStack::full(2));
        let q = s.clone();
        // The other core pops both and pushes the first back: the head
        // names the same index again, whose link now says "empty" (without
        // the tag, a pop that read the old link, 1, would install it and
        // hand out the index this core holds).
        let b = thread::spawn(move || {
            let first = q.pop();
            let second = q.pop();
            if let Some(i) = first {
                assert!(q.push(i));
            }
            second
        });
        let r = s.clone();
        let a = thread::spawn(move || r.pop());
        let (mine, theirs) = (a.join().unwrap(), b.join().unwrap());
        assert_eq!(everything(&s, [mine, theirs]), vec![0, 1]);
    });
}

#[test]
fn two_cores_popping_get_different_indices_and_pushes_land_once() {
    model(|| {
        // Three indices, 0 and 1 on the stack, 2 held by core b.
        let s = Arc::new(IndexStack::full(3));
        let held = s.pop().and(s.pop()).and(s.pop());
        assert_eq!(held, Some(2));
        assert!(s.push(1) && s.push(0));
        let q = s.clone();
        let b = thread::spawn(move || {
            assert!(q.push(2));
            q.pop()
        });
        let r = s.clone();
        let a = thread::spawn(move || r.pop());
        let (mine, theirs) = (a.join().unwrap(), b.join().unwrap());
        assert!(mine.is_some() && theirs.is_some());
        assert_ne!(mine, theirs);
        assert_eq!(everything(&s, [mine, theirs]), vec![0, 1, 2]);
    });
}
