//! A twin of a real `redis-server`: every command goes to both the store
//! (through a [`Connection`], as a server's client would send it) and a
//! `redis-server` started for the test on a free loopback port, and the two
//! replies are compared byte for byte (or, for commands whose order Redis
//! leaves unspecified, as sorted elements).
//!
//! Where `redis-server` is not installed, [`Twin::start`] says so and
//! returns `None`: the test is skipped (`.ci/run` installs it).
//!
//! Several clients may be open at once ([`Twin::client`]): client `i` is a
//! connection of the store and a TCP connection to Redis. What the store
//! writes for other clients ([`Store::take_outbox`]: published messages,
//! a blocked client's reply) is appended to their output, as a server would
//! send it.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use granule_user::resp::{encode_command, parse_reply, reply_len, Connection, Flow, Reply, Store};

/// How long Redis may take to answer.
const PATIENCE: Duration = Duration::from_secs(10);
/// How long Redis's silence must last to count as no reply (a blocking
/// command, a subscriber's quiet).
const SILENCE: Duration = Duration::from_millis(50);
/// How long to look for replies beyond the ones granule sent, once Redis
/// sent as many (a difference; one arriving later shows in the next
/// exchange).
const GRACE: Duration = Duration::from_millis(2);

/// One client of both servers.
struct Client {
    conn: Connection,
    /// Bytes the store wrote for this client, not yet read.
    pending: Vec<u8>,
    redis: TcpStream,
    /// Bytes Redis sent, not yet read.
    redis_pending: Vec<u8>,
}

/// The store and a real Redis, fed the same commands.
pub struct Twin {
    server: Child,
    port: u16,
    store: Store,
    clients: Vec<Client>,
}

/// The current Unix time in milliseconds (the store's clock).
pub fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

/// Whether `redis-server` runs here.
pub fn have_redis() -> bool {
    Command::new("redis-server").arg("--version").output().is_ok_and(|o| o.status.success())
}

impl Twin {
    /// A fresh store and a fresh `redis-server`, with one client (index 0);
    /// `None` (after saying why) if `redis-server` is not installed.
    pub fn start() -> Option<Twin> {
        if !have_redis() {
            eprintln!("redis-server is not installed: skipped");
            return None;
        }
        let (server, redis) = start_redis();
        let port = redis.peer_addr().expect("redis address").port();
        let mut twin = Twin { server, port, store: Store::new(), clients: Vec::new() };
        twin.add_client(redis);
        Some(twin)
    }

    /// Opens another client; its index.
    pub fn client(&mut self) -> usize {
        let redis = TcpStream::connect((Ipv4Addr::LOCALHOST, self.port)).expect("connect to redis");
        self.add_client(redis)
    }

    /// Adds the client whose connection to Redis is `redis`; its index.
    fn add_client(&mut self, redis: TcpStream) -> usize {
        redis.set_read_timeout(Some(SILENCE)).unwrap();
        self.clients.push(Client {
            conn: Connection::default(),
            pending: Vec::new(),
            redis,
            redis_pending: Vec::new(),
        });
        self.clients.len() - 1
    }

    /// The store (to inspect it).
    pub fn store(&mut self) -> &mut Store {
        &mut self.store
    }

    /// Sends `args` from client `c` to both and returns what each answered
    /// (the store's bytes, Redis's bytes): Redis's replies are awaited until
    /// there are as many as the store's (at least one when `expect_reply`).
    fn exchange(&mut self, c: usize, args: &[&[u8]], expect_reply: bool) -> (Vec<u8>, Vec<u8>) {
        let mut request = Vec::new();
        encode_command(args, &mut request);
        self.feed(c, &request);
        self.clients[c].redis.write_all(&request).expect("write to redis");
        let ours = take_replies(&mut self.clients[c].pending);
        let want = count_replies(&ours).max(usize::from(expect_reply));
        let theirs = self.read_redis(c, want);
        (ours, theirs)
    }

