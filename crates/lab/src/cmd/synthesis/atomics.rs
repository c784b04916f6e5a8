//! The atomic instructions of `lockfree`'s thread operations, counted at
//! run time (as `granule ipc` counts its calls'): the same driver as the
//! timed rows, on a kernel under `LockFree::counting`, the counts read
//! around each part. A separate pass, so counting does not touch the
//! timings.

use anyhow::{anyhow, bail, Result};
use granule_hosted::granule_kernel::abi::{InvocationLabel, ObjectType, Sysno, Word, CAP_INIT_CNODE, CAP_INIT_VSPACE};
use granule_hosted::granule_kernel::{CountingLockFree, ExitPlan, FaultKind, Kernel, LockFree, MessageInfo, RmwCounts};
use granule_verify::encode::Invocation;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

use super::drive::Driver;
use crate::limits::AtomicCost;
use crate::output::Record;

/// `synthesis_atomics`: the atomic read-modify-writes of one part of one
/// thread operation under `lockfree`, per operation (the mean over the
/// iterations; uncontended, so every count is the path's fixed number).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AtomicsRecord {
    pub operation: Cow<'static, str>,
    /// `requester` or `dispatcher` (the target core's entry).
    pub part: Cow<'static, str>,
    pub iterations: usize,
    pub atomics: f64,
    /// Of them: `xchg` (a stop request's owed-interrupt flag, set and
    /// taken; an inbox's take-all; a management entry's `SeqCst` store).
    pub xchg: f64,
    /// `lock xadd`: the management gate's reader side, one per entry (a
    /// `lock add`), and a management entry's ticket.
    pub xadd: f64,
    pub cmpxchg: f64,
    pub cmpxchg16b: f64,
    /// Whether any part ran as a management entry (the regime counts them):
    /// the operation was not lock-free.
    pub management: bool,
    /// What these atomics alone cost, from this machine's measured
    /// instruction costs (`granule info`'s), cycles.
    pub atomic_floor_cycles: Option<f64>,
    /// The timed row's `lockfree` cycles less `none`'s (the table's means),
    /// where the row times exactly this part.
    pub extra_over_none_cycles: Option<f64>,
    /// The target: the extra cost at most 1.5 × the atomics' floor.
    pub within_target: Option<bool>,
}

impl Record for AtomicsRecord {
    const KIND: &'static str = "synthesis_atomics";
}

/// The operations counted, in record order, with their parts.
pub const OPERATIONS: [(&str, &[&str]); 13] = [
    ("suspend", SPLIT),
    ("resume, not in the run queue", SPLIT),
    ("suspend + resume before the core acts", SPLIT),
    ("signal", SPLIT),
    ("memory access exception", &["whole"]),
    ("map page", &["whole"]),
    ("unmap page", &["whole"]),
    ("allocate page, needs zeroing", &["whole"]),
    ("free page", &["whole"]),
    ("destroy", SPLIT),
    ("signal, bound receiver", SPLIT),
    ("suspend, same core", &["whole"]),
    ("resume, same core", &["whole"]),
];

/// The parts of an operation carried out by another core.
const SPLIT: &[&str] = &["requester", "dispatcher"];

/// The `part` of a split operation's record for both parts together.
pub const WHOLE_OF_SPLIT: &str = "requester + dispatcher";

type K = Kernel<CountingLockFree>;

fn counts(d: &Driver<'_, CountingLockFree>) -> RmwCounts {
    d.k.regime().rmw_counts()
}

/// The root's invocation of `cptr`, which must complete at once.
fn call(d: &mut Driver<'_, CountingLockFree>, cptr: Word, inv: &Invocation) -> Result<ExitPlan> {
    match d.root_call(cptr, inv) {
        (plan, Some(Ok(_))) => Ok(plan),
        (_, Some(Err(e))) => Err(anyhow!("{:?}: {e}", inv.label)),
        (_, None) => Err(anyhow!("{:?} restarted", inv.label)),
    }
}

