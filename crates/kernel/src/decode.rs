//! The one decoder of the IPC system calls, for every regime.
//!
//! [`Ctx::decode_call`] turns a system call's words into a [`Decoded`]
//! operation: it looks up the capabilities, checks rights, message and
//! reply-object arguments, and finds every error a call can have before
//! anything changes. It reads only capability slots, generations and
//! object bindings, which change only when the whole kernel is held; the
//! state of queues and reply objects is read by the lock regimes' resolvers
//! (`ipc.rs`) and by the one executor that runs the operation on either
//! wait representation (`rendezvous.rs`, `exec.rs`).
//!
//! What the decoder may rely on is its [`Scope`]: [`AllHeld`] (the whole
//! kernel is held: every regime's general path, and `lockfree`'s management
//! entries) never gives up; `lockfree`'s shared path (`LfState`) returns
//! [`Fallback`] — before any state has changed — for anything a shared path
//! may not do (an invocation, a capability to any object but an endpoint,
//! notification or reply object, it returns as [`Decoded::Invocation`]
//! without checking the object's liveness, which would read a TCB or another
//! core's object: the regime decides, `lockfree/decode.rs`):
//!
//! * a message carrying capabilities (`grant` with extra capabilities on a
//!   send; any extra capabilities on a reply): capability transfer writes
//!   CNodes;
//! * an endpoint whose word is *marked*: a sender waiting there transfers
//!   capabilities, which only a management entry may receive;
//! * a receive from an endpoint by a thread with a bound notification (it
//!   blocks where a signal may claim it, which only management sets up:
//!   `lockfree/bound.rs`; a signal to the notification runs shared).

use crate::abi::{CapRights, Error, MessageInfo, Sysno, Word};
use crate::args::{FaultKind, SyscallArgs};
use crate::hold::AllHeld;
use crate::ipc::Msg;
use crate::object::{CNode, Cap, CapObj, Endpoint, Notification, Ref, Reply, SlotAddr, Tcb};
use crate::state::Ctx;
use crate::waits::Waits;

/// What the decoder may read, and when it must give up.
pub(crate) trait Scope {
    /// The whole kernel is held: every object may be read, nothing falls
    /// back, and invocations are decoded here too.
    const WHOLE: bool;

    /// Whether a sender waiting on `ep` transfers capabilities (only a
    /// scope that is not [`Scope::WHOLE`] is asked).
    fn marked(&self, ep: Ref<Endpoint>) -> bool;

    /// Whether thread `t` has a stop request nobody has met, or is killed
    /// (`lockfree`'s `STOPME`, `KILLED`): an object it holds may be about to be let go by a
    /// destroy that management finishes (`lockfree/finish_destroy.rs`), so a
    /// call that would find the object taken by `t` runs as management.
    /// Only a scope that is not [`Scope::WHOLE`] is asked.
    #[inline(always)]
    fn stopping(&self, _t: Ref<Tcb>) -> bool {
        false
    }

    /// Whether reply object `r` is claimed by a receiver other than `me`
    /// that is [`Scope::stopping`] (only a scope that is not
    /// [`Scope::WHOLE`] is asked).
    #[inline(always)]
    fn claimed_by_stopping(&self, _r: Ref<Reply>, _me: Ref<Tcb>) -> bool {
        false
    }
}

/// The whole kernel is held (the guard of the drives that grant it, here
/// the decoder's scope).
impl Scope for AllHeld {
    const WHOLE: bool = true;

    #[inline(always)]
    fn marked(&self, _ep: Ref<Endpoint>) -> bool {
        false
    }
}

/// What decoding needs to know about the caller, read once per entry.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CallerView {
    pub t: Ref<Tcb>,
    pub cspace: Option<Ref<CNode>>,
    pub bound: bool,
}

impl CallerView {
    /// What the decoder knows about thread `t`, whose TCB is `x`.
    #[inline(always)]
    pub(crate) fn of(t: Ref<Tcb>, x: &Tcb) -> Self {
        Self { t, cspace: x.cspace, bound: x.bound.is_some() }
    }

    /// The view of a caller whose TCB is gone: every look-up fails.
    pub(crate) fn dead(t: Ref<Tcb>) -> Self {
        Self { t, cspace: None, bound: false }
    }
}

/// The call needs the whole kernel (a `lockfree` management entry).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Fallback;

