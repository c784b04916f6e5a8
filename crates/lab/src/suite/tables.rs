//! The report's tables, short: the columns a reader needs, one number
//! format per column, and long lists (every run, every core pair, every
//! simulated core count) as figures or pivoted to a few rows, with a link
//! to the step's CSV beside the page for every record.

use std::fmt::Write as _;

use serde_json::json;

use super::cite;
use super::html::{csv_link, esc, grid, table, Column, ColumnFormat};
use super::kv::{self, Field};
use super::pivot::{pivot, Cell};
use super::records::{At, Records};
use super::summary::floor_check;
use super::units::line_list;
use super::RunInfo;
use crate::cmd::info::AtomicCostRecord;
use crate::cmd::ipc::records::{IpcRecord, LockProfileRecord};
use crate::cmd::quaject::records::QuajectRecord;
use crate::regimes::rank;

/// Single-core IPC per regime: the round trip, what each regime adds per
/// system call, and that beside what its atomic instructions cost (a
/// derived floor where the atomics were not counted).
pub fn ipc(b: &mut String, rs: &Records) {
    let _ = writeln!(b, "<h3>Single-core IPC</h3>");
    let mut rows = rs.ipc_runs();
    rows.sort_by_key(|r| rank(&r.regime));
    type Num = fn(&IpcRecord) -> Option<f64>;
    let (mean, std, ratio, extra, atoms, floor): (Num, Num, Num, Num, Num, Num) = (
        |r| Some(r.round_trip_cycles_mean),
        |r| Some(r.round_trip_cycles_std),
        |r| r.ratio_to_none,
        |r| r.extra_cycles_per_call,
        |r| r.atomics_per_call,
        |r| r.atomic_floor_cycles,
    );
    let col = |f: Num| ColumnFormat::of(&rows.iter().filter_map(|r| f(r)).collect::<Vec<_>>());
    let (mean_f, std_f, ratio_f, extra_f, atoms_f, floor_f) =
        (col(mean), col(std), col(ratio), col(extra), col(atoms), col(floor));
    let mut cells = Vec::new();
    for r in &rows {
        let regime = &*r.regime;
        let num = |f: Num, fmt: &ColumnFormat| f(r).map_or(String::new(), |v| fmt.write(v));
        let mut row = vec![
            format!("<code>{}</code>", esc(regime)),
            format!("{} ± {}", num(mean, &mean_f), num(std, &std_f)),
            num(ratio, &ratio_f),
        ];
        if regime == "none" {
            row.extend(["(the baseline)".to_string(), String::new(), String::new(), String::new()]);
        } else {
            let derived = r.atomics_source.as_deref() == Some("derived");
            let atoms = num(atoms, &atoms_f);
            let floor = num(floor, &floor_f);
            let check = match (r.extra_cycles_per_call, r.atomic_floor_cycles) {
                (Some(e), Some(f)) => floor_check(e, f, r.meets_target).words(),
                _ => "",
            };
            row.extend([
                num(extra, &extra_f),
                format!("{atoms} ({})", if derived { "derived" } else { "counted" }),
                if derived { format!("{floor} (derived)") } else { floor },
                check.to_string(),
            ]);
        }
        row.push(format!("<span class=\"none\">{}</span>", r.line));
        cells.push(row);
    }
    let head = [
        "regime",
        "cycles per round trip (mean ± std)",
        "× none",
        "extra cycles per system call",
        "atomics per call",
        "their cost uncontended, cycles (the floor)",
        "extra ≤ 1.5 × floor?",
        "line",
    ]
    .map(String::from);
    b.push_str(&grid(&head, &cells));
    let _ = writeln!(
        b,
        "<p class=\"none\">A derived count is the extra cycles' worth of the lock's atomic instructions, not a \
         count; where the measured extra is below its floor, or negative, the difference is below the noise of \
         this run and no target is claimed met.</p>"
    );
}

/// The KV macrobenchmark at the most cores measured (every run is in
/// `kv.csv` and in the figures), and what was not measured and why.
pub fn kv(b: &mut String, rs: &Records) {
    let all = kv::runs(rs);
    let most = all.iter().map(|r| r.cores).max().unwrap_or(0);
    let _ = writeln!(b, "<h3>KV macrobenchmark (measured on this machine), at {most} cores</h3>");
    let _ = writeln!(
        b,
        "<p>YCSB operations per second per regime and workload (every run's median is in the KV figures):</p>"
    );
    let cells = all.iter().filter(|r| r.cores == most).map(|r| {
        let row = match r.regime {
            kv::LINUX => "Linux redis-server".to_string(),
            g => format!("`{g}`"),
        };
        Cell::new(row, format!("workload {}", r.workload.to_uppercase()), r.get(Field::OpsPerSec), r.line)
    });
    b.push_str(&pivot(cells, "regime"));
    b.push_str(&csv_link(kv::STEP, "Every run at every core count, with latencies, Xput, the user cycles between kernel entries and the entry costs"));
    let linux = rs.linux_skipped.of(kv::STEP).map(|r| (r.line, "Linux redis-server".to_string(), &r.reason));
    let regimes = rs.regime_skipped.of(kv::STEP).map(|r| (r.line, format!("`{}`", r.regime), &r.reason));
    for (line, what, reason) in linux.chain(regimes) {
        let _ = writeln!(
            b,
            "<p class=\"none\">Not measured: {}: {} (results.jsonl line {line}).</p>",
            cite::html(&what),
            cite::html(reason)
        );
    }
}

