//! `granule serve`: the KV system of `granule_user::kv` on the kernel,
//! served to real Redis clients (redis-cli, redis-benchmark, client
//! libraries) over TCP on 127.0.0.1.
//!
//! ```text
//!  clients ─TCP─▶ far side (mio, core 0 idle) ─rx ring/IRQ─▶ driver (core 0) ─▶ stack ─▶ KV server
//!  clients ◀─TCP─ far side ◀──── tx ring/doorbell ─────── driver ◀────────── stack ◀─ KV server
//! ```
//!
//! One machine boots under one regime; the root task builds the system in
//! external mode (no load clients): the driver on core 0 and, per server
//! core, a KV server with its network stack. KV server `i` listens on
//! `--port + i`. The far side ([`tcp`]) is the card's cable, moving bytes
//! between sockets and packets (one connection = one 16-bit id, [`ids`];
//! its state, [`conn`]). It polls its sockets from core 0's idle loop
//! ([`polled`]): a request is read, delivered and served on one OS thread,
//! with no sleep and wake-up between the socket and the kernel.
//!
//! **CPUs.** The default is one core: driver, stack and server share core
//! 0, leaving this machine's other CPUs to the clients. Every machine core
//! is an OS thread pinned to a CPU of its own, so on a two-CPU machine
//! `--cores 2` (driver on core 0, server on core 1) leaves redis-benchmark
//! no CPU of its own, and it measured slower than one core there.
//! `--cores N` needs N CPUs. The far side runs on core 0, beside the driver
//! (the seeds' network processor shared core 0 too). Core 0 never spins: when
//! idle it waits in the loop's one `epoll_wait`. The server cores spin only
//! briefly in their idle loop before they sleep ([`IDLE_SPIN_CYCLES`]),
//! leaving the CPU to the clients.
//!
//! **Lifetime.** Ctrl-C, SIGTERM (or `--seconds`) stops accepting, closes every
//! socket, shuts the machine down and prints the totals: connections,
//! commands, bytes each way, uptime and each core's utilisation (from its
//! idle loop's cycle count). A fault of a user thread stops the server with
//! an error.

mod conn;
mod ids;
mod polled;
mod tcp;

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::Ordering;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use clap::Args as ClapArgs;
use granule_hosted::granule_kernel::abi::MAX_CORES;
use granule_hosted::granule_kernel::{Kernel, Regime};
use granule_hosted::nic::FarSide;
use granule_hosted::MachineConfig;
use granule_user::kv::{boot, KvSample};
use granule_user::kv::{KvConfig, KvMachine, Mode};
use mio::net::TcpListener;
use mio::{Poll, Waker};

use self::polled::Polled;
use self::tcp::{Cable, Loop, Totals};
use crate::regimes::{unavailable, with_regime, Experiment, Probe, REGIMES};

/// Options of `granule serve`.
#[derive(Clone, Debug, ClapArgs)]
pub struct Args {
    /// The kernel's regime (`none` cannot run the KV system: its cores share
    /// the driver's notifications).
    #[arg(long, default_value = "bkl", value_parser = crate::regimes::parser(crate::regimes::REGIMES, &["none"], false))]
    pub regime: String,
    /// Cores of the machine: 1 runs driver, stack and KV server on core 0
    /// and leaves the other CPUs to the clients; N ≥ 2 puts the driver on
    /// core 0 and one KV server on each other core (N − 1 servers: `--cores
    /// 2` starts one, on core 1). At most the CPUs this process may use.
    #[arg(long, default_value_t = 1, value_parser = crate::bounds::int::<usize>(1, MAX_CORES as u64))]
    pub cores: usize,
    /// Port of KV server 0, 1..=65535; server i listens on port + i
    /// (127.0.0.1 only).
    #[arg(long, default_value_t = 6379, value_parser = crate::bounds::int::<u16>(1, 65535))]
    pub port: u16,
    /// Largest request a server accepts, in bytes (64 to 512 MiB).
    #[arg(long, default_value_t = 64 << 20, value_parser = crate::bounds::int::<usize>(MIN_REQUEST, MAX_REQUEST))]
    pub max_request: usize,
    /// Most clients connected at once, 1..=65000; more are refused.
    #[arg(long, default_value_t = 10_000, value_parser = crate::bounds::int::<usize>(1, MAX_CLIENTS))]
    pub max_clients: usize,
    /// Stop by itself after this many seconds (0 < s ≤ a year; default: at
    /// Ctrl-C or SIGTERM).
    #[arg(long, value_parser = crate::bounds::real(crate::bounds::Low::Open(0.0), MAX_SECONDS, "a number of seconds"))]
    pub seconds: Option<f64>,
}

