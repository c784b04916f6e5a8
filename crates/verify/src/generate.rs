//! Random programs from a seed: the same seed (and `--cores`) always gives
//! the same program.
//!
//! Three shapes: *small* programs (2–3 threads, 1–3 operations each, on
//! several cores) whose histories are short enough for the linearizability
//! check; *single-core* programs (everything on core 0) compared across
//! regimes for determinism; and *large* programs (3–6 threads, 8–30
//! operations each) checked for conservation and invariants. Every program
//! mixes IPC of every kind, notifications, interrupts, capability copy /
//! mint / delete / revoke / retype, and thread configure / suspend / resume /
//! priority / migration / deletion / fault handler, memory faults (delivered
//! to the handler, which answers them as calls), and the subsystems (sysctl get / set /
//! add / remove / next, kernel-log append / read), weighted towards IPC so
//! that messages meet. The subsystems' locking policy follows the seed.

use rand::distributions::{Distribution, WeightedIndex};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use granule_kernel::SubsystemLocking;

use crate::program::{
    CapRef, Op, Program, RetypeKind, Shape, ThreadSpec, FRAMES, MAX_ENDPOINTS, MAX_IRQ_LINES, MAX_NOTIFICATIONS,
    PAGE_ADDRS, SCRATCH_SLOTS, SYSCTL_LEAVES, SYSCTL_OWN,
};

/// Lowest and highest priority a program gives its threads.
const PRIORITIES: std::ops::RangeInclusive<u8> = 10..=100;

/// The program of `seed` for a machine of `cores` cores.
pub fn generate(seed: u64, cores: usize) -> Program {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let shape = if cores == 1 {
        Shape::SingleCore
    } else {
        match rng.gen_range(0..20) {
            0..=4 => Shape::SingleCore,
            5..=11 => Shape::Small,
            _ => Shape::Large,
        }
    };
    let cores = if shape == Shape::SingleCore { 1 } else { cores };
    let (threads, ops) = match shape {
        Shape::Small => (rng.gen_range(2..=3), 1..=3),
        Shape::SingleCore => (rng.gen_range(2..=4), 4..=14),
        Shape::Large => (rng.gen_range(3..=6), 8..=30),
    };
    let endpoints = rng.gen_range(1..=if shape == Shape::Small { 2 } else { MAX_ENDPOINTS });
    let notifications = rng.gen_range(1..=MAX_NOTIFICATIONS);
    let irq_lines = rng.gen_range(0..=if shape == Shape::Small { 1 } else { MAX_IRQ_LINES });
    let specs: Vec<ThreadSpec> = (0..threads)
        .map(|i| ThreadSpec {
            core: if i < cores { i } else { rng.gen_range(0..cores) },
            prio: rng.gen_range(PRIORITIES),
            victim: i > 0 && rng.gen_range(0..4) == 0,
            fault_ep: (rng.gen_range(0..4) != 0).then(|| rng.gen_range(0..endpoints) as u8),
            bound: None,
            ops: Vec::new(),
        })
        .collect();
    let mut specs = specs;
    bind_notifications(seed, notifications, &mut specs);
    // The policy follows the seed, so consecutive programs cover them all.
    // (The bindings come from a stream of their own, so adding them left
    // every seed's objects, threads and operations as they were.)
    let policy = SubsystemLocking::ALL[(seed % SubsystemLocking::ALL.len() as u64) as usize];
    let mut p = Program { seed, cores, shape, endpoints, notifications, irq_lines, threads: specs, policy };
    for i in 0..threads {
        let n = rng.gen_range(ops.clone());
        let ops = (0..n).map(|_| op(&mut rng, &p, i)).collect();
        p.threads[i].ops = ops;
    }
    p
}

