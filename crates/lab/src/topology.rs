//! The CPU topology this process runs on: sockets, last-level-cache (LLC)
//! domains and SMT siblings, read from `/sys/devices/system/cpu`, and the
//! order in which experiments take CPUs.
//!
//! **Fill order.** Cores are taken one LLC domain at a time, then one socket
//! at a time, SMT siblings last: first one hardware thread of every physical
//! core, domain by domain and socket by socket, then the second thread of
//! every core in the same order, and so on. A scaling curve therefore crosses
//! each LLC domain and socket boundary exactly once, at a core count the
//! machine record names ([`Boundaries`]), and never mixes in an SMT sibling
//! while a physical core is still free.
//!
//! Everything is parsed by pure functions from a root directory, so tests
//! feed fake trees. A missing piece degrades to one socket, one LLC domain per
//! socket and no SMT, and [`Topology::unknown`] says what was assumed.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

/// Where the sysfs CPU tree is on Linux.
pub const SYSFS_CPU: &str = "/sys/devices/system/cpu";

/// How many CPUs a socket has in a synthetic topology ([`Topology::synthetic`]).
pub const SYNTHETIC_SOCKET_CPUS: usize = 64;
/// How many CPUs an LLC domain has in a synthetic topology.
pub const SYNTHETIC_LLC_CPUS: usize = 16;

/// Where one CPU sits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Place {
    /// The CPU's number (as the OS counts).
    pub cpu: usize,
    /// Its socket (`physical_package_id`).
    pub socket: usize,
    /// Its LLC domain: the lowest CPU sharing its last-level cache.
    pub llc: usize,
    /// Its physical core: the lowest CPU among its SMT siblings.
    pub core: usize,
}

/// The topology of the CPUs this process may run on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Topology {
    /// `sysfs` (read from the OS) or `synthetic` (planned for a machine that
    /// is not this one).
    pub source: &'static str,
    /// CPUs of each socket, sockets in fill order, each list ascending.
    pub sockets: Vec<Vec<usize>>,
    /// CPUs of each LLC domain, domains in fill order, each list ascending.
    pub llc_domains: Vec<Vec<usize>>,
    /// The SMT sibling groups (physical cores with more than one hardware
    /// thread), in fill order; empty without SMT.
    pub smt_groups: Vec<Vec<usize>>,
    /// Every CPU, in the order experiments take them.
    pub fill_order: Vec<usize>,
    /// Where the fill order completes a domain or socket.
    pub boundaries: Boundaries,
    /// What could not be read, and what was assumed instead.
    pub unknown: Vec<String>,
}

/// Core counts at which the fill order completes a part of the machine: the
/// first `n` CPUs of the fill order hold whole LLC domains (`llc`) or whole
/// sockets (`socket`), one hardware thread per physical core. With SMT,
/// `smt_from` is the first core count that uses a sibling thread.
///
/// Figures draw these as vertical marks: see [`Boundaries::marks`] for the
/// ones inside a measured range (the report reads them from the machine
/// record's [`TopologyRecord`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Boundaries {
    /// Core counts completing an LLC domain (ascending; the last equals the
    /// number of physical cores).
    pub llc: Vec<usize>,
    /// Core counts completing a socket (ascending).
    pub socket: Vec<usize>,
    /// The first core count that runs on an SMT sibling (none without SMT).
    pub smt_from: Option<usize>,
}

/// One boundary to draw on a core-count axis.
#[allow(dead_code)] // for the report's figures
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mark {
    /// The line goes just after this core count (between `cores` and
    /// `cores + 1`).
    pub cores: usize,
    /// `socket`, `llc` or `smt` (a socket boundary is also an LLC one; only
    /// `socket` is given then). For `smt` the line goes just before
    /// `cores + 1`, the first count using a sibling.
    pub kind: &'static str,
}

