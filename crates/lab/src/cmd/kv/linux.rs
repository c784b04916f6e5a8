//! `granule kv --linux`: the seeds' Linux line — real `redis-server` on
//! Linux, driven by the same YCSB clients as the kernel's KV system
//! (`granule_user::kv::client`), over loopback TCP.
//!
//! **Layout.** The kernel's layout, process for process: one `redis-server`
//! per server core (`KvConfig::server_cores`: cores 1.., or core 0 alone),
//! each listening on its own free port of 127.0.0.1 (never 6379, which a user
//! may be running), without persistence (`--save "" --appendonly no`), and
//! beside each `clients_per_server` client threads, each with one blocking
//! TCP connection (`TCP_NODELAY`). Core `i` is the `i`-th CPU this process
//! may run on; the clients are pinned to their server's CPU, and so is the
//! server when `taskset` is installed (`servers_pinned`), so that all the
//! work stays on the `cores` CPUs whose utilisation is reported.
//!
//! **Protocol.** As on the kernel: a server's clients split its load phase
//! (`Generator::new(&ycsb, me, clients_per_server)`), wait until every client
//! has loaded, warm up for `warmup`, then are measured over `window` — or,
//! with `ops_per_client`, until every client ran that many run-phase
//! operations (warm-up included, as on the kernel), the rate taken up to the
//! last client's finish. Each operation is a [`Transaction`] whose commands
//! go out one at a time, each after the previous reply, timed from its first
//! request to its last reply with the cycle counter (converted with the
//! calibrated TSC frequency, as the kernel's records are). A reply that fails
//! the transaction's checks counts in `failed`; a connection that closes,
//! stalls for [`IO_TIMEOUT`] or sends bytes that are not RESP ends the point
//! with an error.
//!
//! **Utilisation.** The busy fraction of each of the `cores` CPUs over the
//! window, from `/proc/stat`: every jiffy but idle and iowait, so user code,
//! the kernel, interrupts and softirqs (where loopback's network stack runs)
//! and steal — the comparable of the kernel's idle-loop utilisation, at the
//! jiffy's resolution. It counts whatever else the machine runs on those
//! CPUs; `process_utilisation` does not: the CPU time charged over the window
//! to the `redis-server` processes (`server_cpu_s`, user + system, from their
//! process CPU-time clocks in nanoseconds, `cpu_time.rs`) and to this
//! process's clients (`client_cpu_s`, the same way), over the
//! window times the CPUs. Loopback's softirqs mostly run in the sending
//! thread's system call and are charged to it. `requests_per_server_cpu_s`
//! is the commands per second of server CPU time.
//!
//! The servers are child processes killed and reaped on every way out of
//! [`measure`] (a drop guard); a terminal's Ctrl-C reaches them too (they
//! share its process group). Only a `SIGKILL` of this process leaves them
//! running.

use std::borrow::Cow;
use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use crossbeam_utils::CachePadded;
use granule_user::kv::system::new_histogram;
use granule_user::kv::KvConfig;
use granule_user::ycsb::drive::{self, DriveError};
use granule_user::ycsb::{Generator, Op};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use super::cpu_time::CpuClock;
use super::record::LoadFigures;

/// Environment variable naming the `redis-server` to run instead of the one
/// on `PATH`.
const REDIS_SERVER_ENV: &str = "GRANULE_REDIS_SERVER";
/// Longest a server may take to answer `PING` after it is started.
const READY_TIMEOUT: Duration = Duration::from_secs(5);
/// Longest a client waits for a connection, a write or a reply.
const IO_TIMEOUT: Duration = Duration::from_secs(5);
/// Longest the load phase may take, plus [`LOAD_PER_RECORD`] per record.
const LOAD_TIMEOUT: Duration = Duration::from_secs(120);
/// See [`LOAD_TIMEOUT`].
const LOAD_PER_RECORD: Duration = Duration::from_micros(100);
/// Longest a fixed-operation run may take (as `granule kv` allows the kernel).
const OPS_DEADLINE: Duration = Duration::from_secs(3600);
/// Ports tried per server when the one picked is taken before it binds.
const PORT_ATTEMPTS: usize = 3;
/// Largest reply a client accepts, in bytes (as the kernel's clients).
const MAX_REPLY: usize = 64 << 20;
/// Linux's `USER_HZ`: the unit of `/proc/<pid>/stat` times (100 on every
/// architecture this project runs on).
pub(crate) const USER_HZ: f64 = 100.0;
/// How often waiting threads look at the shared state.
const POLL: Duration = Duration::from_millis(1);