/// Bind each notification, with even odds, to a thread that receives on an
/// endpoint (not a victim) and has none yet: the bound-notification wake-up
/// out of an endpoint receive (`lockfree`'s shared claim, `bound.rs`).
fn bind_notifications(seed: u64, notifications: usize, specs: &mut [ThreadSpec]) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xb0b0_0d17_5eed_0001);
    for k in 0..notifications {
        let free: Vec<usize> = (0..specs.len()).filter(|&i| !specs[i].victim && specs[i].bound.is_none()).collect();
        if !free.is_empty() && rng.gen_range(0..2) == 0 {
            specs[free[rng.gen_range(0..free.len())]].bound = Some(k as u8);
        }
    }
}

/// What kind of operation to draw, before its arguments.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Send,
    NbSend,
    Call,
    Recv,
    NbRecv,
    Reply,
    ReplyRecv,
    Signal,
    Wait,
    Poll,
    Yield,
    Tick,
    Irq,
    IrqAck,
    Copy,
    Mint,
    Delete,
    Revoke,
    Retype,
    Page,
    Suspend,
    Resume,
    SetPriority,
    SetAffinity,
    Configure,
    Kill,
    SetFaultHandler,
    Fault,
    Map,
    Unmap,
    FrameAddress,
    SysctlGet,
    SysctlSet,
    SysctlAdd,
    SysctlRemove,
    SysctlNext,
    KlogAppend,
    KlogRead,
}

/// Relative weights: (kind, weight in small programs, weight otherwise).
const WEIGHTS: &[(Kind, u32, u32)] = &[
    (Kind::Send, 10, 9),
    (Kind::NbSend, 4, 3),
    (Kind::Call, 10, 9),
    (Kind::Recv, 12, 11),
    (Kind::NbRecv, 4, 3),
    (Kind::Reply, 5, 4),
    (Kind::ReplyRecv, 6, 7),
    (Kind::Signal, 6, 5),
    (Kind::Wait, 4, 4),
    (Kind::Poll, 3, 3),
    (Kind::Yield, 1, 2),
    (Kind::Tick, 1, 2),
    (Kind::Irq, 2, 2),
    (Kind::IrqAck, 2, 2),
    (Kind::Copy, 2, 3),
    (Kind::Mint, 1, 2),
    (Kind::Delete, 2, 3),
    (Kind::Revoke, 1, 2),
    (Kind::Retype, 1, 2),
    (Kind::Page, 2, 3),
    (Kind::Suspend, 2, 3),
    (Kind::Resume, 3, 4),
    (Kind::SetPriority, 1, 2),
    (Kind::SetAffinity, 2, 4),
    (Kind::Configure, 1, 1),
    (Kind::Kill, 2, 2),
    (Kind::SetFaultHandler, 2, 2),
    (Kind::Fault, 3, 3),
    (Kind::Map, 3, 3),
    (Kind::Unmap, 2, 2),
    (Kind::FrameAddress, 2, 2),
    (Kind::SysctlGet, 3, 3),
    (Kind::SysctlSet, 2, 2),
    (Kind::SysctlAdd, 2, 2),
    (Kind::SysctlRemove, 2, 2),
    (Kind::SysctlNext, 1, 1),
    (Kind::KlogAppend, 3, 3),
    (Kind::KlogRead, 3, 3),
];

/// One operation for thread `me` of `p`.
fn op(rng: &mut ChaCha8Rng, p: &Program, me: usize) -> Op {
    let small = p.shape == Shape::Small;
    let weights = WEIGHTS.iter().map(|&(_, s, l)| if small { s } else { l });
    let dist = WeightedIndex::new(weights).expect("weights are positive");
    loop {
        let k = WEIGHTS[dist.sample(rng)].0;
        if let Some(op) = draw(rng, p, me, k) {
            return op;
        }
    }
}

