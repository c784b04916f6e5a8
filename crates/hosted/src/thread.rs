//! User threads: a stackful coroutine per thread, the trap that leaves it,
//! and what happens when its code panics.
//!
//! A user thread's *context* is a `corosensei` coroutine running the thread's
//! entry function on its own stack. Resuming the coroutine is "return to user
//! mode"; the coroutine yielding a [`Trap`] is the system-call instruction
//! (or a fault). Between the two, the core's OS thread runs the kernel. User
//! code reaches the kernel only through [`UserCtx::syscall`], which yields:
//! there is no other path from a coroutine into kernel code.
//!
//! **Results** come back the way the kernel ABI says: in the thread's
//! [`IpcBuffer`] (error, restart flag, message info, badge, message words).
//! The coroutine is resumed with `()`.
//!
//! **Faults.** The entry function runs under `catch_unwind`. A panic becomes
//! `Trap::Fault(UserPanic)`, which the core loop delivers to the kernel
//! (`Kernel::fault`): the thread is stopped, the machine keeps running. An
//! entry function that returns is a fault too (`Other`): seL4 threads have no
//! "exit" system call. Either way the coroutine never finishes: if it is ever
//! resumed again it yields the same fault, so "resume a finished coroutine"
//! cannot happen. A process-wide panic hook (installed once) records the
//! message of a panic raised inside user code into a thread-local slot instead
//! of printing it; panics outside user code (a kernel bug) reach the previous
//! hook unchanged.
//!
//! **Tear-down.** Dropping a suspended coroutine unwinds its stack (corosensei's
//! forced unwind) so user destructors run. The forced-unwind payload is caught
//! by our `catch_unwind` like any panic; a thread-local flag set around the drop
//! tells the body to re-raise it rather than report a fault, and traps made
//! while unwinding never yield (see [`UserCtx::syscall`]).

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::ptr::NonNull;
use std::sync::{Arc, Mutex, Once};

use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};
use granule_kernel::abi::Error;
use granule_kernel::{BootInfo, FaultKind, IpcBuffer, SyscallArgs, ThreadId, Word};

use crate::machine::Gate;

/// What a user context hands to its core when it stops running.
#[derive(Debug)]
pub(crate) enum Trap {
    /// A system call (the "registers"; the rest is in the IPC buffer).
    Syscall(SyscallArgs),
    /// A fault: the code panicked or returned (it cannot go on), or raised
    /// a memory-access fault. Boxed: faults are rare, and every system call
    /// moves a `Trap` through the coroutine's yield, so it stays the size of
    /// a system call's words.
    Fault(Box<(FaultKind, String)>),
}

/// A user program: an entry function given its context and argument word.
pub type ProgramFn = Arc<dyn Fn(&mut UserCtx<'_>, Word) + Send + Sync>;

/// The root task: given its context and the boot information.
pub type RootFn = Box<dyn FnOnce(&mut UserCtx<'_>, &BootInfo) + Send>;

/// The programs a machine can start, by entry word: entry 0 is the root task
/// (startable once), entry `k >= 1` is the `k`-th registered program.
pub(crate) struct Programs {
    pub(crate) root: Mutex<Option<(RootFn, BootInfo)>>,
    pub(crate) programs: Vec<ProgramFn>,
}

impl std::fmt::Debug for Programs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Programs").field("programs", &self.programs.len()).finish_non_exhaustive()
    }
}

enum Start {
    Root(RootFn, BootInfo),
    Program(ProgramFn, Word),
    Bad(String),
}

/// A user thread's view of the machine: the trap and its IPC buffer.
///
/// Only user code running inside a context ever holds one (by `&mut`).
pub struct UserCtx<'y> {
    yielder: &'y Yielder<(), Trap>,
    buffer: NonNull<IpcBuffer>,
    thread: ThreadId,
    gate: &'y Gate,
}

impl std::fmt::Debug for UserCtx<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UserCtx").field("thread", &self.thread).finish_non_exhaustive()
    }
}

