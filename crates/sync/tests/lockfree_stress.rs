//! Behaviour of the Synthesis lock-free objects: multi-threaded conservation
//! (nothing lost, nothing duplicated) with 2–4 threads and bounded counts,
//! and single-threaded checks of the queue callbacks and of the interference
//! hook (exactly one injected write gives exactly one retry).
#![cfg(not(loom))]

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::thread;
use std::time::{Duration, Instant};

use granule_sync::lockfree::{
    Callbacks, Counter, Full, Kind, List, Mpmc, Mpsc, NoInterference, OnFirstAttempt, Queue, RcList, SeqCounter,
    SeqList, SeqQueue, SeqRcList, SeqStack, Spmc, Spsc, Stack,
};

const PER_THREAD: u64 = 20_000;

fn tagged(thread: usize, i: u64) -> u64 {
    ((thread as u64) << 32) | i
}

/// Assert `got` holds every `tagged(t, i)` for `t < threads`, `i < n` once.
fn assert_exactly_once(mut got: Vec<u64>, threads: usize, n: u64) {
    got.sort_unstable();
    let want: Vec<u64> = (0..threads).flat_map(|t| (0..n).map(move |i| tagged(t, i))).collect();
    assert_eq!(got.len(), want.len(), "wrong number of values");
    assert!(got == want, "values lost or duplicated");
}

// ---------------------------------------------------------------- counter

#[test]
fn counter_counts_every_increment() {
    let c = Counter::new(0);
    thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for _ in 0..PER_THREAD {
                    c.increment();
                }
            });
        }
    });
    assert_eq!(c.get(), 4 * PER_THREAD);
}

#[test]
fn counter_one_interference_one_retry() {
    let c = Counter::new(10);
    let r = c.increment_with(&mut OnFirstAttempt(|| c.interfere()));
    assert_eq!(r.retries, 1);
    assert_eq!(r.value, 12, "the interfering increment counts too");
    let r = c.increment_with(&mut NoInterference);
    assert_eq!((r.value, r.retries), (13, 0));
    let mut s = SeqCounter::new(0);
    assert_eq!(s.increment(), 1);
}

#[test]
fn hook_sees_attempt_numbers() {
    let c = Counter::new(0);
    let mut seen = Vec::new();
    let r = c.add_with(5, &mut |attempt: u32| {
        seen.push(attempt);
        if attempt < 2 {
            c.interfere();
        }
    });
    assert_eq!(seen, vec![0, 1, 2]);
    assert_eq!((r.value, r.retries), (7, 2));
}

// ---------------------------------------------------------------- stack

#[test]
fn stack_conserves_values() {
    // A small stack, so nodes are reused constantly (the ABA pressure).
    let st = Stack::new(16);
    let popped = Mutex::new(Vec::new());
    thread::scope(|s| {
        for t in 0..4 {
            let (st, popped) = (&st, &popped);
            s.spawn(move || {
                let mut mine = Vec::new();
                for i in 0..PER_THREAD {
                    let mut v = tagged(t, i);
                    while let Err(Full(back)) = st.push(v) {
                        v = back;
                        if let Some(x) = st.pop() {
                            mine.push(x);
                        }
                    }
                    if i % 2 == 1 {
                        if let Some(x) = st.pop() {
                            mine.push(x);
                        }
                    }
                }
                popped.lock().unwrap().extend(mine);
            });
        }
    });
    let mut got = popped.into_inner().unwrap();
    while let Some(x) = st.pop() {
        got.push(x);
    }
    assert!(st.is_empty());
    assert_exactly_once(got, 4, PER_THREAD);
    // Every node is back in the pool.
    for i in 0..16 {
        st.push(i).unwrap();
    }
    assert_eq!(st.push(99), Err(Full(99)));
}

#[test]
fn stack_is_lifo_and_bounded() {
    let st = Stack::new(3);
    assert_eq!(st.pop(), None);
    for v in [1, 2, 3] {
        st.push(v).unwrap();
    }
    assert_eq!(st.push(4), Err(Full(4)));
    assert_eq!([st.pop(), st.pop(), st.pop(), st.pop()], [Some(3), Some(2), Some(1), None]);

    let mut seq = SeqStack::new(2);
    seq.push(1).unwrap();
    seq.push(2).unwrap();
    assert_eq!(seq.push(3), Err(Full(3)));
    assert_eq!([seq.pop(), seq.pop(), seq.pop()], [Some(2), Some(1), None]);
}

