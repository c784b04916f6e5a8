//! The report's subsystem study (Toy, 2010): the throughput figure per
//! regime and policy, and the tables — throughput, the seed's findings,
//! and the lock profiler's tables for `giant`, `sx` and `improper` (the
//! seed's Tables 2, 1 and 3) in the seed's columns.

use std::fmt::Write as _;

use serde_json::json;

use super::bars::{Bar, BarChart};
use super::cite;
use super::figures::{Fig, Plot};
use super::html::{csv_link, esc, table, Column};
use super::pivot::{pivot, Cell};
use super::records::Records;
use crate::cmd::subsystems::findings::FindingsRecord;
use crate::regimes::colour;

/// The suite step that runs `granule subsystems`.
pub const STEP: &str = "subsystems";

/// Jobs per second per (regime, policy), mean ± standard deviation.
pub fn figure(rs: &Records) -> Option<Fig> {
    let rows: Vec<_> = rs.subsystems.of(STEP).collect();
    if rows.is_empty() {
        return None;
    }
    let mut bars = Vec::new();
    let mut sources = Vec::new();
    for r in &rows {
        let mean = r.source("jobs_per_sec_mean", r.jobs_per_sec_mean);
        let std = r.source("jobs_per_sec_std", r.jobs_per_sec_std);
        bars.push(Bar {
            label: format!("{}, {} cores", r.regime, r.cores),
            value: mean.value,
            error: std.value,
            colour: colour(&r.regime),
            group: format!("{} policy", r.policy),
        });
        sources.extend([mean, std]);
    }
    let runs = rows.first().map_or(0.0, |r| r.runs as f64);
    let chart = BarChart {
        title: "Build load on sysctl and the kernel log".into(),
        y_label: "jobs per second".into(),
        bars,
        references: Vec::new(),
    };
    Some(Fig {
        id: "fig-subsystems",
        title: "Subsystem locking: giant, sx, improper, lock-free".into(),
        caption: format!(
            "Jobs per second of the build load (workers computing between sysctl reads, rare sets, walks and log \
             appends; `granule subsystems`) under each regime and subsystem locking policy: mean ± standard \
             deviation over {runs:.0} runs (records `subsystems` of experiment `subsystems`; Toy (2010, §5.2) found \
             +0.5 % for sx over giant on a real build)."
        ),
        plot: Plot::Bars(chart),
        sources,
    })
}

/// The study's tables: jobs per second per regime and policy, the
/// paper's findings, and for each policy the lock each regime waited on
/// most (every lock of every policy is in `subsystems.csv`).
pub fn tables(b: &mut String, rs: &Records) {
    let _ = writeln!(b, "<h3>Subsystem locking ({})</h3>", esc(&cite::paper(3)));
    let _ = writeln!(b, "<p>Jobs per second (mean over the runs) per regime and subsystem locking policy:</p>");
    let cells = rs
        .subsystems
        .of(STEP)
        .map(|r| Cell::new(format!("`{}`, {}", r.regime, r.cores), r.policy.to_string(), r.jobs_per_sec_mean, r.line));
    b.push_str(&pivot(cells, "regime, cores"));
    let _ = writeln!(b, "<p>The paper's findings, per regime (totals over the last run of each policy, cycles):</p>");
    let cols: [Column<'_, FindingsRecord>; 9] = [
        ("regime", |r| json!(r.regime)),
        ("giant's lock", |r| json!(r.giant_lock)),
        ("giant: total wait", |r| json!(r.giant_wait_total)),
        ("giant: found held", |r| json!(r.giant_contended)),
        ("sx: sysctl wait", |r| json!(r.sx_sysctl_wait_total)),
        ("sx: found held", |r| json!(r.sx_sysctl_contended)),
        ("improper ÷ giant, acquisitions", |r| json!(r.improper_over_giant_acquisitions)),
        ("improper ÷ giant, wait", |r| json!(r.improper_over_giant_wait)),
        ("sx ÷ giant, jobs", |r| json!(r.sx_over_giant_jobs)),
    ];
    b.push_str(&table(&rs.subsystem_findings.of(STEP).collect::<Vec<_>>(), &cols));
    b.push_str(&csv_link(STEP, "Every lock under every policy (the paper's Tables 2, 1 and 3 for giant, sx and improper), with its source line, and the calls per second"));
}
