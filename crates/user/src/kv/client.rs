//! A YCSB load client: loads its share of the records, waits for every
//! client to finish loading, then runs its workload through its own network
//! stack, timing every operation (request sent → last reply parsed).
//!
//! Each request is one `Call` to the stack ("send, then give me the
//! replies"); a transaction whose replies arrive in several pieces calls
//! again with nothing to send. Scans and read-modify-writes are several
//! requests, each sent after the previous reply (YCSB's Redis binding).

use std::sync::atomic::Ordering;

use super::system::KvSystem;
use crate::env::Env;
use crate::net::socket::Socket;
use crate::trap::Trap;
use crate::ycsb::{drive, Generator, Op};

/// Largest reply a client accepts, in bytes.
const MAX_REPLY: usize = 64 << 20;

struct Io<'a> {
    sock: Socket,
    port: u16,
    out: Vec<u8>,
    inbuf: Vec<u8>,
    stats: &'a super::system::ClientStats,
}

impl Io<'_> {
    /// Run `op` to the end; whether every reply was the expected one.
    fn transaction<T: Trap>(&mut self, env: &mut Env<T>, op: Op) -> bool {
        let (sock, port, requests) = (self.sock, self.port, &self.stats.requests);
        let done = drive::run(
            op,
            &mut self.out,
            &mut self.inbuf,
            MAX_REPLY,
            |n| {
                requests.fetch_add(n as u64, Ordering::Relaxed);
            },
            |request, inbuf| match sock.send_recv(env, port, request, false) {
                Ok(got) if !got.closed => {
                    sock.incoming(&got, |b| inbuf.extend_from_slice(b));
                    Ok(())
                }
                _ => Err(()),
            },
        );
        match done {
            Ok(t) => t.ok(),
            Err(_) => {
                self.inbuf.clear();
                false
            }
        }
    }
}

/// Client `index`'s program.
pub fn run<T: Trap>(env: &mut Env<T>, kv: &KvSystem, index: usize) {
    let cfg = &kv.config;
    let servers = cfg.server_cores().len();
    let server = index / cfg.clients_per_server.max(1);
    let spec = kv.stacks.get().and_then(|s| s.get(servers + index));
    let spec = spec.unwrap_or_else(|| panic!("client {index} started before the root task built it"));
    let Some(stats) = kv.clients.get(index) else { panic!("no client {index}") };
    let mut io = Io {
        sock: Socket { ep: spec.ep, area: spec.area },
        port: cfg.base_port.wrapping_add(server as u16),
        out: Vec::new(),
        inbuf: Vec::new(),
        stats,
    };
    // Each server's clients load that server's store with every record.
    let (me, peers) = (index % cfg.clients_per_server.max(1), cfg.clients_per_server.max(1));
    // Every server's clients draw their own operations (YCSB seeds by
    // client; the clients of different servers would otherwise repeat each
    // other's streams).
    let mut ycsb = cfg.ycsb;
    ycsb.seed = ycsb.seed.wrapping_add((server as u64) << 32);
    let mut gen = Generator::new(&ycsb, me, peers);
    let keys: Vec<u64> = gen.load_keys().collect();
    for k in keys {
        let op = gen.insert_op(k);
        if !io.transaction(env, op) {
            stats.failed.fetch_add(1, Ordering::Relaxed);
        }
    }
    stats.loaded.store(true, Ordering::Release);
    if kv.loading.fetch_sub(1, Ordering::AcqRel) == 1 {
        kv.run_started_at.store(granule_sync::cycles::now(), Ordering::Release);
    }
    while !kv.loaded() {
        let _ = env.yield_now();
    }
    let mut n: u64 = 0;
    loop {
        if cfg.ops_per_client.is_some_and(|limit| n >= limit) {
            stats.done_at.store(granule_sync::cycles::now(), Ordering::Relaxed);
            stats.done.store(true, Ordering::Release);
            park(env, kv);
        }
        let op = gen.next_op();
        let t0 = granule_sync::cycles::now();
        let ok = io.transaction(env, op);
        let dt = granule_sync::cycles::now().wrapping_sub(t0);
        if !ok {
            stats.failed.fetch_add(1, Ordering::Relaxed);
        }
        let _ = stats.latency.lock().unwrap_or_else(|e| e.into_inner()).record(dt.max(1));
        n += 1;
        stats.ops.store(n, Ordering::Relaxed);
    }
}

/// Block forever (on a notification nobody signals).
fn park<T: Trap>(env: &mut Env<T>, kv: &KvSystem) -> ! {
    loop {
        match kv.park.get() {
            Some(&ntfn) => {
                let _ = env.wait(ntfn);
            }
            None => {
                let _ = env.yield_now();
            }
        }
    }
}
