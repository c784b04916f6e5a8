//! Page tables per address space, and TLB shootdowns: the kernel's
//! mappings made real (`granule_kernel::translation`).
//!
//! Every VSpace gets its own four-level tables the first time a thread of
//! it runs or a frame is mapped in it: a PML4 whose entry 0 is the boot
//! tables' identity map of the first 4 GiB (the kernel, the ring-3
//! programs' code and stacks, their IPC buffers — user accessible, as in
//! `boot.rs`) and whose entry 1 is the space's own: a PDPT and one page
//! directory for the kernel's 1 GiB of a space, placed at [`WINDOW`]. So
//! the page a `FrameMap` puts at `vaddr` is at `WINDOW + vaddr` for the
//! space's threads, and nowhere for any other space's.
//!
//! The kernel calls [`Hardware`] from inside the entry that changed a
//! mapping. Under the space's lock the entry is made what the kernel's
//! mappings say now (so concurrent calls under `lockfree` leave the truth,
//! whatever their order); then an unmap's TLB shootdown: this core's own
//! flush, and an IPI on [`TLB_VECTOR`] to each core the kernel named (the
//! space's core bitmap), whose handler flushes and acknowledges; the call
//! returns when every one has. Interrupts stay enabled while the kernel
//! runs on this platform, so a core waiting for a lock still answers.
//!
//! The switch: the core's loop gives each exit plan's `space` to
//! [`switch`] before it resumes the thread, after the kernel's lock was
//! released; a thread without a space runs on the boot tables.
//!
//! Frames live in the kernel heap, identity mapped, so a frame's address
//! (`FrameGetAddress`) is its physical address.

use alloc::boxed::Box;
use core::sync::atomic::{AtomicU64, Ordering};

use granule_kernel::translation::Change;
use granule_kernel::{CoreMask, SpaceId, Translation, Translations};
use spin::Mutex;

use crate::{apic, percore, MAX_CORES};

/// Where a space's 1 GiB starts in its threads' view: PML4 entry 1.
pub const WINDOW: u64 = 1 << 39;
/// The most address spaces this platform gives tables to (the kernel's
/// `max_vspaces` must not exceed it; `experiment.rs` boots it with fewer).
pub const MAX_SPACES: usize = 16;
/// The shootdown IPI's vector.
pub const TLB_VECTOR: u8 = 0xf2;

const PRESENT: u64 = 1;
const WRITABLE: u64 = 1 << 1;
const USER: u64 = 1 << 2;
const HUGE: u64 = 1 << 7;
const ADDRESS: u64 = 0x000f_ffff_ffff_f000;
const LINK: u64 = PRESENT | WRITABLE | USER;

/// A page-table page.
#[repr(C, align(4096))]
struct Table([AtomicU64; 512]);

impl Table {
    /// A zeroed table, kept for the machine's life (its address is its
    /// physical address: the heap is identity mapped).
    fn leak() -> &'static Table {
        Box::leak(Box::new(Table([const { AtomicU64::new(0) }; 512])))
    }

    fn phys(&'static self) -> u64 {
        self as *const Table as u64
    }

    fn entry(&self, i: u64) -> &AtomicU64 {
        &self.0[(i & 511) as usize]
    }
}

/// One space's tables.
struct Tables {
    pml4: &'static Table,
    pd: &'static Table,
    /// The page table under each page-directory entry, once one was needed.
    pts: [Option<&'static Table>; 512],
}

impl Tables {
    fn new() -> Box<Self> {
        let (pml4, pdpt, pd) = (Table::leak(), Table::leak(), Table::leak());
        pml4.entry(0).store(boot_pml4_entry0(), Ordering::Relaxed);
        pml4.entry(1).store(pdpt.phys() | LINK, Ordering::Relaxed);
        pdpt.entry(0).store(pd.phys() | LINK, Ordering::Relaxed);
        Box::new(Self { pml4, pd, pts: [None; 512] })
    }