impl Boundaries {
    /// The boundaries strictly inside `1..max_cores` (a boundary at the last
    /// core is the machine's edge, not a line to draw), ascending, one per
    /// core count: a socket boundary hides the LLC one at the same count.
    pub fn marks(&self, max_cores: usize) -> Vec<Mark> {
        let mut out: BTreeMap<usize, &'static str> = BTreeMap::new();
        for &c in &self.llc {
            out.insert(c, "llc");
        }
        for &c in &self.socket {
            out.insert(c, "socket");
        }
        if let Some(s) = self.smt_from {
            out.entry(s.saturating_sub(1)).or_insert("smt");
        }
        out.into_iter().filter(|&(c, _)| c >= 1 && c < max_cores).map(|(cores, kind)| Mark { cores, kind }).collect()
    }

    /// Every boundary core count (LLC, socket, and the last physical core
    /// before SMT), ascending, without repeats.
    pub fn counts(&self) -> Vec<usize> {
        let mut all: Vec<usize> =
            self.llc.iter().chain(&self.socket).copied().chain(self.smt_from.map(|s| s.saturating_sub(1))).collect();
        all.retain(|&c| c >= 1);
        all.sort_unstable();
        all.dedup();
        all
    }
}

/// The topology as the machine record holds it: CPU lists in the kernel's
/// `0-3,8-11` notation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
// A blank for the report's hand-made test records (`suite::records::testing`).
#[cfg_attr(test, derive(Default))]
pub struct TopologyRecord {
    /// `sysfs` or `synthetic`.
    pub source: String,
    /// CPUs of each socket.
    pub sockets: Vec<String>,
    /// CPUs of each LLC domain.
    pub llc_domains: Vec<String>,
    /// SMT sibling groups (empty without SMT).
    pub smt_groups: Vec<String>,
    /// The order experiments take CPUs (runs in that order).
    pub fill_order: String,
    /// Where the fill order completes an LLC domain and a socket.
    pub boundaries: Boundaries,
    /// What could not be read, and what was assumed.
    pub unknown: Vec<String>,
}

/// Parse a kernel CPU list such as `0-3,8,10-11` (newline and blanks
/// allowed); `None` if malformed.
pub fn parse_cpulist(text: &str) -> Option<Vec<usize>> {
    let text = text.trim();
    let mut out = Vec::new();
    if text.is_empty() {
        return Some(out);
    }
    for part in text.split(',') {
        let part = part.trim();
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
                if a > b || b - a > 1 << 16 {
                    return None;
                }
                out.extend(a..=b);
            }
            None => out.push(part.parse().ok()?),
        }
    }
    Some(out)
}

/// Write CPUs as a kernel CPU list, keeping their order: runs of consecutive
/// ascending numbers become `a-b` (`[0,1,2,3,8]` → `0-3,8`; `[4,0]` → `4,0`).
pub fn format_cpulist(cpus: &[usize]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(if j > i { format!("{}-{}", cpus[i], cpus[j]) } else { cpus[i].to_string() });
        i = j + 1;
    }
    parts.join(",")
}

fn read_trimmed(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok().map(|s| s.trim().to_string())
}

/// The CPUs sharing `cpu`'s last-level cache: the `shared_cpu_list` of its
/// highest-level data or unified cache under `cache/index*/`.
fn llc_of(root: &Path, cpu: usize) -> Option<Vec<usize>> {
    let dir = root.join(format!("cpu{cpu}/cache"));
    let mut best: Option<(u32, Vec<usize>)> = None;
    for entry in std::fs::read_dir(&dir).ok()?.flatten() {
        let name = entry.file_name();
        if !name.to_string_lossy().starts_with("index") {
            continue;
        }
        let p = entry.path();
        if read_trimmed(&p.join("type")).as_deref() == Some("Instruction") {
            continue;
        }
        let Some(level) = read_trimmed(&p.join("level")).and_then(|l| l.parse::<u32>().ok()) else { continue };
        let Some(shared) = read_trimmed(&p.join("shared_cpu_list")).and_then(|s| parse_cpulist(&s)) else {
            continue;
        };
        if shared.is_empty() {
            continue;
        }
        if best.as_ref().map_or(true, |(l, _)| level > *l) {
            best = Some((level, shared));
        }
    }
    best.map(|(_, s)| s)
}

