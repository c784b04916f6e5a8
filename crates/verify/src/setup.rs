//! Booting a kernel for a program and building its objects, as the root
//! thread on core 0, before any other core runs.
//!
//! The root CNode is every thread's CSpace. Its slots after the boot
//! capabilities are laid out at fixed offsets ([`Layout`]), so the same
//! program has the same capability pointers on every kernel: the run under
//! test, the sequential oracle, and every regime. Setup objects come from
//! the first untyped; programs retype from the second.
//!
//! The root thread (top priority, core 0) stays after setup as the
//! *rescuer*: it parks on a private notification that an interrupt line
//! (the *park line*) signals. The driver raises that line when every core is
//! idle while threads are still blocked, and the root then does a round of
//! non-blocking receives and sends on every endpoint and signals every
//! notification (see `driver.rs`); the oracle uses the same line to take
//! control back after each step it lets a thread make.

use granule_kernel::abi::{
    CapRights, InvocationLabel, ObjectType, CAP_FIRST_UNTYPED, CAP_INIT_CNODE, CAP_IRQ_CONTROL, NUM_IRQS,
};
use granule_kernel::{BootInfo, CoreHandle, Error, ExitPlan, Kernel, Regime, ThreadId, Word};

use crate::config;
use crate::encode::{self, Invocation};
use crate::program::{
    Program, FRAMES, MAX_ENDPOINTS, MAX_IRQ_LINES, MAX_NOTIFICATIONS, MAX_PROGRAM_PRIORITY, MAX_THREADS, SCRATCH_SLOTS,
};

/// Capability slots of the root CNode, at fixed offsets from the first free
/// slot so that they do not depend on the program's object counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    first: Word,
}

const EPS: Word = 0;
const NTFNS: Word = EPS + MAX_ENDPOINTS as Word;
const REPLIES: Word = NTFNS + MAX_NOTIFICATIONS as Word;
const TCBS: Word = REPLIES + MAX_THREADS as Word;
const HALTS: Word = TCBS + MAX_THREADS as Word;
const SIGNALS: Word = HALTS + MAX_THREADS as Word;
const HANDLERS: Word = SIGNALS + ((MAX_THREADS + 1) * MAX_NOTIFICATIONS) as Word;
const IRQ_CAPS: Word = HANDLERS + MAX_IRQ_LINES as Word + 1;
const SCRATCH: Word = IRQ_CAPS + MAX_IRQ_LINES as Word;
const PARK: Word = SCRATCH + SCRATCH_SLOTS as Word;
const FRAME_CAPS: Word = PARK + 1;
const END: Word = FRAME_CAPS + FRAMES as Word;

/// The interrupt line (past the programs' lines) that wakes the root.
pub const PARK_LINE: u8 = MAX_IRQ_LINES as u8;

impl Layout {
    /// Endpoint `k`.
    pub fn ep(&self, k: u8) -> Word {
        self.first + EPS + k as Word
    }
    /// Notification `k` (unbadged).
    pub fn ntfn(&self, k: u8) -> Word {
        self.first + NTFNS + k as Word
    }
    /// Thread `i`'s reply object.
    pub fn reply(&self, i: usize) -> Word {
        self.first + REPLIES + i as Word
    }
    /// Thread `i`'s TCB.
    pub fn tcb(&self, i: usize) -> Word {
        self.first + TCBS + i as Word
    }
    /// Thread `i`'s private notification, which it waits on when it halts.
    pub fn halt(&self, i: usize) -> Word {
        self.first + HALTS + i as Word
    }
    /// Thread `i`'s capability to notification `k`, badge `1 << i` (the
    /// root is thread `threads.len()`).
    pub fn signal(&self, i: usize, k: u8) -> Word {
        self.first + SIGNALS + (i * MAX_NOTIFICATIONS) as Word + k as Word
    }
    /// The handler of interrupt line `l` (`PARK_LINE`: the root's).
    pub fn irq_handler(&self, l: u8) -> Word {
        self.first + HANDLERS + l as Word
    }
    fn irq_cap(&self, l: usize) -> Word {
        self.first + IRQ_CAPS + l as Word
    }
    /// Scratch slot `j`.
    pub fn scratch(&self, j: u8) -> Word {
        self.first + SCRATCH + j as Word
    }
    /// Frame `k`'s original capability.
    pub fn frame(&self, k: u8) -> Word {
        self.first + FRAME_CAPS + k as Word
    }
    /// The root thread's private notification (it parks on it).
    pub fn park(&self) -> Word {
        self.first + PARK
    }
    /// The handler of the line that wakes the parked root.
    pub fn park_handler(&self) -> Word {
        self.irq_handler(PARK_LINE)
    }
    /// The untyped programs retype from.
    pub fn untyped(&self) -> Word {
        CAP_FIRST_UNTYPED + 1
    }
}