/// Largest `--max-request`: Redis's largest bulk string.
const MAX_REQUEST: u64 = 512 << 20;
/// Smallest `--max-request`.
const MIN_REQUEST: u64 = 64;
/// Most `--max-clients` (ids are 1024..=65000).
const MAX_CLIENTS: u64 = 65_000;
/// Longest `--seconds`: a year.
const MAX_SECONDS: f64 = 365.0 * 24.0 * 3600.0;
/// Cycles an idle server core spins before it sleeps (the platform's
/// default is 200 000; core 0, with the far side, does not spin). The
/// clients need CPUs too, and a core spinning for its next interrupt takes
/// its CPU from them: with redis-benchmark on a two-CPU machine the default
/// spin halved the throughput and made it erratic, while 10 000 cycles (a
/// few microseconds) costs one futex wake-up per interrupt that finds the
/// core asleep.
const IDLE_SPIN_CYCLES: u64 = 10_000;
/// How long the root task may take to build the system.
const BUILD_TIMEOUT: Duration = Duration::from_secs(60);
/// How often the waiting thread looks for faults.
const WATCH: Duration = Duration::from_millis(100);

/// The validated options.
#[derive(Clone, Debug)]
struct Settings {
    regime: &'static str,
    cores: usize,
    port: u16,
    max_request: usize,
    max_clients: usize,
    seconds: Option<Duration>,
}

impl Settings {
    /// `a` checked, for a process that may use `cpus` CPUs.
    fn new(a: &Args, cpus: usize) -> Result<Self> {
        let name = a.regime.trim();
        let Some(&regime) = REGIMES.iter().find(|r| **r == name) else {
            bail!("unknown regime `{name}`; known regimes: {}", REGIMES[1..].join(", "));
        };
        if regime == "none" {
            bail!(
                "regime none cannot serve: it is only sound when cores touch disjoint objects, and the KV system's \
                 cores share the driver's notifications"
            );
        }
        if let Some(why) = unavailable(regime) {
            bail!("regime {regime} is unavailable on this machine: {why}");
        }
        if a.cores > cpus {
            bail!("--cores must be 1..={cpus} (the CPUs this process may use)");
        }
        let servers = servers(a.cores);
        let last = usize::from(a.port) + servers - 1;
        if last > 65535 {
            bail!("--port {} with {servers} KV servers needs ports up to {last}; the last port is 65535", a.port);
        }
        // The rest is bounded by the options' parsers.
        Ok(Self {
            regime,
            cores: a.cores,
            port: a.port,
            max_request: a.max_request,
            max_clients: a.max_clients,
            seconds: a.seconds.map(Duration::from_secs_f64),
        })
    }
}

/// KV servers of a machine of `cores` cores (one per core but the driver's,
/// or one on core 0 alone).
fn servers(cores: usize) -> usize {
    KvConfig::new(cores, Mode::External).server_cores().len()
}

/// Run `granule serve`.
pub fn run(a: &Args) -> Result<()> {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let s = Settings::new(a, cpus)?;
    let mut listeners = Vec::new();
    for i in 0..servers(s.cores) {
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, s.port + i as u16));
        listeners.push(TcpListener::bind(addr).with_context(|| format!("cannot listen on {addr}"))?);
    }
    let poll = Poll::new().context("creating the event loop")?;
    let waker = Waker::new(poll.registry(), tcp::WAKER).context("creating the event loop's waker")?;
    let cable = Arc::new(Cable::new(waker));
    let far = Arc::new(Polled::new(cable.clone()));
    let stop = signals()?;
    let mut machine = MachineConfig::new(s.cores);
    machine.shutdown_timeout = Duration::from_secs(5);
    machine.idle_spin_cycles = IDLE_SPIN_CYCLES;
    // The far side polls from the driver's core, between requests.
    machine.idle_work = Some((0, far.clone()));
    let boot_cfg = machine.kernel.clone();
    let regime = s.regime;
    with_regime(regime, &boot_cfg, false, Serve { s, machine, poll, listeners, cable, far, stop })
}

