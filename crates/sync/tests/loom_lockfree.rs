//! Model-checked properties of the Synthesis lock-free objects.
//!
//! Run with
//! `LOOM_MAX_PREEMPTIONS=3 RUSTFLAGS="--cfg loom" cargo test -p granule-sync --release --test loom_lockfree`
//! (without the variable every model is bounded to 3 preemptions anyway).
//!
//! Under loom the 128-bit tagged heads are modelled by a loom mutex (see
//! `granule_sync::primitive`), which is exactly the atomicity of
//! `cmpxchg16b`. Values, links, counts and positions are loom atomics, so a
//! value read without the happens-before its writer published can return a
//! stale word, and the conservation checks below would catch it.
#![cfg(loom)]

use granule_sync::lockfree::{Callbacks, Counter, List, Mpmc, Queue, RcList, Stack};
use loom::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use loom::sync::Arc;
use loom::thread;

/// `loom::model` with at most 3 preemptions unless `LOOM_MAX_PREEMPTIONS`
/// says otherwise, so the models stay small however they are run.
fn model<F: Fn() + Sync + Send + 'static>(f: F) {
    let mut builder = loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(3);
    }
    builder.check(f);
}

fn sorted(mut v: Vec<u64>) -> Vec<u64> {
    v.sort_unstable();
    v
}

#[test]
fn counter_increments_are_not_lost() {
    model(|| {
        let c = Arc::new(Counter::new(0));
        let hs: Vec<_> = (0..2)
            .map(|_| {
                let c = c.clone();
                thread::spawn(move || c.increment())
            })
            .collect();
        let mine = c.increment();
        let mut seen: Vec<u64> = hs.into_iter().map(|h| h.join().unwrap()).collect();
        seen.push(mine);
        assert_eq!(sorted(seen), vec![1, 2, 3], "each increment returns a distinct count");
        assert_eq!(c.get(), 3);
    });
}

/// The ABA case of delete at the head: A reads head X and X's successor Y,
/// then B deletes X and Y, frees Y then X, and inserts X again (now with no
/// successor). Without the tag A's CAS would install the freed Y as head.
#[test]
fn list_delete_survives_aba() {
    model(|| {
        let list = Arc::new(List::new(3));
        let y = list.alloc(1).unwrap();
        list.insert(y);
        let x = list.alloc(2).unwrap();
        list.insert(x);

        let a = {
            let list = list.clone();
            thread::spawn(move || list.delete().map(|n| list.value(&n)))
        };
        let mut b_took = Vec::new();
        let first = list.delete();
        let second = list.delete();
        for n in [&first, &second].into_iter().flatten() {
            b_took.push(list.value(n));
        }
        // Free in the order that makes X the next node handed out.
        for n in [second, first].into_iter().flatten() {
            list.free(n);
        }
        let n = list.alloc(30).unwrap();
        list.insert(n);

        let a_took = a.join().unwrap();
        let mut all = b_took;
        all.extend(a_took);
        let mut left = 0;
        while let Some(n) = list.delete() {
            all.push(list.value(&n));
            left += 1;
            assert!(left <= 3, "cycle in the list");
        }
        assert_eq!(sorted(all), vec![1, 2, 30]);
    });
}

#[test]
fn stack_push_pop_conserve() {
    model(|| {
        let st = Arc::new(Stack::new(2));
        st.push(1).unwrap();
        let pusher = {
            let st = st.clone();
            thread::spawn(move || st.push(2).is_ok())
        };
        let popper = {
            let st = st.clone();
            thread::spawn(move || st.pop())
        };
        let mine = st.pop();
        assert!(pusher.join().unwrap(), "capacity 2 holds both values");
        let mut all: Vec<u64> = [mine, popper.join().unwrap()].into_iter().flatten().collect();
        while let Some(v) = st.pop() {
            all.push(v);
        }
        assert_eq!(sorted(all), vec![1, 2]);
    });
}

#[test]
fn mpmc_queue_conserves_and_orders() {
    model(|| {
        let q: Arc<Queue<Mpmc>> = Arc::new(Queue::new(2));
        let producers: Vec<_> = [1u64, 2]
            .into_iter()
            .map(|v| {
                let q = q.clone();
                thread::spawn(move || q.put(v).is_ok())
            })
            .collect();
        let got = q.get();
        for p in producers {
            assert!(p.join().unwrap());
        }
        let mut all: Vec<u64> = got.into_iter().collect();
        while let Some(v) = q.get() {
            all.push(v);
        }
        assert_eq!(sorted(all), vec![1, 2]);
    });
}

#[derive(Debug, Default)]
struct Counts {
    full: AtomicUsize,
    empty: AtomicUsize,
    full_minus_one: AtomicUsize,
    empty_plus_one: AtomicUsize,
}

impl Callbacks for Counts {
    fn full(&self) {
        self.full.fetch_add(1, SeqCst);
    }
    fn empty(&self) {
        self.empty.fetch_add(1, SeqCst);
    }
    fn full_minus_one(&self) {
        self.full_minus_one.fetch_add(1, SeqCst);
    }
    fn empty_plus_one(&self) {
        self.empty_plus_one.fetch_add(1, SeqCst);
    }
}

