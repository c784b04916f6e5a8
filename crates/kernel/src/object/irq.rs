//! Interrupts: IRQ control issues one handler capability per line; a handler
//! routes its line to a notification. A delivered interrupt stays masked
//! until the handler thread acknowledges it (`IrqAckIrq`), which puts the
//! line in the exit plan's `irq_acks` for the platform to unmask.
//!
//! Lines `0..cores` are the cores' virtual timers; the rest are devices. The
//! platform reports an interrupt with [`crate::Kernel::interrupt`].

use crate::abi::{CapRights, Error, InvocationLabel, Word, NUM_IRQS};
use crate::args::Args;
use crate::hold::Hold;
use crate::object::{Cap, CapObj, Notification, Ref, SlotAddr, Tcb};
use crate::outcome::Outcome;
use crate::state::Ctx;
use crate::waits::Waits;

/// A reference to an issued IRQ handler: line and issue generation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct IrqRef {
    pub irq: u16,
    pub gen: u32,
}

/// One interrupt line's handler state.
#[derive(Debug)]
pub(crate) struct IrqSlot {
    pub gen: u32,
    pub issued: bool,
    pub caps: u32,
    /// Notification to signal and the badge to signal it with.
    pub ntfn: Option<(Ref<Notification>, Word)>,
    /// Delivered and not yet acknowledged (masked).
    pub pending: bool,
}

impl IrqSlot {
    pub fn new() -> Self {
        Self { gen: 1, issued: false, caps: 0, ntfn: None, pending: false }
    }
}

/// A decoded IRQ invocation.
#[derive(Clone, Copy, Debug)]
pub(crate) enum IrqOp {
    Issue { irq: usize, dest: SlotAddr, control: SlotAddr },
    Ack { irq: IrqRef },
    Set { irq: IrqRef, ntfn: Ref<Notification>, badge: Word },
    Clear { irq: IrqRef },
}

impl<W: Waits> Ctx<'_, W> {
    pub(crate) fn irq_live(&self, i: IrqRef) -> bool {
        let s = self.irq_ref(i.irq as usize);
        s.issued && s.gen == i.gen
    }

    pub(crate) fn irq_caps(&mut self, i: IrqRef) -> Option<&mut u32> {
        let s = self.irq(i.irq as usize);
        (s.issued && s.gen == i.gen).then_some(&mut s.caps)
    }

    pub(crate) fn decode_irq(
        &mut self,
        caller: Ref<Tcb>,
        slot: SlotAddr,
        obj: CapObj,
        label: InvocationLabel,
        args: &Args,
    ) -> Result<IrqOp, Error> {
        match (obj, label) {
            (CapObj::IrqControl, InvocationLabel::IrqIssueIrqHandler) => {
                let irq = args.word(0)?;
                let root = self.lookup_cnode_arg(caller, args.word(1)?)?;
                let dest = self.slot_in(root, args.word(2)?)?;
                if irq >= NUM_IRQS as Word {
                    return Err(Error::RangeError);
                }
                if self.irq(irq as usize).issued {
                    return Err(Error::RevokeFirst);
                }
                if !self.cap_at(dest).obj.is_null() {
                    return Err(Error::DeleteFirst);
                }
                Ok(IrqOp::Issue { irq: irq as usize, dest, control: slot })
            }
            (CapObj::IrqHandler(irq), InvocationLabel::IrqAckIrq) => Ok(IrqOp::Ack { irq }),
            (CapObj::IrqHandler(irq), InvocationLabel::IrqSetIrqHandler) => {
                let cap = self.lookup_arg(caller, args.word(0)?)?;
                match cap.obj {
                    CapObj::Notification(n) if cap.rights.contains(CapRights::WRITE) => {
                        Ok(IrqOp::Set { irq, ntfn: n, badge: cap.badge })
                    }
                    _ => Err(Error::InvalidCapability),
                }
            }
            (CapObj::IrqHandler(irq), InvocationLabel::IrqClearIrqHandler) => Ok(IrqOp::Clear { irq }),
            _ => Err(Error::IllegalOperation),
        }
    }

    pub(crate) fn invoke_irq(&mut self, op: IrqOp) -> Outcome {
        match op {
            IrqOp::Issue { irq, dest, control } => {
                let s = self.irq(irq);
                s.issued = true;
                s.caps = 0;
                s.ntfn = None;
                let r = IrqRef { irq: irq as u16, gen: s.gen };
                self.insert_cap(Some(control), dest, Cap::new(CapObj::IrqHandler(r)));
            }
            IrqOp::Ack { irq } => {
                let s = self.irq(irq.irq as usize);
                s.pending = false;
                self.irq_acks.insert(irq.irq as usize);
            }
            IrqOp::Set { irq, ntfn, badge } => self.irq(irq.irq as usize).ntfn = Some((ntfn, badge)),
            IrqOp::Clear { irq } => self.irq(irq.irq as usize).ntfn = None,
        }
        Outcome::Done
    }

    /// The last handler capability of a line is gone.
    pub(crate) fn destroy_irq_handler(&mut self, i: IrqRef) {
        let s = self.irq(i.irq as usize);
        if s.gen != i.gen {
            return;
        }
        s.issued = false;
        s.ntfn = None;
        s.gen = s.gen.wrapping_add(1).max(1);
        if core::mem::take(&mut s.pending) {
            self.irq_acks.insert(i.irq as usize);
        }
    }

    /// An interrupt arrived on `irq`.
    pub(crate) fn handle_interrupt<G: Hold>(&mut self, irq: usize, guard: &mut G) -> Result<(), G::Stop> {
        if irq >= NUM_IRQS {
            return Ok(());
        }
        guard.irq(irq)?;
        let s = self.irq(irq);
        if s.pending {
            return Ok(());
        }
        let target = if s.issued { s.ntfn } else { None };
        match target {
            Some((n, badge)) if self.live(n) => {
                self.kernel_signal(n, badge, guard, |ctx| ctx.irq(irq).pending = true)?;
            }
            _ => self.irq_acks.insert(irq),
        }
        Ok(())
    }
}