/// A decoded system call.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Decoded {
    Yield,
    /// The call fails with this error (decoding found it).
    Fail(Error),
    Send {
        ep: Ref<Endpoint>,
        msg: Msg,
        blocking: bool,
    },
    Signal {
        ntfn: Ref<Notification>,
        badge: Word,
    },
    Recv(RecvPart),
    Reply {
        reply: Ref<Reply>,
        grant_cap: bool,
        info: MessageInfo,
    },
    ReplyRecv {
        reply: Ref<Reply>,
        grant_cap: bool,
        info: MessageInfo,
        recv: RecvHalf,
    },
    /// An object invocation, with the invoked capability and its slot:
    /// decoded further where the scope allows it (a whole scope decodes
    /// any; a shared scope, the few its regime runs without the whole
    /// kernel, else it falls back).
    Invocation {
        slot: SlotAddr,
        cap: Cap,
    },
    /// A sysctl or kernel-log call (`subsys/call.rs`).
    Subsys(crate::subsys::request::SubsysCall),
}

/// The receive half of `ReplyRecv`.
#[derive(Clone, Copy, Debug)]
pub(crate) enum RecvHalf {
    /// Decoded with the reply.
    Now(RecvPart),
    /// The reply carries capabilities, whose transfer may change the
    /// caller's CSpace: the receive half is decoded after the reply, from
    /// these arguments (as a `Recv` of its own would be).
    AfterReply(SyscallArgs),
}

/// The receive half of `Recv`, `NBRecv`, `Wait`, `Poll`, `ReplyRecv`.
#[derive(Clone, Copy, Debug)]
pub(crate) enum RecvPart {
    Ep { ep: Ref<Endpoint>, reply: Option<Ref<Reply>>, blocking: bool },
    Ntfn { ntfn: Ref<Notification>, blocking: bool },
    Fail(Error),
}

/// What a capability look-up found.
enum Looked {
    /// A live endpoint, notification or reply capability.
    Ipc(Cap),
    /// A capability to some other object, with its slot: live in a whole
    /// scope; its liveness unknown otherwise.
    Other(SlotAddr, Cap),
}