#[test]
fn stack_one_interference_one_retry() {
    let st = Stack::new(4);
    let r = st.push_with(7, &mut OnFirstAttempt(|| st.interfere()));
    assert_eq!((r.value, r.retries), (Ok(()), 1));
    let r = st.push_with(8, &mut NoInterference);
    assert_eq!((r.value, r.retries), (Ok(()), 0));
    let r = st.pop_with(&mut OnFirstAttempt(|| st.interfere()));
    assert_eq!((r.value, r.retries), (Some(8), 1));
    let r = st.pop_with(&mut NoInterference);
    assert_eq!((r.value, r.retries), (Some(7), 0));
}

// ---------------------------------------------------------------- list (Figure 2)

#[test]
fn list_conserves_nodes() {
    let list = List::new(8);
    let seen = Mutex::new(Vec::new());
    thread::scope(|s| {
        for t in 0..4 {
            let (list, seen) = (&list, &seen);
            s.spawn(move || {
                let mut mine = Vec::new();
                for i in 0..PER_THREAD {
                    let node = loop {
                        match list.alloc(tagged(t, i)) {
                            Some(n) => break n,
                            // Pool empty: the other threads hold or listed every node.
                            None => match list.delete() {
                                Some(n) => {
                                    mine.push(list.value(&n));
                                    list.free(n);
                                }
                                None => thread::yield_now(),
                            },
                        }
                    };
                    list.insert(node);
                    if let Some(n) = list.delete() {
                        mine.push(list.value(&n));
                        list.free(n);
                    }
                }
                seen.lock().unwrap().extend(mine);
            });
        }
    });
    let mut got = seen.into_inner().unwrap();
    while let Some(n) = list.delete() {
        got.push(list.value(&n));
        list.free(n);
    }
    assert_exactly_once(got, 4, PER_THREAD);
    let all: Vec<_> = (0..8).map(|v| list.alloc(v).expect("pool intact")).collect();
    assert!(list.alloc(9).is_none());
    let idx: HashSet<u32> = all.iter().map(|n| n.index()).collect();
    assert_eq!(idx.len(), 8);
}

#[test]
fn list_one_interference_one_retry() {
    let list = List::new(2);
    let a = list.alloc(1).unwrap();
    let b = list.alloc(2).unwrap();
    assert!(list.alloc(3).is_none());
    assert_eq!(list.insert_with(a, &mut OnFirstAttempt(|| list.interfere())).retries, 1);
    assert_eq!(list.insert_with(b, &mut NoInterference).retries, 0);
    let r = list.delete_with(&mut OnFirstAttempt(|| list.interfere()));
    assert_eq!(r.retries, 1);
    let b = r.value.unwrap();
    assert_eq!(list.value(&b), 2);
    let a = list.delete().unwrap();
    assert_eq!(list.value(&a), 1);
    assert!(list.delete().is_none() && list.is_empty());
    list.free(a);
    list.free(b);

    let mut seq = SeqList::new(1);
    let n = seq.alloc(5).unwrap();
    assert!(seq.alloc(6).is_none());
    seq.insert(n);
    let n = seq.delete().unwrap();
    assert_eq!(seq.value(&n), 5);
    assert!(seq.delete().is_none());
}

// ---------------------------------------------------------------- queues

fn queue_conserves<K: Kind>(producers: usize, consumers: usize) {
    let q: Queue<K> = Queue::new(8);
    let total = producers as u64 * PER_THREAD;
    let taken = AtomicUsize::new(0);
    let per_consumer = Mutex::new(Vec::new());
    thread::scope(|s| {
        for p in 0..producers {
            let q = &q;
            s.spawn(move || {
                for i in 0..PER_THREAD {
                    let mut v = tagged(p, i);
                    while let Err(Full(back)) = q.put(v) {
                        v = back;
                        thread::yield_now();
                    }
                }
            });
        }
        for _ in 0..consumers {
            let (q, taken, per_consumer) = (&q, &taken, &per_consumer);
            s.spawn(move || {
                let mut mine = Vec::new();
                while taken.load(Ordering::Relaxed) < total as usize {
                    match q.get() {
                        Some(v) => {
                            mine.push(v);
                            taken.fetch_add(1, Ordering::Relaxed);
                        }
                        None => thread::yield_now(),
                    }
                }
                per_consumer.lock().unwrap().push(mine);
            });
        }
    });
    assert!(q.get().is_none() && q.is_empty());
    let per_consumer = per_consumer.into_inner().unwrap();
    // FIFO: each consumer sees each producer's values in put order.
    for mine in &per_consumer {
        for p in 0..producers as u64 {
            let from_p: Vec<u64> = mine.iter().copied().filter(|v| v >> 32 == p).collect();
            assert!(from_p.windows(2).all(|w| w[0] < w[1]), "{}: producer {p} reordered", K::NAME);
        }
    }
    assert_exactly_once(per_consumer.concat(), producers, PER_THREAD);
}

