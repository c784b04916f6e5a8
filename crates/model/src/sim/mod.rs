//! A discrete-event simulator of `n` cores sharing kernel locks.
//!
//! Every core loops: think (a user delay drawn from [`Config::think`]), ask
//! for the lock, hold it for a critical section (drawn from
//! [`Config::service`]) plus whatever the hand-off cost it (from the
//! [`Topology`] and the [`LockKind`]), release it. Unlike the analytic model
//! the service time may depend on who held the lock before and on how many
//! wait: that is what a multi-socket machine and a ticket lock do to a big
//! lock.
//!
//! A run starts with every core thinking, discards [`Config::warmup`]
//! completed critical sections, then measures [`Config::completions`] more:
//! throughput is completions over the measured time, with a batch-means 95 %
//! interval; lock utilisation, queue length (cores waiting or holding, the
//! model's `w`) are time averages over the same window; response time is the
//! mean from asking to releasing. The run is a deterministic function of
//! [`Config::seed`] (ChaCha8), and bounded by the completion count.

mod events;
pub mod lock;
mod stats;

use std::collections::VecDeque;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use self::events::{Events, Kind};
pub use self::lock::LockKind;
use crate::dist::Dist;
use crate::error::Error;
use crate::topology::Topology;

/// What to simulate.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// Cores: the first `cores` of the topology.
    pub cores: usize,
    /// Each core's user delay between critical sections.
    pub think: Dist,
    /// The critical section itself, without the hand-off.
    pub service: Dist,
    /// How the critical sections are serialised.
    pub lock: LockKind,
    /// Critical sections measured (after the warm-up).
    pub completions: u64,
    /// Critical sections completed and discarded before measuring.
    pub warmup: u64,
    /// Batches for the throughput's confidence interval.
    pub batches: usize,
    /// Seed of the random number generator.
    pub seed: u64,
}

impl Config {
    /// `cores` cores with the given delays and lock; 100 000 measured
    /// completions after 10 000 discarded, 20 batches, seed 1.
    pub fn new(cores: usize, think: Dist, service: Dist, lock: LockKind) -> Self {
        Self { cores, think, service, lock, completions: 100_000, warmup: 10_000, batches: 20, seed: 1 }
    }
}

/// What one run measured.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// Cores simulated.
    pub cores: usize,
    /// Critical sections completed per unit of time.
    pub throughput: f64,
    /// Half-width of the throughput's 95 % batch-means interval.
    pub throughput_ci95: Option<f64>,
    /// Fraction of time the shared lock is held or being handed over (for
    /// `fine`, the mean over the per-core locks; for `rtm`, the fallback lock).
    pub lock_utilisation: f64,
    /// Mean number of cores waiting for or in a critical section.
    pub queue_length: f64,
    /// Mean time from asking for the lock to leaving the critical section.
    pub response_time: f64,
    /// Mean time the lock is held per acquisition, hand-off included
    /// (`None` if the lock was never taken in the window).
    pub mean_hold: Option<f64>,
    /// Mean hand-off cost per acquisition.
    pub mean_handoff: Option<f64>,
    /// Critical sections measured.
    pub completions: u64,
    /// Length of the measured window.
    pub duration: f64,
    /// RTM: transactions committed in the window.
    pub commits: u64,
    /// RTM: transactions aborted in the window.
    pub aborts: u64,
    /// RTM: critical sections that took the fallback lock in the window.
    pub fallbacks: u64,
}

/// Simulate `cfg` on the first `cfg.cores` cores of `topology`.
pub fn simulate(cfg: &Config, topology: &Topology) -> Result<Outcome, Error> {
    if cfg.cores == 0 {
        return Err(Error::Invalid("the simulator needs at least one core".into()));
    }
    if cfg.cores > topology.cores() {
        return Err(Error::Topology(format!(
            "{} has {} cores; {} were asked for",
            topology.name(),
            topology.cores(),
            cfg.cores
        )));
    }
    if cfg.completions == 0 || cfg.batches == 0 || cfg.completions < cfg.batches as u64 {
        return Err(Error::Invalid("the simulator needs at least one completion per batch".into()));
    }
    if cfg.think.mean() + cfg.service.mean() <= 0.0 {
        return Err(Error::Invalid("think and service times cannot both be always zero".into()));
    }
    let mut sim = Sim::new(cfg, topology);
    sim.run();
    Ok(sim.outcome())
}

