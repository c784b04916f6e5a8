//! IRQ handlers (interrupt → notification, masked until ack) and frames /
//! address spaces (map, address, unmap, destroy).

use crate::common::*;
use granule_kernel::abi::*;
use granule_kernel::translation::Change;
use granule_kernel::{CoreMask, SpaceId, ThreadStatus, Translation, Translations};

use InvocationLabel::*;

#[test]
fn irq_to_notification_and_ack() {
    let mut sim = Sim::new(2);
    let n = sim.obj(ObjectType::Notification);
    let h = sim.alloc_slot();
    let dev = sim.boot.device_irq_base + 3;
    assert_eq!(sim.invoke(0, CAP_IRQ_CONTROL, IrqIssueIrqHandler, &[64, 0, h]), Err(Error::RangeError));
    assert_eq!(
        sim.invoke(0, CAP_IRQ_CONTROL, IrqIssueIrqHandler, &[dev as Word, 0, CAP_INIT_TCB]),
        Err(Error::DeleteFirst)
    );
    assert_eq!(sim.invoke(0, CAP_IRQ_CONTROL, IrqIssueIrqHandler, &[dev as Word, 0]), Err(Error::TruncatedMessage));
    sim.invoke(0, CAP_IRQ_CONTROL, IrqIssueIrqHandler, &[dev as Word, 0, h]).unwrap();
    let h2 = sim.alloc_slot();
    assert_eq!(sim.invoke(0, CAP_IRQ_CONTROL, IrqIssueIrqHandler, &[dev as Word, 0, h2]), Err(Error::RevokeFirst));
    assert_eq!(sim.invoke(0, CAP_IRQ_CONTROL, IrqAckIrq, &[]), Err(Error::IllegalOperation));
    assert_eq!(sim.invoke(0, h, IrqSetIrqHandler, &[CAP_INIT_TCB]), Err(Error::InvalidCapability));
    assert_eq!(sim.invoke(0, h, IrqSetIrqHandler, &[201]), Err(Error::FailedLookup));
    assert_eq!(sim.invoke(0, h, IrqIssueIrqHandler, &[0, 0, 0]), Err(Error::IllegalOperation));

    // No notification yet: the interrupt is acknowledged at once.
    sim.interrupt(1, dev);
    assert_eq!(sim.acked, vec![dev]);
    sim.acked.clear();

    // A handler thread on core 1 waits for the interrupt.
    let badged = sim.alloc_slot();
    sim.invoke(0, CAP_INIT_CNODE, CNodeMint, &[badged, 0, n, CapRights::WRITE.0, 1 << 3]).unwrap();
    sim.invoke(0, h, IrqSetIrqHandler, &[badged]).unwrap();
    let (_, t) = sim.spawn(1, 150, 1);
    sim.sys(1, Sysno::Wait, n, msg(0, 0), 0);
    assert_eq!(sim.running[1], None);
    // Delivered on core 0: the waiter on core 1 wakes (IPI), the line stays masked.
    sim.interrupt(0, dev);
    assert_eq!(sim.running[1], Some(t));
    assert_eq!(sim.buf(t).badge, 1 << 3);
    assert!(sim.acked.is_empty());
    // A second interrupt while masked is dropped.
    sim.interrupt(0, dev);
    sim.sys(1, Sysno::Poll, n, msg(0, 0), 0);
    assert_eq!(sim.buf(t).badge, 0);
    // The handler acknowledges: the plan unmasks the line.
    sim.invoke(1, h, IrqAckIrq, &[]).unwrap();
    assert_eq!(sim.acked, vec![dev]);
    sim.interrupt(0, dev);
    sim.sys(1, Sysno::Poll, n, msg(0, 0), 0);
    assert_eq!(sim.buf(t).badge, 1 << 3);
    // Clear the handler; delete it (a pending line is acknowledged); reissue.
    sim.invoke(1, h, IrqClearIrqHandler, &[]).unwrap();
    sim.acked.clear();
    sim.invoke(1, CAP_INIT_CNODE, CNodeDelete, &[h]).unwrap();
    assert_eq!(sim.acked, vec![dev]);
    sim.invoke(1, CAP_IRQ_CONTROL, IrqIssueIrqHandler, &[dev as Word, 0, h]).unwrap();
    // Out-of-range interrupts are ignored.
    sim.interrupt(0, 1000);
    assert_eq!(sim.status(t), ThreadStatus::Current);
}

