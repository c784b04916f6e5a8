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

mod loom_common;

use granule_sync::lockfree::{
    new_link, Callbacks, Counter, DualQueue, Inbox, List, Mpmc, Queue, RcList, Side, SignalStack, Stack, Waited,
};
use loom::cell::UnsafeCell;
use loom::sync::atomic::AtomicU64;
use loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Acquire, Ordering::Release, Ordering::SeqCst};
use loom::sync::Arc;
use loom::thread;
use loom_common::{model, quiet};

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

// ---- The kernel's intrusive objects: dual stack, signal stack, inbox ----

/// Nodes of the intrusive objects: a link word each, and a payload the
/// owner writes before publishing the node and whoever takes the node reads
/// afterwards. The payload is a loom `UnsafeCell`, so loom fails the model
/// if taking a node is not ordered after its publication.
struct Nodes {
    links: Vec<AtomicU64>,
    payload: Vec<UnsafeCell<u64>>,
}

// SAFETY: a payload cell is written only by the node's owner before it
// publishes the node and read only by the thread that took it (or after all
// threads were joined); whether publication orders the two is exactly what
// loom checks.
unsafe impl Sync for Nodes {}

impl Nodes {
    fn new(n: usize) -> Self {
        Self {
            links: (0..n).map(|_| AtomicU64::new(new_link())).collect(),
            payload: (0..n).map(|_| UnsafeCell::new(0)).collect(),
        }
    }
    fn link(&self, i: u32) -> &AtomicU64 {
        &self.links[i as usize]
    }
    /// The owner of node `i` sets its payload (before publishing it).
    fn set(&self, i: u32, v: u64) {
        // SAFETY: the caller owns node `i` (see the `Sync` impl).
        self.payload[i as usize].with_mut(|p| unsafe { *p = v });
    }
    /// The taker of node `i` reads its payload.
    fn get(&self, i: u32) -> u64 {
        // SAFETY: the caller took node `i` (see the `Sync` impl).
        self.payload[i as usize].with(|p| unsafe { *p })
    }
}

/// Two waiters of side A and one of side B arrive at once: every match
/// pairs opposite sides, every node ends up matched exactly once or still
/// waiting, the word never mixes sides, and a matched node's payload is
/// visible to whoever took it.
#[test]
fn dual_queue_matches_each_waiter_once() {
    model(|| {
        let nodes = Arc::new(Nodes::new(3));
        let q = Arc::new(DualQueue::new());
        let arrive = |n: u32, side: Side| {
            let (nodes, q) = (nodes.clone(), q.clone());
            move || {
                nodes.set(n, 100 + u64::from(n));
                let got = q.offer(|i| nodes.link(i), side, n);
                if let Some(p) = got {
                    assert_eq!(nodes.get(p), 100 + u64::from(p), "partner's payload not visible");
                }
                got
            }
        };
        let a0 = thread::spawn(arrive(0, Side::A));
        let a1 = thread::spawn(arrive(1, Side::A));
        let b = arrive(2, Side::B)();
        let results = [(0, a0.join().unwrap()), (1, a1.join().unwrap()), (2, b)];
        let side = |n: u32| if n == 2 { Side::B } else { Side::A };
        let mut count = [0u32; 3];
        for (me, got) in results {
            if let Some(p) = got {
                assert_ne!(side(me), side(p), "{me} matched {p} of its own side");
                count[me as usize] += 1;
                count[p as usize] += 1;
            }
        }
        let left: Vec<u32> = q.iter(|i| nodes.link(i), 9).collect();
        let waiting = q.snapshot().waiting;
        for &n in &left {
            count[n as usize] += 1;
            assert_eq!(waiting, Some(side(n)), "mixed sides: {left:?}");
        }
        assert_eq!(count, [1, 1, 1], "matched or waiting exactly once (left {left:?})");
    });
}

/// Taking the last side-A waiter races an enqueue behind it (the close
/// protocol): the taker gets the old waiter, the new one is not lost.
#[test]
fn dual_queue_take_last_races_enqueue() {
    model(|| {
        let nodes = Arc::new(Nodes::new(2));
        let q = Arc::new(DualQueue::new());
        assert_eq!(q.offer(|i| nodes.link(i), Side::A, 0), None);
        let enq = {
            let (nodes, q) = (nodes.clone(), q.clone());
            thread::spawn(move || {
                nodes.set(1, 11);
                q.offer(|i| nodes.link(i), Side::A, 1)
            })
        };
        let took = q.take(|i| nodes.link(i), Side::A);
        assert_eq!(took, Some(0), "the oldest waiter is taken first");
        assert_eq!(enq.join().unwrap(), None);
        let left: Vec<u32> = q.iter(|i| nodes.link(i), 9).collect();
        assert_eq!(left, vec![1], "the enqueued waiter was lost or doubled");
        assert_eq!(q.take(|i| nodes.link(i), Side::A), Some(1));
        assert_eq!(nodes.get(1), 11);
        assert_eq!(q.snapshot().waiting, None);
    });
}

/// Two takers race for one side-A waiter while a third node waits behind
/// it: each waiter is taken by at most one, in order.
#[test]
fn dual_queue_racing_takers() {
    model(|| {
        let nodes = Arc::new(Nodes::new(2));
        let q = Arc::new(DualQueue::new());
        assert_eq!(q.offer(|i| nodes.link(i), Side::A, 0), None);
        assert_eq!(q.offer(|i| nodes.link(i), Side::A, 1), None);
        let other = {
            let (nodes, q) = (nodes.clone(), q.clone());
            thread::spawn(move || q.take(|i| nodes.link(i), Side::A))
        };
        let mine = q.take(|i| nodes.link(i), Side::A);
        let theirs = other.join().unwrap();
        let mut got: Vec<u32> = [mine, theirs].into_iter().flatten().collect();
        got.sort_unstable();
        assert_eq!(got, vec![0, 1]);
        assert_eq!(q.snapshot().waiting, None);
    });
}