/// Badge of thread `i`'s signals.
pub fn signal_badge(i: usize) -> Word {
    1 << i
}

/// Badge of interrupt line `l`'s signals.
pub fn irq_badge(l: usize) -> Word {
    1 << (32 + l)
}

/// The interrupt number of device line `l` on a kernel booted as `boot`.
pub fn irq_of(boot: &BootInfo, l: usize) -> usize {
    boot.device_irq_base + l
}

/// The interrupt number of the park line.
pub fn park_irq(boot: &BootInfo) -> usize {
    irq_of(boot, PARK_LINE as usize)
}

/// Priority the oracle gives the one thread it lets run.
pub const ORACLE_RUN_PRIORITY: u8 = MAX_PROGRAM_PRIORITY + 54;
/// Priority of every other thread in the oracle.
pub const ORACLE_IDLE_PRIORITY: u8 = 1;

/// A booted kernel with a program's objects in place.
#[derive(Debug)]
pub struct Booted<R: Regime> {
    /// The kernel.
    pub kernel: Kernel<R>,
    /// What boot said.
    pub boot: BootInfo,
    /// Core handles (core 0's was used by setup).
    pub handles: Vec<CoreHandle>,
    /// Slot layout.
    pub layout: Layout,
    /// The program threads' ids, by thread index.
    pub threads: Vec<ThreadId>,
    /// The root thread.
    pub root: ThreadId,
    /// Core 0's plan after setup.
    pub plan: ExitPlan,
}

/// The root thread acting on core 0 during setup.
struct Root<'a, R: Regime> {
    k: &'a Kernel<R>,
    h: &'a mut CoreHandle,
    me: ThreadId,
    plan: ExitPlan,
}

impl<R: Regime> Root<'_, R> {
    fn invoke(&mut self, cptr: Word, inv: Invocation) -> Result<(), String> {
        match invoke(self.k, self.h, self.me, cptr, inv.label, inv.args())? {
            Ok(p) => {
                self.plan = p;
                Ok(())
            }
            Err(e) => Err(format!("setup: {:?} on slot {cptr}: {e}", inv.label)),
        }
    }
}

/// The thread `me`, current on `h`'s core at top priority, invokes `cptr`.
/// The outer error says the kernel did not keep `me` running or asked for a
/// restart (neither may happen on one core); the inner one is the
/// invocation's result.
pub fn invoke<R: Regime>(
    k: &Kernel<R>,
    h: &mut CoreHandle,
    me: ThreadId,
    cptr: Word,
    label: InvocationLabel,
    args: &[Word],
) -> Result<Result<ExitPlan, Error>, String> {
    let p = k.ipc_buffer(me);
    // SAFETY: `me` is the thread core `h` runs (its last plan said so) and no
    // kernel entry of that core is in progress; the reference ends here.
    let regs = encode::invoke(unsafe { &mut *p }, cptr, label, args);
    let plan = k.syscall(h, regs);
    if plan.run != Some(me) {
        return Err(format!("{label:?} by {me:?}: the next plan runs {:?}, not the invoker", plan.run));
    }
    // SAFETY: as above: the plan runs `me` again on this core.
    match encode::result(unsafe { &*p }) {
        None => Err(format!("{label:?} by {me:?}: restarted on a core nobody else uses")),
        Some(r) => Ok(r.map(|_| plan)),
    }
}