#[test]
fn per_core_timer_irq() {
    let mut sim = Sim::new(2);
    let n = sim.obj(ObjectType::Notification);
    let h = sim.alloc_slot();
    let timer1 = sim.boot.timer_irq_base + 1;
    sim.invoke(0, CAP_IRQ_CONTROL, IrqIssueIrqHandler, &[timer1 as Word, 0, h]).unwrap();
    sim.invoke(0, h, IrqSetIrqHandler, &[n]).unwrap();
    sim.interrupt(1, timer1);
    sim.sys(0, Sysno::Poll, n, msg(0, 0), 0);
    assert_eq!(sim.buf(sim.root).result(), Ok(()));
    sim.invoke(0, h, IrqAckIrq, &[]).unwrap();
    assert_eq!(sim.acked, vec![timer1]);
}

#[test]
fn frames_map_unmap_and_memory() {
    let mut sim = Sim::new(1);
    let f = sim.retype(0, ObjectType::Frame, 12, 1);
    let v = sim.obj(ObjectType::VSpace);
    assert_eq!(sim.invoke(0, f, FrameGetAddress, &[]), Err(Error::IllegalOperation));
    assert_eq!(sim.invoke(0, f, FrameMap, &[]), Err(Error::TruncatedMessage));
    assert_eq!(sim.invoke(0, f, FrameMap, &[v]), Err(Error::TruncatedMessage));
    assert_eq!(sim.invoke(0, f, FrameMap, &[CAP_INIT_TCB, 0]), Err(Error::InvalidCapability));
    assert_eq!(sim.invoke(0, f, FrameMap, &[222, 0]), Err(Error::FailedLookup));
    assert_eq!(sim.invoke(0, f, FrameMap, &[v, 0x1800]), Err(Error::AlignmentError));
    assert_eq!(sim.invoke(0, f, FrameMap, &[v, VSPACE_BYTES]), Err(Error::InvalidArgument));
    assert_eq!(sim.invoke(0, f, FrameMap, &[v, Word::MAX]), Err(Error::InvalidArgument));
    let r = sim.invoke(0, f, FrameMap, &[v, 0x1000]).unwrap();
    assert_eq!(r[1], 4096);
    assert_ne!(r[0], 0);
    assert_eq!(r[0] % 4096, 0);
    assert_eq!(sim.invoke(0, f, FrameMap, &[v, 0x1000]), Err(Error::DeleteFirst));
    assert_eq!(sim.invoke(0, f, FrameMap, &[v, 0x2000]), Err(Error::DeleteFirst), "mapped already");
    assert_eq!(sim.invoke(0, f, FrameGetAddress, &[]).unwrap(), r);
    // The memory is real and zeroed (the test acts as user code).
    let p = r[0] as usize as *mut u64;
    // SAFETY: the frame is mapped and alive; 4096 bytes at `p` are ours.
    unsafe {
        assert_eq!(p.read(), 0);
        p.add(511).write(0xfeed);
        assert_eq!(p.add(511).read(), 0xfeed);
    }
    // Copies of the frame see the same memory.
    let f2 = sim.alloc_slot();
    sim.invoke(0, CAP_INIT_CNODE, CNodeCopy, &[f2, 0, f, 15]).unwrap();
    assert_eq!(sim.invoke(0, f2, FrameGetAddress, &[]).unwrap(), r);
    sim.invoke(0, f, FrameUnmap, &[]).unwrap();
    assert_eq!(sim.invoke(0, f, FrameGetAddress, &[]), Err(Error::IllegalOperation));
    sim.invoke(0, f, FrameUnmap, &[]).unwrap();
    // Map again, then destroy the address space: the frame is unmapped.
    sim.invoke(0, f, FrameMap, &[v, 0x1000]).unwrap();
    sim.invoke(0, CAP_INIT_CNODE, CNodeDelete, &[v]).unwrap();
    assert_eq!(sim.invoke(0, f, FrameGetAddress, &[]), Err(Error::IllegalOperation));
    // Destroying a mapped frame unmaps it from its address space.
    let v2 = sim.obj(ObjectType::VSpace);
    sim.invoke(0, f, FrameMap, &[v2, 0]).unwrap();
    sim.invoke(0, CAP_INIT_CNODE, CNodeRevoke, &[f]).unwrap();
    sim.invoke(0, CAP_INIT_CNODE, CNodeDelete, &[f]).unwrap();
    // Its page is free again.
    let g = sim.retype(0, ObjectType::Frame, 12, 1);
    sim.invoke(0, g, FrameMap, &[v2, 0]).unwrap();
    sim.check();
}