/// Count `n` iterations of each operation on a fresh two-core kernel:
/// `[operation][part]` sums.
fn count(n: usize) -> Result<Vec<[RmwCounts; 2]>> {
    let (k, boot, hs): (K, _, _) =
        Kernel::boot(super::config(), LockFree::counting(super::config().cores)).map_err(|e| anyhow!("boot: {e}"))?;
    let mut d = Driver::new(&k, &boot, hs)?;
    let (t, _) = d.thread(1, super::rows::PRIO, CAP_INIT_VSPACE)?;
    let ntfn = d.create(ObjectType::Notification, 0)?;
    let (w, _) = d.thread(1, super::rows::PRIO + 1, CAP_INIT_VSPACE)?;
    let mut sums = vec![[RmwCounts::default(); 2]; OPERATIONS.len()];
    // Faults are counted last, on threads of their own (`count_faults`).
    // The waiter blocks; `t` runs on core 1 below it.
    let _ = d.sys(1, Sysno::Wait, ntfn, MessageInfo::default(), false);
    for _ in 0..n {
        // Suspend, then resume: each the root's call, then core 1's IPI.
        for (op, inv) in [(0, Invocation::suspend()), (1, Invocation::resume())] {
            let c0 = counts(&d);
            let plan = call(&mut d, t, &inv)?;
            let c1 = counts(&d);
            for core in plan.ipis.iter() {
                let _ = d.ipi(core);
            }
            sums[op][0] += c1.since(&c0);
            sums[op][1] += counts(&d).since(&c1);
        }
        if d.current(1).is_none() {
            bail!("the resumed thread does not run on core 1");
        }
        // Both before core 1 takes the interrupt: the request is cancelled.
        let c0 = counts(&d);
        let _ = call(&mut d, t, &Invocation::suspend())?;
        let _ = call(&mut d, t, &Invocation::resume())?;
        let c1 = counts(&d);
        // The suspend's interrupt.
        let _ = d.ipi(1);
        sums[2][0] += c1.since(&c0);
        sums[2][1] += counts(&d).since(&c1);
        // Signal the waiter: the root's signal, then core 1 runs it, and it
        // waits again (not counted).
        let c0 = counts(&d);
        let plan = d.sys(0, Sysno::Signal, ntfn, MessageInfo::default(), true);
        let c1 = counts(&d);
        for core in plan.ipis.iter() {
            let _ = d.ipi(core);
        }
        sums[3][0] += c1.since(&c0);
        sums[3][1] += counts(&d).since(&c1);
        let _ = d.sys(1, Sysno::Wait, ntfn, MessageInfo::default(), false);
    }
    let _ = (d.delete(w, false)?, d.delete(t, false)?);
    sums[4][0] = count_faults(&mut d, n)?;
    [sums[5][0], sums[6][0]] = count_maps(&mut d, n)?;
    [sums[7][0], sums[8][0]] = count_pages(&mut d, n)?;
    sums[9] = count_destroys(&mut d, n)?;
    sums[10] = count_bound_signals(&mut d, n)?;
    [sums[11][0], sums[12][0]] = count_here(&mut d, n)?;
    Ok(sums)
}

/// `n` maps and unmaps of a frame at one page of a fresh address space, as
/// the timed rows do them (its first map also takes the page table from the
/// pool).
fn count_maps(d: &mut Driver<'_, CountingLockFree>, n: usize) -> Result<[RmwCounts; 2]> {
    let f = d.create(ObjectType::Frame, 12)?;
    let vs = d.create(ObjectType::VSpace, 0)?;
    let mut sums = [RmwCounts::default(); 2];
    for _ in 0..n {
        for (i, inv) in [
            Driver::<CountingLockFree>::inv(InvocationLabel::FrameMap, &[vs, 0]),
            Driver::<CountingLockFree>::inv(InvocationLabel::FrameUnmap, &[]),
        ]
        .iter()
        .enumerate()
        {
            let c0 = counts(d);
            let _ = call(d, f, inv)?;
            sums[i] += counts(d).since(&c0);
        }
    }
    for s in [f, vs] {
        let _ = d.delete(s, false)?;
    }
    Ok(sums)
}

