//! The verdict at the top of the page: one headline a person can act on,
//! then a few plain sentences that answer the suite's question for this
//! machine, each computed from the records and naming the `results.jsonl`
//! lines it quotes. Every predicted number is a range (the band of
//! [`super::band`]); where the band misses a measurement on this machine's
//! own cores, the verdict says the model does not describe the machine
//! there instead of quoting it as if it did.

use super::answer::{cores_phrase, cores_range_phrase, crossover_text};
use super::frontier::{Check, Checked, Frontier, FrontierRow, SEED_POINTS};
use super::records::Records;
use super::summary::Finding;
use super::units::{count, percent, quantity, times};

/// The delays the verdict quotes (the seeds' own: 4,000 and 16,000 cycles).
const QUOTED: [u64; 2] = [4000, 16000];

/// The most disagreements spelled out one by one in the verdict (the
/// frontier table lists every one).
const MAX_SPELLED: usize = 3;

/// The verdict's sentences, the headline first (fewer when records are
/// missing).
pub fn verdict(rs: &Records, f: &Frontier) -> Vec<Finding> {
    let mut out = Vec::new();
    out.extend(headline(f));
    out.extend(measured(f));
    out.extend(disagreements(f));
    out.extend(predicted(f));
    out.extend(crossover(f));
    out.extend(entry_cost(rs));
    out
}

/// How a delay reads in a sentence.
fn apart(d: u64) -> String {
    if d == 0 {
        "come back to back".to_string()
    } else {
        format!("are {} cycles apart", count(d))
    }
}

/// The sentence that names one disagreement (the phrase the page test
/// looks for: "does not describe this machine at D cycles on N cores").
pub fn disagreement_text(delay: u64, c: &Check) -> String {
    let at = format!("at {} cycles on {}", count(delay), cores_phrase(c.cores, false));
    match c.what {
        Checked::Efficiency => format!(
            "the model does not describe this machine {at}: its band gives {}–{} of perfect scaling, {} was \
             measured (± {})",
            percent(c.predicted.0),
            percent(c.predicted.1),
            percent(c.measured),
            percent(c.spread)
        ),
        Checked::Crossover => format!(
            "the model does not describe this machine {at}: it has fine-grained locking {} the big lock there, \
             and fine ran {} the big lock's throughput",
            if c.predicted.1 == 1.0 { "ahead of" } else { "behind" },
            times(c.measured)
        ),
    }
}

/// The headline: from which delay one big lock keeps 90 % here, measured
/// and predicted.
fn headline(f: &Frontier) -> Option<Finding> {
    let rows: Vec<&FrontierRow> = f.rows.iter().filter(|r| r.measured.is_some()).collect();
    // The smallest delay from which 90 % held at every larger delay too.
    let held_at = |r: &&FrontierRow| r.measured.as_ref().is_some_and(|m| m.at_least[0]);
    let from = rows.iter().rposition(|r| !held_at(r)).map_or(0, |i| i + 1);
    let held = rows.get(from);
    if held.is_none() {
        if let Some(r) = rows.iter().find(|r| held_at(r)) {
            // 90 % held at a delay but not at every larger one: noise.
            let m = r.measured.as_ref()?;
            let last = rows.last()?;
            let m1 = last.measured.as_ref()?;
            let mut lines: Vec<usize> = m.lines.iter().chain(&m1.lines).copied().collect();
            lines.sort_unstable();
            lines.dedup();
            return Some(Finding {
                text: format!(
                    "On {} here one big lock kept 90 % of perfect scaling when system calls were {} cycles apart \
                     but not at every larger delay ({} at {} cycles): this run's measurements are too noisy to say \
                     from which delay one big lock is enough; run the suite again on a quieter machine.",
                    cores_phrase(m.most_cores, false),
                    count(r.delay),
                    percent(m1.efficiency_at_most),
                    count(last.delay)
                ),
                lines,
            });
        }
    }
    let mut lines = Vec::new();
    let text = match held {
        Some(r) => {
            let m = r.measured.as_ref()?;
            lines.extend(m.lines.iter().copied());
            let predicted = r.predicted[0].map(|(lo, hi)| {
                if let Some(b) = &f.band {
                    lines.push(b.line);
                }
                // The measurement rules out a limit below the cores measured.
                let ruled_out = if lo < m.most_cores {
                    format!(" (its low end, {}, is below what was measured here)", cores_phrase(lo, false))
                } else {
                    String::new()
                };
                format!(
                    "; beyond them the model, drawn between the shortest and the longest service time measured, \
                     puts the limit at {}{ruled_out}",
                    cores_range_phrase((lo.max(m.most_cores), hi))
                )
            });
            let caveat = if r.checks.iter().any(|c| !c.agrees) {
                " (though at that delay the model misses a measurement, below)"
            } else {
                ""
            };
            format!(
                "When system calls are at least {} cycles apart, one big lock keeps 90 % of perfect scaling on all \
                 {} measured here{}{caveat}.",
                count(r.delay),
                cores_phrase(m.most_cores, false),
                predicted.unwrap_or_default()
            )
        }
        None => {
            let r = rows.last()?;
            let m = r.measured.as_ref()?;
            lines.extend(m.lines.iter().copied());
            format!(
                "At every delay measured, up to {} cycles between system calls, one big lock fell below 90 % of \
                 perfect scaling on {} here ({} at {} cycles): on this machine system calls must be further apart \
                 than that for one big lock to be enough.",
                count(r.delay),
                cores_phrase(m.most_cores, false),
                percent(m.efficiency_at_most),
                count(r.delay)
            )
        }
    };
    lines.sort_unstable();
    lines.dedup();
    Some(Finding { text, lines })
}