    /// Feeds raw bytes from client `c` to the store and routes its output.
    fn feed(&mut self, c: usize, bytes: &[u8]) {
        let mut out = Vec::new();
        let flow = self.clients[c].conn.feed(bytes, &mut self.store, now_ms(), &mut out);
        let _: Flow = flow;
        self.clients[c].pending.extend_from_slice(&out);
        self.route();
    }

    /// Delivers what the store wrote for other clients, and lets every
    /// client it unblocked run the requests that waited (as a server does).
    fn route(&mut self) {
        loop {
            for (id, bytes) in self.store.take_outbox() {
                if let Some(other) = self.clients.iter_mut().find(|k| k.conn.id() == id) {
                    other.pending.extend_from_slice(&bytes);
                }
            }
            let unblocked = self.store.take_unblocked();
            if unblocked.is_empty() {
                return;
            }
            for id in unblocked {
                if let Some(k) = self.clients.iter().position(|k| k.conn.id() == id) {
                    let mut out = Vec::new();
                    let _: Flow = self.clients[k].conn.feed(&[], &mut self.store, now_ms(), &mut out);
                    self.clients[k].pending.extend_from_slice(&out);
                }
            }
        }
    }

    /// Answers the blocked clients whose timeout passed (as a server's
    /// timer does) and delivers the replies.
    pub fn tick(&mut self) {
        self.store.expire_blocked(now_ms());
        self.route();
    }

