//! Which CPU each core's OS thread is pinned to.
//!
//! Core `i` goes on the `i`-th CPU of the process's CPU order. By default
//! that is the CPUs this process may run on in the OS's numbering; a program
//! that knows the machine's topology sets a better one once, before it boots
//! a machine ([`set_cpu_order`]) — `granule` sets its fill order (one
//! last-level-cache domain, then one socket, at a time, SMT siblings last), so
//! that the first cores share a cache and the last ones are siblings.

use std::sync::OnceLock;

use core_affinity::CoreId;

static ORDER: OnceLock<Vec<CoreId>> = OnceLock::new();

/// Set the order in which machines place their cores on CPUs (CPU numbers as
/// the OS counts them). The first call wins; an empty order is ignored.
/// Returns whether this call set it.
pub fn set_cpu_order(cpus: &[usize]) -> bool {
    !cpus.is_empty() && ORDER.set(cpus.iter().map(|&id| CoreId { id }).collect()).is_ok()
}

/// The CPUs cores are placed on, in order: the order set by
/// [`set_cpu_order`], else the CPUs this process may run on, in OS order.
pub fn cpu_order() -> Vec<CoreId> {
    match ORDER.get() {
        Some(order) => order.clone(),
        None => core_affinity::get_core_ids().unwrap_or_default(),
    }
}
