//! The shared state of a KV system: its configuration, what the root task
//! builds, and the counters the outside world reads.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use crossbeam_utils::CachePadded;
use granule_hosted::nic::Nic;
use granule_kernel::abi::Error;
use granule_sync::lockfree::{MpscQueue, SpscQueue};
use hdrhistogram::Histogram;

use crate::build_status::BuildStatus;
use crate::net::driver::DriverSpec;
use crate::net::packet::PacketPool;
use crate::net::stack::StackSpec;
use crate::resp::Store;
use crate::ycsb;

/// Where the card's cable goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `granule kv`: a loopback network processor on core 0 carries the load
    /// clients' packets to the servers and back.
    Loopback,
    /// `granule serve`: no load clients; the far side is attached by the
    /// caller (TCP sockets).
    External,
}

/// How to build a KV system.
#[derive(Clone, Debug)]
pub struct KvConfig {
    /// Cores of the machine (servers on cores 1.., or on core 0 alone).
    pub cores: usize,
    /// Where the card's far side is.
    pub mode: Mode,
    /// The YCSB workload of the load clients.
    pub ycsb: ycsb::Config,
    /// Load clients per server.
    pub clients_per_server: usize,
    /// Run-phase operations per client (`None`: until shut down).
    pub ops_per_client: Option<u64>,
    /// Largest request a server accepts, in bytes.
    pub max_request: usize,
    /// Port of the first server; server `i` listens on `base_port + i`.
    pub base_port: u16,
    /// Keep each server's log of executed request bytes (tests).
    pub log_requests: bool,
    /// The card's interrupt line.
    pub irq_line: usize,
}

impl KvConfig {
    /// Defaults for `cores` cores in `mode`: YCSB's defaults, two clients
    /// per server, 1 MiB requests, port 6379, IRQ line 63.
    pub fn new(cores: usize, mode: Mode) -> Self {
        Self {
            cores,
            mode,
            ycsb: ycsb::Config::default(),
            clients_per_server: 2,
            ops_per_client: None,
            max_request: 1 << 20,
            base_port: 6379,
            log_requests: false,
            irq_line: 63,
        }
    }

    /// The cores the servers run on.
    pub fn server_cores(&self) -> Vec<usize> {
        if self.cores <= 1 {
            vec![0]
        } else {
            (1..self.cores).collect()
        }
    }

    /// Number of load clients.
    pub fn clients(&self) -> usize {
        match self.mode {
            Mode::Loopback => self.server_cores().len() * self.clients_per_server,
            Mode::External => 0,
        }
    }
}

/// One load client's published counters.
#[derive(Debug)]
pub struct ClientStats {
    /// Run-phase operations completed.
    pub ops: AtomicU64,
    /// Operations that got an error or an unexpected reply.
    pub failed: AtomicU64,
    /// Requests (Redis commands) sent, load phase included.
    pub requests: AtomicU64,
    /// Load phase finished.
    pub loaded: AtomicBool,
    /// Run phase finished (`ops_per_client` reached).
    pub done: AtomicBool,
    /// Cycle counter when the run phase finished.
    pub done_at: AtomicU64,
    /// Latency of run-phase operations, in cycles (locked only briefly, never
    /// across a system call).
    pub latency: Mutex<Histogram<u64>>,
}

impl Default for ClientStats {
    fn default() -> Self {
        Self {
            ops: AtomicU64::new(0),
            failed: AtomicU64::new(0),
            requests: AtomicU64::new(0),
            loaded: AtomicBool::new(false),
            done: AtomicBool::new(false),
            done_at: AtomicU64::new(0),
            latency: Mutex::new(new_histogram()),
        }
    }
}

/// An empty latency histogram (cycles, 3 significant digits).
pub fn new_histogram() -> Histogram<u64> {
    Histogram::new(3).unwrap_or_else(|_| unreachable!("3 significant digits is valid"))
}

/// One KV server's state.
#[derive(Debug)]
pub struct ServerState {
    /// Its store (locked by the server for each batch it executes, never
    /// across a system call; readers lock it after the run).
    pub store: Mutex<Store>,
    /// Requests' bytes executed, with their connection, in order (only with
    /// `log_requests`).
    pub log: Mutex<Vec<(u16, Vec<u8>)>>,
    /// Batches of requests executed (one per receive).
    pub batches: AtomicU64,
    /// Connections seen.
    pub connections: AtomicU64,
    /// When the server wants to be woken though no request came (a client
    /// blocked with a timeout), in [`KvSystem::now_ms`] time; `u64::MAX`:
    /// never. The card's far side reads it and sends the server's port a
    /// `TICK` packet once that time has passed (see `crate::net::packet`).
    pub wake_at_ms: AtomicU64,
}

