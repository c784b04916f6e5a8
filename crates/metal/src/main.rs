//! # granule-metal: the kernel on bare-metal x86-64
//!
//! The same `granule-kernel` the hosted platform runs inside Linux, booted
//! on a machine (or QEMU) of its own. The boot entry (`boot.rs`) takes
//! either loader's hand-off — PVH from QEMU's `-kernel`, multiboot2 from
//! GRUB — into long mode; Rust then gives each core its descriptor tables
//! (`cpu.rs`) and a fault report (`fault.rs`), reads the loader's memory map
//! and command line (`boot_info.rs`), hands the largest RAM range to the
//! kernel heap (`heap.rs`), finds the other cores in the ACPI MADT and
//! starts them (`smp.rs`), and runs the experiment the command line names
//! (`experiment.rs`) under the regime it names. Results go to the serial
//! console as JSON lines (`metal_pingpong`, `metal_user_fault`,
//! `metal_fuzz`, `metal_serial_irq`), which `granule metal run` reads; the
//! run ends through QEMU's debug-exit device (`exit.rs`).
//!
//! **What is real here and what is not yet.** Cores, the cycle counter,
//! descriptor tables, faults, the memory map, interrupts (IPIs, the APIC
//! timer, the serial line through the I/O APIC) and ring-3 threads that
//! enter the kernel with `syscall` (`user.rs`, `programs.rs`) are real, and
//! so are the kernel's locks racing between real (or emulated) CPUs. All
//! threads share one identity-mapped address space: page tables per
//! address space are not built yet. Under QEMU's TCG the timings mean
//! nothing; they are printed for the shape of the records.
//!
//! On the host (any target but `x86_64-unknown-none`) this crate builds a
//! stub that says how to build and run the image.

#![cfg_attr(target_os = "none", no_std, no_main)]
#![forbid(unsafe_op_in_unsafe_fn)]

// Every module is the bare-metal image's; the host build has only `main`.
#[cfg(target_os = "none")]
mod apic;
#[cfg(target_os = "none")]
mod boot;
#[cfg(target_os = "none")]
mod boot_info;
#[cfg(target_os = "none")]
mod cpu;
#[cfg(target_os = "none")]
mod exit;
#[cfg(target_os = "none")]
mod experiment;
#[cfg(target_os = "none")]
mod fault;
#[cfg(target_os = "none")]
mod frame;
#[cfg(target_os = "none")]
mod heap;
#[cfg(target_os = "none")]
mod ioapic;
#[cfg(target_os = "none")]
mod irq;
#[cfg(target_os = "none")]
mod paging;
#[cfg(target_os = "none")]
mod percore;
#[cfg(target_os = "none")]
mod port;
#[cfg(target_os = "none")]
mod programs;
#[cfg(target_os = "none")]
mod serial;
#[cfg(target_os = "none")]
mod smp;
#[cfg(target_os = "none")]
mod start;
#[cfg(target_os = "none")]
mod trap;
#[cfg(target_os = "none")]
mod tsc;
#[cfg(target_os = "none")]
mod user;

#[cfg(target_os = "none")]
extern crate alloc;

/// The most cores the image starts (the rest of a larger machine stays
/// parked); the kernel's own limit is 64.
#[cfg(target_os = "none")]
pub const MAX_CORES: usize = 16;

#[cfg(not(target_os = "none"))]
fn main() {
    eprintln!(
        "granule-metal is a bare-metal image: build it with \
         `cargo build -p granule-metal --release --target x86_64-unknown-none` \
         (after `rustup target add x86_64-unknown-none`) and boot it with \
         `qemu-system-x86_64 -kernel target/x86_64-unknown-none/release/granule-metal` (see docs/metal.md)"
    );
    std::process::exit(2);
}
