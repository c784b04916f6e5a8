//! The frontier where the topology is known: the discrete-event simulator
//! on the seeds' two-socket x86 (`x86-2s`, 56 threads), with the CLH big
//! lock, the fitted service time and the think time of each delay
//! ([`super::frontier::Model::think`]), on every core count from 1 to 56.
//! Unlike the analytic model it charges each hand-off the topology's
//! cache-line latency, so its frontier bends where the second socket
//! starts. One suite step per delay, planned once the fit is known.

use super::lock_model::{held, Held, Model, DELAYS};
use super::plan::{Profile, Step};
use super::records::Records;
use crate::fields::Fields;

/// The simulated topology and its cores.
pub const TOPOLOGY: &str = "x86-2s";
/// Its hardware threads.
pub const CORES: usize = 56;

/// The suite step of delay `d`.
pub fn step_name(d: u64) -> String {
    format!("frontier_sim_{d}")
}

/// One simulation step per delay of [`DELAYS`], from the fit's records (none
/// without a usable fit).
pub fn steps(p: Profile, fit: &Records<'_>) -> Vec<Step> {
    let Some(model) = Model::of(fit) else { return Vec::new() };
    let completions = match p {
        Profile::Smoke => "2000",
        Profile::Quick => "20000",
        Profile::Full => "100000",
    };
    let cores = (1..=CORES).map(|c| c.to_string()).collect::<Vec<_>>().join(",");
    let service = format!("{:.1}", model.s);
    DELAYS
        .iter()
        .map(|&d| {
            let think = format!("{:.1}", model.think(d as f64));
            Step::new(
                &step_name(d),
                &format!("simulating the frontier at delay {d}"),
                &[
                    "model",
                    "simulate",
                    "--topology",
                    TOPOLOGY,
                    "--lock",
                    "clh",
                    "--service",
                    &service,
                    "--delay",
                    &think,
                    "--cores",
                    &cores,
                    "--completions",
                    completions,
                ],
                0.5,
            )
        })
        .collect()
}

/// The simulated frontier at delay `d`, per threshold: the most cores up
/// to which every simulated efficiency `X(n) / (n · X(1))` holds it, and
/// whether it held up to [`CORES`] (then a lower bound); with the lines of
/// the records.
pub fn frontier(rs: &Records<'_>, d: u64) -> Option<(Held, Vec<usize>)> {
    let mut pts: Vec<(usize, f64, usize)> = rs
        .of(&step_name(d), "model_simulate")
        .into_iter()
        .filter(|r| r.str("lock") == Some("clh"))
        .filter_map(|r| Some((r.num("cores")? as usize, r.num("throughput")?, r.line)))
        .filter(|p| p.0 >= 1 && p.1.is_finite() && p.1 > 0.0)
        .collect();
    pts.sort_by_key(|p| p.0);
    let &(first, one, _) = pts.first()?;
    if first != 1 {
        return None;
    }
    let eff: Vec<(usize, f64)> = pts.iter().map(|p| (p.0, p.1 / (p.0 as f64 * one))).collect();
    Some((held(&eff), pts.iter().map(|p| p.2).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::records::testing::rec;

    #[test]
    fn the_simulated_frontier_is_where_the_simulated_efficiency_drops() {
        let sim = |c: u64, x: f64| {
            rec(
                "model_simulate",
                &step_name(4000),
                &[("lock", "clh".into()), ("cores", c.into()), ("throughput", x.into())],
            )
        };
        // Efficiency 1, 0.95, 0.8, 0.45.
        let all = vec![sim(1, 1.0), sim(2, 1.9), sim(3, 2.4), sim(4, 1.8)];
        let rs = Records::new(&all);
        let (f, lines) = frontier(&rs, 4000).unwrap();
        assert_eq!(f, [(2, false), (3, false)]);
        assert_eq!(lines, [1, 2, 3, 4]);
        assert!(frontier(&rs, 500).is_none(), "not simulated");
        // Holding to the last core simulated: a lower bound.
        let all = vec![sim(1, 1.0), sim(2, 2.0)];
        assert_eq!(frontier(&Records::new(&all), 4000).unwrap().0, [(2, true), (2, true)]);
    }

    #[test]
    fn one_step_per_delay_with_the_fitted_times() {
        let all = vec![rec(
            "model_fit",
            "model_fit",
            &[("regime", "bkl".into()), ("scope", "all delays".into()), ("s", 300.0.into()), ("a", 100.0.into())],
        )];
        let planned = steps(Profile::Smoke, &Records::new(&all));
        assert_eq!(planned.len(), DELAYS.len());
        let line = planned[3].command_line();
        // Delay 4000 with one lock per round trip (no fit input): 100 + 4000.
        assert!(line.contains("--service 300.0 --delay 4100.0"), "{line}");
        assert!(line.contains("--topology x86-2s --lock clh"), "{line}");
        assert!(line.contains(",56 --completions 2000"), "{line}");
        assert!(steps(Profile::Smoke, &Records::new(&[])).is_empty());
    }
}
