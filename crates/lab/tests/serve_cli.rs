//! `granule serve` end to end: real Redis clients (the `redis` crate,
//! raw sockets, and `redis-cli` / `redis-benchmark` where installed) talk to
//! the KV system on the kernel over TCP on 127.0.0.1; Ctrl-C (SIGINT) stops
//! it cleanly. Behaviour only, never timings; every wait is bounded.

#[allow(dead_code)]
mod common;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use common::granule;

/// How long anything may take before a test fails.
const PATIENCE: Duration = Duration::from_secs(30);

/// A running `granule serve`.
struct Server {
    child: Option<Child>,
    port: u16,
    lines: Receiver<String>,
    banner: String,
}

/// A port nobody listens on now.
fn free_port() -> u16 {
    let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).expect("bind an ephemeral port");
    l.local_addr().expect("its address").port()
}

impl Server {
    /// Start `granule serve` on a free port (with `extra` options) and wait
    /// for its banner. The port is picked by binding port 0 and letting it
    /// go, so a test running beside this one may take it first: a server
    /// that exits before its banner is started again on another port.
    fn start(extra: &[&str]) -> Server {
        const ATTEMPTS: usize = 3;
        for _ in 0..ATTEMPTS {
            let port = free_port();
            let p = port.to_string();
            let mut args = vec!["serve", "--port", &p, "--seconds", "60"];
            args.extend_from_slice(extra);
            let mut child = Command::new(env!("CARGO_BIN_EXE_granule"))
                .args(&args)
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit())
                .spawn()
                .expect("start granule serve");
            let out = child.stdout.take().expect("its stdout");
            let (tx, lines) = mpsc::channel();
            std::thread::spawn(move || {
                for line in BufReader::new(out).lines().map_while(Result::ok) {
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            });
            let mut server = Server { child: Some(child), port, lines, banner: String::new() };
            match server.banner_line() {
                Some(banner) => {
                    server.banner = banner;
                    return server;
                }
                None => server.kill(),
            }
        }
        panic!("granule serve did not start on a free port in {ATTEMPTS} attempts");
    }

