//! The verdict at the top of the page: three to five plain sentences that
//! answer the suite's question for this machine, each computed from the
//! records and naming the `results.jsonl` lines it quotes. Each sentence has
//! its own shape (what was measured, what the model predicts, what finer
//! locking costs, what one system call costs); the detailed findings follow
//! below it on the page.

use super::answer::{cores_phrase, cores_text};
use super::frontier::{Frontier, SEED_POINTS};
use super::records::Records;
use super::summary::Finding;
use super::units::{count, percent, quantity};
use crate::fields::Fields;

/// The delays the verdict quotes (the seeds' own: 4,000 and 16,000 cycles).
const QUOTED: [u64; 2] = [4000, 16000];

/// The verdict's sentences (at most five; fewer when records are missing).
pub fn verdict(rs: &Records<'_>, f: &Frontier) -> Vec<Finding> {
    let mut out = Vec::new();
    out.extend(measured(f));
    out.extend(predicted(f));
    out.extend(crossover(f));
    out.extend(entry_cost(rs));
    out.truncate(5);
    out
}

/// What this machine's own cores showed.
fn measured(f: &Frontier) -> Option<Finding> {
    let rows: Vec<_> = f.rows.iter().filter_map(|r| Some((r, r.measured.as_ref()?))).collect();
    let (first, m0) = rows.first()?;
    let (last, m1) = rows.last()?;
    let mut lines: Vec<usize> = m0.lines.iter().chain(&m1.lines).copied().collect();
    lines.sort_unstable();
    lines.dedup();
    let when = |d: u64| if d == 0 { "come back to back".to_string() } else { format!("are {} cycles apart", count(d)) };
    let text = if first.delay == last.delay {
        format!(
            "Measured here on {}, one big lock keeps {} of perfect scaling when system calls {}.",
            cores_phrase(m0.most_cores, false),
            percent(m0.efficiency_at_most),
            when(first.delay)
        )
    } else {
        // The second figure names its core count only where it differs.
        let on = if m1.most_cores == m0.most_cores {
            String::new()
        } else {
            format!(" (on {})", cores_phrase(m1.most_cores, false))
        };
        format!(
            "Measured here on {}, one big lock keeps {} of perfect scaling when system calls {}, and {}{on} when \
             they {}.",
            cores_phrase(m0.most_cores, false),
            percent(m0.efficiency_at_most),
            when(first.delay),
            percent(m1.efficiency_at_most),
            when(last.delay)
        )
    };
    Some(Finding { text, lines })
}

/// What the fitted model predicts at the seeds' delays.
fn predicted(f: &Frontier) -> Option<Finding> {
    let model = f.model?;
    let at: Vec<(u64, usize)> =
        QUOTED.iter().filter_map(|d| Some((*d, f.rows.iter().find(|r| r.delay == *d)?.predicted[0]?))).collect();
    if at.is_empty() {
        return None;
    }
    let parts: Vec<String> =
        at.iter().map(|(d, n)| format!("{} at {} cycles", cores_phrase(*n, false), count(*d))).collect();
    let sim: Vec<String> = QUOTED
        .iter()
        .filter_map(|d| {
            let s = f.rows.iter().find(|r| r.delay == *d)?.simulated?;
            Some(cores_text(s[0].0, s[0].1))
        })
        .collect();
    let sim = if sim.len() == at.len() {
        format!(" (simulated on the seeds' two-socket topology: {})", sim.join(" and "))
    } else {
        String::new()
    };
    let seeds: Vec<String> = SEED_POINTS
        .iter()
        .filter(|(d, _, _)| QUOTED.contains(d))
        .map(|(d, n, _)| format!("{n} at {}", count(*d)))
        .collect();
    Some(Finding {
        text: format!(
            "The model fitted to this machine's big-lock measurements (a lock held {} per acquisition) predicts that the big lock \
             stays within 90 % of perfect scaling up to {} between system calls{sim} — a prediction for cores \
             this machine does not have; seed 001's two-socket Xeon reached {}.",
            quantity(model.s, "cycles"),
            parts.join(" and "),
            seeds.join(" and ")
        ),
        lines: {
            let mut l = model.lines();
            for r in f.rows.iter().filter(|r| !sim.is_empty() && QUOTED.contains(&r.delay)) {
                l.extend(r.simulated_lines.iter().copied());
            }
            l.sort_unstable();
            l.dedup();
            l
        },
    })
}