/// A node taken as the last waiter waits again at once while a stale
/// enqueuer still holds its old link: the link tag must stop the stale
/// CAS from linking behind the node's old incarnation.
#[test]
fn dual_queue_reused_tail_link() {
    model(|| {
        let nodes = Arc::new(Nodes::new(2));
        let q = Arc::new(DualQueue::new());
        assert_eq!(q.offer(|i| nodes.link(i), Side::A, 0), None);
        let enq = {
            let (nodes, q) = (nodes.clone(), q.clone());
            thread::spawn(move || q.offer(|i| nodes.link(i), Side::A, 1))
        };
        let took = q.take(|i| nodes.link(i), Side::A);
        if took == Some(0) {
            assert_eq!(q.offer(|i| nodes.link(i), Side::A, 0), None);
        }
        assert_eq!(enq.join().unwrap(), None);
        let mut left: Vec<u32> = q.iter(|i| nodes.link(i), 9).collect();
        let in_order = left.clone();
        left.sort_unstable();
        assert_eq!(left, vec![0, 1], "lost or doubled: {in_order:?}");
        let mut drained = Vec::new();
        while let Some(n) = q.take(|i| nodes.link(i), Side::A) {
            drained.push(n);
            assert!(drained.len() <= 2, "cycle: {drained:?}");
        }
        assert_eq!(drained, in_order);
    });
}

/// An enqueuer that read queue 1's tail (node 0) and its link races a taker
/// that takes node 0 and makes it wait in queue 2: the enqueuer's node must
/// end up in queue 1, never behind node 0 in queue 2 (the word re-check and
/// the link tag both guard this).
#[test]
fn dual_queue_stale_enqueuer_cannot_follow_a_moved_tail() {
    model(|| {
        let nodes = Arc::new(Nodes::new(2));
        let q1 = Arc::new(DualQueue::new());
        let q2 = Arc::new(DualQueue::new());
        assert_eq!(q1.offer(|i| nodes.link(i), Side::A, 0), None);
        let enq = {
            let (nodes, q1) = (nodes.clone(), q1.clone());
            thread::spawn(move || q1.offer(|i| nodes.link(i), Side::A, 1))
        };
        assert_eq!(q1.take(|i| nodes.link(i), Side::A), Some(0));
        assert_eq!(q2.offer(|i| nodes.link(i), Side::A, 0), None);
        assert_eq!(enq.join().unwrap(), None);
        let in1: Vec<u32> = q1.iter(|i| nodes.link(i), 9).collect();
        let in2: Vec<u32> = q2.iter(|i| nodes.link(i), 9).collect();
        assert_eq!((in1, in2), (vec![1], vec![0]));
    });
}

/// One producer enqueues three side-A waiters while a taker takes one: the
/// waiters come out in the order they went in.
#[test]
fn dual_queue_is_fifo_for_side_a() {
    model(|| {
        let nodes = Arc::new(Nodes::new(3));
        let q = Arc::new(DualQueue::new());
        let producer = {
            let (nodes, q) = (nodes.clone(), q.clone());
            thread::spawn(move || {
                for n in 0..3 {
                    assert_eq!(q.offer(|i| nodes.link(i), Side::A, n), None);
                }
            })
        };
        // On a spawned thread too: against the model's own thread, loom
        // explored one interleaving of this model (`docs/lockfree.md`).
        let consumer = {
            let (nodes, q) = (nodes.clone(), q.clone());
            thread::spawn(move || q.take(|i| nodes.link(i), Side::A))
        };
        producer.join().unwrap();
        let first = consumer.join().unwrap();
        let mut order: Vec<u32> = first.into_iter().collect();
        while let Some(n) = q.take(|i| nodes.link(i), Side::A) {
            order.push(n);
            assert!(order.len() <= 3, "cycle: {order:?}");
        }
        assert_eq!(order, vec![0, 1, 2]);
    });
}

/// Side B is FIFO too: a receiver's arrival races a sender taking the
/// only waiting receiver (the close protocol across sides). The sender gets
/// the oldest receiver, the newer one is not lost and is taken next.
#[test]
fn dual_queue_side_b_is_fifo_under_a_partner() {
    model(|| {
        let nodes = Arc::new(Nodes::new(3));
        let q = Arc::new(DualQueue::new());
        nodes.set(0, 10);
        assert_eq!(q.offer(|i| nodes.link(i), Side::B, 0), None);
        let enq = {
            let (nodes, q) = (nodes.clone(), q.clone());
            thread::spawn(move || {
                nodes.set(1, 11);
                q.offer(|i| nodes.link(i), Side::B, 1)
            })
        };
        let partner = q.offer(|i| nodes.link(i), Side::A, 2);
        assert_eq!(partner, Some(0), "the oldest receiver is taken first");
        assert_eq!(nodes.get(0), 10);
        assert_eq!(enq.join().unwrap(), None);
        let left: Vec<u32> = q.iter(|i| nodes.link(i), 9).collect();
        assert_eq!(left, vec![1], "the newer receiver was lost or doubled");
        assert_eq!(q.snapshot().waiting, Some(Side::B));
        assert_eq!(q.offer(|i| nodes.link(i), Side::A, 2), Some(1));
        assert_eq!(nodes.get(1), 11);
        assert_eq!(q.snapshot().waiting, None);
    });
}

