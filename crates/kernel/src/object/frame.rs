//! Frames: memory user threads share. The kernel never reads or writes a
//! frame's contents; it owns the allocation and hands out its address when
//! the frame is mapped (`FrameMap` / `FrameGetAddress`). On the hosted
//! platform that address is a real pointer into this allocation.

use alloc::alloc::{alloc_zeroed, dealloc, handle_alloc_error, Layout};
use core::ptr::NonNull;

use crate::abi::{Error, InvocationLabel, MessageInfo, Word, VSPACE_MAX_FRAMES};
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
    /// The address space it is mapped in.
    pub mapped: Option<Ref<VSpace>>,
}

impl Frame {
    fn layout(bits: u8) -> Layout {
        match Layout::from_size_align(1 << bits, 1 << 12) {
            Ok(l) => l,
            Err(_) => panic!("frame size out of range (decode checks it)"),
        }
    }

    /// A zeroed frame of `2^bits` bytes (`bits` in 12..=21, checked by decode).
    pub fn new(bits: u8) -> Self {
        let layout = Self::layout(bits);
        // SAFETY: the layout has a non-zero size (at least 4 KiB).
        let p = unsafe { alloc_zeroed(layout) };
        let Some(mem) = NonNull::new(p) else { handle_alloc_error(layout) };
        Self { mem, bits, mapped: None }
    }

    pub fn size(&self) -> u64 {
        1 << self.bits
    }

    pub fn addr(&self) -> Word {
        self.mem.as_ptr() as usize as Word
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
    Map { frame: Ref<Frame>, vspace: Ref<VSpace> },
    Unmap { frame: Ref<Frame> },
    GetAddress { frame: Ref<Frame> },
}

impl<W: Waits> Ctx<'_, W> {
    pub(crate) fn decode_frame(
        &mut self,
        caller: Ref<Tcb>,
        frame: Ref<Frame>,
        label: InvocationLabel,
        args: &Args,
    ) -> Result<FrameOp, Error> {
        let mapped = self.get(frame).ok_or(Error::InvalidCapability)?.mapped;
        match label {
            InvocationLabel::FrameMap => {
                let vspace = match self.lookup_arg(caller, args.word(0)?)?.obj {
                    CapObj::VSpace(v) => v,
                    _ => return Err(Error::InvalidCapability),
                };
                if mapped.is_some_and(|m| self.live(m)) {
                    return Err(Error::DeleteFirst);
                }
                if self.get(vspace).ok_or(Error::InvalidCapability)?.frames.len() >= VSPACE_MAX_FRAMES {
                    return Err(Error::NotEnoughMemory);
                }
                Ok(FrameOp::Map { frame, vspace })
            }
            InvocationLabel::FrameUnmap => Ok(FrameOp::Unmap { frame }),
            InvocationLabel::FrameGetAddress => {
                if !mapped.is_some_and(|m| self.live(m)) {
                    return Err(Error::IllegalOperation);
                }
                Ok(FrameOp::GetAddress { frame })
            }
            _ => Err(Error::IllegalOperation),
        }
    }

    pub(crate) fn invoke_frame(&mut self, caller: Ref<Tcb>, op: FrameOp) -> Outcome {
        match op {
            FrameOp::Map { frame, vspace } => {
                if let Some(v) = self.get(vspace) {
                    v.frames.push(frame);
                }
                if let Some(f) = self.get(frame) {
                    f.mapped = Some(vspace);
                }
                self.reply_address(caller, frame)
            }
            FrameOp::Unmap { frame } => {
                self.unmap_frame(frame);
                Outcome::Done
            }
            FrameOp::GetAddress { frame } => self.reply_address(caller, frame),
        }
    }

    fn reply_address(&mut self, caller: Ref<Tcb>, frame: Ref<Frame>) -> Outcome {
        let (addr, size) = self.get(frame).map_or((0, 0), |f| (f.addr(), f.size()));
        let b = self.ipc(caller.index());
        b.msg[0] = addr;
        b.msg[1] = size;
        Outcome::Reply(MessageInfo::new(0, 0, 0, 2))
    }

    /// Remove `frame` from the address space it is mapped in.
    pub(crate) fn unmap_frame(&mut self, frame: Ref<Frame>) {
        let Some(f) = self.get(frame) else { return };
        let Some(v) = f.mapped.take() else { return };
        if let Some(v) = self.get(v) {
            v.frames.retain(|&x| x != frame);
        }
    }
}
