//! CNode copy / mint / move / delete / revoke and untyped retype, with every
//! error path, the derivation tree and memory accounting.

use crate::common::*;
use granule_kernel::abi::*;
use granule_kernel::ThreadStatus;

const UT: Word = CAP_FIRST_UNTYPED;

fn retype(sim: &mut Sim, args: &[Word]) -> Result<Vec<Word>, Error> {
    sim.invoke(0, UT, InvocationLabel::UntypedRetype, args)
}

fn cnode(sim: &mut Sim, label: InvocationLabel, args: &[Word]) -> Result<Vec<Word>, Error> {
    sim.invoke(0, CAP_INIT_CNODE, label, args)
}

#[test]
fn retype_errors() {
    let mut sim = Sim::new(1);
    let free = sim.next_slot;
    let ep = ObjectType::Endpoint as Word;
    assert_eq!(retype(&mut sim, &[ep, 0, 0, free]), Err(Error::TruncatedMessage));
    assert_eq!(retype(&mut sim, &[99, 0, 0, free, 1]), Err(Error::InvalidArgument));
    assert_eq!(retype(&mut sim, &[ObjectType::CNode as Word, 0, 0, free, 1]), Err(Error::RangeError));
    assert_eq!(retype(&mut sim, &[ObjectType::CNode as Word, 17, 0, free, 1]), Err(Error::RangeError));
    assert_eq!(retype(&mut sim, &[ObjectType::Frame as Word, 11, 0, free, 1]), Err(Error::RangeError));
    // Frames come in the two page sizes only.
    assert_eq!(retype(&mut sim, &[ObjectType::Frame as Word, 13, 0, free, 1]), Err(Error::RangeError));
    assert_eq!(retype(&mut sim, &[ObjectType::Frame as Word, 20, 0, free, 1]), Err(Error::RangeError));
    assert_eq!(retype(&mut sim, &[ObjectType::Untyped as Word, 48, 0, free, 1]), Err(Error::RangeError));
    assert_eq!(retype(&mut sim, &[ep, 0, 0, free, 0]), Err(Error::RangeError));
    assert_eq!(retype(&mut sim, &[ep, 0, 0, free, 257]), Err(Error::RangeError));
    assert_eq!(retype(&mut sim, &[ep, 0, 0, 256, 1]), Err(Error::RangeError));
    assert_eq!(retype(&mut sim, &[ep, 0, 0, 250, 7]), Err(Error::RangeError));
    assert_eq!(retype(&mut sim, &[ep, 0, 0, u64::MAX, 2]), Err(Error::RangeError));
    assert_eq!(retype(&mut sim, &[ep, 0, 0, CAP_INIT_TCB, 1]), Err(Error::DeleteFirst));
    assert_eq!(retype(&mut sim, &[ep, 0, 200, free, 1]), Err(Error::FailedLookup));
    assert_eq!(retype(&mut sim, &[ep, 0, CAP_INIT_TCB, free, 1]), Err(Error::InvalidCapability));
    // 64 MiB untyped: 40 frames of 2 MiB do not fit.
    assert_eq!(retype(&mut sim, &[ObjectType::Frame as Word, 21, 0, free, 40]), Err(Error::NotEnoughMemory));
    // 65 TCBs do not fit the 64-slot slab (the root uses one).
    assert_eq!(retype(&mut sim, &[ObjectType::Tcb as Word, 0, 0, free, 64]), Err(Error::NotEnoughMemory));
    // Unknown label on an untyped.
    assert_eq!(sim.invoke(0, UT, InvocationLabel::CNodeCopy, &[0; 5]), Err(Error::IllegalOperation));
    // A raw label that is not an invocation at all.
    let root = sim.root;
    sim.sys(0, Sysno::Call, UT, MessageInfo::new(9999, 0, 0, 0), 0);
    assert_eq!(sim.buf(root).result(), Err(Error::IllegalOperation));
}