impl UserCtx<'_> {
    /// Trap into the kernel with `args`; returns when the kernel next runs
    /// this thread, with the results in [`UserCtx::ipc_buffer`].
    ///
    /// While the thread is unwinding (a panic, or its context being torn
    /// down) it cannot trap: std's panic count is per OS thread, and the
    /// coroutine might be resumed on another one. The call then returns at
    /// once with `IllegalOperation` in the buffer, without entering the kernel.
    #[inline]
    pub fn syscall(&mut self, args: SyscallArgs) {
        if std::thread::panicking() {
            let b = self.ipc_buffer();
            b.error = Error::IllegalOperation.word();
            b.restart = 0;
            return;
        }
        self.yielder.suspend(Trap::Syscall(args));
    }

    /// Raise a fault the hardware would raise — on this platform, which has
    /// no MMU, a [`FaultKind::MemoryAccess`] where user code finds no
    /// mapping. Returns when the kernel runs this thread again after its
    /// fault handler answered with label 0 (the caller then retries the
    /// access). A delivery that was cancelled, or a fault nobody could
    /// answer and a `TcbResume` restarted, is raised again (the kernel sets
    /// the buffer's restart flag), exactly as re-executing the access would.
    /// A fault of a kind that cannot go on (`UserPanic`, `Other`) never
    /// returns: the thread starts afresh when it runs again.
    pub fn fault(&mut self, kind: FaultKind) {
        loop {
            if std::thread::panicking() {
                return;
            }
            let what = match kind {
                FaultKind::MemoryAccess { addr, write } => {
                    format!("{} at {addr:#x} with no mapping", if write { "store" } else { "load" })
                }
                _ => "raised by user code".to_string(),
            };
            self.yielder.suspend(Trap::Fault(Box::new((kind, what))));
            if self.ipc_buffer().restart == 0 {
                return;
            }
        }
    }

    /// This thread's IPC buffer.
    #[inline]
    pub fn ipc_buffer(&mut self) -> &mut IpcBuffer {
        // SAFETY: the pointer came from `Kernel::ipc_buffer` for this thread
        // (non-null: checked at context creation) and stays valid while the
        // kernel lives, which outlives every context (the machine drops the
        // contexts first). The IpcBuffer contract lets user code access it
        // while this thread is the one its core runs and no kernel entry of
        // that core is in progress: we are executing inside the coroutine,
        // which a core resumes only after performing an exit plan that runs
        // this thread and before its next kernel entry. The returned borrow
        // is tied to `&mut self`, so it ends before the next `syscall`.
        unsafe { self.buffer.as_mut() }
    }

    /// The kernel's name for this thread.
    pub fn thread(&self) -> ThreadId {
        self.thread
    }

    /// Let the secondary cores enter the kernel (a machine booted with
    /// `hold_secondary_cores`): the platform's "start application processors".
    /// The root task calls it once it has built everything the other cores
    /// will run, so that under the `none` regime no two cores ever touch the
    /// same kernel object. Idempotent.
    pub fn release_secondary_cores(&mut self) {
        self.gate.open();
    }
}

thread_local! {
    /// The OS thread is running user code (inside `UserContext::resume`).
    static IN_USER: Cell<bool> = const { Cell::new(false) };
    /// Message of the last panic raised in user code on this OS thread.
    static USER_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
    /// This OS thread is dropping contexts (forced unwinds are not faults).
    static TEARING_DOWN: Cell<bool> = const { Cell::new(false) };
}

fn payload_message(p: &(dyn Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic with a non-string payload".into()
    }
}

/// Install (once per process) the hook that keeps user panics quiet.
pub(crate) fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if IN_USER.with(Cell::get) {
                let msg = match info.location() {
                    Some(l) => format!("{} at {}:{}", payload_message(info.payload()), l.file(), l.line()),
                    None => payload_message(info.payload()),
                };
                USER_PANIC.with(|p| *p.borrow_mut() = Some(msg));
            } else {
                previous(info);
            }
        }));
    });
}

/// Run `f` with this OS thread marked as tearing contexts down.
pub(crate) fn tearing_down<T>(f: impl FnOnce() -> T) -> T {
    let before = TEARING_DOWN.with(|t| t.replace(true));
    let out = f();
    TEARING_DOWN.with(|t| t.set(before));
    out
}

/// A user thread's context: its coroutine (see `context.rs` for why it may
/// move between the OS threads acting as cores).
pub(crate) struct UserContext {
    pub(crate) thread: ThreadId,
    co: Coroutine<(), Trap, (), DefaultStack>,
}

