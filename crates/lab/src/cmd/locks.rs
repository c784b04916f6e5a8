//! `granule locks`: what every lock costs on this machine, next to the
//! baselines users would otherwise reach for.
//!
//! Two measurements per lock, in one run so ratios are not distorted by the
//! machine's noise between runs:
//!
//! * **uncontended**: one pinned thread, `acquire + release` pairs in a loop,
//!   timed with the cycle counter; an empty loop of the same shape is
//!   subtracted; the median of `--runs` runs is reported as `cycles_per_pair`,
//!   beside the uncontended cost of `xchg` measured in the same run (the
//!   physical floor: every lock here needs at least one atomic RMW);
//! * **contended**: `threads` pinned threads (thread `i` is core `i`) loop on
//!   `acquire, critical section, release` for `--seconds`; the critical
//!   section reads and writes one shared cache line and then busy-waits
//!   `--critical-cycles`, while a thread that takes no part keeps time.
//!   Reported: total `acquisitions_per_sec` (median over runs) and
//!   `fairness` (fewest / most acquisitions of any thread). More threads than
//!   CPUs needs `--oversubscribe` when a spinning lock is selected.

pub(crate) mod records;

use std::borrow::Cow;
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use clap::Args as ClapArgs;
use crossbeam_utils::CachePadded;
use granule_sync::cycles;
use granule_sync::lock::{Clh, Lock, Mcs, RawLock, Ticket, Ttas};
use granule_sync::rw::{BrLock, Sx};

use self::records::{LockContended, LockSkipped, LockUncontended};
use crate::machine::Machine;
use crate::output::{emit, Record};
use crate::pin::run_pinned;
use crate::stats::summarize;
use crate::{bounds, limits, progress};

/// Every lock this command knows, in table order.
pub const ALL_LOCKS: &[&str] = &[
    "ttas",
    "ticket",
    "clh",
    "mcs",
    "brlock-read",
    "brlock-write",
    "sx-shared",
    "sx-exclusive",
    "elided-ttas",
    "elided-ticket",
    "elided-clh",
    "elided-mcs",
    "std-mutex",
    "parking-lot",
    "spin-mutex",
];

/// Options of `granule locks`.
#[derive(Clone, Debug, ClapArgs)]
pub struct Args {
    #[command(flatten)]
    pub common: super::Common,
    /// Locks to measure (comma-separated; `all` for every one). Known:
    /// ttas, ticket, clh, mcs, brlock-read, brlock-write, sx-shared,
    /// sx-exclusive, elided-{ttas,ticket,clh,mcs} (RTM only), std-mutex,
    /// parking-lot, spin-mutex.
    #[arg(long, value_delimiter = ',', default_value = "all")]
    pub locks: Vec<String>,
    /// Thread counts for the contended measurement (1 = one thread looping
    /// alone), each 1..=1024. Threads are pinned to distinct CPUs; more
    /// threads than CPUs needs --oversubscribe when a spinning lock is
    /// selected.
    #[arg(long, value_delimiter = ',', default_value = "1,2", value_parser = bounds::int::<usize>(1, bounds::MAX_THREADS))]
    pub threads: Vec<usize>,
    /// Run spinning locks with more threads than CPUs: a waiter then spins
    /// while the holder (or, for FIFO locks, the next in line) is preempted,
    /// so those figures measure the OS scheduler more than the lock.
    #[arg(long)]
    pub oversubscribe: bool,
    /// Busy-wait inside each critical section, in cycles (0..=10^9).
    #[arg(long, default_value_t = 0, value_parser = bounds::int::<u64>(0, 1_000_000_000))]
    pub critical_cycles: u64,
    /// Duration of each contended measurement, in seconds (0 < s ≤ 3600).
    #[arg(long, default_value_t = 0.5, value_parser = bounds::seconds())]
    pub seconds: f64,
    /// Repetitions of every measurement, 1..=1000; medians are reported.
    #[arg(long, default_value_t = 5, value_parser = bounds::runs::<usize>())]
    pub runs: usize,
    /// Acquire+release pairs per uncontended timing (1..=10^9).
    #[arg(long, default_value_t = 100_000, value_parser = bounds::int::<u64>(1, 1_000_000_000))]
    pub pairs: u64,
}

/// A lock as the benchmark drives it: acquire, run `critical`, release.
trait Subject: Sync {
    /// Whether holders exclude each other (false for the read sides).
    const EXCLUSIVE: bool = true;
    fn pair(&self, core: usize, critical: impl FnOnce());
}

