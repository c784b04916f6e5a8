//! The linearizability check: is a small concurrent history explained by
//! some sequential execution of the kernel?
//!
//! **History.** Each kernel entry a thread made for an operation is an
//! event with a real-time interval (the global counter before the trap and
//! after the return) and the result its thread observed. A blocking call is
//! one event, its *invocation*: where it enters the endpoint or notification
//! queue; its result is whatever the kernel wrote before the thread next ran
//! (or by the end of the run). Interrupt steps and the root's rescue calls
//! (`driver.rs`) are events too. Left out:
//! yields, ticks and halts (only the scheduler sees them), and attempts the
//! kernel restarted *at once* (their own entry ran the thread again with
//! `restart` set: a stall request, or a call another core discarded while
//! its core was trapped — either way the attempt did nothing). Attempts
//! restarted later (a blocked call cancelled), and attempts whose result was
//! never seen (the thread was destroyed), are *optional*: the search may
//! place them or leave them out. Under a regime that may restart a
//! `ReplyRecv` after delivering its reply (`fine`, whose receive half can
//! fail to be held past the point of no return: kernel `hold.rs`), a
//! restarted `ReplyRecv` is optional too and may also be placed as its
//! reply half alone: a plain `Reply` on the same reply object, its result
//! not compared.
//!
//! **Oracle.** A candidate order is replayed on a fresh kernel under `none`
//! with one core, built with the same capability layout, every thread on
//! core 0 (`SetAffinity` targets mapped to core 0). To let exactly thread
//! `u` make its call, the root thread (top priority) raises `u` above every
//! other thread and parks on a notification; `u`, now the only candidate,
//! traps with the recorded registers and message words; an interrupt routed
//! to the root's notification brings the root back, which acknowledges it
//! and lowers `u` again. Priorities only decide who runs, never a result, so
//! this control leaves every result as a plain sequential kernel gives it.
//!
//! **Search.** Depth first over orders consistent with real time (an event
//! that returned before another was invoked comes first) and each thread's
//! program order, earliest-returning first. After each step every thread's
//! latest call that completed in the oracle must have exactly the observed
//! result (error, restart, message info, badge, and the message words the
//! message info covers); a thread must
//! be runnable in the oracle to make its next call; at the end, calls seen
//! blocked must still be blocked. Histories of more than [`MAX_EVENTS`]
//! events, or with more than [`MAX_OPTIONAL`] optional ones, are not checked
//! (conservation and invariants cover them); the search stops after
//! [`BUDGET`] oracle steps and then says *inconclusive*, not *violation*.

use granule_kernel::abi::{InvocationLabel, Sysno};
use granule_kernel::{MessageInfo, NoLock, SyscallArgs, ThreadStatus, Word};

use crate::program::{Op, Program, SCRATCH_SLOTS};
use crate::record::{Observed, RunRecord};
use crate::regimes::{Choose, Pick, Which};
use crate::setup::{self, invoke, irq_of, park_irq, Booted, ORACLE_IDLE_PRIORITY, ORACLE_RUN_PRIORITY};
use crate::user::{write_inputs, Outcome};
use crate::{config, encode};

/// Longest history checked.
pub const MAX_EVENTS: usize = 24;
/// Most optional events in a checked history.
pub const MAX_OPTIONAL: usize = 3;
/// Oracle steps one check may take.
pub const BUDGET: usize = 3000;

/// The verdict on one run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Some sequential order explains every result.
    Linearizable,
    /// The history is too long (or has too many optional events) to check.
    TooLarge,
    /// The search ran out of budget.
    Inconclusive,
    /// No sequential order explains the results (why, for the deepest try).
    Violation(String),
}

/// What an event must show in the oracle.
#[derive(Clone, Copy, Debug)]
enum Expect {
    Outcome(Outcome),
    Restart,
    Pending,
    Anything,
}