/// What finer locking costs, and from where it pays.
fn crossover(f: &Frontier) -> Option<Finding> {
    let [Some(b), Some(fine)] = f.single_core_cycles else { return None };
    f.model?;
    let row = f.rows.iter().find(|r| r.delay == QUOTED[0])?;
    let short = f.rows.iter().filter(|r| r.delay > 0).find(|r| r.crossover.is_some());
    let when = |r: &super::frontier::FrontierRow| match r.crossover {
        Some(1) => "from a single core".to_string(),
        Some(n) => format!("only from {}", cores_phrase(n, false)),
        None => format!("on no machine up to {}", cores_phrase(super::frontier::MAX_CORES, false)),
    };
    let also = short
        .filter(|s| s.delay != row.delay)
        .map(|s| format!(" ({} when they are {} cycles apart)", when(s), count(s.delay)))
        .unwrap_or_default();
    Some(Finding {
        text: format!(
            "Fine-grained locking costs {} per round trip on one core where the big lock costs {}, so by the \
             fitted model it pays {} when system calls are {} cycles apart{also}.",
            quantity(fine, "cycles"),
            quantity(b, "cycles"),
            when(row),
            count(row.delay)
        ),
        lines: row.crossover_lines.clone(),
    })
}

/// What the lock costs one system call.
fn entry_cost(rs: &Records<'_>) -> Option<Finding> {
    let rows: Vec<_> = rs.of("ipc", "ipc").into_iter().filter(|r| r.bool("profiled") != Some(true)).collect();
    let none = rows.iter().find(|r| r.str("regime") == Some("none"))?;
    let base = none.num("round_trip_cycles_mean")?;
    let extra = |g: &str| {
        let r = rows.iter().find(|r| r.str("regime") == Some(g))?;
        Some((r.num("extra_cycles_per_call")?, r.line))
    };
    let mut parts = Vec::new();
    let mut lines = vec![none.line];
    for g in ["bkl", "fine", "lockfree"] {
        if let Some((e, l)) = extra(g) {
            parts.push(format!("`{g}` {}", quantity(e, "cycles")));
            lines.push(l);
        }
    }
    if parts.is_empty() {
        return None;
    }
    Some(Finding {
        text: format!(
            "Each lock is paid on every call: an IPC round trip costs {} with no lock, and per system call {} \
             more.",
            quantity(base, "cycles"),
            parts.join(", ")
        ),
        lines,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::record;
    use crate::suite::frontier::compute;
    use crate::suite::records::testing::{rec, scale_point};

    #[test]
    fn the_verdict_answers_in_plain_numbers_and_names_its_lines() {
        let p = scale_point;
        let all = vec![
            record("machine"),
            rec("fit_input", "model_fit", &[("tsc_ghz", 2.0.into()), ("locks_per_round_trip", 2.0.into())]),
            rec(
                "model_fit",
                "model_fit",
                &[("regime", "bkl".into()), ("scope", "all delays".into()), ("s", 300.0.into()), ("a", 100.0.into())],
            ),
            p("bkl", 0, 1, 5e6),
            p("bkl", 0, 2, 6e6),
            p("fine", 0, 1, 4e6),
            p("bkl", 4000, 1, 2e9 / 4400.0),
            p("bkl", 4000, 2, 1.9 * 2e9 / 4400.0),
            rec("ipc", "ipc", &[("regime", "none".into()), ("round_trip_cycles_mean", 380.0.into())]),
            rec("ipc", "ipc", &[("regime", "bkl".into()), ("extra_cycles_per_call", 12.0.into())]),
        ];
        let rs = Records::new(&all);
        let v = verdict(&rs, &compute(&rs));
        assert!((3..=5).contains(&v.len()), "{v:?}");
        for f in &v {
            assert!(!f.lines.is_empty(), "{f:?}");
            assert!(!f.text.contains("e6") && !f.text.contains("e+"), "{}", f.text);
        }
        assert!(v[0].text.contains("60 %") && v[0].text.contains("95 %"), "{}", v[0].text);
        assert_eq!(v[1].lines, [2, 3], "the fit and its input");
        assert!(v[1].text.contains("300 cycles per acquisition"), "{}", v[1].text);
        assert!(v[2].text.contains("500 cycles") && v[2].text.contains("400 cycles"), "{}", v[2].text);
        assert!(v[3].text.contains("380 cycles") && v[3].text.contains("`bkl` 12 cycles"), "{}", v[3].text);
        // No two sentences share an opening.
        let starts: Vec<&str> = v.iter().map(|f| f.text.split(' ').next().unwrap()).collect();
        let mut unique = starts.clone();
        unique.dedup();
        assert_eq!(starts, unique);
    }

    #[test]
    fn without_a_fit_the_verdict_claims_nothing_it_did_not_compute() {
        let all = vec![
            record("machine"),
            scale_point("bkl", 0, 1, 5e6),
            scale_point("bkl", 0, 2, 6e6),
            scale_point("fine", 0, 1, 4e6),
            // A delay no run can have is left out, not read as 0.
            scale_point("bkl", 0, 2, 1e3)
                .into_iter()
                .map(|(k, v)| (k.clone(), if k == "delay_cycles" { (-5).into() } else { v }))
                .collect(),
        ];
        let rs = Records::new(&all);
        let v = verdict(&rs, &compute(&rs));
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(v[0].text.contains("60 %") && v[0].text.contains("on 2 cores"), "{}", v[0].text);
        assert_eq!(v[0].lines, [2, 3]);
    }
}
