//! `granule quaject`: the Synthesis Table 1 ("Cost of Lock-Free Operations",
//! Massalin & Pu 1991) measured on this machine with
//! `granule_sync::lockfree`.
//!
//! Rows: a null procedure call (for scale), increment counter, linked-list
//! insert and delete at the head, circular-queue insert and delete (the
//! MPMC queue: both sides CAS, as in the seed's multi-producer queues), stack
//! push and pop. Columns, per operation, in cycle-counter ticks and in ns:
//!
//! * `nosync`: the sequential twin of the object (same layout, plain loads
//!   and stores);
//! * `opt0`: the lock-free operation with no interference;
//! * `opt1`: the lock-free operation whose first CAS fails because exactly
//!   one conflicting write was injected between its read and its CAS (the
//!   interference hook, attempt 0), and whose second attempt succeeds.
//!   Synthesis produced this case with its measurement hardware, which made
//!   the interfering write for free; ours runs on the measuring core, so its
//!   cost, timed separately in the same run (`interfere_cycles`), is
//!   subtracted. For the counter, list and stack the write is the object's
//!   `interfere()` (an atomic add; a tag bump on the 128-bit head); the
//!   queue's positions carry no tag, so its conflicting write is a whole
//!   competing put (get), and that operation's cost is subtracted.
//!   `retries_per_op` is counted, not inferred: it must read 1.000.
//! * `opt0_over_nosync` (the seed's last column) and `opt1_over_opt0`; a
//!   ratio is null when its denominator, after the empty loop is
//!   subtracted, is under half a cycle (noise, nothing to divide by). In
//!   the seed, 1 retry costs about twice 0 retries (the whole operation is
//!   done again). Here the injected write leaves the line in this core's
//!   cache, so `opt1` is the instruction cost of a retry, not the cache-line
//!   transfer that a real conflict between cores adds.
//!
//! Method: one pinned thread; each sample times `--iterations` operations
//! in a loop with the cycle counter and subtracts an empty loop of the same
//! length; the table reports the median of `--runs` samples (after one
//! warm-up run). The seed measured with caches off; these are warm-cache
//! numbers. The list rows move `Node` tokens in and out of a `Vec` in every
//! column (about a cycle); the stack's push and pop each include taking a
//! node from (returning it to) the stack's node pool, a second CAS that the
//! seed's array stack did not need (see `granule_sync::lockfree::stack`).

pub(crate) mod records;

use std::hint::black_box;

use anyhow::{anyhow, bail, Result};
use clap::Args as ClapArgs;
use granule_sync::cycles;
use granule_sync::lockfree::{
    Counter, List, MpmcQueue, NoInterference, Node, OnFirstAttempt, SeqCounter, SeqList, SeqQueue, SeqStack, Stack,
};

use self::records::QuajectRecord;
use crate::machine::Machine;
use crate::output::{emit, Record};
use crate::pin::run_pinned;
use crate::progress;
use crate::stats::summarize;

/// Options of `granule quaject`.
#[derive(Clone, Debug, ClapArgs)]
pub struct Args {
    #[command(flatten)]
    pub common: super::Common,
    /// Operations per timed batch (1..=2^24).
    #[arg(long, default_value_t = 10_000, value_parser = crate::bounds::int::<u64>(1, MAX_ITERATIONS))]
    pub iterations: u64,
    /// Timed batches per measurement (1..=1000); medians are reported.
    #[arg(long, default_value_t = 11, value_parser = crate::bounds::runs::<usize>())]
    pub runs: usize,
}

/// Largest `--iterations` (the objects are sized for two batches).
const MAX_ITERATIONS: u64 = 1 << 24;

/// One run of one row, per operation, in cycles.
#[derive(Clone, Copy, Debug, Default)]
struct Sample {
    nosync: f64,
    opt0: f64,
    /// Lock-free with one injected write, that write's cost not yet removed.
    opt1_raw: f64,
    /// Cost of the injected write (or competing operation) alone.
    interfere: f64,
    /// Retries counted in the `opt1` batch, per operation.
    retries: f64,
}

/// A row of the table: how to take one sample of it.
struct Row {
    operation: &'static str,
    variant: &'static str,
    /// False only for the null procedure call, which has no lock-free twin.
    lock_free: bool,
    sample: fn(u64, u64) -> Result<Sample>,
}

