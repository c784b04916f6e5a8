//! The report's subsystem study (Toy, 2010): the throughput figure per
//! regime and policy, and the tables — throughput, the seed's findings,
//! and the lock profiler's tables for `giant`, `sx` and `improper` (the
//! seed's Tables 2, 1 and 3) in the seed's columns.

use std::fmt::Write as _;

use super::bars::{Bar, BarChart};
use super::cite;
use super::figures::{Fig, Plot};
use super::html::{csv_link, esc, table};
use super::pivot::pivot;
use super::records::{Records, Source};
use crate::fields::Fields;
use crate::regimes::colour;

/// The suite step that runs `granule subsystems`.
pub const STEP: &str = "subsystems";

/// Jobs per second per (regime, policy), mean ± standard deviation.
pub fn figure(rs: &Records<'_>) -> Option<Fig> {
    let rows = rs.of(STEP, "subsystems");
    if rows.is_empty() {
        return None;
    }
    let mut bars = Vec::new();
    let mut sources = Vec::new();
    for r in &rows {
        let (Some(regime), Some(policy)) = (r.str("regime"), r.str("policy")) else { continue };
        let (Some(mean), Some(std)) = (Source::of(r, "jobs_per_sec_mean"), Source::of(r, "jobs_per_sec_std")) else {
            continue;
        };
        let cores = r.num("cores").unwrap_or(0.0);
        bars.push(Bar {
            label: format!("{regime}, {cores:.0} cores"),
            value: mean.value,
            error: std.value,
            colour: colour(regime),
            group: format!("{policy} policy"),
        });
        sources.extend([mean, std]);
    }
    let runs = rows.first().and_then(|r| r.num("runs")).unwrap_or(0.0);
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
pub fn tables(b: &mut String, rs: &Records<'_>) {
    let _ = writeln!(b, "<h3>Subsystem locking ({})</h3>", esc(&cite::paper(3)));
    let _ = writeln!(b, "<p>Jobs per second (mean over the runs) per regime and subsystem locking policy:</p>");
    b.push_str(&pivot(
        &rs.of(STEP, "subsystems"),
        "regime, cores",
        |r| Some(format!("`{}`, {:.0}", r.str("regime")?, r.num("cores")?)),
        |r| r.str("policy").map(str::to_string),
        "jobs_per_sec_mean",
    ));
    let _ = writeln!(b, "<p>The paper's findings, per regime (totals over the last run of each policy, cycles):</p>");
    b.push_str(&table(
        &rs.of(STEP, "subsystem_findings"),
        &[
            ("regime", "regime"),
            ("giant's lock", "giant_lock"),
            ("giant: total wait", "giant_wait_total"),
            ("giant: found held", "giant_contended"),
            ("sx: sysctl wait", "sx_sysctl_wait_total"),
            ("sx: found held", "sx_sysctl_contended"),
            ("improper ÷ giant, acquisitions", "improper_over_giant_acquisitions"),
            ("improper ÷ giant, wait", "improper_over_giant_wait"),
            ("sx ÷ giant, jobs", "sx_over_giant_jobs"),
        ],
    ));
    b.push_str(&csv_link(STEP, "Every lock under every policy (the paper's Tables 2, 1 and 3 for giant, sx and improper), with its source line, and the calls per second"));
}