/// Taking survives ABA at the head: a taker reads head X and its successor
/// Y; meanwhile another takes X and Y and X waits again alone. Every node
/// is taken or waiting exactly once.
#[test]
fn dual_queue_side_b_take_survives_aba() {
    model(|| {
        let nodes = Arc::new(Nodes::new(2));
        let q = Arc::new(DualQueue::new());
        let link = |i: u32| nodes.link(i);
        assert_eq!(q.offer(link, Side::B, 0), None);
        assert_eq!(q.offer(link, Side::B, 1), None);
        let taker = {
            let (nodes, q) = (nodes.clone(), q.clone());
            thread::spawn(move || q.take(|i| nodes.link(i), Side::B))
        };
        let x = q.take(link, Side::B);
        let y = q.take(link, Side::B);
        if let (Some(x), Some(y)) = (x, y) {
            assert_eq!((x, y), (0, 1), "taken out of order");
        }
        let mut mine: Vec<u32> = [x, y].into_iter().flatten().collect();
        if mine.contains(&0) {
            assert_eq!(q.offer(link, Side::B, 0), None);
            mine.retain(|&n| n != 0);
        }
        let theirs = taker.join().unwrap();
        let mut all: Vec<u32> = mine.into_iter().chain(theirs).collect();
        all.extend(q.iter(link, 9));
        all.sort_unstable();
        assert_eq!(all, vec![0, 1], "a node was lost or duplicated");
    });
}

/// A waiter and a signaller race: exactly one of "the waiter consumed the
/// badge" and "the signaller popped the waiter" happens (no lost wake-up),
/// and the badge is never lost.
#[test]
fn signal_stack_loses_no_wake_up() {
    model(|| {
        let nodes = Arc::new(Nodes::new(1));
        let word = Arc::new(SignalStack::new());
        let waiter = {
            let (nodes, word) = (nodes.clone(), word.clone());
            thread::spawn(move || {
                nodes.set(0, 7);
                word.wait(|i| nodes.link(i), 0)
            })
        };
        let popped = word.signal(|i| nodes.link(i), 0b100);
        if let Some(w) = popped {
            assert_eq!(w, 0);
            assert_eq!(nodes.get(0), 7, "waiter's payload not visible to the signaller");
        }
        let waited = waiter.join().unwrap();
        let st = word.state();
        match (waited, popped) {
            (Waited::Took(bits), None) => {
                assert_eq!(bits, 0b100);
                assert!(!st.active && st.waiter.is_none());
            }
            (Waited::Pushed, Some(0)) => assert!(!st.active && st.waiter.is_none() && st.bits == 0),
            other => panic!("lost or doubled wake-up: {other:?}, {st:?}"),
        }
    });
}

/// Notification waiters are woken in arrival order: node 0 waits, node 1
/// arrives while two signals come. The first signal wakes node 0 (racing
/// node 1's enqueue behind it: the close protocol); the second wakes node 1
/// if it waits by then, and otherwise node 1 consumes its badge.
#[test]
fn signal_waiters_are_woken_fifo() {
    model(|| {
        let nodes = Arc::new(Nodes::new(2));
        let word = Arc::new(SignalStack::new());
        nodes.set(0, 10);
        assert_eq!(word.wait(|i| nodes.link(i), 0), Waited::Pushed);
        let waiter = {
            let (nodes, word) = (nodes.clone(), word.clone());
            thread::spawn(move || {
                nodes.set(1, 11);
                word.wait(|i| nodes.link(i), 1)
            })
        };
        assert_eq!(word.signal(|i| nodes.link(i), 0b01), Some(0), "the oldest waiter first");
        assert_eq!(nodes.get(0), 10);
        let second = word.signal(|i| nodes.link(i), 0b10);
        let waited = waiter.join().unwrap();
        let st = word.state();
        match (waited, second) {
            (Waited::Pushed, Some(1)) => assert_eq!(nodes.get(1), 11),
            (Waited::Took(0b10), None) => {}
            other => panic!("lost or doubled wake-up: {other:?}, {st:?}"),
        }
        assert!(!st.active && st.waiter.is_none() && st.bits == 0, "{st:?}");
    });
}

/// Two signallers race for two queued waiters: each waiter is woken
/// exactly once and the word ends empty.
#[test]
fn signal_racing_wakers_take_each_waiter_once() {
    model(|| {
        let nodes = Arc::new(Nodes::new(2));
        let word = Arc::new(SignalStack::new());
        assert_eq!(word.wait(|i| nodes.link(i), 0), Waited::Pushed);
        assert_eq!(word.wait(|i| nodes.link(i), 1), Waited::Pushed);
        let other = {
            let (nodes, word) = (nodes.clone(), word.clone());
            thread::spawn(move || word.signal(|i| nodes.link(i), 1))
        };
        let mine = word.signal(|i| nodes.link(i), 2);
        let theirs = other.join().unwrap();
        let mut got: Vec<u32> = [mine, theirs].into_iter().flatten().collect();
        got.sort_unstable();
        assert_eq!(got, vec![0, 1]);
        assert_eq!(word.state(), granule_sync::lockfree::SignalState { waiter: None, active: false, bits: 0 });
    });
}