/// The machine's limits: each atomic instruction's cost, and the
/// core-to-core latencies summarised (every pair is in `info.csv`).
pub fn limits(b: &mut String, rs: &Records) {
    let _ = writeln!(b, "<h3>The machine's limits</h3>");
    let cols: [Column<'_, AtomicCostRecord>; 4] = [
        ("instruction", |r| json!(r.instruction)),
        ("cycles", |r| json!(r.cycles)),
        ("ns", |r| json!(r.ns)),
        ("note", |r| json!(r.note)),
    ];
    b.push_str(&table(&rs.atomic_cost.of("info").collect::<Vec<_>>(), &cols));
    let pairs: Vec<_> = rs.core_latency.of("info").collect();
    let cycles: Vec<f64> = pairs.iter().map(|r| r.one_way_cycles).collect();
    let ns: Vec<f64> = pairs.iter().map(|r| r.one_way_ns).collect();
    if let (Some(c), Some(n)) = (spread(&cycles), spread(&ns)) {
        let _ = writeln!(
            b,
            "<p>A cache line's one-way trip between two cores, over {} ordered core pairs: {c} cycles ({n} ns) \
             (min – median – max; results.jsonl lines {}).</p>",
            pairs.len(),
            line_list(&pairs.iter().map(|r| r.line).collect::<Vec<_>>())
        );
    }
    b.push_str(&csv_link("info", "Every core pair's latency"));
}

/// `min – median – max` of `xs`, one number format for all three.
fn spread(xs: &[f64]) -> Option<String> {
    let mut v: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let f = ColumnFormat::of(&v);
    let mid = crate::stats::median(&v)?;
    Some(format!("{} – {} – {}", f.write(v[0]), f.write(mid), f.write(v[v.len() - 1])))
}

/// The locks: uncontended cost, and contended throughput per thread count.
pub fn locks(b: &mut String, rs: &Records) {
    let _ = writeln!(b, "<h3>Locks</h3>");
    let _ = writeln!(b, "<p>Uncontended costs are the lock figure above (every lock in locks.csv).</p>");
    let _ = writeln!(b, "<p>Contended: lock acquisitions per second, all threads together, per thread count:</p>");
    let cells = rs.lock_contended.of("locks").map(|r| {
        let threads = if r.threads == 1 { "1 thread".to_string() } else { format!("{} threads", r.threads) };
        Cell::new(r.lock.to_string(), threads, r.acquisitions_per_sec, r.line)
    });
    b.push_str(&pivot(cells, "lock"));
    b.push_str(&csv_link("locks", "Fairness and every run"));
}

/// The Synthesis lock-free objects (`granule quaject`). The null procedure
/// call is quoted once on the page, from the `synthesis` step's record,
/// so its row here is left to `quaject.csv`.
pub fn quaject(b: &mut String, rs: &Records) {
    let _ = writeln!(b, "<h3>The Synthesis table (lock-free objects)</h3>");
    let rows: Vec<_> = rs.quaject.of("quaject").filter(|r| r.operation != "null procedure call").collect();
    let cols: [Column<'_, QuajectRecord>; 6] = [
        ("operation", |r| json!(r.operation)),
        ("no sync, cycles", |r| json!(r.nosync_cycles)),
        ("0 retries, cycles", |r| json!(r.opt0_cycles)),
        ("1 retry, cycles", |r| json!(r.opt1_cycles)),
        ("0 retries ÷ no sync", |r| json!(r.opt0_over_nosync)),
        ("1 retry ÷ 0 retries", |r| json!(r.opt1_over_opt0)),
    ];
    b.push_str(&table(&rows, &cols));
    b.push_str(&csv_link("quaject", "Every operation in ns too, with retries"));
}