/// An operation of kind `k` for thread `me`, or `None` when `k` does not fit
/// (a victim receiving, no interrupt lines, nobody to kill).
fn draw(rng: &mut ChaCha8Rng, p: &Program, me: usize, k: Kind) -> Option<Op> {
    let victim = p.threads[me].victim;
    let ep = rng.gen_range(0..p.endpoints) as u8;
    let ntfn = rng.gen_range(0..p.notifications) as u8;
    let thread = rng.gen_range(0..p.threads.len()) as u8;
    let scratch = rng.gen_range(0..SCRATCH_SLOTS) as u8;
    let frame = rng.gen_range(0..FRAMES) as u8;
    Some(match k {
        Kind::Send => Op::Send { ep },
        Kind::NbSend => Op::NbSend { ep },
        Kind::Call => Op::Call { ep },
        Kind::Recv if !victim => Op::Recv { ep, reply: rng.gen_range(0..8) != 0 },
        Kind::NbRecv if !victim => Op::NbRecv { ep, reply: rng.gen_range(0..4) != 0 },
        Kind::Reply if !victim => Op::Reply,
        Kind::ReplyRecv if !victim => Op::ReplyRecv { ep },
        Kind::Signal => Op::Signal { ntfn },
        Kind::Wait => Op::Wait { ntfn },
        Kind::Poll => Op::Poll { ntfn },
        Kind::Yield => Op::Yield,
        Kind::Tick => Op::Tick,
        Kind::Irq if p.irq_lines > 0 => Op::Irq { line: rng.gen_range(0..p.irq_lines) as u8 },
        Kind::IrqAck if p.irq_lines > 0 => Op::IrqAck { line: rng.gen_range(0..p.irq_lines) as u8 },
        Kind::Copy => Op::Copy { src: source(rng, p), dest: scratch },
        Kind::Mint => {
            let src = if rng.gen_bool(0.5) { CapRef::Ep(ep) } else { CapRef::Ntfn(ntfn) };
            Op::Mint { src, dest: scratch, badge: rng.gen_range(1..=255) }
        }
        // Now and then a frame's only capability: the frame is destroyed.
        Kind::Delete if rng.gen_range(0..8) == 0 => Op::Delete { slot: CapRef::Frame(frame) },
        Kind::Delete => Op::Delete { slot: CapRef::Scratch(scratch) },
        Kind::Revoke => Op::Revoke {
            slot: match rng.gen_range(0..6) {
                0 => CapRef::Ep(ep),
                1 => CapRef::Untyped,
                _ => CapRef::Scratch(scratch),
            },
        },
        // A 4 KiB frame allocated into, or deleted from, one of two scratch
        // slots: freed frames go on the untyped's free list and the next
        // allocation takes one (under `lockfree` on the shared path).
        Kind::Page if rng.gen_bool(0.5) => Op::Retype { kind: RetypeKind::Frame, dest: scratch % 2 },
        Kind::Page => Op::Delete { slot: CapRef::Scratch(scratch % 2) },
        Kind::Retype => {
            let kinds = [
                RetypeKind::Endpoint,
                RetypeKind::Notification,
                RetypeKind::Reply,
                RetypeKind::Tcb,
                RetypeKind::CNode,
                RetypeKind::Frame,
            ];
            Op::Retype { kind: kinds[rng.gen_range(0..kinds.len())], dest: scratch }
        }
        // Suspending oneself is allowed but rare (nobody may resume it).
        Kind::Suspend if thread as usize != me || rng.gen_range(0..4) == 0 => Op::Suspend { t: thread },
        Kind::Resume => Op::Resume { t: thread },
        Kind::SetPriority => Op::SetPriority { t: thread, prio: rng.gen_range(PRIORITIES) },
        Kind::SetAffinity => {
            // Now and then a core that does not exist (a range error).
            let core = if rng.gen_range(0..16) == 0 { p.cores } else { rng.gen_range(0..p.cores) };
            Op::SetAffinity { t: thread, core: core as u8 }
        }
        Kind::Configure => Op::Configure { t: thread, vspace: rng.gen_bool(0.5) },
        Kind::Kill => {
            let victims: Vec<u8> =
                (0..p.threads.len()).filter(|&v| v != me && p.threads[v].victim).map(|v| v as u8).collect();
            if victims.is_empty() {
                return None;
            }
            Op::Kill { t: victims[rng.gen_range(0..victims.len())] }
        }
        Kind::SetFaultHandler => Op::SetFaultHandler { t: thread, ep: (rng.gen_range(0..4) != 0).then_some(ep) },
        Kind::Fault => Op::Fault,
        Kind::Map => Op::Map { frame: CapRef::Frame(frame), page: rng.gen_range(0..PAGE_ADDRS.len()) as u8 },
        Kind::Unmap => Op::Unmap { frame: CapRef::Frame(frame) },
        Kind::FrameAddress => Op::FrameAddress { frame: CapRef::Frame(frame) },
        Kind::SysctlGet => Op::SysctlGet { leaf: rng.gen_range(0..SYSCTL_LEAVES) },
        Kind::SysctlSet => Op::SysctlSet { leaf: rng.gen_range(0..SYSCTL_LEAVES), value: rng.gen_range(0..=255) },
        Kind::SysctlAdd => Op::SysctlAdd { leaf: rng.gen_range(SYSCTL_OWN..SYSCTL_LEAVES) },
        Kind::SysctlRemove => Op::SysctlRemove { leaf: rng.gen_range(SYSCTL_OWN..SYSCTL_LEAVES) },
        Kind::SysctlNext => Op::SysctlNext { leaf: rng.gen_range(0..SYSCTL_LEAVES) },
        Kind::KlogAppend => Op::KlogAppend,
        Kind::KlogRead => Op::KlogRead,
        _ => return None,
    })
}