/// Two signals and a poll: the bits of both signals are consumed exactly
/// once between the poll and a final poll.
#[test]
fn signal_stack_accumulates_concurrent_badges() {
    model(|| {
        let nodes = Arc::new(Nodes::new(1));
        let word = Arc::new(SignalStack::new());
        let s = {
            let (nodes, word) = (nodes.clone(), word.clone());
            thread::spawn(move || assert_eq!(word.signal(|i| nodes.link(i), 0b01), None))
        };
        assert_eq!(word.signal(|i| nodes.link(i), 0b10), None);
        let first = word.poll(|i| nodes.link(i)).unwrap_or(0);
        s.join().unwrap();
        let second = word.poll(|i| nodes.link(i)).unwrap_or(0);
        assert_eq!(first | second, 0b11);
        assert_eq!(first & second, 0, "a badge was consumed twice");
    });
}

/// Two producers push while the consumer takes: every node arrives exactly
/// once, each producer's nodes in push order, payloads visible.
#[test]
fn inbox_delivers_each_node_once_in_order() {
    model(|| {
        let nodes = Arc::new(Nodes::new(3));
        let inbox = Arc::new(Inbox::new());
        let p0 = {
            let (nodes, inbox) = (nodes.clone(), inbox.clone());
            thread::spawn(move || {
                for n in [0, 1] {
                    nodes.set(n, 10 + u64::from(n));
                    inbox.push(|i| nodes.link(i), n);
                }
            })
        };
        let p1 = {
            let (nodes, inbox) = (nodes.clone(), inbox.clone());
            thread::spawn(move || {
                nodes.set(2, 12);
                inbox.push(|i| nodes.link(i), 2);
            })
        };
        let mut got: Vec<u32> = inbox.take_all(|i| nodes.link(i)).collect();
        for &n in &got {
            assert_eq!(nodes.get(n), 10 + u64::from(n));
        }
        p0.join().unwrap();
        p1.join().unwrap();
        got.extend(inbox.take_all(|i| nodes.link(i)));
        assert!(inbox.is_empty());
        let pos = |n: u32| got.iter().position(|&x| x == n);
        assert!(pos(0) < pos(1), "producer 0's nodes out of order: {got:?}");
        let mut sorted = got.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, vec![0, 1, 2], "{got:?}");
    });
}

/// The kernel's wake-up handshake (`lockfree` regime, `sched.rs`): a waker
/// pushes a thread of priority 5 on a core's inbox and interrupts the core
/// if 5 is above the priority the core publishes; the core, switching from
/// priority 9 to idle (0), publishes 0 and then looks at its inbox. With a
/// `SeqCst` fence between the two accesses on each side, either the waker
/// interrupts or the core finds the thread: the wake-up is never left in
/// the inbox of an idle, uninterrupted core. (Without the fences loom finds
/// the interleaving that loses it.)
#[test]
fn inbox_wake_up_survives_a_lowered_priority() {
    use loom::sync::atomic::{fence, AtomicU32, Ordering::Relaxed};
    model(|| {
        let nodes = Arc::new(Nodes::new(1));
        let inbox = Arc::new(Inbox::new());
        let published = Arc::new(AtomicU32::new(9));
        let waker = {
            let (nodes, inbox, published) = (nodes.clone(), inbox.clone(), published.clone());
            thread::spawn(move || {
                inbox.push(|i| nodes.link(i), 0);
                fence(SeqCst);
                5 > published.load(Relaxed)
            })
        };
        published.store(0, Relaxed);
        fence(SeqCst);
        let found = !inbox.is_empty();
        let interrupted = waker.join().unwrap();
        assert!(interrupted || found, "the woken thread waits in the inbox of an idle core");
    });
}

/// Two producers and the reader: every stored message is read exactly
/// once, each producer's in its order, and what was dropped was counted.
#[test]
fn log_ring_conserves_messages() {
    use granule_sync::lockfree::{Appended, LogRing};
    model(|| {
        let r = Arc::new(LogRing::<1>::new(2));
        let hs: Vec<_> = (0..2u8)
            .map(|p| {
                let r = r.clone();
                thread::spawn(move || {
                    let mut stored = 0;
                    for i in 0..2u8 {
                        if r.append(&[p, i]) != Appended::Dropped {
                            stored += 1;
                        }
                    }
                    stored
                })
            })
            .collect();
        let mut got = Vec::new();
        let mut m = Vec::new();
        if r.take(&mut m) {
            got.push(m.clone());
        }
        let stored: u64 = hs.into_iter().map(|h| h.join().unwrap()).sum();
        while r.take(&mut m) {
            got.push(m.clone());
        }
        assert_eq!(got.len() as u64, stored, "every stored message read once: {got:?}");
        assert_eq!(stored + r.dropped(), 4, "every append stored or counted as dropped");
        for p in 0..2u8 {
            let mine: Vec<u8> = got.iter().filter(|m| m[0] == p).map(|m| m[1]).collect();
            assert!(mine.windows(2).all(|w| w[0] < w[1]), "producer {p} in order: {got:?}");
        }
    });
}

/// The sleeping reader's handshake: the reader found the ring empty and
/// arms it while a producer appends; either the reader sees the message
/// (and does not sleep) or the producer is told to wake it.
#[test]
fn log_ring_reader_is_never_left_asleep() {
    use granule_sync::lockfree::{Appended, LogRing};
    model(|| {
        let r = Arc::new(LogRing::<1>::new(2));
        let p = {
            let r = r.clone();
            thread::spawn(move || r.append(b"x"))
        };
        let sleeps = r.arm();
        let woken = p.join().unwrap() == Appended::Stored { wake: true };
        assert!(!sleeps || woken, "the reader sleeps and nobody wakes it");
    });
}

/// A read after a completed append sees it, even while an earlier append
/// is still between claiming its slot and publishing it.
#[test]
fn log_ring_read_after_append_is_not_empty() {
    use granule_sync::lockfree::LogRing;
    model(|| {
        let r = Arc::new(LogRing::<1>::new(4));
        let early = {
            let r = r.clone();
            thread::spawn(move || {
                r.append(b"a");
            })
        };
        r.append(b"b");
        let mut m = Vec::new();
        assert!(r.take(&mut m), "b completed before the read began");
        early.join().unwrap();
    });
}