/// A producer that finds the queue full is always followed by a Q_full-1
/// from the get that frees its slot (no lost wake-up). The consumer has not
/// synchronised with the producer's later puts, so without the fences it
/// could read a stale producer position and stay silent.
#[test]
fn queue_full_is_always_answered() {
    model(|| {
        let q: Arc<Queue<Mpmc, Counts>> = Arc::new(Queue::with_callbacks(2, Counts::default()));
        let consumer = {
            let q = q.clone();
            thread::spawn(move || q.get())
        };
        let third_failed = [1, 2, 3].map(|v| q.put(v).is_err())[2];
        let got = consumer.join().unwrap();
        let c = q.callbacks();
        if third_failed && got.is_some() {
            assert_eq!(got, Some(1));
            assert_eq!(c.full.load(SeqCst), 1);
            assert_eq!(c.full_minus_one.load(SeqCst), 1, "the producer's Q_full was never answered");
        }
    });
}

/// A consumer that finds the queue empty is always followed by a Q_empty+1
/// from the put that publishes its element (the mirror image of the test
/// above: the producer has not synchronised with the consumer's later gets).
#[test]
fn queue_empty_is_always_answered() {
    model(|| {
        let q: Arc<Queue<Mpmc, Counts>> = Arc::new(Queue::with_callbacks(2, Counts::default()));
        q.put(1).unwrap();
        q.put(2).unwrap();
        let c = q.callbacks();
        assert_eq!(c.empty_plus_one.load(SeqCst), 1);
        let producer = {
            let q = q.clone();
            thread::spawn(move || q.put(3).is_ok())
        };
        let third = [(); 3].map(|()| q.get())[2];
        let put = producer.join().unwrap();
        if third.is_none() && put {
            assert_eq!(c.empty.load(SeqCst), 1);
            assert_eq!(c.empty_plus_one.load(SeqCst), 2, "the consumer's Q_empty was never answered");
        }
    });
}

/// Marked deletion and reclamation against a concurrent insert: the
/// deleted node is unlinked and returned to the pool exactly once.
#[test]
fn rclist_delete_and_insert() {
    model(|| {
        let list = Arc::new(RcList::new(3));
        list.insert(1).unwrap();
        let inserter = {
            let list = list.clone();
            thread::spawn(move || list.insert(2).unwrap())
        };
        {
            let one = list.iter().find(|n| n.value() == 1).expect("1 is live until deleted");
            assert!(list.delete(&one));
        }
        list.purge();
        inserter.join().unwrap();
        let live: Vec<u64> = list.iter().map(|n| n.value()).collect();
        assert_eq!(live, vec![2]);
        assert_eq!(list.purge(), 1);
        assert_eq!(list.free_nodes(), 2, "the deleted node went back to the pool once");
    });
}

/// A traversal racing with deletion, reclamation and reuse of a node never
/// sees a value twice, and always sees the node nobody deletes.
#[test]
fn rclist_traversal_races_reuse() {
    model(|| {
        let list = Arc::new(RcList::new(2));
        list.insert(1).unwrap();
        list.insert(2).unwrap();
        let traverser = {
            let list = list.clone();
            thread::spawn(move || list.iter().map(|n| n.value()).collect::<Vec<u64>>())
        };
        if let Some(first) = list.first() {
            list.delete(&first);
        }
        list.purge();
        // Reuses the reclaimed node unless the traverser still holds it.
        let _ = list.insert(3);
        let seen = traverser.join().unwrap();
        assert!(seen.contains(&1), "lost the undeleted node: {seen:?}");
        let mut dedup = seen.clone();
        dedup.sort_unstable();
        dedup.dedup();
        assert_eq!(dedup.len(), seen.len(), "value seen twice: {seen:?}");
        assert!(seen.iter().all(|v| [1, 2, 3].contains(v)));
        let live = list.purge();
        assert_eq!(live + list.free_nodes(), 2, "no node leaked");
    });
}

/// Two cores delete the same node and purge: exactly one delete wins, the
/// node is unlinked once and reclaimed once.
#[test]
fn rclist_racing_deleters() {
    model(|| {
        let list = Arc::new(RcList::new(2));
        list.insert(1).unwrap();
        list.insert(2).unwrap();
        let other = {
            let list = list.clone();
            thread::spawn(move || {
                let won = list.first().is_some_and(|n| n.value() == 2 && list.delete(&n));
                list.purge();
                won
            })
        };
        let mine = list.first().is_some_and(|n| n.value() == 2 && list.delete(&n));
        let wins = [mine, other.join().unwrap()].into_iter().filter(|&w| w).count();
        assert_eq!(wins, 1, "exactly one delete takes effect");
        assert_eq!(list.iter().map(|n| n.value()).collect::<Vec<_>>(), vec![1]);
        assert_eq!(list.free_nodes(), 1);
    });
}

/// A traversal standing on a non-head node races with the deletion,
/// reclamation and reuse of its successor: increment-then-validate on an
/// inner link must never accept a reclaimed or reused node (the head word
/// alone would not exercise it). Default preemption bound.
#[test]
fn rclist_inner_link_reuse() {
    model(|| {
        let list = Arc::new(RcList::new(3));
        list.insert(1).unwrap();
        list.insert(2).unwrap();
        list.insert(3).unwrap();
        let traverser = {
            let list = list.clone();
            thread::spawn(move || {
                let three = list.iter().find(|n| n.value() == 3).unwrap();
                let mut seen = Vec::new();
                let mut cur = three.next();
                while let Some(n) = cur {
                    seen.push(n.value());
                    cur = n.next();
                }
                seen
            })
        };
        {
            let two = list.iter().find(|n| n.value() == 2).unwrap();
            assert!(list.delete(&two));
        }
        list.purge();
        let _ = list.insert(4);
        let seen = traverser.join().unwrap();
        assert!(!seen.contains(&4), "traversal from 3 reached a newer node: {seen:?}");
        assert!(seen.contains(&1), "lost 1: {seen:?}");
        let live = list.purge();
        assert_eq!(live + list.free_nodes(), 3, "leak or double free");
    });
}
