//! Checking a program: run it under each regime, judge every run, and
//! compare single-core runs across regimes (`granule verify`'s engine; the
//! crate documentation shows where each part lives).

use std::fmt;

use crate::driver::RunOptions;
use crate::program::Program;
use crate::record::{Observed, RunRecord, Stop};
use crate::regimes::{kind, run_named, Kind};
use crate::{conservation, linearize};

/// Which check a violation broke.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Check {
    /// A kernel invariant (after an entry, or at the end).
    Invariant,
    /// The kernel panicked, or a core never returned from it.
    Crash,
    /// A plan broke the platform contract (a thread on two cores, a thread
    /// resumed without a result, started twice…).
    Scheduling,
    /// Every core idle while a thread is runnable.
    Liveness,
    /// A message lost, duplicated, corrupted, misrouted or reordered.
    Conservation,
    /// A reply reached the wrong caller or none.
    Reply,
    /// A notification delivered a badge more often than it was signalled.
    Notification,
    /// No sequential execution explains a small history.
    Linearizability,
    /// A single-core program gave different results under two regimes.
    Determinism,
}

impl Check {
    /// Its name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Check::Invariant => "invariant",
            Check::Crash => "crash",
            Check::Scheduling => "scheduling",
            Check::Liveness => "liveness",
            Check::Conservation => "conservation",
            Check::Reply => "reply",
            Check::Notification => "notification",
            Check::Linearizability => "linearizability",
            Check::Determinism => "determinism",
        }
    }
}

/// One violated check, with the evidence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// The check.
    pub check: Check,
    /// What was seen.
    pub detail: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}] {}", self.check.name(), self.detail)
    }
}

/// How to verify.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// How each program runs.
    pub run: RunOptions,
    /// Drop one received message from every run's log before checking (to
    /// prove the checks can fail).
    pub inject_bug: bool,
    /// Print every program and every run's history on stderr.
    pub dump: bool,
}

/// What was checked for one regime (summed over programs).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Programs run.
    pub programs: u64,
    /// System calls entered.
    pub syscalls: u64,
    /// Kernel entries of every kind.
    pub entries: u64,
    /// Invariant checks.
    pub invariant_checks: u64,
    /// Messages whose fate was checked.
    pub messages: u64,
    /// Replies checked.
    pub replies: u64,
    /// Notification results checked.
    pub notifications: u64,
    /// Subsystem calls checked.
    pub subsystem_calls: u64,
    /// Kernel-log messages checked.
    pub log_messages: u64,
    /// Memory faults whose fate was checked.
    pub faults: u64,
    /// Of those, faults their handler answered.
    pub faults_answered: u64,
    /// Frame operations that completed.
    pub frame_ops: u64,
    /// Of those, maps refused (frame or page taken).
    pub maps_refused: u64,
    /// 4 KiB frames allocated or freed on `lockfree`'s shared path.
    pub shared_pages: u64,
    /// Threads destroyed on `lockfree`'s shared path.
    pub shared_destroys: u64,
    /// Bound receivers woken by a signal on `lockfree`'s shared path.
    pub bound_wakes: u64,
    /// Suspends and resumes made on `lockfree`'s shared path.
    pub shared_controls: u64,
    /// Histories found linearizable.
    pub linearizable: u64,
    /// Linearizability searches that ran out of budget.
    pub lin_inconclusive: u64,
    /// Single-core runs compared with the reference regime.
    pub determinism_checks: u64,
    /// Runs stopped by the step or wall-time bound.
    pub bound_stops: u64,
    /// Violations found.
    pub violations: u64,
}

impl Stats {
    /// Add `o` to `self`.
    pub fn add(&mut self, o: &Stats) {
        self.programs += o.programs;
        self.syscalls += o.syscalls;
        self.entries += o.entries;
        self.invariant_checks += o.invariant_checks;
        self.messages += o.messages;
        self.replies += o.replies;
        self.notifications += o.notifications;
        self.subsystem_calls += o.subsystem_calls;
        self.log_messages += o.log_messages;
        self.faults += o.faults;
        self.faults_answered += o.faults_answered;
        self.frame_ops += o.frame_ops;
        self.maps_refused += o.maps_refused;
        self.shared_pages += o.shared_pages;
        self.shared_destroys += o.shared_destroys;
        self.bound_wakes += o.bound_wakes;
        self.shared_controls += o.shared_controls;
        self.linearizable += o.linearizable;
        self.lin_inconclusive += o.lin_inconclusive;
        self.determinism_checks += o.determinism_checks;
        self.bound_stops += o.bound_stops;
        self.violations += o.violations;
    }
}

