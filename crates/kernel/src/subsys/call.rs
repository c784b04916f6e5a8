//! The subsystem system calls in the one decoder and executor: decoding
//! (what the call needs: the whole kernel, a frame, the reader's
//! notification), running it under the policy, and the reply words. The
//! layouts are in `docs/subsystems.md`.

use alloc::vec::Vec;
use core::sync::atomic::{AtomicU64, Ordering};

use crate::abi::{
    CapRights, Error, KlogOp, MessageInfo, SysctlKind, SysctlOp, Sysno, Word, KLOG_MAX_MESSAGE, MSG_MAX_WORDS,
    SYSCTL_INLINE_BYTES, SYSCTL_MAX_NAME, SYSCTL_MAX_VALUE,
};
use crate::args::SyscallArgs;
use crate::decode::{CallerView, Decoded, Fallback, Scope};
use crate::object::{CapObj, Ref, Tcb};
use crate::outcome::Outcome;
use crate::state::Ctx;
use crate::waits::Waits;

use super::klog::{Appended, Taken};
use super::request::{SubsysCall, SubsysOp};
use super::sysctl::{Answer, Request, Sink};
use super::words::{In, Out};
use super::SubsystemLocking;

impl<W: Waits> Ctx<'_, W> {
    /// Decode a `Sysctl` or `Klog` call of `caller`.
    #[inline]
    pub(crate) fn decode_subsys<S: Scope>(
        &mut self,
        caller: &CallerView,
        s: Sysno,
        a: SyscallArgs,
    ) -> Result<Decoded, Fallback> {
        let info = MessageInfo(a.info);
        let sub = &self.s.subsys;
        let giant = sub.policy == SubsystemLocking::Giant;
        let label = info.label();
        let (op, mut whole) = match s {
            Sysno::Sysctl => match SysctlOp::from_word(label) {
                Some(op) => {
                    let writes = matches!(op, SysctlOp::Set | SysctlOp::Add | SysctlOp::Remove);
                    (SubsysOp::Sysctl(op), giant || (writes && sub.retired.over_limit()))
                }
                None => return Ok(Decoded::Fail(Error::IllegalOperation)),
            },
            _ => match KlogOp::from_word(label) {
                Some(KlogOp::Bind) => (SubsysOp::Bind(None), true),
                Some(op) => (SubsysOp::Klog(op), giant),
                None => return Ok(Decoded::Fail(Error::IllegalOperation)),
            },
        };
        let values =
            matches!(op, SubsysOp::Sysctl(SysctlOp::GetName | SysctlOp::GetOid | SysctlOp::Set | SysctlOp::Add));
        // A frame (or a notification to bind) is an object a shared path
        // may not look up: the call then needs the whole kernel.
        let names_object = (values && a.cptr != 0) || matches!(op, SubsysOp::Bind(_));
        whole |= names_object && !S::WHOLE;
        let notify = if op == SubsysOp::Klog(KlogOp::Append) { sub.notify() } else { None };
        // Waking a thread bound to the notification is a whole-kernel
        // signal (as in `decode_call`).
        if let Some((n, _)) = notify {
            whole |= !S::WHOLE && self.read(n).is_some_and(|n| n.bound.is_some());
        }
        if whole && !S::WHOLE {
            return Err(Fallback);
        }
        let mut call = SubsysCall { op, info, limit: a.reply, frame: None, whole, notify };
        if values && a.cptr != 0 {
            let need = if op == SubsysOp::Sysctl(SysctlOp::Set) || op == SubsysOp::Sysctl(SysctlOp::Add) {
                CapRights::READ
            } else {
                CapRights::WRITE
            };
            match self.lookup(caller.t, a.cptr) {
                Ok((_, cap)) => match cap.obj {
                    CapObj::Frame(f) if cap.rights.contains(need) => call.frame = Some(f),
                    _ => return Ok(Decoded::Fail(Error::InvalidCapability)),
                },
                Err(e) => return Ok(Decoded::Fail(e)),
            }
        }
        if let SubsysOp::Bind(_) = op {
            if a.cptr != 0 {
                match self.lookup(caller.t, a.cptr) {
                    Ok((_, cap)) => match cap.obj {
                        CapObj::Notification(n) if cap.rights.contains(CapRights::WRITE) => {
                            call.op = SubsysOp::Bind(Some((n, cap.badge)));
                        }
                        _ => return Ok(Decoded::Fail(Error::InvalidCapability)),
                    },
                    Err(e) => return Ok(Decoded::Fail(e)),
                }
            }
        }
        Ok(Decoded::Subsys(call))
    }

    /// Run a decoded subsystem call of `caller`; `whole`: this entry holds
    /// the whole kernel (the grace period for retired sysctl memory).
    /// Returns the outcome and whether the log's reader must be woken.
    pub(crate) fn run_subsys(&mut self, caller: Ref<Tcb>, call: SubsysCall, whole: bool) -> (Outcome, bool) {
        let sub = &self.s.subsys;
        if whole {
            // SAFETY: `whole`: this entry holds the whole kernel, so no
            // other core is inside it reading the tree.
            unsafe { sub.retired.free_all() };
        }
        let len = (call.info.length() as usize).min(MSG_MAX_WORDS);
        let input: Vec<Word> = self.ipc(caller).msg[..len].to_vec();
        let mut reply = [0 as Word; MSG_MAX_WORDS];
        let frame = call.frame.and_then(|f| self.read(f)).map(|f| (f.addr(), f.size() as usize));
        let core = self.core;
        let sub = &self.s.subsys;
        let (result, wake) = match call.op {
            SubsysOp::Sysctl(op) => (sysctl(sub, core, op, &input, call.limit, frame, &mut reply), false),
            SubsysOp::Klog(op) => klog(sub, core, op, &input, &mut reply),
            SubsysOp::Bind(n) => {
                sub.bind(n);
                (Ok(0), false)
            }
        };
        let b = self.ipc(caller);
        let out = match result {
            Ok(words) => {
                b.msg[..words].copy_from_slice(&reply[..words]);
                Outcome::Reply(MessageInfo::new(0, 0, 0, words as Word))
            }
            Err((e, words)) => {
                b.msg[..words].copy_from_slice(&reply[..words]);
                Outcome::Error(e)
            }
        };
        (out, wake)
    }
}