struct Kernel<L: RawLock>(Lock<L>);
impl<L: RawLock> Subject for Kernel<L> {
    #[inline(always)]
    fn pair(&self, core: usize, critical: impl FnOnce()) {
        self.0.acquire(core, || {});
        critical();
        self.0.release(core);
    }
}

struct BrRead(BrLock);
impl Subject for BrRead {
    const EXCLUSIVE: bool = false;
    #[inline(always)]
    fn pair(&self, core: usize, critical: impl FnOnce()) {
        self.0.read_acquire(core, || {});
        critical();
        self.0.read_release(core);
    }
}

struct BrWrite(BrLock);
impl Subject for BrWrite {
    #[inline(always)]
    fn pair(&self, core: usize, critical: impl FnOnce()) {
        self.0.write_acquire(core, || {});
        critical();
        self.0.write_release(core);
    }
}

struct SxShared(Sx);
impl Subject for SxShared {
    const EXCLUSIVE: bool = false;
    #[inline(always)]
    fn pair(&self, _core: usize, critical: impl FnOnce()) {
        self.0.slock(|| {});
        critical();
        self.0.sunlock();
    }
}

struct SxExclusive(Sx);
impl Subject for SxExclusive {
    #[inline(always)]
    fn pair(&self, _core: usize, critical: impl FnOnce()) {
        self.0.xlock(|| {});
        critical();
        self.0.xunlock();
    }
}

struct StdMutex(std::sync::Mutex<()>);
impl Subject for StdMutex {
    #[inline(always)]
    fn pair(&self, _core: usize, critical: impl FnOnce()) {
        let g = self.0.lock().unwrap_or_else(|e| e.into_inner());
        critical();
        drop(g);
    }
}

struct ParkingLot(parking_lot::Mutex<()>);
impl Subject for ParkingLot {
    #[inline(always)]
    fn pair(&self, _core: usize, critical: impl FnOnce()) {
        let g = self.0.lock();
        critical();
        drop(g);
    }
}

struct SpinMutex(spin::Mutex<()>);
impl Subject for SpinMutex {
    #[inline(always)]
    fn pair(&self, _core: usize, critical: impl FnOnce()) {
        let g = self.0.lock();
        critical();
        drop(g);
    }
}

struct ElidedSubject<L: RawLock>(granule_sync::rtm::Elided<L>);
impl<L: RawLock> Subject for ElidedSubject<L> {
    #[inline(always)]
    fn pair(&self, core: usize, critical: impl FnOnce()) {
        let mode = self.0.acquire(core, || {});
        critical();
        self.0.release(core, mode);
    }
}

/// Busy-wait `n` cycles of the cycle counter. No PAUSE (`spin_loop`) here:
/// this runs inside critical sections, and PAUSE aborts an RTM transaction.
#[inline(always)]
fn spin_cycles(n: u64) {
    if n == 0 {
        return;
    }
    let t0 = cycles::now();
    while cycles::now().wrapping_sub(t0) < n {}
}

/// Cycles per iteration of `body`, minus an empty loop, median over `runs`.
fn time_pairs(runs: usize, pairs: u64, mut body: impl FnMut()) -> f64 {
    let mut samples = Vec::with_capacity(runs);
    for _ in 0..runs {
        for _ in 0..pairs / 10 {
            body();
        }
        let t0 = cycles::now();
        for i in 0..pairs {
            black_box(i);
        }
        let empty = cycles::now_fenced().wrapping_sub(t0);
        let t0 = cycles::now();
        for i in 0..pairs {
            black_box(i);
            body();
        }
        let full = cycles::now_fenced().wrapping_sub(t0);
        samples.push(full.saturating_sub(empty) as f64 / pairs as f64);
    }
    summarize(&samples).median
}

/// The critical section: exclusive locks read and write one shared cache
/// line (so lost updates would reveal broken mutual exclusion); shared locks
/// only read it. Then busy-wait `critical_cycles`.
#[inline(always)]
fn critical<S: Subject>(line: &AtomicU64, critical_cycles: u64) {
    let v = line.load(Ordering::Relaxed);
    if S::EXCLUSIVE {
        line.store(v + 1, Ordering::Relaxed);
    } else {
        black_box(v);
    }
    spin_cycles(critical_cycles);
}