const ROWS: &[Row] = &[
    Row { operation: "null procedure call", variant: "fn call, not inlined", lock_free: false, sample: null_call },
    Row { operation: "increment counter", variant: "cas loop, u64", lock_free: true, sample: counter_increment },
    Row { operation: "linked-list insert", variant: "tagged u128 head", lock_free: true, sample: list_insert },
    Row { operation: "linked-list delete", variant: "tagged u128 head", lock_free: true, sample: list_delete },
    Row { operation: "circular-queue insert", variant: "mpmc (vyukov)", lock_free: true, sample: queue_insert },
    Row { operation: "circular-queue delete", variant: "mpmc (vyukov)", lock_free: true, sample: queue_delete },
    Row { operation: "stack push", variant: "treiber + pool, 2 cas", lock_free: true, sample: stack_push },
    Row { operation: "stack pop", variant: "treiber + pool, 2 cas", lock_free: true, sample: stack_pop },
];

/// Cycles for an empty loop of `n` iterations (the least of three).
fn empty_loop(n: u64) -> u64 {
    (0..3)
        .map(|_| {
            let t0 = cycles::now();
            for i in 0..n {
                black_box(i);
            }
            cycles::now_fenced().wrapping_sub(t0)
        })
        .min()
        .unwrap_or(0)
}

/// Cycles per call of `op(i)` for `i in 0..n`, minus the empty loop.
#[inline(always)]
fn time(n: u64, empty: u64, mut op: impl FnMut(u64)) -> f64 {
    let t0 = cycles::now();
    for i in 0..n {
        op(black_box(i));
    }
    let t = cycles::now_fenced().wrapping_sub(t0);
    t.saturating_sub(empty) as f64 / n as f64
}

/// Fail unless all `n` operations of a batch did what they had to.
fn check(what: &str, done: u64, n: u64) -> Result<()> {
    if done != n {
        bail!("{what}: only {done} of {n} operations succeeded (object sized wrongly?)");
    }
    Ok(())
}

#[inline(never)]
fn null_procedure(x: u64) -> u64 {
    black_box(x)
}

fn null_call(n: u64, empty: u64) -> Result<Sample> {
    let nosync = time(n, empty, |i| {
        black_box(null_procedure(i));
    });
    Ok(Sample { nosync, ..Sample::default() })
}

fn counter_increment(n: u64, empty: u64) -> Result<Sample> {
    let mut seq = SeqCounter::new(0);
    let nosync = time(n, empty, |_| {
        black_box(black_box(&mut seq).increment());
    });
    let c = Counter::new(0);
    let opt0 = time(n, empty, |_| {
        black_box(c.increment_with(&mut NoInterference).value);
    });
    let mut retries = 0u64;
    let opt1_raw = time(n, empty, |_| {
        let r = c.increment_with(&mut OnFirstAttempt(|| c.interfere()));
        retries += u64::from(r.retries);
        black_box(r.value);
    });
    let interfere = time(n, empty, |_| c.interfere());
    // n plain increments, n increments and n injected ones, n injected alone.
    check("counter", c.get(), 4 * n)?;
    Ok(Sample { nosync, opt0, opt1_raw, interfere, retries: retries as f64 / n as f64 })
}

/// `n` fresh nodes of `list`.
fn nodes(list: &List, n: u64) -> Result<Vec<Node>> {
    let v: Vec<Node> = (0..n).map_while(|i| list.alloc(i)).collect();
    check("list alloc", v.len() as u64, n)?;
    Ok(v)
}

fn list_insert(n: u64, empty: u64) -> Result<Sample> {
    let mut seq = SeqList::new(n as usize);
    let mut toks = (0..n).map_while(|i| seq.alloc(i)).collect::<Vec<_>>().into_iter();
    let nosync = time(n, empty, |_| {
        if let Some(node) = toks.next() {
            black_box(&mut seq).insert(node);
        }
    });

    let list = List::new(n as usize);
    let mut toks = nodes(&list, n)?.into_iter();
    let opt0 = time(n, empty, |_| {
        if let Some(node) = toks.next() {
            black_box(list.insert_with(node, &mut NoInterference).retries);
        }
    });
    while let Some(node) = list.delete() {
        list.free(node);
    }

    let mut toks = nodes(&list, n)?.into_iter();
    let mut retries = 0u64;
    let opt1_raw = time(n, empty, |_| {
        if let Some(node) = toks.next() {
            retries += u64::from(list.insert_with(node, &mut OnFirstAttempt(|| list.interfere())).retries);
        }
    });
    let interfere = time(n, empty, |_| list.interfere());
    Ok(Sample { nosync, opt0, opt1_raw, interfere, retries: retries as f64 / n as f64 })
}

/// A list holding `n` nodes.
fn filled_list(n: u64) -> Result<List> {
    let list = List::new(n as usize);
    for node in nodes(&list, n)? {
        list.insert(node);
    }
    Ok(list)
}

