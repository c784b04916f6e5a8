//! Message conservation, replies and notification words, from one run's
//! record.
//!
//! Every message names its sender, sequence number, attempt and endpoint
//! (with a checksum), so receipts can be matched against sends:
//!
//! * a received message is intact, was sent, through the endpoint it was
//!   received on, with the label of its kind of send; none is received twice;
//! * each receiver gets each sender's messages in the order they were sent;
//! * a send's fate agrees with what its sender saw: a completed `Send`, or a
//!   `Call` that completed (with a reply, or failing for lack of a reply
//!   object), was received exactly once; a failed send, or one still blocked
//!   sending when the run ended, never; a `Call` still waiting for its reply,
//!   exactly once; an `NBSend`, or an attempt whose result nobody saw (its
//!   thread was destroyed), at most once;
//! * a `Call` that completed got a reply echoing its own message, from a
//!   thread that did receive that message;
//! * a memory fault is a `Call` the kernel makes (its identity packed into
//!   the fault address): one its handler answered was received exactly
//!   once, as a fault message; one restarted (its delivery cancelled, or
//!   stopped for want of a handler or by a non-zero answer) at most once;
//! * no notification word delivers a badge bit more often than it was
//!   signalled (by threads' `Signal`s and interrupts).

use std::collections::HashMap;

use granule_kernel::abi::Error;
use granule_kernel::{ThreadStatus, Word};

use crate::program::{Op, Program};
use crate::record::{Attempt, Observed, RunRecord};
use crate::setup::{irq_badge, signal_badge};
use crate::user::{
    decode_fault, decode_log, decode_message, decode_reply, MsgId, CALL, DATA, FAULT, REPLY, SENTINEL, WORDS,
};
use crate::{Check, Violation};

/// What was checked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Messages whose fate was checked (every send attempt).
    pub messages: u64,
    /// Replies checked.
    pub replies: u64,
    /// Notification words checked.
    pub notifications: u64,
    /// Subsystem calls that completed (sysctl and kernel log).
    pub subsystem_calls: u64,
    /// Kernel-log messages whose fate was checked (appended or read).
    pub log_messages: u64,
    /// Memory faults whose fate was checked (every fault attempt).
    pub faults: u64,
    /// Of those, faults a handler received and answered (label 0).
    pub faults_answered: u64,
    /// Frame operations that completed (map, unmap, address query; their
    /// results are judged by linearizability and the kernel's mapping
    /// invariant).
    pub frame_ops: u64,
    /// Of those, maps refused because the frame or the page was taken.
    pub maps_refused: u64,
}

/// One received message.
#[derive(Clone, Copy, Debug)]
struct Receipt {
    receiver: usize,
    id: MsgId,
    /// Endpoint the message says it was sent through.
    sent_ep: u8,
    /// Endpoint the receiver received on.
    ep: u8,
    label: Word,
}

