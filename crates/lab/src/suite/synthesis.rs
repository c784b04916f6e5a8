//! The report's Synthesis Tables 2–4 (Massalin & Pu, 1991), measured per regime by
//! `granule synthesis`: the tables, and a bar chart of Table 3 (thread
//! operations) per regime.

use std::fmt::Write as _;

use super::bars::{Bar, BarChart};
use super::cite;
use super::figures::{Fig, Plot};
use super::html::{csv_link, esc};
use super::pivot::{pivot, pivot_with, Cell};
use super::records::Records;
use super::summary::{floor_check, FloorCheck};
use super::units::line_list;
use crate::regimes::colour;

/// The suite step that runs `granule synthesis`.
pub const STEP: &str = "synthesis";

/// Table 3's rows per regime: cycles (mean without the top tenth).
pub fn figure(rs: &Records) -> Option<Fig> {
    let rows: Vec<_> = rs.synthesis.of(STEP).filter(|r| r.table == 3).collect();
    if rows.is_empty() {
        return None;
    }
    let mut bars = Vec::new();
    let mut sources = Vec::new();
    for r in &rows {
        let v = r.source("cycles_trimmed_mean", r.cycles_trimmed_mean);
        let part = if r.part == "whole" { String::new() } else { format!(" ({})", r.part) };
        bars.push(Bar {
            label: r.regime.to_string(),
            value: v.value,
            error: 0.0,
            colour: colour(&r.regime),
            group: format!("{}{part}", r.operation),
        });
        sources.push(v);
    }
    let chart = BarChart {
        title: "Thread operations (Synthesis Table 3), per regime".into(),
        y_label: "cycles per operation".into(),
        bars,
        references: Vec::new(),
    };
    Some(Fig {
        id: "fig-synthesis",
        title: "What a thread operation costs under each regime".into(),
        caption: "Single kernel entries on a two-core kernel driven by one pinned thread, uncontended: mean over \
                  every iteration without the top tenth, in cycles (records `synthesis` of experiment `synthesis`, \
                  table 3). Massalin & Pu's (1991) Synthesis V.1 figures are in the table below."
            .into(),
        plot: Plot::Bars(chart),
        sources,
    })
}

/// The tables: Tables 2–4 as one row per operation and one column per
/// regime, the lock-free parts' atomic instructions beside their timed
/// extra, and the contended case per regime.
pub fn tables(b: &mut String, rs: &Records) {
    let _ = writeln!(b, "<h3>The Synthesis Tables 2–4 ({}), per regime</h3>", esc(&cite::paper(4)));
    if let Some(n) = rs.null_call.of(STEP).next() {
        let _ = writeln!(
            b,
            "<p>Cycles per operation, mean without the top tenth. The null procedure call here: {:.1} cycles \
             (results.jsonl line {}, the one null call this page quotes); the paper's: 1.0 µs. Rows are single \
             kernel entries, uncontended, on the hosted platform (no page tables or TLB: the address-space switch \
             shows only the kernel's bookkeeping). Table 3, the thread operations, is the figure above.</p>",
            n.cycles, n.line
        );
    }
    let cells = rs.synthesis.of(STEP).filter(|r| r.table != 3).map(|r| {
        let part = match &*r.part {
            "whole" => String::new(),
            p => format!(", {p}"),
        };
        Cell {
            extra: vec![r.seed_us, r.seed_over_null_call],
            ..Cell::new(
                format!("{}{part} (T{})", r.operation, r.table),
                format!("`{}`", r.regime),
                r.cycles_trimmed_mean,
                r.line,
            )
        }
    });
    b.push_str(&pivot_with(cells, "operation (Table)", &["paper, µs", "paper, × null call"]));
    b.push_str(&csv_link(STEP, "Medians, ns, each regime's ratio to the null call and the notes"));
    let _ = writeln!(
        b,
        "<p>Under <code>lockfree</code>, these thread and memory operations run without the management gate \
         (suspend, resume and destroy by Synthesis's STOPME protocol): the atomic instructions each part \
         executes, counted (and both parts together where the paper splits an operation), what they alone cost \
         here (the floor), and the timed extra over <code>none</code> (the target: at most 1.5 × the floor). An \
         extra below its floor, or negative, is below the noise of this run:</p>"
    );
    let rows: Vec<_> = rs.synthesis_atomics.of(STEP).collect();
    let (mut within, mut beyond, mut noise) = (Vec::new(), Vec::new(), Vec::new());
    for r in &rows {
        let (Some(e), Some(f)) = (r.extra_over_none_cycles, r.atomic_floor_cycles) else { continue };
        let name = format!("{} ({})", r.operation, r.part);
        match floor_check(e, f, r.within_target) {
            FloorCheck::Within => within.push(name),
            FloorCheck::Beyond => beyond.push(name),
            FloorCheck::BelowNoise => noise.push(name),
        }
    }
    if !rows.is_empty() {
        let list = |v: &[String]| if v.is_empty() { "none".to_string() } else { v.join("; ") };
        let _ = writeln!(
            b,
            "<p>Of {} parts, {} are within 1.5 × their floor; {} beyond it: {}; and {} below the noise of this run \
             (extra below the floor or negative, no target claimed) (results.jsonl lines {}; each part's counts \
             and cycles in synthesis.csv).</p>",
            rows.len(),
            within.len(),
            beyond.len(),
            esc(&list(&beyond)),
            noise.len(),
            line_list(&rows.iter().map(|r| r.line).collect::<Vec<_>>())
        );
    }
    let _ = writeln!(
        b,
        "<p>The contended case: management operations from one core, then from both at once (the paper's case for \
         lock-freedom), in pairs per second on the hosted two-core machine. A <code>lockfree</code> suspend returns \
         once the request is made (Synthesis's semantics); the lock regimes stall the other core until the thread \
         has stopped:</p>"
    );
    let cells = rs.synthesis_contended.of(STEP).map(|r| {
        Cell::new(
            format!("{}, {}", r.operation, r.issuing_cores),
            format!("`{}`", r.regime),
            r.pairs_per_sec_mean,
            r.line,
        )
    });
    b.push_str(&pivot(cells, "operation, issuing cores"));
}