impl std::fmt::Debug for UserContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UserContext").field("thread", &self.thread).finish_non_exhaustive()
    }
}

// SAFETY: the contract in `context.rs`: (1) a context is resumed (or dropped)
// only by the core owning its `ContextTable` slot, one at a time, and the
// ownership transfer is an Acquire/Release hand-off, so the coroutine's stack
// and registers are never used by two OS threads at once and each resumer
// sees the previous one's writes; (2) the coroutine's closure captures only
// `Send` data (a `ProgramFn`/`RootFn`, which are `Send`, a word, `BootInfo`,
// an `Arc<Gate>`) plus the IPC-buffer pointer, which is not owned data but an
// address in kernel memory whose access rule (the `IpcBuffer` contract) does
// not depend on the OS thread; (3) user code keeps no thread-affine state
// across a trap (the documented user-program rule), and the platform's own
// thread-locals are touched only between traps.
unsafe impl Send for UserContext {}

impl UserContext {
    /// A fresh context for thread `t` starting at `entry(arg)`.
    pub(crate) fn new(
        t: ThreadId,
        entry: Word,
        arg: Word,
        buffer: *mut IpcBuffer,
        programs: &Programs,
        gate: Arc<Gate>,
        stack_bytes: usize,
    ) -> std::io::Result<Self> {
        // Fallible steps first, so a failure does not consume the root task.
        let buffer = NonNull::new(buffer)
            .ok_or_else(|| std::io::Error::other(format!("the kernel gave no IPC buffer for {t:?}")))?;
        let stack = DefaultStack::new(stack_bytes)?;
        let start = match entry {
            0 => match programs.root.lock().unwrap_or_else(|e| e.into_inner()).take() {
                Some((root, info)) => Start::Root(root, info),
                None => Start::Bad("entry 0 (the root task) can start only once".into()),
            },
            k => match usize::try_from(k - 1).ok().and_then(|i| programs.programs.get(i)) {
                Some(p) => Start::Program(p.clone(), arg),
                None => Start::Bad(format!("no program at entry {k}")),
            },
        };
        let co = Coroutine::with_stack(stack, move |y: &Yielder<(), Trap>, ()| {
            let mut ctx = UserCtx { yielder: y, buffer, thread: t, gate: &gate };
            let outcome = match start {
                Start::Root(f, info) => catch_unwind(AssertUnwindSafe(|| f(&mut ctx, &info))),
                Start::Program(f, arg) => catch_unwind(AssertUnwindSafe(|| f(&mut ctx, arg))),
                Start::Bad(why) => loop {
                    y.suspend(Trap::Fault(Box::new((FaultKind::Other, why.clone()))));
                },
            };
            let (kind, message) = match outcome {
                Ok(()) => (FaultKind::Other, "entry function returned".to_string()),
                Err(payload) => {
                    if TEARING_DOWN.with(Cell::get) {
                        resume_unwind(payload);
                    }
                    let recorded = USER_PANIC.with(|p| p.borrow_mut().take());
                    (FaultKind::UserPanic, recorded.unwrap_or_else(|| payload_message(&*payload)))
                }
            };
            loop {
                y.suspend(Trap::Fault(Box::new((kind, message.clone()))));
            }
        });
        Ok(Self { thread: t, co })
    }

    /// Run the thread until it traps.
    #[inline]
    pub(crate) fn resume(&mut self) -> Trap {
        IN_USER.with(|u| u.set(true));
        let r = self.co.resume(());
        IN_USER.with(|u| u.set(false));
        match r {
            CoroutineResult::Yield(trap) => trap,
            // The body never returns (it loops yielding its fault).
            CoroutineResult::Return(()) => finished(),
        }
    }
}

/// The trap of a context whose body returned (which it never does); cold,
/// so that `resume`, on every system call's path, stays small.
#[cold]
#[inline(never)]
fn finished() -> Trap {
    Trap::Fault(Box::new((FaultKind::Other, "context finished".into())))
}

impl Drop for UserContext {
    fn drop(&mut self) {
        // Unwind the stack now, marked as tear-down, instead of in the
        // coroutine's own Drop (which would not set the flag).
        tearing_down(|| self.co.force_unwind());
    }
}