impl Topology {
    /// Read the topology of `allowed` CPUs from a sysfs CPU tree at `root`
    /// (normally [`SYSFS_CPU`]).
    pub fn read(root: &Path, allowed: &[usize]) -> Self {
        let mut cpus: Vec<usize> = allowed.to_vec();
        cpus.sort_unstable();
        cpus.dedup();
        let mut unknown = Vec::new();
        let topo = |cpu: usize, file: &str| read_trimmed(&root.join(format!("cpu{cpu}/topology/{file}")));

        let sockets: Option<Vec<usize>> =
            cpus.iter().map(|&c| topo(c, "physical_package_id").and_then(|s| s.parse().ok())).collect();
        let sockets = sockets.unwrap_or_else(|| {
            unknown.push("sockets: no physical_package_id for some CPU; one socket assumed".into());
            vec![0; cpus.len()]
        });

        let siblings: Option<Vec<usize>> = cpus
            .iter()
            .map(|&c| topo(c, "thread_siblings_list").and_then(|s| parse_cpulist(&s)).and_then(|l| l.into_iter().min()))
            .collect();
        let cores = match siblings {
            Some(s) => s,
            None => {
                // Without sibling lists, CPUs of one socket with one core_id
                // are one physical core's threads.
                let ids: Option<Vec<usize>> =
                    cpus.iter().map(|&c| topo(c, "core_id").and_then(|s| s.parse().ok())).collect();
                match ids {
                    Some(ids) => {
                        let mut first: BTreeMap<(usize, usize), usize> = BTreeMap::new();
                        for (i, &c) in cpus.iter().enumerate() {
                            first.entry((sockets[i], ids[i])).or_insert(c);
                        }
                        (0..cpus.len()).map(|i| first[&(sockets[i], ids[i])]).collect()
                    }
                    None => {
                        unknown.push("SMT: no thread_siblings_list or core_id for some CPU; no SMT assumed".into());
                        cpus.clone()
                    }
                }
            }
        };

        let llcs: Option<Vec<usize>> =
            cpus.iter().map(|&c| llc_of(root, c).and_then(|l| l.into_iter().min())).collect();
        let llcs = llcs.unwrap_or_else(|| {
            unknown.push("LLC: no cache/index*/shared_cpu_list for some CPU; one LLC domain per socket assumed".into());
            sockets.iter().map(|&s| usize::MAX - s).collect()
        });

        let places: Vec<Place> =
            (0..cpus.len()).map(|i| Place { cpu: cpus[i], socket: sockets[i], llc: llcs[i], core: cores[i] }).collect();
        Self::from_places("sysfs", &places, unknown)
    }

