//! The report's Synthesis Tables 2–4 (seed `004`), measured per regime by
//! `granule synthesis`: the tables, and a bar chart of Table 3 (thread
//! operations) per regime.

use std::fmt::Write as _;

use super::bars::{Bar, BarChart};
use super::figures::{Fig, Plot};
use super::html::table;
use super::records::{Records, Source};
use crate::fields::Fields;
use crate::regimes::colour;

/// The suite step that runs `granule synthesis`.
pub const STEP: &str = "synthesis";

/// Table 3's rows per regime: cycles (mean without the top tenth).
pub fn figure(rs: &Records<'_>) -> Option<Fig> {
    let rows: Vec<_> = rs.of(STEP, "synthesis").into_iter().filter(|r| r.num("table") == Some(3.0)).collect();
    if rows.is_empty() {
        return None;
    }
    let mut bars = Vec::new();
    let mut sources = Vec::new();
    for r in &rows {
        let (Some(op), Some(part), Some(regime)) = (r.str("operation"), r.str("part"), r.str("regime")) else {
            continue;
        };
        let Some(v) = Source::of(r, "cycles_trimmed_mean") else { continue };
        let part = if part == "whole" { String::new() } else { format!(" ({part})") };
        bars.push(Bar {
            label: regime.into(),
            value: v.value,
            error: 0.0,
            colour: colour(regime),
            group: format!("{op}{part}"),
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
                  table 3). The seed's Synthesis V.1 figures are in the table below, normalised to each machine's \
                  null procedure call."
            .into(),
        plot: Plot::Bars(chart),
        sources,
    })
}

/// The tables.
pub fn tables(b: &mut String, rs: &Records<'_>) {
    let _ = writeln!(b, "<h3>The Synthesis Tables 2–4 (seed 004), per regime</h3>");
    if let Some(n) = rs.of(STEP, "null_call").first() {
        let _ = writeln!(
            b,
            "<p>Null procedure call here: {} cycles (results.jsonl line {}); the seed's: 1.0 µs. Rows are single \
             kernel entries, uncontended, on the hosted platform (no page tables or TLB: the address-space switch \
             shows only the kernel's bookkeeping).</p>",
            n.num("cycles").map_or("?".into(), |c| format!("{c:.1}")),
            n.line
        );
    }
    b.push_str(&table(
        &rs.of(STEP, "synthesis"),
        &[
            ("table", "table"),
            ("operation", "operation"),
            ("part", "part"),
            ("regime", "regime"),
            ("cycles", "cycles_trimmed_mean"),
            ("median", "cycles_median"),
            ("ns", "ns_trimmed_mean"),
            ("× null call", "over_null_call"),
            ("seed µs", "seed_us"),
            ("seed × null call", "seed_over_null_call"),
            ("note", "note"),
        ],
    ));
    let _ = writeln!(
        b,
        "<p>Under <code>lockfree</code>, these thread and memory operations run without the management gate \
         (suspend, resume and destroy by Synthesis's STOPME protocol): the atomic instructions each part \
         executes, counted (and both parts together where the seed splits an operation), what they alone cost \
         here, and the timed extra over <code>none</code> (the target: at most 1.5 × the atomics):</p>"
    );
    b.push_str(&table(
        &rs.of(STEP, "synthesis_atomics"),
        &[
            ("operation", "operation"),
            ("part", "part"),
            ("atomics", "atomics"),
            ("xchg", "xchg"),
            ("cmpxchg", "cmpxchg"),
            ("cmpxchg16b", "cmpxchg16b"),
            ("management entry", "management"),
            ("atomics' cost, cycles", "atomic_floor_cycles"),
            ("extra over none, cycles", "extra_over_none_cycles"),
            ("within 1.5×", "within_target"),
        ],
    ));
    let _ = writeln!(
        b,
        "<p>The contended case: management operations from one core, then from both at once (the seed's case for \
         lock-freedom), in pairs per second on the hosted two-core machine. A <code>lockfree</code> suspend returns \
         once the request is made (Synthesis's semantics); the lock regimes stall the other core until the thread \
         has stopped:</p>"
    );
    b.push_str(&table(
        &rs.of(STEP, "synthesis_contended"),
        &[
            ("regime", "regime"),
            ("operation", "operation"),
            ("issuing cores", "issuing_cores"),
            ("pairs/s", "pairs_per_sec_mean"),
            ("std", "pairs_per_sec_std"),
            ("2 cores ÷ 1", "two_over_one"),
            ("÷ bkl", "over_bkl"),
            ("÷ fine", "over_fine"),
        ],
    ));
}
