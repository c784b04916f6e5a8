//! The sysctl and kernel-log system calls from user code (the layouts are
//! in `docs/subsystems.md`).

use alloc_crate::string::String;
use alloc_crate::vec::Vec;

use granule_kernel::abi::words::{push_bytes, push_oid, take_oid, unpack};
use granule_kernel::abi::{Error, KlogOp, SysctlOp, Sysno, MSG_MAX_WORDS};
use granule_kernel::{MessageInfo, Word};

use crate::env::{CPtr, Env, NULL};
use crate::trap::Trap;

/// A sysctl value as read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Value {
    /// `SysctlKind` as a word.
    pub kind: Word,
    /// The bytes (empty when they went to a frame).
    pub bytes: Vec<u8>,
    /// The value's length.
    pub len: usize,
}

impl<T: Trap> Env<T> {
    fn subsys(&mut self, no: Sysno, op: Word, words: &[Word], cptr: CPtr, limit: Word) -> Result<Vec<Word>, Error> {
        if words.len() > MSG_MAX_WORDS {
            return Err(Error::TooLarge);
        }
        self.msg()[..words.len()].copy_from_slice(words);
        self.raw(no, cptr, MessageInfo::new(op, 0, 0, words.len() as Word), limit)?;
        let n = (MessageInfo(self.buffer().tag).length() as usize).min(MSG_MAX_WORDS);
        Ok(self.msg()[..n].to_vec())
    }

    fn value(r: &[Word]) -> Value {
        let len = r.first().copied().unwrap_or(0) as usize;
        Value { kind: r.get(1).copied().unwrap_or(0), bytes: unpack(r.get(2..).unwrap_or(&[]), len), len }
    }

    /// Read the value named `name` into the message (or into `frame`).
    pub fn sysctl_get_name(&mut self, name: &str, frame: CPtr) -> Result<Value, Error> {
        let mut w = Vec::new();
        push_bytes(&mut w, name.as_bytes());
        self.subsys(Sysno::Sysctl, SysctlOp::GetName.word(), &w, frame, 0).map(|r| Self::value(&r))
    }

    /// Read the value at `oid` into the message (or into `frame`).
    pub fn sysctl_get_oid(&mut self, oid: &[u32], frame: CPtr) -> Result<Value, Error> {
        let mut w = Vec::new();
        push_oid(&mut w, oid);
        self.subsys(Sysno::Sysctl, SysctlOp::GetOid.word(), &w, frame, 0).map(|r| Self::value(&r))
    }

    /// Write the value at `oid` (a value that fits the message).
    pub fn sysctl_set(&mut self, oid: &[u32], value: &[u8]) -> Result<(), Error> {
        let mut w = Vec::new();
        push_oid(&mut w, oid);
        push_bytes(&mut w, value);
        self.subsys(Sysno::Sysctl, SysctlOp::Set.word(), &w, NULL, 0).map(|_| ())
    }

    /// The leaf after `oid` (`NotFound` past the last): its OID and name.
    pub fn sysctl_next(&mut self, oid: &[u32]) -> Result<(Vec<u32>, String), Error> {
        let mut w = Vec::new();
        push_oid(&mut w, oid);
        let r = self.subsys(Sysno::Sysctl, SysctlOp::Next.word(), &w, NULL, 0)?;
        let (next, rest) = take_oid(&r).ok_or(Error::InvalidArgument)?;
        let len = rest.get(1).copied().unwrap_or(0) as usize;
        let name = String::from_utf8(unpack(rest.get(2..).unwrap_or(&[]), len)).map_err(|_| Error::InvalidArgument)?;
        Ok((next, name))
    }

    /// The numeric OID of `name`.
    pub fn sysctl_name_to_oid(&mut self, name: &str) -> Result<Vec<u32>, Error> {
        let mut w = Vec::new();
        push_bytes(&mut w, name.as_bytes());
        let r = self.subsys(Sysno::Sysctl, SysctlOp::NameToOid.word(), &w, NULL, 0)?;
        Ok(take_oid(&r).ok_or(Error::InvalidArgument)?.0)
    }

    /// Append a message to the kernel log (`RingFull`: dropped).
    pub fn klog_append(&mut self, msg: &[u8]) -> Result<(), Error> {
        let mut w = Vec::new();
        push_bytes(&mut w, msg);
        self.subsys(Sysno::Klog, KlogOp::Append.word(), &w, NULL, 0).map(|_| ())
    }

    /// Take the oldest log messages that fit one reply (none: the bound
    /// notification is signalled at the next append); and the count of
    /// messages dropped since boot.
    pub fn klog_read(&mut self) -> Result<(Vec<Vec<u8>>, u64), Error> {
        let r = self.subsys(Sysno::Klog, KlogOp::Read.word(), &[], NULL, 0)?;
        let mut out = Vec::new();
        let mut rest = r.get(2..).unwrap_or(&[]);
        for _ in 0..r.first().copied().unwrap_or(0) {
            let Some((&len, after)) = rest.split_first() else { break };
            let len = len as usize;
            out.push(unpack(after, len));
            rest = after.get(len.div_ceil(8)..).unwrap_or(&[]);
        }
        Ok((out, r.get(1).copied().unwrap_or(0)))
    }

    /// Bind the notification `ntfn` as the log reader's wake-up.
    pub fn klog_bind(&mut self, ntfn: CPtr) -> Result<(), Error> {
        self.subsys(Sysno::Klog, KlogOp::Bind.word(), &[], ntfn, 0).map(|_| ())
    }
}
