//! The KV macrobenchmark's system on the hosted machine, under every regime
//! (rtm through its fallback path where the CPU has no RTM): YCSB clients
//! load and run through the driver and the network stacks, the kernel's
//! invariants are checked after every system call, and each server's final
//! store must equal an independent model replaying the request log the
//! server executed. Behaviour only: counts and contents, never timings.
//! A second kind of test plugs a scripted far side into the card and drives
//! several connections by hand: published messages cross from one
//! connection to another through the stack, killed clients are closed.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use granule_hosted::nic::{FarSide, Nic};
use granule_hosted::MachineConfig;
use granule_kernel::{BigLock, Fine, LockFree, Regime, Transactional};
use granule_sync::lock::{Clh, Mcs, Ticket};
use granule_sync::profile::{AbortCause, NoStats};
use granule_sync::rtm::{AlwaysAbort, RetryPolicy};
use granule_user::kv::boot;
use granule_user::kv::{KvConfig, KvSystem, Mode};
use granule_user::net::packet::FIN;
use granule_user::resp::{encode_command, parse_request, Limits, Snapshot};
use granule_user::ycsb::Workload;

/// What a model value is.
#[derive(Clone, Debug, PartialEq)]
enum Model {
    Hash(BTreeMap<Vec<u8>, Vec<u8>>),
    ZSet(BTreeMap<Vec<u8>, f64>),
}

/// Replay the logged request bytes of one server, connection by connection
/// in log order, into the model.
fn replay(log: &[(u16, Vec<u8>)]) -> HashMap<Vec<u8>, Model> {
    let limits = Limits::default();
    let mut pending: HashMap<u16, Vec<u8>> = HashMap::new();
    let mut db: HashMap<Vec<u8>, Model> = HashMap::new();
    for (conn, bytes) in log {
        let buf = pending.entry(*conn).or_default();
        buf.extend_from_slice(bytes);
        let mut used = 0;
        while let Ok(Some((req, n))) = parse_request(&buf[used..], &limits) {
            used += n;
            let args: Vec<Vec<u8>> = req.args(&buf[used - n..]).map(<[u8]>::to_vec).collect();
            apply(&mut db, &args);
        }
        buf.drain(..used);
    }
    db
}

fn apply(db: &mut HashMap<Vec<u8>, Model>, args: &[Vec<u8>]) {
    let name = String::from_utf8_lossy(&args[0]).to_ascii_uppercase();
    match name.as_str() {
        "HSET" | "HMSET" => {
            let Model::Hash(h) = db.entry(args[1].clone()).or_insert_with(|| Model::Hash(BTreeMap::new())) else {
                panic!("HSET on a non-hash")
            };
            for fv in args[2..].chunks(2) {
                h.insert(fv[0].clone(), fv[1].clone());
            }
        }
        "ZADD" => {
            let Model::ZSet(z) = db.entry(args[1].clone()).or_insert_with(|| Model::ZSet(BTreeMap::new())) else {
                panic!("ZADD on a non-zset")
            };
            for sm in args[2..].chunks(2) {
                let score: f64 = String::from_utf8_lossy(&sm[0]).parse().expect("numeric score");
                z.insert(sm[1].clone(), score);
            }
        }
        "DEL" => {
            for k in &args[1..] {
                db.remove(k);
            }
        }
        "ZREM" => {
            if let Some(Model::ZSet(z)) = db.get_mut(&args[1]) {
                for m in &args[2..] {
                    z.remove(m);
                }
                if z.is_empty() {
                    db.remove(&args[1]);
                }
            }
        }
        "HGETALL" | "HMGET" | "HGET" | "ZRANGEBYSCORE" | "GET" | "EXISTS" => {}
        other => panic!("the YCSB clients sent an unexpected command {other}"),
    }
}

fn snapshot_as_model(kv: &KvSystem, server: usize) -> HashMap<Vec<u8>, Model> {
    let store = kv.servers[server].store.lock().unwrap();
    store
        .snapshot(kv.now_ms())
        .into_iter()
        .map(|(k, v)| {
            let m = match v {
                Snapshot::Hash(h) => Model::Hash(h.into_iter().collect()),
                Snapshot::ZSet(z) => Model::ZSet(z.into_iter().map(|(score, m)| (m, score)).collect()),
                other => panic!("unexpected value {other:?} under {}", String::from_utf8_lossy(&k)),
            };
            (k, m)
        })
        .collect()
}