#[test]
fn spsc_queue_conserves() {
    queue_conserves::<Spsc>(1, 1);
}

#[test]
fn spmc_queue_conserves() {
    queue_conserves::<Spmc>(1, 2);
}

#[test]
fn mpsc_queue_conserves() {
    queue_conserves::<Mpsc>(2, 1);
}

#[test]
fn mpmc_queue_conserves() {
    queue_conserves::<Mpmc>(2, 2);
}

#[derive(Debug, Default)]
struct Counts {
    full: AtomicUsize,
    empty: AtomicUsize,
    full_minus_one: AtomicUsize,
    empty_plus_one: AtomicUsize,
}

impl Counts {
    fn get(&self) -> [usize; 4] {
        [&self.full, &self.empty, &self.full_minus_one, &self.empty_plus_one].map(|c| c.load(Ordering::Relaxed))
    }
}

impl Callbacks for Counts {
    fn full(&self) {
        self.full.fetch_add(1, Ordering::Relaxed);
    }
    fn empty(&self) {
        self.empty.fetch_add(1, Ordering::Relaxed);
    }
    fn full_minus_one(&self) {
        self.full_minus_one.fetch_add(1, Ordering::Relaxed);
    }
    fn empty_plus_one(&self) {
        self.empty_plus_one.fetch_add(1, Ordering::Relaxed);
    }
}

fn callbacks_fire_on_boundaries<K: Kind>() {
    // Order of counts: [full, empty, full-1, empty+1].
    let q: Queue<K, Counts> = Queue::with_callbacks(2, Counts::default());
    assert_eq!(q.capacity(), 2);
    assert_eq!(q.get(), None);
    assert_eq!(q.callbacks().get(), [0, 1, 0, 0], "{}: get on empty", K::NAME);
    q.put(1).unwrap();
    assert_eq!(q.callbacks().get(), [0, 1, 0, 1], "{}: put into empty", K::NAME);
    q.put(2).unwrap();
    assert_eq!(q.callbacks().get(), [0, 1, 0, 1], "{}: put into non-empty", K::NAME);
    assert_eq!(q.put(3), Err(Full(3)));
    assert_eq!(q.callbacks().get(), [1, 1, 0, 1], "{}: put on full", K::NAME);
    assert_eq!(q.get(), Some(1));
    assert_eq!(q.callbacks().get(), [1, 1, 1, 1], "{}: get from full", K::NAME);
    assert_eq!(q.get(), Some(2));
    assert_eq!(q.callbacks().get(), [1, 1, 1, 1], "{}: get from non-full", K::NAME);
    assert_eq!(q.get(), None);
    assert_eq!(q.callbacks().get(), [1, 2, 1, 1], "{}: get on empty again", K::NAME);
    // Second lap: the boundaries are found again at wrapped positions.
    q.put(4).unwrap();
    q.put(5).unwrap();
    assert_eq!(q.callbacks().get(), [1, 2, 1, 2], "{}: second lap", K::NAME);
    assert_eq!((q.get(), q.get()), (Some(4), Some(5)));
    assert_eq!(q.callbacks().get(), [1, 2, 2, 2], "{}: second lap drained", K::NAME);
}

#[test]
fn callbacks_every_kind() {
    callbacks_fire_on_boundaries::<Spsc>();
    callbacks_fire_on_boundaries::<Spmc>();
    callbacks_fire_on_boundaries::<Mpsc>();
    callbacks_fire_on_boundaries::<Mpmc>();
}

#[test]
fn callbacks_may_reenter_the_queue() {
    // A Q_empty+1 callback that itself puts: runs after the put took effect.
    struct Echo<'a>(&'a std::sync::OnceLock<&'a Queue<Mpmc, Echo<'a>>>);
    impl Callbacks for Echo<'_> {
        fn empty_plus_one(&self) {
            if let Some(q) = self.0.get() {
                let _ = q.put(100);
            }
        }
    }
    let cell = std::sync::OnceLock::new();
    let q = Queue::<Mpmc, _>::with_callbacks(4, Echo(&cell));
    let _ = cell.set(&q);
    q.put(1).unwrap();
    assert_eq!((q.get(), q.get(), q.get()), (Some(1), Some(100), None));
}

