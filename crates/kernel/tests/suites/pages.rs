//! Frame allocation and free through the untypeds' free lists
//! (`object/frame_pool.rs`), under every regime: freed 4 KiB frames come
//! back zeroed, the lists never change what a retype may do, and destroying
//! an untyped frees its list. Under `lockfree` the allocations and frees
//! here run on the shared path (`lockfree/pages.rs`); the test checks
//! that they did. The invariant checker (free lists and detached slots
//! included) runs after every entry.

use crate::common::*;
use granule_kernel::abi::*;
use InvocationLabel::*;

const UT: Word = CAP_FIRST_UNTYPED;
const FRAME: Word = ObjectType::Frame as Word;

fn shared_pages(sim: &Sim) -> u64 {
    (0..2).map(|c| sim.k.core_stats(c).shared_pages).sum()
}

/// Map the frame in `f` at 0x1000 of a fresh address space; its memory.
fn map(sim: &mut Sim, f: Word, v: Word) -> *mut u64 {
    let r = sim.invoke(0, f, FrameMap, &[v, 0x1000]).unwrap();
    r[0] as usize as *mut u64
}

#[test]
fn freed_frames_come_back_zeroed_from_their_untyped() {
    let mut sim = Sim::new(2);
    let v = sim.obj(ObjectType::VSpace);
    let a = sim.alloc_slot();
    sim.invoke(0, UT, UntypedRetype, &[FRAME, 12, 0, a, 1]).unwrap();
    let p = map(&mut sim, a, v);
    // SAFETY: the frame is mapped and alive; its 4096 bytes are ours.
    unsafe { p.add(7).write(0xdead) };
    sim.invoke(0, a, FrameUnmap, &[]).unwrap();
    sim.invoke(0, CAP_INIT_CNODE, CNodeDelete, &[a]).unwrap();
    // The next 4 KiB frame from the same untyped is the freed one, zeroed.
    for round in 0..3 {
        let b = sim.alloc_slot();
        sim.invoke(0, UT, UntypedRetype, &[FRAME, 12, 0, b, 1]).unwrap();
        let q = map(&mut sim, b, v);
        assert_eq!(q, p, "round {round}: the free list's frame");
        // SAFETY: as above, for the frame in `b`.
        unsafe {
            assert_eq!(q.add(7).read(), 0, "round {round}: not zeroed");
            q.add(7).write(0xbeef);
        }
        assert_eq!(sim.invoke(0, b, FrameMap, &[v, 0x1000]), Err(Error::DeleteFirst));
        sim.invoke(0, b, FrameUnmap, &[]).unwrap();
        // A frame freed while mapped is unmapped on the way.
        if round == 1 {
            map(&mut sim, b, v);
        }
        sim.invoke(0, CAP_INIT_CNODE, CNodeDelete, &[b]).unwrap();
        assert_eq!(sim.invoke(0, b, FrameGetAddress, &[]), Err(Error::InvalidCapability));
    }
    if WHICH == Which::LockFree {
        assert!(shared_pages(&sim) >= 4, "shared allocations and frees: {}", shared_pages(&sim));
    } else {
        assert_eq!(shared_pages(&sim), 0);
    }
    sim.check();
}

#[test]
fn an_occupied_slot_refuses_a_frame_from_the_list_and_keeps_it() {
    let mut sim = Sim::new(1);
    let a = sim.alloc_slot();
    sim.invoke(0, UT, UntypedRetype, &[FRAME, 12, 0, a, 1]).unwrap();
    sim.invoke(0, CAP_INIT_CNODE, CNodeDelete, &[a]).unwrap();
    // The list has a frame, but the destination is taken.
    assert_eq!(sim.invoke(0, UT, UntypedRetype, &[FRAME, 12, 0, CAP_INIT_TCB, 1]), Err(Error::DeleteFirst));
    assert_eq!(sim.invoke(0, UT, UntypedRetype, &[FRAME, 12, 0, 4096, 1]), Err(Error::RangeError));
    assert_eq!(sim.invoke(0, UT, UntypedRetype, &[FRAME, 12, 200, a, 1]), Err(Error::FailedLookup));
    // Copies of a frame from the list, and the list's frame is still there.
    let b = sim.alloc_slot();
    sim.invoke(0, UT, UntypedRetype, &[FRAME, 12, 0, b, 1]).unwrap();
    let c = sim.alloc_slot();
    sim.invoke(0, CAP_INIT_CNODE, CNodeCopy, &[c, 0, b, CapRights::ALL.0]).unwrap();
    // The copy keeps the frame alive when the original goes.
    sim.invoke(0, CAP_INIT_CNODE, CNodeDelete, &[b]).unwrap();
    sim.invoke(0, c, FrameGetAddress, &[]).unwrap_err();
    let v = sim.obj(ObjectType::VSpace);
    sim.invoke(0, c, FrameMap, &[v, 0]).unwrap();
    sim.invoke(0, CAP_INIT_CNODE, CNodeRevoke, &[UT]).unwrap();
    assert_eq!(sim.invoke(0, c, FrameMap, &[v, 0]), Err(Error::InvalidCapability));
    sim.check();
}