mod rcu {
    use super::*;
    use granule_sync::lockfree::rcu_tree::{NodeKind, Retire, Retired, Tree};

    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum K {
        Dir,
        Leaf,
    }

    impl NodeKind for K {
        const INTERIOR: Self = K::Dir;
        fn interior(self) -> bool {
            self == K::Dir
        }
    }

    /// Keeps what is retired until the model ends (the grace period: every
    /// thread has joined).
    #[derive(Default)]
    pub struct Keep(pub loom::sync::Mutex<Vec<Retired<K>>>);

    impl Retire<K> for Keep {
        fn retire(&self, r: Retired<K>) {
            self.0.lock().unwrap().push(r);
        }
    }

    impl Keep {
        pub fn free(&self) {
            for r in self.0.lock().unwrap().drain(..) {
                // SAFETY: every thread of the model has joined: nothing
                // reads the tree any more.
                unsafe { r.free() };
            }
        }
    }

    pub fn tree() -> Arc<(Tree<K>, Keep)> {
        Arc::new((Tree::new(8, 4), Keep::default()))
    }
}

/// A set racing the removal of its leaf, and a reader: the set either
/// happened before the removal or found the leaf gone; the reader sees the
/// old value, the new one, or nothing — never anything else.
#[test]
fn rcu_tree_set_races_remove() {
    model(|| {
        let t = rcu::tree();
        let (tree, keep) = &*t;
        tree.add(tree.root(), "a", Some(1), rcu::K::Leaf, true, b"old", keep).unwrap();
        let setter = {
            let t = t.clone();
            thread::spawn(move || {
                let (tree, keep) = &*t;
                match tree.find_oid(&[1], &granule_sync::lockfree::rcu_tree::Plain) {
                    Some(n) => tree.set(n, b"new", keep),
                    None => Err(granule_sync::lockfree::rcu_tree::TreeError::NotFound),
                }
            })
        };
        let remover = {
            let t = t.clone();
            thread::spawn(move || {
                let (tree, keep) = &*t;
                match tree.find_oid(&[1], &granule_sync::lockfree::rcu_tree::Plain) {
                    Some(n) => tree.remove(n, keep),
                    None => Err(granule_sync::lockfree::rcu_tree::TreeError::NotFound),
                }
            })
        };
        if let Some(n) = tree.find_oid(&[1], &granule_sync::lockfree::rcu_tree::Plain) {
            if let Ok(leaf) = tree.read(n, &granule_sync::lockfree::rcu_tree::Plain) {
                assert!(leaf.value == b"old" || leaf.value == b"new", "{:?}", leaf.value);
            }
        }
        let set = setter.join().unwrap();
        let removed = remover.join().unwrap();
        assert_eq!(removed, Ok(()), "the leaf exists until it is removed");
        assert!(set == Ok(()) || set == Err(granule_sync::lockfree::rcu_tree::TreeError::NotFound), "{set:?}");
        assert!(tree.find_oid(&[1], &granule_sync::lockfree::rcu_tree::Plain).is_none());
        assert_eq!(tree.len(), 0);
        keep.free();
    });
}

/// Adding under a directory while it is removed: never both (a child
/// would hang off a removed node), and whichever won is what the tree
/// shows.
#[test]
fn rcu_tree_add_races_remove_of_its_parent() {
    use granule_sync::lockfree::rcu_tree::{Plain, TreeError};
    model(|| {
        let t = rcu::tree();
        let (tree, keep) = &*t;
        tree.add(tree.root(), "d", Some(1), rcu::K::Dir, false, b"", keep).unwrap();
        let adder = {
            let t = t.clone();
            thread::spawn(move || {
                let (tree, keep) = &*t;
                let d = tree.find_oid(&[1], &Plain).ok_or(TreeError::NotFound)?;
                tree.add(d, "x", Some(2), rcu::K::Leaf, true, b"v", keep)
            })
        };
        let removed = match tree.find_oid(&[1], &Plain) {
            Some(d) => tree.remove(d, keep),
            None => Err(TreeError::NotFound),
        };
        let added = adder.join().unwrap();
        match (added, removed) {
            (Ok(2), Err(TreeError::Busy)) => assert!(tree.find_path(["d", "x"], &Plain).is_ok()),
            (Err(TreeError::NotFound), Ok(())) => assert!(tree.find_oid(&[1], &Plain).is_none()),
            other => panic!("add and remove both took effect, or neither: {other:?}"),
        }
        keep.free();
    });
}

/// Two adds of one name: exactly one wins.
#[test]
fn rcu_tree_one_of_two_adds_wins() {
    use granule_sync::lockfree::rcu_tree::{Plain, TreeError};
    model(|| {
        let t = rcu::tree();
        let h = {
            let t = t.clone();
            thread::spawn(move || {
                let (tree, keep) = &*t;
                tree.add(tree.root(), "n", None, rcu::K::Leaf, true, b"1", keep)
            })
        };
        let (tree, keep) = &*t;
        let mine = tree.add(tree.root(), "n", None, rcu::K::Leaf, true, b"2", keep);
        let theirs = h.join().unwrap();
        assert!(
            matches!((mine, theirs), (Ok(_), Err(TreeError::Exists)) | (Err(TreeError::Exists), Ok(_))),
            "{mine:?} {theirs:?}"
        );
        assert_eq!(tree.len(), 1);
        let (n, _) = tree.find_path(["n"], &Plain).unwrap();
        let v = tree.read(n, &Plain).unwrap().value.to_vec();
        assert_eq!(v, if mine.is_ok() { b"2".to_vec() } else { b"1".to_vec() });
        keep.free();
    });
}