/// The `redis-server` to run: `$GRANULE_REDIS_SERVER`, or `redis-server` on
/// `PATH`, checked by running it with `--version`. The error is one line
/// saying what is missing and how to get it.
pub fn redis_server() -> Result<PathBuf, String> {
    let path = match std::env::var_os(REDIS_SERVER_ENV) {
        Some(p) if !p.is_empty() => {
            let p = PathBuf::from(p);
            if p.components().count() == 1 {
                on_path(&p).ok_or_else(|| {
                    format!(
                        "{REDIS_SERVER_ENV}={} is not on PATH; install redis-server (Debian/Ubuntu: `apt-get install \
                         redis-server`)",
                        p.display()
                    )
                })?
            } else {
                p
            }
        }
        _ => on_path(Path::new("redis-server")).ok_or_else(|| {
            format!(
                "redis-server is not installed (not on PATH, and {REDIS_SERVER_ENV} is unset); install it \
                 (Debian/Ubuntu: `apt-get install redis-server`) or set {REDIS_SERVER_ENV} to its path"
            )
        })?,
    };
    version(&path)?;
    Ok(path)
}

/// The first executable file called `name` in a directory of `PATH`.
pub(crate) fn on_path(name: &Path) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let dirs = std::env::var_os("PATH")?;
    std::env::split_paths(&dirs)
        .map(|d| d.join(name))
        .find(|p| p.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0))
}

/// The version `redis-server --version` reports (`Redis server v=7.0.15
/// sha=…` → `7.0.15`).
pub(crate) fn version(path: &Path) -> Result<String, String> {
    let out = Command::new(path).arg("--version").stdin(Stdio::null()).stderr(Stdio::null()).output().map_err(|e| {
        format!(
            "{} does not run ({e}); install redis-server (Debian/Ubuntu: `apt-get install redis-server`)",
            path.display()
        )
    })?;
    let text = String::from_utf8_lossy(&out.stdout);
    let v = text.split_whitespace().find_map(|w| w.strip_prefix("v="));
    match v {
        Some(v) if out.status.success() => Ok(v.to_string()),
        _ => Err(format!(
            "{} --version did not report a Redis server version ({}: {:?})",
            path.display(),
            out.status,
            text.lines().next().unwrap_or("").trim()
        )),
    }
}

/// One running `redis-server`.
#[derive(Debug)]
struct Server {
    child: Child,
    port: u16,
    /// How its CPU time is read, chosen once at its start.
    cpu: CpuClock,
}

/// The servers of one point: killed and reaped when dropped.
#[derive(Debug, Default)]
struct Servers(Vec<Server>);

impl Drop for Servers {
    fn drop(&mut self) {
        for s in &mut self.0 {
            let _ = s.child.kill();
            let _ = s.child.wait();
        }
    }
}

/// A port of 127.0.0.1 nobody listens on now, other than 6379 and `taken`.
pub(crate) fn free_port(taken: &[u16]) -> Result<u16> {
    for _ in 0..16 {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).context("binding a port of 127.0.0.1")?;
        let port = listener.local_addr().context("the bound port")?.port();
        if port != 6379 && !taken.contains(&port) {
            return Ok(port);
        }
    }
    bail!("found no free port on 127.0.0.1")
}