/// Check `rec` (a run of `prog`). `drop_receipt` removes the first receipt
/// from the record before checking: a deliberately broken log, which the
/// checks must catch.
pub fn check(prog: &Program, rec: &RunRecord, drop_receipt: bool) -> (Counts, Vec<Violation>) {
    let mut v = Vec::new();
    let mut bad = |check: Check, detail: String| v.push(Violation { check, detail });
    let mut counts = Counts::default();

    let sends: HashMap<MsgId, &Attempt> = rec
        .attempts
        .iter()
        .filter(|a| a.op.is_some_and(|op| op.sends()))
        .filter_map(|a| a.msg_id.map(|id| (id, a)))
        .collect();

    let mut receipts = Vec::new();
    for a in &rec.attempts {
        let (Some(ep), Observed::Completed(out)) = (a.op.and_then(|op| op.receive_ep()), a.observed) else {
            continue;
        };
        if !out.ok() {
            continue;
        }
        match out.label() {
            DATA | CALL => match decode_message(&out.words) {
                Some((id, sent_ep)) => {
                    receipts.push(Receipt { receiver: a.thread, id, sent_ep, ep, label: out.label() })
                }
                None => bad(Check::Conservation, format!("t{} received a corrupt message on ep{ep}: {out}", a.thread)),
            },
            // A fault's call: the endpoint is its thread's handler's, which
            // the message does not name.
            FAULT => match decode_fault(&out.words) {
                Some(id) => receipts.push(Receipt { receiver: a.thread, id, sent_ep: ep, ep, label: FAULT }),
                None => bad(Check::Conservation, format!("t{} received a corrupt fault on ep{ep}: {out}", a.thread)),
            },
            // An `NBRecv` that found nobody.
            0 => {}
            other => bad(Check::Conservation, format!("t{}'s receive on ep{ep} returned label {other:#x}", a.thread)),
        }
    }
    if drop_receipt && !receipts.is_empty() {
        receipts.remove(0);
    }

    // Every receipt: intact, sent, same endpoint, same kind; counted.
    let mut received: HashMap<MsgId, Vec<usize>> = HashMap::new();
    for r in &receipts {
        received.entry(r.id).or_default().push(r.receiver);
        let Some(s) = sends.get(&r.id) else {
            bad(Check::Conservation, format!("t{} received message {} that was never sent", r.receiver, r.id));
            continue;
        };
        let sent_on = match s.op {
            Some(Op::Send { ep } | Op::NbSend { ep } | Op::Call { ep }) => ep,
            Some(Op::Fault) => {
                if r.label != FAULT {
                    bad(Check::Conservation, format!("fault {} arrived at t{} as a message", r.id, r.receiver));
                }
                continue;
            }
            _ => continue,
        };
        if r.sent_ep != sent_on || r.ep != sent_on {
            bad(
                Check::Conservation,
                format!("message {} was sent via ep{sent_on} but t{} received it via ep{}", r.id, r.receiver, r.ep),
            );
        }
        let call = matches!(s.op, Some(Op::Call { .. }));
        if call != (r.label == CALL) {
            bad(Check::Conservation, format!("message {} arrived at t{} with the wrong label", r.id, r.receiver));
        }
    }
    for (id, who) in &received {
        if who.len() > 1 {
            bad(Check::Conservation, format!("message {id} was delivered {} times (to {who:?})", who.len()));
        }
    }

    // Per-sender FIFO at each receiver.
    let mut last: HashMap<(usize, u64), MsgId> = HashMap::new();
    for r in &receipts {
        if let Some(prev) = last.insert((r.receiver, r.id.sender), r.id) {
            if (prev.seq, prev.attempt) >= (r.id.seq, r.id.attempt) {
                bad(Check::Conservation, format!("t{} received {} after {prev}: out of send order", r.receiver, r.id));
            }
        }
    }

    // Each send's fate against what its sender saw.
    for (id, a) in &sends {
        counts.messages += 1;
        let n = received.get(id).map_or(0, Vec::len);
        let op = a.op.expect("sends have an operation");
        // A fault is a call the kernel makes; its answer writes no reply.
        let fault = op == Op::Fault;
        let call = matches!(op, Op::Call { .. }) || fault;
        if fault {
            counts.faults += 1;
            if let Observed::Completed(o) = a.observed {
                // An answer lets the thread go on and writes nothing else:
                // no message, and the badge and words as the trap left them.
                let untouched = o.tag == 0 && o.badge == SENTINEL && o.words == [SENTINEL; WORDS];
                if !(o.ok() && untouched) {
                    bad(Check::Reply, format!("fault {id} (t{}) was answered as a call: {o}", a.thread));
                }
                counts.faults_answered += 1;
            }
        }
        let (lo, hi, what) = match a.observed {
            Observed::Completed(o) if o.ok() && matches!(op, Op::NbSend { .. }) => {
                (0, 1, "completed non-blocking send")
            }
            Observed::Completed(o) if o.ok() && fault => (1, 1, "fault its handler answered"),
            Observed::Completed(o) if o.ok() => (1, 1, if call { "completed call" } else { "completed send" }),
            Observed::Completed(o) if call && o.error == Error::FailedLookup.word() => {
                (1, 1, "call that failed for want of a reply object")
            }
            Observed::Completed(_) => (0, 0, "failed send"),
            Observed::Restarted if call => (0, 1, "restarted call"),
            Observed::Restarted => (0, 0, "restarted send"),
            Observed::Pending(ThreadStatus::BlockedOnSend) => (0, 0, "send still blocked at the end"),
            Observed::Pending(ThreadStatus::BlockedOnReply) => (1, 1, "call waiting for its reply at the end"),
            Observed::Pending(_) | Observed::Unknown => (0, 1, "send whose result was never seen"),
        };
        if n < lo || n > hi {
            bad(Check::Conservation, format!("{what} {id} (t{}, `{op}`) was received {n} times", a.thread));
        }
        if let (true, false, Observed::Completed(o)) = (call, fault, a.observed) {
            if !o.ok() {
                continue;
            }
            counts.replies += 1;
            let echo = (o.label() == REPLY).then(|| decode_reply(&o.words)).flatten();
            match echo {
                Some((server, e)) if e == *id => {
                    let got = received.get(id).is_some_and(|w| w.contains(&(server as usize)));
                    if !got {
                        bad(Check::Reply, format!("call {id} was answered by t{server}, which never received it"));
                    }
                }
                Some((server, e)) => bad(
                    Check::Reply,
                    format!("call {id} got t{server}'s reply to {e}: a reply reached the wrong caller"),
                ),
                None => bad(Check::Reply, format!("call {id} completed without a well-formed reply: {o}")),
            }
        }
    }

    // Notification words: no badge bit delivered more often than signalled.
    let n = prog.notifications;
    let mut signalled: HashMap<(u8, u32), u64> = HashMap::new();
    let mut seen: HashMap<(u8, u32), u64> = HashMap::new();
    let bits = |w: Word| (0..64u32).filter(move |b| w & (1 << b) != 0);
    for a in &rec.attempts {
        match (a.op, a.observed) {
            (Some(Op::Signal { .. }), Observed::Completed(o)) if !o.ok() => {}
            (Some(Op::Signal { ntfn }), Observed::Completed(_) | Observed::Unknown | Observed::Pending(_)) => {
                for b in bits(signal_badge(a.thread)) {
                    *signalled.entry((ntfn, b)).or_default() += 1;
                }
            }
            (Some(Op::Wait { ntfn } | Op::Poll { ntfn }), Observed::Completed(o)) if o.ok() => {
                counts.notifications += 1;
                for b in bits(o.badge) {
                    *seen.entry((ntfn, b)).or_default() += 1;
                }
            }
            // A bound thread's receive that a signal ended: no message
            // (label 0), the notification's word as its badge.
            (Some(op), Observed::Completed(o)) if o.ok() && op.receive_ep().is_some() && o.label() == 0 => {
                let bound = prog.threads.get(a.thread).and_then(|t| t.bound);
                if let (Some(ntfn), true) = (bound, o.badge != SENTINEL) {
                    counts.notifications += 1;
                    for b in bits(o.badge) {
                        *seen.entry((ntfn, b)).or_default() += 1;
                    }
                }
            }
            _ => {}
        }
    }
    for i in &rec.interrupts {
        for b in bits(irq_badge(i.line as usize)) {
            *signalled.entry(((i.line as usize % n) as u8, b)).or_default() += 1;
        }
    }
    let mut seen: Vec<_> = seen.into_iter().collect();
    seen.sort();
    for ((k, b), times) in seen {
        let max = signalled.get(&(k, b)).copied().unwrap_or(0);
        if times > max {
            bad(
                Check::Notification,
                format!("ntfn{k} delivered badge bit {b} {times} times but it was signalled at most {max} times"),
            );
        }
    }
    for detail in klog(rec) {
        bad(Check::Conservation, detail);
    }
    for a in &rec.attempts {
        let sub = matches!(
            a.op,
            Some(
                Op::SysctlGet { .. }
                    | Op::SysctlSet { .. }
                    | Op::SysctlAdd { .. }
                    | Op::SysctlRemove { .. }
                    | Op::SysctlNext { .. }
                    | Op::KlogAppend
                    | Op::KlogRead
            )
        );
        if let (Some(op @ (Op::Map { .. } | Op::Unmap { .. } | Op::FrameAddress { .. })), Observed::Completed(o)) =
            (a.op, a.observed)
        {
            counts.frame_ops += 1;
            if matches!(op, Op::Map { .. }) && o.error == Error::DeleteFirst.word() {
                counts.maps_refused += 1;
            }
        }
        if sub && matches!(a.observed, Observed::Completed(_)) {
            counts.subsystem_calls += 1;
            if matches!(a.op, Some(Op::KlogAppend))
                || matches!(a.observed, Observed::Completed(o) if decode_log(&o).is_some())
            {
                counts.log_messages += 1;
            }
        }
    }
    (counts, v)
}

