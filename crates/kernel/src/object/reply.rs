//! Reply objects: the one-shot right to answer a `Call` (seL4 MCS style).
//!
//! A receiver names a reply object when it receives; a `Call` it receives
//! records the caller there (`caller`, which blocks in `BlockedOnReply`).
//! `Reply`/`ReplyRecv` through the object answer that caller. While a thread
//! is blocked receiving with the object, `receiver` names it, so one reply
//! object serves one receive at a time.

use crate::object::{Ref, Tcb};

/// A reply object.
#[derive(Debug)]
pub(crate) struct Reply {
    /// The caller waiting for an answer through this object.
    pub caller: Option<Ref<Tcb>>,
    /// Whether the answer may carry capabilities (the call's endpoint
    /// capability had the grant right).
    pub grant: bool,
    /// The thread blocked receiving with this object.
    pub receiver: Option<Ref<Tcb>>,
}

impl Reply {
    pub fn new() -> Self {
        Self { caller: None, grant: false, receiver: None }
    }
}

/// What a reply object is doing, in either wait representation (the
/// object's fields under `Queues`, one CAS word under `lockfree`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ReplyState {
    /// Nothing: free for a receive.
    Empty,
    /// A receive with this object is under way (the thread is about to
    /// block, or blocked, receiving).
    Receiver(Ref<Tcb>),
    /// A `Call` was received with this object; its caller waits for the
    /// answer; `grant` = the call's endpoint capability had the grant right.
    Caller(Ref<Tcb>, bool),
}