/// A failure and the reply words written with it (`BufferTooSmall`: the
/// length needed).
type Failed = (Error, usize);

fn sysctl(
    sub: &super::Subsystems,
    core: usize,
    op: SysctlOp,
    input: &[Word],
    limit: Word,
    frame: Option<(Word, usize)>,
    reply: &mut [Word; MSG_MAX_WORDS],
) -> Result<usize, Failed> {
    let req = parse(op, input, frame).map_err(|e| (e, 0))?;
    let room = frame.map_or(SYSCTL_INLINE_BYTES, |(_, size)| size.min(SYSCTL_MAX_VALUE));
    let room = match usize::try_from(limit) {
        Ok(0) | Err(_) => room,
        Ok(l) => l.min(room),
    };
    let answer = {
        let (_, body) = reply.split_at_mut(2);
        let mut sink = Dest { frame, inline: body, room };
        sub.sysctl(core, &req, &mut sink).map_err(|e| (e, 0))?
    };
    let w = |r: Result<(), Error>| r.map_err(|e| (e, 0));
    let mut out = Out::new(reply);
    match answer {
        Answer::Value { len, kind } => {
            let words = if frame.is_some() { 0 } else { len.div_ceil(8) };
            w(out.word(len as Word))?;
            w(out.word(kind as Word))?;
            return Ok(2 + words);
        }
        Answer::TooSmall(len) => {
            w(out.word(len as Word))?;
            return Err((Error::BufferTooSmall, 1));
        }
        Answer::Oid { oid, kind, name } => {
            w(out.oid(&oid))?;
            w(out.word(kind as Word))?;
            w(out.word(name.len() as Word))?;
            w(out.packed(name.as_bytes()))?;
        }
        Answer::Number(n) => w(out.word(Word::from(n)))?,
        Answer::Done => {}
    }
    Ok(out.len())
}

/// Decode a sysctl request's words (values longer than the message come
/// from the frame).
fn parse(op: SysctlOp, input: &[Word], frame: Option<(Word, usize)>) -> Result<Request, Error> {
    let mut i = In::new(input);
    let value = |i: &mut In<'_>, max: usize| -> Result<Vec<u8>, Error> {
        match frame {
            None => i.bytes(max.min(SYSCTL_INLINE_BYTES)),
            Some((addr, size)) => {
                let len = i.len(max)?;
                if len > size {
                    return Err(Error::TooLarge);
                }
                Ok(copy_in(addr, len))
            }
        }
    };
    Ok(match op {
        SysctlOp::GetName => Request::GetName(i.name(SYSCTL_MAX_NAME)?),
        SysctlOp::GetOid => Request::GetOid(i.oid()?),
        SysctlOp::Set => {
            let oid = i.oid()?;
            Request::Set { oid, value: value(&mut i, SYSCTL_MAX_VALUE)? }
        }
        SysctlOp::Next => Request::Next(i.oid()?),
        SysctlOp::NameToOid => Request::NameToOid(i.name(SYSCTL_MAX_NAME)?),
        SysctlOp::Add => {
            let parent = i.oid()?;
            let kind = SysctlKind::from_word(i.word()?).ok_or(Error::InvalidArgument)?;
            let writable = match i.word()? {
                0 => false,
                1 => true,
                _ => return Err(Error::InvalidArgument),
            };
            let number = match i.word()? {
                0 => None,
                n => Some(u32::try_from(n).map_err(|_| Error::InvalidArgument)?),
            };
            let name = i.name(SYSCTL_MAX_NAME)?;
            Request::Add { parent, name, number, kind, writable, value: value(&mut i, kind.max_len())? }
        }
        SysctlOp::Remove => Request::Remove(i.oid()?),
    })
}