#[derive(Clone, Copy, Debug)]
enum What {
    Syscall { op: Op, args: SyscallArgs, words: crate::user::Inputs },
    Interrupt { line: u8 },
}

/// How a placed event is replayed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Form {
    /// As it was made.
    Whole,
    /// A `ReplyRecv`'s reply half alone, result not compared.
    ReplyHalf,
}

#[derive(Clone, Copy, Debug)]
struct Event {
    thread: usize,
    what: What,
    inv: u64,
    ret: u64,
    optional: bool,
    expect: Expect,
    /// The forms it may be placed in.
    forms: &'static [Form],
}

impl Event {
    /// What to replay, and what to expect, when placed in `form`.
    fn form(&self, form: Form) -> (What, Expect) {
        match (form, self.what) {
            (Form::ReplyHalf, What::Syscall { args, words, .. }) => {
                let args = SyscallArgs::new(Sysno::Reply as Word, 0, args.info, args.reply);
                (What::Syscall { op: Op::Reply, args, words }, Expect::Anything)
            }
            _ => (self.what, self.expect),
        }
    }
}

impl std::fmt::Display for Event {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.what {
            What::Syscall { op, .. } => write!(f, "t{} `{op}`", self.thread),
            What::Interrupt { line } => write!(f, "t{} (interrupt line {line})", self.thread),
        }
    }
}

/// The one form of most events.
const WHOLE: &[Form] = &[Form::Whole];

/// The events of a run's history, or `None` when it is too large.
fn history(rec: &RunRecord) -> Option<Vec<Event>> {
    let mut es = Vec::new();
    for a in &rec.attempts {
        let Some(op) = a.op.filter(|op| !op.scheduling_only()) else { continue };
        let replied = rec.reply_then_restart && matches!(op, Op::ReplyRecv { .. });
        let (optional, expect, forms) = match a.observed {
            Observed::Completed(o) => (false, Expect::Outcome(o), WHOLE),
            // Restarted by its own entry: its reply may have been delivered.
            Observed::Restarted if a.immediate && replied => (true, Expect::Anything, &[Form::ReplyHalf][..]),
            Observed::Restarted if a.immediate => continue,
            Observed::Restarted if replied => (true, Expect::Restart, &[Form::Whole, Form::ReplyHalf][..]),
            Observed::Restarted => (true, Expect::Restart, WHOLE),
            Observed::Pending(_) => (false, Expect::Pending, WHOLE),
            Observed::Unknown => (true, Expect::Anything, WHOLE),
        };
        let what = What::Syscall { op, args: a.args, words: a.words };
        es.push(Event { thread: a.thread, what, inv: a.inv, ret: a.ret, optional, expect, forms });
    }
    for i in &rec.interrupts {
        let what = What::Interrupt { line: i.line };
        let (optional, expect) = (false, Expect::Anything);
        es.push(Event { thread: i.thread, what, inv: i.inv, ret: i.ret, optional, expect, forms: WHOLE });
    }
    let optional = es.iter().filter(|e| e.optional).count();
    (es.len() <= MAX_EVENTS && optional <= MAX_OPTIONAL).then_some(es)
}

/// Check the run `rec` of `prog`.
pub fn check(prog: &Program, rec: &RunRecord) -> Verdict {
    let Some(mut es) = history(rec) else { return Verdict::TooLarge };
    es.sort_by_key(|e| e.inv);
    // Real-time order plus each thread's program order (a thread's calls on
    // different cores can overlap when one was discarded by a migration).
    let preds: Vec<u64> = (0..es.len())
        .map(|i| {
            (0..es.len())
                .filter(|&j| j != i && (es[j].ret < es[i].inv || (es[j].thread == es[i].thread && j < i)))
                .fold(0u64, |m, j| m | 1 << j)
        })
        .collect();
    let mut s = Search { prog, rec_cores: rec.cores, es: &es, preds, budget: BUDGET, replay: None, deepest: None };
    let mut path = Vec::new();
    match s.dfs(0, &mut path) {
        Ok(true) => Verdict::Linearizable,
        Ok(false) => {
            let (depth, why) = s.deepest.unwrap_or((0, "no order to try".into()));
            let listing: Vec<String> = es.iter().map(|e| format!("{e} [{}..{}]", e.inv, e.ret)).collect();
            Verdict::Violation(format!(
                "no sequential order of the {} events explains the results; history: {}; deepest order tried \
                 ({depth} events) failed: {why}",
                es.len(),
                listing.join(", ")
            ))
        }
        Err(Exhausted) => Verdict::Inconclusive,
    }
}