/// `taskset`, if it is installed and may pin to `cpu`.
pub(crate) fn taskset(cpu: usize) -> Option<PathBuf> {
    let t = on_path(Path::new("taskset"))?;
    let ok = Command::new(&t)
        .args(["-c", &cpu.to_string(), "true"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    ok.then_some(t)
}

/// Start a `redis-server` (through `taskset -c cpu`, which execs it, when
/// given) on a free port and wait until it answers `PING`; a server that
/// exits at once (its port taken meanwhile) is retried on another port.
fn start(servers: &mut Servers, redis: &Path, pin: Option<(&Path, usize)>) -> Result<()> {
    let mut last = String::new();
    for _ in 0..PORT_ATTEMPTS {
        let taken: Vec<u16> = servers.0.iter().map(|s| s.port).collect();
        let port = free_port(&taken)?;
        let mut cmd = match pin {
            Some((taskset, cpu)) => {
                let mut c = Command::new(taskset);
                c.arg("-c").arg(cpu.to_string()).arg(redis);
                c
            }
            None => Command::new(redis),
        };
        cmd.arg("--port")
            .arg(port.to_string())
            .args(["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .args(["--daemonize", "no", "--protected-mode", "yes"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let child = cmd.spawn().with_context(|| format!("starting {}", redis.display()))?;
        let cpu = CpuClock::of(child.id());
        servers.0.push(Server { child, port, cpu });
        let Some(server) = servers.0.last_mut() else { unreachable!("pushed just now") };
        match wait_ready(server)? {
            Ok(()) => return Ok(()),
            Err(why) => {
                last = why;
                servers.0.pop();
            }
        }
    }
    bail!("redis-server did not start on 127.0.0.1 after {PORT_ATTEMPTS} ports: {last}")
}

/// Wait until `server` answers `PING`: `Ok(Err(why))` if it exited (retry
/// elsewhere), an error if it still runs but did not answer in time.
fn wait_ready(server: &mut Server) -> Result<Result<(), String>> {
    let t0 = Instant::now();
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, server.port));
    loop {
        if let Some(status) = server.child.try_wait().context("polling redis-server")? {
            return Ok(Err(format!("it exited ({status}) on port {}", server.port)));
        }
        if ping(&addr).is_ok() {
            return Ok(Ok(()));
        }
        if t0.elapsed() > READY_TIMEOUT {
            bail!("redis-server on 127.0.0.1:{} did not answer PING within {READY_TIMEOUT:?}", server.port);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// One `PING`, answered `+PONG`.
pub(crate) fn ping(addr: &SocketAddr) -> io::Result<()> {
    let mut s = TcpStream::connect_timeout(addr, Duration::from_millis(100))?;
    s.set_read_timeout(Some(Duration::from_millis(500)))?;
    s.set_write_timeout(Some(Duration::from_millis(500)))?;
    s.write_all(b"*1\r\n$4\r\nPING\r\n")?;
    let mut reply = [0u8; 7];
    s.read_exact(&mut reply)?;
    if &reply == b"+PONG\r\n" {
        Ok(())
    } else {
        Err(io::Error::other("not +PONG"))
    }
}

/// One client's published counters.
#[derive(Debug, Default)]
struct ClientStats {
    /// Run-phase operations completed (warm-up included).
    ops: AtomicU64,
    /// Redis commands sent, load phase included.
    requests: AtomicU64,
    /// Operations whose replies failed the transaction's checks.
    failed: AtomicU64,
    /// Cycle counter when it finished `ops_per_client` operations.
    done_at: AtomicU64,
}

/// What the clients and the measuring thread share.
#[derive(Debug)]
struct Shared {
    clients: Vec<CachePadded<ClientStats>>,
    /// Clients still loading.
    loading: AtomicUsize,
    /// Clients that finished `ops_per_client` operations.
    done: AtomicUsize,
    /// The window is open: operations ending now are timed.
    measuring: AtomicBool,
    /// Stop now.
    stop: AtomicBool,
    /// The first client error (its I/O or the server's protocol).
    error: Mutex<Option<String>>,
    /// The first failed check of an operation.
    first_failure: Mutex<Option<String>>,
}

impl Shared {
    /// Record a client's error and stop every client.
    fn fail(&self, e: &anyhow::Error) {
        let mut slot = self.error.lock().unwrap_or_else(|p| p.into_inner());
        slot.get_or_insert_with(|| format!("{e:#}"));
        self.stop.store(true, Ordering::Release);
    }

    /// The first client error, as an error.
    fn check(&self) -> Result<()> {
        match &*self.error.lock().unwrap_or_else(|p| p.into_inner()) {
            Some(e) => Err(anyhow!("{e}")),
            None => Ok(()),
        }
    }

    fn sum(&self, f: fn(&ClientStats) -> &AtomicU64) -> u64 {
        self.clients.iter().map(|c| f(c).load(Ordering::Relaxed)).sum()
    }
}

/// A client's connection to its server.
struct Conn {
    stream: TcpStream,
    port: u16,
    out: Vec<u8>,
    /// Received bytes not parsed yet.
    inbuf: Vec<u8>,
    chunk: Box<[u8]>,
}

impl Conn {
    fn open(port: u16) -> Result<Self> {
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
        let stream = TcpStream::connect_timeout(&addr, IO_TIMEOUT)
            .with_context(|| format!("connecting to redis-server on 127.0.0.1:{port}"))?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(IO_TIMEOUT))?;
        stream.set_write_timeout(Some(IO_TIMEOUT))?;
        Ok(Self { stream, port, out: Vec::new(), inbuf: Vec::new(), chunk: vec![0; 64 << 10].into_boxed_slice() })
    }

    /// Run `op` to the end, counting its commands in `requests`; whether
    /// every reply passed its check (the first failure otherwise).
    fn transaction(&mut self, op: Op, requests: &AtomicU64) -> Result<Option<String>> {
        let Self { stream, port, out, inbuf, chunk } = self;
        let port = *port;
        let done = drive::run(
            op,
            out,
            inbuf,
            MAX_REPLY,
            |n| {
                requests.fetch_add(n as u64, Ordering::Relaxed);
            },
            |request, inbuf| {
                stream.write_all(request).map_err(|e| io_error("sending to", port, e))?;
                receive(stream, chunk, inbuf, port)
            },
        );
        match done {
            Ok(t) => Ok(t.failure().map(ToString::to_string)),
            Err(DriveError::Io(e)) => Err(e),
            Err(DriveError::Malformed(e)) => bail!("redis-server on port {port} sent a malformed reply: {e:?}"),
        }
    }
}

/// Append the next bytes the server on `port` sends to `inbuf`.
fn receive(stream: &mut TcpStream, chunk: &mut [u8], inbuf: &mut Vec<u8>, port: u16) -> Result<()> {
    loop {
        match stream.read(chunk) {
            Ok(0) => bail!("redis-server on port {port} closed the connection"),
            Ok(n) => {
                inbuf.extend_from_slice(&chunk[..n]);
                return Ok(());
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(io_error("receiving from", port, e)),
        }
    }
}

fn io_error(what: &str, port: u16, e: io::Error) -> anyhow::Error {
    if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) {
        anyhow!("{what} redis-server on port {port}: no progress within {IO_TIMEOUT:?}")
    } else {
        anyhow!("{what} redis-server on port {port}: {e}")
    }
}

/// Client `index`'s program: load its share, wait for the others, run
/// operations until stopped (or `ops_per_client` of them); the latency of
/// the operations that ended in the window, in cycles.
fn client(shared: &Shared, cfg: &KvConfig, index: usize, port: u16, cpu: Option<usize>) -> Result<Histogram<u64>> {
    if let Some(id) = cpu {
        core_affinity::set_for_current(core_affinity::CoreId { id });
    }
    let stats = &shared.clients[index];
    let mut conn = Conn::open(port)?;
    let peers = cfg.clients_per_server.max(1);
    let mut gen = Generator::new(&cfg.ycsb, index % peers, peers);
    let note = |failure: Option<String>| {
        if let Some(f) = failure {
            stats.failed.fetch_add(1, Ordering::Relaxed);
            shared.first_failure.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(f);
        }
    };
    let keys: Vec<u64> = gen.load_keys().collect();
    for k in keys {
        if shared.stop.load(Ordering::Relaxed) {
            return Ok(new_histogram());
        }
        let op = gen.insert_op(k);
        note(conn.transaction(op, &stats.requests)?);
    }
    shared.loading.fetch_sub(1, Ordering::AcqRel);
    while shared.loading.load(Ordering::Acquire) > 0 {
        if shared.stop.load(Ordering::Relaxed) {
            return Ok(new_histogram());
        }
        std::thread::sleep(POLL);
    }
    let mut latency = new_histogram();
    let mut n: u64 = 0;
    while !shared.stop.load(Ordering::Relaxed) {
        if cfg.ops_per_client.is_some_and(|limit| n >= limit) {
            stats.done_at.store(granule_sync::cycles::now(), Ordering::Relaxed);
            shared.done.fetch_add(1, Ordering::AcqRel);
            break;
        }
        let op = gen.next_op();
        let t0 = granule_sync::cycles::now();
        let failure = conn.transaction(op, &stats.requests)?;
        let dt = granule_sync::cycles::now().wrapping_sub(t0);
        note(failure);
        if shared.measuring.load(Ordering::Relaxed) {
            latency.record(dt.max(1)).context("recording a latency")?;
        }
        n += 1;
        stats.ops.store(n, Ordering::Relaxed);
    }
    Ok(latency)
}

/// Busy and total jiffies of every CPU, indexed by CPU number.
fn cpu_jiffies() -> Result<Vec<Option<(u64, u64)>>> {
    let text = std::fs::read_to_string("/proc/stat").context("reading /proc/stat")?;
    let mut out = Vec::new();
    for line in text.lines() {
        let mut words = line.split_whitespace();
        let Some(cpu) = words.next().and_then(|w| w.strip_prefix("cpu")).and_then(|n| n.parse::<usize>().ok()) else {
            continue;
        };
        // user nice system idle iowait irq softirq steal (guest time is
        // already counted in user and nice).
        let v: Vec<u64> = words.take(8).map(|w| w.parse().unwrap_or(0)).collect();
        let total: u64 = v.iter().sum();
        let idle = v.get(3).copied().unwrap_or(0) + v.get(4).copied().unwrap_or(0);
        if out.len() <= cpu {
            out.resize(cpu + 1, None);
        }
        out[cpu] = Some((total - idle, total));
    }
    Ok(out)
}

/// User plus system time of process `pid`, in `USER_HZ` ticks.
pub(crate) fn process_ticks(pid: u32) -> Result<u64> {
    // utime is the 14th field of the line, stime the 15th.
    stat_pair(&format!("/proc/{pid}/stat"), 14, "utime/stime")
}

/// User plus system time of this process's children that have exited and
/// been reaped (`cutime` + `cstime` of `/proc/self/stat`, what
/// `getrusage(RUSAGE_CHILDREN)` reports), in `USER_HZ` ticks.
pub(crate) fn reaped_children_ticks() -> Result<u64> {
    // cutime is the 16th field of the line, cstime the 17th.
    stat_pair("/proc/self/stat", 16, "cutime/cstime")
}

/// The sum of fields `first` and `first + 1` (numbered from 1, as in
/// proc(5)) of the `stat` file at `path`; `what` names them in the error.
fn stat_pair(path: &str, first: usize, what: &str) -> Result<u64> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {path}"))?;
    // Counted after the command name, which may hold spaces: the field
    // after its `)` is the 3rd (state).
    let rest = text.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let field = |n: usize| f.get(n - 3).and_then(|w| w.parse::<u64>().ok());
    field(first).zip(field(first + 1)).map(|(a, b)| a + b).ok_or_else(|| anyhow!("{path}: no {what}"))
}

/// Counters read at one end of the window.
#[derive(Debug)]
struct Sample {
    cycles: u64,
    ops: u64,
    requests: u64,
    jiffies: Vec<Option<(u64, u64)>>,
    /// CPU time of the servers, summed, and of this process (the
    /// clients), seconds ([`CpuClock`]).
    server_cpu_s: f64,
    client_cpu_s: f64,
}

/// The counters now; `clients` is this process's CPU-time clock.
fn sample(shared: &Shared, servers: &Servers, clients: CpuClock) -> Result<Sample> {
    let mut server_cpu_s = 0.0;
    for s in &servers.0 {
        server_cpu_s += s.cpu.read_s()?;
    }
    Ok(Sample {
        jiffies: cpu_jiffies()?,
        server_cpu_s,
        client_cpu_s: clients.read_s()?,
        cycles: granule_sync::cycles::now(),
        ops: shared.sum(|c| &c.ops),
        requests: shared.sum(|c| &c.requests),
    })
}

/// Sleep for `d`, ending early with the clients' first error.
fn sleep_checking(shared: &Shared, d: Duration) -> Result<()> {
    let t0 = Instant::now();
    while t0.elapsed() < d {
        shared.check()?;
        std::thread::sleep(POLL.min(d.saturating_sub(t0.elapsed())));
    }
    shared.check()
}

/// The window's two samples and when the last operation of a
/// fixed-operation run ended (cycles).
type Window = (Sample, Sample, u64);

/// Wait out the load phase and the warm-up, then measure the window.
fn drive(shared: &Shared, servers: &Servers, config: &KvConfig, warmup: Duration, window: Duration) -> Result<Window> {
    let load_timeout = LOAD_TIMEOUT + LOAD_PER_RECORD * u32::try_from(config.ycsb.record_count).unwrap_or(u32::MAX);
    let t0 = Instant::now();
    while shared.loading.load(Ordering::Acquire) > 0 {
        shared.check()?;
        if t0.elapsed() > load_timeout {
            bail!("the clients did not load {} records within {load_timeout:?}", config.ycsb.record_count);
        }
        std::thread::sleep(POLL);
    }
    sleep_checking(shared, warmup)?;
    // Each clock is chosen once, so both ends of the window read the same.
    let clients = CpuClock::of(std::process::id());
    let s0 = sample(shared, servers, clients)?;
    shared.measuring.store(true, Ordering::Release);
    match config.ops_per_client {
        Some(_) => {
            let t0 = Instant::now();
            while shared.done.load(Ordering::Acquire) < shared.clients.len() {
                shared.check()?;
                if t0.elapsed() > OPS_DEADLINE {
                    bail!("the clients did not finish their operations within {OPS_DEADLINE:?}");
                }
                std::thread::sleep(POLL);
            }
        }
        None => sleep_checking(shared, window)?,
    }
    let s1 = sample(shared, servers, clients)?;
    shared.measuring.store(false, Ordering::Release);
    let ops_end = match config.ops_per_client {
        Some(_) => shared.clients.iter().map(|c| c.done_at.load(Ordering::Relaxed)).max().unwrap_or(s1.cycles),
        None => s1.cycles,
    };
    Ok((s0, s1, ops_end))
}

/// Measure real Redis on `config`'s layout: servers started, loaded, warmed
/// up, measured, stopped. See the module documentation.
pub fn measure(path: &Path, config: &KvConfig, warmup: Duration, window: Duration, tsc_hz: f64) -> Result<LinuxPoint> {
    let redis_version = version(path).map_err(|e| anyhow!(e))?;
    // Core i runs on the i-th CPU of this process's affinity set.
    let affinity: Vec<usize> = crate::pin::cpus().into_iter().map(|c| c.id).collect();
    let cpu_of = |core: usize| (!affinity.is_empty()).then(|| affinity[core % affinity.len()]);
    let mut cpus: Vec<usize> = Vec::new();
    for core in 0..config.cores.max(1) {
        let cpu = cpu_of(core).unwrap_or(core);
        if !cpus.contains(&cpu) {
            cpus.push(cpu);
        }
    }
    let server_cores = config.server_cores();
    let mut servers = Servers::default();
    let mut pinned = true;
    for &core in &server_cores {
        let pin = cpu_of(core).and_then(|cpu| taskset(cpu).map(|t| (t, cpu)));
        pinned &= pin.is_some();
        start(&mut servers, path, pin.as_ref().map(|(t, cpu)| (t.as_path(), *cpu)))?;
    }
    let per_server = config.clients_per_server.max(1);
    let clients = server_cores.len() * per_server;
    let shared = Shared {
        clients: (0..clients).map(|_| CachePadded::new(ClientStats::default())).collect(),
        loading: AtomicUsize::new(clients),
        done: AtomicUsize::new(0),
        measuring: AtomicBool::new(false),
        stop: AtomicBool::new(false),
        error: Mutex::new(None),
        first_failure: Mutex::new(None),
    };
    let (measured, joined) = std::thread::scope(|s| {
        let handles: Vec<_> = (0..clients)
            .map(|i| {
                let server = i / per_server;
                let (shared, port, cpu) = (&shared, servers.0[server].port, cpu_of(server_cores[server]));
                s.spawn(move || {
                    let r = client(shared, config, i, port, cpu);
                    if let Err(e) = &r {
                        shared.fail(e);
                    }
                    r
                })
            })
            .collect();
        let measured = drive(&shared, &servers, config, warmup, window);
        shared.stop.store(true, Ordering::Release);
        let joined: Vec<_> = handles.into_iter().map(|h| h.join()).collect();
        (measured, joined)
    });
    drop(servers);
    let mut latency = new_histogram();
    for j in joined {
        match j {
            Ok(Ok(h)) => latency.add(&h).context("merging latency histograms")?,
            Ok(Err(e)) => return Err(e.context("a YCSB client")),
            Err(_) => bail!("a YCSB client thread panicked"),
        }
    }
    let (s0, s1, ops_end) = measured?;
    let ops = s1.ops - s0.ops;
    if ops == 0 {
        bail!("no operation completed in the window");
    }
    let window_s = s1.cycles.wrapping_sub(s0.cycles).max(1) as f64 / tsc_hz;
    let ops_window_s = ops_end.wrapping_sub(s0.cycles).max(1) as f64 / tsc_hz;
    let util: Vec<f64> = cpus
        .iter()
        .map(|&c| match (s0.jiffies.get(c).copied().flatten(), s1.jiffies.get(c).copied().flatten()) {
            (Some((b0, t0)), Some((b1, t1))) if t1 > t0 => (b1.saturating_sub(b0) as f64 / (t1 - t0) as f64).min(1.0),
            _ => 0.0,
        })
        .collect();
    let requests = s1.requests - s0.requests;
    let server_cpu_s = (s1.server_cpu_s - s0.server_cpu_s).max(0.0);
    let client_cpu_s = (s1.client_cpu_s - s0.client_cpu_s).max(0.0);
    Ok(LinuxPoint {
        regime: Cow::Borrowed("linux"),
        cores: config.cores,
        workload: config.ycsb.workload.to_string(),
        load: LoadFigures::new(window_s, ops_window_s, ops, requests, &latency, tsc_hz, &util),
        process_utilisation: (server_cpu_s + client_cpu_s) / (window_s * cpus.len().max(1) as f64),
        server_cpu_s,
        client_cpu_s,
        requests_per_server_cpu_s: (server_cpu_s > 0.0).then(|| requests as f64 / server_cpu_s),
        failed: shared.sum(|c| &c.failed),
        first_failure: shared.first_failure.into_inner().unwrap_or_else(|p| p.into_inner()),
        servers: server_cores.len(),
        clients,
        cpus: cpus.iter().map(ToString::to_string).collect::<Vec<_>>().join(" "),
        servers_pinned: pinned,
        redis_version,
    })
}

/// What one (cores, workload) point of real Redis on Linux measured: the
/// fields of a `kv_linux` record but its run ([`super::record::KvLinuxRecord`]);
/// those it shares with the kernel's `kv` record have the same names and
/// units.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
// A blank for the report's hand-made test records (`suite::records::testing`).
#[cfg_attr(test, derive(Default))]
pub struct LinuxPoint {
    /// Always "linux".
    pub regime: Cow<'static, str>,
    /// Cores of the layout (CPUs measured).
    pub cores: usize,
    /// YCSB workload.
    pub workload: String,
    /// Throughput, latency, utilisation (`/proc/stat` per CPU).
    #[serde(flatten)]
    pub load: LoadFigures,
    /// CPU time of the redis-server processes and the clients over the
    /// window times the CPUs: utilisation without other processes' work.
    pub process_utilisation: f64,
    /// CPU time charged to the redis-server processes in the window, seconds.
    pub server_cpu_s: f64,
    /// CPU time charged to the client threads (this process) in the window,
    /// seconds.
    pub client_cpu_s: f64,
    /// Redis commands per second of redis-server CPU time (none when no
    /// tick was charged).
    pub requests_per_server_cpu_s: Option<f64>,
    /// Failed operations over the whole run (must be 0).
    pub failed: u64,
    /// Why the first failed operation failed.
    pub first_failure: Option<String>,
    /// redis-server processes.
    pub servers: usize,
    /// Client threads.
    pub clients: usize,
    /// The Linux CPUs of cores 0.., space-separated.
    pub cpus: String,
    /// Every redis-server was pinned to its core's CPU (`taskset`).
    pub servers_pinned: bool,
    /// `redis-server --version`.
    pub redis_version: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::kv::record::KvLinuxRecord;
    use crate::output::Record;
    use granule_user::kv::Mode;

    #[test]
    fn proc_stat_parses() {
        let j = cpu_jiffies().expect("/proc/stat");
        assert!(j.iter().any(Option::is_some));
        assert!(process_ticks(std::process::id()).is_ok());
    }

    #[test]
    fn tiny_point_on_real_redis() {
        let path = match redis_server() {
            Ok(p) => p,
            Err(why) => {
                eprintln!("skipped: {why}");
                return;
            }
        };
        let mut config = KvConfig::new(1, Mode::Loopback);
        config.ycsb.record_count = 200;
        let r =
            measure(&path, &config, Duration::from_millis(50), Duration::from_millis(200), crate::machine::tsc_hz())
                .expect("a tiny point");
        assert!(r.load.ops > 0, "{r:?}");
        assert_eq!(r.failed, 0, "{r:?}");
        assert_eq!(r.servers, 1);
        let m = KvLinuxRecord { point: r, run: 1 }.to_map();
        let keys: Vec<&str> = m.keys().map(String::as_str).collect();
        assert_eq!(keys[..3], ["record", "regime", "cores"]);
        assert_eq!(keys.last(), Some(&"run"));
        assert_eq!(m["record"], "kv_linux");
    }
}