#[test]
fn frames_on_a_list_count_as_free_memory() {
    let mut sim = Sim::new(1);
    // A child untyped of 8 KiB: two frames fill it.
    let child = sim.retype(0, ObjectType::Untyped, 13, 1);
    let f = sim.alloc_slot();
    let g = sim.alloc_slot();
    sim.invoke(0, child, UntypedRetype, &[FRAME, 12, 0, f, 1]).unwrap();
    sim.invoke(0, child, UntypedRetype, &[FRAME, 12, 0, g, 1]).unwrap();
    let ep = ObjectType::Endpoint as Word;
    let e = sim.alloc_slot();
    assert_eq!(sim.invoke(0, child, UntypedRetype, &[ep, 0, 0, e, 1]), Err(Error::NotEnoughMemory));
    // Both frames go on the child's list; their memory is free again for
    // anything, as it would be without the list.
    sim.invoke(0, CAP_INIT_CNODE, CNodeDelete, &[f]).unwrap();
    sim.invoke(0, CAP_INIT_CNODE, CNodeDelete, &[g]).unwrap();
    sim.invoke(0, child, UntypedRetype, &[ep, 0, 0, e, 1]).unwrap();
    // One frame still fits beside the endpoint, two do not.
    assert_eq!(sim.invoke(0, child, UntypedRetype, &[FRAME, 12, 0, f, 2]), Err(Error::NotEnoughMemory));
    sim.invoke(0, child, UntypedRetype, &[FRAME, 12, 0, f, 1]).unwrap();
    assert_eq!(sim.invoke(0, child, UntypedRetype, &[FRAME, 12, 0, g, 1]), Err(Error::NotEnoughMemory));
    // Two frames on the list, then a retype of two takes both.
    sim.invoke(0, CAP_INIT_CNODE, CNodeDelete, &[e]).unwrap();
    sim.invoke(0, CAP_INIT_CNODE, CNodeDelete, &[f]).unwrap();
    sim.invoke(0, child, UntypedRetype, &[FRAME, 12, 0, f, 2]).unwrap();
    sim.invoke(0, CAP_INIT_CNODE, CNodeDelete, &[f]).unwrap();
    sim.invoke(0, CAP_INIT_CNODE, CNodeDelete, &[g]).unwrap();
    // Destroying the untyped frees its list (the checker would find a list
    // of a dead untyped).
    sim.invoke(0, CAP_INIT_CNODE, CNodeDelete, &[child]).unwrap();
    sim.check();
}

#[test]
fn two_cores_allocate_and_free_from_one_untyped() {
    let mut sim = Sim::new(2);
    let v = sim.obj(ObjectType::VSpace);
    // A thread on core 1 with the root's CSpace: both cores retype from
    // the same untyped into their own slots and delete again.
    let (_, t1) = sim.spawn(0, 100, 1);
    let slots = [sim.alloc_slot(), sim.alloc_slot()];
    let seed = sim.alloc_slot();
    sim.invoke(0, UT, UntypedRetype, &[FRAME, 12, 0, seed, 1]).unwrap();
    sim.invoke(0, CAP_INIT_CNODE, CNodeDelete, &[seed]).unwrap();
    for round in 0..4 {
        for core in [0, 1] {
            let s = slots[core];
            sim.invoke(core, UT, UntypedRetype, &[FRAME, 12, 0, s, 1]).unwrap();
            if round % 2 == 1 {
                let r = sim.invoke(core, s, FrameMap, &[v, 0x1000 * (core as Word + 1)]).unwrap();
                // SAFETY: mapped and alive, 4096 bytes.
                unsafe { assert_eq!((r[0] as usize as *const u64).read(), 0) };
            }
        }
        for core in [1, 0] {
            sim.invoke(core, CAP_INIT_CNODE, CNodeDelete, &[slots[core]]).unwrap();
        }
    }
    let _ = t1;
    if WHICH == Which::LockFree {
        let per_core = [0, 1].map(|c| sim.k.core_stats(c).shared_pages);
        assert!(per_core.iter().all(|&n| n > 0), "shared allocations and frees per core: {per_core:?}");
    }
    sim.check();
}