/// Wake-up tokens for a blocking queue: `full_minus_one` makes room
/// tokens, `empty_plus_one` item tokens.
#[derive(Debug, Default)]
struct Blocking {
    room: AtomicUsize,
    items: AtomicUsize,
}

impl Callbacks for Blocking {
    fn full_minus_one(&self) {
        self.room.fetch_add(1, Ordering::Release);
    }
    fn empty_plus_one(&self) {
        self.items.fetch_add(1, Ordering::Release);
    }
}

/// "Suspend" until a token arrives; a lost wake-up shows as a timeout.
fn wait_for_token(tokens: &AtomicUsize, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let n = tokens.load(Ordering::Acquire);
        if n > 0 && tokens.compare_exchange(n, n - 1, Ordering::AcqRel, Ordering::Relaxed).is_ok() {
            return;
        }
        assert!(Instant::now() < deadline, "lost wake-up: {what}");
        thread::yield_now();
    }
}

fn blocking_queue_never_loses_a_wakeup<K: Kind>() {
    // Synthesis's blocking queue: Q_full suspends the producer until
    // Q_full-1, Q_empty suspends the consumer until Q_empty+1. With one
    // producer and one consumer every failed put is followed by a Q_full-1
    // and every failed get by a Q_empty+1, so neither waits forever.
    let q: Queue<K, Blocking> = Queue::with_callbacks(2, Blocking::default());
    let n = 20_000;
    thread::scope(|s| {
        s.spawn(|| {
            for i in 0..n {
                while q.put(i).is_err() {
                    wait_for_token(&q.callbacks().room, "producer");
                }
            }
        });
        s.spawn(|| {
            for i in 0..n {
                let v = loop {
                    match q.get() {
                        Some(v) => break v,
                        None => wait_for_token(&q.callbacks().items, "consumer"),
                    }
                };
                assert_eq!(v, i, "{}: FIFO order", K::NAME);
            }
        });
    });
}

#[test]
fn blocking_queues_never_lose_a_wakeup() {
    blocking_queue_never_loses_a_wakeup::<Spsc>();
    blocking_queue_never_loses_a_wakeup::<Mpmc>();
}

#[test]
fn queue_one_interference_one_retry() {
    // The conflicting write on a position is another producer's claim, so
    // the hook puts (or gets) once on attempt 0.
    let q: Queue<Mpmc> = Queue::new(4);
    let r = q.put_with(1, &mut OnFirstAttempt(|| q.put(99).unwrap()));
    assert_eq!((r.value, r.retries), (Ok(()), 1));
    let r = q.put_with(2, &mut NoInterference);
    assert_eq!((r.value, r.retries), (Ok(()), 0));
    let mut stolen = None;
    let r = q.get_with(&mut OnFirstAttempt(|| stolen = q.get()));
    assert_eq!((r.value, r.retries), (Some(1), 1));
    assert_eq!(stolen, Some(99), "the interfering put went first");
    assert_eq!(q.get_with(&mut NoInterference).value, Some(2));

    // Single sides have no CAS: the hook is never called.
    let q: Queue<Spsc> = Queue::new(4);
    let mut called = false;
    let r = q.put_with(1, &mut |_: u32| called = true);
    assert_eq!((r.value, r.retries, called), (Ok(()), 0, false));

    let mut seq = SeqQueue::new(2);
    seq.put(1).unwrap();
    seq.put(2).unwrap();
    assert_eq!(seq.put(3), Err(Full(3)));
    assert_eq!([seq.get(), seq.get(), seq.get()], [Some(1), Some(2), None]);
}

// ---------------------------------------------------------------- RcList (Figure 3)

fn live_values(list: &RcList) -> Vec<u64> {
    list.iter().map(|n| n.value()).collect()
}

