//! The sysctl registry's operations, each run under the policy's locks
//! (`SubsystemLocking`) over the one tree (`tree.rs`).

pub(crate) mod freebsd;
pub(crate) mod tree;

use alloc::string::String;
use alloc::vec::Vec;

use crate::abi::{Error, SysctlKind, SYSCTL_WIRE_BYTES};
use crate::spin::spin_hook;
use granule_sync::lockfree::rcu_tree::NodeKind;

use super::locks::EveryPoint;
use super::{SubsystemLocking, Subsystems};
use tree::{check_component, check_value, components, Plain, Visit};

/// A decoded sysctl request (values already copied in).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Request {
    GetName(String),
    GetOid(Vec<u32>),
    Set { oid: Vec<u32>, value: Vec<u8> },
    Next(Vec<u32>),
    NameToOid(String),
    Add { parent: Vec<u32>, name: String, number: Option<u32>, kind: SysctlKind, writable: bool, value: Vec<u8> },
    Remove(Vec<u32>),
}

impl Request {
    /// Whether it changes the tree.
    pub fn writes(&self) -> bool {
        matches!(self, Self::Set { .. } | Self::Add { .. } | Self::Remove(_))
    }
}

/// Where a read's value goes (the message or a frame), with its room.
pub(crate) trait Sink {
    /// Bytes it can take.
    fn room(&self) -> usize;
    /// Copy the value out.
    fn put(&mut self, value: &[u8]);
}

/// A successful answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Answer {
    /// The value (already in the sink): its length and kind.
    Value {
        len: usize,
        kind: SysctlKind,
    },
    /// The value does not fit the caller's buffer: the length it needs.
    TooSmall(usize),
    /// A leaf's (or a name's) OID, kind and dotted name.
    Oid {
        oid: Vec<u32>,
        kind: SysctlKind,
        name: String,
    },
    /// The number a new node got.
    Number(u32),
    Done,
}

impl Subsystems {
    /// Run `req` as core `core` under the policy's locks.
    pub fn sysctl(&self, core: usize, req: &Request, sink: &mut dyn Sink) -> Result<Answer, Error> {
        let sx = &self.locks.sysctl;
        match self.policy {
            SubsystemLocking::Giant | SubsystemLocking::LockFree => self.sysctl_with(core, req, sink, &Plain),
            SubsystemLocking::Sx if req.writes() => {
                sx.xlock(core, spin_hook);
                let out = self.sysctl_with(core, req, sink, &Plain);
                sx.xunlock(core);
                out
            }
            SubsystemLocking::Sx => {
                sx.slock(core, spin_hook);
                let out = self.sysctl_with(core, req, sink, &Plain);
                sx.sunlock(core);
                out
            }
            SubsystemLocking::Improper => self.sysctl_with(core, req, sink, &EveryPoint { locks: &self.locks, core }),
        }
    }

    fn sysctl_with(&self, core: usize, req: &Request, sink: &mut dyn Sink, v: &impl Visit) -> Result<Answer, Error> {
        let t = &self.tree;
        let retire = self.retired.of(core);
        let node = |oid: &[u32]| t.find_oid(oid, v).ok_or(Error::NotFound);
        let by_name = |name: &str| Ok::<_, Error>(t.find_path(components(name)?, v)?);
        match req {
            Request::GetName(name) => {
                let (n, _) = by_name(name)?;
                self.copy_out(core, t.read(n, v)?, sink, v)
            }
            Request::GetOid(oid) => self.copy_out(core, t.read(node(oid)?, v)?, sink, v),
            Request::Set { oid, value } => {
                let n = node(oid)?;
                if !n.kind.interior() && n.writable {
                    check_value(n.kind, value)?;
                }
                Ok(v.visit(|| t.set(n, value, &retire)).map(|()| Answer::Done)?)
            }
            Request::Next(oid) => {
                let (n, oid) = t.next(oid, v).ok_or(Error::NotFound)?;
                let name = t.name_of(&oid, v).ok_or(Error::NotFound)?;
                Ok(Answer::Oid { oid, kind: n.kind, name })
            }
            Request::NameToOid(name) => {
                let (n, oid) = by_name(name)?;
                Ok(Answer::Oid { oid, kind: n.kind, name: name.clone() })
            }
            Request::Add { parent, name, number, kind, writable, value } => {
                let p = node(parent)?;
                if !p.kind.interior() {
                    return Err(Error::ReadOnly);
                }
                check_component(name)?;
                check_value(*kind, value)?;
                Ok(v.visit(|| t.add(p, name, *number, *kind, *writable, value, &retire)).map(Answer::Number)?)
            }
            Request::Remove(oid) => {
                if oid.is_empty() {
                    return Err(Error::Busy);
                }
                let n = node(oid)?;
                Ok(v.visit(|| t.remove(n, &retire)).map(|()| Answer::Done)?)
            }
        }
    }

    /// Copy a leaf's value to the caller: longer than a page under the
    /// "sysctl mem" lock (the policies with locks of their own).
    fn copy_out(
        &self,
        core: usize,
        leaf: tree::Leaf<'_>,
        sink: &mut dyn Sink,
        v: &impl Visit,
    ) -> Result<Answer, Error> {
        let len = leaf.value.len();
        if len > sink.room() {
            return Ok(Answer::TooSmall(len));
        }
        let wire = len > SYSCTL_WIRE_BYTES && matches!(self.policy, SubsystemLocking::Sx | SubsystemLocking::Improper);
        if wire {
            self.locks.mem.acquire(core, spin_hook);
        }
        v.visit(|| sink.put(leaf.value));
        if wire {
            self.locks.mem.release(core);
        }
        Ok(Answer::Value { len, kind: leaf.node.kind })
    }
}