/// Run `workload` on a 2-core machine under `regime` until every client ran
/// `ops` operations; check failures, faults, invariants and the replay.
fn run<R: Regime>(regime: R, workload: Workload, records: u64, ops: u64) {
    let mut machine = MachineConfig::new(2);
    machine.check_invariants = true;
    // Tests run two at a time on as few as two CPUs: an idle core spinning
    // its default 200,000 cycles takes the CPU from the other machine's.
    machine.idle_spin_cycles = 10_000;
    let mut config = KvConfig::new(2, Mode::Loopback);
    config.ycsb.workload = workload;
    config.ycsb.record_count = records;
    config.ops_per_client = Some(ops);
    config.log_requests = true;
    let m = boot(machine, regime, config, None).expect("boot");
    m.wait_loaded(Duration::from_secs(60)).expect("loaded");
    let t0 = Instant::now();
    while !m.kv.all_done() {
        assert!(t0.elapsed() < Duration::from_secs(60), "clients did not finish: {} ops", m.kv.ops());
        assert!(m.faults().is_empty(), "faults: {:?}", m.faults());
        std::thread::sleep(Duration::from_millis(2));
    }
    let violations = m.machine.invariant_violations();
    let kv: Arc<KvSystem> = m.kv.clone();
    let faults = m.shutdown().expect("clean shutdown");
    assert!(faults.is_empty(), "faults: {faults:?}");
    assert!(violations.is_empty(), "invariants broken: {violations:?}");
    assert_eq!(kv.failed(), 0, "failed operations");
    assert_eq!(kv.ops(), ops * kv.clients.len() as u64);
    for server in 0..kv.servers.len() {
        let log = kv.servers[server].log.lock().unwrap().clone();
        let model = replay(&log);
        let store = snapshot_as_model(&kv, server);
        assert!(model.len() as u64 > records, "the model holds every record and the index");
        assert_eq!(store.len(), model.len(), "keys of server {server}");
        for (k, v) in &model {
            assert_eq!(store.get(k), Some(v), "key {}", String::from_utf8_lossy(k));
        }
    }
}

const RECORDS: u64 = 200;
const OPS: u64 = 150;

#[test]
fn bkl_clh_workload_a_matches_its_replay() {
    run(BigLock::<Clh, NoStats>::new(2), Workload::A, RECORDS, OPS);
}

#[test]
fn bkl_ticket_workload_d_matches_its_replay() {
    run(BigLock::<Ticket, NoStats>::new(2), Workload::D, RECORDS, OPS);
}

#[test]
fn bkl_mcs_workload_e_matches_its_replay() {
    run(BigLock::<Mcs, NoStats>::new(2), Workload::E, RECORDS, 40);
}

#[test]
fn fine_workload_f_matches_its_replay() {
    let boot = granule_kernel::BootConfig::new(2);
    run(Fine::<NoStats>::new(&boot), Workload::F, RECORDS, OPS);
}

#[test]
fn lockfree_workload_a_matches_its_replay() {
    run(LockFree::new(2), Workload::A, RECORDS, OPS);
}

#[test]
fn rtm_fallback_workload_b_matches_its_replay() {
    let htm = AlwaysAbort::new(AbortCause::Conflict);
    run(Transactional::<AlwaysAbort, NoStats>::with_htm(2, htm, RetryPolicy::DEFAULT), Workload::B, RECORDS, OPS);
}

