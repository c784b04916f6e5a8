//! Boot: the kernel state built from a configuration, with the root
//! thread, its CNode, VSpace and capabilities, and the untyped memory.

use alloc::vec::Vec;
use core::sync::atomic::Ordering;

use crate::abi::{IpcBuffer, Word, CAP_FIRST_UNTYPED, CAP_INIT_CNODE, CAP_INIT_TCB, CAP_INIT_VSPACE, CAP_IRQ_CONTROL};
use crate::config::{BootConfig, BootError};
use crate::ids::ThreadId;
use crate::introspect::BootInfo;
use crate::object::{CNode, Cap, CapObj, CapSlot, Header, SlotAddr, Tcb, Untyped, VSpace};
use crate::state::{Ctx, State, IPI_RESCHEDULE};
use crate::waits::Waits;

impl<W: Waits> State<W> {
    /// Build the state for `config` under the wait representation `waits`.
    pub fn boot(config: &BootConfig, waits: W) -> Result<(Self, BootInfo), BootError> {
        let c = config;
        let state = Self::new(config, waits)?;

        // SAFETY: nothing else can reach `state` yet: this thread has
        // exclusive access to all of it; `State::new` accepted the
        // configuration, so it has core 0.
        let mut ctx = unsafe { Ctx::new(&state, 0) };
        let hdr = Header { caps: 1, parent: None, bytes: 0 };
        let cnode = ctx.alloc(CNode::new(c.root_cnode_bits), hdr).ok_or(BootError::Capacity)?;
        let vspace = ctx.alloc(VSpace::new(), hdr).ok_or(BootError::Capacity)?;
        let mut tcb = Tcb::new(0);
        tcb.prio = c.root_priority;
        tcb.cspace = Some(cnode);
        tcb.vspace = Some(vspace);
        tcb.slice = c.timeslice_ticks;
        let root = ctx.alloc(tcb, hdr).ok_or(BootError::Capacity)?;
        *ctx.ipc(root) = IpcBuffer::new();
        let put = |ctx: &mut Ctx<'_, W>, index: Word, obj: CapObj| {
            let slot = ctx.cap_slot(SlotAddr { cnode, index: index as u32 }).ok_or(BootError::RootCNode)?;
            *slot = CapSlot::root(Cap::new(obj));
            Ok::<(), BootError>(())
        };
        put(&mut ctx, CAP_INIT_TCB, CapObj::Tcb(root))?;
        put(&mut ctx, CAP_INIT_CNODE, CapObj::CNode(cnode))?;
        put(&mut ctx, CAP_INIT_VSPACE, CapObj::VSpace(vspace))?;
        put(&mut ctx, CAP_IRQ_CONTROL, CapObj::IrqControl)?;
        let each = (c.untyped_bytes / c.untyped_count as u64) & !15;
        let mut untyped = Vec::new();
        for i in 0..c.untyped_count {
            let u = ctx.alloc(Untyped::new(each), hdr).ok_or(BootError::Capacity)?;
            let cptr = CAP_FIRST_UNTYPED + i as Word;
            put(&mut ctx, cptr, CapObj::Untyped(u))?;
            untyped.push((cptr, each));
        }
        // The root thread is runnable on core 0; core 0's first entry picks it.
        ctx.tcb_mut(root).ok_or(BootError::Capacity)?.state = crate::object::thread::ThreadState::Running;
        ctx.enqueue(root, false);
        ctx.cell(0).pending.store(IPI_RESCHEDULE, Ordering::Relaxed);

        let info = BootInfo {
            cores: c.cores,
            root_thread: ThreadId { index: root.index(), gen: root.gen() },
            root_cnode_bits: c.root_cnode_bits,
            untyped,
            first_free_slot: CAP_FIRST_UNTYPED + c.untyped_count as Word,
            slots: 1 << c.root_cnode_bits,
            timer_irq_base: 0,
            device_irq_base: c.cores,
        };
        Ok((state, info))
    }
}
