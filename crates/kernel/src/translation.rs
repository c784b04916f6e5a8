//! Address translation by hardware: what a platform with page tables and
//! TLBs hears when the kernel's mappings change.
//!
//! The kernel's mappings (`object/vspace.rs`, one `Mappings` for every
//! regime) are the truth of which frame is where. The hosted platform
//! translates nothing: its threads use a frame's address directly, and it
//! registers no [`Translations`]. A bare-metal platform keeps real page
//! tables that mirror the mappings and registers one with
//! [`crate::Kernel::set_translations`]; the kernel then calls it inside the
//! entry that changed a mapping, after the change and before the entry
//! ends, so a frame is never freed while a page table or a TLB still
//! reaches it:
//!
//! * [`Translations::changed`] after a map, an unmap, or the unmap of a
//!   frame being deleted. The change says which page of which space, and
//!   [`Change::now`] reads what the kernel's mappings say *now* (under
//!   `lockfree` another core may have changed the page again since): the
//!   platform makes its entry agree with `now` under a lock of its own,
//!   so the last writer writes the truth whatever order the cores' calls
//!   arrive in. An unmap names the cores whose TLBs may hold the old
//!   translation ([`Change::shoot`], the space's core bitmap without this
//!   core), which the platform interrupts and waits for before returning.
//! * [`Translations::cleared`] when a space is destroyed.
//!
//! Which space a thread runs in reaches the platform through the exit plan
//! ([`crate::ExitPlan::space`]), so the address-space switch happens where
//! every other decision of an entry is performed: after the lock is
//! released. This file names no platform and no page-table format.

use crate::abi::Word;
use crate::exit::CoreMask;
pub use crate::ids::SpaceId;

/// What a page of a space translates to: the frame's memory (the address
/// `FrameGetAddress` answers) and its size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Translation {
    /// The frame's memory.
    pub addr: Word,
    /// A 2 MiB frame (else 4 KiB).
    pub large: bool,
}

/// One page of one space changed.
pub struct Change<'a> {
    /// The space.
    pub space: SpaceId,
    /// The page's address in the space (aligned to its size).
    pub vaddr: Word,
    /// The page that changed was (or is) a 2 MiB one.
    pub large: bool,
    /// Cores that may cache the old translation (never this core): empty
    /// for a map, the space's core bitmap for an unmap.
    pub shoot: CoreMask,
    pub(crate) now: &'a dyn Fn() -> Option<Translation>,
}

impl Change<'_> {
    /// What the kernel's mappings say the page translates to now.
    pub fn now(&self) -> Option<Translation> {
        (self.now)()
    }
}

impl core::fmt::Debug for Change<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Change")
            .field("space", &self.space)
            .field("vaddr", &self.vaddr)
            .field("large", &self.large)
            .field("shoot", &self.shoot)
            .finish_non_exhaustive()
    }
}

/// A platform's hardware translation (see the module documentation). The
/// calls come from inside kernel entries on `core`, any number at once
/// from different cores; each must return only when its change is in
/// effect on every core it names.
pub trait Translations: Send + Sync {
    /// A page changed: make the hardware's entry agree with
    /// [`Change::now`], and shoot down [`Change::shoot`]'s cached
    /// translations (and this core's own).
    fn changed(&self, core: usize, change: &Change<'_>);
    /// Every page of `space` is unmapped (the VSpace was destroyed); `shoot`
    /// as in [`Change::shoot`].
    fn cleared(&self, core: usize, space: SpaceId, shoot: CoreMask);
}