    /// Every whole reply Redis sent client `c`: waits for `want` of them,
    /// then takes any more that come within [`GRACE`] (within [`SILENCE`]
    /// when none is wanted).
    fn read_redis(&mut self, c: usize, want: usize) -> Vec<u8> {
        let client = &mut self.clients[c];
        let t0 = Instant::now();
        let mut buf = [0u8; 65536];
        while count_replies(&client.redis_pending) < want {
            match client.redis.read(&mut buf) {
                Ok(0) => panic!("redis closed the connection"),
                Ok(n) => client.redis_pending.extend_from_slice(&buf[..n]),
                Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                    let got = count_replies(&client.redis_pending);
                    assert!(t0.elapsed() < PATIENCE, "redis sent {got} of the {want} replies granule sent");
                }
                Err(e) => panic!("reading from redis: {e}"),
            }
        }
        let look = if want == 0 { SILENCE } else { GRACE };
        client.redis.set_read_timeout(Some(look)).expect("read timeout");
        while more_ready(&mut client.redis, &mut client.redis_pending, &mut buf) {}
        client.redis.set_read_timeout(Some(SILENCE)).expect("read timeout");
        let whole = whole_prefix(&client.redis_pending);
        client.redis_pending.drain(..whole).collect()
    }

    /// Switches clients `clients` of both servers to RESP `protocol` (both
    /// must answer `HELLO 3`; the replies differ in version and id by
    /// design).
    pub fn speak(&mut self, protocol: u8, clients: &[usize]) {
        if protocol == 3 {
            for &c in clients {
                let (ours, theirs) = self.raw(c, &["HELLO", "3"]);
                assert!(!ours.is_empty() && !theirs.is_empty(), "HELLO 3 unanswered");
            }
        }
    }

    /// The commands and subcommands (`container|sub`) that both servers'
    /// `COMMAND LIST` name, in granule's order.
    pub fn commands_both_serve(&mut self) -> Vec<String> {
        let (Reply::Array(Some(ours)), Reply::Array(Some(theirs))) = self.both(0, &["COMMAND", "LIST"]) else {
            panic!("COMMAND LIST is an array")
        };
        ours.iter()
            .filter(|n| theirs.contains(n))
            .map(|n| match n {
                Reply::Bulk(Some(name)) => String::from_utf8_lossy(name).into_owned(),
                other => panic!("a command name is a string, not {other:?}"),
            })
            .collect()
    }

    /// Sends `args` (words) from client 0 and asserts both answer the same
    /// bytes; returns the reply.
    pub fn same(&mut self, args: &[&str]) -> Reply {
        self.same_from(0, args)
    }

    /// As [`Twin::same`], from client `c`.
    pub fn same_from(&mut self, c: usize, args: &[&str]) -> Reply {
        let words: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        self.same_bytes(c, &words)
    }

    /// As [`Twin::same`], with arguments as bytes.
    pub fn same_bytes(&mut self, c: usize, args: &[&[u8]]) -> Reply {
        let (ours, theirs) = self.exchange(c, args, true);
        assert_eq!(
            String::from_utf8_lossy(&ours),
            String::from_utf8_lossy(&theirs),
            "{:?}: granule (left) and Redis (right) differ",
            args.iter().map(|a| String::from_utf8_lossy(a)).collect::<Vec<_>>()
        );
        parse_one(&ours)
    }

    /// Sends `args` from client 0 and asserts both answer the same
    /// elements, in any order (nested arrays compared as sorted lists).
    pub fn same_unordered(&mut self, args: &[&str]) -> Reply {
        let words: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        let (ours, theirs) = self.exchange(0, &words, true);
        let (a, b) = (sorted(parse_one(&ours)), sorted(parse_one(&theirs)));
        assert_eq!(a, b, "{args:?}: granule (left) and Redis (right) differ");
        a
    }

    /// Sends `args` from client `c` to both and returns both replies as they
    /// are, for the caller to compare in its own way.
    pub fn both(&mut self, c: usize, args: &[&str]) -> (Reply, Reply) {
        let words: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        let (ours, theirs) = self.exchange(c, &words, true);
        (parse_one(&ours), parse_one(&theirs))
    }

    /// Sends `args` from client `c` to both and returns the bytes each
    /// answered, as they are (RESP3 frames included), for the caller to compare.
    pub fn raw(&mut self, c: usize, args: &[&str]) -> (Vec<u8>, Vec<u8>) {
        let words: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        self.exchange(c, &words, true)
    }

    /// Sends `args` from client `c` expecting no reply now (a blocking
    /// command, a subscriber's silence); asserts neither answered.
    pub fn silent(&mut self, c: usize, args: &[&str]) {
        let words: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        let (ours, theirs) = self.exchange(c, &words, false);
        assert!(theirs.is_empty(), "{args:?}: Redis answered {:?}", String::from_utf8_lossy(&theirs));
        assert!(ours.is_empty(), "{args:?}: granule answered {:?}", String::from_utf8_lossy(&ours));
    }

    /// As [`Twin::raw`], for a command that may block: no reply is
    /// awaited beyond the ones granule sent (none, if it blocked).
    pub fn raw_may_block(&mut self, c: usize, args: &[&str]) -> (Vec<u8>, Vec<u8>) {
        let words: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        self.exchange(c, &words, false)
    }

    /// What client `c` received since its last command, from both (the
    /// store's bytes, Redis's), for the caller to compare.
    pub fn arrivals(&mut self, c: usize) -> (Vec<u8>, Vec<u8>) {
        let ours = take_replies(&mut self.clients[c].pending);
        let theirs = self.read_redis(c, count_replies(&ours));
        (ours, theirs)
    }

    /// What client `c` received since its last command (pushes, a blocked
    /// command's late reply), from both; asserts they are the same bytes.
    pub fn same_arrivals(&mut self, c: usize) -> Vec<u8> {
        let (ours, theirs) = self.arrivals(c);
        assert_eq!(String::from_utf8_lossy(&ours), String::from_utf8_lossy(&theirs), "client {c}'s arrivals differ");
        ours
    }
}

impl Twin {
    /// Asserts both describe command `name` with the same first six
    /// `COMMAND INFO` fields: name, arity, flags and key positions.
    pub fn same_command_info(&mut self, name: &str) {
        let (ours, theirs) = self.both(0, &["COMMAND", "INFO", name]);
        let head = |reply: Reply| match reply {
            Reply::Array(Some(mut entries)) if !entries.is_empty() => match entries.remove(0) {
                Reply::Array(Some(fields)) => fields.into_iter().take(6).collect::<Vec<_>>(),
                other => panic!("COMMAND INFO {name}: {other:?}"),
            },
            other => panic!("COMMAND INFO {name}: {other:?}"),
        };
        assert_eq!(head(ours), head(theirs), "COMMAND INFO {name}");
    }
}

