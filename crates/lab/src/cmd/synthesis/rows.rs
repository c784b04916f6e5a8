//! The rows of the seed's Tables 2–4, each measured as single kernel
//! entries on a two-core kernel driven by one thread (`drive.rs`). A row
//! with a requester and a dispatcher part times the requesting entry on
//! core 0 and the target core's entry that carries it out (its IPI) as two
//! samples, as the seed splits them.

use anyhow::{anyhow, bail, Result};
use granule_hosted::granule_kernel::abi::{InvocationLabel, ObjectType, Sysno, Word, CAP_INIT_CNODE, CAP_INIT_VSPACE};
use granule_hosted::granule_kernel::{FaultKind, MessageInfo, Regime};
use granule_verify::encode::Invocation;

use super::drive::{timed, Driver};

/// Cycles of each iteration, per part (`[total]` or `[requester,
/// dispatcher]`).
pub type Samples = Vec<Vec<u64>>;

/// Priority of the threads the rows drive (below the root's).
pub(super) const PRIO: Word = 100;

/// A context switch between two threads of one address space, or of two:
/// thread A yields to B on core 1 and back.
pub fn switch<R: Regime>(d: &mut Driver<'_, R>, n: usize, oh: u64, two_spaces: bool) -> Result<Samples> {
    let other = if two_spaces { d.create(ObjectType::VSpace, 0)? } else { CAP_INIT_VSPACE };
    let (a, _) = d.thread(1, PRIO, CAP_INIT_VSPACE)?;
    let (b, _) = d.thread(1, PRIO, other)?;
    let before = d.current(1);
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        let (c, _) = timed(oh, || d.sys(1, Sysno::Yield, 0, MessageInfo::default(), false));
        v.push(c);
    }
    if d.current(1) == before && n % 2 == 1 {
        bail!("yield did not switch threads on core 1");
    }
    for s in [a, b] {
        let _ = d.delete(s, false)?;
    }
    Ok(vec![v])
}

/// Thread create: retype a TCB, configure, set priority and core, start.
pub fn create<R: Regime>(d: &mut Driver<'_, R>, n: usize, oh: u64) -> Result<Samples> {
    let s = d.slot();
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        let ut = d.untyped();
        let mut c = d.invoke_cycles(0, ut, &Invocation::retype(ObjectType::Tcb, 0, s, 1), oh)?;
        for inv in [
            Invocation::configure(CAP_INIT_CNODE, CAP_INIT_VSPACE),
            Invocation::set_priority(PRIO),
            Invocation::set_affinity(1),
            Invocation::start(0x1000, 0),
        ] {
            c += d.invoke_cycles(0, s, &inv, oh)?;
        }
        v.push(c);
        let _ = d.delete(s, false)?;
    }
    Ok(vec![v])
}

/// The requester's cycles and the dispatcher's (other cores' entries during
/// the stall protocol, then the entries the final plan asks for) of
/// invoking `cptr` from core 0.
fn split<R: Regime>(d: &mut Driver<'_, R>, cptr: Word, inv: &Invocation, oh: u64) -> Result<(u64, u64)> {
    let r = d.invoke_timed(0, cptr, inv, oh)?;
    r.out.map_err(|e| anyhow!("{:?}: {e}", inv.label))?;
    let mut disp = r.others;
    for core in r.plan.ipis.iter() {
        let (c, _) = timed(oh, || d.ipi(core));
        disp += c;
    }
    Ok((r.requester, disp))
}

/// Thread destroy of a thread running on core 1: the root's delete, then
/// core 1's entries that stop and free it.
pub fn destroy<R: Regime>(d: &mut Driver<'_, R>, n: usize, oh: u64) -> Result<Samples> {
    let s = d.slot();
    let (mut req, mut disp) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for _ in 0..n {
        d.retype_into(ObjectType::Tcb, 0, s)?;
        d.start_in(s, 1, PRIO, CAP_INIT_VSPACE)?;
        if d.current(1).is_none() {
            bail!("the thread to destroy is not running on core 1");
        }
        let (r, c) = split(d, CAP_INIT_CNODE, &Invocation::delete(s), oh)?;
        req.push(r);
        disp.push(c);
    }
    Ok(vec![req, disp])
}

/// Suspend a thread running on core 1 (the root's call, then core 1's
/// entries), and resume it, not in the run queue any more (the root's call,
/// then core 1's entry that runs it).
pub fn suspend_resume<R: Regime>(d: &mut Driver<'_, R>, n: usize, oh: u64) -> Result<(Samples, Samples)> {
    let (t, _) = d.thread(1, PRIO, CAP_INIT_VSPACE)?;
    let (mut sreq, mut sdisp, mut rreq, mut rdisp) = (vec![], vec![], vec![], vec![]);
    for _ in 0..n {
        let (r, c) = split(d, t, &Invocation::suspend(), oh)?;
        sreq.push(r);
        sdisp.push(c);
        if d.current(1).is_some() {
            bail!("the suspended thread still runs on core 1");
        }
        let (r, c) = split(d, t, &Invocation::resume(), oh)?;
        rreq.push(r);
        rdisp.push(c);
        if d.current(1).is_none() {
            bail!("the resumed thread does not run on core 1");
        }
    }
    let _ = d.delete(t, false)?;
    Ok((vec![sreq, sdisp], vec![rreq, rdisp]))
}

