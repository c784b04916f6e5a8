//! The prediction per delay (Figure 4 of Elphinstone et al. 2016): the big
//! lock's throughput against cores 1 … 56 for every measured delay — the
//! model's band (its two ends as lines), the measured points on top, and
//! the socket boundary of the seeds' two-socket machine marked.

use super::answer::cores_phrase;
use super::band::Band;
use super::figures::{Fig, Plot};
use super::frontier::{tsc_hz, Measured};
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

/// Vertical marks at this machine's last-level-cache, socket and SMT
/// boundaries inside `1..max_cores` (from the machine record's topology),
/// each from 0 to `top`.
pub fn boundaries(rs: &Records, max_cores: usize, top: f64) -> Vec<Series> {
    let Some(m) = &rs.machine else { return Vec::new() };
    m.topology
        .boundaries
        .marks(max_cores)
        .into_iter()
        .map(|m| {
            let what = match m.kind {
                "socket" => "socket",
                "llc" => "last-level cache",
                _ => "SMT siblings from here",
            };
            let x = m.cores as f64 + 0.5;
            Series {
                style: 3,
                label: format!("this machine: {what} boundary after {} cores", m.cores),
                points: vec![(x, 0.0), (x, top)],
                line: true,
                colour: BOUNDARY_COLOUR,
            }
        })
        .collect()
}

/// The sources of the band and the clock the figure is drawn with, in line
/// order: the `service_band` record's service times and base think time
/// (its think times per delay are a list, not one number), and the TSC
/// frequency of the record [`tsc_hz`] took it from.
fn inputs(rs: &Records, band_line: usize, hz_line: usize) -> Vec<Source> {
    let mut out = Vec::new();
    for b in rs.service_band.iter().filter(|b| b.line == band_line) {
        out.extend([
            b.source("service_lo", b.service_lo),
            b.source("service_hi", b.service_hi),
            b.source("think_base", b.think_base),
        ]);
    }
    for f in rs.fit_input.iter().filter(|f| f.line == hz_line) {
        out.extend(f.tsc_ghz.map(|g| f.source("tsc_ghz", g)));
    }
    out.extend(rs.machine.iter().filter(|m| m.line == hz_line).map(|m| m.source("tsc_ghz", m.tsc_ghz)));
    // Stable: each record's fields stay in order.
    out.sort_by_key(|s| s.line);
    out
}

/// The figure, if the suite measured the band and `bkl`.
pub fn figure(rs: &Records) -> Option<Fig> {
    let band = Band::of(rs)?;
    let (hz, hz_line) = tsc_hz(rs)?;
    let m = Measured::of(rs);
    let mut delays = m.delays("bkl");
    delays.truncate(super::frontier::MAX_MEASURED_DELAYS);
    if delays.is_empty() {
        return None;
    }
    let mut sources = inputs(rs, band.line, hz_line);
    let mut series = Vec::new();
    let mut top: f64 = 0.0;
    for (i, d) in delays.iter().enumerate() {
        let colour = DELAY_COLOURS[i % DELAY_COLOURS.len()];
        let band_at: Vec<(f64, (f64, f64))> =
            (1..=CORES).filter_map(|n| Some((n as f64, band.round_trips_per_sec(n, *d as f64, hz)?))).collect();
        for (end, style) in [(1, 0), (0, 2)] {
            let line: Vec<(f64, f64)> = band_at.iter().map(|(n, r)| (*n, if end == 0 { r.0 } else { r.1 })).collect();
            top = line.iter().map(|p| p.1).fold(top, f64::max);
            series.push(Series {
                style,
                label: format!("delay {d}: model band (lines), measured (dots)"),
                points: line,
                line: true,
                colour,
            });
        }
        let mut dots = Vec::new();
        for c in m.cores("bkl", *d) {
            if let Some((t, lines)) = m.at("bkl", *d, c) {
                dots.push((c as f64, t));
                top = top.max(t);
                for r in rs.scale.iter().filter(|r| lines.contains(&r.line)) {
                    sources.push(r.source("round_trips_per_sec", r.round_trips_per_sec));
                }
            }
        }
        series.push(Series {
            style: 0,
            label: format!("delay {d}: model band (lines), measured (dots)"),
            points: dots,
            line: false,
            colour,
        });
    }
    let here = rs.machine.as_ref().map_or(1, |m| m.cores).min(CORES);
    series.extend(boundaries(rs, here, top));
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
            "Figure 4 of Elphinstone et al. (2016) for this machine: for every delay the suite measured, the \
             machine-repairman model drawn with the shortest ({:.0} cycles, on {}) and the longest ({:.0} cycles, \
             on {}) service time per lock acquisition measured here (hold time from the lock profiler plus one \
             cache-line hand-off; record service_band, line {}), with the think time one core measured at that \
             delay, from 1 to {CORES} cores (solid line: shortest, dotted: longest; predictions), in round trips per second at the \
             measured clock of {:.2} GHz, with the medians measured on this machine's cores on top (dots). The \
             vertical line marks where a 28-core socket of the paper's two-socket Xeon ends, where they saw the \
             service time double: beyond it a band measured on one socket is optimistic.",
            band.lo.0,
            cores_phrase(band.lo.1, false),
            band.hi.0,
            cores_phrase(band.hi.1, false),
            band.line,
            hz / 1e9
        ),
        plot: Plot::Lines(Figure { charts: vec![chart] }),
        sources,
    })
}
