//! How a system call ended for its caller ([`Outcome`]), as the decoders and
//! executors of every object and regime report it.

use crate::abi::{Error, MessageInfo};

/// How a system call ended for its caller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Success with no message.
    Done,
    /// Success; results are in the caller's message words.
    Reply(MessageInfo),
    /// A message was written into the caller's buffer by the transfer.
    Received,
    /// The caller blocked; its waker writes the results.
    Blocked,
    /// The caller must reissue the call.
    Restart,
    /// The call failed.
    Error(Error),
}