#[derive(Debug)]
struct Exhausted;

struct Search<'a> {
    prog: &'a Program,
    rec_cores: usize,
    es: &'a [Event],
    preds: Vec<u64>,
    budget: usize,
    replay: Option<Replay>,
    deepest: Option<(usize, String)>,
}

impl Search<'_> {
    /// Extend `path` (event, the form it was placed in or `None` if left
    /// out) to a full order; `done` = decided events.
    fn dfs(&mut self, done: u64, path: &mut Vec<(usize, Option<Form>)>) -> Result<bool, Exhausted> {
        let n = self.es.len();
        if done.count_ones() as usize == n {
            let es = self.es;
            let r = self.replay_at(path).and_then(|r| r.finish(es));
            return Ok(match r {
                Ok(()) => true,
                Err(e) => {
                    self.fail(path.len(), e);
                    false
                }
            });
        }
        let mut cands: Vec<usize> = (0..n).filter(|&i| done & (1 << i) == 0 && self.preds[i] & !done == 0).collect();
        cands.sort_by_key(|&i| self.es[i].ret);
        for i in cands {
            for &form in self.es[i].forms {
                if self.budget == 0 {
                    return Err(Exhausted);
                }
                self.budget -= 1;
                let (es, cores) = (self.es, self.rec_cores);
                let applied = self.replay_at(path).and_then(|r| r.apply(es, (i, form), cores));
                match applied {
                    Ok(()) => {
                        path.push((i, Some(form)));
                        if self.dfs(done | 1 << i, path)? {
                            return Ok(true);
                        }
                        path.pop();
                    }
                    Err(e) => {
                        let e = format!("placing {} next: {e}", self.es[i]);
                        self.fail(path.len(), e);
                        self.replay = None;
                    }
                }
            }
            // The replay may have moved past `path`: `replay_at` rebuilds it.
            if self.es[i].optional {
                path.push((i, None));
                if self.dfs(done | 1 << i, path)? {
                    return Ok(true);
                }
                path.pop();
            }
        }
        Ok(false)
    }

    fn fail(&mut self, depth: usize, why: String) {
        if self.deepest.as_ref().map_or(true, |(d, _)| depth >= *d) {
            self.deepest = Some((depth, why));
        }
    }

    /// The replay positioned after the placed events of `path`.
    fn replay_at(&mut self, path: &[(usize, Option<Form>)]) -> Result<&mut Replay, String> {
        let want = placed(path);
        if self.replay.as_ref().map_or(true, |r| r.applied != want) {
            let mut r = Replay::new(self.prog)?;
            for &p in &want {
                r.apply(self.es, p, self.rec_cores).map_err(|e| format!("oracle replay not repeatable: {e}"))?;
            }
            self.replay = Some(r);
        }
        Ok(self.replay.as_mut().expect("just built"))
    }
}

/// An event placed, and its form.
type Placed = (usize, Form);

fn placed(path: &[(usize, Option<Form>)]) -> Vec<Placed> {
    path.iter().filter_map(|&(i, f)| Some((i, f?))).collect()
}

/// The sequential oracle positioned after some events.
struct Replay {
    o: Booted<NoLock>,
    /// Each thread's latest placed call, and whether its result matched.
    last: Vec<Option<(Placed, bool)>>,
    applied: Vec<Placed>,
}

