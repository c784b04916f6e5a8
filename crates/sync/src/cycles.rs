//! The cycle counter every measurement in granule is taken with.
//!
//! On x86-64 this is the time-stamp counter (`rdtsc`): it ticks at a constant
//! rate (the "TSC frequency", calibrated to nanoseconds by the host code), not
//! at the core's current clock, which is what the seeds call "cycles" too.
//! On other architectures the virtual counter is used where we know how to
//! read it; elsewhere the counter reads 0 and profiles show zero times.

/// The current value of the cycle counter.
#[inline(always)]
pub fn now() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: `rdtsc` has no preconditions; it is available on every
        // x86-64 CPU and only reads a counter.
        unsafe { core::arch::x86_64::_rdtsc() }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        0
    }
}

/// The cycle counter, ordered after every earlier load and store of this
/// core (`rdtscp` then `lfence`): use it to end a timed region.
#[inline(always)]
pub fn now_fenced() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        let mut aux = 0u32;
        // SAFETY: `rdtscp` only reads the counter and IA32_TSC_AUX into `aux`,
        // a valid local; `_mm_lfence` has no preconditions.
        unsafe {
            let t = core::arch::x86_64::__rdtscp(&mut aux);
            core::arch::x86_64::_mm_lfence();
            t
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        0
    }
}