/// A violation found under a regime.
#[derive(Clone, Debug)]
pub struct Finding {
    /// The regime.
    pub regime: &'static str,
    /// For determinism: the regime it was compared with.
    pub reference: Option<&'static str>,
    /// The violation.
    pub violation: Violation,
}

/// Everything checking one program found.
#[derive(Debug, Default)]
pub struct ProgramResult {
    /// Per regime run (regimes that do not apply are absent).
    pub stats: Vec<(&'static str, Stats)>,
    /// Violations.
    pub findings: Vec<Finding>,
    /// A run hung: its core threads are abandoned; stop verifying.
    pub hung: bool,
}

/// What a single-core run's threads saw: compared across regimes.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Trace {
    attempts: Vec<(usize, Option<usize>, u64, Observed)>,
    interrupts: Vec<(usize, usize, u8)>,
    finals: Vec<Option<granule_kernel::ThreadInfo>>,
    halted: Vec<bool>,
    stop: Stop,
}

impl Trace {
    fn of(rec: &RunRecord) -> Self {
        Self {
            attempts: rec
                .attempts
                .iter()
                .map(|a| {
                    let seen = match a.observed {
                        Observed::Completed(o) => Observed::Completed(o.comparable(a.op)),
                        other => other,
                    };
                    (a.thread, a.op_index, a.attempt, seen)
                })
                .collect(),
            interrupts: rec.interrupts.iter().map(|i| (i.thread, i.op_index, i.line)).collect(),
            finals: rec.finals.clone(),
            halted: rec.halted.clone(),
            stop: rec.stop,
        }
    }

    /// The first difference from `other`, described.
    fn diff(&self, other: &Trace, me: &str, them: &str) -> Option<String> {
        for (i, (a, b)) in self.attempts.iter().zip(&other.attempts).enumerate() {
            if a != b {
                return Some(format!(
                    "system call #{i}: {me} saw t{} op {:?} attempt {} -> {:?}; {them} saw t{} op {:?} attempt {} -> {:?}",
                    a.0, a.1, a.2, a.3, b.0, b.1, b.2, b.3
                ));
            }
        }
        if self.attempts.len() != other.attempts.len() {
            return Some(format!("{me} made {} system calls, {them} {}", self.attempts.len(), other.attempts.len()));
        }
        if self.interrupts != other.interrupts {
            return Some(format!("interrupts taken: {me} {:?}; {them} {:?}", self.interrupts, other.interrupts));
        }
        if self.finals != other.finals || self.halted != other.halted {
            return Some(format!(
                "final threads (state, halted): {me} {:?} {:?}; {them} {:?} {:?}",
                self.finals, self.halted, other.finals, other.halted
            ));
        }
        (self.stop != other.stop).then(|| format!("{me} stopped {:?}, {them} {:?}", self.stop, other.stop))
    }
}

/// Whether `regime` runs programs like `prog`.
pub fn applies(regime: &str, prog: &Program) -> bool {
    kind(regime).is_some_and(|k| k != Kind::SingleCoreOnly || prog.cores == 1)
}

/// Run `prog` under `regime` once and judge the run.
fn check_one(prog: &Program, regime: &'static str, opts: &Options) -> (Stats, Vec<Violation>, Option<Trace>, bool) {
    let mut s = Stats { programs: 1, ..Stats::default() };
    let out = run_named(regime, prog, &opts.run).expect("regimes are validated before use");
    let mut v = out.violations;
    let mut trace = None;
    if opts.dump {
        match &out.record {
            Some(rec) => eprint!("under {regime}: {rec}"),
            None => eprintln!("under {regime}: no record"),
        }
        for x in &v {
            eprintln!("  {x}");
        }
    }
    if let Some(rec) = &out.record {
        s.syscalls = rec.syscalls;
        s.entries = rec.entries;
        s.invariant_checks = rec.invariant_checks;
        s.shared_pages = rec.shared_pages;
        s.shared_destroys = rec.shared_destroys;
        s.bound_wakes = rec.bound_wakes;
        s.shared_controls = rec.shared_controls;
        if matches!(rec.stop, Stop::Steps | Stop::Wall) {
            s.bound_stops = 1;
        }
        if v.is_empty() {
            let (c, cv) = conservation::check(prog, rec, opts.inject_bug);
            (s.messages, s.replies, s.notifications) = (c.messages, c.replies, c.notifications);
            (s.subsystem_calls, s.log_messages) = (c.subsystem_calls, c.log_messages);
            (s.faults, s.faults_answered) = (c.faults, c.faults_answered);
            (s.frame_ops, s.maps_refused) = (c.frame_ops, c.maps_refused);
            v.extend(cv);
        }
        if v.is_empty() {
            match linearize::check(prog, rec) {
                linearize::Verdict::Linearizable => s.linearizable = 1,
                linearize::Verdict::Inconclusive => s.lin_inconclusive = 1,
                linearize::Verdict::TooLarge => {}
                linearize::Verdict::Violation(d) => v.push(Violation { check: Check::Linearizability, detail: d }),
            }
        }
        if prog.cores == 1 && rec.stop != Stop::Wall && v.is_empty() {
            trace = Some(Trace::of(rec));
        }
    }
    s.violations = v.len() as u64;
    (s, v, trace, out.hung)
}

