//! What the kernel-only examples share: the root's invocations.

use granule_kernel::abi::{InvocationLabel, MessageInfo, Sysno, Word};
use granule_kernel::{CoreHandle, Kernel, Regime, SyscallArgs};

/// Invoke `cptr` with `label` and `args` as the thread core 0 runs (which
/// `h` acts as), and check that it succeeded.
pub fn call(k: &Kernel<impl Regime>, h: &mut CoreHandle, cptr: Word, label: InvocationLabel, args: &[Word]) {
    let t = k.current_thread(h, 0).expect("running");
    // SAFETY: `t` is the thread core 0 runs, between kernel entries, and
    // the example's one OS thread is the only one acting as any core.
    let b = unsafe { &mut *k.ipc_buffer(t) };
    b.msg[..args.len()].copy_from_slice(args);
    let info = MessageInfo::new(label.word(), 0, 0, args.len() as Word);
    let _ = k.syscall(h, SyscallArgs::new(Sysno::Call.word(), cptr, info.word(), 0));
    // SAFETY: as above.
    assert_eq!(unsafe { &*k.ipc_buffer(t) }.result(), Ok(()), "{label:?}");
}
