//! Helpers shared by the integration tests.

pub mod compare;
pub mod twin;