/// `n` allocations and frees of a 4 KiB frame in one slot, as the timed
/// rows do them, after one uncounted round (the first allocation carves
/// the frame: a management entry; the others take it from the untyped's
/// free list on the shared path).
fn count_pages(d: &mut Driver<'_, CountingLockFree>, n: usize) -> Result<[RmwCounts; 2]> {
    let (s, ut) = (d.slot(), d.untyped());
    let (alloc, free) = (Invocation::retype(ObjectType::Frame, 12, s, 1), Invocation::delete(s));
    let _ = (call(d, ut, &alloc)?, call(d, CAP_INIT_CNODE, &free)?);
    let mut sums = [RmwCounts::default(); 2];
    for _ in 0..n {
        let c0 = counts(d);
        let _ = call(d, ut, &alloc)?;
        let c1 = counts(d);
        let _ = call(d, CAP_INIT_CNODE, &free)?;
        sums[0] += c1.since(&c0);
        sums[1] += counts(d).since(&c1);
    }
    Ok(sums)
}

/// `n` destroys of a thread running on core 1, as the timed row does them:
/// the root's delete, then core 1's interrupt. Creating the next thread is
/// a management entry, which also frees the last one (not counted).
fn count_destroys(d: &mut Driver<'_, CountingLockFree>, n: usize) -> Result<[RmwCounts; 2]> {
    let s = d.slot();
    let mut sums = [RmwCounts::default(); 2];
    for _ in 0..n {
        d.retype_into(ObjectType::Tcb, 0, s)?;
        d.start_in(s, 1, super::rows::PRIO, CAP_INIT_VSPACE)?;
        if d.current(1).is_none() {
            bail!("the thread to destroy is not running on core 1");
        }
        let c0 = counts(d);
        let plan = call(d, CAP_INIT_CNODE, &Invocation::delete(s))?;
        let c1 = counts(d);
        for core in plan.ipis.iter() {
            let _ = d.ipi(core);
        }
        sums[0] += c1.since(&c0);
        sums[1] += counts(d).since(&c1);
    }
    Ok(sums)
}

/// `n` signals to a notification bound to a thread of core 1 waiting in
/// an endpoint receive, as the timed row (its receives not counted).
fn count_bound_signals(d: &mut Driver<'_, CountingLockFree>, n: usize) -> Result<[RmwCounts; 2]> {
    let ntfn = d.create(ObjectType::Notification, 0)?;
    let ep = d.create(ObjectType::Endpoint, 0)?;
    let (t, _) = d.thread(1, super::rows::PRIO, CAP_INIT_VSPACE)?;
    d.invoke(0, t, &Invocation::bind_notification(ntfn), false)?;
    let mut sums = [RmwCounts::default(); 2];
    for _ in 0..n {
        let _ = d.sys(1, Sysno::Recv, ep, MessageInfo::default(), false);
        if d.current(1).is_some() {
            bail!("the bound receiver did not block");
        }
        let c0 = counts(d);
        let plan = d.sys(0, Sysno::Signal, ntfn, MessageInfo::default(), true);
        let c1 = counts(d);
        for core in plan.ipis.iter() {
            let _ = d.ipi(core);
        }
        sums[0] += c1.since(&c0);
        sums[1] += counts(d).since(&c1);
    }
    for s in [t, ep, ntfn] {
        let _ = d.delete(s, false)?;
    }
    Ok(sums)
}

/// `n` suspends and resumes of a ready thread of core 0 by the root, as
/// the timed rows.
fn count_here(d: &mut Driver<'_, CountingLockFree>, n: usize) -> Result<[RmwCounts; 2]> {
    let (t, _) = d.thread(0, super::rows::PRIO, CAP_INIT_VSPACE)?;
    let mut sums = [RmwCounts::default(); 2];
    for _ in 0..n {
        for (i, inv) in [Invocation::suspend(), Invocation::resume()].iter().enumerate() {
            let c0 = counts(d);
            let plan = call(d, t, inv)?;
            sums[i] += counts(d).since(&c0);
            if !plan.ipis.is_empty() {
                bail!("{:?} of a thread of the caller's core interrupted another core", inv.label);
            }
        }
    }
    let _ = d.delete(t, false)?;
    Ok(sums)
}

