//! The sysctl tree: granule-sync's [`rcu_tree::Tree`] (read with no lock,
//! changed by one compare-and-swap per node; its algorithm, word layout
//! and loom models are there) with sysctl's kinds, and the checks the
//! kernel makes before it calls it: names, values against their kinds.

use granule_sync::lockfree::rcu_tree::{self, NodeKind, TreeError};

use crate::abi::{Error, SysctlKind, SYSCTL_MAX_COMPONENT};

pub(crate) use granule_sync::lockfree::rcu_tree::{Plain, Retire, Retired, Visit};

/// The sysctl tree.
pub(crate) type Tree = rcu_tree::Tree<SysctlKind>;
/// A leaf's value as read.
pub(crate) type Leaf<'a> = rcu_tree::Leaf<'a, SysctlKind>;

impl NodeKind for SysctlKind {
    const INTERIOR: Self = SysctlKind::Node;

    fn interior(self) -> bool {
        self == SysctlKind::Node
    }
}

impl From<TreeError> for Error {
    fn from(e: TreeError) -> Self {
        match e {
            TreeError::NotFound => Error::NotFound,
            TreeError::Exists => Error::Exists,
            TreeError::Busy => Error::Busy,
            TreeError::NotWritable | TreeError::NoValue | TreeError::NotInterior => Error::ReadOnly,
            TreeError::Full => Error::NotEnoughMemory,
            TreeError::TooDeep => Error::TooLarge,
        }
    }
}

/// The levels of a dotted name (`InvalidArgument` for an empty level or a
/// bad character, `TooLarge` for a long one).
pub(crate) fn components(name: &str) -> Result<impl Iterator<Item = &str>, Error> {
    if name.is_empty() {
        return Err(Error::InvalidArgument);
    }
    for c in name.split('.') {
        check_component(c)?;
    }
    Ok(name.split('.'))
}

/// A valid name of one level: 1..=32 bytes of `[A-Za-z0-9_%-]`.
pub(crate) fn check_component(c: &str) -> Result<(), Error> {
    if c.is_empty() || !c.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'%' || b == b'-') {
        return Err(Error::InvalidArgument);
    }
    if c.len() > SYSCTL_MAX_COMPONENT {
        return Err(Error::TooLarge);
    }
    Ok(())
}

/// A value fits its kind: an integer is exactly 8 bytes, a string valid
/// UTF-8; nothing longer than the kind's maximum.
pub(crate) fn check_value(kind: SysctlKind, value: &[u8]) -> Result<(), Error> {
    if value.len() > kind.max_len() {
        return Err(Error::TooLarge);
    }
    match kind {
        SysctlKind::Int if value.len() != 8 => Err(Error::InvalidArgument),
        SysctlKind::Str if core::str::from_utf8(value).is_err() => Err(Error::InvalidArgument),
        _ => Ok(()),
    }
}