/// Two siblings removed at once: each is retired exactly once (a pruner
/// must not retire a sibling that died after it looked), and the tree is
/// empty and well-formed after.
#[test]
fn rcu_tree_sibling_removals_retire_each_node_once() {
    use granule_sync::lockfree::rcu_tree::{Plain, Retired};
    model(|| {
        let t = rcu::tree();
        {
            let (tree, keep) = &*t;
            tree.add(tree.root(), "a", Some(1), rcu::K::Leaf, true, b"1", keep).unwrap();
            tree.add(tree.root(), "b", Some(2), rcu::K::Leaf, true, b"2", keep).unwrap();
        }
        let h = {
            let t = t.clone();
            thread::spawn(move || {
                let (tree, keep) = &*t;
                let a = tree.find_oid(&[1], &Plain).unwrap();
                tree.remove(a, keep)
            })
        };
        let (tree, keep) = &*t;
        let b = tree.find_oid(&[2], &Plain).unwrap();
        assert_eq!(tree.remove(b, keep), Ok(()));
        assert_eq!(h.join().unwrap(), Ok(()));
        assert_eq!(tree.len(), 0);
        assert!(tree.find_oid(&[1], &Plain).is_none() && tree.find_oid(&[2], &Plain).is_none());
        tree.check(|_, _| true).unwrap();
        let nodes: Vec<usize> = keep
            .0
            .lock()
            .unwrap()
            .iter()
            .filter_map(|r| match r {
                Retired::Node(p) => Some(p.as_ptr() as usize),
                Retired::Body(_) => None,
            })
            .collect();
        let mut unique = nodes.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), nodes.len(), "a node retired twice");
        assert_eq!(nodes.len(), 2, "both removed nodes retired");
        keep.free();
    });
}

/// The thread a stop word guards, as its owner and a claimer touch it: a
/// plain cell, so loom reports a claimer that reads it without the
/// happens-before the owner's release of the stop gives.
struct Guarded {
    word: granule_sync::lockfree::StopWord,
    thread: UnsafeCell<&'static str>,
    /// Stops in force (a stop adds one, its undo takes it back) and claims.
    stops: AtomicUsize,
    claims: AtomicUsize,
    /// Whether the thread has an owner that may come by: a stopped thread
    /// has none until a claimer hands it over (in the kernel, by making it
    /// runnable on its core), which this flag's release and acquire stand
    /// for.
    owned: AtomicBool,
}

impl Guarded {
    fn new() -> Self {
        Self {
            word: granule_sync::lockfree::StopWord::new(),
            thread: UnsafeCell::new("running"),
            stops: AtomicUsize::new(0),
            claims: AtomicUsize::new(0),
            owned: AtomicBool::new(true),
        }
    }

    /// A running thread, or (`stopped`) one stopped and owned by nobody.
    fn with(stopped: bool) -> Self {
        let g = Self::new();
        if stopped {
            g.word.set_inactive(true);
            // SAFETY: no other thread exists yet.
            g.thread.with_mut(|t| unsafe { *t = "stopped" });
            g.stops.store(1, SeqCst);
            g.owned.store(false, SeqCst);
        }
        g
    }

    /// The owner comes by if the thread has one (see `owned`).
    fn owner_if_owned(&self) {
        if self.owned.load(Acquire) {
            self.owner();
        }
    }

    /// The owner, if it meets a request: `true` if the thread goes on.
    fn owner(&self) -> bool {
        if !self.word.pending() {
            return true;
        }
        self.word.meet(
            &mut (),
            |_| {
                // SAFETY: the owner owns the thread until it publishes the stop.
                self.thread.with_mut(|t| unsafe { *t = "stopped" });
                self.stops.fetch_add(1, SeqCst);
            },
            |_| {
                // SAFETY: as above (the stop was not published).
                self.thread.with_mut(|t| unsafe { *t = "running" });
                self.stops.fetch_sub(1, SeqCst);
            },
            quiet,
        )
    }

    fn resume(&self) -> granule_sync::lockfree::Resumed {
        self.claim_if(self.word.resume(|_| {}))
    }

    /// The thread faults and nobody can answer: a pending request is met
    /// first (resumed, the thread would fault again); otherwise, or if the
    /// request was cancelled, the owner stops it on its own account
    /// (`StopWord::stop`). `true` if it was the owner's own stop.
    fn fault(&self) -> bool {
        if !self.owner() {
            return false;
        }
        // SAFETY: the owner owns the running thread until the stop.
        self.thread.with_mut(|t| unsafe { *t = "stopped" });
        self.stops.fetch_add(1, SeqCst);
        self.word.stop(quiet);
        true
    }

    /// A destroyer withdraws its kill (`requested`: the kill's own request).
    fn unkill(&self, requested: bool) -> granule_sync::lockfree::Resumed {
        self.claim_if(self.word.unkill(requested, |_| {}))
    }

    /// A suspender withdraws its own request.
    fn withdraw(&self) -> granule_sync::lockfree::Resumed {
        self.claim_if(self.word.withdraw(|_| {}))
    }

