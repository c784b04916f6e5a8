//! The machine's interrupt controller: 64 lines, each routed to one core.
//!
//! Line `timer_irq_base + c` is core `c`'s virtual timer; device lines go to
//! one core chosen at boot (`MachineConfig::device_irq_core`). A device (a
//! test, a virtual NIC thread) raises a line with [`IrqController::raise`];
//! the line latches as pending and, unless it is masked, rings its core's
//! doorbell. The core delivers each pending, unmasked line routed to it to the
//! kernel (`Kernel::interrupt`) and masks it; the line is unmasked when an
//! exit plan acknowledges it (`irq_acks`: the handler's `IrqAckIrq`, or the
//! kernel itself when no handler is registered), and a raise that arrived
//! meanwhile is delivered then. This is the level-triggered, mask-until-ack
//! discipline seL4 gives IRQ handlers.
//!
//! Raise and ack each write one word and read the other, so both use `SeqCst`
//! (Dekker's pattern): a raise racing an ack is never left undelivered.

use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, OnceLock};

use crossbeam_utils::CachePadded;
use granule_kernel::abi::NUM_IRQS;

use crate::doorbell::{Doorbell, Ring};

/// Interrupt lines and their routing.
#[derive(Debug)]
pub struct IrqController {
    pending: CachePadded<AtomicU64>,
    masked: CachePadded<AtomicU64>,
    /// `route[line]` = the core that takes `line`.
    route: [usize; NUM_IRQS],
    /// `lines_of[core]` = the lines routed to `core`, as a bit mask.
    lines_of: Vec<u64>,
}

impl IrqController {
    /// A controller for `cores` cores: line `timer_base + c` goes to core
    /// `c`, every other line to `device_core`.
    pub fn new(cores: usize, timer_base: usize, device_core: usize) -> Self {
        let mut route = [device_core; NUM_IRQS];
        for c in 0..cores {
            if let Some(r) = route.get_mut(timer_base + c) {
                *r = c;
            }
        }
        let mut lines_of = vec![0u64; cores];
        for (line, &core) in route.iter().enumerate() {
            if let Some(m) = lines_of.get_mut(core) {
                *m |= 1 << line;
            }
        }
        Self {
            pending: CachePadded::new(AtomicU64::new(0)),
            masked: CachePadded::new(AtomicU64::new(0)),
            route,
            lines_of,
        }
    }

    /// The core `line` is routed to.
    pub fn route(&self, line: usize) -> usize {
        self.route[line % NUM_IRQS]
    }

    /// Raise `line` (taken modulo [`NUM_IRQS`]); ring its core's doorbell if
    /// it can be delivered now.
    pub fn raise(&self, line: usize, bells: &[CachePadded<Doorbell>]) {
        let line = line % NUM_IRQS;
        let bit = 1u64 << line;
        self.pending.fetch_or(bit, SeqCst);
        if self.masked.load(SeqCst) & bit == 0 {
            bells[self.route[line]].ring(Ring::Irq);
        }
    }

    /// Take the next line routed to `core` that is pending and unmasked,
    /// masking it.
    pub fn next_deliverable(&self, core: usize) -> Option<usize> {
        loop {
            let ready = self.pending.load(SeqCst) & !self.masked.load(SeqCst) & self.lines_of[core];
            if ready == 0 {
                return None;
            }
            let line = ready.trailing_zeros() as usize;
            let bit = 1u64 << line;
            if self.pending.fetch_and(!bit, SeqCst) & bit != 0 {
                self.masked.fetch_or(bit, SeqCst);
                return Some(line);
            }
        }
    }

    /// Unmask `line`; ring its core if the line is pending again.
    pub fn ack(&self, line: usize, bells: &[CachePadded<Doorbell>]) {
        let line = line % NUM_IRQS;
        let bit = 1u64 << line;
        self.masked.fetch_and(!bit, SeqCst);
        if self.pending.load(SeqCst) & bit != 0 {
            bells[self.route[line]].ring(Ring::Irq);
        }
    }
}

/// A device's interrupt line, wired to a machine at boot.
///
/// A device is built before the machine it plugs into (user programs that
/// drive it are registered before boot), so it holds a wire
/// ([`crate::MachineConfig::irq_wire`]) that the machine connects to its
/// interrupt controller when it boots. Raising an unconnected wire does
/// nothing (the machine is not running).
#[derive(Clone)]
pub struct IrqWire {
    line: usize,
    to: Arc<OnceLock<Raise>>,
}

/// What a connected wire calls: raise this line.
type Raise = Box<dyn Fn(usize) + Send + Sync>;

impl std::fmt::Debug for IrqWire {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IrqWire").field("line", &self.line).field("connected", &self.to.get().is_some()).finish()
    }
}

impl IrqWire {
    pub(crate) fn new(line: usize) -> Self {
        Self { line: line % NUM_IRQS, to: Arc::new(OnceLock::new()) }
    }

    pub(crate) fn connect(&self, raise: Raise) {
        let _ = self.to.set(raise);
    }

    /// The line.
    pub fn line(&self) -> usize {
        self.line
    }

    /// Raise the line.
    pub fn raise(&self) {
        if let Some(raise) = self.to.get() {
            raise(self.line);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_masked_until_acked_and_a_raise_meanwhile_is_kept() {
        let bells: Vec<CachePadded<Doorbell>> = (0..2).map(|_| CachePadded::default()).collect();
        let irq = IrqController::new(2, 0, 1);
        assert_eq!((irq.route(0), irq.route(1), irq.route(5)), (0, 1, 1));
        irq.raise(5, &bells);
        assert_eq!(bells[1].take(), Ring::Irq as u32);
        assert_eq!(irq.next_deliverable(0), None, "line 5 is core 1's");
        assert_eq!(irq.next_deliverable(1), Some(5));
        assert_eq!(irq.next_deliverable(1), None);
        irq.raise(5, &bells);
        assert_eq!(bells[1].take(), 0, "masked: no ring");
        assert_eq!(irq.next_deliverable(1), None);
        irq.ack(5, &bells);
        assert_eq!(bells[1].take(), Ring::Irq as u32);
        assert_eq!(irq.next_deliverable(1), Some(5));
    }
}