/// Starts `redis-server` on a free loopback port and connects to it: the
/// server and the connection. The port is picked by binding port 0 and
/// letting it go, so a test running beside this one may pick it too: the
/// connection is kept only once the server answering on it reports this
/// child's process id, and a child that exits (its port taken) is started
/// again on another port.
fn start_redis() -> (Child, TcpStream) {
    const ATTEMPTS: usize = 5;
    for _ in 0..ATTEMPTS {
        let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap().local_addr().unwrap().port();
        let mut server = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start redis-server");
        let t0 = Instant::now();
        while t0.elapsed() < PATIENCE {
            if server.try_wait().expect("redis-server status").is_some() {
                break;
            }
            match TcpStream::connect((Ipv4Addr::LOCALHOST, port)) {
                Ok(s) if serves_for(&s, server.id()) => return (server, s),
                _ => std::thread::sleep(Duration::from_millis(20)),
            }
        }
        let _ = server.kill();
        let _ = server.wait();
    }
    panic!("redis-server did not come up on a free port in {ATTEMPTS} attempts");
}

/// Whether the Redis answering on `s` is process `pid` (`INFO server`'s
/// `process_id`); false on any error.
fn serves_for(mut s: &TcpStream, pid: u32) -> bool {
    let mut request = Vec::new();
    encode_command(&[b"INFO", b"server"], &mut request);
    if s.set_read_timeout(Some(PATIENCE)).is_err() || s.write_all(&request).is_err() {
        return false;
    }
    let (mut got, mut buf) = (Vec::new(), [0u8; 4096]);
    loop {
        match reply_len(&got, usize::MAX) {
            Ok(Some(_)) => break,
            Ok(None) => {}
            Err(_) => return false,
        }
        match s.read(&mut buf) {
            Ok(0) | Err(_) => return false,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
    }
    String::from_utf8_lossy(&got).lines().any(|l| l.trim() == format!("process_id:{pid}"))
}

impl Drop for Twin {
    fn drop(&mut self) {
        let _ = self.server.kill();
        let _ = self.server.wait();
    }
}

/// Reads whatever more is ready on `s` without waiting long; whether any came.
fn more_ready(s: &mut TcpStream, pending: &mut Vec<u8>, buf: &mut [u8]) -> bool {
    match s.read(buf) {
        Ok(0) => false,
        Ok(n) => {
            pending.extend_from_slice(&buf[..n]);
            true
        }
        Err(_) => false,
    }
}

/// The whole replies at the front of `bytes`: how many, and their length.
fn whole_replies(bytes: &[u8]) -> (usize, usize) {
    let (mut count, mut used) = (0, 0);
    while let Ok(Some(len)) = reply_len(&bytes[used..], usize::MAX) {
        used += len;
        count += 1;
    }
    (count, used)
}

/// How many whole replies are at the front of `bytes`.
fn count_replies(bytes: &[u8]) -> usize {
    whole_replies(bytes).0
}

/// Length of the whole replies at the front of `bytes`.
fn whole_prefix(bytes: &[u8]) -> usize {
    whole_replies(bytes).1
}

/// Takes the whole replies at the front of `pending`.
fn take_replies(pending: &mut Vec<u8>) -> Vec<u8> {
    let whole = whole_prefix(pending);
    pending.drain(..whole).collect()
}

/// The first reply of `bytes` (a RESP3 reply's type is kept as its RESP2
/// shape by the parser).
pub fn parse_one(bytes: &[u8]) -> Reply {
    match parse_reply(bytes, usize::MAX) {
        Ok(Some((reply, _))) => reply,
        other => panic!("not a reply: {other:?} in {:?}", String::from_utf8_lossy(bytes)),
    }
}

/// `reply` with every array's elements sorted (recursively).
pub fn sorted(reply: Reply) -> Reply {
    match reply {
        Reply::Array(Some(items)) => {
            let mut items: Vec<Reply> = items.into_iter().map(sorted).collect();
            items.sort_by_key(|r| format!("{r:?}"));
            Reply::Array(Some(items))
        }
        other => other,
    }
}
