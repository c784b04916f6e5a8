//! The frontier where the topology is known: the discrete-event simulator
//! on the seeds' two-socket x86 (`x86-2s`, 56 threads), with the CLH big
//! lock, on every core count from 1 to 56, once with the shortest and once
//! with the longest hold time measured here (the band's ends,
//! [`super::band::Band`]) and the think time of each delay. Unlike the
//! analytic model it charges each hand-off the topology's cache-line
//! latency, so its frontier bends where the second socket starts. Two suite
//! steps per delay, planned once the band is known.

use super::band::{Band, Range};
use super::lock_model::{held, DELAYS};
use super::plan::{Profile, Step};
use super::records::Records;

/// The simulated topology and its cores.
pub const TOPOLOGY: &str = "x86-2s";
/// Its hardware threads.
pub const CORES: usize = 56;

/// Which end of the band a simulation runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// The longest hold time measured.
    Long,
    /// The shortest.
    Short,
}

impl End {
    /// Both ends, longest hold first (the low end of a predicted range).
    pub const BOTH: [End; 2] = [End::Long, End::Short];

    /// The step-name suffix.
    pub fn name(self) -> &'static str {
        match self {
            End::Long => "long",
            End::Short => "short",
        }
    }

    /// The hold time of this end, cycles per acquisition: the simulator
    /// adds the topology's hand-off itself.
    pub fn hold(self, b: &Band) -> f64 {
        let holds = b.holds.iter().copied();
        match self {
            End::Long => holds.fold(b.one_core_hold, f64::max),
            End::Short => holds.fold(b.one_core_hold, f64::min),
        }
    }
}

/// A simulated 90 % frontier per end of the band (longest hold first):
/// the most cores, and whether the simulation ran out of cores first.
pub type Simulated = Range<(usize, bool)>;

/// The suite step of delay `d` and band end `end`.
pub fn step_name(d: u64, end: End) -> String {
    format!("frontier_sim_{d}_{}", end.name())
}

/// Completions each simulation of profile `p` runs (every simulation step
/// of the suite).
pub fn completions(p: Profile) -> &'static str {
    match p {
        Profile::Smoke => "2000",
        Profile::Quick => "20000",
        Profile::Full => "100000",
    }
}

/// Two simulation steps per delay of [`DELAYS`], from the fit step's
/// records (none without a band).
pub fn steps(p: Profile, fit: &Records) -> Vec<Step> {
    let Some(band) = Band::of(fit) else { return Vec::new() };
    let completions = completions(p);
    let cores = (1..=CORES).map(|c| c.to_string()).collect::<Vec<_>>().join(",");
    DELAYS
        .iter()
        .flat_map(|&d| End::BOTH.map(|e| (d, e)))
        .map(|(d, end)| {
            let think = format!("{:.1}", band.think(d as f64));
            let service = format!("{:.1}", end.hold(&band));
            Step::new(
                &step_name(d, end),
                &format!("simulating the frontier at delay {d} ({} hold)", end.name()),
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
                0.3,
            )
        })
        .collect()
}

/// The simulated 90 % frontier at delay `d` with the longest and with the
/// shortest hold: the most cores up to which every simulated efficiency
/// `X(n) / (n · X(1))` holds 90 %, and whether it held up to [`CORES`]
/// (then a lower bound); with the lines of the records.
pub fn frontier(rs: &Records, d: u64) -> Option<(Simulated, Vec<usize>)> {
    let mut lines = Vec::new();
    let mut at = |end: End| -> Option<(usize, bool)> {
        let step = step_name(d, end);
        let mut pts: Vec<(usize, f64, usize)> = rs
            .model_simulate
            .of(&step)
            .filter(|r| r.lock == "clh")
            .map(|r| (r.cores, r.throughput, r.line))
            .filter(|p| p.0 >= 1 && p.1.is_finite() && p.1 > 0.0)
            .collect();
        pts.sort_by_key(|p| p.0);
        let &(first, one, _) = pts.first()?;
        if first != 1 {
            return None;
        }
        let eff: Vec<(usize, f64)> = pts.iter().map(|p| (p.0, p.1 / (p.0 as f64 * one))).collect();
        lines.extend(pts.iter().map(|p| p.2));
        Some(held(&eff)[0])
    };
    let range = (at(End::Long)?, at(End::Short)?);
    Some((range, lines))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::band::testing::band_record;
    use crate::suite::records::testing::rec;

    #[test]
    fn the_simulated_frontier_is_where_the_simulated_efficiency_drops() {
        let sim = |end: End, c: u64, x: f64| {
            rec(
                "model_simulate",
                &step_name(4000, end),
                &[("lock", "clh".into()), ("cores", c.into()), ("throughput", x.into())],
            )
        };
        // Long hold: efficiency 1, 0.95, 0.8, 0.45; short: 1, 1, 0.95, 0.9.
        let all = vec![
            sim(End::Long, 1, 1.0),
            sim(End::Long, 2, 1.9),
            sim(End::Long, 3, 2.4),
            sim(End::Long, 4, 1.8),
            sim(End::Short, 1, 1.0),
            sim(End::Short, 2, 2.0),
            sim(End::Short, 3, 2.85),
            sim(End::Short, 4, 3.6),
        ];
        let rs = Records::new(&all);
        let (f, lines) = frontier(&rs, 4000).unwrap();
        assert_eq!(f, ((2, false), (4, true)));
        assert_eq!(lines, [1, 2, 3, 4, 5, 6, 7, 8]);
        assert!(frontier(&rs, 500).is_none(), "not simulated");
    }

    #[test]
    fn two_steps_per_delay_with_the_band_ends() {
        let all = vec![band_record(&[(1, 200.0, 0.0), (2, 300.0, 100.0)], &[(0.0, 50.0)], 50.0)];
        let planned = steps(Profile::Smoke, &Records::new(&all));
        assert_eq!(planned.len(), 2 * DELAYS.len());
        let long = planned[6].command_line();
        let short = planned[7].command_line();
        // Delay 4000, two locks per round trip: think 50 + 2000.
        assert!(long.contains("--service 300.0 --delay 2050.0"), "{long}");
        assert!(short.contains("--service 200.0 --delay 2050.0"), "{short}");
        assert!(long.contains("--topology x86-2s --lock clh"), "{long}");
        assert!(long.contains(",56 --completions 2000"), "{long}");
        assert!(steps(Profile::Smoke, &Records::default()).is_empty());
    }
}