/// The kernel log: every message read was appended and not dropped, none
/// is read twice, each sender's come out in order, and the kernel's
/// counters agree with what the appenders saw (nothing stored is lost:
/// stored = read + held at the end).
fn klog(rec: &RunRecord) -> Vec<String> {
    let mut out = Vec::new();
    let (mut stored, mut dropped, mut unknown, mut unseen_reads) = (Vec::new(), Vec::new(), 0u64, 0u64);
    // (message, invoked, returned)
    let mut reads: Vec<(MsgId, u64, u64)> = Vec::new();
    for a in &rec.attempts {
        match (a.op, a.observed) {
            (Some(Op::KlogAppend), Observed::Completed(o)) if o.ok() => stored.extend(a.msg_id),
            (Some(Op::KlogAppend), Observed::Completed(o)) if o.error == Error::RingFull.word() => {
                dropped.extend(a.msg_id)
            }
            (Some(Op::KlogAppend), Observed::Completed(o)) => {
                out.push(format!("t{}'s log append failed: {o}", a.thread));
            }
            (Some(Op::KlogAppend), _) => unknown += 1,
            (Some(Op::KlogRead), Observed::Completed(o)) if o.ok() && o.words[0] == 0 => {}
            (Some(Op::KlogRead), Observed::Completed(o)) => match decode_log(&o) {
                Some(id) => reads.push((id, a.inv, a.ret)),
                None => out.push(format!("t{}'s log read returned {o}", a.thread)),
            },
            (Some(Op::KlogRead), _) => unseen_reads += 1,
            _ => {}
        }
    }
    let read: Vec<MsgId> = reads.iter().map(|r| r.0).collect();
    let mut seen = std::collections::HashSet::new();
    for id in &read {
        let id = MsgId { attempt: 0, ..*id };
        if dropped.iter().any(|d| MsgId { attempt: 0, ..*d } == id) {
            out.push(format!("log message {id} was reported dropped but was read"));
        } else if !stored.iter().any(|s| MsgId { attempt: 0, ..*s } == id) && unknown == 0 {
            out.push(format!("log message {id} was read but never appended"));
        }
        if !seen.insert(id) {
            out.push(format!("log message {id} was read twice"));
        }
    }
    // A sender's messages come out in its order: of two reads that did not
    // overlap in time, the earlier took the earlier message.
    for (a, _, ar) in &reads {
        for (b, bi, _) in &reads {
            if a.sender == b.sender && ar < bi && a.seq > b.seq {
                out.push(format!("log message {b} was read after {a} (t{} appended it first): out of order", a.sender));
            }
        }
    }
    let k = rec.klog;
    let (ok, full) = (stored.len() as u64, dropped.len() as u64);
    if k.appended < ok || k.appended > ok + unknown {
        out.push(format!("the log stored {} messages; appenders saw {ok} stored ({unknown} unseen)", k.appended));
    }
    if k.dropped < full || k.dropped > full + unknown {
        out.push(format!("the log dropped {} messages; appenders saw {full} dropped ({unknown} unseen)", k.dropped));
    }
    let accounted = read.len() as u64 + k.held;
    if k.appended < accounted || k.appended > accounted + unseen_reads {
        out.push(format!(
            "the log stored {} messages but {} were read and {} are held: {} lost",
            k.appended,
            read.len(),
            k.held,
            k.appended as i64 - read.len() as i64 - k.held as i64
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::RunOptions;
    use crate::generate::generate;
    use crate::regimes::run_named;

    /// A run under `bkl` in which some message was received.
    fn sample() -> (Program, RunRecord, usize) {
        for seed in 0..500 {
            let p = generate(seed, 2);
            let rec = run_named("bkl", &p, &RunOptions::default()).unwrap().record.unwrap();
            let got = rec.attempts.iter().position(|a| {
                a.op.is_some_and(|op| op.receive_ep().is_some())
                    && matches!(a.observed, Observed::Completed(o) if o.ok() && o.label() == DATA)
            });
            // The first receipt (the one `check` drops) must be of a send
            // that completed, so that dropping it is a loss.
            let first = rec.attempts.iter().find_map(|a| match (a.op, a.observed) {
                (Some(op), Observed::Completed(o)) if op.receive_ep().is_some() && o.ok() && o.label() != 0 => {
                    crate::user::decode_message(&o.words).map(|m| m.0)
                }
                _ => None,
            });
            let blocking_send_completed = first.is_some_and(|id| {
                rec.attempts.iter().any(|a| {
                    a.msg_id == Some(id)
                        && matches!(a.op, Some(Op::Send { .. } | Op::Call { .. }))
                        && matches!(a.observed, Observed::Completed(o) if o.ok())
                })
            });
            if let (Some(i), true) = (got, blocking_send_completed) {
                assert_eq!(check(&p, &rec, false).1, vec![], "seed {seed}");
                return (p, rec, i);
            }
        }
        panic!("no message was ever received");
    }

    #[test]
    fn lost_and_duplicated_log_messages_are_caught() {
        let found = (0..2000).find_map(|seed| {
            let p = generate(seed, 2);
            let rec = run_named("bkl", &p, &RunOptions::default()).unwrap().record.unwrap();
            let i = rec.attempts.iter().position(|a| {
                a.op == Some(Op::KlogRead) && matches!(a.observed, Observed::Completed(o) if decode_log(&o).is_some())
            })?;
            Some((p, rec, i))
        });
        let (p, rec, i) = found.expect("some program reads a log message");
        assert_eq!(check(&p, &rec, false).1, vec![]);
        // Duplicated: the same message read again by another read.
        let mut dup = rec.clone();
        dup.attempts.push(dup.attempts[i].clone());
        let (_, v) = check(&p, &dup, false);
        assert!(v.iter().any(|v| v.detail.contains("read twice")), "{v:?}");
        // Lost: the read never happened, and the log no longer holds it.
        let mut lost = rec.clone();
        lost.attempts.remove(i);
        let (_, v) = check(&p, &lost, false);
        assert!(v.iter().any(|v| v.detail.contains("lost")), "{v:?}");
        // Forged: a message nobody appended.
        let mut forged = rec.clone();
        if let Observed::Completed(o) = &mut forged.attempts[i].observed {
            o.words[4] = 999;
        }
        let (_, v) = check(&p, &forged, false);
        assert!(v.iter().any(|v| v.detail.contains("never appended")), "{v:?}");
    }

    #[test]
    fn lost_duplicated_and_forged_messages_are_caught() {
        let (p, rec, i) = sample();
        let (counts, v) = check(&p, &rec, false);
        assert!(v.is_empty() && counts.messages > 0);
        // Lost: the driver's log drops the receipt.
        let (_, v) = check(&p, &rec, true);
        assert!(v.iter().any(|v| v.check == Check::Conservation), "{v:?}");
        // Duplicated: a second thread's later receive saw the same message.
        let mut dup = rec.clone();
        let mut copy = dup.attempts[i].clone();
        copy.thread = (copy.thread + 1) % p.threads.len();
        dup.attempts.push(copy);
        let (_, v) = check(&p, &dup, false);
        assert!(v.iter().any(|v| v.detail.contains("delivered 2 times")), "{v:?}");
        // Forged: a message nobody sent.
        let mut forged = rec.clone();
        if let Observed::Completed(o) = &mut forged.attempts[i].observed {
            o.words = crate::user::message(MsgId { sender: 0, seq: 999, attempt: 0 }, 0);
        }
        let (_, v) = check(&p, &forged, false);
        assert!(v.iter().any(|v| v.detail.contains("never sent")), "{v:?}");
    }
}