/// What this machine's own cores showed.
fn measured(f: &Frontier) -> Option<Finding> {
    let rows: Vec<_> = f.rows.iter().filter_map(|r| Some((r, r.measured.as_ref()?))).collect();
    let (first, m0) = rows.first()?;
    let (last, m1) = rows.last()?;
    let mut lines: Vec<usize> = m0.lines.iter().chain(&m1.lines).copied().collect();
    lines.sort_unstable();
    lines.dedup();
    let text = if first.delay == last.delay {
        format!(
            "Measured here on {}, one big lock keeps {} of perfect scaling when system calls {}.",
            cores_phrase(m0.most_cores, false),
            percent(m0.efficiency_at_most),
            apart(first.delay)
        )
    } else {
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
            apart(first.delay),
            percent(m1.efficiency_at_most),
            apart(last.delay)
        )
    };
    Some(Finding { text, lines })
}

/// Where the model misses this machine's own measurements.
fn disagreements(f: &Frontier) -> Option<Finding> {
    let all = f.disagreements();
    if all.is_empty() {
        return None;
    }
    let mut lines: Vec<usize> = all.iter().flat_map(|(_, c)| c.lines.iter().copied()).collect();
    lines.extend(f.band.as_ref().map(|b| b.line));
    lines.sort_unstable();
    lines.dedup();
    let spelled: Vec<String> = all.iter().take(MAX_SPELLED).map(|(d, c)| disagreement_text(*d, c)).collect();
    let more = match all.len().saturating_sub(MAX_SPELLED) {
        0 => String::new(),
        n => format!("; and at {n} more point{} (the table below lists them)", if n == 1 { "" } else { "s" }),
    };
    let mut text = spelled.join("; ");
    if let Some(first) = text.get(..1) {
        text = first.to_uppercase() + &text[1..];
    }
    Some(Finding {
        text: format!(
            "{text}{more}. A lock's service time that grows with the cores, and this virtual machine's own \
             scheduling, are what one queueing model with one service time cannot follow."
        ),
        lines,
    })
}