#[test]
fn one_core_runs_everything_on_core_zero() {
    let mut machine = MachineConfig::new(1);
    machine.check_invariants = true;
    let mut config = KvConfig::new(1, Mode::Loopback);
    config.ycsb.record_count = 100;
    config.ops_per_client = Some(100);
    let m = boot(machine, BigLock::<Clh, NoStats>::new(1), config, None).expect("boot");
    m.wait_loaded(Duration::from_secs(60)).expect("loaded");
    let t0 = Instant::now();
    while !m.kv.all_done() {
        assert!(t0.elapsed() < Duration::from_secs(60), "clients did not finish");
        std::thread::sleep(Duration::from_millis(2));
    }
    let s = m.sample();
    assert!(s.syscalls[0] > 0);
    assert!(m.machine.invariant_violations().is_empty());
    let kv = m.kv.clone();
    assert!(m.shutdown().expect("shutdown").is_empty());
    assert_eq!(kv.failed(), 0);
    assert_eq!(kv.servers.len(), 1);
}

/// A far side scripted by the test: it keeps what the card transmits.
#[derive(Default)]
struct Wire {
    sent: Mutex<Vec<u64>>,
}

impl FarSide for Wire {
    fn transmit(&self, nic: &Nic) {
        let mut sent = self.sent.lock().unwrap();
        while let Some(desc) = nic.take_transmitted() {
            sent.push(desc);
        }
    }
}

/// Clients of one KV server on the far side of the card: each connection
/// is a port of the test's choosing.
struct Peers {
    kv: Arc<KvSystem>,
    wire: Arc<Wire>,
    server: u16,
    received: HashMap<u16, Vec<u8>>,
    closed: HashSet<u16>,
}

impl Peers {
    /// Puts one packet from `conn` on the card's receive ring.
    fn packet(&self, conn: u16, flags: u16, payload: &[u8]) {
        let pool = self.kv.pool.get().expect("the pool is built");
        let t0 = Instant::now();
        let desc = loop {
            if let Some(desc) = pool.alloc() {
                break desc;
            }
            assert!(t0.elapsed() < Duration::from_secs(10), "no packet buffer came free");
            std::thread::sleep(Duration::from_millis(1));
        };
        pool.write(desc, self.server, conn, flags, payload);
        self.kv.nic.deliver(desc).expect("the receive ring has room");
        self.kv.nic.interrupt();
    }

    /// Sends a command from `conn`.
    fn send(&self, conn: u16, words: &[&str]) {
        let args: Vec<&[u8]> = words.iter().map(|w| w.as_bytes()).collect();
        let mut bytes = Vec::new();
        encode_command(&args, &mut bytes);
        self.packet(conn, 0, &bytes);
    }

    /// Takes what the card transmitted, by connection.
    fn pump(&mut self) {
        let sent = std::mem::take(&mut *self.wire.sent.lock().unwrap());
        let pool = self.kv.pool.get().expect("the pool is built");
        for desc in sent {
            let (dst, fin) = pool
                .read(desc, |h, payload| {
                    self.received.entry(h.dst).or_default().extend_from_slice(payload);
                    (h.dst, h.flags & FIN != 0)
                })
                .expect("a valid descriptor");
            if fin {
                self.closed.insert(dst);
            }
            pool.free(desc);
        }
    }

