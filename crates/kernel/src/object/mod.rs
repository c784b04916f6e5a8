//! Kernel objects: typed slabs and generation-checked references
//! ([`slab`]), each object type, capabilities.

pub(crate) mod cnode;
pub(crate) mod endpoint;
pub(crate) mod frame;
pub(crate) mod frame_pool;
pub(crate) mod irq;
pub(crate) mod notification;
pub(crate) mod page_tables;
pub(crate) mod reply;
pub(crate) mod slab;
pub(crate) mod slot_cap;
pub(crate) mod tcb;
pub(crate) mod thread;
pub(crate) mod untyped;
pub(crate) mod vspace;

use crate::abi::{CapRights, ObjectType, Word};
use crate::ids::ObjectId;

pub(crate) use cnode::{CNode, CapSlot, SlotAddr};
pub(crate) use endpoint::Endpoint;
pub(crate) use frame::Frame;
pub(crate) use irq::{IrqRef, IrqSlot};
pub(crate) use notification::Notification;
pub(crate) use reply::Reply;
pub(crate) use slab::{Header, Ref, Slab, Slot};
pub(crate) use thread::Tcb;
pub(crate) use untyped::Untyped;
pub(crate) use vspace::VSpace;

/// "No slot" in intrusive links and free lists.
pub(crate) const NIL: u32 = u32::MAX;

/// What a capability points to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) enum CapObj {
    #[default]
    Null,
    Untyped(Ref<Untyped>),
    Tcb(Ref<Tcb>),
    Endpoint(Ref<Endpoint>),
    Notification(Ref<Notification>),
    CNode(Ref<CNode>),
    Reply(Ref<Reply>),
    Frame(Ref<Frame>),
    VSpace(Ref<VSpace>),
    IrqControl,
    IrqHandler(IrqRef),
}

/// Kind numbers of [`ObjectId`] for objects that are not an [`ObjectType`].
pub(crate) const KIND_IRQ: u8 = 8;

impl CapObj {
    pub fn is_null(self) -> bool {
        matches!(self, CapObj::Null)
    }

    /// The object as a lock-set identifier (`None` for null and IRQ control).
    pub fn id(self) -> Option<ObjectId> {
        let (kind, index) = match self {
            CapObj::Null | CapObj::IrqControl => return None,
            CapObj::Untyped(r) => (ObjectType::Untyped as u8, r.index()),
            CapObj::Tcb(r) => (ObjectType::Tcb as u8, r.index()),
            CapObj::Endpoint(r) => (ObjectType::Endpoint as u8, r.index()),
            CapObj::Notification(r) => (ObjectType::Notification as u8, r.index()),
            CapObj::CNode(r) => (ObjectType::CNode as u8, r.index()),
            CapObj::Reply(r) => (ObjectType::Reply as u8, r.index()),
            CapObj::Frame(r) => (ObjectType::Frame as u8, r.index()),
            CapObj::VSpace(r) => (ObjectType::VSpace as u8, r.index()),
            CapObj::IrqHandler(r) => (KIND_IRQ, r.irq as u32),
        };
        Some(ObjectId { kind, index })
    }

    /// Whether badges mean anything for this object.
    pub fn badgeable(self) -> bool {
        matches!(self, CapObj::Endpoint(_) | CapObj::Notification(_))
    }
}

/// A capability: an object, rights and a badge.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) struct Cap {
    pub obj: CapObj,
    pub rights: CapRights,
    pub badge: Word,
}

impl Cap {
    pub const NULL: Cap = Cap { obj: CapObj::Null, rights: CapRights::NONE, badge: 0 };

    pub fn new(obj: CapObj) -> Self {
        Self { obj, rights: CapRights::ALL, badge: 0 }
    }
}
