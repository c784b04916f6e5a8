//! The two servers under test, each a child process on a free port of
//! 127.0.0.1 (never 6379): `granule serve` (this executable) and
//! `redis-server` without persistence. Each is ready when it answers
//! `PING` and reports its own process id (not another server's that took
//! the port first); one that exits because its port was taken meanwhile is
//! retried on another port.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use granule_user::resp::reply_len;

use super::child::{interrupted, last_line, Child, Stop};
use crate::cmd::kv::cpu_time::CpuClock;
use crate::cmd::kv::linux::{free_port, ping};

/// Ports tried per server when the one picked is taken before it binds.
const PORT_ATTEMPTS: usize = 3;
/// Longest `granule serve` may take to answer `PING` (it boots a machine
/// and builds the KV system first).
pub const GRANULE_READY: Duration = Duration::from_secs(60);
/// Longest `redis-server` may take to answer `PING`.
const REDIS_READY: Duration = Duration::from_secs(10);
/// How long `granule serve` may take to shut down after `SIGINT` (its own
/// machine shutdown is bounded by 5 s) before it is killed.
const GRANULE_STOP: Duration = Duration::from_secs(15);
/// How often a starting server is polled.
const POLL: Duration = Duration::from_millis(20);
/// How long one readiness check may wait to connect or for a reply.
const POLL_IO: Duration = Duration::from_millis(500);
/// The longest `INFO server` reply read.
const INFO_MAX: usize = 1 << 16;

/// Which server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `granule serve`.
    Granule,
    /// `redis-server`.
    Redis,
}

impl Kind {
    /// Its name in records.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Granule => "granule",
            Kind::Redis => "redis",
        }
    }
}

/// A running server that answered `PING`.
#[derive(Debug)]
pub struct Server {
    pub kind: Kind,
    pub port: u16,
    pub child: Child,
    /// How its CPU time is read.
    pub cpu: CpuClock,
}

/// Start `granule serve --regime regime` (this executable), stopping by
/// itself after `lifetime` should this process die without stopping it.
pub fn granule(regime: &str, lifetime: Duration, taken: &[u16]) -> Result<Server> {
    let exe = std::env::current_exe().context("locating this executable")?;
    let seconds = format!("{:.0}", lifetime.as_secs_f64().ceil());
    start(Kind::Granule, "granule serve", taken, GRANULE_READY, Stop::Interrupt(GRANULE_STOP), |port| {
        let mut c = Command::new(&exe);
        c.args(["serve", "--regime", regime, "--port", &port.to_string(), "--seconds", &seconds]);
        c
    })
}

/// Start `redis-server` (through `taskset -c cpu`, which execs it, when
/// `pin` is given) without persistence.
pub fn redis(path: &Path, pin: Option<(&Path, usize)>, taken: &[u16]) -> Result<Server> {
    start(Kind::Redis, "redis-server", taken, REDIS_READY, Stop::Kill, |port| {
        let mut c = match pin {
            Some((taskset, cpu)) => {
                let mut c = Command::new(taskset);
                c.arg("-c").arg(cpu.to_string()).arg(path);
                c
            }
            None => Command::new(path),
        };
        c.arg("--port").arg(port.to_string()).args(["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]).args([
            "--daemonize",
            "no",
            "--protected-mode",
            "yes",
        ]);
        c
    })
}

/// Start the server `command(port)` on a free port and wait until it
/// answers `PING` within `ready`.
fn start(
    kind: Kind,
    name: &str,
    taken: &[u16],
    ready: Duration,
    stop: Stop,
    command: impl Fn(u16) -> Command,
) -> Result<Server> {
    let mut last = String::new();
    for _ in 0..PORT_ATTEMPTS {
        let port = free_port(taken)?;
        // Redis logs to standard output: keep it for the error message.
        let mut child = Child::spawn(name, &mut command(port), kind == Kind::Redis, stop)?;
        match wait_ready(&mut child, port, ready)? {
            None => {
                let cpu = CpuClock::of(child.id());
                return Ok(Server { kind, port, child, cpu });
            }
            Some(Exit { why, port_taken: true }) => last = why,
            Some(Exit { why, .. }) => bail!("{name} did not start on 127.0.0.1:{port}: {why}"),
        }
    }
    bail!("{name} did not start on 127.0.0.1 after {PORT_ATTEMPTS} ports: {last}")
}

/// How a starting server exited.
#[derive(Debug)]
struct Exit {
    /// Its last words and exit status.
    why: String,
    /// Its port was taken (`EADDRINUSE`): worth another port.
    port_taken: bool,
}

/// Wait until the server on `port` answers `PING` and is `child` (its
/// `INFO server` reports the child's process id: a server another process
/// started on the same port meanwhile is not it): `None` when it does, how
/// it exited if it did; an error when it still runs after `ready`.
fn wait_ready(child: &mut Child, port: u16, ready: Duration) -> Result<Option<Exit>> {
    let t0 = Instant::now();
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    loop {
        if let Some(status) = child.exited()? {
            let (out, err) = child.output();
            let port_taken = out.contains("in use") || err.contains("in use");
            let line = last_line(if err.trim().is_empty() { &out } else { &err }).to_string();
            let why = if line.is_empty() { format!("it exited ({status})") } else { format!("{line} ({status})") };
            return Ok(Some(Exit { why, port_taken }));
        }
        if ping(&addr).is_ok() && reports_pid(&addr, child.id()) {
            return Ok(None);
        }
        if interrupted() {
            bail!("interrupted");
        }
        if t0.elapsed() > ready {
            bail!("{} on 127.0.0.1:{port} did not answer PING within {ready:?}", child.name());
        }
        std::thread::sleep(POLL);
    }
}

/// Whether the server on `addr` reports process id `pid` in `INFO server`
/// (both `redis-server` and `granule serve` do); false on any error.
fn reports_pid(addr: &SocketAddr, pid: u32) -> bool {
    let Ok(mut s) = TcpStream::connect_timeout(addr, POLL_IO) else { return false };
    if s.set_read_timeout(Some(POLL_IO)).is_err() || s.write_all(b"*2\r\n$4\r\nINFO\r\n$6\r\nserver\r\n").is_err() {
        return false;
    }
    let (mut got, mut buf) = (Vec::new(), [0u8; 4096]);
    while !matches!(reply_len(&got, INFO_MAX), Ok(Some(_))) {
        match s.read(&mut buf) {
            Ok(n) if n > 0 && got.len() + n <= INFO_MAX => got.extend_from_slice(&buf[..n]),
            _ => return false,
        }
    }
    let want = format!("process_id:{pid}");
    String::from_utf8_lossy(&got).lines().any(|l| l.trim() == want)
}