impl Replay {
    fn new(prog: &Program) -> Result<Self, String> {
        // `none` on one core, driven by this one OS thread.
        let none = <Pick<{ Which::None as u8 }> as Choose>::make(&config::for_programs(1, prog.policy), None);
        let o = setup::boot(prog, 1, none, true).map_err(|e| format!("oracle: {e}"))?;
        Ok(Self { o, last: vec![None; prog.threads.len() + 1], applied: Vec::new() })
    }

    fn apply(&mut self, es: &[Event], i: Placed, real_cores: usize) -> Result<(), String> {
        let e = es[i.0];
        match e.form(i.1).0 {
            What::Syscall { op, args, mut words } => {
                if let Some((p, false)) = self.last[e.thread] {
                    self.verify(es, p, true)?;
                }
                if let Op::SetAffinity { .. } = op {
                    if words[0] < real_cores as Word {
                        words[0] = 0;
                    }
                }
                self.issue(e.thread, args, &words)?;
                self.last[e.thread] = Some((i, false));
            }
            What::Interrupt { line } => {
                let irq = irq_of(&self.o.boot, line as usize);
                let p = self.o.kernel.interrupt(&mut self.o.handles[0], irq);
                if p.run != Some(self.o.root) {
                    return Err(format!("oracle: the interrupt switched to {:?}, not the root", p.run));
                }
            }
        }
        self.applied.push(i);
        for t in 0..self.last.len() {
            if let Some((p, false)) = self.last[t] {
                self.verify(es, p, false)?;
            }
        }
        Ok(())
    }

    /// The thread of index `u` (past the program threads: the root).
    fn tid(&self, u: usize) -> granule_kernel::ThreadId {
        self.o.threads.get(u).copied().unwrap_or(self.o.root)
    }

    /// Let thread `u` alone make one system call.
    fn issue(&mut self, u: usize, args: SyscallArgs, words: &crate::user::Inputs) -> Result<(), String> {
        let (k, root, tid) = (&self.o.kernel, self.o.root, self.tid(u));
        let h = &mut self.o.handles[0];
        if tid == root {
            // The root's rescue steps: it is current already.
            // SAFETY: the root is the thread core 0's last plan runs and no
            // kernel entry is in progress (one OS thread drives this kernel).
            write_inputs(unsafe { &mut *k.ipc_buffer(root) }, words);
            let p = k.syscall(h, args);
            if p.run != Some(root) {
                return Err(format!("oracle: the root's own call switched to {:?}", p.run));
            }
            return Ok(());
        }
        let status = k.thread_info(h, tid).map(|i| i.status);
        if status != Some(ThreadStatus::Ready) {
            return Err(format!("t{u} cannot make its call in this order: it is {status:?}"));
        }
        self.set_priority(u, ORACLE_RUN_PRIORITY)?;
        let (k, l, h) = (&self.o.kernel, self.o.layout, &mut self.o.handles[0]);
        let p = k.syscall(h, encode::syscall(Sysno::Wait, l.park(), MessageInfo::default(), 0));
        if p.run != Some(tid) {
            return Err(format!("oracle: parking the root ran {:?}, not t{u}", p.run));
        }
        // SAFETY: `tid` is the thread core 0's last plan runs and no kernel
        // entry is in progress (one OS thread drives this kernel).
        write_inputs(unsafe { &mut *k.ipc_buffer(tid) }, words);
        let _ = encode::enter_trap(k, h, args);
        let p = k.interrupt(h, park_irq(&self.o.boot));
        if p.run != Some(root) {
            return Err(format!("oracle: the root's interrupt ran {:?}, not the root", p.run));
        }
        let _ = invoke(k, h, root, l.park_handler(), InvocationLabel::IrqAckIrq, &[])?
            .map_err(|e| format!("oracle: acknowledging the root's interrupt: {e}"))?;
        self.set_priority(u, ORACLE_IDLE_PRIORITY)
    }