/// Median acquisitions per second and fairness over `a.runs` runs of
/// `threads` pinned threads; fails if an exclusive lock lost an update.
fn contended<S: Subject>(name: &str, subject: &S, threads: usize, a: &Args) -> Result<(f64, f64)> {
    let mut rates = Vec::new();
    let mut fairness = Vec::new();
    for _ in 0..a.runs {
        let line = CachePadded::new(AtomicU64::new(0));
        let stop = AtomicBool::new(false);
        let started: OnceLock<Instant> = OnceLock::new();
        // A watcher that takes no part keeps time: from the first thread past
        // the start barrier until it raises `stop`. (A timekeeper that also
        // took the lock could itself wait seconds for it when the threads
        // outnumber the CPUs.) Each thread counts the pairs it completed
        // before it saw `stop`, and separately the one it finished after.
        let (results, elapsed) = std::thread::scope(|s| {
            let watcher = s.spawn(|| {
                let t0 = loop {
                    if let Some(&t) = started.get() {
                        break t;
                    }
                    std::thread::sleep(Duration::from_micros(100));
                };
                std::thread::sleep((t0 + Duration::from_secs_f64(a.seconds)).saturating_duration_since(Instant::now()));
                stop.store(true, Ordering::Relaxed);
                t0.elapsed().as_secs_f64()
            });
            let results = run_pinned(threads, |core| {
                started.get_or_init(Instant::now);
                let (mut before, mut after) = (0u64, 0u64);
                while !stop.load(Ordering::Relaxed) {
                    subject.pair(core, || critical::<S>(&line, a.critical_cycles));
                    if stop.load(Ordering::Relaxed) {
                        after += 1;
                    } else {
                        before += 1;
                    }
                }
                (before, after)
            });
            (results, watcher.join().expect("the watcher thread cannot panic"))
        });
        let counts: Vec<u64> = results.iter().map(|r| r.0).collect();
        let sections: u64 = results.iter().map(|r| r.0 + r.1).sum();
        if S::EXCLUSIVE && line.load(Ordering::Relaxed) != sections {
            bail!(
                "{name}: mutual exclusion violated: {sections} critical sections but the shared line counted {}",
                line.load(Ordering::Relaxed)
            );
        }
        let total: u64 = counts.iter().sum();
        rates.push(total as f64 / elapsed);
        let (lo, hi) = (counts.iter().min().copied().unwrap_or(0), counts.iter().max().copied().unwrap_or(0));
        fairness.push(if hi == 0 { 0.0 } else { lo as f64 / hi as f64 });
    }
    Ok((summarize(&rates).median, summarize(&fairness).median))
}

/// Measure one lock, appending its records.
fn measure<S: Subject>(
    name: &'static str,
    subject: &S,
    a: &Args,
    m: &Machine,
    xchg: f64,
    uncontended: &mut Vec<LockUncontended>,
    contended_out: &mut Vec<LockContended>,
) -> Result<()> {
    let cycles = run_pinned(1, |_| time_pairs(a.runs, a.pairs, || subject.pair(0, || {})))[0];
    uncontended.push(LockUncontended {
        lock: Cow::Borrowed(name),
        threads: 1,
        cycles_per_pair: cycles,
        ns_per_pair: cycles * m.ns_per_cycle(),
        xchg_cycles: xchg,
        ratio_to_xchg: cycles / xchg,
        ratio_to_parking_lot: None,
    });
    for &t in &a.threads {
        let (rate, fairness) = contended(name, subject, t, a)?;
        contended_out.push(LockContended {
            lock: Cow::Borrowed(name),
            threads: t,
            critical_cycles: a.critical_cycles,
            oversubscribed: t > crate::pin::cpus().len(),
            acquisitions_per_sec: rate,
            fairness,
        });
    }
    Ok(())
}

/// Measure `Elided<L>`, or record why it was skipped (no usable RTM).
#[allow(clippy::too_many_arguments)]
fn measure_elided<L: RawLock>(
    name: &'static str,
    cores: usize,
    a: &Args,
    m: &Machine,
    xchg: f64,
    unc: &mut Vec<LockUncontended>,
    con: &mut Vec<LockContended>,
    skipped: &mut Vec<LockSkipped>,
) -> Result<()> {
    match granule_sync::rtm::Elided::<L>::new(name, cores) {
        Ok(l) => measure(name, &ElidedSubject(l), a, m, xchg, unc, con),
        Err(e) => {
            skipped.push(LockSkipped { lock: Cow::Borrowed(name), reason: e.to_string() });
            Ok(())
        }
    }
}

/// The locks selected by `--locks`, validated.
pub fn selected(locks: &[String]) -> Result<Vec<&'static str>> {
    if locks.iter().any(|l| l == "all") {
        return Ok(ALL_LOCKS.to_vec());
    }
    let mut out = Vec::new();
    for l in locks {
        match ALL_LOCKS.iter().find(|k| **k == l.as_str()) {
            Some(k) => out.push(*k),
            None => bail!("unknown lock `{l}`; known locks: {}", ALL_LOCKS.join(", ")),
        }
    }
    Ok(out)
}

