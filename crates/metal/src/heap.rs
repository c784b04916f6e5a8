//! The kernel heap: `linked_list_allocator`'s first-fit heap over the
//! largest RAM range above the image (below 4 GiB, which the boot page
//! tables map). The kernel's slabs, its per-core state and the
//! experiment's bookkeeping are allocated here at boot.

use linked_list_allocator::LockedHeap;

use crate::boot_info::BootInfo;

#[global_allocator]
static HEAP: LockedHeap = LockedHeap::empty();

/// The end of the loaded image (from `link.ld`).
fn image_end() -> u64 {
    unsafe extern "C" {
        static __image_end: u8;
    }
    // Only the symbol's address is taken; nothing is read.
    core::ptr::addr_of!(__image_end) as u64
}

/// Hands the largest usable range to the heap; returns its start and size.
pub fn init(boot: &BootInfo) -> Result<(u64, u64), &'static str> {
    const FOUR_GIB: u64 = 1 << 32;
    let lowest = image_end().max(1 << 20);
    let best = boot
        .ram()
        .iter()
        .map(|r| {
            let start = r.start.max(lowest);
            let end = (r.start + r.len).min(FOUR_GIB);
            (start, end.saturating_sub(start))
        })
        .max_by_key(|&(_, len)| len)
        .filter(|&(_, len)| len >= 1 << 20)
        .ok_or("no usable RAM range of at least 1 MiB above the image in the memory map")?;
    // SAFETY: the range is RAM the loader reported usable, above the image
    // and its boot stack and page tables, below the identity-mapped 4 GiB,
    // and handed to the heap once, before anything allocates.
    unsafe { HEAP.lock().init(best.0 as *mut u8, best.1 as usize) };
    Ok(best)
}