    /// The banner, within [`PATIENCE`]; `None` if the server exited first.
    fn banner_line(&mut self) -> Option<String> {
        let t0 = Instant::now();
        loop {
            let left = PATIENCE.saturating_sub(t0.elapsed());
            match self.lines.recv_timeout(left) {
                Ok(l) if l.starts_with("granule serve:") => return Some(l),
                Ok(_) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => return None,
                Err(e) => {
                    self.kill();
                    panic!("granule serve: no banner within {PATIENCE:?}: {e}");
                }
            }
        }
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    fn addr(&self) -> SocketAddr {
        SocketAddr::from((Ipv4Addr::LOCALHOST, self.port))
    }

    /// A connection of the `redis` crate, with bounded waits.
    fn connect(&self) -> redis::Connection {
        let client = redis::Client::open(self.url()).expect("a redis URL");
        let con = client.get_connection_with_timeout(PATIENCE).expect("connect to granule serve");
        con.set_read_timeout(Some(PATIENCE)).expect("read timeout");
        con.set_write_timeout(Some(PATIENCE)).expect("write timeout");
        con
    }

    /// A raw socket, with bounded waits.
    fn raw(&self) -> TcpStream {
        let s = TcpStream::connect_timeout(&self.addr(), PATIENCE).expect("connect");
        s.set_read_timeout(Some(PATIENCE)).expect("read timeout");
        s.set_write_timeout(Some(PATIENCE)).expect("write timeout");
        s
    }

    /// Send SIGINT (as Ctrl-C does) and wait for the exit; returns the
    /// status and every line printed after the banner.
    fn interrupt(self) -> (ExitStatus, Vec<String>) {
        self.signal("INT")
    }

    /// Send `signal` (`INT`, `TERM`) and wait for the exit; returns the
    /// status and every line printed after the banner.
    fn signal(mut self, signal: &str) -> (ExitStatus, Vec<String>) {
        let mut child = self.child.take().expect("running");
        let pid = child.id().to_string();
        let sent = Command::new("kill").args([&format!("-{signal}"), &pid]).status().expect("run kill");
        assert!(sent.success(), "kill -{signal} {pid} failed");
        let t0 = Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().expect("wait for granule serve") {
                break s;
            }
            if t0.elapsed() > PATIENCE {
                let _ = child.kill();
                let _ = child.wait();
                panic!("granule serve did not exit within {PATIENCE:?} of SIG{signal}");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut rest = Vec::new();
        while let Ok(l) = self.lines.recv_timeout(Duration::from_secs(5)) {
            rest.push(l);
        }
        (status, rest)
    }

    fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

fn cmd<T: redis::FromRedisValue>(con: &mut redis::Connection, args: &[&str]) -> T {
    let mut c = redis::cmd(args[0]);
    for a in &args[1..] {
        c.arg(*a);
    }
    c.query(con).unwrap_or_else(|e| panic!("{args:?}: {e}"))
}

/// Read from a raw socket until `pred` holds for what arrived or it closes.
fn read_until(s: &mut TcpStream, pred: impl Fn(&[u8]) -> bool) -> (Vec<u8>, bool) {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    let t0 = Instant::now();
    while !pred(&got) && t0.elapsed() < PATIENCE {
        match s.read(&mut buf) {
            Ok(0) => return (got, true),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return (got, true),
            Err(e) => panic!("reading a raw socket: {e}"),
        }
    }
    (got, false)
}

/// Whether the server closes `s` (within [`PATIENCE`]).
fn closed(s: &mut TcpStream) -> bool {
    read_until(s, |_| false).1
}

#[test]
fn redis_clients_get_redis_answers_and_ctrl_c_stops_cleanly() {
    let server = Server::start(&[]);
    assert!(
        server.banner.contains(&format!("KV server 0 (core 0) on 127.0.0.1:{}", server.port))
            && server.banner.contains("bkl, 1 core"),
        "{}",
        server.banner
    );
    let mut con = server.connect();

    // Strings.
    let ok: String = cmd(&mut con, &["SET", "greeting", "hello"]);
    assert_eq!(ok, "OK");
    assert_eq!(cmd::<Option<String>>(&mut con, &["GET", "greeting"]).as_deref(), Some("hello"));
    assert_eq!(cmd::<Option<String>>(&mut con, &["GET", "nothing"]), None);
    assert_eq!(cmd::<i64>(&mut con, &["EXISTS", "greeting", "nothing"]), 1);
    assert_eq!(cmd::<i64>(&mut con, &["INCR", "counter"]), 1);
    assert_eq!(cmd::<i64>(&mut con, &["INCR", "counter"]), 2);
    let _: () = cmd(&mut con, &["MSET", "a", "1", "b", "2"]);
    let got: Vec<Option<String>> = cmd(&mut con, &["MGET", "a", "nothing", "b"]);
    assert_eq!(got, [Some("1".to_string()), None, Some("2".to_string())]);
    assert_eq!(cmd::<i64>(&mut con, &["DEL", "a", "b", "nothing"]), 2);
    assert_eq!(cmd::<i64>(&mut con, &["EXISTS", "a"]), 0);
    let _: () = cmd(&mut con, &["SET", "session", "x", "EX", "100"]);
    let ttl: i64 = cmd(&mut con, &["TTL", "session"]);
    assert!((1..=100).contains(&ttl), "TTL {ttl}");
    let err = redis::cmd("INCR").arg("greeting").query::<i64>(&mut con).expect_err("INCR of a word");
    assert!(err.to_string().contains("not an integer"), "{err}");

    // Hashes.
    assert_eq!(cmd::<i64>(&mut con, &["HSET", "user:1", "name", "ada", "lang", "rust"]), 2);
    let all: HashMap<String, String> = cmd(&mut con, &["HGETALL", "user:1"]);
    assert_eq!(all.len(), 2);
    assert_eq!(all["name"], "ada");
    let some: Vec<Option<String>> = cmd(&mut con, &["HMGET", "user:1", "lang", "age"]);
    assert_eq!(some, [Some("rust".to_string()), None]);
    assert_eq!(cmd::<i64>(&mut con, &["HDEL", "user:1", "lang", "age"]), 1);
    let all: HashMap<String, String> = cmd(&mut con, &["HGETALL", "user:1"]);
    assert_eq!(all.len(), 1);

    // Sorted sets.
    assert_eq!(cmd::<i64>(&mut con, &["ZADD", "board", "3", "c", "1", "a", "2", "b"]), 3);
    let mid: Vec<String> = cmd(&mut con, &["ZRANGEBYSCORE", "board", "1.5", "+inf"]);
    assert_eq!(mid, ["b", "c"]);

    // A pipeline of 100 commands.
    let mut p = redis::pipe();
    for i in 0..50 {
        p.cmd("SET").arg(format!("p:{i}")).arg(i);
    }
    for i in 0..50 {
        p.cmd("GET").arg(format!("p:{i}"));
    }
    let replies: Vec<redis::Value> = p.query(&mut con).expect("pipeline");
    assert_eq!(replies.len(), 100);
    for i in 0..50 {
        let v: i64 = redis::from_redis_value(replies[50 + i].clone()).expect("an integer");
        assert_eq!(v, i as i64);
    }

    // A transaction (MULTI/EXEC, what redis-py's default pipeline sends).
    let (a, b): (i64, i64) = redis::pipe().atomic().incr("tx", 1).incr("tx", 2).query(&mut con).expect("MULTI/EXEC");
    assert_eq!((a, b), (1, 3));

    // Values larger than a packet, a socket area and the packet pool: the
    // far side and the stacks cut them up and put them together again.
    let big: Vec<String> = (0..4).map(|i| format!("{i}").repeat(900_000)).collect();
    let _: () = redis::cmd("SET").arg("big:0").arg(&big[0]).query(&mut con).expect("SET big");
    let got: String = redis::cmd("GET").arg("big:0").query(&mut con).expect("GET big");
    assert!(got == big[0], "GET of a 900 kB value returned {} bytes", got.len());
    let mut mset = redis::cmd("MSET");
    for (i, v) in big.iter().enumerate() {
        mset.arg(format!("big:{i}")).arg(v);
    }
    let _: () = mset.query(&mut con).expect("MSET big");
    let got: Vec<String> = redis::cmd("MGET").arg(&["big:0", "big:1", "big:2", "big:3"]).query(&mut con).expect("MGET");
    assert!(got == big, "MGET of 4 x 900 kB returned {:?} bytes", got.iter().map(String::len).collect::<Vec<_>>());
    assert_eq!(cmd::<i64>(&mut con, &["DEL", "big:0", "big:1", "big:2", "big:3"]), 4);

    // Twenty clients at once, each writing its own keys; every acknowledged
    // write is read back, by its writer and by a fresh connection.
    let url = server.url();
    let writers: Vec<_> = (0..20)
        .map(|c| {
            let url = url.clone();
            std::thread::spawn(move || {
                let client = redis::Client::open(url).expect("url");
                let mut con = client.get_connection_with_timeout(PATIENCE).expect("connect");
                con.set_read_timeout(Some(PATIENCE)).unwrap();
                let mut acked = Vec::new();
                for k in 0..50 {
                    let (key, val) = (format!("c{c}:k{k}"), format!("v{c}.{k}"));
                    let r: String = redis::cmd("SET").arg(&key).arg(&val).query(&mut con).expect("SET");
                    assert_eq!(r, "OK");
                    acked.push((key, val));
                }
                for (key, val) in &acked {
                    let got: Option<String> = redis::cmd("GET").arg(key).query(&mut con).expect("GET");
                    assert_eq!(got.as_ref(), Some(val), "{key}");
                }
                acked
            })
        })
        .collect();
    let acked: Vec<(String, String)> =
        writers.into_iter().flat_map(|w| w.join().expect("a writer thread panicked")).collect();
    assert_eq!(acked.len(), 1000);
    let mut check = server.connect();
    for chunk in acked.chunks(100) {
        let keys: Vec<&str> = chunk.iter().map(|(k, _)| k.as_str()).collect();
        let got: Vec<Option<String>> = redis::cmd("MGET").arg(&keys).query(&mut check).expect("MGET");
        for ((k, v), g) in chunk.iter().zip(got) {
            assert_eq!(g.as_ref(), Some(v), "{k}");
        }
    }

    // Connection and server commands.
    assert_eq!(cmd::<String>(&mut con, &["PING"]), "PONG");
    assert_eq!(cmd::<String>(&mut con, &["ECHO", "hi there"]), "hi there");
    let size: i64 = cmd(&mut con, &["DBSIZE"]);
    assert!(size >= 1000 + 50, "DBSIZE {size}");
    let info: String = cmd(&mut con, &["INFO"]);
    assert!(info.contains("redis_version:"), "{info}");

    // Malformed RESP: a protocol error, then the server closes the
    // connection; other connections are unaffected.
    for bad in [&b"*1\r\n$-2\r\n"[..], b"*abc\r\n", b"*1\r\nfoo\r\n"] {
        let mut raw = server.raw();
        raw.write_all(bad).expect("send");
        let (got, _) = read_until(&mut raw, |b| b.ends_with(b"\r\n"));
        let text = String::from_utf8_lossy(&got);
        assert!(text.starts_with("-ERR Protocol error"), "{:?} got {text:?}", String::from_utf8_lossy(bad));
        assert!(closed(&mut raw), "the server kept {:?} open", String::from_utf8_lossy(bad));
        assert_eq!(cmd::<String>(&mut con, &["PING"]), "PONG");
    }

    // QUIT: +OK, then the server closes.
    let mut raw = server.raw();
    raw.write_all(b"PING\r\nQUIT\r\n").expect("send");
    let (got, _) = read_until(&mut raw, |b| b.ends_with(b"+OK\r\n"));
    assert_eq!(got, b"+PONG\r\n+OK\r\n");
    assert!(closed(&mut raw));

    // A client that leaves in the middle of a frame: nothing of it is
    // executed, and everyone else carries on.
    let mut raw = server.raw();
    raw.write_all(b"*3\r\n$3\r\nSET\r\n$7\r\nhalfway\r\n$5\r\nval").expect("send");
    raw.flush().expect("flush");
    drop(raw);
    assert_eq!(cmd::<String>(&mut con, &["PING"]), "PONG");
    assert_eq!(cmd::<i64>(&mut con, &["EXISTS", "halfway"]), 0);

    // A half-closed client still gets its replies.
    let mut raw = server.raw();
    raw.write_all(b"*2\r\n$3\r\nGET\r\n$8\r\ngreeting\r\n").expect("send");
    raw.shutdown(std::net::Shutdown::Write).expect("half-close");
    let (got, eof) = read_until(&mut raw, |b| b.ends_with(b"hello\r\n"));
    assert_eq!(got, b"$5\r\nhello\r\n", "eof {eof}");
    assert!(closed(&mut raw));

    drop(con);
    drop(check);
    let (status, rest) = server.interrupt();
    let text = rest.join("\n");
    assert!(status.success(), "granule serve exited with {status}: {text}");
    assert!(text.contains("stopped by Ctrl-C"), "{text}");
    for field in ["connections", "commands", "bytes", "core 0"] {
        assert!(text.contains(field), "no {field} in the totals: {text}");
    }
    let accepted: u64 = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("connections"))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .expect("a connection count");
    assert!(accepted >= 28, "{text}");
}

#[test]
fn options_are_validated_with_one_line_errors() {
    for (args, why) in [
        (&["serve", "--regime", "none"][..], "regime none cannot serve"),
        (&["serve", "--regime", "nope"], "invalid value 'nope' for '--regime"),
        (&["serve", "--port", "0"], "'--port <PORT>': expected an integer in 1..=65535"),
        (&["serve", "--port", "70000"], "'--port <PORT>'"),
        (&["serve", "--cores", "0"], "'--cores <CORES>'"),
        (&["serve", "--cores", "100000"], "'--cores <CORES>'"),
        (&["serve", "--max-request", "10"], "'--max-request <MAX_REQUEST>'"),
        (&["serve", "--max-clients", "0"], "'--max-clients <MAX_CLIENTS>'"),
        (&["serve", "--max-clients", "70000"], "'--max-clients <MAX_CLIENTS>'"),
        (&["serve", "--seconds=-1"], "'--seconds <SECONDS>'"),
        (&["serve", "--seconds", "0"], "'--seconds <SECONDS>'"),
    ] {
        let (ok, _, err) = granule(args);
        assert!(!ok, "{args:?} succeeded");
        assert!(err.contains(why), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    }
    // A port in use is reported before anything boots.
    let taken = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).expect("bind");
    let port = taken.local_addr().unwrap().port().to_string();
    let (ok, _, err) = granule(&["serve", "--port", &port, "--seconds", "1"]);
    assert!(!ok && err.contains("cannot listen on 127.0.0.1:"), "{err}");
}

#[test]
fn clients_over_the_limit_are_refused_and_seconds_stops_by_itself() {
    let port = free_port().to_string();
    let mut child = Command::new(env!("CARGO_BIN_EXE_granule"))
        .args(["serve", "--port", &port, "--seconds", "10", "--max-clients", "1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start granule serve");
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut banner = String::new();
    out.read_line(&mut banner).expect("banner");
    assert!(banner.starts_with("granule serve: bkl"), "{banner}");
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let mut first = TcpStream::connect_timeout(&addr, PATIENCE).expect("connect");
    first.set_read_timeout(Some(PATIENCE)).unwrap();
    first.write_all(b"PING\r\n").unwrap();
    let (got, _) = read_until(&mut first, |b| b.ends_with(b"\r\n"));
    assert_eq!(got, b"+PONG\r\n");
    let mut second = TcpStream::connect_timeout(&addr, PATIENCE).expect("connect");
    second.set_read_timeout(Some(PATIENCE)).unwrap();
    let (got, closed) = read_until(&mut second, |_| false);
    assert!(closed && got.starts_with(b"-ERR max number of clients reached"), "{:?}", String::from_utf8_lossy(&got));
    let t0 = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(t0.elapsed() < PATIENCE, "--seconds 10 did not stop it");
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut rest = String::new();
    out.read_to_string(&mut rest).unwrap();
    assert!(status.success(), "{rest}");
    assert!(rest.contains("stopped by --seconds") && rest.contains("1 refused"), "{rest}");
}

/// Whether `tool --version` runs.
fn have(tool: &str) -> bool {
    Command::new(tool).arg("--version").output().is_ok_and(|o| o.status.success())
}

/// Runs a Redis tool against `port` (bounded by `limit`); its exit status
/// and everything it printed.
fn run_tool(tool: &str, port: u16, args: &[&str], limit: Duration) -> (ExitStatus, String) {
    let mut child = Command::new(tool)
        .args(["-h", "127.0.0.1", "-p", &port.to_string()])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start a redis tool");
    let (mut out, mut err) = (child.stdout.take().expect("stdout"), child.stderr.take().expect("stderr"));
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = out.read_to_string(&mut text);
        text
    });
    let err_reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = err.read_to_string(&mut text);
        text
    });
    let t0 = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if t0.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{tool} {args:?} did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let text = format!("{}{}", reader.join().unwrap_or_default(), err_reader.join().unwrap_or_default());
    (status, text)
}

