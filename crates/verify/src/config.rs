//! The kernels the platform boots: roomy ones for hand-written tests, small
//! ones for generated programs.

use granule_kernel::abi::MAX_PRIORITY;
use granule_kernel::{BootConfig, SubsystemLocking};

/// The configuration the kernel's tests boot ([`crate::sim::Sim`]): room
/// for every test's objects (64 MiB of untyped memory, 64 threads, 16 page
/// tables) and a 256-slot root CNode; the root thread at priority 100.
pub fn for_tests(cores: usize) -> BootConfig {
    let mut c = BootConfig::new(cores);
    c.untyped_bytes = 64 << 20;
    c.max_threads = 64;
    c.max_endpoints = 64;
    c.max_notifications = 64;
    c.max_cnodes = 32;
    c.max_replies = 64;
    c.max_frames = 32;
    c.max_vspaces = 8;
    c.max_untypeds = 16;
    c.max_page_tables = 16;
    c.root_cnode_bits = 8;
    c.root_priority = 100;
    c
}

/// The configuration every `granule verify` run boots
/// ([`crate::setup::boot`]): small slabs keep the invariant checker fast;
/// two untypeds of 48 KiB (setup retypes from the first, programs from the
/// second: 4 KiB frames among them); 4 page tables (programs map in two
/// regions); the root thread at top priority; the first 32 nodes of the
/// sysctl tree and a kernel log of 4 messages (so programs fill it), locked
/// by `policy`.
pub fn for_programs(cores: usize, policy: SubsystemLocking) -> BootConfig {
    let mut c = BootConfig::new(cores);
    c.untyped_bytes = 96 << 10;
    c.untyped_count = 2;
    c.root_cnode_bits = 7;
    c.root_priority = MAX_PRIORITY as u8;
    c.max_threads = 20;
    c.max_endpoints = 16;
    c.max_notifications = 24;
    c.max_cnodes = 8;
    c.max_replies = 16;
    c.max_frames = crate::program::FRAMES + crate::program::SCRATCH_SLOTS;
    c.max_vspaces = 1;
    c.max_page_tables = 4;
    c.max_untypeds = 4;
    c.subsystem_locking = policy;
    c.sysctl_boot_nodes = 32;
    c.klog_capacity = 4;
    c
}
