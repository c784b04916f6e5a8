//! The report's subsystem study (seed `003`): the throughput figure per
//! regime and policy, and the tables — throughput, the seed's findings,
//! and the lock profiler's tables for `giant`, `sx` and `improper` (the
//! seed's Tables 2, 1 and 3) in the seed's columns.

use std::fmt::Write as _;

use super::bars::{Bar, BarChart};
use super::figures::{Fig, Plot};
use super::html::table;
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
             deviation over {runs:.0} runs (records `subsystems` of experiment `subsystems`; seed 003 §5.2 found \
             +0.5 % for sx over giant on a real build)."
        ),
        plot: Plot::Bars(chart),
        sources,
    })
}

/// The study's tables.
pub fn tables(b: &mut String, rs: &Records<'_>) {
    let _ = writeln!(b, "<h3>Subsystem locking (seed 003)</h3>");
    b.push_str(&table(
        &rs.of(STEP, "subsystems"),
        &[
            ("regime", "regime"),
            ("policy", "policy"),
            ("cores", "cores"),
            ("jobs/s", "jobs_per_sec_mean"),
            ("std", "jobs_per_sec_std"),
            ("× giant", "ratio_to_giant"),
            ("calls/s", "calls_per_sec_mean"),
            ("log read", "klog_read"),
            ("log dropped", "klog_dropped"),
            ("errors", "errors"),
        ],
    ));
    let _ = writeln!(b, "<p>The seed's findings, per regime (totals over the last run of each policy):</p>");
    b.push_str(&table(
        &rs.of(STEP, "subsystem_findings"),
        &[
            ("regime", "regime"),
            ("cores", "cores"),
            ("giant's lock", "giant_lock"),
            ("giant wait", "giant_wait_total"),
            ("giant contended", "giant_contended"),
            ("sx sysctl wait", "sx_sysctl_wait_total"),
            ("sx contended", "sx_sysctl_contended"),
            ("improper acquisitions ÷ giant", "improper_over_giant_acquisitions"),
            ("improper wait ÷ giant", "improper_over_giant_wait"),
            ("sx jobs ÷ giant", "sx_over_giant_jobs"),
        ],
    ));
    let locks = rs.of(STEP, "subsystem_lock");
    for (policy, seed_table) in [("giant", "Table 2"), ("sx", "Table 1"), ("improper", "Table 3")] {
        let _ = writeln!(b, "<p>Lock profile under <b>{policy}</b> (the seed's {seed_table}; cycles):</p>");
        let rows: Vec<_> = locks.iter().copied().filter(|r| r.str("policy") == Some(policy)).collect();
        b.push_str(&table(
            &rows,
            &[
                ("regime", "regime"),
                ("max held", "hold_max"),
                ("max wait", "wait_max"),
                ("total held", "hold_total"),
                ("total wait", "wait_total"),
                ("times acquired", "acquisitions"),
                ("average held", "avg_held"),
                ("average wait", "avg_wait"),
                ("lock", "lock"),
                ("file", "file"),
                ("line", "line"),
            ],
        ));
    }
}