/// Run `prog` under each of `regimes` that applies and check everything.
pub fn check_program(prog: &Program, regimes: &[&'static str], opts: &Options) -> ProgramResult {
    let mut res = ProgramResult::default();
    let mut traces: Vec<(&'static str, Trace)> = Vec::new();
    if opts.dump {
        eprint!("{prog}");
    }
    for &r in regimes.iter().filter(|r| applies(r, prog)) {
        let (stats, v, trace, hung) = check_one(prog, r, opts);
        res.stats.push((r, stats));
        res.findings.extend(v.into_iter().map(|violation| Finding { regime: r, reference: None, violation }));
        if let Some(t) = trace {
            traces.push((r, t));
        }
        if hung {
            res.hung = true;
            return res;
        }
    }
    if let Some(((r0, t0), rest)) = traces.split_first() {
        for (r, t) in rest {
            let stats = &mut res.stats.iter_mut().find(|(n, _)| n == r).expect("ran").1;
            stats.determinism_checks += 1;
            if let Some(d) = t0.diff(t, r0, r) {
                stats.violations += 1;
                let detail = format!("the single-core program gave different results under {r0} and {r}: {d}");
                let violation = Violation { check: Check::Determinism, detail };
                res.findings.push(Finding { regime: r, reference: Some(r0), violation });
            }
        }
        if let Some((_, s)) = res.stats.iter_mut().find(|(n, _)| n == r0) {
            s.determinism_checks += !rest.is_empty() as u64;
        }
    }
    res
}

/// Whether `prog` still shows a violation of `check` under `regime` (for
/// determinism: compared with `reference`), in any of `tries` runs.
pub fn still_fails(
    prog: &Program,
    regime: &'static str,
    reference: Option<&'static str>,
    check: Check,
    opts: &Options,
    tries: usize,
) -> bool {
    let regimes: Vec<&'static str> = reference.into_iter().chain([regime]).collect();
    (0..tries).any(|_| {
        let r = check_program(prog, &regimes, opts);
        r.findings.iter().any(|f| f.regime == regime && f.violation.check == check) || r.hung
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::generate;
    use crate::program::Shape;
    use crate::regimes::REGIMES;

    #[test]
    fn single_core_programs_agree_across_regimes_and_checks_pass() {
        let opts = Options::default();
        let mut checked = 0;
        let here: Vec<&str> =
            REGIMES.iter().copied().filter(|r| *r != "rtm" || granule_sync::rtm::Rtm::new().is_ok()).collect();
        for seed in 0..40 {
            let p = generate(seed, 2);
            let r = check_program(&p, &here, &opts);
            assert!(r.findings.is_empty(), "seed {seed}: {:?}", r.findings);
            if p.shape == Shape::SingleCore {
                let bkl = &r.stats.iter().find(|(n, _)| *n == "bkl").unwrap().1;
                checked += bkl.determinism_checks;
            }
        }
        assert!(checked > 0);
    }

    #[test]
    fn traces_that_differ_are_told_apart() {
        let p = (0..100).map(|s| generate(s, 1)).find(|p| p.total_ops() > 4).unwrap();
        let opts = RunOptions::default();
        let a = run_named("none", &p, &opts).unwrap().record.unwrap();
        let b = run_named("bkl", &p, &opts).unwrap().record.unwrap();
        let (ta, tb) = (Trace::of(&a), Trace::of(&b));
        assert_eq!(ta.diff(&tb, "none", "bkl"), None);
        let mut c = b.clone();
        c.attempts.pop();
        assert!(ta.diff(&Trace::of(&c), "none", "bkl").is_some());
    }
}
