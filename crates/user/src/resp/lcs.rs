//! `LCS key1 key2 [LEN] [IDX] [MINMATCHLEN len] [WITHMATCHLEN]`: the
//! longest common subsequence of two strings.
//!
//! As in Redis 7.0's `lcsCommand`: the classic dynamic-programming table
//! (one `u32` per pair of prefixes), refused when it would exceed
//! `proto-max-bulk-len` ([`MAX_STRING`]) bytes, then one walk back from the
//! end that rebuilds the subsequence and, for `IDX`, reports the matching
//! ranges from the last to the first, each as `[[a_start, a_end], [b_start,
//! b_end]]` (plus the length with `WITHMATCHLEN`), leaving out ranges
//! shorter than `MINMATCHLEN`. Where several subsequences are longest, the
//! walk's tie-breaking picks Redis's.

use super::command::{MAX_STRING, NOT_INTEGER, SYNTAX};
use super::encode::{write_array_header, write_bulk, write_error, write_integer, write_map_header};
use super::number::parse_i64;
use super::store::{Store, Value};
use super::table::{spec, Flags, Spec};

/// The `LCS` command.
pub(crate) const COMMANDS: &[Spec] =
    &[spec("lcs", -3, Flags::READONLY, (1, 2, 1), |s, c| s.cmd_lcs(c.args, c.now, c.out))];

/// One matching range: where it starts and ends in each string.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Match {
    a: (usize, usize),
    b: (usize, usize),
}

impl Match {
    fn len(self) -> usize {
        self.a.1 - self.a.0 + 1
    }
}

/// The table of LCS lengths of every pair of prefixes, `(a.len() + 1) x
/// (b.len() + 1)` entries, or `None` if it would exceed [`MAX_STRING`]
/// bytes (Redis's bound).
fn table(a: &[u8], b: &[u8]) -> Option<Vec<u32>> {
    let cells = (a.len() + 1).checked_mul(b.len() + 1)?;
    if cells.checked_mul(4)? > MAX_STRING {
        return None;
    }
    let width = b.len() + 1;
    let mut lcs = vec![0u32; cells];
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            lcs[i * width + j] = if a[i - 1] == b[j - 1] {
                lcs[(i - 1) * width + j - 1] + 1
            } else {
                lcs[(i - 1) * width + j].max(lcs[i * width + j - 1])
            };
        }
    }
    Some(lcs)
}

/// Walks the table back from the end as Redis does: the subsequence, and
/// the matching ranges from last to first.
fn walk(a: &[u8], b: &[u8], lcs: &[u32]) -> (Vec<u8>, Vec<Match>) {
    let width = b.len() + 1;
    let at = |i: usize, j: usize| lcs[i * width + j];
    let length = at(a.len(), b.len()) as usize;
    let mut sequence = vec![0u8; length];
    let mut matches = Vec::new();
    let mut current: Option<Match> = None;
    let (mut i, mut j, mut left) = (a.len(), b.len(), length);
    while i > 0 && j > 0 {
        let mut emit = false;
        if a[i - 1] == b[j - 1] {
            sequence[left - 1] = a[i - 1];
            match &mut current {
                None => current = Some(Match { a: (i - 1, i - 1), b: (j - 1, j - 1) }),
                // Contiguous with the range being built: extend it back.
                Some(range) if range.a.0 == i && range.b.0 == j => {
                    range.a.0 -= 1;
                    range.b.0 -= 1;
                }
                Some(_) => emit = true,
            }
            if current.is_some_and(|range| range.a.0 == 0 || range.b.0 == 0) {
                emit = true;
            }
            left -= 1;
            i -= 1;
            j -= 1;
        } else {
            if at(i - 1, j) > at(i, j - 1) {
                i -= 1;
            } else {
                j -= 1;
            }
            emit = current.is_some();
        }
        if emit {
            // Like Redis, a range interrupted by a new match is emitted
            // and the new match is dropped with it.
            if let Some(range) = current.take() {
                matches.push(range);
            }
        }
    }
    (sequence, matches)
}

/// A string value's bytes; nothing for a missing key.
fn string_of(value: Option<&Value>) -> &[u8] {
    match value {
        Some(Value::String(data)) => data,
        _ => &[],
    }
}

impl Store {
    /// `LCS key1 key2 [LEN] [IDX] [MINMATCHLEN len] [WITHMATCHLEN]`.
    fn cmd_lcs(&mut self, args: &[&[u8]], now: u64, out: &mut Vec<u8>) {
        let protocol = self.protocol;
        for key in &args[1..3] {
            if !matches!(self.get(key, now), None | Some(Value::String(_))) {
                return write_error(out, b"ERR The specified keys must contain string values");
            }
        }
        let (mut len_only, mut with_indexes, mut with_match_len, mut min_match_len) = (false, false, false, 0usize);
        let mut i = 3;
        while i < args.len() {
            let option = args[i];
            if option.eq_ignore_ascii_case(b"IDX") {
                with_indexes = true;
            } else if option.eq_ignore_ascii_case(b"LEN") {
                len_only = true;
            } else if option.eq_ignore_ascii_case(b"WITHMATCHLEN") {
                with_match_len = true;
            } else if option.eq_ignore_ascii_case(b"MINMATCHLEN") && i + 1 < args.len() {
                let Some(min) = parse_i64(args[i + 1]) else {
                    return write_error(out, NOT_INTEGER);
                };
                min_match_len = usize::try_from(min).unwrap_or(0);
                i += 1;
            } else {
                return write_error(out, SYNTAX);
            }
            i += 1;
        }
        if len_only && with_indexes {
            return write_error(out, b"ERR If you want both the length and indexes, please just use IDX.");
        }
        let (a, b) = (string_of(self.peek(args[1], now)), string_of(self.peek(args[2], now)));
        let Some(lcs) = table(a, b) else {
            return write_error(out, b"ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len");
        };
        let length = lcs[lcs.len() - 1];
        if len_only {
            return write_integer(out, i64::from(length));
        }
        let (sequence, matches) = walk(a, b, &lcs);
        if !with_indexes {
            return write_bulk(out, &sequence);
        }
        let shown: Vec<Match> =
            matches.into_iter().filter(|range| min_match_len == 0 || range.len() >= min_match_len).collect();
        write_map_header(out, 2, protocol);
        write_bulk(out, b"matches");
        write_array_header(out, shown.len());
        for range in shown {
            write_array_header(out, 2 + usize::from(with_match_len));
            for (start, end) in [range.a, range.b] {
                write_array_header(out, 2);
                write_integer(out, start as i64);
                write_integer(out, end as i64);
            }
            if with_match_len {
                write_integer(out, range.len() as i64);
            }
        }
        write_bulk(out, b"len");
        write_integer(out, i64::from(length));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lcs(a: &str, b: &str) -> (String, Vec<Match>) {
        let table = table(a.as_bytes(), b.as_bytes()).unwrap();
        let (sequence, matches) = walk(a.as_bytes(), b.as_bytes(), &table);
        (String::from_utf8(sequence).unwrap(), matches)
    }

    #[test]
    fn subsequences_and_ranges_follow_redis() {
        let (sequence, matches) = lcs("ohmytext", "mynewtext");
        assert_eq!(sequence, "mytext");
        assert_eq!(matches, [Match { a: (4, 7), b: (5, 8) }, Match { a: (2, 3), b: (0, 1) }]);
        assert_eq!(lcs("", "abc"), (String::new(), vec![]));
        assert_eq!(lcs("abc", "xyz").0, "");
        assert!(table(&vec![b'a'; 20_000], &vec![b'b'; 20_000]).is_none());
    }
}
