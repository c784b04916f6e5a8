//! Thread capabilities a `lockfree` shared path deleted, whose deletion
//! management finishes: one short list per core (`finish_destroy.rs`).
//!
//! Each entry is the dead slot and the capability it held. Management
//! empties the lists at the start of every entry that ends in an exit plan.
//! Under the lock regimes they stay empty.

use super::core_list::{CoreList, Slotted};
use crate::object::{Cap, SlotAddr};

/// Most deletions one core may leave to management; a shared destroy that
/// finds its list full runs as a management operation, which empties it.
pub(crate) const MAX_DOOMED: usize = 8;

/// The dead slot `slot`, which held `cap`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Doom {
    pub slot: SlotAddr,
    pub cap: Cap,
    /// The destroy's kill made the thread's only stop request (the thread
    /// ran): a withdrawal takes the request back with the kill.
    pub requested: bool,
}

impl Slotted for Doom {
    fn slot(&self) -> SlotAddr {
        self.slot
    }
}

/// One core's list.
pub(crate) type Doomed = CoreList<Doom, MAX_DOOMED>;