/// redis-benchmark's default run (every default test, 20 000 requests
/// each) passes against `granule serve` under `bkl` and `lockfree`, and
/// SIGTERM then stops the server cleanly with its totals.
#[test]
fn redis_benchmark_default_run_passes_under_bkl_and_lockfree() {
    if !have("redis-benchmark") {
        eprintln!("redis-benchmark is not installed: skipped");
        return;
    }
    for regime in ["bkl", "lockfree"] {
        let server = Server::start(&["--regime", regime]);
        let (status, text) = run_tool("redis-benchmark", server.port, &["-q", "-n", "20000"], Duration::from_secs(300));
        assert!(status.success(), "{regime}: redis-benchmark exited with {status}: {text}");
        let lower = text.to_lowercase();
        assert!(!lower.contains("error") && !lower.contains("err "), "{regime}: {text}");
        for test in [
            "PING_INLINE",
            "PING_MBULK",
            "SET",
            "GET",
            "INCR",
            "LPUSH",
            "RPUSH",
            "LPOP",
            "RPOP",
            "SADD",
            "HSET",
            "SPOP",
            "ZADD",
            "ZPOPMIN",
            "LRANGE_100",
            "LRANGE_300",
            "LRANGE_500",
            "LRANGE_600",
            "MSET",
        ] {
            // `LRANGE_100 (first 100 elements): …`, `MSET (10 keys): …`.
            let printed = text.split(['\r', '\n']).map(str::trim).any(|line| {
                (line.starts_with(&format!("{test}: ")) || line.starts_with(&format!("{test} (")))
                    && line.contains("requests per second")
            });
            assert!(printed, "{regime}: no result for {test}: {text}");
        }
        let (status, rest) = server.signal("TERM");
        let totals = rest.join("\n");
        assert!(status.success(), "{regime}: granule serve exited with {status}: {totals}");
        assert!(totals.contains("stopped by SIGTERM") && totals.contains("commands"), "{totals}");
    }
}

