//! What the loader tells the kernel: the memory map, the command line and
//! where the ACPI tables start, read from either protocol's structure.
//!
//! **PVH** `hvm_start_info` (Xen's `arch-x86/hvm/start_info.h`, version 1):
//! magic `0x336ec578`, then `cmdline_paddr` (offset 24), `rsdp_paddr` (32),
//! `memmap_paddr` (40) and `memmap_entries` (48, a `u32`); memory-map entries are
//! `{addr: u64, size: u64, type: u32, reserved: u32}`, type 1 is RAM.
//! **Multiboot2** boot information: a `total_size`, then 8-byte aligned tags
//! `{type: u32, size: u32, ...}`: 1 the command line, 6 the memory map
//! (`entry_size`, `entry_version`, entries as in PVH), 14 and 15 a copy of
//! the ACPI RSDP (version 1 and 2), 0 the end.

use crate::boot::MULTIBOOT2_MAGIC;

const PVH_MAGIC: u32 = 0x336e_c578;

/// A range of usable RAM.
#[derive(Clone, Copy, Debug, Default)]
pub struct Region {
    /// First byte.
    pub start: u64,
    /// Bytes.
    pub len: u64,
}

/// The most RAM ranges kept from the memory map.
const MAX_REGIONS: usize = 32;

/// The loader's information, copied out of its structure.
#[derive(Debug)]
pub struct BootInfo {
    /// Which protocol booted us.
    pub protocol: &'static str,
    ram: [Region; MAX_REGIONS],
    regions: usize,
    /// The kernel command line (`-append` under QEMU), empty if none.
    pub cmdline: &'static str,
    /// Physical address of the ACPI RSDP, 0 if the loader gave none.
    pub rsdp: u64,
}

impl BootInfo {
    /// Reads the structure at physical address `info`, `magic` being what
    /// `%eax` held at entry.
    ///
    /// # Safety
    /// `info` and `magic` must be what the boot entry received from a PVH or
    /// multiboot2 loader; the structures they point to lie in identity-mapped
    /// memory that nothing overwrites while the kernel runs.
    pub unsafe fn read(info: u64, magic: u64) -> Result<Self, &'static str> {
        let mut out = Self { protocol: "", ram: [Region::default(); MAX_REGIONS], regions: 0, cmdline: "", rsdp: 0 };
        if magic as u32 == MULTIBOOT2_MAGIC {
            out.protocol = "multiboot2";
            // SAFETY: the loader's structure (the caller's contract).
            unsafe { out.read_multiboot2(info) };
            return Ok(out);
        }
        // SAFETY: a PVH loader passes the start info in `%ebx`; its first
        // word is the magic, checked before anything else is read.
        let word = |off: u64| unsafe { core::ptr::read_unaligned((info + off) as *const u64) };
        // SAFETY: as above.
        if info == 0 || unsafe { core::ptr::read_unaligned(info as *const u32) } != PVH_MAGIC {
            return Err("neither a PVH start info nor multiboot2 information at entry");
        }
        out.protocol = "pvh";
        // SAFETY: the string the loader wrote (the caller's contract).
        out.cmdline = unsafe { c_string(word(24)) };
        out.rsdp = word(32);
        let (map, entries) = (word(40), word(48) as u32);
        for i in 0..u64::from(entries) {
            // SAFETY: the memory-map entry the start info points to.
            unsafe { out.add_entry(map + i * 24) };
        }
        Ok(out)
    }

    /// # Safety
    /// `info` is multiboot2 boot information (see [`Self::read`]).
    unsafe fn read_multiboot2(&mut self, info: u64) {
        // SAFETY: the information's first word is its total size.
        let total = u64::from(unsafe { core::ptr::read_unaligned(info as *const u32) });
        let mut tag = info + 8;
        while tag + 8 <= info + total {
            // SAFETY: a tag header inside the information's total size.
            let (ty, size) = unsafe {
                (core::ptr::read_unaligned(tag as *const u32), core::ptr::read_unaligned((tag + 4) as *const u32))
            };
            match ty {
                0 => break,
                // SAFETY: tag 1 holds a NUL-terminated string.
                1 => self.cmdline = unsafe { c_string(tag + 8) },
                6 => {
                    // SAFETY: the memory map tag's entry size.
                    let entry = u64::from(unsafe { core::ptr::read_unaligned((tag + 8) as *const u32) });
                    let mut e = tag + 16;
                    while entry >= 24 && e + entry <= tag + u64::from(size) {
                        // SAFETY: an entry inside the tag.
                        unsafe { self.add_entry(e) };
                        e += entry;
                    }
                }
                14 | 15 if self.rsdp == 0 || ty == 15 => self.rsdp = tag + 8,
                _ => {}
            }
            tag += (u64::from(size) + 7) & !7;
            if size < 8 {
                break;
            }
        }
    }

    /// Adds the memory-map entry at `e`, `{addr: u64, len: u64, type: u32}`
    /// in both protocols, if it is RAM.
    ///
    /// # Safety
    /// `e` is the address of such an entry in the loader's structure.
    unsafe fn add_entry(&mut self, e: u64) {
        // SAFETY: the caller's contract.
        let (addr, len, ty) = unsafe {
            (
                core::ptr::read_unaligned(e as *const u64),
                core::ptr::read_unaligned((e + 8) as *const u64),
                core::ptr::read_unaligned((e + 16) as *const u32),
            )
        };
        self.add(ty, addr, len);
    }

    fn add(&mut self, ty: u32, start: u64, len: u64) {
        if ty == 1 && len > 0 && self.regions < MAX_REGIONS {
            self.ram[self.regions] = Region { start, len };
            self.regions += 1;
        }
    }

    /// The usable RAM ranges.
    pub fn ram(&self) -> &[Region] {
        &self.ram[..self.regions]
    }

    /// The value of `key=value` on the command line, if present.
    pub fn arg(&self, key: &str) -> Option<&'static str> {
        self.cmdline.split_ascii_whitespace().find_map(|w| w.strip_prefix(key)?.strip_prefix('='))
    }
}

/// The NUL-terminated string at physical address `at` (empty for 0 or for
/// bytes that are not UTF-8).
///
/// # Safety
/// `at` is 0 or the address of a NUL-terminated string in identity-mapped
/// memory that lives and stays unchanged for the rest of the run.
unsafe fn c_string(at: u64) -> &'static str {
    if at == 0 {
        return "";
    }
    // SAFETY: the caller's contract.
    let s = unsafe { core::ffi::CStr::from_ptr(at as *const core::ffi::c_char) };
    s.to_str().unwrap_or("")
}
