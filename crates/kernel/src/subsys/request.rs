//! A decoded subsystem call: plain data between the decoder (`decode.rs`)
//! and the executor (`call.rs`).

use crate::abi::{KlogOp, MessageInfo, SysctlOp, Word};
use crate::object::{Frame, Notification, Ref};

/// A decoded subsystem call.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SubsysCall {
    pub op: SubsysOp,
    pub info: MessageInfo,
    /// The caller's buffer limit in bytes (`0`: the whole buffer).
    pub limit: Word,
    /// The frame a value is copied to or from.
    pub frame: Option<Ref<Frame>>,
    /// The call runs only in a whole-kernel entry.
    pub whole: bool,
    /// `Append`: the reader's notification, signalled if it sleeps.
    pub notify: Option<(Ref<Notification>, Word)>,
}

/// Which operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SubsysOp {
    Sysctl(SysctlOp),
    Klog(KlogOp),
    /// `KlogOp::Bind`, decoded: the notification (or none, to unbind).
    Bind(Option<(Ref<Notification>, Word)>),
}

impl SubsysCall {
    /// The notification an append signals if the reader sleeps.
    pub fn wakes(&self) -> Option<(Ref<Notification>, Word)> {
        match self.op {
            SubsysOp::Klog(KlogOp::Append) => self.notify,
            _ => None,
        }
    }
}