#[test]
fn mappings_conflict_by_page_and_by_region() {
    let mut sim = Sim::new(1);
    let v = sim.obj(ObjectType::VSpace);
    let small = sim.retype(0, ObjectType::Frame, 12, 3);
    let large = sim.retype(0, ObjectType::Frame, 21, 2);
    assert_eq!(sim.invoke(0, large, FrameMap, &[v, 0x1000]), Err(Error::AlignmentError));
    let r = sim.invoke(0, large, FrameMap, &[v, 0x20_0000]).unwrap();
    assert_eq!(r[1], 2 << 20);
    // A small page inside the large one's region, another large one on it.
    assert_eq!(sim.invoke(0, small, FrameMap, &[v, 0x20_1000]), Err(Error::DeleteFirst));
    assert_eq!(sim.invoke(0, large + 1, FrameMap, &[v, 0x20_0000]), Err(Error::DeleteFirst));
    // Two small pages on one page.
    sim.invoke(0, small, FrameMap, &[v, 0x40_0000]).unwrap();
    assert_eq!(sim.invoke(0, small + 1, FrameMap, &[v, 0x40_0000]), Err(Error::DeleteFirst));
    sim.invoke(0, small + 1, FrameMap, &[v, 0x40_1000]).unwrap();
    // A region with a page table refuses a large page, even once its small
    // pages are gone (the table stays until the space is destroyed).
    sim.invoke(0, small, FrameUnmap, &[]).unwrap();
    sim.invoke(0, small + 1, FrameUnmap, &[]).unwrap();
    assert_eq!(sim.invoke(0, large + 1, FrameMap, &[v, 0x40_0000]), Err(Error::DeleteFirst));
    // The same page of another space is free.
    let v2 = sim.obj(ObjectType::VSpace);
    sim.invoke(0, small + 2, FrameMap, &[v2, 0x20_1000]).unwrap();
    // Unmapping the large page frees its region for small pages.
    sim.invoke(0, large, FrameUnmap, &[]).unwrap();
    sim.invoke(0, small, FrameMap, &[v, 0x20_1000]).unwrap();
    sim.check();
}

#[test]
fn page_tables_run_out_and_come_back() {
    let mut cfg = config(1);
    // One table, and the one the kernel keeps per core (`max_page_tables`).
    cfg.max_page_tables = 1;
    cfg.max_frames = 4;
    let r = regime(&cfg);
    let mut sim = Sim::with(cfg, r);
    let v = sim.obj(ObjectType::VSpace);
    let first = sim.retype(0, ObjectType::Frame, 12, 4);
    // Each 2 MiB region of small pages needs a table.
    sim.invoke(0, first, FrameMap, &[v, 0]).unwrap();
    sim.invoke(0, first + 1, FrameMap, &[v, 0x1000]).unwrap();
    sim.invoke(0, first + 2, FrameMap, &[v, 0x20_0000]).unwrap();
    assert_eq!(sim.invoke(0, first + 3, FrameMap, &[v, 0x40_0000]), Err(Error::NotEnoughMemory));
    // Destroying the space gives its tables back.
    sim.invoke(0, CAP_INIT_CNODE, CNodeDelete, &[v]).unwrap();
    let v = sim.obj(ObjectType::VSpace);
    sim.invoke(0, first + 3, FrameMap, &[v, 0x40_0000]).unwrap();
    sim.check();
    // The frame slab is full too.
    let slot = sim.alloc_slot();
    assert_eq!(
        sim.invoke(0, CAP_FIRST_UNTYPED, UntypedRetype, &[ObjectType::Frame as Word, 12, 0, slot, 1]),
        Err(Error::NotEnoughMemory)
    );
}

/// What a platform with page tables heard (`Translations`): `(core,
/// space, vaddr, shoot, now)`, `vaddr` `None` for a cleared space.
#[derive(Debug, Default)]
struct Heard(std::sync::Mutex<Vec<Told>>);

/// One call a [`Heard`] got.
type Told = (usize, SpaceId, Option<Word>, CoreMask, Option<Translation>);