    /// This process's topology: the CPUs it may run on, read from
    /// [`SYSFS_CPU`] once per process.
    pub fn detect() -> &'static Self {
        static TOPOLOGY: OnceLock<Topology> = OnceLock::new();
        TOPOLOGY.get_or_init(|| {
            let mut allowed: Vec<usize> =
                core_affinity::get_core_ids().unwrap_or_default().into_iter().map(|c| c.id).collect();
            if allowed.is_empty() {
                allowed = (0..std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)).collect();
            }
            Self::read(Path::new(SYSFS_CPU), &allowed)
        })
    }

    /// A machine of `cpus` CPUs that is not this one: one socket per
    /// [`SYNTHETIC_SOCKET_CPUS`], one LLC domain per [`SYNTHETIC_LLC_CPUS`],
    /// no SMT.
    pub fn synthetic(cpus: usize) -> Self {
        let places: Vec<Place> = (0..cpus.max(1))
            .map(|c| Place {
                cpu: c,
                socket: c / SYNTHETIC_SOCKET_CPUS,
                llc: c / SYNTHETIC_LLC_CPUS * SYNTHETIC_LLC_CPUS,
                core: c,
            })
            .collect();
        let unknown = vec![format!(
            "synthetic: one socket per {SYNTHETIC_SOCKET_CPUS} CPUs, one LLC domain per {SYNTHETIC_LLC_CPUS}, no SMT"
        )];
        Self::from_places("synthetic", &places, unknown)
    }

    /// Group `places` into sockets, domains and cores and derive the fill
    /// order and its boundaries. Sockets, domains within a socket, and cores
    /// within a domain are ordered by their lowest CPU.
    pub fn from_places(source: &'static str, places: &[Place], unknown: Vec<String>) -> Self {
        // socket -> domain -> core -> threads, each keyed by its lowest CPU.
        type Cores = BTreeMap<usize, Vec<usize>>;
        let mut tree: BTreeMap<usize, BTreeMap<(usize, usize), Cores>> = BTreeMap::new();
        let mut socket_key: BTreeMap<usize, usize> = BTreeMap::new();
        for p in places {
            let k = socket_key.entry(p.socket).or_insert(p.cpu);
            *k = (*k).min(p.cpu);
        }
        let mut domain_key: BTreeMap<(usize, usize), usize> = BTreeMap::new();
        for p in places {
            let k = domain_key.entry((p.socket, p.llc)).or_insert(p.cpu);
            *k = (*k).min(p.cpu);
        }
        for p in places {
            let threads = tree
                .entry(socket_key[&p.socket])
                .or_default()
                .entry((domain_key[&(p.socket, p.llc)], p.llc))
                .or_default()
                .entry(p.core)
                .or_default();
            threads.push(p.cpu);
        }
        let mut sockets = Vec::new();
        let mut llc_domains = Vec::new();
        let mut smt_groups = Vec::new();
        let mut first_pass = Vec::new();
        let mut boundaries = Boundaries::default();
        let mut most_threads = 0;
        for domains in tree.values_mut() {
            let mut socket_cpus = Vec::new();
            for cores in domains.values_mut() {
                let mut domain_cpus = Vec::new();
                for threads in cores.values_mut() {
                    threads.sort_unstable();
                    first_pass.push(threads[0]);
                    most_threads = most_threads.max(threads.len());
                    domain_cpus.extend(threads.iter().copied());
                    if threads.len() > 1 {
                        smt_groups.push(threads.clone());
                    }
                }
                boundaries.llc.push(first_pass.len());
                domain_cpus.sort_unstable();
                socket_cpus.extend(domain_cpus.iter().copied());
                llc_domains.push(domain_cpus);
            }
            boundaries.socket.push(first_pass.len());
            socket_cpus.sort_unstable();
            sockets.push(socket_cpus);
        }
        let mut fill_order = first_pass;
        let physical = fill_order.len();
        for k in 1..most_threads {
            for domains in tree.values() {
                for cores in domains.values() {
                    fill_order.extend(cores.values().filter_map(|t| t.get(k)));
                }
            }
        }
        if fill_order.len() > physical {
            boundaries.smt_from = Some(physical + 1);
        }
        Self { source, sockets, llc_domains, smt_groups, fill_order, boundaries, unknown }
    }

    /// The number of CPUs.
    pub fn cpus(&self) -> usize {
        self.fill_order.len()
    }

    /// The record form, for the machine record.
    pub fn record(&self) -> TopologyRecord {
        let lists = |v: &[Vec<usize>]| v.iter().map(|c| format_cpulist(c)).collect();
        TopologyRecord {
            source: self.source.to_string(),
            sockets: lists(&self.sockets),
            llc_domains: lists(&self.llc_domains),
            smt_groups: lists(&self.smt_groups),
            fill_order: format_cpulist(&self.fill_order),
            boundaries: self.boundaries.clone(),
            unknown: self.unknown.clone(),
        }
    }

    /// One line: sockets, LLC domains, SMT, where the boundaries fall.
    pub fn describe(&self) -> String {
        let smt = if self.smt_groups.is_empty() {
            "no SMT".to_string()
        } else {
            format!("SMT siblings from core {}", self.boundaries.smt_from.unwrap_or(0))
        };
        format!(
            "{} CPUs: {} socket(s), {} LLC domain(s), {smt}; LLC boundaries at {:?}, socket boundaries at {:?}",
            self.cpus(),
            self.sockets.len(),
            self.llc_domains.len(),
            self.boundaries.llc,
            self.boundaries.socket
        )
    }
}

#[cfg(test)]
mod tests;