    /// Makes the entry of the page at `vaddr` (a `large` one, or 4 KiB)
    /// say `now`; whether a translation that was there went away.
    fn set(&mut self, vaddr: u64, large: bool, now: Option<Translation>) -> bool {
        let (di, ti) = ((vaddr >> 21) & 511, (vaddr >> 12) & 511);
        let dir = self.pd.entry(di);
        let old_dir = dir.load(Ordering::Relaxed);
        match now {
            Some(Translation { addr, large: true }) => {
                let new = (addr & ADDRESS) | LINK | HUGE;
                dir.store(new, Ordering::Relaxed);
                old_dir & PRESENT != 0 && old_dir != new
            }
            Some(Translation { addr, large: false }) => {
                let pt = *self.pts[di as usize].get_or_insert_with(Table::leak);
                let link = pt.phys() | LINK;
                dir.store(link, Ordering::Relaxed);
                let new = (addr & ADDRESS) | LINK;
                let old = pt.entry(ti).swap(new, Ordering::Relaxed);
                (old_dir & HUGE != 0) || (old & PRESENT != 0 && old != new)
            }
            None if large => {
                if old_dir & HUGE != 0 {
                    dir.store(0, Ordering::Relaxed);
                }
                old_dir & HUGE != 0
            }
            None => {
                let Some(pt) = self.pts[di as usize] else { return false };
                pt.entry(ti).swap(0, Ordering::Relaxed) & PRESENT != 0
            }
        }
    }

    /// Unmaps everything (the page tables stay for the slot's next space).
    fn clear(&mut self) {
        for i in 0..512 {
            self.pd.entry(i).store(0, Ordering::Relaxed);
        }
        for pt in self.pts.iter().flatten() {
            for i in 0..512 {
                pt.entry(i).store(0, Ordering::Relaxed);
            }
        }
    }