    /// The root sets thread `u`'s priority through any capability naming it
    /// (its own slot may have been deleted while a copy keeps it alive);
    /// nothing to do if `u` is gone.
    fn set_priority(&mut self, u: usize, prio: u8) -> Result<(), String> {
        let (k, l, root, tid) = (&self.o.kernel, self.o.layout, self.o.root, self.tid(u));
        let h = &mut self.o.handles[0];
        if k.thread_info(h, tid).is_none() {
            return Ok(());
        }
        let mut slots = std::iter::once(l.tcb(u)).chain((0..SCRATCH_SLOTS as u8).map(|j| l.scratch(j)));
        let cap = slots
            .find(|&s| k.thread_of_cap(h, root, s) == Some(tid))
            .ok_or_else(|| format!("oracle: no capability names t{u}"))?;
        invoke(k, h, root, cap, InvocationLabel::TcbSetPriority, &[prio as Word])?
            .map(|_| ())
            .map_err(|e| format!("oracle: setting t{u}'s priority: {e}"))
    }

    /// Thread `u`'s result fields now (`None`: the thread is gone).
    fn outcome(&mut self, u: usize) -> Option<Outcome> {
        let tid = self.tid(u);
        self.o.kernel.thread_info(&mut self.o.handles[0], tid)?;
        // SAFETY: one OS thread drives the oracle and no entry is in
        // progress, so nothing else touches the buffer while it is read.
        Some(Outcome::read(unsafe { &*self.o.kernel.ipc_buffer(tid) }))
    }

    /// Compare event `p` (its thread's latest) with the oracle;
    /// `must_complete`: the thread moves on, so the call must be over.
    fn verify(&mut self, es: &[Event], p: Placed, must_complete: bool) -> Result<(), String> {
        let e = es[p.0];
        let (what, expect) = e.form(p.1);
        let Some(out) = self.outcome(e.thread) else {
            return match expect {
                Expect::Anything => Ok(()),
                _ => Err(format!("{e} is unfinished when its thread is destroyed")),
            };
        };
        let op = match what {
            What::Syscall { op, .. } => Some(op),
            What::Interrupt { .. } => None,
        };
        let same = |o: Outcome| o.comparable(op).meaningful();
        let ok = match (expect, out.completed()) {
            (Expect::Anything, _) => true,
            (Expect::Outcome(o), true) if same(o) == same(out) => true,
            (Expect::Outcome(o), true) => {
                return Err(format!("{e} gives `{out}` ({:?}) but returned `{o}` ({:?})", same(out), same(o)))
            }
            (Expect::Restart, true) if out.restart => true,
            (Expect::Restart, true) => return Err(format!("{e} gives `{out}` but was restarted")),
            (Expect::Pending, true) => return Err(format!("{e} gives `{out}` but was still blocked at the end")),
            (_, false) if must_complete => return Err(format!("{e} is still blocked, but its thread moved on")),
            (_, false) => false,
        };
        if ok {
            self.last[e.thread] = Some((p, true));
        }
        Ok(())
    }

