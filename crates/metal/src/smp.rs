//! The other cores: found in the ACPI MADT, started with INIT-SIPI-SIPI
//! through a real-mode trampoline, each given its descriptor tables, a
//! kernel stack and its per-core word behind GS; then every core runs the
//! jobs the boot core hands out ([`run_on_all`]).
//!
//! **Trampoline** (`boot.rs`, beside the boot entry whose way into long
//! mode it shares): 16-bit code copied to [`TRAMPOLINE`]
//! (`0x8000`, startup vector 8). It loads its own GDT, enters protected
//! mode, enables PAE with the boot page tables, long mode and paging, and
//! jumps to 64-bit code that takes its stack and core number from
//! [`ap_handoff`] and calls [`ap_main`]. The boot core starts one core at
//! a time and waits for it to check in before it reuses the hand-off.

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering};

use acpi::madt::{Madt, MadtEntry};
use acpi::{AcpiHandler, AcpiTables, PhysicalMapping};

use crate::{apic, cpu, irq, percore, println, MAX_CORES};

/// Where the trampoline is copied (below 1 MiB, page aligned).
const TRAMPOLINE: u64 = 0x8000;
/// Bytes of each application core's kernel stack.
const STACK: usize = 64 * 1024;

unsafe extern "C" {
    static ap_trampoline_start: u8;
    static ap_trampoline_end: u8;
}

/// The next core's stack top and core number, read by the trampoline.
#[unsafe(no_mangle)]
static ap_handoff: [AtomicU64; 2] = [AtomicU64::new(0), AtomicU64::new(0)];

/// How many cores are running (the boot core counts).
static ONLINE: AtomicUsize = AtomicUsize::new(1);

/// Physical memory is identity mapped: a "mapping" is the address itself.
#[derive(Clone, Copy, Debug)]
struct Identity;

impl AcpiHandler for Identity {
    unsafe fn map_physical_region<T>(&self, at: usize, size: usize) -> PhysicalMapping<Self, T> {
        let virt = NonNull::new(at as *mut T).unwrap_or(NonNull::dangling());
        // SAFETY: the first 4 GiB are identity mapped for the whole run, and
        // `acpi` asks only for its tables, which lie there.
        unsafe { PhysicalMapping::new(at, virt, size, size, *self) }
    }

    fn unmap_physical_region<T>(_: &PhysicalMapping<Self, T>) {}
}

/// The enabled cores' APIC IDs from the MADT, the boot core's first.
fn apic_ids(rsdp: u64) -> Result<Vec<u32>, &'static str> {
    let me = apic::id();
    if rsdp == 0 {
        return Ok(alloc::vec![me]);
    }
    // SAFETY: the loader's RSDP address, in identity-mapped memory.
    let tables =
        unsafe { AcpiTables::from_rsdp(Identity, rsdp as usize) }.map_err(|_| "the ACPI tables do not read")?;
    let madt = tables.find_table::<Madt>().map_err(|_| "no MADT among the ACPI tables")?;
    apic::set_base(u64::from(madt.get().local_apic_address));
    let mut ids = alloc::vec![me];
    for e in madt.get().entries() {
        match e {
            MadtEntry::LocalApic(l) => {
                let (id, flags) = (u32::from(l.apic_id), l.flags);
                if flags & 1 != 0 && id != me {
                    ids.push(id);
                }
            }
            MadtEntry::IoApic(io) if { io.global_system_interrupt_base } == 0 => {
                crate::ioapic::set_base(u64::from(io.io_apic_address));
            }
            _ => {}
        }
    }
    Ok(ids)
}

