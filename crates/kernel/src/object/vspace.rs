//! Address spaces: a page table per VSpace, and the set of cores that have
//! run a thread in it (whose "translations" must be shot down when it
//! changes; on the hosted platform there are no translations, so the
//! bitmap only decides which cores must be stalled).
//!
//! The page tables and each frame's record of where it is mapped live
//! beside the slabs in one `Mappings` (`granule_sync::lockfree`, made by
//! `page_tables.rs`), for
//! every regime: Synthesis's lock-free mapping (seed `004` §5.3), which
//! `lockfree` runs on its shared paths and the lock regimes run under their
//! locks, so there is one mapping logic. The geometry is x86-64's lower two
//! levels: a root of 512 entries, each a 2 MiB page or a table of 512 4 KiB
//! pages, 1 GiB per space (`abi::VSPACE_BYTES`). Tables come from a pool of
//! `max_page_tables` (plus one per core, see "Tables" in `mapping.rs`);
//! a table stays with its space until the space is destroyed.

use core::sync::atomic::Ordering;

use granule_sync::lockfree::{Mapped, Rmw};

use crate::exit::CoreMask;
use crate::ids::SpaceId;
use crate::object::{Frame, Ref};
use crate::state::{Ctx, IPI_STALL};
use crate::translation::{Change, Translation};
use crate::waits::Waits;

/// An address space. Its page table is in `State::mappings`, and the cores
/// that have run a thread of it since the last shoot-down beside the slab
/// (`Ctx::vspace_cores`).
#[derive(Debug)]
pub(crate) struct VSpace;

impl VSpace {
    pub fn new() -> Self {
        Self
    }
}

impl<W: Waits> Ctx<'_, W> {
    /// Where `frame` is mapped: its live address space and the mapping.
    pub(crate) fn mapped_in(&self, frame: Ref<Frame>, rmw: &impl Fn(Rmw)) -> Option<(Ref<VSpace>, Mapped)> {
        let m = self.s.mappings.mapped(frame.index(), rmw)?;
        let v = self.ref_at::<VSpace>(m.space)?;
        Some((v, m))
    }

    /// The cores other than this one that have run space `space` since its
    /// last shoot-down (its core bitmap).
    fn space_cores_elsewhere(&self, space: u32) -> CoreMask {
        self.elsewhere(self.vspace_cores(space).map_or(0, |b| b.load(Ordering::Relaxed)))
    }

    /// The cores of bitmap `bits` that exist, without this one.
    fn elsewhere(&self, bits: u64) -> CoreMask {
        let mut m = CoreMask(bits & (u64::MAX >> (64 - self.s.config.cores.clamp(1, 64))));
        m.remove(self.core);
        m
    }

    /// Tell the platform's hardware translation, if it has one, that page
    /// `m` changed (`translation.rs`); an unmap shoots down the space's
    /// other cores. Nothing on the hosted platform.
    pub(crate) fn translation_changed(&self, m: Mapped, unmapped: bool) {
        let Some(t) = self.s.translations else { return };
        let shoot = if unmapped { self.space_cores_elsewhere(m.space) } else { CoreMask::EMPTY };
        let now = || {
            let frame = self.ref_at::<Frame>(self.s.mappings.translate(m.space, m.vaddr)?)?;
            self.read(frame).map(|f| Translation { addr: f.addr(), large: f.large() })
        };
        t.changed(self.core, &Change { space: SpaceId(m.space), vaddr: m.vaddr, large: m.large, shoot, now: &now });
    }

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

    /// Destroy `v` (the whole kernel is held): unmap its frames, give its
    /// tables back, and shoot down its use on other cores (a cascade cannot
    /// wait for them: they are sent a stall IPI).
    pub(crate) fn destroy_vspace(&mut self, v: Ref<VSpace>) {
        if !self.live(v) {
            return;
        }
        self.s.mappings.clear_space(v.index());
        let cores = self.elsewhere(self.vspace_cores(v.index()).map_or(0, |b| b.swap(0, Ordering::Relaxed)));
        if let Some(t) = self.s.translations {
            t.cleared(self.core, SpaceId(v.index()), cores);
        }
        for c in cores.iter() {
            let uses = self.cs(c).current.and_then(|t| self.get(t)).is_some_and(|t| t.vspace == Some(v));
            if uses {
                self.send_ipi(c, IPI_STALL);
            }
        }
    }
}