    /// What the entry of `vaddr` maps (its physical address), if anything.
    fn walk(&self, vaddr: u64) -> Option<u64> {
        let (di, ti) = ((vaddr >> 21) & 511, (vaddr >> 12) & 511);
        let dir = self.pd.entry(di).load(Ordering::Relaxed);
        if dir & PRESENT == 0 {
            return None;
        }
        if dir & HUGE != 0 {
            return Some(dir & ADDRESS & !0x1f_ffff);
        }
        let e = self.pts[di as usize]?.entry(ti).load(Ordering::Relaxed);
        (e & PRESENT != 0).then_some(e & ADDRESS)
    }
}

/// Each space's tables, made on first use.
static SPACES: [Mutex<Option<Box<Tables>>>; MAX_SPACES] = [const { Mutex::new(None) }; MAX_SPACES];
/// Each space's PML4 address once made (read by [`switch`] without the lock).
static ROOTS: [AtomicU64; MAX_SPACES] = [const { AtomicU64::new(0) }; MAX_SPACES];

/// Runs `f` on space `space`'s tables (made first if need be).
fn with_tables<T>(space: SpaceId, f: impl FnOnce(&mut Tables) -> T) -> T {
    let Some(slot) = SPACES.get(space.index()) else {
        panic!("space {} beyond this platform's {MAX_SPACES}", space.index())
    };
    let mut guard = slot.lock();
    let t = guard.get_or_insert_with(|| {
        let t = Tables::new();
        ROOTS[space.index()].store(t.pml4.phys(), Ordering::Release);
        t
    });
    f(t)
}

unsafe extern "C" {
    /// The boot tables' PML4 (`boot.rs`).
    static boot_pml4: [u64; 512];
}

/// The boot PML4's address.
fn boot_root() -> u64 {
    core::ptr::addr_of!(boot_pml4) as u64
}

/// The boot PML4's entry 0: the identity map of the first 4 GiB.
fn boot_pml4_entry0() -> u64 {
    // SAFETY: `boot.rs` filled the boot PML4 before any Rust code ran and
    // never writes it again; reading its first entry races with nothing.
    unsafe { core::ptr::addr_of!(boot_pml4).cast::<u64>().read_volatile() }
}

fn read_cr3() -> u64 {
    let v: u64;
    // SAFETY: reading CR3 has no side effects.
    unsafe { core::arch::asm!("mov {}, cr3", out(reg) v, options(nomem, nostack)) };
    v
}

/// Loads `root` into CR3 (flushing this core's non-global translations).
fn load_cr3(root: u64) {
    // SAFETY: `root` is the boot PML4 or one made by `Tables::new`, whose
    // entry 0 is the boot identity map the running kernel lives in.
    unsafe { core::arch::asm!("mov cr3, {}", in(reg) root, options(nostack)) };
}

/// Switches this core to `space`'s tables (the boot tables for `None`),
/// as an exit plan says; nothing if it runs on them already.
pub fn switch(space: Option<SpaceId>) {
    let root = match space {
        None => boot_root(),
        Some(s) => match ROOTS.get(s.index()).map(|r| r.load(Ordering::Acquire)) {
            Some(0) | None => with_tables(s, |t| t.pml4.phys()),
            Some(r) => r,
        },
    };
    if read_cr3() & ADDRESS != root {
        load_cr3(root);
    }
}

/// What `space`'s tables map at `vaddr` (a physical address), if anything.
pub fn walk(space: SpaceId, vaddr: u64) -> Option<u64> {
    with_tables(space, |t| t.walk(vaddr))
}

/// Per core: shootdowns asked of it, shootdowns it did, shootdowns it took.
static ASKED: [AtomicU64; MAX_CORES] = [const { AtomicU64::new(0) }; MAX_CORES];
static DONE: [AtomicU64; MAX_CORES] = [const { AtomicU64::new(0) }; MAX_CORES];
static TAKEN: [AtomicU64; MAX_CORES] = [const { AtomicU64::new(0) }; MAX_CORES];

/// Shootdown IPIs `core` took so far.
pub fn shootdowns_taken(core: usize) -> u64 {
    TAKEN[core].load(Ordering::Relaxed)
}

/// The shootdown IPI's handler (interrupts off): flush, acknowledge.
pub fn shootdown_taken(core: usize) {
    let asked = ASKED[core].load(Ordering::Acquire);
    load_cr3(read_cr3());
    DONE[core].fetch_max(asked, Ordering::AcqRel);
    TAKEN[core].fetch_add(1, Ordering::Relaxed);
}

/// Flushes this core and every core in `cores`, waiting for each.
fn shoot(cores: CoreMask) {
    load_cr3(read_cr3());
    let mut waits = [0u64; MAX_CORES];
    for c in cores.iter().filter(|&c| c < MAX_CORES) {
        waits[c] = ASKED[c].fetch_add(1, Ordering::AcqRel) + 1;
        apic::send_ipi(percore::apic_id(c), TLB_VECTOR);
    }
    for c in cores.iter().filter(|&c| c < MAX_CORES) {
        while DONE[c].load(Ordering::Acquire) < waits[c] {
            core::hint::spin_loop();
        }
    }
}

/// The last set of cores each space's unmap shot down (for the tests).
static LAST_SHOT: [AtomicU64; MAX_SPACES] = [const { AtomicU64::new(0) }; MAX_SPACES];

/// The cores the last unmap in `space` shot down.
pub fn last_shot(space: SpaceId) -> CoreMask {
    CoreMask(LAST_SHOT.get(space.index()).map_or(0, |s| s.load(Ordering::Relaxed)))
}

/// This platform's hardware translation, registered with the kernel.
pub struct Hardware;

impl Translations for Hardware {
    fn changed(&self, _core: usize, c: &Change<'_>) {
        let removed = with_tables(c.space, |t| t.set(c.vaddr, c.large, c.now()));
        if removed || !c.shoot.is_empty() {
            if let Some(s) = LAST_SHOT.get(c.space.index()) {
                s.store(c.shoot.0, Ordering::Relaxed);
            }
            shoot(c.shoot);
        }
    }

    fn cleared(&self, _core: usize, space: SpaceId, cores: CoreMask) {
        with_tables(space, Tables::clear);
        shoot(cores);
    }
}

/// The one [`Hardware`] the kernel is given.
pub static HARDWARE: Hardware = Hardware;
