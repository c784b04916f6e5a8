//! Address spaces: the set of frames a thread may touch, and the set of cores
//! that have run a thread in it (whose "translations" must be shot down when
//! it changes; on the hosted platform there are no translations, so the
//! bitmap only decides which cores must be stalled).

use alloc::vec::Vec;
use core::sync::atomic::Ordering;

use crate::abi::VSPACE_MAX_FRAMES;
use crate::exit::CoreMask;
use crate::object::{Frame, Ref};
use crate::state::{Ctx, IPI_STALL};
use crate::waits::Waits;

/// An address space. The cores that have run a thread of it since the last
/// shoot-down are kept beside the slab (`Ctx::vspace_cores`).
#[derive(Debug)]
pub(crate) struct VSpace {
    pub frames: Vec<Ref<Frame>>,
}

impl VSpace {
    pub fn new() -> Self {
        Self { frames: Vec::with_capacity(VSPACE_MAX_FRAMES) }
    }
}

impl<W: Waits> Ctx<'_, W> {
    /// Other cores running user code of a thread in `v` right now.
    pub(crate) fn vspace_users_elsewhere(&mut self, v: Ref<VSpace>) -> CoreMask {
        let mut m = CoreMask::EMPTY;
        if !self.live(v) {
            return m;
        }
        let Some(cores) = self.vspace_cores(v.index()).map(|b| CoreMask(b.load(Ordering::Relaxed))) else {
            return m;
        };
        for c in cores.iter() {
            if c == self.core || c >= self.s.config.cores {
                continue;
            }
            let Some(cur) = self.cs(c).current else { continue };
            if self.get(cur).is_some_and(|t| t.vspace == Some(v))
                && self.cell(c).trapped.load(Ordering::Acquire) == crate::state::TRAP_NONE
            {
                m.insert(c);
            }
        }
        m
    }

    /// Destroy `v`: unmap its frames and shoot down its use on other cores
    /// (a cascade cannot wait for them: they are sent a stall IPI).
    pub(crate) fn destroy_vspace(&mut self, v: Ref<VSpace>) {
        let Some(x) = self.get(v) else { return };
        let frames = core::mem::take(&mut x.frames);
        let cores = CoreMask(self.vspace_cores(v.index()).map_or(0, |b| b.swap(0, Ordering::Relaxed)));
        for f in frames {
            if let Some(f) = self.get(f) {
                f.mapped = None;
            }
        }
        for c in cores.iter() {
            if c != self.core && c < self.s.config.cores {
                let uses = self.cs(c).current.and_then(|t| self.get(t)).is_some_and(|t| t.vspace == Some(v));
                if uses {
                    self.send_ipi(c, IPI_STALL);
                }
            }
        }
    }
}
