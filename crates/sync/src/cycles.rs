//! The cycle counter every measurement in granule is taken with.
//!
//! On x86-64 this is the time-stamp counter (`rdtsc`): it ticks at a constant
//! rate (the "TSC frequency", calibrated to nanoseconds by the host code), not
//! at the core's current clock, which is what the seeds call "cycles" too.
//! On other architectures the counter reads 0 for now, so profiles there
//! show zero times (a port adds its counter here).

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

/// The cycle counter, read after every earlier instruction of this core has
/// executed (`rdtscp`; earlier stores may still sit in the store buffer) and
/// before any later one starts (`lfence`): use it to end a timed region.
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
