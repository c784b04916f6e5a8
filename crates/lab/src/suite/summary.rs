//! The plain-language summary: what the numbers say, each sentence quoting
//! the records (by `results.jsonl` line) it rests on.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::kv::{self, Field, Run, LINUX, SEED_USER_CYCLES_CORE0, SEED_USER_CYCLES_SERVERS};
use super::records::Records;
use super::units::{count, number, quantity};
use crate::cmd::kv::record::KvRecord;
use crate::cmd::model::fit::records::Peak;
use crate::stats::median;

/// One finding and the lines of the records it quotes.
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    /// The sentence.
    pub text: String,
    /// `results.jsonl` lines it quotes.
    pub lines: Vec<usize>,
}

/// A measured extra cost beside the floor its atomic instructions set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FloorCheck {
    /// At most 1.5 × the floor.
    Within,
    /// More than 1.5 × the floor: the rest is the lock's own bookkeeping.
    Beyond,
    /// Below the floor, or negative: the difference is within this run's
    /// noise, and no target is claimed met.
    BelowNoise,
}

impl FloorCheck {
    /// How a table says it.
    pub fn words(self) -> &'static str {
        match self {
            FloorCheck::Within => "yes",
            FloorCheck::Beyond => "no",
            FloorCheck::BelowNoise => "below the noise of this run",
        }
    }
}

/// `extra` cycles against an atomic `floor` (`meets`: the record's own
/// verdict, `extra` ≤ 1.5 × `floor`). A measurement below its floor cannot
/// meet a target the floor sets: it is noise.
pub fn floor_check(extra: f64, floor: f64, meets: Option<bool>) -> FloorCheck {
    if extra < 0.0 || extra < floor {
        return FloorCheck::BelowNoise;
    }
    match meets {
        Some(true) => FloorCheck::Within,
        Some(false) => FloorCheck::Beyond,
        None if extra <= 1.5 * floor => FloorCheck::Within,
        None => FloorCheck::Beyond,
    }
}

/// Single-core findings: what each regime adds per system call.
pub fn ipc(rs: &Records) -> Vec<Finding> {
    let rows = rs.ipc_runs();
    let Some(none) = rows.iter().find(|r| r.regime == "none") else { return Vec::new() };
    let base = none.round_trip_cycles_mean;
    let mut out = vec![Finding {
        text: format!("With no lock at all, one IPC round trip (Call + ReplyRecv) costs {base:.0} cycles on one core."),
        lines: vec![none.line],
    }];
    // One sentence for every regime: its extra cycles, and whether they are
    // within 1.5× of what its atomic instructions cost.
    let (mut within, mut beyond, mut noise, mut lines) = (Vec::new(), Vec::new(), Vec::new(), vec![none.line]);
    for r in rows.iter().filter(|r| r.regime != "none") {
        let (regime, Some(extra)) = (&r.regime, r.extra_cycles_per_call) else { continue };
        let derived = if r.atomics_source.as_deref() == Some("derived") { " derived" } else { "" };
        let atoms = match (r.atomics_per_call, r.atomic_floor_cycles) {
            (Some(n), Some(f)) => format!(" ({n:.1} atomics, a{derived} floor of {})", quantity(f, "cycles")),
            _ => String::new(),
        };
        let part = format!("`{regime}` {}{atoms}", quantity(extra, "cycles"));
        let check = match r.atomic_floor_cycles {
            Some(f) => floor_check(extra, f, r.meets_target),
            None if r.meets_target == Some(false) => FloorCheck::Beyond,
            None => FloorCheck::Within,
        };
        match check {
            FloorCheck::Within => within.push(part),
            FloorCheck::Beyond => beyond.push(part),
            FloorCheck::BelowNoise => noise.push(part),
        }
        lines.push(r.line);
    }
    let mut text = String::new();
    if !within.is_empty() {
        text = format!(
            "Within 1.5× of what their atomic instructions cost uncontended, per system call: {}.",
            within.join(", ")
        );
    }
    if !beyond.is_empty() {
        let _ = write!(
            text,
            "{}Beyond it, the rest being their own bookkeeping: {}.",
            if text.is_empty() { "" } else { " " },
            beyond.join(", ")
        );
    }
    if !noise.is_empty() {
        let _ = write!(
            text,
            "{}Below their floor, so within the noise of this run (no target claimed): {}.",
            if text.is_empty() { "" } else { " " },
            noise.join(", ")
        );
    }
    if !text.is_empty() {
        out.push(Finding { text, lines });
    }
    out
}

