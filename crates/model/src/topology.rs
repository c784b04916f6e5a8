//! Where the cores are: the one-way cache-line transfer latency between
//! every ordered pair of cores, which is what a lock hand-off costs.
//!
//! The seeds found that the big lock's hold time is dominated by moving the
//! lock's cache line (and the kernel lines it guards) from the releasing
//! core to the acquiring one (seed 001 §5.1.3): 164 cycles held on one core,
//! about 300 within a socket, about 600 across sockets. A topology gives the
//! simulator that cost per pair. The simulator's `n` cores are the first `n`
//! of the topology, in its order.
//!
//! Presets, from seed 001 Table 1 (cycles; the "L1" row, since a lock line
//! that was just written sits modified in the releaser's L1):
//!
//! * [`Topology::x86_two_socket`] — the seeds' Dell R630: two Xeon E5-2683 v3
//!   (14 cores, 2 hardware threads each, 2.0 GHz), 56 hardware threads.
//!   Ordered as the seeds' Figure 4 counts them: the 14 cores of socket 0,
//!   then the 14 of socket 1, then the second hardware thread of each core in
//!   the same order. Hyper-thread siblings share the L1 (4 cycles), cores of
//!   one socket are 115 cycles apart, cores of different sockets 218.
//! * [`Topology::arm_quad`] — the seeds' Sabre Lite (i.MX 6Q, four
//!   Cortex-A9 cores at 1 GHz, shared L2): 17 cycles between any two cores.
//! * [`Topology::uniform`] — `n` cores equally far apart (0 for the
//!   zero-hand-off validation against the analytic model).
//! * [`Topology::from_pairs`] — a measured matrix (`granule info`'s
//!   `core_latency` records for this machine).

use crate::error::{non_negative, Error};

/// One-way transfer latency between every ordered pair of cores.
#[derive(Clone, Debug, PartialEq)]
pub struct Topology {
    name: String,
    n: usize,
    /// Row-major `n × n`, `latency[from * n + to]`; the diagonal is 0.
    latency: Vec<f64>,
    ghz: Option<f64>,
}

/// Seed 001 Table 1, x86 L1 row: same core (hyper-thread sibling),
/// intra-socket, inter-socket.
const X86_LOCAL: f64 = 4.0;
const X86_INTRA: f64 = 115.0;
const X86_INTER: f64 = 218.0;
/// Seed 001 Table 1, ARM L1 row, intra-socket.
const ARM_INTRA: f64 = 17.0;

/// Most cores a topology may have: its latency matrix holds `n²` numbers
/// (128 MiB at this bound), and the simulator keeps per-core state.
pub const MAX_CORES: usize = 4096;