    /// Waits until `conn` received `expected` (and nothing else first).
    fn expect(&mut self, conn: u16, expected: &str) {
        let t0 = Instant::now();
        loop {
            self.pump();
            let got = self.received.entry(conn).or_default();
            if got.len() >= expected.len() {
                let head: Vec<u8> = got.drain(..expected.len()).collect();
                assert_eq!(String::from_utf8_lossy(&head), expected, "connection {conn}");
                return;
            }
            assert!(t0.elapsed() < Duration::from_secs(30), "connection {conn} got only {got:?}");
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Waits for the next `n` bytes `conn` receives and takes them.
    fn take(&mut self, conn: u16, n: usize) -> Vec<u8> {
        let t0 = Instant::now();
        loop {
            self.pump();
            let got = self.received.entry(conn).or_default();
            if got.len() >= n {
                return got.drain(..n).collect();
            }
            assert!(t0.elapsed() < Duration::from_secs(30), "connection {conn} got only {got:?}");
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Waits until the server closed `conn`.
    fn expect_closed(&mut self, conn: u16) {
        let t0 = Instant::now();
        while !self.closed.contains(&conn) {
            assert!(t0.elapsed() < Duration::from_secs(30), "connection {conn} stays open");
            std::thread::sleep(Duration::from_millis(1));
            self.pump();
        }
    }
}

#[test]
fn published_messages_cross_connections_and_killed_clients_are_closed() {
    let mut machine = MachineConfig::new(2);
    machine.check_invariants = true;
    let config = KvConfig::new(2, Mode::External);
    let server = config.base_port;
    let wire = Arc::new(Wire::default());
    let far: Arc<dyn FarSide> = wire.clone();
    let m = boot(machine, BigLock::<Clh, NoStats>::new(2), config, Some(far)).expect("boot");
    m.wait_loaded(Duration::from_secs(60)).expect("built");
    let mut peers = Peers { kv: m.kv.clone(), wire, server, received: HashMap::new(), closed: HashSet::new() };
    let (a, b, c) = (40_001, 40_002, 40_003);
    peers.send(a, &["CLIENT", "ID"]);
    peers.expect(a, ":1\r\n");
    peers.send(b, &["CLIENT", "ID"]);
    peers.expect(b, ":2\r\n");
    peers.send(a, &["SUBSCRIBE", "news"]);
    peers.expect(a, "*3\r\n$9\r\nsubscribe\r\n$4\r\nnews\r\n:1\r\n");
    peers.send(b, &["PUBLISH", "news", "hello"]);
    peers.expect(b, ":1\r\n");
    peers.expect(a, "*3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$5\r\nhello\r\n");
    // A RESP3 subscriber gets pushes; once it closes, it is forgotten.
    peers.send(c, &["HELLO", "3"]);
    peers.send(c, &["SUBSCRIBE", "news"]);
    peers.send(c, &["PING"]);
    peers.send(b, &["PUBSUB", "NUMSUB", "news"]);
    peers.expect(b, "*2\r\n$4\r\nnews\r\n:2\r\n");
    peers.send(b, &["PUBLISH", "news", "all"]);
    peers.expect(b, ":2\r\n");
    peers.expect(a, "*3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$3\r\nall\r\n");
    let t0 = Instant::now();
    while !peers
        .received
        .get(&c)
        .is_some_and(|got| got.ends_with(b">3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$3\r\nall\r\n"))
    {
        assert!(t0.elapsed() < Duration::from_secs(30), "the RESP3 subscriber got {:?}", peers.received.get(&c));
        std::thread::sleep(Duration::from_millis(1));
        peers.pump();
    }
    peers.packet(c, FIN, &[]);
    let t0 = Instant::now();
    loop {
        peers.send(b, &["PUBSUB", "NUMSUB", "news"]);
        peers.expect(b, "*2\r\n$4\r\nnews\r\n:");
        match peers.take(b, 3).as_slice() {
            b"1\r\n" => break,
            b"2\r\n" => assert!(t0.elapsed() < Duration::from_secs(30), "the closed subscriber stays subscribed"),
            other => panic!("NUMSUB answered {other:?}"),
        }
    }
    // CLIENT KILL from B closes A's connection through the stack.
    peers.send(b, &["CLIENT", "KILL", "ID", "1"]);
    peers.expect(b, ":1\r\n");
    peers.expect_closed(a);
    peers.send(b, &["PUBLISH", "news", "nobody"]);
    peers.expect(b, ":0\r\n");
    peers.send(b, &["CLIENT", "LIST"]);
    peers.pump();
    let t0 = Instant::now();
    while !peers.received.get(&b).is_some_and(|got| got.ends_with(b"\n\r\n")) {
        assert!(t0.elapsed() < Duration::from_secs(30), "no CLIENT LIST");
        std::thread::sleep(Duration::from_millis(1));
        peers.pump();
    }
    let list = String::from_utf8(peers.received.remove(&b).unwrap()).unwrap();
    assert_eq!(list.matches("id=").count(), 1, "{list}");
    assert!(list.contains("id=2 addr=?:0 laddr=?:0 fd=-1 name= "), "{list}");
    let kv = m.kv.clone();
    assert_eq!(kv.servers[0].store.lock().unwrap().connected_clients(), 1);
    let violations = m.machine.invariant_violations();
    let faults = m.shutdown().expect("clean shutdown");
    assert!(faults.is_empty(), "faults: {faults:?}");
    assert!(violations.is_empty(), "invariants broken: {violations:?}");
}