/// Locks that park a waiter instead of spinning (safe to oversubscribe).
const PARKING: &[&str] = &["std-mutex", "parking-lot"];

/// An oversubscribed run (more threads than `cpus` with a spinning lock
/// selected) is an error unless `allowed`, and then a note on stderr.
fn check_oversubscription(locks: &[&str], threads: &[usize], cpus: usize, allowed: bool) -> Result<()> {
    let spinning: Vec<&str> = locks.iter().copied().filter(|l| !PARKING.contains(l)).collect();
    if spinning.is_empty() {
        return Ok(());
    }
    let most = threads.iter().copied().max().unwrap_or(1);
    if most <= cpus.max(1) {
        return Ok(());
    }
    let why = format!(
        "{most} threads on {cpus} CPUs: {} spin (only {} park), and a waiter spins while the thread it waits \
         for is preempted, so each hand-off can wait a whole scheduler quantum",
        spinning.join(", "),
        PARKING.join(" and ")
    );
    if !allowed {
        bail!("{why}; pass --oversubscribe to measure that anyway");
    }
    eprintln!(
        "granule: note: oversubscribed: {why}; the contended figures measure the OS scheduler as much as the locks"
    );
    Ok(())
}

/// Run `granule locks`.
pub fn run(a: &Args) -> Result<()> {
    let locks = selected(&a.locks)?;
    if a.threads.is_empty() {
        bail!("--threads needs at least one thread count, e.g. --threads 1,2");
    }
    check_oversubscription(&locks, &a.threads, crate::pin::cpus().len(), a.oversubscribe)?;
    let m = Machine::detect();
    let cores = a.threads.iter().copied().max().unwrap_or(1).max(1);
    let xchg = limits::xchg_cycles(a.runs).unwrap_or(f64::NAN);
    let mut unc = Vec::new();
    let mut con = Vec::new();
    let mut skipped = Vec::new();
    let pb = progress::bar(locks.len() as u64, "locks");
    for name in locks {
        pb.set_message(name);
        macro_rules! go {
            ($s:expr) => {
                measure(name, &$s, a, &m, xchg, &mut unc, &mut con)?
            };
        }
        match name {
            "ttas" => go!(Kernel(Lock::<Ttas>::new("ttas", cores))),
            "ticket" => go!(Kernel(Lock::<Ticket>::new("ticket", cores))),
            "clh" => go!(Kernel(Lock::<Clh>::new("clh", cores))),
            "mcs" => go!(Kernel(Lock::<Mcs>::new("mcs", cores))),
            "brlock-read" => go!(BrRead(BrLock::new(cores))),
            "brlock-write" => go!(BrWrite(BrLock::new(cores))),
            "sx-shared" => go!(SxShared(Sx::new())),
            "sx-exclusive" => go!(SxExclusive(Sx::new())),
            "std-mutex" => go!(StdMutex(std::sync::Mutex::new(()))),
            "parking-lot" => go!(ParkingLot(parking_lot::Mutex::new(()))),
            "spin-mutex" => go!(SpinMutex(spin::Mutex::new(()))),
            "elided-ttas" => measure_elided::<Ttas>(name, cores, a, &m, xchg, &mut unc, &mut con, &mut skipped)?,
            "elided-ticket" => measure_elided::<Ticket>(name, cores, a, &m, xchg, &mut unc, &mut con, &mut skipped)?,
            "elided-clh" => measure_elided::<Clh>(name, cores, a, &m, xchg, &mut unc, &mut con, &mut skipped)?,
            _ => measure_elided::<Mcs>(name, cores, a, &m, xchg, &mut unc, &mut con, &mut skipped)?,
        }
        pb.inc(1);
    }
    pb.finish_and_clear();
    // Ratios to parking_lot, measured in this same run (of the figures
    // that are numbers).
    let pl = unc.iter().find(|r| r.lock == "parking-lot").map(|r| r.cycles_per_pair);
    if let Some(pl) = pl.filter(|&c| c.is_finite() && c > 0.0) {
        for r in unc.iter_mut().filter(|r| r.cycles_per_pair.is_finite()) {
            r.ratio_to_parking_lot = Some(r.cycles_per_pair / pl);
        }
    }
    let mut records = vec![m.record()];
    records.extend(unc.iter().map(Record::to_map));
    records.extend(con.iter().map(Record::to_map));
    records.extend(skipped.iter().map(Record::to_map));
    emit(a.common.format, &records, "")?;
    Ok(())
}
