//! The console: COM1, a 16550 UART at I/O port 0x3f8, 115200 baud 8N1.
//!
//! Every core may print; a spin lock keeps one line whole. Output is
//! polled (no interrupts), so a fault handler can print with interrupts off.

use core::fmt::{self, Write};

use granule_sync::lock::{RawLock, Ticket};

use crate::port::{in8, out8};

const COM1: u16 = 0x3f8;

/// Serialises lines from different cores.
static LINE: Ticket = Ticket::new_const();

/// Programs the UART. Called once by the boot core before anything prints.
pub fn init() {
    // SAFETY: COM1's registers (divisor latch, line control, FIFO, modem
    // control); programming them touches no memory.
    unsafe {
        out8(COM1 + 1, 0x00); // no interrupts
        out8(COM1 + 3, 0x80); // divisor latch on
        out8(COM1, 0x01); // 115200 baud
        out8(COM1 + 1, 0x00);
        out8(COM1 + 3, 0x03); // 8N1, latch off
        out8(COM1 + 2, 0xc7); // FIFO on, cleared
        out8(COM1 + 4, 0x03); // DTR, RTS
    }
}

/// COM1's interrupt line (ISA IRQ 4).
pub const IRQ: u32 = 4;

/// Asks the UART to interrupt when a byte arrives (IER bit 0; MCR's OUT2
/// gates the UART's interrupt onto its line).
pub fn enable_receive_interrupt() {
    // SAFETY: COM1's interrupt-enable and modem-control registers.
    unsafe {
        out8(COM1 + 1, 0x01);
        out8(COM1 + 4, 0x0b);
    }
}

/// Takes every byte the UART holds; returns the last (the line's level
/// falls once the receive buffer is empty).
pub fn drain() -> Option<u8> {
    let mut last = None;
    // SAFETY: COM1's line-status and receive registers; reading them only
    // takes the received bytes.
    unsafe {
        while in8(COM1 + 5) & 1 != 0 {
            last = Some(in8(COM1));
        }
    }
    last
}

fn put(b: u8) {
    // SAFETY: COM1's line status and data registers.
    unsafe {
        while in8(COM1 + 5) & 0x20 == 0 {
            core::hint::spin_loop();
        }
        out8(COM1, b);
    }
}

/// The serial line as a `fmt::Write`.
#[derive(Debug)]
pub struct Serial;

impl Write for Serial {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        for b in s.bytes() {
            if b == b'\n' {
                put(b'\r');
            }
            put(b);
        }
        Ok(())
    }
}

/// Prints `args` and a newline as one line, whichever cores print at once.
pub fn line(args: fmt::Arguments<'_>) {
    // A ticket lock names no core: 0 for every caller.
    LINE.acquire(0, core::hint::spin_loop);
    let _ = Serial.write_fmt(args);
    let _ = Serial.write_str("\n");
    LINE.release(0);
}

/// Prints a formatted line on the serial console.
#[macro_export]
macro_rules! println {
    ($($arg:tt)*) => { $crate::serial::line(format_args!($($arg)*)) };
}
