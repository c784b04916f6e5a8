//! The plain-language summary: what the numbers say, each sentence quoting
//! the records (by `results.jsonl` line) it rests on.

use std::collections::BTreeMap;

use super::records::{Rec, Records};

/// One finding and the lines of the records it quotes.
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    /// The sentence.
    pub text: String,
    /// `results.jsonl` lines it quotes.
    pub lines: Vec<usize>,
}

fn median(xs: &mut [f64]) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    xs.sort_by(f64::total_cmp);
    let m = xs.len() / 2;
    Some(if xs.len() % 2 == 1 { xs[m] } else { (xs[m - 1] + xs[m]) / 2.0 })
}

/// Single-core findings: what each regime adds per system call.
pub fn ipc(rs: &Records<'_>) -> Vec<Finding> {
    let rows: Vec<Rec<'_>> = rs.of("ipc", "ipc").into_iter().filter(|r| r.bool("profiled") != Some(true)).collect();
    let Some(none) = rows.iter().find(|r| r.str("regime") == Some("none")) else { return Vec::new() };
    let Some(base) = none.num("round_trip_cycles_mean") else { return Vec::new() };
    let mut out = vec![Finding {
        text: format!("With no lock at all, one IPC round trip (Call + ReplyRecv) costs {base:.0} cycles on one core."),
        lines: vec![none.line],
    }];
    for r in rows.iter().filter(|r| r.str("regime") != Some("none")) {
        let (Some(regime), Some(extra)) = (r.str("regime"), r.num("extra_cycles_per_call")) else { continue };
        let atomics = r.num("atomics_per_call");
        let floor = r.num("atomic_floor_cycles");
        let verdict = match (r.bool("meets_target"), atomics, floor) {
            (Some(true), Some(n), Some(f)) => {
                format!(
                    ", within 1.5× of what its {n:.1} atomic instructions per call cost uncontended ({f:.0} cycles)"
                )
            }
            (Some(false), Some(n), Some(f)) => format!(
                ", more than 1.5× what its {n:.1} atomic instructions per call cost uncontended ({f:.0} cycles): \
                 the rest is its own bookkeeping"
            ),
            _ => String::new(),
        };
        out.push(Finding {
            text: format!("`{regime}` adds {extra:.0} cycles per system call{verdict}."),
            lines: vec![none.line, r.line],
        });
    }
    out
}

/// Multicore findings: each regime's 2-core (or largest) speed-up at each
/// delay, from medians of the runs.
pub fn scaling(rs: &Records<'_>) -> Vec<Finding> {
    // (regime, delay) → cores → (throughputs, lines)
    type Points = BTreeMap<usize, (Vec<f64>, Vec<usize>)>;
    let mut by: BTreeMap<(String, u64), Points> = BTreeMap::new();
    for r in rs.of("scale", "scale") {
        let (Some(regime), Some(d), Some(c), Some(t)) =
            (r.str("regime"), r.num("delay_cycles"), r.num("cores"), r.num("round_trips_per_sec"))
        else {
            continue;
        };
        let e = by.entry((regime.to_string(), d as u64)).or_default().entry(c as usize).or_default();
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
        let list: Vec<String> = parts.iter().map(|(r, _, x)| format!("`{r}` {x:.2}×")).collect();
        let top = parts[0].1;
        out.push(Finding {
            text: format!(
                "At a mean delay of {delay} cycles, {top} cores give over 1 core: {} (measured; best first).",
                list.join(", ")
            ),
            lines,
        });
    }
    out
}

