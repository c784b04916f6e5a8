//! Ending a run: QEMU's `isa-debug-exit` device (I/O port 0xf4, which the
//! test harness adds with `-device isa-debug-exit,iobase=0xf4,iosize=0x04`)
//! turns a written value `v` into the exit status `2v + 1`. On a machine
//! without it the write does nothing and the core halts.

use crate::port::out32;

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Every check passed: QEMU exits with status 33.
    Passed = 0x10,
    /// A check failed, the kernel faulted or panicked: status 3.
    Failed = 0x01,
}

/// Ends the run with `outcome`: QEMU exits; real hardware halts here.
pub fn exit(outcome: Outcome) -> ! {
    crate::println!("granule-metal: {}", if outcome == Outcome::Passed { "passed" } else { "FAILED" });
    // SAFETY: port 0xf4 is QEMU's debug-exit device or nothing at all;
    // writing it touches no memory.
    unsafe { out32(0xf4, outcome as u32) };
    halt_forever()
}

/// Stops this core: interrupts off, `hlt` for ever.
pub fn halt_forever() -> ! {
    loop {
        // SAFETY: `cli; hlt` only stops this core.
        unsafe { core::arch::asm!("cli; hlt", options(nomem, nostack)) };
    }
}
