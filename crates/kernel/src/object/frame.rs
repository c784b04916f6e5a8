//! Frames: memory user threads share. The kernel never reads or writes a
//! frame's contents; it owns the allocation and hands out its address when
//! the frame is mapped (`FrameMap` / `FrameGetAddress`). On the hosted
//! platform that address is a real pointer into this allocation.
//!
//! Where a frame is mapped is not in its slab slot but in the kernel's
//! lock-free [`granule_sync::lockfree::Mappings`] (`vspace.rs`), so the one
//! decoder and executor below serve every regime: the lock regimes call
//! them with the whole kernel held, and `lockfree`'s shared path calls them
//! with nothing held (they read only capability slots, generations and the
//! frame's size, which change only when the whole kernel is held, and
//! change mappings only by CAS).

use alloc::alloc::{alloc_zeroed, dealloc, handle_alloc_error, Layout};
use core::ptr::NonNull;

use granule_sync::lockfree::{MapError, Mapped, Rmw};

use crate::abi::{Error, InvocationLabel, MessageInfo, Word, VSPACE_BYTES};
use crate::args::Args;
use crate::object::{CapObj, Ref, Tcb, VSpace};
use crate::outcome::Outcome;
use crate::state::Ctx;
use crate::waits::Waits;

/// A frame of `2^bits` bytes.
#[derive(Debug)]
pub(crate) struct Frame {
    mem: NonNull<u8>,
    bits: u8,
}

impl Frame {
    fn layout(bits: u8) -> Layout {
        match Layout::from_size_align(1 << bits, 1 << 12) {
            Ok(l) => l,
            Err(_) => panic!("frame size out of range (decode checks it)"),
        }
    }

    /// A zeroed frame of `2^bits` bytes (`bits` 12 or 21, checked by decode).
    pub fn new(bits: u8) -> Self {
        let layout = Self::layout(bits);
        // SAFETY: the layout has a non-zero size (at least 4 KiB).
        let p = unsafe { alloc_zeroed(layout) };
        let Some(mem) = NonNull::new(p) else { handle_alloc_error(layout) };
        Self { mem, bits }
    }

    pub fn size(&self) -> u64 {
        1 << self.bits
    }

    /// Whether it is a large page (2 MiB: a root entry of the page table).
    pub fn large(&self) -> bool {
        u32::from(self.bits) > granule_sync::lockfree::PAGE_BITS
    }

    pub fn addr(&self) -> Word {
        self.mem.as_ptr() as usize as Word
    }

    /// Zero the frame's memory (a frame taken from a free list).
    pub fn zero(&mut self) {
        // SAFETY: `mem` is this frame's allocation of `size()` bytes, live
        // until `drop`; the kernel owns it (`&mut self`), and a frame on a
        // free list is mapped nowhere, so no user thread reaches it either.
        unsafe { core::ptr::write_bytes(self.mem.as_ptr(), 0, self.size() as usize) }
    }
}

impl Drop for Frame {
    fn drop(&mut self) {
        // SAFETY: `mem` was allocated in `new` with this very layout and is
        // freed only here, once.
        unsafe { dealloc(self.mem.as_ptr(), Self::layout(self.bits)) }
    }
}

/// A decoded frame invocation.
#[derive(Clone, Copy, Debug)]
pub(crate) enum FrameOp {
    Map { frame: Ref<Frame>, vspace: Ref<VSpace>, vaddr: Word },
    Unmap { frame: Ref<Frame> },
    GetAddress { frame: Ref<Frame> },
}