/// Resume a thread whose suspension its core has not carried out yet (the
/// seed's "still in the queue" case): the root suspends a thread that is
/// ready on core 1 but not running (a higher-priority thread runs there),
/// and resumes it: it is queued again without its core being involved.
pub fn resume_queued<R: Regime>(d: &mut Driver<'_, R>, n: usize, oh: u64) -> Result<Samples> {
    let (t, _) = d.thread(1, PRIO, CAP_INIT_VSPACE)?;
    let (hog, _) = d.thread(1, PRIO + 1, CAP_INIT_VSPACE)?;
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        let (_, _) = split(d, t, &Invocation::suspend(), oh)?;
        let (r, c) = split(d, t, &Invocation::resume(), oh)?;
        v.push(r + c);
    }
    let _ = d.delete(hog, false)?;
    let _ = d.delete(t, false)?;
    Ok(vec![v])
}

/// Suspend a ready thread of the caller's own core (the seed's
/// uniprocessor case), then resume it: each the root's call alone, which
/// interrupts no other core. `[suspend, resume]`, one part each.
pub fn suspend_resume_here<R: Regime>(d: &mut Driver<'_, R>, n: usize, oh: u64) -> Result<(Samples, Samples)> {
    let (t, tid) = d.thread(0, PRIO, CAP_INIT_VSPACE)?;
    let (mut sv, mut rv) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for _ in 0..n {
        for (inv, v, stopped) in [(Invocation::suspend(), &mut sv, true), (Invocation::resume(), &mut rv, false)] {
            let (r, c) = split(d, t, &inv, oh)?;
            if c != 0 {
                bail!("{:?} of a thread of the caller's core interrupted another core", inv.label);
            }
            if d.stopped(tid) != Some(stopped) {
                bail!("{:?} left the thread of core 0 {}", inv.label, if stopped { "runnable" } else { "stopped" });
            }
            v.push(r);
        }
    }
    let _ = d.delete(t, false)?;
    Ok((vec![sv], vec![rv]))
}

/// Signal a thread: the root signals a notification a thread of core 1
/// waits on, then core 1's entry runs the woken thread.
pub fn signal<R: Regime>(d: &mut Driver<'_, R>, n: usize, oh: u64) -> Result<Samples> {
    let ntfn = d.create(ObjectType::Notification, 0)?;
    let (t, _) = d.thread(1, PRIO, CAP_INIT_VSPACE)?;
    let out = time_signals(d, n, oh, ntfn, (Sysno::Wait, ntfn))?;
    for s in [t, ntfn] {
        let _ = d.delete(s, false)?;
    }
    Ok(out)
}

/// Signal a bound receiver: the root signals a notification bound to a
/// thread of core 1 that waits in an endpoint receive (seL4's bound
/// notification: the receive ends with the badge), then core 1's entry
/// runs the woken thread.
pub fn signal_bound<R: Regime>(d: &mut Driver<'_, R>, n: usize, oh: u64) -> Result<Samples> {
    let ntfn = d.create(ObjectType::Notification, 0)?;
    let ep = d.create(ObjectType::Endpoint, 0)?;
    let (t, _) = d.thread(1, PRIO, CAP_INIT_VSPACE)?;
    d.invoke(0, t, &Invocation::bind_notification(ntfn), false)?;
    let out = time_signals(d, n, oh, ntfn, (Sysno::Recv, ep))?;
    for s in [t, ep, ntfn] {
        let _ = d.delete(s, false)?;
    }
    Ok(out)
}

/// `n` times: core 1's thread blocks in `block` (untimed), the root
/// signals `ntfn` (the requester's part), and core 1's interrupt runs the
/// woken thread (the dispatcher's).
fn time_signals<R: Regime>(
    d: &mut Driver<'_, R>,
    n: usize,
    oh: u64,
    ntfn: Word,
    (block, on): (Sysno, Word),
) -> Result<Samples> {
    let (mut req, mut disp) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for _ in 0..n {
        let _ = d.sys(1, block, on, MessageInfo::default(), false);
        if d.current(1).is_some() {
            bail!("the thread of core 1 did not block in {block:?}");
        }
        let (c, plan) = timed(oh, || d.sys(0, Sysno::Signal, ntfn, MessageInfo::default(), true));
        req.push(c);
        if !plan.ipis.contains(1) {
            bail!("signalling a thread of core 1 blocked in {block:?} did not interrupt it");
        }
        let (c, _) = timed(oh, || d.ipi(1));
        disp.push(c);
        if d.current(1).is_none() {
            bail!("the signalled thread does not run on core 1");
        }
    }
    Ok(vec![req, disp])
}