#[test]
fn retype_into_a_child_cnode_and_memory_accounting() {
    let mut sim = Sim::new(1);
    // A child untyped of 4 KiB, a CNode of 16 slots.
    let child = sim.retype(0, ObjectType::Untyped, 12, 1);
    let cn = sim.retype(0, ObjectType::CNode, 4, 1);
    // 4096 / 16 = 256 endpoints fit; 257 do not.
    let ep = ObjectType::Endpoint as Word;
    assert_eq!(sim.invoke(0, child, InvocationLabel::UntypedRetype, &[ep, 0, cn, 0, 16]), Ok(vec![]));
    // The CNode is full now.
    assert_eq!(sim.invoke(0, child, InvocationLabel::UntypedRetype, &[ep, 0, cn, 15, 1]), Err(Error::DeleteFirst));
    let big = ObjectType::Frame as Word;
    assert_eq!(
        sim.invoke(0, child, InvocationLabel::UntypedRetype, &[big, 21, 0, sim.next_slot, 1]),
        Err(Error::NotEnoughMemory)
    );
    // Revoking the child untyped destroys the 16 endpoints and gives the
    // memory back: a 4 KiB frame then fits exactly.
    cnode(&mut sim, InvocationLabel::CNodeRevoke, &[child]).unwrap();
    let f = sim.alloc_slot();
    assert_eq!(sim.invoke(0, child, InvocationLabel::UntypedRetype, &[big, 12, 0, f, 1]), Ok(vec![]));
    assert_eq!(
        sim.invoke(0, child, InvocationLabel::UntypedRetype, &[ep, 0, 0, sim.next_slot, 1]),
        Err(Error::NotEnoughMemory)
    );
    // Deleting the frame gives it back again.
    cnode(&mut sim, InvocationLabel::CNodeDelete, &[f]).unwrap();
    assert_eq!(sim.invoke(0, child, InvocationLabel::UntypedRetype, &[ep, 0, 0, f, 1]), Ok(vec![]));
}

#[test]
fn copy_mint_move_delete_errors() {
    let mut sim = Sim::new(1);
    let ep = sim.obj(ObjectType::Endpoint);
    let free = sim.alloc_slot();
    use InvocationLabel::*;
    assert_eq!(cnode(&mut sim, CNodeCopy, &[free, 0, ep]), Err(Error::TruncatedMessage));
    assert_eq!(cnode(&mut sim, CNodeCopy, &[256, 0, ep, 15]), Err(Error::RangeError));
    assert_eq!(cnode(&mut sim, CNodeCopy, &[free, 0, 256, 15]), Err(Error::RangeError));
    assert_eq!(cnode(&mut sim, CNodeCopy, &[free, 0, 200, 15]), Err(Error::FailedLookup));
    assert_eq!(cnode(&mut sim, CNodeCopy, &[free, 200, ep, 15]), Err(Error::FailedLookup));
    assert_eq!(cnode(&mut sim, CNodeCopy, &[free, ep, ep, 15]), Err(Error::InvalidCapability));
    assert_eq!(cnode(&mut sim, CNodeCopy, &[CAP_INIT_TCB, 0, ep, 15]), Err(Error::DeleteFirst));
    assert_eq!(cnode(&mut sim, CNodeMove, &[ep, 0, ep]), Err(Error::DeleteFirst));
    assert_eq!(cnode(&mut sim, CNodeMint, &[free, 0, ep, 15]), Err(Error::TruncatedMessage));
    assert_eq!(cnode(&mut sim, CNodeDelete, &[]), Err(Error::TruncatedMessage));
    assert_eq!(cnode(&mut sim, CNodeDelete, &[300]), Err(Error::RangeError));
    assert_eq!(cnode(&mut sim, CNodeRevoke, &[300]), Err(Error::RangeError));
    assert_eq!(cnode(&mut sim, UntypedRetype, &[0; 5]), Err(Error::IllegalOperation));
    // Deleting an empty slot is fine.
    assert_eq!(cnode(&mut sim, CNodeDelete, &[free]), Ok(vec![]));
    // Reply capabilities are not duplicated.
    let reply = sim.obj(ObjectType::Reply);
    assert_eq!(cnode(&mut sim, CNodeCopy, &[free, 0, reply, 15]), Err(Error::IllegalOperation));
    // A copy with fewer rights really has fewer rights.
    cnode(&mut sim, CNodeCopy, &[free, 0, ep, CapRights::READ.0]).unwrap();
    let root = sim.root;
    sim.sys(0, Sysno::NBSend, free, msg(0, 0), 0);
    assert_eq!(sim.buf(root).result(), Err(Error::InvalidCapability));
    // Move keeps the capability working from its new slot.
    let moved = sim.alloc_slot();
    cnode(&mut sim, CNodeMove, &[moved, 0, ep]).unwrap();
    sim.sys(0, Sysno::NBSend, ep, msg(0, 0), 0);
    assert_eq!(sim.buf(root).result(), Err(Error::InvalidCapability));
    sim.sys(0, Sysno::NBSend, moved, msg(0, 0), 0);
    assert_eq!(sim.buf(root).result(), Ok(()));
    // The read-only copy is still a child of the moved capability.
    cnode(&mut sim, CNodeRevoke, &[moved]).unwrap();
    sim.sys(0, Sysno::NBRecv, free, msg(0, 0), 0);
    assert_eq!(sim.buf(root).result(), Err(Error::InvalidCapability));
    sim.sys(0, Sysno::NBSend, moved, msg(0, 0), 0);
    assert_eq!(sim.buf(root).result(), Ok(()));
}