    /// After a resume or a withdrawal: a claimer owns the thread.
    fn claim_if(&self, r: granule_sync::lockfree::Resumed) -> granule_sync::lockfree::Resumed {
        if r == granule_sync::lockfree::Resumed::Claimed {
            // The claimer owns the thread: it must see the stop complete.
            // SAFETY: the claim makes the claimer the owner; loom checks the
            // happens-before from the stop's publication.
            let seen = self.thread.with(|t| unsafe { *t });
            assert_eq!(seen, "stopped");
            // SAFETY: as above.
            self.thread.with_mut(|t| unsafe { *t = "running" });
            self.claims.fetch_add(1, SeqCst);
            self.owned.store(true, Release);
        }
        r
    }
}

#[test]
fn stop_word_resume_races_the_owner() {
    use granule_sync::lockfree::Resumed;
    model(|| {
        let g = Arc::new(Guarded::new());
        g.word.suspend(|_| {});
        let h = {
            let g = g.clone();
            thread::spawn(move || g.owner())
        };
        let r = g.resume();
        let goes_on = h.join().unwrap();
        // Either the owner stopped it and the resume claimed it, or the
        // resume cancelled the request and the owner let it go on.
        match r {
            Resumed::Claimed => assert!(!goes_on && g.claims.load(SeqCst) == 1),
            Resumed::Cancelled => assert!(goes_on && g.stops.load(SeqCst) == 0),
            Resumed::NotSuspended => panic!("the request vanished"),
        }
        assert!(g.word.requested().is_none() && !g.word.is_inactive());
        g.word.check().unwrap();
    });
}

/// A suspender and a resumer of `g`'s thread, each on a thread of its own.
fn suspend_and_resume(g: &Arc<Guarded>) -> (thread::JoinHandle<()>, thread::JoinHandle<()>) {
    let s = g.clone();
    let r = g.clone();
    (
        thread::spawn(move || {
            s.word.suspend(|_| {});
        }),
        thread::spawn(move || {
            r.resume();
        }),
    )
}

/// A suspend and a resume race the owner, from a running or a stopped
/// thread.
fn suspend_resume_and_owner(stopped: bool) {
    model(move || {
        let g = Arc::new(Guarded::with(stopped));
        let (suspender, resumer) = suspend_and_resume(&g);
        let owner = {
            let g = g.clone();
            thread::spawn(move || g.owner_if_owned())
        };
        owner.join().unwrap();
        suspender.join().unwrap();
        resumer.join().unwrap();
        // The owner comes by again: no request is left unmet.
        g.owner();
        g.word.check().unwrap();
        assert!(g.word.requested().is_none());
        // Stopped iff more stops than claims; never claimed unstopped.
        let (stops, claims) = (g.stops.load(SeqCst), g.claims.load(SeqCst));
        assert!(claims <= stops && stops - claims <= 1);
        assert_eq!(g.word.is_inactive(), stops - claims == 1);
        // SAFETY: every other thread has been joined.
        let state = g.thread.with(|t| unsafe { *t });
        assert_eq!(state, if stops - claims == 1 { "stopped" } else { "running" });
    });
}

/// The owner stops the thread on its own account while a suspend and a
/// resume race it: the thread ends stopped, claimed at most once, and a
/// claimer sees the stop complete.
#[test]
fn stop_word_an_owners_own_stop_races_suspend_and_resume() {
    model(|| {
        let g = Arc::new(Guarded::new());
        let (suspender, resumer) = suspend_and_resume(&g);
        // SAFETY: the owner owns the thread until it publishes the stop.
        g.thread.with_mut(|t| unsafe { *t = "stopped" });
        g.stops.fetch_add(1, SeqCst);
        g.word.stop(|_| {});
        suspender.join().unwrap();
        resumer.join().unwrap();
        g.word.check().unwrap();
        let claims = g.claims.load(SeqCst);
        assert!(claims <= 1);
        // Claimed: running again and owned by the claimer; otherwise
        // stopped, with no request left standing.
        assert_eq!(g.word.is_inactive(), claims == 0);
        if claims == 0 {
            assert!(g.word.requested().is_none());
        }
    });
}

#[test]
fn stop_word_suspend_resume_and_owner_agree() {
    suspend_resume_and_owner(false);
}

#[test]
fn stop_word_suspend_resume_and_owner_agree_on_a_stopped_thread() {
    suspend_resume_and_owner(true);
}

/// A destroy's kill races a resume that was checked before it (a third
/// core's) and a suspend, while the owner comes by, from a running or a
/// stopped thread: unless the kill gave up (a request stood), the thread
/// ends stopped and killed — the resume never revives it — and a claim
/// that came first saw the stop complete.
fn kill_races_resume_and_suspend(stopped: bool) {
    use granule_sync::lockfree::Killed;
    model(move || {
        let g = Arc::new(Guarded::with(stopped));
        let (suspender, resumer) = suspend_and_resume(&g);
        let killer = {
            let g = g.clone();
            thread::spawn(move || g.word.kill(|_| {}))
        };
        let owner = {
            let g = g.clone();
            thread::spawn(move || g.owner_if_owned())
        };
        owner.join().unwrap();
        let killed = killer.join().unwrap();
        suspender.join().unwrap();
        resumer.join().unwrap();
        g.owner();
        g.word.check().unwrap();
        let (stops, claims) = (g.stops.load(SeqCst), g.claims.load(SeqCst));
        assert!(claims <= stops && stops - claims <= 1);
        if killed == Killed::Already {
            assert!(!g.word.is_killed());
            return;
        }
        assert!(g.word.is_killed() && g.word.is_inactive() && g.word.requested().is_none());
        assert_eq!(stops - claims, 1, "a killed thread was claimed");
        // SAFETY: every other thread has been joined.
        assert_eq!(g.thread.with(|t| unsafe { *t }), "stopped");
    });
}

