//! The root task's allocator: empty slots of its root CNode and objects
//! carved from its untyped memory.
//!
//! The root task owns every untyped capability at boot. [`Allocator`] hands
//! out the empty slots after `BootInfo::first_free_slot` in order and retypes
//! objects from the untypeds in order, moving to the next untyped when one
//! reports `NotEnoughMemory`. It never frees: experiments build once.

use alloc_crate::vec::Vec;

use granule_kernel::abi::{Error, ObjectType, CAP_INIT_CNODE, CAP_INIT_VSPACE};
use granule_kernel::{BootInfo, Word};

use crate::env::{CPtr, Env, NULL};
use crate::trap::Trap;

/// Slots and untyped memory of the root task.
#[derive(Clone, Debug)]
pub struct Allocator {
    next_slot: Word,
    end_slot: Word,
    untyped: Vec<CPtr>,
    current: usize,
    /// The next free address of the root's address space (frames are
    /// mapped upwards from 0, each aligned to its size).
    next_vaddr: Word,
}

impl Allocator {
    /// Everything the boot information says the root task owns.
    pub fn from_boot(info: &BootInfo) -> Self {
        Self {
            next_slot: info.first_free_slot,
            end_slot: info.slots,
            untyped: info.untyped.iter().map(|&(c, _)| c).collect(),
            current: 0,
            next_vaddr: 0,
        }
    }

    /// A free address of the root's address space for a frame of
    /// `2^size_bits` bytes (aligned to its size); `NotEnoughMemory` when the
    /// space (`VSPACE_BYTES`) is used up.
    pub fn vaddr(&mut self, size_bits: Word) -> Result<Word, Error> {
        let size = 1u64.checked_shl(size_bits as u32).ok_or(Error::RangeError)?;
        let at = self.next_vaddr.checked_add(size - 1).ok_or(Error::NotEnoughMemory)? & !(size - 1);
        let end = at.checked_add(size).ok_or(Error::NotEnoughMemory)?;
        if end > granule_kernel::abi::VSPACE_BYTES {
            return Err(Error::NotEnoughMemory);
        }
        self.next_vaddr = end;
        Ok(at)
    }

    /// An empty slot of the root CNode.
    pub fn slot(&mut self) -> Result<CPtr, Error> {
        if self.next_slot >= self.end_slot {
            return Err(Error::NotEnoughMemory);
        }
        self.next_slot += 1;
        Ok(self.next_slot - 1)
    }

    /// Create one object of type `ty` (`size_bits` for sized types) in a new
    /// slot; returns the slot.
    pub fn create<T: Trap>(&mut self, env: &mut Env<T>, ty: ObjectType, size_bits: Word) -> Result<CPtr, Error> {
        let slot = self.slot()?;
        while let Some(&ut) = self.untyped.get(self.current) {
            match env.untyped_retype(ut, ty, size_bits, NULL, slot, 1) {
                Ok(()) => return Ok(slot),
                Err(Error::NotEnoughMemory) => self.current += 1,
                Err(e) => return Err(e),
            }
        }
        Err(Error::NotEnoughMemory)
    }

    /// Create a thread sharing the root task's CSpace and VSpace, with
    /// `priority`, on `core`, starting at `entry(arg)` (not yet running
    /// unless `start`). Returns its TCB capability.
    pub fn thread<T: Trap>(
        &mut self,
        env: &mut Env<T>,
        entry: Word,
        arg: Word,
        core: usize,
        priority: u8,
        start: bool,
    ) -> Result<CPtr, Error> {
        let tcb = self.create(env, ObjectType::Tcb, 0)?;
        env.tcb_configure(tcb, CAP_INIT_CNODE, CAP_INIT_VSPACE)?;
        env.tcb_set_priority(tcb, priority as Word)?;
        env.tcb_set_affinity(tcb, core as Word)?;
        let mut regs = [0; granule_kernel::abi::NUM_REGS];
        regs[granule_kernel::abi::REG_PC] = entry;
        regs[granule_kernel::abi::REG_ARG0] = arg;
        env.tcb_write_registers(tcb, start, &regs)?;
        Ok(tcb)
    }
}