/// A channel that receives the name of each SIGINT (Ctrl-C) or SIGTERM; a
/// second one while the first is being handled ends the process at once.
fn signals() -> Result<Receiver<&'static str>> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let (tx, rx) = mpsc::channel();
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]).context("installing signal handlers")?;
    std::thread::Builder::new()
        .name("serve-signals".into())
        .spawn(move || {
            let mut fired = false;
            for signal in signals.forever() {
                let name = if signal == SIGTERM { "SIGTERM" } else { "Ctrl-C" };
                if std::mem::replace(&mut fired, true) {
                    eprintln!("granule serve: {name} again, exiting now");
                    std::process::exit(128 + signal);
                }
                let _ = tx.send(name);
            }
        })
        .context("starting the signal thread")?;
    Ok(rx)
}

/// Why serving ended.
#[derive(Clone, Debug, PartialEq, Eq)]
enum End {
    /// Ctrl-C (SIGINT) or SIGTERM: the signal's name.
    Interrupted(&'static str),
    /// `--seconds` passed.
    Deadline,
    /// A user thread faulted (the reason).
    Fault(String),
    /// The far side's loop stopped by itself.
    LoopEnded,
}

struct Serve {
    s: Settings,
    machine: MachineConfig,
    poll: Poll,
    listeners: Vec<TcpListener>,
    cable: Arc<Cable>,
    far: Arc<Polled>,
    stop: Receiver<&'static str>,
}

impl Experiment for Serve {
    type Out = ();
    // The driver on core 0 signals the stacks' notifications on every core
    // and they signal its own: cores share objects.
    const DISJOINT: bool = false;