fn list_delete(n: u64, empty: u64) -> Result<Sample> {
    let mut seq = SeqList::new(n as usize);
    for i in 0..n {
        if let Some(node) = seq.alloc(i) {
            seq.insert(node);
        }
    }
    let mut out = Vec::with_capacity(n as usize);
    let nosync = time(n, empty, |_| {
        if let Some(node) = black_box(&mut seq).delete() {
            out.push(node);
        }
    });
    check("seq list delete", out.len() as u64, n)?;

    let list = filled_list(n)?;
    let mut out = Vec::with_capacity(n as usize);
    let opt0 = time(n, empty, |_| {
        if let Some(node) = list.delete_with(&mut NoInterference).value {
            out.push(node);
        }
    });
    check("list delete", out.len() as u64, n)?;
    for node in out.drain(..) {
        list.insert(node);
    }

    let mut retries = 0u64;
    let opt1_raw = time(n, empty, |_| {
        let r = list.delete_with(&mut OnFirstAttempt(|| list.interfere()));
        retries += u64::from(r.retries);
        if let Some(node) = r.value {
            out.push(node);
        }
    });
    check("list delete (1 retry)", out.len() as u64, n)?;
    let interfere = time(n, empty, |_| list.interfere());
    Ok(Sample { nosync, opt0, opt1_raw, interfere, retries: retries as f64 / n as f64 })
}

fn queue_insert(n: u64, empty: u64) -> Result<Sample> {
    let mut seq = SeqQueue::new(n as usize);
    let mut ok = 0u64;
    let nosync = time(n, empty, |i| ok += u64::from(black_box(&mut seq).put(i).is_ok()));
    check("seq queue put", ok, n)?;

    // Room for the batch plus the competing puts of the 1-retry batch.
    let q: MpmcQueue = MpmcQueue::new(2 * n as usize);
    let mut ok = 0u64;
    let opt0 = time(n, empty, |i| ok += u64::from(q.put_with(i, &mut NoInterference).value.is_ok()));
    check("queue put", ok, n)?;
    while q.get().is_some() {}

    let (mut ok, mut retries) = (0u64, 0u64);
    let opt1_raw = time(n, empty, |i| {
        let r = q.put_with(i, &mut OnFirstAttempt(|| ok += u64::from(q.put(i).is_ok())));
        retries += u64::from(r.retries);
        ok += u64::from(r.value.is_ok());
    });
    check("queue put (1 retry)", ok, 2 * n)?;
    while q.get().is_some() {}
    let mut ok = 0u64;
    let interfere = time(n, empty, |i| ok += u64::from(q.put(i).is_ok()));
    check("queue put (competing)", ok, n)?;
    Ok(Sample { nosync, opt0, opt1_raw, interfere, retries: retries as f64 / n as f64 })
}

fn queue_delete(n: u64, empty: u64) -> Result<Sample> {
    let mut seq = SeqQueue::new(n as usize);
    for i in 0..n {
        let _ = seq.put(i);
    }
    let mut ok = 0u64;
    let nosync = time(n, empty, |_| ok += u64::from(black_box(&mut seq).get().is_some()));
    check("seq queue get", ok, n)?;

    let q: MpmcQueue = MpmcQueue::new(2 * n as usize);
    let fill = |k: u64| (0..k).filter(|&i| q.put(i).is_ok()).count() as u64;
    check("queue fill", fill(n), n)?;
    let mut ok = 0u64;
    let opt0 = time(n, empty, |_| ok += u64::from(q.get_with(&mut NoInterference).value.is_some()));
    check("queue get", ok, n)?;

    check("queue fill", fill(2 * n), 2 * n)?;
    let (mut ok, mut retries) = (0u64, 0u64);
    let opt1_raw = time(n, empty, |_| {
        let r = q.get_with(&mut OnFirstAttempt(|| ok += u64::from(q.get().is_some())));
        retries += u64::from(r.retries);
        ok += u64::from(r.value.is_some());
    });
    check("queue get (1 retry)", ok, 2 * n)?;

    check("queue fill", fill(n), n)?;
    let mut ok = 0u64;
    let interfere = time(n, empty, |_| ok += u64::from(q.get().is_some()));
    check("queue get (competing)", ok, n)?;
    Ok(Sample { nosync, opt0, opt1_raw, interfere, retries: retries as f64 / n as f64 })
}