/// Multicore findings: each regime's 2-core (or largest) speed-up at each
/// delay, from medians of the runs.
pub fn scaling(rs: &Records) -> Vec<Finding> {
    // (regime, delay) → cores → (throughputs, lines)
    type Points = BTreeMap<usize, (Vec<f64>, Vec<usize>)>;
    let mut by: BTreeMap<(String, u64), Points> = BTreeMap::new();
    for r in rs.scale.of("scale") {
        let (d, c, t) = (r.delay_cycles, r.cores, r.round_trips_per_sec);
        // A delay or core count no run can have is left out.
        if !(d <= 1_000_000_000_000 && (1..=4096).contains(&c) && t.is_finite()) {
            continue;
        }
        let e = by.entry((r.regime.to_string(), d)).or_default().entry(c).or_default();
        e.0.push(t);
        e.1.push(r.line);
    }
    let mut out = Vec::new();
    let delays: Vec<u64> = {
        let mut d: Vec<u64> = by.keys().map(|(_, d)| *d).collect();
        d.sort_unstable();
        d.dedup();
        d
    };
    for delay in delays {
        let mut parts = Vec::new();
        let mut lines = Vec::new();
        for ((regime, d), pts) in by.iter_mut().filter(|((_, d), _)| *d == delay) {
            let _ = d;
            let Some((&top, _)) = pts.iter().next_back() else { continue };
            if top < 2 {
                continue;
            }
            let Some(one) = pts.get_mut(&1).and_then(|(t, l)| {
                lines.extend(l.iter().copied());
                median(t)
            }) else {
                continue;
            };
            let Some(many) = pts.get_mut(&top).and_then(|(t, l)| {
                lines.extend(l.iter().copied());
                median(t)
            }) else {
                continue;
            };
            if one > 0.0 {
                parts.push((regime.clone(), top, many / one));
            }
        }
        if parts.is_empty() {
            continue;
        }
        parts.sort_by(|a, b| b.2.total_cmp(&a.2));
        let top = parts[0].1;
        let same = parts.iter().all(|p| p.1 == top);
        // Each regime's own core count when they were not all measured on
        // the same number.
        let list: Vec<String> = parts
            .iter()
            .map(|(r, n, x)| if same { format!("`{r}` {x:.2}×") } else { format!("`{r}` {x:.2}× on {n} cores") })
            .collect();
        let head = if same {
            format!("{top} cores give over 1 core")
        } else {
            "the most cores measured give over 1 core".into()
        };
        out.push(Finding {
            text: format!(
                "At a mean delay of {} cycles, {head}: {} (measured; best first).",
                count(delay),
                list.join(", ")
            ),
            lines,
        });
    }
    out
}

/// Model findings: one sentence per fit — the fitted service time and
/// where the big lock saturates at each delay (the joint fit's peak is the
/// same at every delay, so it is said once).
pub fn model(rs: &Records) -> Vec<Finding> {
    let knees: Vec<_> = rs.model_knee.of("model_fit").collect();
    let mut keys: Vec<(&str, &str)> = knees.iter().map(|r| (&*r.key.regime, &*r.key.scope)).collect();
    keys.dedup();
    let mut out = Vec::new();
    let quoted = super::lock_model::quoted_fits(rs);
    for (regime, scope) in keys.into_iter().filter(|k| quoted.contains(k)) {
        let rows: Vec<_> = knees.iter().filter(|r| r.key.regime == regime && r.key.scope == scope).collect();
        let at: Vec<String> = rows
            .iter()
            .map(|r| {
                let d = r.key.delay.map_or("every delay".to_string(), |d| format!("{} cycles", count(d.0 as u64)));
                format!("{:.1} cores at {d}", r.knee_cores)
            })
            .collect();
        if at.is_empty() {
            continue;
        }
        let peaks: Vec<f64> = rows
            .iter()
            .filter_map(|r| match r.peak {
                Peak::RoundTripsPerSec(p) => Some(p),
                Peak::Throughput(_) => None,
            })
            .collect();
        let peak = match peaks.first() {
            Some(p) if peaks.iter().all(|q| (q - p).abs() <= 1e-9 * p.abs()) => {
                format!("; whatever the delay, it never passes {}", quantity(*p, "round trips/s"))
            }
            _ => String::new(),
        };
        out.push(Finding {
            text: format!(
                "Fitted to the measured `{regime}` curves, the model puts the big lock's saturation point at {}{peak} \
                 (predictions, not measurements).",
                at.join(", ")
            ),
            lines: rows.iter().map(|r| r.line).collect(),
        });
    }
    out
}