/// Where a read's value goes: packed into the reply's words, or into the
/// frame at `addr` (its first `room` bytes).
struct Dest<'a> {
    frame: Option<(Word, usize)>,
    inline: &'a mut [Word],
    room: usize,
}

impl Sink for Dest<'_> {
    fn room(&self) -> usize {
        self.room
    }

    fn put(&mut self, value: &[u8]) {
        let len = value.len().min(self.room);
        match self.frame {
            Some((addr, _)) => copy_out(addr, &value[..len]),
            None => {
                for (w, chunk) in self.inline.iter_mut().zip(value[..len].chunks(8)) {
                    let mut b = [0u8; 8];
                    b[..chunk.len()].copy_from_slice(chunk);
                    *w = Word::from_le_bytes(b);
                }
            }
        }
    }
}

/// The frame's words at `addr` (a live frame's memory, 4 KiB-aligned, at
/// least `len` bytes: checked by the caller against its size).
fn frame_words<'a>(addr: Word, len: usize) -> &'a [AtomicU64] {
    let ptr = addr as usize as *mut u64;
    // SAFETY: `addr` is the address of a live frame (looked up in this
    // entry, and frames are freed only in whole-kernel entries, which
    // cannot start before this one ends), aligned to 4 KiB, and `len`
    // bytes fit it; it is accessed only as atomics here, and user threads
    // reading it concurrently race on their own memory, as on hardware.
    unsafe { core::slice::from_raw_parts(AtomicU64::from_ptr(ptr), len.div_ceil(8)) }
}

fn copy_out(addr: Word, value: &[u8]) {
    for (w, chunk) in frame_words(addr, value.len()).iter().zip(value.chunks(8)) {
        let mut b = [0u8; 8];
        b[..chunk.len()].copy_from_slice(chunk);
        w.store(u64::from_le_bytes(b), Ordering::Relaxed);
    }
}

fn copy_in(addr: Word, len: usize) -> Vec<u8> {
    let mut v: Vec<u8> = frame_words(addr, len).iter().flat_map(|w| w.load(Ordering::Relaxed).to_le_bytes()).collect();
    v.truncate(len);
    v
}

/// A log call: `(result, wake the reader)`.
fn klog(
    sub: &super::Subsystems,
    core: usize,
    op: KlogOp,
    input: &[Word],
    reply: &mut [Word; MSG_MAX_WORDS],
) -> (Result<usize, Failed>, bool) {
    let locked = matches!(sub.policy, SubsystemLocking::Sx | SubsystemLocking::Improper);
    let lock = || {
        if locked {
            sub.locks.klog.acquire(core, crate::spin::spin_hook);
        }
    };
    let unlock = || {
        if locked {
            sub.locks.klog.release(core);
        }
    };
    match op {
        KlogOp::Append => {
            let msg = match In::new(input).bytes(KLOG_MAX_MESSAGE) {
                Ok(m) => m,
                Err(e) => return (Err((e, 0)), false),
            };
            lock();
            let r = sub.klog.append(&msg);
            unlock();
            match r {
                Appended::Stored { wake } => (Ok(0), wake),
                Appended::Dropped => (Err((Error::RingFull, 0)), false),
            }
        }
        KlogOp::Read => {
            // Word 0, if sent: the most messages wanted (0: as many as fit).
            let max = match input.first().copied() {
                None | Some(0) => Word::MAX,
                Some(n) => n,
            };
            let mut out = Out::new(&mut reply[2..]);
            let mut count = 0;
            let mut msg = Vec::new();
            lock();
            // Each message is taken only if it fits what is left of the
            // reply (its length word and its bytes), so a message taken is
            // a message delivered, whoever else reads.
            while count < max && out.room() > 1 {
                let room = (out.room() - 1) * 8;
                if sub.klog.take_fitting(&mut msg, room) != Taken::Message {
                    break;
                }
                count += 1;
                // It fits: these cannot fail.
                let _ = out.word(msg.len() as Word);
                let _ = out.packed(&msg);
            }
            if count == 0 {
                sub.klog.arm();
            }
            unlock();
            let words = 2 + out.len();
            reply[0] = count;
            reply[1] = sub.klog.dropped();
            (Ok(words), false)
        }
        // Decoded as `SubsysOp::Bind`.
        KlogOp::Bind => (Err((Error::IllegalOperation, 0)), false),
    }
}