fn stack_push(n: u64, empty: u64) -> Result<Sample> {
    let mut seq = SeqStack::new(n as usize);
    let mut ok = 0u64;
    let nosync = time(n, empty, |i| ok += u64::from(black_box(&mut seq).push(i).is_ok()));
    check("seq stack push", ok, n)?;

    let st = Stack::new(n as usize);
    let mut ok = 0u64;
    let opt0 = time(n, empty, |i| ok += u64::from(st.push_with(i, &mut NoInterference).value.is_ok()));
    check("stack push", ok, n)?;
    while st.pop().is_some() {}

    let (mut ok, mut retries) = (0u64, 0u64);
    let opt1_raw = time(n, empty, |i| {
        let r = st.push_with(i, &mut OnFirstAttempt(|| st.interfere()));
        retries += u64::from(r.retries);
        ok += u64::from(r.value.is_ok());
    });
    check("stack push (1 retry)", ok, n)?;
    let interfere = time(n, empty, |_| st.interfere());
    Ok(Sample { nosync, opt0, opt1_raw, interfere, retries: retries as f64 / n as f64 })
}

fn stack_pop(n: u64, empty: u64) -> Result<Sample> {
    let mut seq = SeqStack::new(n as usize);
    for i in 0..n {
        let _ = seq.push(i);
    }
    let mut ok = 0u64;
    let nosync = time(n, empty, |_| ok += u64::from(black_box(&mut seq).pop().is_some()));
    check("seq stack pop", ok, n)?;

    let st = Stack::new(n as usize);
    let fill = || (0..n).filter(|&i| st.push(i).is_ok()).count() as u64;
    check("stack fill", fill(), n)?;
    let mut ok = 0u64;
    let opt0 = time(n, empty, |_| ok += u64::from(st.pop_with(&mut NoInterference).value.is_some()));
    check("stack pop", ok, n)?;

    check("stack fill", fill(), n)?;
    let (mut ok, mut retries) = (0u64, 0u64);
    let opt1_raw = time(n, empty, |_| {
        let r = st.pop_with(&mut OnFirstAttempt(|| st.interfere()));
        retries += u64::from(r.retries);
        ok += u64::from(r.value.is_some());
    });
    check("stack pop (1 retry)", ok, n)?;
    let interfere = time(n, empty, |_| st.interfere());
    Ok(Sample { nosync, opt0, opt1_raw, interfere, retries: retries as f64 / n as f64 })
}

/// Medians over runs of one row, in cycles per operation.
#[derive(Clone, Copy, Debug)]
struct Medians {
    nosync: f64,
    opt0: f64,
    opt1: f64,
    interfere: f64,
    retries: f64,
}

/// All rows, `runs` samples each after one warm-up, on the calling thread.
fn measure(a: &Args) -> Result<Vec<Medians>> {
    let n = a.iterations;
    let pb = progress::bar((ROWS.len() * (a.runs + 1)) as u64, "quaject");
    let mut samples: Vec<Vec<Sample>> = vec![Vec::with_capacity(a.runs); ROWS.len()];
    for run in 0..=a.runs {
        let empty = empty_loop(n);
        for (row, out) in ROWS.iter().zip(&mut samples) {
            pb.set_message(row.operation);
            let s = (row.sample)(n, empty)?;
            if run > 0 {
                out.push(s);
            }
            pb.inc(1);
        }
    }
    pb.finish_and_clear();
    Ok(samples
        .iter()
        .map(|s| {
            let med = |f: fn(&Sample) -> f64| summarize(&s.iter().map(f).collect::<Vec<_>>()).median;
            Medians {
                nosync: med(|s| s.nosync),
                opt0: med(|s| s.opt0),
                // Paired per run: the injected write's cost from the same run.
                opt1: med(|s| (s.opt1_raw - s.interfere).max(0.0)),
                interfere: med(|s| s.interfere),
                retries: med(|s| s.retries),
            }
        })
        .collect())
}

/// Run `granule quaject`.
pub fn run(a: &Args) -> Result<()> {
    if a.iterations == 0 || a.runs == 0 {
        bail!("--iterations and --runs must be positive");
    }
    if a.iterations > MAX_ITERATIONS {
        bail!("--iterations is at most {MAX_ITERATIONS}");
    }
    let machine = Machine::detect();
    let medians =
        run_pinned(1, |_| measure(a)).pop().unwrap_or_else(|| Err(anyhow!("the measuring thread returned nothing")))?;
    let mut records = vec![machine.record()];
    let ns = machine.ns_per_cycle();
    records.extend(ROWS.iter().zip(&medians).map(|(row, m)| QuajectRecord::new(row, m, ns).to_map()));
    emit(a.common.format, &records, "")?;
    Ok(())
}