impl Translations for Heard {
    fn changed(&self, core: usize, c: &Change<'_>) {
        assert!(!c.large);
        self.0.lock().unwrap().push((core, c.space, Some(c.vaddr), c.shoot, c.now()));
    }
    fn cleared(&self, core: usize, space: SpaceId, shoot: CoreMask) {
        self.0.lock().unwrap().push((core, space, None, shoot, None));
    }
}

impl Heard {
    fn take(&self) -> Vec<Told> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

/// A platform's hardware translation hears every map, unmap, frame
/// deletion and space destruction from inside the entry, with what the
/// mappings say now; an unmap names exactly the other cores that ran the
/// space; and each exit plan names the space its thread runs in.
#[test]
fn hardware_translations_hear_every_mapping_change_and_plans_name_the_space() {
    let mut sim = Sim::new(2);
    let heard: &'static Heard = Box::leak(Box::default());
    sim.k.set_translations(heard);
    let init = sim.spaces[0].expect("the root runs in its VSpace");
    // A thread of the root's space runs on core 1: core 1 joins its bitmap.
    let (_, t) = sim.spawn(1, 150, 1);
    assert_eq!((sim.running[1], sim.spaces[1]), (Some(t), Some(init)));
    let f = sim.retype(0, ObjectType::Frame, 12, 1);
    let v = sim.obj(ObjectType::VSpace);
    let small = |addr: Word| Some(Translation { addr, large: false });

    // A space nobody ran: no core to shoot down.
    let addr = sim.invoke(0, f, FrameMap, &[v, 0x1000]).unwrap()[0];
    let got = heard.take();
    let space = got[0].1;
    assert_ne!(space, init);
    assert_eq!(got, vec![(0, space, Some(0x1000), CoreMask::EMPTY, small(addr))]);
    sim.invoke(0, f, FrameUnmap, &[]).unwrap();
    assert_eq!(heard.take(), vec![(0, space, Some(0x1000), CoreMask::EMPTY, None)]);
    // Failed or empty operations change nothing.
    sim.invoke(0, f, FrameUnmap, &[]).unwrap();
    assert_eq!(sim.invoke(0, f, FrameMap, &[v, 0x1001]), Err(Error::AlignmentError));
    assert_eq!(heard.take(), vec![]);

    // The root's space, which core 1 ran: its unmap shoots core 1 down.
    sim.invoke(0, f, FrameMap, &[CAP_INIT_VSPACE, 0x2000]).unwrap();
    assert_eq!(heard.take(), vec![(0, init, Some(0x2000), CoreMask::EMPTY, small(addr))]);
    sim.invoke(0, f, FrameUnmap, &[]).unwrap();
    assert_eq!(heard.take(), vec![(0, init, Some(0x2000), CoreMask::single(1), None)]);

    // Destroying a space clears it; deleting a mapped frame unmaps it.
    sim.invoke(0, f, FrameMap, &[v, 0x3000]).unwrap();
    sim.invoke(0, CAP_INIT_CNODE, CNodeDelete, &[v]).unwrap();
    let got = heard.take();
    assert_eq!(got.last(), Some(&(0, space, None, CoreMask::EMPTY, None)));
    sim.invoke(0, f, FrameMap, &[CAP_INIT_VSPACE, 0x4000]).unwrap();
    heard.take();
    // Core 1 runs the space the frame is mapped in: the delete stalls it
    // first (the root's call restarts until it is stalled).
    let deleted = (0..4).find_map(|_| sim.invoke_maybe_restart(0, CAP_INIT_CNODE, CNodeDelete, &[f]));
    assert_eq!(deleted, Some(Ok(())));
    assert_eq!(heard.take(), vec![(0, init, Some(0x4000), CoreMask::single(1), None)]);

    // A thread without a space runs with none.
    let cap = sim.obj(ObjectType::Tcb);
    sim.root_invoke(cap, Invocation::configure(CAP_INIT_CNODE, 0));
    sim.root_invoke(cap, Invocation::set_priority(200));
    sim.root_invoke(cap, Invocation::set_affinity(1));
    sim.root_invoke(cap, Invocation::start(1, 1));
    let u = sim.k.thread_of_cap(&mut sim.cores[0], sim.root, cap).unwrap();
    assert_eq!((sim.running[1], sim.spaces[1]), (Some(u), None));
    sim.check();
}