/// Boot a kernel of `cores` cores under `regime` and build `prog`'s objects.
/// `oracle`: every thread on core 0 at [`ORACLE_IDLE_PRIORITY`]; otherwise
/// the threads get their program affinity and priority. Either way the
/// root is still core 0's current thread (the driver parks it).
pub fn boot<R: Regime>(prog: &Program, cores: usize, regime: R, oracle: bool) -> Result<Booted<R>, String> {
    let (kernel, boot, mut handles) =
        Kernel::boot(config::for_programs(cores, prog.policy), regime).map_err(|e| format!("boot: {e}"))?;
    let layout = Layout { first: boot.first_free_slot };
    assert!(layout.first + END <= boot.slots, "the layout fits the root CNode");
    assert!(park_irq(&boot) < NUM_IRQS);
    let me = boot.root_thread;
    let mut h0 = handles.remove(0);
    let first_plan = kernel.ipi(&mut h0);
    if first_plan.run != Some(me) {
        return Err(format!("boot: core 0 runs {:?}, not the root thread", first_plan.run));
    }
    let (threads, plan) = {
        let mut root = Root { k: &kernel, h: &mut h0, me, plan: first_plan };
        (build(&mut root, prog, &boot, layout, oracle)?, root.plan)
    };
    handles.insert(0, h0);
    Ok(Booted { kernel, boot, handles, layout, threads, root: me, plan })
}

fn build<R: Regime>(
    root: &mut Root<'_, R>,
    prog: &Program,
    boot: &BootInfo,
    l: Layout,
    oracle: bool,
) -> Result<Vec<ThreadId>, String> {
    let n = prog.threads.len();
    let retype = |root: &mut Root<'_, R>, ty: ObjectType, bits: Word, dest: Word, count: usize| {
        if count == 0 {
            return Ok(());
        }
        root.invoke(CAP_FIRST_UNTYPED, Invocation::retype(ty, bits, dest, count as Word))
    };
    retype(root, ObjectType::Endpoint, 0, l.ep(0), prog.endpoints)?;
    retype(root, ObjectType::Notification, 0, l.ntfn(0), prog.notifications)?;
    retype(root, ObjectType::Reply, 0, l.reply(0), n)?;
    retype(root, ObjectType::Tcb, 0, l.tcb(0), n)?;
    retype(root, ObjectType::Notification, 0, l.halt(0), n)?;
    retype(root, ObjectType::Notification, 0, l.park(), 1)?;
    retype(root, ObjectType::Frame, 12, l.frame(0), FRAMES)?;
    for i in 0..=n {
        for k in 0..prog.notifications as u8 {
            root.invoke(CAP_INIT_CNODE, Invocation::mint(l.signal(i, k), l.ntfn(k), CapRights::ALL, signal_badge(i)))?;
        }
    }
    for line in 0..prog.irq_lines {
        let irq = irq_of(boot, line) as Word;
        let h = l.irq_handler(line as u8);
        root.invoke(CAP_IRQ_CONTROL, Invocation::issue_irq_handler(irq, h))?;
        let k = (line % prog.notifications) as u8;
        root.invoke(CAP_INIT_CNODE, Invocation::mint(l.irq_cap(line), l.ntfn(k), CapRights::ALL, irq_badge(line)))?;
        root.invoke(h, Invocation::set_irq_handler(l.irq_cap(line)))?;
    }
    root.invoke(CAP_IRQ_CONTROL, Invocation::issue_irq_handler(park_irq(boot) as Word, l.park_handler()))?;
    root.invoke(l.park_handler(), Invocation::set_irq_handler(l.park()))?;
    let mut threads = Vec::with_capacity(n);
    for (i, t) in prog.threads.iter().enumerate() {
        let cap = l.tcb(i);
        root.invoke(cap, Invocation::configure(CAP_INIT_CNODE, 0))?;
        let prio = if oracle { ORACLE_IDLE_PRIORITY } else { t.prio };
        root.invoke(cap, Invocation::set_priority(prio as Word))?;
        if let Some(k) = t.fault_ep {
            root.invoke(cap, Invocation::set_fault_handler(l.ep(k)))?;
        }
        if let Some(k) = t.bound {
            root.invoke(cap, Invocation::bind_notification(l.ntfn(k)))?;
        }
        if !oracle && t.core != 0 {
            root.invoke(cap, Invocation::set_affinity(t.core as Word))?;
        }
        // The entry word is unused by this platform (the driver knows each
        // thread's program).
        root.invoke(cap, Invocation::start(0x1000 + i as Word, i as Word))?;
        let tid = root.k.thread_of_cap(root.h, root.me, cap).ok_or("setup: TCB capability names no thread")?;
        threads.push(tid);
    }
    Ok(threads)
}