/// `redis-cli` and `redis-benchmark` against it, where installed.
#[test]
fn redis_cli_and_redis_benchmark_run_clean() {
    let have = |tool: &str| Command::new(tool).arg("--version").output().is_ok_and(|o| o.status.success());
    if !have("redis-cli") && !have("redis-benchmark") {
        eprintln!("redis-cli and redis-benchmark are not installed: skipped");
        return;
    }
    let server = Server::start(&[]);
    let port = server.port.to_string();
    let run = |tool: &str, args: &[&str]| {
        let mut child = Command::new(tool)
            .args(["-h", "127.0.0.1", "-p", &port])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start a redis tool");
        let t0 = Instant::now();
        while child.try_wait().expect("wait").is_none() {
            if t0.elapsed() > Duration::from_secs(120) {
                let _ = child.kill();
                panic!("{tool} {args:?} did not finish");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let out = child.wait_with_output().expect("output");
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success(), "{tool} {args:?}: {text}");
        text
    };
    if have("redis-cli") {
        assert_eq!(run("redis-cli", &["PING"]).trim(), "PONG");
        assert_eq!(run("redis-cli", &["SET", "tool", "cli"]).trim(), "OK");
        assert_eq!(run("redis-cli", &["GET", "tool"]).trim(), "cli");
        assert_eq!(run("redis-cli", &["HSET", "h", "f", "v"]).trim(), "1");
    } else {
        eprintln!("redis-cli is not installed: skipped");
    }
    if have("redis-benchmark") {
        let text = run("redis-benchmark", &["-n", "1000", "-q", "-t", "set,get", "-c", "50", "-P", "16"]);
        assert!(!text.to_lowercase().contains("error"), "{text}");
        assert!(text.contains("SET") && text.contains("GET"), "{text}");
    } else {
        eprintln!("redis-benchmark is not installed: skipped");
    }
    let (status, rest) = server.interrupt();
    assert!(status.success(), "{}", rest.join("\n"));
}

/// A client blocked in `BLPOP` through real sockets: its timeout ends it with
/// a null reply (the far side's `TICK` wakes the server), and another
/// client's push serves it.
#[test]
fn blocked_clients_time_out_and_are_served_by_other_clients() {
    let server = Server::start(&[]);
    let mut waiter = server.connect();
    assert_eq!(cmd::<Option<Vec<String>>>(&mut waiter, &["BLPOP", "empty", "0.2"]), None);
    assert_eq!(cmd::<Option<Vec<String>>>(&mut waiter, &["BRPOP", "empty", "other", "0.1"]), None);
    let blocked = std::thread::spawn(move || {
        let got = cmd::<Option<Vec<String>>>(&mut waiter, &["BLPOP", "jobs", "30"]);
        (got, cmd::<String>(&mut waiter, &["PING"]))
    });
    let mut pusher = server.connect();
    // Push once the waiter is blocked (CLIENT LIST shows its command).
    let t0 = Instant::now();
    while !cmd::<String>(&mut pusher, &["CLIENT", "LIST"]).contains("cmd=blpop") {
        assert!(t0.elapsed() < PATIENCE, "the waiter never blocked");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(cmd::<i64>(&mut pusher, &["RPUSH", "jobs", "first", "second"]), 2);
    let (got, pong) = blocked.join().expect("the waiter");
    assert_eq!(got, Some(vec!["jobs".to_string(), "first".to_string()]));
    assert_eq!(pong, "PONG");
    assert_eq!(cmd::<Vec<String>>(&mut pusher, &["LRANGE", "jobs", "0", "-1"]), vec!["second".to_string()]);
    let (status, rest) = server.interrupt();
    assert!(status.success(), "{}", rest.join("\n"));
}

/// redis-py (RESP2 and RESP3) against `granule serve`: a transaction that
/// retries after a WATCH conflict, pub/sub, `scan_iter` returning every
/// key, pipelines (`tests/fixtures/redis_py_check.py`; skipped where
/// redis-py is not installed).
#[test]
fn redis_py_transactions_pubsub_scan_and_pipelines_work() {
    let has_redis_py = Command::new("python3").args(["-c", "import redis"]).output().is_ok_and(|o| o.status.success());
    if !has_redis_py {
        eprintln!("python3 with redis-py is not installed: skipped");
        return;
    }
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/redis_py_check.py");
    let server = Server::start(&[]);
    for protocol in ["2", "3"] {
        let out =
            Command::new("python3").args([script, &server.port.to_string(), protocol]).output().expect("run python3");
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success(), "redis-py, RESP{protocol}: {text}");
        assert!(text.contains("all checks passed"), "redis-py, RESP{protocol}: {text}");
    }
    let (status, rest) = server.interrupt();
    assert!(status.success(), "{}", rest.join("\n"));
}