/// What the band predicts at the seeds' delays.
fn predicted(f: &Frontier) -> Option<Finding> {
    let band = f.band.as_ref()?;
    let at: Vec<(&FrontierRow, (usize, usize))> = QUOTED
        .iter()
        .filter_map(|d| {
            let r = f.rows.iter().find(|r| r.delay == *d)?;
            Some((r, r.predicted[0]?))
        })
        .collect();
    if at.is_empty() {
        return None;
    }
    let parts: Vec<String> =
        at.iter().map(|(r, p)| format!("{} at {} cycles", cores_range_phrase(*p), count(r.delay))).collect();
    let sim: Vec<String> = at
        .iter()
        .filter_map(|(r, _)| {
            let ((lo, _), (hi, at_least)) = r.simulated?;
            Some(if at_least {
                format!("{} or more", count(lo.min(hi) as u64))
            } else {
                super::answer::cores_range((lo, hi))
            })
        })
        .collect();
    let sim = if sim.len() == at.len() {
        format!(" (simulated on {} with the same hold times: {})", super::cite::SEEDS_MACHINE, sim.join(" and "))
    } else {
        String::new()
    };
    let seeds: Vec<String> = SEED_POINTS
        .iter()
        .filter(|(d, _, _)| QUOTED.contains(d))
        .map(|(d, n, _)| format!("{n} at {}", count(*d)))
        .collect();
    let fit = match &f.fit {
        Some(k) => format!(
            " A least-squares fit over the measured core counts agrees on a service time of {} per acquisition.",
            quantity(k.s, "cycles")
        ),
        None => String::new(),
    };
    let mut lines = vec![band.line];
    for (r, _) in &at {
        if !sim.is_empty() {
            lines.extend(r.simulated_lines.iter().copied());
        }
    }
    if let Some(k) = &f.fit {
        lines.extend(k.lines());
    }
    lines.sort_unstable();
    lines.dedup();
    Some(Finding {
        text: format!(
            "With the big lock's service time between {} (measured on {}) and {} (on {}), the model predicts that \
             one big lock stays within 90 % of perfect scaling up to {}{sim}: a prediction for cores this machine \
             does not have; Elphinstone et al. (2016) measured {} on theirs.{fit}",
            quantity(band.lo.0, "cycles"),
            cores_phrase(band.lo.1, false),
            quantity(band.hi.0, "cycles"),
            cores_phrase(band.hi.1, false),
            parts.join(" and "),
            seeds.join(" and ")
        ),
        lines,
    })
}

/// What finer locking costs, and from where it pays.
fn crossover(f: &Frontier) -> Option<Finding> {
    let row = f.rows.iter().find(|r| r.delay == QUOTED[0])?;
    let one_core = row.fine_over_bkl_one_core?;
    let cross = row.crossover?;
    let measured = f
        .rows
        .iter()
        .filter_map(|r| Some((r.delay, r.fine_over_bkl_measured?)))
        .map(|(d, (c, x))| (c, format!("{} at {} cycles", times(x), count(d))))
        .collect::<Vec<_>>();
    let measured = match measured.first() {
        None => String::new(),
        Some((c, _)) => format!(
            " Measured here on {}, fine-grained locking delivered {} the big lock's throughput.",
            cores_phrase(*c, false),
            measured.iter().map(|m| m.1.as_str()).collect::<Vec<_>>().join(", ")
        ),
    };
    Some(Finding {
        text: format!(
            "On one core fine-grained locking delivers {} the big lock's throughput when system calls are {} \
             cycles apart (the scaling run's one-core points), so by the model's band it overtakes the big lock \
             from {} cores there.{measured}",
            times(one_core),
            count(row.delay),
            crossover_text(cross),
        ),
        lines: row.crossover_lines.clone(),
    })
}

