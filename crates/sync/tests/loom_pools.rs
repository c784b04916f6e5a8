//! Model-checked properties of the tagged free lists (`lockfree/pools.rs`):
//! two cores popping and pushing nodes of one list at once — the ABA case
//! (a node popped, and pushed back, while another core's pop is between
//! reading the head and its CAS) included.
//!
//! Run with
//! `LOOM_MAX_PREEMPTIONS=3 RUSTFLAGS="--cfg loom" cargo test -p granule-sync --release --test loom_pools`.
//! After the threads finish, each model checks that every node is in
//! exactly one place: a list, or the hands of the thread that popped it.
//! Each party runs on a spawned thread (see `loom_seq_cell.rs` for why).
#![cfg(loom)]

mod loom_common;

use granule_sync::lockfree::Pools;
use loom::sync::Arc;
use loom::thread;
use loom_common::{model, quiet};

/// Two lists over four nodes; list 0 holds nodes 0 and 1 (1 first).
fn pools() -> Arc<Pools> {
    let p = Arc::new(Pools::new(2, 4));
    assert!(p.push(0, 0, &quiet));
    assert!(p.push(0, 1, &quiet));
    p
}

fn sorted(mut v: Vec<u32>) -> Vec<u32> {
    v.sort_unstable();
    v
}

#[test]
fn a_pop_racing_a_pop_and_push_back_never_loses_or_doubles_a_node() {
    model(|| {
        let p = pools();
        let q = p.clone();
        // The other core pops both nodes and pushes the first back: the
        // head names the same node again, whose successor is gone (without
        // the tag, a pop that read the old successor would install it and
        // hand out a node the other core holds).
        let b = thread::spawn(move || {
            let first = q.pop(0, &quiet);
            let second = q.pop(0, &quiet);
            if let Some(n) = first {
                assert!(q.push(0, n, &quiet));
            }
            second
        });
        let r = p.clone();
        let a = thread::spawn(move || r.pop(0, &quiet));
        let (mine, theirs) = (a.join().unwrap(), b.join().unwrap());
        let mut all = p.quiescent_nodes(0);
        all.extend(mine);
        all.extend(theirs);
        assert_eq!(sorted(all), vec![0, 1]);
    });
}

#[test]
fn two_cores_popping_get_different_nodes_and_pushes_land_once() {
    model(|| {
        let p = pools();
        let q = p.clone();
        let b = thread::spawn(move || {
            assert!(q.push(0, 2, &quiet));
            q.pop(0, &quiet)
        });
        let r = p.clone();
        let a = thread::spawn(move || {
            let mine = r.pop(0, &quiet);
            assert!(r.push(1, 3, &quiet));
            mine
        });
        let (mine, theirs) = (a.join().unwrap(), b.join().unwrap());
        assert!(mine.is_some() && theirs.is_some());
        assert_ne!(mine, theirs);
        let mut all = p.quiescent_nodes(0);
        all.extend(mine);
        all.extend(theirs);
        assert_eq!(sorted(all), vec![0, 1, 2]);
        assert_eq!(p.quiescent_take(1), vec![3]);
        assert!(p.is_empty(1));
    });
}
