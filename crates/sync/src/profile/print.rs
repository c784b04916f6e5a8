//! Printers for profiler snapshots: FreeBSD `LOCK_PROFILING`, Linux
//! `lock_stat`, and JSON Lines.
//!
//! Times are cycles (FreeBSD prints microseconds and Linux nanoseconds; the
//! header says which unit is used so the tables are never misread).

use alloc::format;
use alloc::string::String;
use core::fmt::Write;

use super::SiteRecord;

fn site_name(r: &SiteRecord) -> String {
    format!("{}:{} ({})", r.file, r.line, r.lock)
}

/// FreeBSD `sysctl debug.lock.prof.stats` layout:
/// `max wait_max total wait_total count avg wait_avg cnt_hold cnt_lock name`,
/// where `max`/`total`/`avg` are hold times, `count` acquisitions, `cnt_hold`
/// times others waited while this site held the lock, and `cnt_lock` times this
/// site found the lock held. Elision columns follow when any site elided.
pub fn freebsd_table(records: &[SiteRecord]) -> String {
    let elided = records.iter().any(|r| r.commits + r.aborts() + r.fallbacks > 0);
    let mut s = String::from("# times in cycles\n");
    let _ = write!(
        s,
        "{:>10} {:>10} {:>12} {:>12} {:>10} {:>8} {:>8} {:>10} {:>10}",
        "max", "wait_max", "total", "wait_total", "count", "avg", "wait_avg", "cnt_hold", "cnt_lock"
    );
    if elided {
        let _ = write!(
            s,
            " {:>10} {:>9} {:>9} {:>9} {:>9} {:>9}",
            "commits", "conflict", "capacity", "lockbusy", "other", "fallback"
        );
    }
    s.push_str(" name\n");
    for r in records {
        let _ = write!(
            s,
            "{:>10} {:>10} {:>12} {:>12} {:>10} {:>8} {:>8} {:>10} {:>10}",
            r.hold_max,
            r.wait_max,
            r.hold_total,
            r.wait_total,
            r.acquisitions,
            r.hold_avg(),
            r.wait_avg(),
            r.cnt_hold,
            r.contended
        );
        if elided {
            let _ = write!(
                s,
                " {:>10} {:>9} {:>9} {:>9} {:>9} {:>9}",
                r.commits, r.aborts_conflict, r.aborts_capacity, r.aborts_lock_busy, r.aborts_other, r.fallbacks
            );
        }
        let _ = writeln!(s, " {}", site_name(r));
    }
    s
}

/// The columns of seed `003`'s Tables 1–3 (FreeBSD's profiler as that
/// paper printed it): `max held, max wait, total held, total wait, times
/// acquired, average held, average waiting, lock name and location`.
pub fn seed_table(records: &[SiteRecord]) -> String {
    let mut s = String::from("# times in cycles\n");
    let _ = writeln!(
        s,
        "{:>10} {:>10} {:>12} {:>12} {:>10} {:>8} {:>8} lock name and location",
        "max held", "max wait", "total held", "total wait", "acquired", "avg held", "avg wait"
    );
    for r in records {
        let _ = writeln!(
            s,
            "{:>10} {:>10} {:>12} {:>12} {:>10} {:>8} {:>8} {}",
            r.hold_max,
            r.wait_max,
            r.hold_total,
            r.wait_total,
            r.acquisitions,
            r.hold_avg(),
            r.wait_avg(),
            site_name(r)
        );
    }
    s
}

/// Linux `/proc/lock_stat` layout (one line per site, `class name` first).
pub fn lock_stat_table(records: &[SiteRecord]) -> String {
    let mut s = String::from("lock_stat version 0.4 (granule; times in cycles)\n");
    let _ = writeln!(
        s,
        "{:>40} {:>11} {:>11} {:>12} {:>12} {:>14} {:>12} {:>11} {:>12} {:>12} {:>12} {:>14} {:>12}",
        "class name",
        "con-bounces",
        "contentions",
        "waittime-min",
        "waittime-max",
        "waittime-total",
        "waittime-avg",
        "acq-bounces",
        "acquisitions",
        "holdtime-min",
        "holdtime-max",
        "holdtime-total",
        "holdtime-avg"
    );
    for r in records {
        let name = site_name(r);
        let mut start = name.len().saturating_sub(40);
        while !name.is_char_boundary(start) {
            start += 1;
        }
        let name = &name[start..];
        let _ = writeln!(
            s,
            "{:>40} {:>11} {:>11} {:>12} {:>12} {:>14} {:>12} {:>11} {:>12} {:>12} {:>12} {:>14} {:>12}",
            name,
            r.con_bounces,
            r.contended,
            r.wait_min,
            r.wait_max,
            r.wait_total,
            r.wait_avg(),
            r.acq_bounces,
            r.acquisitions,
            r.hold_min,
            r.hold_max,
            r.hold_total,
            r.hold_avg()
        );
    }
    s
}

/// One JSON object per site, one per line, each with `"record":"lock_profile"`.
pub fn to_json_lines(records: &[SiteRecord]) -> String {
    let mut s = String::new();
    for r in records {
        let mut v = serde_json::to_value(r).unwrap_or(serde_json::Value::Null);
        if let serde_json::Value::Object(m) = &mut v {
            m.insert(String::from("record"), serde_json::Value::from("lock_profile"));
        }
        s.push_str(&serde_json::to_string(&v).unwrap_or_default());
        s.push('\n');
    }
    s
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::profile::{LockStats, Profile, Site};

    #[track_caller]
    fn here() -> Site {
        core::panic::Location::caller()
    }

    /// Two cores and one lock, on a scripted clock: core 0 holds it from
    /// 1000 to 1600 while core 1 waits from 1100; core 1 then holds it until
    /// 1700; core 0 takes it again from 2000 to 2050.
    #[test]
    fn a_scripted_two_core_schedule_gives_the_known_table() {
        let a = here();
        let b = here();
        let p = Profile::new("giant", 2);
        p.acquired(0, a, 0, false, 1000);
        p.releasing(0, 1600);
        p.acquired(1, b, 500, true, 1600);
        p.releasing(1, 1700);
        p.acquired(0, a, 0, false, 2000);
        p.releasing(0, 2050);
        let rows = p.snapshot();
        let ra = rows.iter().find(|r| r.line == a.line()).expect("site a");
        let rb = rows.iter().find(|r| r.line == b.line()).expect("site b");
        assert_eq!((ra.acquisitions, ra.hold_max, ra.hold_total, ra.wait_total, ra.hold_avg()), (2, 600, 650, 0, 325));
        assert_eq!((ra.cnt_hold, ra.contended), (1, 0), "a held the lock while b waited");
        assert_eq!((rb.acquisitions, rb.hold_max, rb.wait_max, rb.wait_total, rb.wait_avg()), (1, 100, 500, 500, 500));
        assert_eq!(rb.contended, 1);
        let t = seed_table(&rows);
        let line_of = |r: &SiteRecord| t.lines().find(|l| l.ends_with(&site_name(r))).expect("a row");
        let cols =
            |l: &str| l.split_whitespace().take(7).map(|w| w.parse::<u64>().unwrap()).collect::<alloc::vec::Vec<_>>();
        assert_eq!(cols(line_of(ra)), [600, 0, 650, 0, 2, 325, 0]);
        assert_eq!(cols(line_of(rb)), [100, 500, 100, 500, 1, 100, 500]);
        assert!(freebsd_table(&rows).contains("(giant)"));
    }
}