/// The state of a run.
struct Sim<'a> {
    cfg: &'a Config,
    topo: &'a Topology,
    rng: ChaCha8Rng,
    events: Events,
    now: f64,
    /// When each core last asked for the lock.
    arrival: Vec<f64>,

    // The shared lock (queue, ticket, and RTM's fallback).
    holder: Option<usize>,
    last_holder: Option<usize>,
    waiters: VecDeque<usize>,
    scratch: Vec<usize>,

    // RTM.
    generation: Vec<u64>,
    attempts: Vec<u32>,
    in_tx: Vec<usize>,
    waiting_for_free: Vec<usize>,

    // Accounting.
    in_kernel: usize,
    held: usize,
    completed: u64,
    measuring: bool,
    last_t: f64,
    t_start: f64,
    area_in_kernel: f64,
    area_held: f64,
    response_sum: f64,
    holds: u64,
    hold_sum: f64,
    handoff_sum: f64,
    commits: u64,
    aborts: u64,
    fallbacks: u64,
    batch_start: f64,
    batches: Vec<f64>,
    done: bool,
}

impl<'a> Sim<'a> {
    fn new(cfg: &'a Config, topo: &'a Topology) -> Self {
        let n = cfg.cores;
        // Mix the core count into the seed so that every n of one sweep draws
        // its own stream.
        let rng = ChaCha8Rng::seed_from_u64(cfg.seed ^ (n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let mut sim = Self {
            cfg,
            topo,
            rng,
            events: Events::default(),
            now: 0.0,
            arrival: vec![0.0; n],
            holder: None,
            last_holder: None,
            waiters: VecDeque::with_capacity(n),
            scratch: Vec::with_capacity(n),
            generation: vec![0; n],
            attempts: vec![0; n],
            in_tx: Vec::with_capacity(n),
            waiting_for_free: Vec::with_capacity(n),
            in_kernel: 0,
            held: 0,
            completed: 0,
            measuring: cfg.warmup == 0,
            last_t: 0.0,
            t_start: 0.0,
            area_in_kernel: 0.0,
            area_held: 0.0,
            response_sum: 0.0,
            holds: 0,
            hold_sum: 0.0,
            handoff_sum: 0.0,
            commits: 0,
            aborts: 0,
            fallbacks: 0,
            batch_start: 0.0,
            batches: Vec::with_capacity(cfg.batches),
            done: false,
        };
        for c in 0..n {
            let t = sim.cfg.think.sample(&mut sim.rng);
            sim.events.push(t, c, Kind::Arrive);
        }
        sim
    }

    fn run(&mut self) {
        while !self.done {
            let Some(ev) = self.events.pop() else { break };
            self.advance(ev.time);
            match ev.kind {
                Kind::Arrive => self.arrive(ev.core),
                Kind::Release => self.release(ev.core),
                Kind::TxEnd { generation, commit } => self.tx_end(ev.core, generation, commit),
            }
        }
    }

    /// Move the clock to `t`, integrating the time averages.
    fn advance(&mut self, t: f64) {
        if self.measuring {
            let dt = t - self.last_t;
            self.area_in_kernel += self.in_kernel as f64 * dt;
            self.area_held += self.held as f64 * dt;
        }
        self.last_t = t;
        self.now = t;
    }

    fn arrive(&mut self, c: usize) {
        self.in_kernel += 1;
        self.arrival[c] = self.now;
        match self.cfg.lock {
            LockKind::Fine => self.grant(c, 0.0),
            LockKind::Queue | LockKind::Ticket => self.request(c),
            LockKind::Rtm { .. } => {
                self.attempts[c] = 0;
                self.try_transaction(c);
            }
        }
    }

    /// Ask for the shared lock: take it if free, else queue.
    fn request(&mut self, c: usize) {
        if self.holder.is_none() {
            let h = self.last_holder.map_or(0.0, |l| self.topo.latency(l, c));
            self.grant(c, h);
        } else {
            self.waiters.push_back(c);
        }
    }

    /// `c` holds its lock from now, after a hand-off of `handoff`.
    fn grant(&mut self, c: usize, handoff: f64) {
        let s = self.cfg.service.sample(&mut self.rng);
        if self.cfg.lock.shared() {
            self.holder = Some(c);
            self.last_holder = Some(c);
        }
        self.held += 1;
        if self.measuring {
            self.holds += 1;
            self.hold_sum += handoff + s;
            self.handoff_sum += handoff;
        }
        self.events.push(self.now + handoff + s, c, Kind::Release);
        if matches!(self.cfg.lock, LockKind::Rtm { .. }) {
            // Every running transaction read the lock word that just changed.
            let aborted = std::mem::take(&mut self.in_tx);
            for t in aborted {
                self.generation[t] += 1;
                self.abort(t);
            }
        }
    }

    fn release(&mut self, c: usize) {
        self.held -= 1;
        if self.cfg.lock.shared() {
            self.holder = None;
            if let Some(&next) = self.waiters.front() {
                let h = match self.cfg.lock {
                    LockKind::Ticket => self.ticket_handoff(c, next),
                    _ => self.topo.latency(c, next),
                };
                self.waiters.pop_front();
                self.grant(next, h);
            } else {
                for t in std::mem::take(&mut self.waiting_for_free) {
                    self.try_transaction(t);
                }
            }
        }
        self.finish(c);
    }

    /// A ticket lock's hand-off from `from` to the head waiter `next`: the
    /// waiters re-read the released line one by one in a random order, and
    /// `next` is served after a uniformly random number of the others.
    fn ticket_handoff(&mut self, from: usize, next: usize) -> f64 {
        let k = self.waiters.len();
        let before = self.rng.gen_range(0..k);
        self.scratch.clear();
        self.scratch.extend(self.waiters.iter().skip(1));
        let mut cost = self.topo.latency(from, next);
        for i in 0..before {
            let j = self.rng.gen_range(i..self.scratch.len());
            self.scratch.swap(i, j);
            cost += self.topo.latency(from, self.scratch[i]);
        }
        cost
    }

    /// RTM: start a transaction if the fallback lock is free, else wait for
    /// it to be.
    fn try_transaction(&mut self, c: usize) {
        if self.holder.is_some() || !self.waiters.is_empty() {
            self.waiting_for_free.push(c);
            return;
        }
        let LockKind::Rtm { abort, .. } = self.cfg.lock else { unreachable!("only rtm runs transactions") };
        self.generation[c] += 1;
        self.in_tx.push(c);
        let s = self.cfg.service.sample(&mut self.rng);
        let (end, commit) = if self.rng.gen::<f64>() < abort {
            (self.now + self.rng.gen::<f64>() * s, false)
        } else {
            (self.now + s, true)
        };
        self.events.push(end, c, Kind::TxEnd { generation: self.generation[c], commit });
    }

    fn tx_end(&mut self, c: usize, generation: u64, commit: bool) {
        if generation != self.generation[c] {
            return; // aborted earlier by a conflict
        }
        if let Some(i) = self.in_tx.iter().position(|&t| t == c) {
            self.in_tx.swap_remove(i);
        }
        if commit {
            if self.measuring {
                self.commits += 1;
            }
            self.finish(c);
        } else {
            self.abort(c);
        }
    }

    /// `c`'s transaction aborted: retry, or take the fallback lock.
    fn abort(&mut self, c: usize) {
        let LockKind::Rtm { retries, .. } = self.cfg.lock else { unreachable!("only rtm aborts") };
        if self.measuring {
            self.aborts += 1;
        }
        self.attempts[c] += 1;
        if self.attempts[c] > retries {
            if self.measuring {
                self.fallbacks += 1;
            }
            self.request(c);
        } else {
            self.try_transaction(c);
        }
    }

    /// `c` leaves its critical section and thinks.
    fn finish(&mut self, c: usize) {
        self.in_kernel -= 1;
        self.completed += 1;
        let w = self.cfg.warmup;
        if self.completed == w {
            self.measuring = true;
            self.t_start = self.now;
            self.batch_start = self.now;
        } else if self.completed > w {
            self.response_sum += self.now - self.arrival[c];
            let measured = self.completed - w;
            let per_batch = self.cfg.completions / self.cfg.batches as u64;
            if measured % per_batch == 0 && self.batches.len() < self.cfg.batches {
                self.batches.push(self.now - self.batch_start);
                self.batch_start = self.now;
            }
            if measured == self.cfg.completions {
                self.done = true;
                return;
            }
        }
        let t = self.cfg.think.sample(&mut self.rng);
        self.events.push(self.now + t, c, Kind::Arrive);
    }

    fn outcome(&self) -> Outcome {
        let duration = self.now - self.t_start;
        let completions = self.completed.saturating_sub(self.cfg.warmup);
        let per = |sum: f64| (self.holds > 0).then(|| sum / self.holds as f64);
        let locks = if self.cfg.lock.shared() { 1.0 } else { self.cfg.cores as f64 };
        Outcome {
            cores: self.cfg.cores,
            throughput: completions as f64 / duration,
            throughput_ci95: stats::batch_interval(self.cfg.completions / self.cfg.batches as u64, &self.batches),
            lock_utilisation: self.area_held / duration / locks,
            queue_length: self.area_in_kernel / duration,
            response_time: self.response_sum / completions as f64,
            mean_hold: per(self.hold_sum),
            mean_handoff: per(self.handoff_sum),
            completions,
            duration,
            commits: self.commits,
            aborts: self.aborts,
            fallbacks: self.fallbacks,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analytic::Repairman;

    fn cfg(n: usize, lock: LockKind) -> Config {
        let mut c = Config::new(n, Dist::Exponential(1000.0), Dist::Constant(100.0), lock);
        c.completions = 40_000;
        c.warmup = 4_000;
        c
    }

    #[test]
    fn one_core_alternates_think_and_service() {
        // One core never waits: X = 1/(a + s) exactly in expectation, and a
        // constant think time makes every cycle the same.
        let topo = Topology::uniform(1, 500.0).unwrap();
        let mut c = cfg(1, LockKind::Queue);
        c.think = Dist::Constant(900.0);
        let o = simulate(&c, &topo).unwrap();
        assert!((o.throughput - 1.0 / 1000.0).abs() < 1e-12, "{o:?}");
        assert_eq!(o.mean_handoff, Some(0.0), "the same core re-acquires for free");
        assert!((o.lock_utilisation - 0.1).abs() < 1e-9);
        assert!((o.response_time - 100.0).abs() < 1e-9);
        assert_eq!(o.completions, 40_000);
    }

    #[test]
    fn same_seed_same_run_other_seed_other_run() {
        let topo = Topology::uniform(4, 50.0).unwrap();
        let a = simulate(&cfg(4, LockKind::Ticket), &topo).unwrap();
        let b = simulate(&cfg(4, LockKind::Ticket), &topo).unwrap();
        assert_eq!(a, b);
        let mut other = cfg(4, LockKind::Ticket);
        other.seed = 2;
        assert_ne!(simulate(&other, &topo).unwrap().throughput, a.throughput);
    }

    #[test]
    fn littles_law_holds_in_the_window() {
        let topo = Topology::uniform(8, 100.0).unwrap();
        for lock in [LockKind::Queue, LockKind::Ticket, LockKind::Fine, LockKind::Rtm { abort: 0.2, retries: 2 }] {
            let o = simulate(&cfg(8, lock), &topo).unwrap();
            let l = o.throughput * o.response_time;
            assert!((l - o.queue_length).abs() / o.queue_length < 0.02, "{lock}: X·R = {l}, w = {}", o.queue_length);
        }
    }

    #[test]
    fn queue_lock_pays_one_transfer_per_handoff() {
        // Saturated (think 0): every acquisition is a hand-off to another
        // core, so the hold time is s + L and X = 1/(s + L).
        let topo = Topology::uniform(4, 60.0).unwrap();
        let mut c = cfg(4, LockKind::Queue);
        c.think = Dist::Constant(0.0);
        let o = simulate(&c, &topo).unwrap();
        assert!((o.mean_hold.unwrap() - 160.0).abs() < 1e-9, "{o:?}");
        assert!((o.throughput - 1.0 / 160.0).abs() < 1e-9);
        assert!((o.lock_utilisation - 1.0).abs() < 1e-9);
        assert!((o.queue_length - 4.0).abs() < 1e-9);
    }

    #[test]
    fn ticket_handoff_grows_with_waiters() {
        // Saturated with n cores: n − 1 wait at every hand-off, and the next
        // holder is served after (n − 2)/2 others on average, so the hold
        // time is s + L·(1 + (n − 2)/2) = s + L·n/2.
        let topo = Topology::uniform(16, 40.0).unwrap();
        for n in [2usize, 8, 16] {
            let mut c = cfg(n, LockKind::Ticket);
            c.think = Dist::Constant(0.0);
            let o = simulate(&c, &topo).unwrap();
            let want = 100.0 + 40.0 * n as f64 / 2.0;
            assert!((o.mean_hold.unwrap() - want).abs() / want < 0.02, "n={n}: {o:?}");
        }
    }

    #[test]
    fn fine_locks_scale_perfectly() {
        let topo = Topology::uniform(16, 200.0).unwrap();
        for n in [1usize, 4, 16] {
            let o = simulate(&cfg(n, LockKind::Fine), &topo).unwrap();
            let want = n as f64 / 1100.0;
            assert!((o.throughput - want).abs() / want < 0.02, "n={n}: {o:?}");
            assert_eq!(o.mean_handoff, Some(0.0));
        }
    }

    #[test]
    fn rtm_without_aborts_is_fine_and_always_aborting_is_the_lock() {
        let topo = Topology::uniform(8, 100.0).unwrap();
        let never = simulate(&cfg(8, LockKind::Rtm { abort: 0.0, retries: 3 }), &topo).unwrap();
        assert_eq!((never.aborts, never.fallbacks), (0, 0));
        assert_eq!(never.commits, never.completions);
        let fine = simulate(&cfg(8, LockKind::Fine), &topo).unwrap();
        assert!((never.throughput - fine.throughput).abs() / fine.throughput < 0.02);
        // Always aborting, no retries: every critical section falls back to
        // the queue lock (its aborted attempt wasted some time first).
        let always = simulate(&cfg(8, LockKind::Rtm { abort: 1.0, retries: 0 }), &topo).unwrap();
        assert_eq!(always.commits, 0);
        let queue = simulate(&cfg(8, LockKind::Queue), &topo).unwrap();
        assert!(always.throughput <= queue.throughput * 1.02, "{always:?} vs {queue:?}");
        assert!(always.fallbacks > 0 && always.aborts >= always.fallbacks);
    }

    #[test]
    fn exponential_service_without_handoff_matches_the_seeds_model() {
        let topo = Topology::uniform(8, 0.0).unwrap();
        let mut c = cfg(8, LockKind::Queue);
        c.service = Dist::Exponential(100.0);
        let o = simulate(&c, &topo).unwrap();
        let m = Repairman::new(8, 100.0, 1000.0).unwrap().solve();
        assert!((o.throughput - m.throughput).abs() / m.throughput < 0.02, "{o:?} vs {m:?}");
        assert!((o.lock_utilisation - m.utilisation).abs() < 0.02);
        assert!((o.queue_length - m.queue_length).abs() / m.queue_length < 0.04);
    }

    #[test]
    fn refuses_what_it_cannot_run() {
        let topo = Topology::arm_quad();
        assert!(simulate(&cfg(5, LockKind::Queue), &topo).unwrap_err().to_string().contains("has 4 cores"));
        assert!(simulate(&cfg(0, LockKind::Queue), &topo).is_err());
        let mut c = cfg(2, LockKind::Queue);
        c.completions = 0;
        assert!(simulate(&c, &topo).is_err());
        let mut c = cfg(2, LockKind::Queue);
        (c.think, c.service) = (Dist::Constant(0.0), Dist::Constant(0.0));
        assert!(simulate(&c, &topo).is_err());
    }
}
