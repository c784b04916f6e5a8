//! What the lock-free objects' loom models share: the model runner, bounded
//! by `LOOM_MAX_PREEMPTIONS` (3 when unset), and an `rmw` hook that counts
//! nothing.

use granule_sync::lockfree::Rmw;

/// Check `f` under every interleaving within the preemption bound.
pub fn model<F: Fn() + Sync + Send + 'static>(f: F) {
    let mut builder = loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(3);
    }
    builder.check(f);
}

/// The operations' read-modify-write hook, ignored.
#[allow(dead_code)] // not every model hands its object a hook
pub fn quiet(_: Rmw) {}