#[test]
fn stop_word_a_resume_never_revives_a_killed_thread() {
    kill_races_resume_and_suspend(false);
}

#[test]
fn stop_word_a_resume_never_revives_a_killed_stopped_thread() {
    kill_races_resume_and_suspend(true);
}

/// A destroyer withdraws its kill of a running thread while the owner
/// meets it and a resume races: the request goes as if a resume had come
/// (cancelled, or the stopped thread claimed once, the claimer seeing the
/// stop), and no kill and no request are left.
#[test]
fn stop_word_a_withdrawn_kill_is_met_or_taken_back_once() {
    use granule_sync::lockfree::Killed;
    model(|| {
        let g = Arc::new(Guarded::new());
        assert!(matches!(g.word.kill(|_| {}), Killed::Requested { .. }));
        let owner = {
            let g = g.clone();
            thread::spawn(move || g.owner())
        };
        let withdrawer = {
            let g = g.clone();
            thread::spawn(move || g.unkill(true))
        };
        let resumer = {
            let g = g.clone();
            thread::spawn(move || g.resume())
        };
        owner.join().unwrap();
        withdrawer.join().unwrap();
        resumer.join().unwrap();
        g.owner();
        g.word.check().unwrap();
        assert!(!g.word.is_killed() && g.word.requested().is_none() && !g.word.is_inactive());
        let (stops, claims) = (g.stops.load(SeqCst), g.claims.load(SeqCst));
        assert_eq!(stops, claims, "the thread runs again, claimed once per stop");
        assert!(claims <= 1);
        // SAFETY: every other thread has been joined.
        assert_eq!(g.thread.with(|t| unsafe { *t }), "running");
    });
}

/// A bound receiver waits (`WAITING`): its signal and a taker that removed
/// its node race to claim it, while a suspend and the owner's meeting of
/// it use the same word. Exactly one claim wins; if the signal won, the
/// taker finds the node a ghost (and collects it), otherwise the signal
/// finds nothing; either way neither bit is left, and the suspension
/// protocol's outcome is untouched.
#[test]
fn stop_word_a_signal_and_a_taker_claim_a_bound_receiver_once() {
    use granule_sync::lockfree::{Claim, StopWord};
    model(|| {
        let w = Arc::new(StopWord::new());
        w.set_waiting(|_| {});
        let signal = {
            let w = w.clone();
            thread::spawn(move || w.claim_for_signal(|_| {}))
        };
        let taker = {
            let w = w.clone();
            thread::spawn(move || w.claim_taken(|_| {}))
        };
        let suspender = {
            let w = w.clone();
            thread::spawn(move || {
                w.suspend(|_| {});
                w.meet(&mut (), |_| {}, |_| {}, |_| {})
            })
        };
        let signalled = signal.join().unwrap();
        let taken = taker.join().unwrap();
        let goes_on = suspender.join().unwrap();
        assert_eq!(taken == Claim::Ghost, signalled, "one claim, and the taker knows whose");
        assert!(!w.is_waiting() && !w.is_ghost());
        assert!(!goes_on && w.is_inactive(), "the suspend was met");
        w.check().unwrap();
    });
}

/// The owner stops a faulting thread on its own account while a suspender
/// makes a request and, as in a mutual suspend, withdraws it: a thread the
/// fault stopped is never revived by the withdrawal (its stop is nobody's
/// request to take back), whatever the order.
#[test]
fn stop_word_a_withdrawal_never_revives_a_thread_stopped_for_a_fault() {
    use granule_sync::lockfree::Suspended;
    model(|| {
        let g = Arc::new(Guarded::new());
        let suspender = {
            let g = g.clone();
            thread::spawn(move || {
                if g.word.suspend(|_| {}) != Suspended::Already {
                    g.withdraw();
                }
            })
        };
        let faulted = g.fault();
        suspender.join().unwrap();
        g.word.check().unwrap();
        if faulted {
            assert_eq!(g.claims.load(SeqCst), 0, "a withdrawal revived a thread stopped for its fault");
            assert!(g.word.is_inactive() && g.word.requested().is_none());
            // SAFETY: every other thread has been joined.
            assert_eq!(g.thread.with(|t| unsafe { *t }), "stopped");
        }
    });
}

/// A suspender withdraws its own request while a second suspend (another
/// core's) and the owner race it: the second suspend completed, so the
/// thread ends stopped whatever the order — the withdrawal never takes a
/// merged suspend back — and a claim saw the stop.
#[test]
fn stop_word_a_withdrawal_leaves_a_merged_suspend_standing() {
    use granule_sync::lockfree::Suspended;
    model(|| {
        let g = Arc::new(Guarded::new());
        assert!(matches!(g.word.suspend(|_| {}), Suspended::Requested { .. }));
        let second = {
            let g = g.clone();
            thread::spawn(move || {
                g.word.suspend(|_| {});
            })
        };
        let owner = {
            let g = g.clone();
            thread::spawn(move || g.owner())
        };
        let withdrawer = {
            let g = g.clone();
            thread::spawn(move || g.withdraw())
        };
        second.join().unwrap();
        owner.join().unwrap();
        withdrawer.join().unwrap();
        // The owner comes by again if the thread runs (a withdrawal that
        // claimed it hands it over).
        g.owner_if_owned();
        g.word.check().unwrap();
        let (stops, claims) = (g.stops.load(SeqCst), g.claims.load(SeqCst));
        assert_eq!(stops - claims, 1, "the second suspend was lost");
        assert!(g.word.is_inactive() && g.word.requested().is_none());
        // SAFETY: every other thread has been joined.
        assert_eq!(g.thread.with(|t| unsafe { *t }), "stopped");
    });
}