/// A capability worth copying: an endpoint, a notification, a victim's TCB,
/// the program untyped, a frame, or whatever a scratch slot holds.
fn source(rng: &mut ChaCha8Rng, p: &Program) -> CapRef {
    let victims: Vec<u8> = (0..p.threads.len()).filter(|&v| p.threads[v].victim).map(|v| v as u8).collect();
    match rng.gen_range(0..8) {
        0..=1 => CapRef::Ep(rng.gen_range(0..p.endpoints) as u8),
        2 => CapRef::Ntfn(rng.gen_range(0..p.notifications) as u8),
        3 if !victims.is_empty() => CapRef::Tcb(victims[rng.gen_range(0..victims.len())]),
        4 => CapRef::Untyped,
        5 => CapRef::Frame(rng.gen_range(0..FRAMES) as u8),
        _ => CapRef::Scratch(rng.gen_range(0..SCRATCH_SLOTS) as u8),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_program_and_victims_never_receive() {
        for seed in 0..300 {
            let p = generate(seed, 2);
            assert_eq!(p, generate(seed, 2));
            assert!(p.cores == 1 || p.shape != Shape::SingleCore);
            for (i, t) in p.threads.iter().enumerate() {
                assert!(t.core < p.cores);
                if t.victim {
                    assert!(t.ops.iter().all(|op| op.receive_ep().is_none() && *op != Op::Reply), "seed {seed}");
                }
                for op in &t.ops {
                    if let Op::Kill { t: v } = op {
                        assert!(p.threads[*v as usize].victim && *v as usize != i);
                    }
                }
            }
        }
        assert!((0..100).all(|s| generate(s, 1).cores == 1));
    }

    #[test]
    fn without_thread_remaps_references() {
        let p = (0..1000).map(|s| generate(s, 2)).find(|p| p.threads.len() >= 3).unwrap();
        let q = p.without_thread(0).unwrap();
        assert_eq!(q.threads.len(), p.threads.len() - 1);
        for t in &q.threads {
            for op in &t.ops {
                assert!(op.thread_ref().map_or(true, |r| (r as usize) < q.threads.len()));
            }
        }
    }
}
