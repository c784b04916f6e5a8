//! How a core waits for a kernel lock (a leaf: every lock user imports it).

/// The spin hook of a core waiting for the kernel lock.
///
/// This kernel's remote calls are *asynchronous* (the requesting core never
/// waits for the remote core while holding the lock): a stall request is
/// acknowledged by the remote core either by entering the kernel or by going
/// idle. A core waiting for the lock has already published that it trapped
/// (its user thread is not running), which acknowledges every stall request
/// aimed at it; reschedule requests are served as soon as it holds the lock.
/// So waiting needs only to be polite to the sibling hyperthread.
#[inline(always)]
pub(crate) fn spin_hook() {
    core::hint::spin_loop();
}