/// The lock profiler's runs (`granule ipc --profile`, one core): how often
/// each lock was taken, how often it was found held, the time spent in
/// acquire (which includes the acquire's own cost, so it is not zero when
/// no acquisition found the lock held) and the hold times.
pub fn profiler(b: &mut String, rs: &Records) {
    let _ = writeln!(b, "<h3>Lock profiler (profiled runs)</h3>");
    // The three locks each regime took most often (the rest, rarely
    // taken, are in the CSV).
    type Profile = At<LockProfileRecord<'static>>;
    let all: Vec<&Profile> = rs.lock_profile.of("ipc_profile").collect();
    let mut rows: Vec<&Profile> = Vec::new();
    let mut regimes: Vec<&str> = all.iter().map(|r| &*r.regime).collect();
    regimes.dedup();
    for g in regimes {
        let mut mine: Vec<&Profile> = all.iter().copied().filter(|r| r.regime == g).collect();
        mine.sort_by_key(|r| std::cmp::Reverse(r.site.acquisitions));
        rows.extend(mine.into_iter().take(3));
    }
    // A total per acquisition.
    let per = |r: &Profile, total: fn(&Profile) -> u64| -> Option<f64> {
        let n = r.site.acquisitions as f64;
        (n > 0.0).then(|| total(r) as f64 / n)
    };
    let n = |v: u64| Some(v as f64);
    let col =
        |f: &dyn Fn(&Profile) -> Option<f64>| ColumnFormat::of(&rows.iter().filter_map(|r| f(r)).collect::<Vec<_>>());
    let fa = col(&|r| n(r.site.acquisitions));
    let fc = col(&|r| n(r.site.contended));
    let fw = col(&|r| per(r, |r| r.site.wait_total));
    let fwm = col(&|r| n(r.site.wait_max));
    let fh = col(&|r| per(r, |r| r.site.hold_total));
    let fhm = col(&|r| n(r.site.hold_max));
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let w = |v: Option<f64>, f: &ColumnFormat| v.map_or(String::new(), |v| f.write(v));
            vec![
                format!("<code>{}</code>", esc(&r.regime)),
                esc(&r.site.lock),
                w(n(r.site.acquisitions), &fa),
                w(n(r.site.contended), &fc),
                w(per(r, |r| r.site.wait_total), &fw),
                w(n(r.site.wait_max), &fwm),
                w(per(r, |r| r.site.hold_total), &fh),
                w(n(r.site.hold_max), &fhm),
                format!("<span class=\"none\">{}</span>", r.line),
            ]
        })
        .collect();
    let head = [
        "regime",
        "lock",
        "acquisitions",
        "found held",
        "cycles in acquire, mean",
        "cycles in acquire, max",
        "cycles held, mean",
        "cycles held, max",
        "line",
    ]
    .map(String::from);
    b.push_str(&grid(&head, &cells));
    let _ = writeln!(
        b,
        "<p class=\"none\">The time in acquire runs from the start of the acquire to holding the lock: on one core \
         no acquisition finds the lock held (found held 0), and the time is the acquire's own cost, plus the rare \
         interruption of this machine's host (the maxima).</p>"
    );
    b.push_str(&csv_link("ipc_profile", "Every lock, with totals, minima and elision outcomes"));
}

/// How to repeat the run: the suite's command, and each step's time (their
/// command lines are in `commands.txt`).
pub fn repeat(b: &mut String, run: &RunInfo) {
    let _ = writeln!(b, "<h2>Repeat this run</h2>\n<pre>{}</pre>", esc(&run.command));
    if !run.steps.is_empty() {
        let _ =
            writeln!(b, "<details><summary>Each step's command line and time (also in commands.txt)</summary>\n<pre>");
        for s in &run.steps {
            let _ = writeln!(b, "{}   # {:.1} s", esc(&s.command), s.seconds);
        }
        let _ = writeln!(b, "</pre></details>");
    }
    let _ = writeln!(b, "<p>Files: <a href=\"results.jsonl\">results.jsonl</a> (every record, machine record first)");
    for s in &run.steps {
        let n = esc(&s.name);
        let _ = write!(b, " · <a href=\"{n}.csv\">{n}.csv</a>");
    }
    let _ = writeln!(b, " · <a href=\"commands.txt\">commands.txt</a></p>");
    let papers: Vec<String> = (1..=cite::PAPERS.len()).map(|n| esc(&cite::paper_titled(n))).collect();
    let _ = writeln!(b, "<p class=\"none\">The papers this suite repeats: {}.</p>", papers.join("; "));
}

/// The measured ping-pong points and the simulations, each drawn in the
/// figures: where every record of them is.
pub fn drawn(b: &mut String, rs: &Records, steps: &[String]) {
    let n = rs.model_simulate.len();
    let scale = rs.scale.of("scale").count();
    let where_ = if steps.is_empty() {
        "results.jsonl".to_string()
    } else {
        format!("the {} simulation steps' CSV files, listed under Files below", steps.len())
    };
    let _ = writeln!(
        b,
        "<h3>Multicore ping-pong and simulated machines</h3>\n<p>The {scale} measured ping-pong runs are the \
         throughput figure's dots (every run, with its utilisation, in <a href=\"scale.csv\">scale.csv</a>); the \
         {n} simulated points (predictions, not measurements) are the lines of the prediction figures, each with \
         its lock utilisation, queue length and hand-off time in {where_}.</p>"
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::summary::FloorCheck;

    #[test]
    fn spreads_share_one_format() {
        assert_eq!(spread(&[122.6, 123.0, 130.4]).as_deref(), Some("123 – 123 – 130"));
        assert_eq!(spread(&[]), None);
    }

    #[test]
    fn floor_checks_never_claim_a_target_below_the_noise() {
        assert_eq!(floor_check(9.4, 13.0, Some(true)), FloorCheck::BelowNoise);
        assert_eq!(floor_check(-156.0, 21.0, Some(true)), FloorCheck::BelowNoise);
        assert_eq!(floor_check(15.0, 13.0, Some(true)), FloorCheck::Within);
        assert_eq!(floor_check(40.0, 13.0, Some(false)), FloorCheck::Beyond);
    }
}