/// Allocate a 4 KiB frame (retype) and free it (delete). After the first
/// iteration every allocation takes the frame the last free put on the
/// untyped's free list, and zeroes it.
pub fn page_alloc_free<R: Regime>(d: &mut Driver<'_, R>, n: usize, oh: u64) -> Result<(Samples, Samples)> {
    let s = d.slot();
    let (mut a, mut f) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for _ in 0..n {
        let ut = d.untyped();
        a.push(d.invoke_cycles(0, ut, &Invocation::retype(ObjectType::Frame, 12, s, 1), oh)?);
        f.push(d.invoke_cycles(0, CAP_INIT_CNODE, &Invocation::delete(s), oh)?);
    }
    Ok((vec![a], vec![f]))
}

/// Map a frame into an address space and unmap it.
pub fn map_unmap<R: Regime>(d: &mut Driver<'_, R>, n: usize, oh: u64) -> Result<(Samples, Samples)> {
    let f = d.create(ObjectType::Frame, 12)?;
    let vs = d.create(ObjectType::VSpace, 0)?;
    let (mut m, mut u) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for _ in 0..n {
        m.push(d.invoke_cycles(0, f, &Driver::<R>::inv(InvocationLabel::FrameMap, &[vs, 0]), oh)?);
        u.push(d.invoke_cycles(0, f, &Driver::<R>::inv(InvocationLabel::FrameUnmap, &[]), oh)?);
    }
    let _ = d.delete(f, false)?;
    let _ = d.delete(vs, false)?;
    Ok((vec![m], vec![u]))
}

/// Zero-fill 4 KiB of memory in user code (the kernel's own zeroing of a
/// frame from a free list is part of "allocate page").
pub fn zero_fill(n: usize, oh: u64) -> Samples {
    let mut page = vec![1u8; 8192];
    let off = page.as_ptr().align_offset(4096);
    let mut v = Vec::with_capacity(n);
    for i in 0..n {
        let p = &mut page[off..off + 4096];
        p[0] = i as u8;
        let (c, _) = timed(oh, || {
            // SAFETY: `p` is 4096 writable bytes of `page`.
            unsafe { core::ptr::write_bytes(std::hint::black_box(p.as_mut_ptr()), 0, 4096) };
        });
        std::hint::black_box(&page);
        v.push(c);
    }
    vec![v]
}

/// A memory-access exception delivered to a fault handler: thread F on
/// core 1 faults, and its handler H (core 1, above F) waits on the fault
/// endpoint with a reply object. The fault entry is timed: the fault
/// message's delivery, up to the switch to H. H's answer (`ReplyRecv` with
/// label 0), which lets F go on where it faulted, is not.
pub fn fault<R: Regime>(d: &mut Driver<'_, R>, n: usize, oh: u64) -> Result<Samples> {
    let ep = d.create(ObjectType::Endpoint, 0)?;
    let reply = d.create(ObjectType::Reply, 0)?;
    let (h, ht) = d.thread(1, PRIO + 1, CAP_INIT_VSPACE)?;
    let _ = d.sys_reply(1, Sysno::Recv, ep, MessageInfo::default(), reply, false);
    let (f, ft) = d.thread(1, PRIO, CAP_INIT_VSPACE)?;
    d.invoke(0, f, &Invocation::set_fault_handler(ep), false)?;
    let mut v = Vec::with_capacity(n);
    for i in 0..n {
        if d.current(1) != Some(ft) {
            bail!("the faulting thread does not run on core 1");
        }
        let kind = FaultKind::MemoryAccess { addr: 0x1000 * i as Word, write: false };
        let (c, _) = timed(oh, || d.fault(1, kind));
        v.push(c);
        if d.current(1) != Some(ht) {
            bail!("the fault handler did not get the exception");
        }
        let _ = d.sys_reply(1, Sysno::ReplyRecv, ep, MessageInfo::default(), reply, false);
    }
    for s in [f, h, ep, reply] {
        let _ = d.delete(s, false)?;
    }
    Ok(vec![v])
}

/// A null procedure call: `n` calls of a function that is not inlined,
/// timed together less the same loop without the call (one call is below
/// the cycle counter's resolution); the median of 9 such samples.
pub fn null_call(n: usize, oh: u64) -> f64 {
    #[inline(never)]
    fn null_procedure(x: u64) -> u64 {
        std::hint::black_box(x)
    }
    let v: Vec<f64> = (0..9)
        .map(|_| {
            let (call, _) = timed(oh, || {
                for i in 0..n as u64 {
                    std::hint::black_box(null_procedure(std::hint::black_box(i)));
                }
            });
            let (empty, _) = timed(oh, || {
                for i in 0..n as u64 {
                    std::hint::black_box(std::hint::black_box(i));
                }
            });
            call.saturating_sub(empty) as f64 / n as f64
        })
        .collect();
    crate::stats::median(&v).unwrap_or(0.0)
}