/// The system's shared state: read by the outside world, built by the root
/// task, used by every thread.
#[derive(Debug)]
pub struct KvSystem {
    /// How it was built.
    pub config: KvConfig,
    /// The virtual card.
    pub nic: Arc<Nic>,
    /// Packets from the stacks to the driver.
    pub to_driver: Arc<MpscQueue>,
    /// Each stack's receive queue (servers' stacks first, then clients').
    pub stack_queues: Vec<Arc<SpscQueue>>,
    /// Packet buffers (set by the root task once their frame is mapped).
    pub pool: OnceLock<Arc<PacketPool>>,
    /// The driver's parameters (set by the root task).
    pub driver: OnceLock<DriverSpec>,
    /// Each stack's parameters (set by the root task).
    pub stacks: OnceLock<Vec<StackSpec>>,
    /// A notification nobody signals: finished clients wait on it.
    pub park: OnceLock<granule_kernel::Word>,
    /// Per server.
    pub servers: Vec<ServerState>,
    /// Per client.
    pub clients: Vec<CachePadded<ClientStats>>,
    /// Clients still loading; the run phase starts when it reaches 0.
    pub loading: AtomicU64,
    /// Cycle counter when the run phase started.
    pub run_started_at: AtomicU64,
    pub(crate) status: BuildStatus,
    pub(crate) epoch: Instant,
    /// The Unix time at `epoch`, in milliseconds.
    epoch_unix_ms: u64,
}

/// Descriptors per ring and queue.
pub const RING_SLOTS: usize = 4096;

impl KvSystem {
    /// The shared state of a system built with `config`, whose card
    /// interrupts through `nic`.
    pub fn new(config: KvConfig, nic: Arc<Nic>) -> Self {
        let servers = config.server_cores().len();
        let clients = config.clients();
        Self {
            nic,
            to_driver: Arc::new(MpscQueue::new(RING_SLOTS)),
            stack_queues: (0..servers + clients).map(|_| Arc::new(SpscQueue::new(RING_SLOTS))).collect(),
            pool: OnceLock::new(),
            driver: OnceLock::new(),
            stacks: OnceLock::new(),
            park: OnceLock::new(),
            servers: (0..servers)
                .map(|_| ServerState {
                    store: Mutex::new(Store::new()),
                    log: Mutex::new(Vec::new()),
                    batches: AtomicU64::new(0),
                    connections: AtomicU64::new(0),
                    wake_at_ms: AtomicU64::new(u64::MAX),
                })
                .collect(),
            clients: (0..clients).map(|_| CachePadded::new(ClientStats::default())).collect(),
            loading: AtomicU64::new(clients as u64),
            run_started_at: AtomicU64::new(0),
            status: BuildStatus::default(),
            epoch: Instant::now(),
            epoch_unix_ms: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64),
            config,
        }
    }

    /// The stores' clock: Unix time in milliseconds, as Redis's (`EXPIREAT`
    /// and `TIME` take and give Unix times), read as the wall clock at the
    /// system's start plus the monotonic time since, so it never goes back.
    pub fn now_ms(&self) -> u64 {
        self.epoch_unix_ms + self.epoch.elapsed().as_millis() as u64
    }

    /// Whether the root task built everything.
    pub fn is_ready(&self) -> bool {
        self.status.is_ready()
    }

    /// The error that stopped the root task, if any.
    pub fn setup_error(&self) -> Option<Error> {
        self.status.error()
    }

    /// Whether every client finished loading.
    pub fn loaded(&self) -> bool {
        self.loading.load(Ordering::Acquire) == 0
    }

    /// Run-phase operations of all clients so far.
    pub fn ops(&self) -> u64 {
        self.clients.iter().map(|c| c.ops.load(Ordering::Relaxed)).sum()
    }

    /// Failed operations of all clients so far.
    pub fn failed(&self) -> u64 {
        self.clients.iter().map(|c| c.failed.load(Ordering::Relaxed)).sum()
    }

    /// Whether every client finished its run phase.
    pub fn all_done(&self) -> bool {
        self.clients.iter().all(|c| c.done.load(Ordering::Acquire))
    }

    /// The clients' latency histograms merged (cycles).
    pub fn latency(&self) -> Histogram<u64> {
        let mut h = new_histogram();
        for c in &self.clients {
            let l = c.latency.lock().unwrap_or_else(|e| e.into_inner());
            let _ = h.add(&*l);
        }
        h
    }

    /// Empty every client's latency histogram (start of a window).
    pub fn reset_latency(&self) {
        for c in &self.clients {
            c.latency.lock().unwrap_or_else(|e| e.into_inner()).reset();
        }
    }
}