/// `n` memory-access faults of a thread on core 1, each delivered to its
/// handler waiting there (as the timed row; the answers not counted).
fn count_faults(d: &mut Driver<'_, CountingLockFree>, n: usize) -> Result<RmwCounts> {
    let ep = d.create(ObjectType::Endpoint, 0)?;
    let reply = d.create(ObjectType::Reply, 0)?;
    let (h, _) = d.thread(1, super::rows::PRIO + 1, CAP_INIT_VSPACE)?;
    let _ = d.sys_reply(1, Sysno::Recv, ep, MessageInfo::default(), reply, false);
    let (f, _) = d.thread(1, super::rows::PRIO, CAP_INIT_VSPACE)?;
    d.invoke(0, f, &Invocation::set_fault_handler(ep), false)?;
    let mut sum = RmwCounts::default();
    for i in 0..n {
        let c0 = counts(d);
        let plan = d.fault(1, FaultKind::MemoryAccess { addr: 0x1000 * i as Word, write: false });
        sum += counts(d).since(&c0);
        if !plan.ipis.is_empty() {
            bail!("a fault delivered on its own core interrupted another");
        }
        let _ = d.sys_reply(1, Sysno::ReplyRecv, ep, MessageInfo::default(), reply, false);
    }
    for s in [f, h, ep, reply] {
        let _ = d.delete(s, false)?;
    }
    Ok(sum)
}

/// The timed row that times exactly operation `op`'s parts, if any.
pub fn timed_row(op: &str) -> Option<&'static str> {
    match op {
        "suspend" => Some("suspend"),
        "resume, not in the run queue" => Some("resume, not in the run queue"),
        "signal" => Some("signal"),
        "memory access exception" => Some("memory access exception"),
        "map page" => Some("map page"),
        "unmap page" => Some("unmap page"),
        "allocate page, needs zeroing" => Some("allocate page, needs zeroing"),
        "free page" => Some("free page"),
        "destroy" => Some("destroy"),
        "signal, bound receiver" => Some("signal, bound receiver"),
        "suspend, same core" => Some("suspend, same core"),
        "resume, same core" => Some("resume, same core"),
        _ => None,
    }
}

/// The `synthesis_atomics` records of `n` iterations; `costs` are this
/// machine's instruction costs, `extra(row, part)` the timed `lockfree`
/// cycles less `none`'s.
pub fn records(
    n: usize,
    costs: &[AtomicCost],
    extra: impl Fn(&str, &str) -> Option<f64>,
) -> Result<Vec<AtomicsRecord>> {
    let sums = count(n)?;
    let per = |x: u64| x as f64 / n as f64;
    let mut out = Vec::new();
    for (&(op, names), parts) in OPERATIONS.iter().zip(&sums) {
        let management = parts.iter().any(|p| p.management > 0);
        // A split operation is also judged whole (the target is
        // per operation; the seed splits its times).
        let mut both = parts[0];
        both += parts[1];
        let whole = (names.len() == 2).then_some((WHOLE_OF_SPLIT, &both));
        for (part, s) in names.iter().copied().zip(parts).chain(whole) {
            let extra_cycles = match part {
                WHOLE_OF_SPLIT => timed_row(op).and_then(|row| Some(extra(row, SPLIT[0])? + extra(row, SPLIT[1])?)),
                _ => timed_row(op).and_then(|row| extra(row, part)),
            };
            out.push(AtomicsRecord {
                operation: Cow::Borrowed(op),
                part: Cow::Borrowed(part),
                iterations: n,
                atomics: per(s.total()),
                xchg: per(s.xchg),
                xadd: per(s.xadd),
                cmpxchg: per(s.cmpxchg),
                cmpxchg16b: per(s.cmpxchg16b),
                management,
                atomic_floor_cycles: crate::limits::atomics_floor(s, 0, n as f64, costs),
                extra_over_none_cycles: extra_cycles,
                within_target: None,
            });
            if let Some(r) = out.last_mut() {
                r.within_target = r.atomic_floor_cycles.zip(r.extra_over_none_cycles).map(|(f, e)| e <= 1.5 * f);
            }
        }
    }
    Ok(out)
}
