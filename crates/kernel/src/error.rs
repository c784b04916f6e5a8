//! Error conventions.
//!
//! System calls fail with seL4's error codes ([`crate::abi::Error`]), chosen
//! by one rule per situation, so that tests can state them exactly:
//!
//! | situation | error |
//! |---|---|
//! | the capability the call is made on is out of range, null, stale, lacks the right | `InvalidCapability` |
//! | a capability *argument* (cptr word) cannot be looked up or is null | `FailedLookup` |
//! | a capability argument has the wrong type or rights | `InvalidCapability` |
//! | unknown system call number or invocation label, or an invocation the object does not have | `IllegalOperation` |
//! | an operation the object's state forbids (busy reply object, already bound, writing one's own registers) | `IllegalOperation` |
//! | fewer message words than the invocation reads | `TruncatedMessage` |
//! | a number out of range (priority, core, IRQ, slot index, size bits, object count) | `RangeError` |
//! | an unknown object type | `InvalidArgument` |
//! | a destination slot is occupied, a frame is already mapped | `DeleteFirst` |
//! | an IRQ handler already issued | `RevokeFirst` |
//! | untyped memory or the object's slab is exhausted; a full address space | `NotEnoughMemory` |
//! | a `Call` whose receiver gave no reply object, or whose reply object was destroyed | `FailedLookup` |
//!
//! Errors are values: no code path a user thread can reach panics.
