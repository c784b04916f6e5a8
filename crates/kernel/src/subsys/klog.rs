//! The kernel log: a bounded ring of messages that any thread appends to
//! and a reader (syslogd) drains — granule-sync's [`LogRing`] (Vyukov's
//! bounded queue, model-checked there), with messages of up to
//! [`KLOG_MAX_MESSAGE`] bytes.
//!
//! **What is locked, and where.** The policies wrap the *buffer*
//! operations — append, read — in their lock (`giant`: the whole kernel;
//! `sx`, `improper`: the klog mutex; `lockfree`: none), not the device
//! that fronts it: seed `003` §5.3 locked the character device and left
//! the buffer shared, which is what its "bda dog" interleaving shows.

use granule_sync::lockfree::LogRing;

use crate::abi::KLOG_MAX_MESSAGE;

pub(crate) use granule_sync::lockfree::{Appended, Taken};

/// The kernel log's ring.
pub(crate) type Klog = LogRing<{ KLOG_MAX_MESSAGE / 8 }>;

const _: () = assert!(KLOG_MAX_MESSAGE % 8 == 0, "the log's messages are whole words");
