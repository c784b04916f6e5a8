//! The prediction per delay (seed `001` Figure 4(a)/(b)): the big lock's
//! throughput against cores 1 … 56 for every measured delay — the fitted
//! model's line, the measured points on top, and the socket boundary of the
//! seeds' two-socket machine (the simulated `x86-2s`) marked.

use super::figures::{Fig, Plot};
use super::frontier::{tsc_hz, Measured, Model};
use super::records::{Records, Source};
use crate::plot::{Chart, Figure, Series};

/// The most cores drawn (the seeds' 56-thread machine).
pub const CORES: usize = 56;

/// Cores per socket of the simulated two-socket x86 (seed `001`'s Xeon).
pub const SOCKET_CORES: f64 = 28.0;

/// The legend of the socket boundary (a reference series: a comparison of
/// machines draws it once).
pub const BOUNDARY_SERIES: &str = "socket boundary, two-socket x86 (28 cores)";

/// Palette entries (not a regime's: no delay looks like a regime) of the
/// delays, and of the socket boundary.
const DELAY_COLOURS: [usize; 9] = [0, 1, 2, 3, 4, 5, 7, 8, 9];
const BOUNDARY_COLOUR: usize = 6;

/// The figure, if the suite fitted the model and measured `bkl`.
pub fn figure(rs: &Records<'_>) -> Option<Fig> {
    let model = Model::of(rs)?;
    let (hz, hz_line) = tsc_hz(rs)?;
    let m = Measured::of(rs);
    let mut delays = m.delays("bkl");
    delays.truncate(super::frontier::MAX_MEASURED_DELAYS);
    if delays.is_empty() {
        return None;
    }
    let mut sources: Vec<Source> = rs
        .iter()
        .filter(|r| model.lines().contains(&r.line) || r.line == hz_line)
        .flat_map(|r| ["s", "a", "locks_per_round_trip", "tsc_ghz"].into_iter().filter_map(move |f| Source::of(&r, f)))
        .collect();
    let mut series = Vec::new();
    let mut top: f64 = 0.0;
    for (i, d) in delays.iter().enumerate() {
        let colour = DELAY_COLOURS[i % DELAY_COLOURS.len()];
        let line: Vec<(f64, f64)> = (1..=CORES)
            .filter_map(|n| {
                let x = granule_model::Repairman::new(n, model.s, model.think(*d as f64)).ok()?.solve().throughput;
                Some((n as f64, x * hz / model.locks_per_round_trip))
            })
            .collect();
        top = line.iter().map(|p| p.1).fold(top, f64::max);
        series.push(Series {
            style: 0,
            label: format!("delay {d}: model (predicted)"),
            points: line,
            line: true,
            colour,
        });
        let mut dots = Vec::new();
        for c in m.cores("bkl", *d) {
            if let Some((t, lines)) = m.at("bkl", *d, c) {
                dots.push((c as f64, t));
                top = top.max(t);
                for r in rs.iter().filter(|r| lines.contains(&r.line)) {
                    sources.extend(Source::of(&r, "round_trips_per_sec"));
                }
            }
        }
        series.push(Series { style: 0, label: format!("delay {d}: measured"), points: dots, line: false, colour });
    }
    series.push(Series {
        style: 0,
        label: BOUNDARY_SERIES.into(),
        points: vec![(SOCKET_CORES, 0.0), (SOCKET_CORES, top)],
        line: true,
        colour: BOUNDARY_COLOUR,
    });
    let chart = Chart {
        title: "Big-lock throughput against cores, per delay between system calls".into(),
        x_label: "cores".into(),
        y_label: "round trips per second".into(),
        series,
    };
    Some(Fig {
        id: "fig-predict-delays",
        title: "The big lock on larger machines, per delay".into(),
        caption: format!(
            "Seed 001's Figure 4 for this machine: for every delay the suite measured, the machine-repairman \
             model with the service time s = {:.0} and think time a = {:.0} cycles per lock acquisition that the \
             suite fitted to the big lock (record `model_fit`, line {}), plus the delay's share of each \
             acquisition (the delay over {} locks per round trip), drawn from 1 to {CORES} cores (lines: \
             predictions), in round trips per second at the measured TSC frequency, with the medians measured on this machine's cores on top (dots: \
             measurements, records `scale`). The vertical line marks where the seeds' two-socket x86 (simulated \
             as `x86-2s`) crosses into its second socket, where seed 001 saw the service time double: the model \
             assumes one service time throughout, so beyond it the lines are an upper bound.",
            model.s, model.a, model.line, model.locks_per_round_trip
        ),
        plot: Plot::Lines(Figure { charts: vec![chart] }),
        sources,
    })
}