impl<W: Waits> Ctx<'_, W> {
    /// What the decoder knows about `t`, this core's current thread.
    #[inline(always)]
    pub(crate) fn caller_view(&mut self, t: Ref<Tcb>) -> Option<CallerView> {
        Some(CallerView::of(t, self.get(t)?))
    }

    /// The receive half of a `ReplyRecv` whose reply carried capabilities
    /// ([`RecvHalf::AfterReply`]), decoded now that they are transferred
    /// (whole scope: only management and lock entries transfer them).
    pub(crate) fn decode_recv_after_reply(&mut self, caller: Ref<Tcb>, a: SyscallArgs) -> RecvPart {
        let Some(view) = self.caller_view(caller) else { return RecvPart::Fail(Error::InvalidCapability) };
        // A whole scope never falls back; were it to, the call fails cleanly.
        self.decode_recv_part(&AllHeld, &view, a, Sysno::ReplyRecv, None)
            .unwrap_or(RecvPart::Fail(Error::IllegalOperation))
    }

    /// The `Call` a fault of kind `kind` makes for the caller (`fault.rs`):
    /// `Ok(None)` if its fault handler does not look up as an endpoint
    /// capability with the write right in its CSpace.
    pub(crate) fn decode_fault<S: Scope>(
        &mut self,
        scope: &S,
        c: &CallerView,
        kind: FaultKind,
    ) -> Result<Option<Decoded>, Fallback> {
        let handler = self.get(c.t).map_or(0, |x| x.fault_handler);
        if handler == 0 {
            return Ok(None);
        }
        let Ok(Looked::Ipc(cap)) = self.look_up::<S>(c, handler) else { return Ok(None) };
        let CapObj::Endpoint(ep) = cap.obj else { return Ok(None) };
        if !cap.rights.contains(CapRights::WRITE) {
            return Ok(None);
        }
        if !S::WHOLE && scope.marked(ep) {
            return Err(Fallback);
        }
        let info = MessageInfo::new(kind.label(), 0, 0, kind.words().1 as Word);
        let msg = Msg { info, badge: cap.badge, grant: false, call: true, fault: true };
        Ok(Some(Decoded::Send { ep, msg, blocking: true }))
    }

    /// The capability at `cptr` in the caller's CSpace (`cap_ref`'s
    /// look-up: a dead CNode or a slot out of range is `None`).
    #[inline(always)]
    fn slot_cap(&self, c: &CallerView, cptr: Word) -> Option<Cap> {
        let cn = self.read(c.cspace?)?;
        Some(cn.slots.get(usize::try_from(cptr).ok()?)?.cap.get())
    }

    /// Look up `cptr` in the caller's CSpace: in a whole scope as `lookup`
    /// does; otherwise checking liveness only of the objects a shared path
    /// may read.
    #[inline(always)]
    fn look_up<S: Scope>(&mut self, c: &CallerView, cptr: Word) -> Result<Looked, Error> {
        if S::WHOLE {
            // From the CSpace the view read already.
            let (slot, cap) = self.lookup_in(c.cspace.ok_or(Error::InvalidCapability)?, cptr)?;
            return Ok(match cap.obj {
                CapObj::Endpoint(_) | CapObj::Notification(_) | CapObj::Reply(_) => Looked::Ipc(cap),
                _ => Looked::Other(slot, cap),
            });
        }
        let cap = self.slot_cap(c, cptr).ok_or(Error::InvalidCapability)?;
        let live = match cap.obj {
            CapObj::Null => false,
            CapObj::Endpoint(r) => self.live(r),
            CapObj::Notification(r) => self.live(r),
            CapObj::Reply(r) => self.live(r),
            _ => {
                let index = u32::try_from(cptr).map_err(|_| Error::InvalidCapability)?;
                let cnode = c.cspace.ok_or(Error::InvalidCapability)?;
                return Ok(Looked::Other(SlotAddr { cnode, index }, cap));
            }
        };
        if live {
            Ok(Looked::Ipc(cap))
        } else {
            Err(Error::InvalidCapability)
        }
    }

    /// The reply object of `Reply`/`ReplyRecv`: any failure is
    /// `InvalidCapability`, whatever the object.
    #[inline(always)]
    fn reply_cap<S: Scope>(&mut self, c: &CallerView, cptr: Word) -> Result<(Ref<Reply>, bool), Error> {
        match self.look_up::<S>(c, cptr)? {
            Looked::Ipc(Cap { obj: CapObj::Reply(r), rights, .. }) => Ok((r, rights.contains(CapRights::GRANT))),
            _ => Err(Error::InvalidCapability),
        }
    }

    /// The reply object named for a receive: `None` for the null slot.
    #[inline(always)]
    fn recv_reply_arg(&mut self, c: &CallerView, cptr: Word) -> Result<Option<Ref<Reply>>, Error> {
        match self.slot_cap(c, cptr).ok_or(Error::InvalidCapability)?.obj {
            CapObj::Null => Ok(None),
            CapObj::Reply(r) if self.live(r) => Ok(Some(r)),
            _ => Err(Error::InvalidCapability),
        }
    }

    /// Decode a system call of `caller` (see the module documentation).
    #[inline(always)]
    pub(crate) fn decode_call<S: Scope>(
        &mut self,
        scope: &S,
        caller: &CallerView,
        a: SyscallArgs,
    ) -> Result<Decoded, Fallback> {
        let info = MessageInfo(a.info);
        let Some(s) = Sysno::from_word(a.sysno) else { return Ok(Decoded::Fail(Error::IllegalOperation)) };
        Ok(match s {
            Sysno::Yield => Decoded::Yield,
            Sysno::Sysctl | Sysno::Klog => return self.decode_subsys::<S>(caller, s, a),
            Sysno::Reply | Sysno::ReplyRecv => {
                let (reply, grant_cap) = match self.reply_cap::<S>(caller, a.reply) {
                    Ok(r) => r,
                    Err(e) => return Ok(Decoded::Fail(e)),
                };
                if !S::WHOLE && info.extra_caps() > 0 {
                    return Err(Fallback);
                }
                if s == Sysno::Reply {
                    Decoded::Reply { reply, grant_cap, info }
                } else {
                    // The receive names the same reply object (the receive
                    // reply argument of a live reply capability).
                    let recv = if info.extra_caps() > 0 {
                        RecvHalf::AfterReply(a)
                    } else {
                        RecvHalf::Now(self.decode_recv_part(scope, caller, a, s, Some(Some(reply)))?)
                    };
                    Decoded::ReplyRecv { reply, grant_cap, info, recv }
                }
            }
            Sysno::Recv | Sysno::Wait | Sysno::NBRecv | Sysno::Poll => {
                Decoded::Recv(self.decode_recv_part(scope, caller, a, s, None)?)
            }
            Sysno::Send | Sysno::NBSend | Sysno::Call | Sysno::Signal => {
                let cap = match self.look_up::<S>(caller, a.cptr) {
                    Ok(Looked::Ipc(cap)) => cap,
                    Ok(Looked::Other(..)) if s == Sysno::Signal => return Ok(Decoded::Fail(Error::InvalidCapability)),
                    Ok(Looked::Other(slot, cap)) => return Ok(Decoded::Invocation { slot, cap }),
                    Err(e) => return Ok(Decoded::Fail(e)),
                };
                match (s, cap.obj) {
                    (_, CapObj::Notification(ntfn)) if s != Sysno::Call => {
                        if !cap.rights.contains(CapRights::WRITE) {
                            return Ok(Decoded::Fail(Error::InvalidCapability));
                        }
                        Decoded::Signal { ntfn, badge: cap.badge }
                    }
                    (Sysno::Signal, _) => Decoded::Fail(Error::InvalidCapability),
                    (_, CapObj::Endpoint(ep)) => {
                        if !cap.rights.contains(CapRights::WRITE) {
                            return Ok(Decoded::Fail(Error::InvalidCapability));
                        }
                        let grant = cap.rights.contains(CapRights::GRANT);
                        if !S::WHOLE && ((grant && info.extra_caps() > 0) || scope.marked(ep)) {
                            return Err(Fallback);
                        }
                        let msg = Msg { info, badge: cap.badge, grant, call: s == Sysno::Call, fault: false };
                        Decoded::Send { ep, msg, blocking: s != Sysno::NBSend }
                    }
                    // `Call` on a notification; any invocation of a reply
                    // object.
                    _ => Decoded::Fail(Error::IllegalOperation),
                }
            }
        })
    }

    /// An invocation's arguments: the caller's message words.
    pub(crate) fn invocation_args(&mut self, caller: &CallerView, info: MessageInfo) -> crate::args::Args {
        let len = (info.length() as usize).min(crate::abi::MSG_MAX_WORDS);
        crate::args::Args::copied(&self.ipc(caller.t).msg, len)
    }

    /// Decode the receive half; `reply` is the reply argument if the caller
    /// already looked it up.
    #[inline(always)]
    pub(crate) fn decode_recv_part<S: Scope>(
        &mut self,
        scope: &S,
        caller: &CallerView,
        a: SyscallArgs,
        s: Sysno,
        reply: Option<Option<Ref<Reply>>>,
    ) -> Result<RecvPart, Fallback> {
        let blocking = !matches!(s, Sysno::NBRecv | Sysno::Poll);
        let cap = match self.look_up::<S>(caller, a.cptr) {
            Ok(Looked::Ipc(cap)) => cap,
            Ok(Looked::Other(..)) | Err(_) => return Ok(RecvPart::Fail(Error::InvalidCapability)),
        };
        Ok(match cap.obj {
            CapObj::Endpoint(ep) if matches!(s, Sysno::Recv | Sysno::NBRecv | Sysno::ReplyRecv) => {
                if !cap.rights.contains(CapRights::READ) {
                    return Ok(RecvPart::Fail(Error::InvalidCapability));
                }
                let reply = match reply.map_or_else(|| self.recv_reply_arg(caller, a.reply), Ok) {
                    Ok(r) => r,
                    Err(e) => return Ok(RecvPart::Fail(e)),
                };
                if !S::WHOLE && (caller.bound || scope.marked(ep)) {
                    return Err(Fallback);
                }
                // A reply object claimed by a receiver whose stop is
                // pending: management decides (it finishes a destroy first).
                if !S::WHOLE && reply.is_some_and(|r| scope.claimed_by_stopping(r, caller.t)) {
                    return Err(Fallback);
                }
                RecvPart::Ep { ep, reply, blocking }
            }
            CapObj::Notification(ntfn) => {
                if !cap.rights.contains(CapRights::READ) {
                    return Ok(RecvPart::Fail(Error::InvalidCapability));
                }
                let other = self.read(ntfn).and_then(|n| n.bound).filter(|&b| b != caller.t);
                if let Some(b) = other {
                    // Bound to a thread a destroy may be letting go of:
                    // management decides (it finishes the destroy first).
                    if !S::WHOLE && scope.stopping(b) {
                        return Err(Fallback);
                    }
                    return Ok(RecvPart::Fail(Error::IllegalOperation));
                }
                RecvPart::Ntfn { ntfn, blocking }
            }
            _ => RecvPart::Fail(Error::InvalidCapability),
        })
    }
}
