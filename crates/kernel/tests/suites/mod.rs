//! The kernel's behavioural suites. Each is written once and runs under every
//! regime: the `under_<regime>` test targets include this module, and
//! `common` boots the regime named by the target (see `common/mod.rs`). They
//! drive the kernel with the test platform's `Sim` (`granule-verify`), which
//! runs the invariant checker after every kernel entry (`Sim::follow`).

mod boot;
mod cnode;
mod destroy;
mod fault;
mod ipc;
mod irq_frame;
mod notification;
mod pages;
mod random;
mod stall;
mod subsys;
mod tcb;
