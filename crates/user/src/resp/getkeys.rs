//! The key arguments of a call, as `COMMAND GETKEYS` finds them: Redis
//! 7.0's search by key specifications (`getKeysUsingKeySpecs` in its
//! `db.c`), over the specifications the catalog gives each command.
//!
//! Each specification begins at an argument (or after a keyword) and finds
//! its keys as a range or through a key count. A count that does not parse
//! strictly, or keys that would run past the call, make the search invalid;
//! Redis then asks the command's own key finder. For the commands that have
//! a key count (`ZUNIONSTORE`, `ZINTER`, `SINTERCARD`, `EVAL`, …) that
//! finder (`genericGetKeys`) reads the count as C's `atoi` does, lists the
//! counted keys, then the destination key if there is one — so
//! `ZUNIONSTORE d +1 a` names `a d` where `ZUNIONSTORE d 1 a` names `d a`.
//! Other commands have no finder of their own: an invalid search finds no
//! keys.

use super::catalog::{Begin, Find, KeySpec};
use super::number::{is_c_space, parse_i64};

/// The positions in `call` (the command name at 0) of its keys, by
/// `specs`; `None` where the catalog has no specification a search can
/// follow (the caller then uses the table's key range).
pub(crate) fn key_positions(specs: &[KeySpec], call: &[&[u8]]) -> Option<Vec<usize>> {
    if specs.is_empty() || specs.iter().any(|s| s.begin == Begin::Unknown || s.find == Find::Unknown) {
        return None;
    }
    Some(by_specs(specs, call).unwrap_or_else(|| by_count(specs, call)))
}

/// The search by specifications; `None` if it is invalid.
fn by_specs(specs: &[KeySpec], call: &[&[u8]]) -> Option<Vec<usize>> {
    let argc = call.len() as i64;
    let mut keys = Vec::new();
    for spec in specs {
        if spec.flags.iter().any(|f| f.eq_ignore_ascii_case("not_key")) {
            continue;
        }
        let mut first = match spec.begin {
            Begin::Index(i) => i,
            Begin::Keyword(word, from) => match after_keyword(call, word, from) {
                Some(first) => first,
                None => continue,
            },
            Begin::Unknown => return None,
        };
        let (last, step) = match spec.find {
            Find::Range(last, step, limit) => {
                let last = if last >= 0 {
                    first + last
                } else if limit == 0 {
                    argc + last
                } else {
                    first + ((argc - first) / limit + last)
                };
                (last, step)
            }
            Find::Keynum(at, firstkey, step) => {
                if at >= argc - first {
                    return None;
                }
                let count = parse_i64(call[(first + at) as usize]).filter(|&n| n >= 0)?;
                first += firstkey;
                // C's `first + (int)numkeys - 1`.
                (i64::from((first as i32).wrapping_add(count as i32).wrapping_sub(1)), step)
            }
            Find::Unknown => return None,
        };
        if last >= argc || last < first || first >= argc {
            return None;
        }
        let mut i = first;
        while i <= last {
            keys.push(i as usize);
            i += step.max(1);
        }
    }
    Some(keys)
}

/// The argument after the first `word` met searching from `from` (from
/// the end if negative), as Redis's keyword search.
fn after_keyword(call: &[&[u8]], word: &str, from: i64) -> Option<i64> {
    let argc = call.len() as i64;
    let (start, end) = if from > 0 { (from, argc - 1) } else { (argc + from, 1) };
    let mut i = start;
    while i != end {
        if i >= argc || i < 1 {
            return None;
        }
        if call[i as usize].eq_ignore_ascii_case(word.as_bytes()) {
            return Some(i + 1);
        }
        i = if start <= end { i + 1 } else { i - 1 };
    }
    None
}

/// The command's own finder after an invalid search: for a key count,
/// Redis's `genericGetKeys` (the count read by `atoi`; the counted keys,
/// then the destination); for anything else, no keys.
fn by_count(specs: &[KeySpec], call: &[&[u8]]) -> Vec<usize> {
    let Some((count_at, first_key, step)) = specs.iter().find_map(|s| match (s.begin, s.find) {
        (Begin::Index(i), Find::Keynum(at, firstkey, step)) => Some((i + at, i + at + firstkey, step.max(1))),
        _ => None,
    }) else {
        return Vec::new();
    };
    let destination = specs.iter().find_map(|s| match (s.begin, s.find) {
        (Begin::Index(i), Find::Range(0, _, _)) if i < count_at => Some(i as usize),
        _ => None,
    });
    let argc = call.len() as i64;
    let Some(arg) = call.get(count_at as usize) else { return Vec::new() };
    let n = i64::from(atoi(arg));
    if n < 1 || n > (argc - first_key) / step {
        return Vec::new();
    }
    (0..n).map(|k| (first_key + k * step) as usize).chain(destination).collect()
}

/// C's `atoi` as glibc has it, `(int)strtol(s, NULL, 10)`: leading white
/// space, a sign, then digits up to the first other byte; beyond a 64-bit
/// `long` it saturates, and the result is truncated to 32 bits.
fn atoi(s: &[u8]) -> i32 {
    let s = match s.iter().position(|&b| !is_c_space(b)) {
        Some(at) => &s[at..],
        None => return 0,
    };
    let (negative, digits) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let mut v: i64 = 0;
    for &d in digits.iter().take_while(|d| d.is_ascii_digit()) {
        let d = i64::from(d - b'0');
        v = if negative {
            v.checked_mul(10).and_then(|v| v.checked_sub(d)).unwrap_or(i64::MIN)
        } else {
            v.checked_mul(10).and_then(|v| v.checked_add(d)).unwrap_or(i64::MAX)
        };
        if v == i64::MIN || v == i64::MAX {
            break;
        }
    }
    v as i32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atoi_reads_as_c_does() {
        for (s, n) in [
            ("2", 2),
            (" 2", 2),
            ("+1", 1),
            ("-0", 0),
            ("2abc", 2),
            ("x", 0),
            ("", 0),
            ("4294967298", 2),
            ("99999999999999999999", -1),
            ("-99999999999999999999", 0),
        ] {
            assert_eq!(atoi(s.as_bytes()), n, "{s:?}");
        }
    }
}