impl<W: Waits> Ctx<'_, W> {
    /// Decode a frame invocation; reads only what a shared path may (see
    /// the module documentation).
    pub(crate) fn decode_frame(
        &self,
        caller: Ref<Tcb>,
        frame: Ref<Frame>,
        label: InvocationLabel,
        args: &Args,
    ) -> Result<FrameOp, Error> {
        let size = self.read(frame).ok_or(Error::InvalidCapability)?.size();
        match label {
            InvocationLabel::FrameMap => {
                let vspace = self.vspace_arg(caller, args.word(0)?)?;
                let vaddr = args.word(1)?;
                if vaddr >= VSPACE_BYTES {
                    return Err(Error::InvalidArgument);
                }
                if vaddr & (size - 1) != 0 {
                    return Err(Error::AlignmentError);
                }
                Ok(FrameOp::Map { frame, vspace, vaddr })
            }
            InvocationLabel::FrameUnmap => Ok(FrameOp::Unmap { frame }),
            InvocationLabel::FrameGetAddress => Ok(FrameOp::GetAddress { frame }),
            _ => Err(Error::IllegalOperation),
        }
    }

    /// A VSpace capability argument, looked up reading only capability
    /// slots and generations: a null or dead capability is `FailedLookup`,
    /// another object `InvalidCapability`. Not `lookup_arg`: its liveness
    /// check reads a TCB's state, which a shared path may not (the argument
    /// may name another core's thread).
    fn vspace_arg(&self, caller: Ref<Tcb>, cptr: Word) -> Result<Ref<VSpace>, Error> {
        let cnode = self.cspace_of(caller).ok_or(Error::FailedLookup)?;
        let index = u32::try_from(cptr).map_err(|_| Error::FailedLookup)?;
        match self.cap_ref(crate::object::SlotAddr { cnode, index }).ok_or(Error::FailedLookup)?.cap.get().obj {
            CapObj::VSpace(v) if self.live(v) => Ok(v),
            CapObj::VSpace(_) | CapObj::Null => Err(Error::FailedLookup),
            _ => Err(Error::InvalidCapability),
        }
    }

    /// Run a frame invocation: `rmw` hears of each atomic read-modify-write
    /// (the regime's counter, or nothing).
    pub(crate) fn invoke_frame(&mut self, caller: Ref<Tcb>, op: FrameOp, rmw: &impl Fn(Rmw)) -> Outcome {
        match op {
            FrameOp::Map { frame, vspace, vaddr } => {
                let Some(large) = self.read(frame).map(Frame::large) else {
                    return Outcome::Error(Error::InvalidCapability);
                };
                let m = &self.s.mappings;
                match m.map(self.core, frame.index(), vspace.index(), vaddr, large, rmw) {
                    Ok(()) => {
                        self.translation_changed(Mapped { space: vspace.index(), vaddr, large }, false);
                        self.reply_address(caller, frame)
                    }
                    Err(MapError::FrameMapped | MapError::Occupied) => Outcome::Error(Error::DeleteFirst),
                    Err(MapError::NoTable) => Outcome::Error(Error::NotEnoughMemory),
                }
            }
            FrameOp::Unmap { frame } => {
                if let Some(m) = self.s.mappings.unmap(frame.index(), rmw) {
                    self.translation_changed(m, true);
                }
                Outcome::Done
            }
            FrameOp::GetAddress { frame } => {
                if self.mapped_in(frame, rmw).is_none() {
                    return Outcome::Error(Error::IllegalOperation);
                }
                self.reply_address(caller, frame)
            }
        }
    }

    fn reply_address(&mut self, caller: Ref<Tcb>, frame: Ref<Frame>) -> Outcome {
        let (addr, size) = self.read(frame).map_or((0, 0), |f| (f.addr(), f.size()));
        let b = self.ipc(caller);
        b.msg[0] = addr;
        b.msg[1] = size;
        Outcome::Reply(MessageInfo::new(0, 0, 0, 2))
    }

    /// Unmap `frame` before it is destroyed (the whole kernel is held).
    pub(crate) fn unmap_frame(&mut self, frame: Ref<Frame>) {
        if let Some(m) = self.s.mappings.forget_frame(frame.index()) {
            self.translation_changed(m, true);
        }
    }
}