    fn run<R: Regime>(self, regime: R, _probe: &dyn Fn(&Kernel<R>) -> Option<Probe>) -> Result<()> {
        let Serve { s, machine, poll, listeners, cable, far, stop } = self;
        let config = KvConfig {
            mode: Mode::External,
            cores: s.cores,
            base_port: s.port,
            max_request: s.max_request,
            ..KvConfig::new(s.cores, Mode::External)
        };
        let side: Arc<dyn FarSide> = far.clone();
        let m = boot(machine, regime, config, Some(side)).map_err(|e| anyhow!("booting the machine: {e}"))?;
        let served = serve(&s, &m, poll, listeners, &cable, &far, &stop);
        let faults = m.shutdown().map_err(|e| anyhow!("shutting the machine down: {e}"))?;
        let (end, report) = served?;
        say(&report);
        match end {
            End::Fault(why) => bail!("{why}"),
            End::LoopEnded => bail!("the TCP event loop stopped unexpectedly"),
            End::Interrupted(_) | End::Deadline => {}
        }
        if let Some(f) = faults.first() {
            bail!("user thread {:?} on core {} faulted: {}", f.thread, f.core, f.message);
        }
        Ok(())
    }
}

/// Serve on the booted machine `m` until told to stop; returns why it
/// stopped and the totals to print (the caller shuts the machine down).
fn serve<R: Regime>(
    s: &Settings,
    m: &KvMachine<R>,
    poll: Poll,
    listeners: Vec<TcpListener>,
    cable: &Arc<Cable>,
    far: &Polled,
    stop: &Receiver<&'static str>,
) -> Result<(End, String)> {
    m.wait_loaded(BUILD_TIMEOUT).map_err(|e| anyhow!(e))?;
    let pool = m.kv.pool.get().cloned().ok_or_else(|| anyhow!("the root task built no packet pool"))?;
    let lp = Loop::new(poll, listeners, cable.clone(), pool, m.kv.clone(), s.port, s.max_clients)
        .context("registering the listeners")?;
    far.start(lp);
    for (i, st) in m.kv.servers.iter().enumerate() {
        let mut store = st.store.lock().unwrap_or_else(|e| e.into_inner());
        let info = store.server_info_mut();
        info.process_id = Some(std::process::id());
        info.tcp_port = Some(s.port + i as u16);
        info.started_ms = Some(m.kv.now_ms());
        info.max_clients = Some(s.max_clients as u64);
        info.extra = vec![("granule_regime".into(), s.regime.into()), ("granule_cores".into(), s.cores.to_string())];
    }
    let s0 = m.sample();
    let t0 = Instant::now();
    say(&banner(s));
    let end = wait(m, stop, s.seconds, far);
    let s1 = m.sample();
    let uptime = t0.elapsed();
    let totals = far.finish().unwrap_or_default();
    let commands: u64 =
        m.kv.servers
            .iter()
            .map(|st| st.store.lock().unwrap_or_else(|e| e.into_inner()).stats().commands_processed)
            .sum();
    let batches: u64 = m.kv.servers.iter().map(|st| st.batches.load(Ordering::Relaxed)).sum();
    Ok((end.clone(), report(s, &end, uptime, &totals, commands, batches, &s0, &s1)))
}

/// The startup line.
fn banner(s: &Settings) -> String {
    let servers = KvConfig::new(s.cores, Mode::External).server_cores();
    let on: Vec<String> = servers
        .iter()
        .enumerate()
        .map(|(i, core)| format!("KV server {i} (core {core}) on 127.0.0.1:{}", s.port + i as u16))
        .collect();
    format!("granule serve: {}, {}; {}; Ctrl-C to stop", s.regime, cores(s.cores), on.join(", "))
}

/// Print a line on standard output; a reader that went away (`| head`)
/// does not stop the server.
fn say(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{text}").and_then(|()| out.flush());
}

/// "1 core", "2 cores".
fn cores(n: usize) -> String {
    if n == 1 {
        "1 core".into()
    } else {
        format!("{n} cores")
    }
}

/// Wait for a signal, the deadline, a fault or the loop's failure.
fn wait<R: Regime>(m: &KvMachine<R>, stop: &Receiver<&'static str>, seconds: Option<Duration>, far: &Polled) -> End {
    let deadline = seconds.map(|d| Instant::now() + d);
    loop {
        let step = deadline.map_or(WATCH, |d| d.saturating_duration_since(Instant::now()).min(WATCH));
        match stop.recv_timeout(step) {
            Ok(name) => return End::Interrupted(name),
            Err(RecvTimeoutError::Timeout) => {}
            // The signal thread owns the sender for the process's life.
            Err(RecvTimeoutError::Disconnected) => std::thread::sleep(step),
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return End::Deadline;
        }
        if let Some(f) = m.faults().first() {
            return End::Fault(format!("user thread {:?} on core {} faulted: {}", f.thread, f.core, f.message));
        }
        if far.failed().is_some() {
            return End::LoopEnded;
        }
    }
}

/// The totals printed at the end.
#[allow(clippy::too_many_arguments)]
fn report(
    s: &Settings,
    end: &End,
    uptime: Duration,
    t: &Totals,
    commands: u64,
    batches: u64,
    s0: &KvSample,
    s1: &KvSample,
) -> String {
    let why = match end {
        End::Interrupted(name) => name,
        End::Deadline => "--seconds",
        End::Fault(_) => "a fault",
        End::LoopEnded => "the TCP event loop's end",
    };
    let secs = uptime.as_secs_f64();
    let rate = |n: u64| if secs > 0.0 { n as f64 / secs } else { 0.0 };
    let mut out = format!("granule serve: stopped by {why} after {secs:.1} s ({}, {})\n", s.regime, cores(s.cores));
    out.push_str(&format!(
        "  connections  {} accepted, {} refused, at most {} open at once, {} clients connected at stop{}\n",
        t.accepted,
        t.refused,
        t.peak,
        t.open_at_stop,
        if t.accept_errors > 0 { format!(", {} failed accepts", t.accept_errors) } else { String::new() }
    ));
    out.push_str(&format!("  commands     {commands} ({:.0}/s) in {batches} server batches\n", rate(commands)));
    out.push_str(&format!(
        "  bytes        {} in ({:.1} MB/s), {} out ({:.1} MB/s)\n",
        t.bytes_in,
        rate(t.bytes_in) / 1e6,
        t.bytes_out,
        rate(t.bytes_out) / 1e6
    ));
    out.push_str(&format!(
        "  packets      {} in, {} out, {} for closed connections; {} reply bytes for closed connections\n",
        t.packets_in, t.packets_out, t.orphans, t.unwritten
    ));
    out.push_str(&format!("  event loop   {} polls, {} doorbell wake-ups\n", t.polls, t.wakeups));
    let servers = KvConfig::new(s.cores, Mode::External).server_cores();
    let dt = s1.cycles.saturating_sub(s0.cycles).max(1) as f64;
    for core in 0..s0.idle.len().min(s1.idle.len()) {
        let idle = s1.idle[core].saturating_sub(s0.idle[core]) as f64;
        let busy = (1.0 - idle / dt).clamp(0.0, 1.0) * 100.0;
        let mut roles: Vec<String> = Vec::new();
        if core == 0 {
            roles.push("driver".into());
        }
        roles.extend(servers.iter().enumerate().filter(|(_, &c)| c == core).map(|(i, _)| format!("KV server {i}")));
        let label = format!("core {core}");
        out.push_str(&format!("  {label:<12} {busy:.1} % busy ({})\n", roles.join(", ")));
    }
    out.trim_end().to_string()
}