/// Every finding, in the report's order: IPC cost, measured scaling, the
/// fitted model, the KV macrobenchmark (the simulations are said by their
/// figure).
pub fn all(rs: &Records) -> Vec<Finding> {
    let mut out = ipc(rs);
    out.extend(scaling(rs));
    out.extend(model(rs));
    out.extend(kv(rs));
    out
}

/// `lo`–`hi` of `xs` with `digits` decimals (one number if they round
/// alike); `None` if `xs` is empty.
fn range(xs: &[f64], digits: usize) -> Option<String> {
    let lo = xs.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !(lo.is_finite() && hi.is_finite()) {
        return None;
    }
    let (lo, hi) = (format!("{lo:.digits$}"), format!("{hi:.digits$}"));
    Some(if lo == hi { lo } else { format!("{lo}–{hi}") })
}

/// KV macrobenchmark findings, per workload, at the most cores measured
/// (the median run by throughput of each regime): the regimes' throughput
/// beside Linux's, and the user time between kernel entries beside the
/// seeds' 800 and 1,600 cycles.
pub fn kv(rs: &Records) -> Vec<Finding> {
    let mut out = Vec::new();
    for w in kv::workloads(rs) {
        let Some(most) = w.series.iter().filter_map(|s| s.runs.keys().next_back().copied()).max() else {
            continue;
        };
        let at: Vec<(&str, Run<'_>)> = w
            .series
            .iter()
            .filter_map(|s| Some((s.regime, s.at_most_cores(Field::OpsPerSec).filter(|(c, _)| *c == most)?.1)))
            .collect();
        let cores = if most == 1 { "1 core".to_string() } else { format!("{most} cores") };
        let name = w.name.to_uppercase();
        let mut ranked: Vec<(&str, f64, usize)> =
            at.iter().map(|(g, r)| (*g, r.get(Field::OpsPerSec), r.line)).collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
        if !ranked.is_empty() {
            let list: Vec<String> = ranked
                .iter()
                .map(|(g, t, _)| {
                    if *g == LINUX {
                        format!("Linux redis-server {}", number(*t))
                    } else {
                        format!("`{g}` {}", number(*t))
                    }
                })
                .collect();
            // The big locks (`bkl`, `bkl-ticket`, `bkl-mcs`) against the
            // finer-grained regimes; `ranked` is best first.
            let big = ranked.iter().find(|(g, _, _)| g.starts_with("bkl"));
            let finer = ranked.iter().find(|(g, _, _)| *g != LINUX && !g.starts_with("bkl"));
            let tail = match (big, finer) {
                (Some(b), Some(f)) if f.1 > 0.0 => format!(
                    "; the fastest big lock (`{}`) reaches {:.0} % of the fastest finer-grained regime (`{}`)",
                    b.0,
                    b.1 / f.1 * 100.0,
                    f.0
                ),
                _ => String::new(),
            };
            out.push(Finding {
                text: format!(
                    "KV macrobenchmark measured on this machine, YCSB workload {name} on {cores}: {} YCSB \
                     operations per second (median runs; best first){tail}.",
                    list.join(", ")
                ),
                lines: ranked.iter().map(|(_, _, l)| *l).collect(),
            });
        }
        let kernel: Vec<&Run<'_>> = at.iter().filter(|(g, _)| *g != LINUX).map(|(_, r)| r).collect();
        let field = |f: fn(&KvRecord) -> Option<f64>| kernel.iter().filter_map(|r| f(r.kernel?)).collect::<Vec<f64>>();
        let Some(core0) = range(&field(|k| k.user_cycles_per_entry_core0), 0) else { continue };
        let servers = range(&field(|k| k.user_cycles_per_entry_servers), 0)
            .map(|s| format!(" and {s} on the server cores"))
            .unwrap_or_default();
        let kernel_time = range(&field(|k| k.kernel_over_entries), 2)
            .map(|x| {
                format!(
                    " The cycles spent outside user code per request are {x}× the request's kernel entries times \
                     the regime's ping-pong entry cost (half a `granule ipc` round trip)."
                )
            })
            .unwrap_or_default();
        out.push(Finding {
            text: format!(
                "Workload {name} on {cores}, measured on this machine: user code runs {core0} cycles between kernel \
                 entries on core 0{servers} across the regimes; Elphinstone et al. (2016, §5.2.2) measured \
                 {SEED_USER_CYCLES_CORE0:.0} and {SEED_USER_CYCLES_SERVERS:.0} cycles in their five-core case, which \
                 they liken to the ping-pong's 1,000-cycle delay curve.{kernel_time}"
            ),
            lines: kernel.iter().map(|r| r.line).collect(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::record;
    use crate::suite::records::testing::{rec, scale_point};

    #[test]
    fn ipc_findings_quote_their_records() {
        let all = vec![
            record("machine"),
            rec("ipc", "ipc", &[("regime", "none".into()), ("round_trip_cycles_mean", 200.0.into())]),
            rec(
                "ipc",
                "ipc",
                &[
                    ("regime", "bkl".into()),
                    ("round_trip_cycles_mean", 230.0.into()),
                    ("extra_cycles_per_call", 15.0.into()),
                    ("atomics_per_call", 1.0.into()),
                    ("atomic_floor_cycles", 14.0.into()),
                    ("meets_target", true.into()),
                ],
            ),
        ];
        let f = ipc(&Records::new(&all));
        assert_eq!(f.len(), 2);
        assert!(f[0].text.contains("200 cycles"));
        assert!(
            f[1].text.starts_with("Within 1.5×")
                && f[1].text.contains("`bkl` 15 cycles (1.0 atomics, a floor of 14 cycles)"),
            "{}",
            f[1].text
        );
        assert_eq!(f[1].lines, [2, 3]);
        // Below its floor: noise, never a target met.
        let mut below = all.clone();
        below[2].insert("extra_cycles_per_call".into(), 9.4.into());
        let f = ipc(&Records::new(&below));
        assert!(
            f[1].text.starts_with("Below their floor, so within the noise of this run")
                && f[1].text.contains("`bkl` 9.4 cycles"),
            "{}",
            f[1].text
        );
    }

    #[test]
    fn scaling_findings_are_speedups_of_medians() {
        let p = |regime: &str, cores: u64, t: f64| scale_point(regime, 0, cores, t);
        let all = vec![record("machine"), p("none", 1, 10.0), p("none", 2, 19.0), p("bkl", 1, 10.0), p("bkl", 2, 5.0)];
        let f = scaling(&Records::new(&all));
        assert_eq!(f.len(), 1);
        assert!(f[0].text.contains("`none` 1.90×, `bkl` 0.50×"), "{}", f[0].text);
    }

    #[test]
    fn kv_findings_compare_the_regimes_at_the_most_cores_and_quote_the_seeds() {
        let p = |kind: &str, regime: &str, cores: u64, ops: f64| {
            rec(
                kind,
                "kv",
                &[
                    ("regime", regime.into()),
                    ("cores", cores.into()),
                    ("workload", "c".into()),
                    ("ops_per_sec", ops.into()),
                    ("user_cycles_per_entry_core0", 700.0.into()),
                    ("user_cycles_per_entry_servers", (ops * 10.0).into()),
                    ("kernel_over_entries", 1.5.into()),
                ],
            )
        };
        let all = vec![
            record("machine"),
            p("kv", "bkl", 1, 50.0),
            p("kv", "bkl", 2, 90.0),
            p("kv", "lockfree", 2, 120.0),
            p("kv_linux", "linux", 2, 300.0),
        ];
        let f = kv(&Records::new(&all));
        assert_eq!(f.len(), 2, "{f:?}");
        assert!(f[0].text.contains("workload C on 2 cores"), "{}", f[0].text);
        assert!(
            f[0].text.contains("Linux redis-server 300, `lockfree` 120, `bkl` 90")
                && f[0].text.contains("big lock (`bkl`) reaches 75 % of the fastest finer-grained regime (`lockfree`)"),
            "{}",
            f[0].text
        );
        assert_eq!(f[0].lines, [5, 4, 3]);
        assert!(f[1].text.contains("700 cycles between kernel entries on core 0 and 900–1200 on the server cores"));
        assert!(f[1].text.contains("800 and 1600") && f[1].text.contains("1.50×"), "{}", f[1].text);
        assert_eq!(f[1].lines, [3, 4]);
    }
}