/// What the lock costs one system call.
fn entry_cost(rs: &Records) -> Option<Finding> {
    let rows = rs.ipc_runs();
    let none = rows.iter().find(|r| r.regime == "none")?;
    let base = none.round_trip_cycles_mean;
    let extra = |g: &str| {
        let r = rows.iter().find(|r| r.regime == g)?;
        Some((r.extra_cycles_per_call?, r.line))
    };
    let mut parts = Vec::new();
    let mut lines = vec![none.line];
    for g in ["bkl", "fine", "lockfree"] {
        if let Some((e, l)) = extra(g) {
            parts.push(format!("{g} {}", quantity(e, "cycles")));
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
    use crate::suite::band::testing::band_record;
    use crate::suite::frontier::compute;
    use crate::suite::records::testing::{rec, scale_point};

    fn suite() -> Vec<serde_json::Map<String, serde_json::Value>> {
        let p = scale_point;
        // 2 GHz; one-core hold 200, two cores 300 + 100 hand-off; think 100
        // at delay 0 and 2100 at 4000 (one core: 600 and 4600 cycles per
        // round trip).
        vec![
            record("machine"),
            rec("fit_input", "model_fit", &[("tsc_ghz", 2.0.into()), ("locks_per_round_trip", 2.0.into())]),
            band_record(&[(1, 200.0, 0.0), (2, 300.0, 100.0)], &[(0.0, 100.0), (4000.0, 2100.0)], 100.0),
            p("bkl", 0, 1, 2e9 / 600.0),
            p("bkl", 0, 2, 0.75 * 2e9 / 600.0),
            p("fine", 0, 1, 2e9 / 700.0),
            p("bkl", 4000, 1, 2e9 / 4600.0),
            p("bkl", 4000, 2, 1.9 * 2e9 / 4600.0),
            rec("ipc", "ipc", &[("regime", "none".into()), ("round_trip_cycles_mean", 380.0.into())]),
            rec("ipc", "ipc", &[("regime", "bkl".into()), ("extra_cycles_per_call", 12.0.into())]),
        ]
    }

    #[test]
    fn the_verdict_opens_with_a_headline_and_states_ranges() {
        let all = suite();
        let rs = Records::new(&all);
        let v = verdict(&rs, &compute(&rs));
        for f in &v {
            assert!(!f.lines.is_empty(), "{f:?}");
            assert!(!f.text.contains('`'), "no Markdown: {}", f.text);
            assert!(!f.text.contains("e6") && !f.text.contains("e+"), "{}", f.text);
        }
        assert!(
            v[0].text.starts_with("When system calls are at least 4,000 cycles apart, one big lock keeps 90 %"),
            "{}",
            v[0].text
        );
        assert!(v[0].text.contains(" to ") && v[0].text.contains("cores"), "a range: {}", v[0].text);
        assert!(v[1].text.contains("38 %") && v[1].text.contains("95 %"), "{}", v[1].text);
        let predicted = v.iter().find(|f| f.text.starts_with("With the big lock's service time")).unwrap();
        assert!(predicted.text.contains("200 cycles") && predicted.text.contains("400 cycles"), "{}", predicted.text);
        assert!(!predicted.text.contains("least-squares"), "no quoted fit: {}", predicted.text);
        let cost = v.iter().find(|f| f.text.starts_with("Each lock")).unwrap();
        assert!(cost.text.contains("380 cycles") && cost.text.contains("bkl 12 cycles"), "{}", cost.text);
    }

    #[test]
    fn a_measurement_the_band_misses_is_said_plainly() {
        let mut all = suite();
        // Two cores at delay 0 at a tenth of one core.
        all[4] = scale_point("bkl", 0, 2, 0.2 * 2e9 / 600.0);
        let rs = Records::new(&all);
        let v = verdict(&rs, &compute(&rs));
        let d = v.iter().find(|f| f.text.contains("does not describe this machine")).unwrap();
        assert!(d.text.starts_with("The model does not describe this machine at 0 cycles on 2 cores"), "{}", d.text);
        assert!(d.text.contains("10 %"), "{}", d.text);
    }

    #[test]
    fn without_a_band_the_verdict_claims_nothing_it_did_not_compute() {
        let all = vec![
            record("machine"),
            scale_point("bkl", 0, 1, 5e6),
            scale_point("bkl", 0, 2, 6e6),
            scale_point("fine", 0, 1, 4e6),
        ];
        let rs = Records::new(&all);
        let v = verdict(&rs, &compute(&rs));
        assert_eq!(v.len(), 2, "{v:?}");
        assert!(v[0].text.starts_with("At every delay measured"), "{}", v[0].text);
        assert!(v[1].text.contains("60 %") && v[1].text.contains("on 2 cores"), "{}", v[1].text);
    }
}