/// Starts up to `want` cores (all the MADT lists if `None`), at most
/// [`MAX_CORES`]; returns how many run, the boot core included.
pub fn start_cores(rsdp: u64, want: Option<usize>) -> Result<usize, &'static str> {
    let ids = apic_ids(rsdp)?;
    let n = want.unwrap_or(ids.len()).min(ids.len()).min(MAX_CORES);
    if want.is_some_and(|w| w > n) {
        println!("granule-metal: {} cores asked for, {} present; running {n}", want.unwrap_or(0), ids.len());
    }
    irq::mask_legacy_pics();
    apic::enable();
    for (core, &id) in ids.iter().enumerate().take(n) {
        percore::record_apic_id(core, id);
    }
    apic::start_timer(irq::TIMER_VECTOR, irq::TIMER_COUNT);
    irq::enable();
    if n > 1 {
        // Only the addresses of the trampoline's bounds are taken.
        let (start, end) = (&raw const ap_trampoline_start as u64, &raw const ap_trampoline_end as u64);
        // SAFETY: the trampoline page is conventional memory below 1 MiB
        // that nothing else uses once the boot information was copied out
        // (`start.rs`), identity mapped; the code is position independent
        // except for its absolute references to 0x8000.
        unsafe { core::ptr::copy_nonoverlapping(start as *const u8, TRAMPOLINE as *mut u8, (end - start) as usize) };
    }
    for (core, &id) in ids.iter().enumerate().take(n).skip(1) {
        let stack: &'static mut [u8] = Box::leak(alloc::vec![0u8; STACK].into_boxed_slice());
        let top = (stack.as_mut_ptr() as u64 + STACK as u64) & !15;
        ap_handoff[0].store(top, Ordering::Relaxed);
        ap_handoff[1].store(core as u64, Ordering::Release);
        // SAFETY: `id` is an enabled core of the MADT, not started yet; the
        // trampoline and the hand-off are in place.
        unsafe { apic::start_core(id, (TRAMPOLINE >> 12) as u8) };
        let t0 = granule_sync::cycles::now();
        while ONLINE.load(Ordering::Acquire) <= core {
            if granule_sync::cycles::now().wrapping_sub(t0) > 30_000_000_000 {
                return Err("an application core did not check in after its startup IPIs");
            }
            core::hint::spin_loop();
        }
    }
    Ok(n)
}

/// A job every core runs once: `run(core)`, counted in `done`.
struct Job<'a> {
    run: &'a (dyn Fn(usize) + Sync),
    cores: usize,
    done: AtomicUsize,
}

/// The job published to the application cores (null: none).
static JOB: AtomicPtr<Job<'static>> = AtomicPtr::new(core::ptr::null_mut());
/// Bumped after each publication: a core runs each generation's job once.
static GENERATION: AtomicU64 = AtomicU64::new(0);

/// Runs `f(core)` on each of the first `cores` cores (the caller's, core 0,
/// included; the others stay idle) and returns when all have finished.
pub fn run_on_all(cores: usize, f: &(dyn Fn(usize) + Sync)) {
    let job = Job { run: f, cores, done: AtomicUsize::new(0) };
    // The lifetime is erased only for the time the job is published: this
    // function withdraws it and waits for every core before returning.
    let at = (&raw const job).cast::<Job<'static>>().cast_mut();
    JOB.store(at, Ordering::Release);
    GENERATION.fetch_add(1, Ordering::Release);
    f(0);
    while job.done.load(Ordering::Acquire) < cores - 1 {
        core::hint::spin_loop();
    }
    JOB.store(core::ptr::null_mut(), Ordering::Release);
}

/// An application core's start, called by the trampoline on its stack.
#[unsafe(no_mangle)]
extern "C" fn ap_main(core: u64) -> ! {
    let core = core as usize;
    // SAFETY: this core, once, after the boot core filled the IDT.
    unsafe {
        cpu::init(core);
        percore::set_this_core(core);
        crate::user::init();
    }
    apic::enable();
    apic::start_timer(irq::TIMER_VECTOR, irq::TIMER_COUNT);
    irq::enable();
    // The generation is read before checking in: the boot core publishes
    // its first job only after it saw this core online, so that job's bump
    // comes after this read. Read after checking in, a bump made in between
    // (this core's thread descheduled by a loaded host) would be taken for
    // the starting point and its job never run, leaving the boot core
    // waiting for it forever.
    let mut seen = GENERATION.load(Ordering::Acquire);
    ONLINE.fetch_add(1, Ordering::AcqRel);
    loop {
        let generation = GENERATION.load(Ordering::Acquire);
        if generation == seen {
            core::hint::spin_loop();
            continue;
        }
        seen = generation;
        let job = JOB.load(Ordering::Acquire);
        if job.is_null() {
            continue;
        }
        // SAFETY: a published job lives until every core counted itself
        // done (`run_on_all` waits), and this core counts itself only after
        // its last use of it.
        let job = unsafe { &*job };
        if core >= job.cores {
            continue;
        }
        (job.run)(core);
        job.done.fetch_add(1, Ordering::AcqRel);
    }
}