/// Model findings: the fitted service time, the knee, and the prediction.
pub fn model(rs: &Records<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    for r in rs.of("model_fit", "model_knee") {
        let (Some(regime), Some(knee)) = (r.str("regime"), r.num("knee_cores")) else { continue };
        let delay = r.num("delay").map(|d| format!("{d:.0}")).unwrap_or_else(|| "every".into());
        let at = r.num("predicted_at_cores");
        let predicted = r.map.iter().find(|(k, _)| k.starts_with("predicted_") && *k != "predicted_at_cores");
        let tail = match (at, predicted.and_then(|(k, v)| Some((k, v.as_f64()?)))) {
            (Some(n), Some((k, v))) => {
                format!(
                    "; at {n:.0} cores it predicts {v:.3e} {}",
                    k.trim_start_matches("predicted_").replace('_', " ")
                )
            }
            _ => String::new(),
        };
        out.push(Finding {
            text: format!(
                "Model (fitted to the measured `{regime}` curve, delay {delay} cycles): the big lock saturates at \
                 about {knee:.1} cores{tail}. This is a prediction, not a measurement."
            ),
            lines: vec![r.line],
        });
    }
    out
}

/// Every finding, in the report's order: IPC cost, measured scaling, the
/// fitted model, the simulations.
pub fn all(rs: &Records<'_>) -> Vec<Finding> {
    let mut out = ipc(rs);
    out.extend(scaling(rs));
    out.extend(model(rs));
    out.extend(simulation(rs));
    out
}

/// What the simulator predicts per topology and lock: the peak throughput
/// and where it falls, and the throughput at the most cores simulated.
pub fn simulation(rs: &Records<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    for (topology, machine) in super::SIMULATED {
        let sims = rs.of(&super::simulate_step_name(topology), "model_simulate");
        let mut locks: Vec<&str> = sims.iter().filter_map(|r| r.str("lock")).collect();
        locks.dedup();
        for lock in locks {
            let rows: Vec<_> = sims
                .iter()
                .filter(|r| r.str("lock") == Some(lock))
                .filter_map(|r| Some((r.num("cores")?, r.num("throughput_per_sec")?, r.line)))
                .collect();
            let peak = rows.iter().copied().max_by(|a, b| a.1.total_cmp(&b.1));
            let last = rows.iter().copied().max_by(|a, b| a.0.total_cmp(&b.0));
            let (Some(peak), Some(last)) = (peak, last) else { continue };
            let cores = |n: f64| if n == 1.0 { "1 core".to_string() } else { format!("{n:.0} cores") };
            let tail = if last.2 == peak.2 {
                String::from(", the most simulated")
            } else {
                format!(", and {:.3e} at {}", last.1, cores(last.0))
            };
            out.push(Finding {
                text: format!(
                    "Simulated {machine}, {lock} lock with the fitted s and a: at most {:.3e} lock acquisitions per \
                     second, at {}{tail}. This is a simulation, not a measurement.",
                    peak.1,
                    cores(peak.0)
                ),
                lines: if last.2 == peak.2 { vec![peak.2] } else { vec![peak.2, last.2] },
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::record;
    use serde_json::{Map, Value};

    fn rec(kind: &str, exp: &str, fields: &[(&str, Value)]) -> Map<String, Value> {
        let mut m = record(kind);
        m.insert("experiment".into(), exp.into());
        for (k, v) in fields {
            m.insert((*k).into(), v.clone());
        }
        m
    }

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
        assert!(f[1].text.contains("`bkl` adds 15 cycles") && f[1].text.contains("within 1.5×"), "{}", f[1].text);
        assert_eq!(f[1].lines, [2, 3]);
    }

    #[test]
    fn scaling_findings_are_speedups_of_medians() {
        let p = |regime: &str, cores: u64, t: f64| {
            rec(
                "scale",
                "scale",
                &[
                    ("regime", regime.into()),
                    ("cores", cores.into()),
                    ("delay_cycles", 0u64.into()),
                    ("round_trips_per_sec", t.into()),
                ],
            )
        };
        let all = vec![record("machine"), p("none", 1, 10.0), p("none", 2, 19.0), p("bkl", 1, 10.0), p("bkl", 2, 5.0)];
        let f = scaling(&Records::new(&all));
        assert_eq!(f.len(), 1);
        assert!(f[0].text.contains("`none` 1.90×, `bkl` 0.50×"), "{}", f[0].text);
    }
}