impl Topology {
    /// A topology of `1 ≤ n ≤` [`MAX_CORES`] cores whose latency from `i` to `j` is
    /// `f(i, j)` (`f(i, i)` is ignored: a core hands off to itself for free).
    pub fn from_fn(
        name: &str,
        n: usize,
        ghz: Option<f64>,
        mut f: impl FnMut(usize, usize) -> f64,
    ) -> Result<Self, Error> {
        if n == 0 {
            return Err(Error::Topology(format!("{name}: a topology needs at least one core")));
        }
        if n > MAX_CORES {
            return Err(Error::Topology(format!("{name}: {n} cores; a topology has at most {MAX_CORES}")));
        }
        let mut latency = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                if i != j {
                    let l = f(i, j);
                    non_negative("a core-to-core latency", l)
                        .map_err(|e| Error::Topology(format!("{name}, {i} → {j}: {e}")))?;
                    latency[i * n + j] = l;
                }
            }
        }
        Ok(Self { name: name.to_string(), n, latency, ghz })
    }

    /// `n` cores, every distinct pair `latency` apart.
    pub fn uniform(n: usize, latency: f64) -> Result<Self, Error> {
        Self::from_fn(&format!("uniform:{n}:{latency}"), n, None, |_, _| latency)
    }

    /// The seeds' two-socket Xeon (2 × 14 cores × 2 threads, 2.0 GHz).
    pub fn x86_two_socket() -> Self {
        // Index i: thread slot i / 28, socket (i % 28) / 14, core i % 14.
        let place = |i: usize| ((i % 28) / 14, i % 14);
        Self::from_fn("x86-2s", 56, Some(2.0), |i, j| {
            let ((si, ci), (sj, cj)) = (place(i), place(j));
            if si != sj {
                X86_INTER
            } else if ci == cj {
                X86_LOCAL
            } else {
                X86_INTRA
            }
        })
        .unwrap_or_else(|e| unreachable!("preset is well formed: {e}"))
    }

    /// The seeds' quad-core Cortex-A9 (1 GHz).
    pub fn arm_quad() -> Self {
        Self::from_fn("arm-quad", 4, Some(1.0), |_, _| ARM_INTRA)
            .unwrap_or_else(|e| unreachable!("preset is well formed: {e}"))
    }

    /// A preset by name: `x86-2s`, `arm-quad`, or `uniform:N:L` (N cores, L
    /// apart). (`this-machine` is measured by the `granule` command and
    /// built with [`Topology::from_pairs`].)
    pub fn preset(name: &str) -> Result<Self, Error> {
        match name {
            "x86-2s" | "x86" => Ok(Self::x86_two_socket()),
            "arm-quad" | "arm" => Ok(Self::arm_quad()),
            _ => {
                if let Some(rest) = name.strip_prefix("uniform:") {
                    let bad = || Error::Topology(format!("`{name}`: write uniform:CORES:LATENCY, e.g. uniform:32:0"));
                    let (n, l) = rest.split_once(':').ok_or_else(bad)?;
                    let n: usize = n.trim().parse().map_err(|_| bad())?;
                    let l: f64 = l.trim().parse().map_err(|_| bad())?;
                    return Self::uniform(n, l);
                }
                Err(Error::Topology(format!(
                    "unknown topology `{name}`; presets: x86-2s, arm-quad, uniform:CORES:LATENCY, this-machine"
                )))
            }
        }
    }

    /// A measured topology from `(from, to, one-way latency)` triples whose
    /// `from`/`to` are CPU ids (any numbering): the cores are the ids seen,
    /// in increasing order. A pair measured in one direction only is taken
    /// as symmetric; a pair measured in neither is an error.
    pub fn from_pairs(name: &str, pairs: &[(usize, usize, f64)], ghz: Option<f64>) -> Result<Self, Error> {
        let mut ids: Vec<usize> = pairs.iter().flat_map(|&(f, t, _)| [f, t]).collect();
        ids.sort_unstable();
        ids.dedup();
        let index = |id: usize| ids.binary_search(&id).unwrap_or_else(|_| unreachable!("every id was collected"));
        let n = ids.len();
        if n > MAX_CORES {
            return Err(Error::Topology(format!("{name}: {n} CPUs; a topology has at most {MAX_CORES}")));
        }
        let mut m: Vec<Option<f64>> = vec![None; n * n];
        for &(f, t, l) in pairs {
            if f != t {
                m[index(f) * n + index(t)] = Some(l);
            }
        }
        let mut missing = None;
        let topo = Self::from_fn(name, n, ghz, |i, j| {
            m[i * n + j].or(m[j * n + i]).unwrap_or_else(|| {
                missing.get_or_insert((ids[i], ids[j]));
                0.0
            })
        })?;
        if n < 2 {
            return Err(Error::Topology(format!("{name}: latencies between at least two CPUs are needed")));
        }
        if let Some((a, b)) = missing {
            return Err(Error::Topology(format!("{name}: no latency measured between CPUs {a} and {b}")));
        }
        Ok(topo)
    }

    /// Its name (`x86-2s`, `arm-quad`, `uniform:N:L`, or as given).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// How many cores it has.
    pub fn cores(&self) -> usize {
        self.n
    }

    /// The clock rate the latencies are counted in, if known (GHz).
    pub fn ghz(&self) -> Option<f64> {
        self.ghz
    }

    /// One-way latency from core `from` to core `to` (0 from a core to itself).
    pub fn latency(&self, from: usize, to: usize) -> f64 {
        self.latency[from * self.n + to]
    }

    /// The mean latency between distinct cores among the first `n`.
    pub fn mean_latency(&self, n: usize) -> f64 {
        let n = n.min(self.n);
        if n < 2 {
            return 0.0;
        }
        let sum: f64 = (0..n).flat_map(|i| (0..n).map(move |j| (i, j))).map(|(i, j)| self.latency(i, j)).sum();
        sum / (n * (n - 1)) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn x86_preset_fills_socket_zero_first() {
        let t = Topology::x86_two_socket();
        assert_eq!(t.cores(), 56);
        assert_eq!(t.ghz(), Some(2.0));
        assert_eq!(t.latency(0, 0), 0.0);
        assert_eq!(t.latency(0, 13), X86_INTRA, "first 14 cores: one socket");
        assert_eq!(t.latency(0, 14), X86_INTER, "core 14 is on the second socket");
        assert_eq!(t.latency(0, 28), X86_LOCAL, "thread 28 is core 0's sibling");
        assert_eq!(t.latency(14, 42), X86_LOCAL);
        assert_eq!(t.latency(3, 45), X86_INTER);
        assert_eq!(t.mean_latency(14), X86_INTRA);
        assert!(t.mean_latency(28) > X86_INTRA && t.mean_latency(28) < X86_INTER);
    }

    #[test]
    fn presets_by_name() {
        assert_eq!(Topology::preset("arm-quad").unwrap(), Topology::arm_quad());
        assert_eq!(Topology::arm_quad().latency(1, 3), ARM_INTRA);
        let u = Topology::preset("uniform:8:50").unwrap();
        assert_eq!((u.cores(), u.latency(2, 5), u.latency(5, 5)), (8, 50.0, 0.0));
        for bad in
            ["uniform:8", "uniform:x:1", "uniform:4:-1", "uniform:4:NaN", "mars", "uniform:0:1", "uniform:4097:1"]
        {
            assert!(Topology::preset(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn measured_pairs_become_a_matrix() {
        let t = Topology::from_pairs("m", &[(4, 6, 100.0), (6, 4, 110.0), (4, 9, 300.0)], Some(2.5)).unwrap_err();
        assert!(t.to_string().contains("between CPUs 6 and 9"), "{t}");
        let t = Topology::from_pairs("m", &[(4, 6, 100.0), (6, 4, 110.0), (4, 9, 300.0), (9, 6, 200.0)], None).unwrap();
        assert_eq!(t.cores(), 3);
        assert_eq!((t.latency(0, 1), t.latency(1, 0)), (100.0, 110.0));
        assert_eq!((t.latency(0, 2), t.latency(2, 0)), (300.0, 300.0), "one direction is taken as symmetric");
        assert_eq!(t.latency(2, 1), 200.0);
        assert!(Topology::from_pairs("m", &[], None).is_err());
    }
}
