//! The kernel's boot configuration ([`BootConfig`]: cores, slab capacities,
//! memory) and why a configuration is refused ([`BootError`]).

use core::fmt;

/// How the kernel is booted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BootConfig {
    /// Number of cores (1..=64).
    pub cores: usize,
    /// Untyped memory handed to the root thread, in bytes, split into
    /// `untyped_count` equal untyped capabilities (each rounded down to 16 bytes).
    pub untyped_bytes: u64,
    /// Number of untyped capabilities (at least 1).
    pub untyped_count: usize,
    /// The root CNode has `2^root_cnode_bits` slots (4..=16).
    pub root_cnode_bits: u8,
    /// Priority of the root thread.
    pub root_priority: u8,
    /// Timer ticks in a time slice (at least 1).
    pub timeslice_ticks: u32,
    /// Slab capacities: the most objects of each type alive at once.
    pub max_threads: usize,
    /// See `max_threads`.
    pub max_endpoints: usize,
    /// See `max_threads`.
    pub max_notifications: usize,
    /// See `max_threads`.
    pub max_cnodes: usize,
    /// See `max_threads`.
    pub max_replies: usize,
    /// See `max_threads`.
    pub max_frames: usize,
    /// See `max_threads`.
    pub max_vspaces: usize,
    /// See `max_threads` (includes the boot untypeds).
    pub max_untypeds: usize,
    /// Page tables (512 small pages, 2 MiB of one VSpace, each) the kernel
    /// can hand out to address spaces; at most 2^24 (`max_vspaces` at most
    /// 4096). A map that needs one more fails with `NotEnoughMemory`.
    pub max_page_tables: usize,
    /// How the sysctl tree and the kernel log are locked.
    pub subsystem_locking: crate::subsys::policy::SubsystemLocking,
    /// The most sysctl nodes at once (the boot tree has about 450).
    pub sysctl_max_nodes: usize,
    /// How many nodes of the FreeBSD tree to create at boot (in the
    /// tree's order; `usize::MAX`: all of them, about 450).
    pub sysctl_boot_nodes: usize,
    /// Kernel log messages held before appends are dropped (rounded up to
    /// a power of two).
    pub klog_capacity: usize,
}

impl BootConfig {
    /// Defaults for `cores` cores: 256 MiB of untyped memory in 1 capability,
    /// a 4096-slot root CNode, root priority 255, 5-tick slices, and slabs of
    /// 1024 threads / endpoints / notifications / replies / frames, 256 CNodes,
    /// 64 VSpaces, 256 untypeds and 256 page tables; subsystems locked `sx`, room for 4096
    /// sysctl nodes and 1024 log messages.
    pub fn new(cores: usize) -> Self {
        Self {
            cores,
            untyped_bytes: 256 << 20,
            untyped_count: 1,
            root_cnode_bits: 12,
            root_priority: 255,
            timeslice_ticks: 5,
            max_threads: 1024,
            max_endpoints: 1024,
            max_notifications: 1024,
            max_cnodes: 256,
            max_replies: 1024,
            max_frames: 1024,
            max_vspaces: 64,
            max_untypeds: 256,
            max_page_tables: 256,
            subsystem_locking: crate::subsys::policy::SubsystemLocking::Sx,
            sysctl_max_nodes: 4096,
            sysctl_boot_nodes: usize::MAX,
            klog_capacity: 1024,
        }
    }
}

/// A [`BootConfig`] the kernel cannot boot with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BootError {
    /// `cores` is 0 or more than [`MAX_CORES`].
    Cores,
    /// `root_cnode_bits` is out of 4..=16, or too small for the boot capabilities.
    RootCNode,
    /// A slab capacity is 0 or above 2^24 (`max_threads` above 65535 under
    /// `lockfree`, `max_vspaces` above 4096), or `untyped_count` exceeds
    /// `max_untypeds`.
    Capacity,
    /// `untyped_count` is 0, or the untyped memory is too small to split.
    Untyped,
    /// `timeslice_ticks` is 0.
    Timeslice,
    /// The regime was built for fewer cores than the configuration boots
    /// ([`crate::Regime::cores`]).
    RegimeCores,
}

impl fmt::Display for BootError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            Self::Cores => "cores must be 1..=64",
            Self::RootCNode => "root_cnode_bits must be 4..=16 and hold the boot capabilities",
            Self::Capacity => "slab capacities must be 1..=2^24 and hold the boot objects",
            Self::Untyped => "untyped memory must be split into at least one capability of at least 16 bytes",
            Self::Timeslice => "timeslice_ticks must be at least 1",
            Self::RegimeCores => "the regime must be built for at least the configuration's cores",
        };
        f.write_str(s)
    }
}
