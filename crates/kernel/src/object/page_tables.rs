//! The kernel's page tables as the boot makes them: one
//! [`Mappings`] (`granule_sync::lockfree`) for every VSpace and frame, in
//! x86-64's geometry (`object/vspace.rs` says how they are used). A leaf:
//! the boot (`state.rs`) builds them here without reaching into the
//! address spaces' code.

use granule_sync::lockfree::{Geometry, Mappings, MAPPING_MAX_CORES, MAX_SPACES};

use crate::abi::VSPACE_BYTES;
use crate::config::BootConfig;

/// Most VSpaces a kernel can have (the mapping word's space field).
pub(crate) const MAX_VSPACES: usize = MAX_SPACES;

const _: () = assert!(crate::abi::MAX_CORES <= MAPPING_MAX_CORES);
const _: () = assert!(Geometry::X86_64.space_bytes() == VSPACE_BYTES);

/// The mappings of a kernel booted with `c` (checked by `State::boot`): the
/// pool has `max_page_tables` plus one table per core (see "Tables" in
/// `granule_sync`'s `mapping.rs`).
pub(crate) fn new_mappings(c: &BootConfig) -> Mappings {
    Mappings::new(Geometry::X86_64, c.cores, c.max_vspaces, c.max_page_tables + c.cores, c.max_frames)
}