#[test]
fn revoke_tree_and_lifted_grandchildren() {
    let mut sim = Sim::new(1);
    use InvocationLabel::*;
    let ep = sim.obj(ObjectType::Endpoint);
    let a = sim.alloc_slot();
    let b = sim.alloc_slot();
    let c = sim.alloc_slot();
    cnode(&mut sim, CNodeCopy, &[a, 0, ep, 15]).unwrap(); // ep → a
    cnode(&mut sim, CNodeCopy, &[b, 0, a, 15]).unwrap(); // a → b
    cnode(&mut sim, CNodeCopy, &[c, 0, ep, 15]).unwrap(); // ep → c
                                                          // Deleting a lifts b to be a child of ep; revoking c must not touch b.
    cnode(&mut sim, CNodeDelete, &[a]).unwrap();
    cnode(&mut sim, CNodeRevoke, &[c]).unwrap();
    let root = sim.root;
    sim.sys(0, Sysno::NBSend, b, msg(0, 0), 0);
    assert_eq!(sim.buf(root).result(), Ok(()));
    // Revoking ep removes b and c; ep itself stays.
    cnode(&mut sim, CNodeRevoke, &[ep]).unwrap();
    for x in [b, c] {
        sim.sys(0, Sysno::NBSend, x, msg(0, 0), 0);
        assert_eq!(sim.buf(root).result(), Err(Error::InvalidCapability));
    }
    sim.sys(0, Sysno::NBSend, ep, msg(0, 0), 0);
    assert_eq!(sim.buf(root).result(), Ok(()));
}

#[test]
fn deleting_a_cnode_cascades() {
    let mut sim = Sim::new(1);
    use InvocationLabel::*;
    let cn = sim.retype(0, ObjectType::CNode, 3, 1);
    let cn2 = sim.retype(0, ObjectType::CNode, 2, 1);
    let ep = ObjectType::Endpoint as Word;
    // Objects retyped straight into the child CNodes, and a thread.
    cnode(&mut sim, UntypedRetype, &[]).unwrap_err();
    sim.invoke(0, UT, UntypedRetype, &[ep, 0, cn, 0, 4]).unwrap();
    sim.invoke(0, UT, UntypedRetype, &[ObjectType::Tcb as Word, 0, cn2, 0, 1]).unwrap();
    // Put the only capability to cn2 into cn (move it there).
    sim.invoke(0, cn, CNodeMove, &[5, 0, cn2]).unwrap();
    // A cycle: cn holds a copy of itself.
    sim.invoke(0, cn, CNodeCopy, &[6, 0, cn, 15]).unwrap();
    // Deleting the external capability does not destroy cn (the copy inside
    // still names it) — revoking the untyped reclaims everything.
    cnode(&mut sim, CNodeDelete, &[cn]).unwrap();
    sim.check();
    cnode(&mut sim, CNodeRevoke, &[UT]).unwrap();
    sim.check();
    // All memory is back: the whole untyped can be retyped as one object.
    let slot = sim.alloc_slot();
    assert_eq!(sim.invoke(0, UT, UntypedRetype, &[ObjectType::Untyped as Word, 26, 0, slot, 1]), Ok(vec![]));
}

#[test]
fn deleting_own_tcb_and_cnode_capabilities() {
    let mut sim = Sim::new(1);
    let (t_cap, t) = sim.spawn(1, 150, 0);
    assert_eq!(sim.running[0], Some(t));
    // The thread deletes its own TCB capability: it is destroyed at once.
    sim.invoke_maybe_restart(0, CAP_INIT_CNODE, InvocationLabel::CNodeDelete, &[t_cap]);
    assert_eq!(sim.info(t), None);
    assert_eq!(sim.running[0], Some(sim.root));
    assert_eq!(sim.status(sim.root), ThreadStatus::Current);
}