    /// At the end: every call seen finished must be finished as seen; every
    /// call seen blocked must be blocked.
    fn finish(&mut self, es: &[Event]) -> Result<(), String> {
        for t in 0..self.last.len() {
            if let Some((p, false)) = self.last[t] {
                let pending = matches!(es[p.0].form(p.1).1, Expect::Pending);
                self.verify(es, p, !pending)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::RunOptions;
    use crate::generate::generate;
    use crate::program::{Shape, ThreadSpec};
    use crate::regimes::run_named;
    use crate::user::DATA;

    /// A small two-core program whose run under `bkl` has a checkable history
    /// in which some receive completed with a message.
    fn sample() -> (Program, RunRecord, usize) {
        for seed in 0..2000 {
            let p = generate(seed, 2);
            if p.shape != Shape::Small {
                continue;
            }
            let out = run_named("bkl", &p, &RunOptions::default()).unwrap();
            let Some(rec) = out.record else { continue };
            let got = rec.attempts.iter().position(|a| {
                a.op.is_some_and(|op| op.receive_ep().is_some())
                    && matches!(a.observed, Observed::Completed(o) if o.ok() && o.label() == DATA)
            });
            if let (Some(i), Verdict::Linearizable) = (got, check(&p, &rec)) {
                return (p, rec, i);
            }
        }
        panic!("no suitable program");
    }

    #[test]
    fn a_real_run_is_linearizable_and_a_tampered_one_is_not() {
        let (p, rec, i) = sample();
        // A different message than the one received.
        let mut bad = rec.clone();
        if let Observed::Completed(o) = &mut bad.attempts[i].observed {
            o.words[1] += 1;
        }
        assert!(matches!(check(&p, &bad), Verdict::Violation(_)), "a corrupted receipt must not linearize");
        // The receive seen as still blocked at the end.
        let mut bad = rec.clone();
        bad.attempts[i].observed = Observed::Pending(ThreadStatus::BlockedOnRecv);
        assert!(matches!(check(&p, &bad), Verdict::Violation(_)), "a receipt that never happened");
    }

    /// t1 receives t0's call, then `ReplyRecv`s; t0 then polls.
    fn reply_then_poll() -> Program {
        let thread =
            |prio: u8, ops: Vec<Op>| ThreadSpec { core: 0, prio, victim: false, fault_ep: None, bound: None, ops };
        Program {
            seed: 0,
            cores: 1,
            shape: Shape::SingleCore,
            endpoints: 1,
            notifications: 1,
            irq_lines: 0,
            threads: vec![
                thread(100, vec![Op::Call { ep: 0 }, Op::Poll { ntfn: 0 }]),
                thread(150, vec![Op::Recv { ep: 0, reply: true }, Op::ReplyRecv { ep: 0 }]),
            ],
            policy: Default::default(),
        }
    }

    #[test]
    fn a_replyrecv_restarted_after_its_reply_linearizes_only_where_the_regime_may_do_that() {
        let p = reply_then_poll();
        let rec = run_named("bkl", &p, &RunOptions::default()).unwrap().record.expect("a record");
        assert!(!rec.reply_then_restart, "bkl never restarts a call it changed something for");
        assert_eq!(check(&p, &rec), Verdict::Linearizable);
        // As under `fine` when the receive half cannot be held: the first
        // attempt delivers the reply and restarts; t0 runs on and polls; the
        // reissued `ReplyRecv` (nothing to reply to now) blocks.
        let rr = rec.attempts.iter().position(|a| matches!(a.op, Some(Op::ReplyRecv { .. }))).expect("a ReplyRecv");
        let poll = rec.attempts.iter().find(|a| matches!(a.op, Some(Op::Poll { .. }))).expect("a poll").ret;
        let mut split = rec.clone();
        let mut again = split.attempts[rr].clone();
        (again.attempt, again.inv, again.ret) = (1, poll + 1, poll + 2);
        (split.attempts[rr].observed, split.attempts[rr].immediate) = (Observed::Restarted, true);
        split.attempts.insert(rr + 1, again);
        assert!(matches!(check(&p, &split), Verdict::Violation(_)), "a restart that did nothing cannot let t0 run on");
        split.reply_then_restart = true;
        assert_eq!(check(&p, &split), Verdict::Linearizable, "its reply half explains t0's reply");
        // Seen restarted later (its own entry ran another thread): still explained.
        split.attempts[rr].immediate = false;
        assert_eq!(check(&p, &split), Verdict::Linearizable);
        let fine = run_named("fine", &p, &RunOptions::default()).unwrap().record.expect("a record");
        assert!(fine.reply_then_restart, "fine's receive half may fail to be held after the reply");
    }
}
