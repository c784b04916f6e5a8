//! The boot core's way from the entry stub to the experiment, and the
//! panic handler.

use crate::boot_info::BootInfo;
use crate::exit::{exit, Outcome};
use crate::{cpu, experiment, heap, percore, println, serial};

/// Called by the boot entry in long mode on the boot stack, with the
/// loader's information pointer and `%eax` at entry.
#[unsafe(no_mangle)]
extern "C" fn metal_main(info: u64, magic: u64) -> ! {
    serial::init();
    // SAFETY: the boot core, once, before any other core runs; core 0's
    // tables are its own.
    unsafe {
        cpu::init_idt();
        cpu::init(0);
        percore::set_this_core(0);
        crate::user::init();
    }
    // SAFETY: `info` and `magic` are what the entry received from the loader.
    let mut boot = match unsafe { BootInfo::read(info, magic) } {
        Ok(b) => b,
        Err(e) => {
            println!("granule-metal: {e}");
            exit(Outcome::Failed)
        }
    };
    let (heap_at, heap_len) = match heap::init(&boot) {
        Ok(h) => h,
        Err(e) => {
            println!("granule-metal: {e}");
            exit(Outcome::Failed)
        }
    };
    // The loader's string may lie where the trampoline goes (`smp.rs`).
    boot.cmdline = alloc::string::String::from(boot.cmdline).leak();
    println!(
        "granule-metal: booted by {}, command line {:?}, heap {} MiB at {heap_at:#x}",
        boot.protocol,
        boot.cmdline,
        heap_len >> 20
    );
    let outcome = match experiment::run(&boot) {
        Ok(()) => Outcome::Passed,
        Err(e) => {
            println!("granule-metal: {e}");
            Outcome::Failed
        }
    };
    exit(outcome)
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo<'_>) -> ! {
    println!("KERNEL PANIC on core {}: {info}", percore::this_core());
    exit(Outcome::Failed)
}