#[test]
fn rclist_traverse_delete_purge() {
    let list = RcList::new(4);
    for v in 1..=4 {
        list.insert(v).unwrap();
    }
    assert_eq!(list.insert(5), Err(Full(5)));
    assert_eq!(live_values(&list), vec![4, 3, 2, 1]);
    // Delete 3 and 4 while standing on 4: traversal skips them.
    let first = list.first().unwrap();
    assert!(list.delete(&first));
    assert!(!list.delete(&first), "already deleted");
    let three = first.next().unwrap();
    assert_eq!(three.value(), 3);
    assert!(list.delete(&three));
    assert_eq!(first.next().map(|n| n.value()), Some(2), "from a deleted node, skip deleted ones");
    drop((first, three));
    assert_eq!(list.purge(), 2);
    assert_eq!(list.free_nodes(), 2, "both unlinked nodes reclaimed");
    assert_eq!(live_values(&list), vec![2, 1]);
    // A reference keeps a deleted, unlinked node out of the pool.
    let two = list.first().unwrap();
    assert!(list.delete(&two));
    assert_eq!(list.purge(), 1);
    assert_eq!(list.free_nodes(), 2);
    assert_eq!(two.value(), 2);
    drop(two);
    assert_eq!(list.free_nodes(), 3);
    list.insert(7).unwrap();
    assert_eq!(live_values(&list), vec![7, 1]);
    // A node of another list is never deleted through this one.
    let other = RcList::new(1);
    other.insert(9).unwrap();
    let nine = other.first().unwrap();
    assert!(!list.delete(&nine) && !nine.is_deleted());

    let mut seq = SeqRcList::new(3);
    let a = seq.insert(1).unwrap();
    seq.insert(2).unwrap();
    seq.insert(3).unwrap();
    assert_eq!(seq.insert(4), Err(Full(4)));
    assert!(seq.delete(a) && !seq.delete(a));
    assert_eq!(seq.purge(), 2);
    assert_eq!(seq.live().into_iter().map(|(_, v)| v).collect::<Vec<_>>(), vec![3, 2]);
    seq.insert(5).unwrap();
}

#[test]
fn rclist_one_interference_one_retry() {
    let list = RcList::new(4);
    list.insert(1).unwrap();
    let r = list.insert_with(2, &mut OnFirstAttempt(|| list.interfere()));
    assert_eq!(r.retries, 1);
    assert!(r.value.is_ok());
    // Deleting 2 while its successor 1 is deleted and unlinked: the unlink
    // rewrites 2's link, so the mark's CAS fails once.
    let two = list.first().unwrap();
    let one = two.next().unwrap();
    let r = list.delete_with(
        &two,
        &mut OnFirstAttempt(|| {
            assert!(list.delete(&one));
            list.purge();
        }),
    );
    assert_eq!((r.value, r.retries), (true, 1));
    drop((two, one));
    assert_eq!(list.purge(), 0);
    assert_eq!(list.free_nodes(), 4);
}

#[test]
fn rclist_concurrent_insert_delete_traverse() {
    const CAP: usize = 64;
    const INSERTS: u64 = 3_000;
    let list = RcList::new(CAP);
    let deleted = Mutex::new(Vec::new());
    let inserters_done = AtomicUsize::new(0);
    thread::scope(|s| {
        // Two inserters; when the pool is empty they wait for deleters.
        for t in 0..2 {
            let (list, inserters_done) = (&list, &inserters_done);
            s.spawn(move || {
                for i in 0..INSERTS {
                    let mut v = tagged(t, i);
                    while let Err(Full(back)) = list.insert(v) {
                        v = back;
                        thread::yield_now();
                    }
                }
                inserters_done.fetch_add(1, Ordering::Release);
            });
        }
        // Two deleters: traverse, delete every other live node they see,
        // and check no traversal yields a value twice.
        for d in 0..2 {
            let (list, deleted, inserters_done) = (&list, &deleted, &inserters_done);
            s.spawn(move || {
                let mut mine = Vec::new();
                loop {
                    let done = inserters_done.load(Ordering::Acquire) == 2;
                    let mut seen = HashSet::new();
                    for (k, node) in list.iter().enumerate() {
                        assert!(seen.insert(node.value()), "value {} seen twice in one pass", node.value());
                        if (k + d) % 2 == 0 && list.delete(&node) {
                            mine.push(node.value());
                        }
                    }
                    if done {
                        break;
                    }
                }
                deleted.lock().unwrap().extend(mine);
            });
        }
    });
    let mut got = deleted.into_inner().unwrap();
    let live = live_values(&list);
    assert_eq!(list.purge(), live.len());
    assert_eq!(list.free_nodes() + live.len(), CAP, "no node leaked");
    got.extend(live);
    assert_exactly_once(got, 2, INSERTS);
}
