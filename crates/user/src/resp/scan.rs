//! `KEYS` and the scan family: `SCAN`, `SSCAN`, `HSCAN`, `ZSCAN`.
//!
//! `KEYS pattern` lists every live key matching a glob ([`super::glob`]).
//! The scans walk a collection a piece per call and keep Redis's promise:
//! whatever is inserted or deleted between calls, every element present
//! for the whole scan is returned, and the scan ends (cursor `0`).
//!
//! Redis walks its hash table's buckets in reverse-binary order. The store
//! has no buckets to walk, so it orders elements by a fixed 63-bit hash of
//! their name ([`scan_hash`]: SipHash with fixed keys, the same in every
//! process of a build) and the cursor is the next hash to visit. A call
//! returns the elements whose hash is at least the cursor, smallest hashes
//! first — at least `COUNT` of them and always every element sharing the
//! last hash returned — and the next cursor is one past that hash, or `0`
//! when nothing is left. The cursors of one scan thus cut the hash space
//! into consecutive ranges, each visited by exactly one call: an element
//! present throughout is returned exactly once (Redis may return one
//! twice), and since cursors only grow the scan ends. Cursors stay below
//! 2^63, so clients that read them as signed integers work too.
//!
//! `COUNT` is a hint, as in Redis. A call reads the whole collection to
//! find its next elements, so it returns at least `n / 64` of the `n`
//! elements whatever the `COUNT`: a full scan then takes at most about 64
//! calls, O(64·n) work in all, not O(n²/COUNT). As in Redis, `MATCH` and
//! `TYPE` filter the elements a call selected, so a call may return fewer
//! than `COUNT`, or none, with a cursor that is not `0`.
//!
//! Like Redis, a collection in a compact encoding is returned whole by one
//! call, with cursor `0` and in its own order, whatever the cursor: an
//! integer set (ascending), a small hash (insertion order), a sorted set of
//! at most 128 members of at most 64 bytes (score order; its scores
//! written as Redis's listpack holds them, integers without exponent).
//! Sets and hashes never return to their compact encoding; a sorted set
//! that shrinks to that size during a scan is returned whole by the next
//! call, so some of its members come twice (never fewer), as from Redis.

use std::collections::hash_map::DefaultHasher;
use std::hash::Hasher;

use super::command::{c_string, NOT_INTEGER, SYNTAX, WRONGTYPE};
use super::encode::{write_array_header, write_bulk, write_error};
use super::glob::{glob_match, Case};
use super::hash::Hash;
use super::number::{format_f64, is_c_space, parse_i64, write_u64};
use super::set::Member;
use super::store::{Store, Value};
use super::table::{spec, Flags, Spec, KEY1, NO_KEYS};
use super::zset::{Score, ZSet};

const R: Flags = Flags::READONLY;

/// `KEYS` and the scan commands.
pub(crate) const SCAN_COMMANDS: &[Spec] = &[
    spec("keys", 2, R, NO_KEYS, |s, c| s.cmd_keys(c.args[1], c.now, c.out)),
    spec("scan", -2, R, NO_KEYS, |s, c| s.cmd_scan(c.args, c.now, c.out)),
    spec("sscan", -3, R, KEY1, |s, c| s.cmd_sscan(c.args, c.now, c.out)),
    spec("hscan", -3, R, KEY1, |s, c| s.cmd_hscan(c.args, c.now, c.out)),
    spec("zscan", -3, R, KEY1, |s, c| s.cmd_zscan(c.args, c.now, c.out)),
];

/// `SCAN`'s default `COUNT`.
const DEFAULT_COUNT: usize = 10;

/// A call returns at least this fraction of the collection (1/64).
const MIN_BATCH_SHIFT: u32 = 6;

/// Sorted sets Redis keeps in a listpack: at most this many members…
const LISTPACK_ZSET_ENTRIES: usize = 128;
/// …of at most this many bytes.
const LISTPACK_ZSET_VALUE: usize = 64;

/// A sorted-set score as Redis's listpack holds it: a whole number within
/// ±2^62 without exponent (`100000000000000000`), anything else as `%.17g`.
const LISTPACK_INTEGER_LIMIT: f64 = 4_611_686_018_427_387_904.0;

/// The reply to a scan of a missing key.
const EMPTY_SCAN: &[u8] = b"*2\r\n$1\r\n0\r\n*0\r\n";

/// The options of a scan.
#[derive(Clone, Copy, Debug)]
struct ScanOptions<'a> {
    /// `COUNT`: how many elements to return, at least (a hint).
    count: usize,
    /// `MATCH`, unless it is `*`.
    pattern: Option<&'a [u8]>,
    /// `TYPE` (`SCAN` only).
    type_name: Option<&'a [u8]>,
}

impl ScanOptions<'_> {
    /// Whether `name` passes `MATCH`.
    fn matches(&self, name: &[u8]) -> bool {
        self.pattern.map_or(true, |pattern| glob_match(pattern, name, Case::Sensitive))
    }
}

/// Where `name` (a key, a member, a field) sits in a scan's order: a fixed
/// 63-bit hash, the same in every process and run of a build (std's
/// `DefaultHasher::new()` is SipHash with fixed keys).
pub(crate) fn scan_hash(name: &[u8]) -> u64 {
    let mut hasher = DefaultHasher::new();
    hasher.write(name);
    hasher.finish() >> 1
}

/// Parses a cursor as Redis does (`strtoul`, base 10): the argument up to
/// its first NUL byte, not starting with a space; an optional sign (a
/// minus negates modulo 2^64); digits that fit in 64 bits. The empty
/// string is cursor 0.
fn parse_cursor(text: &[u8]) -> Option<u64> {
    if text.first().is_some_and(|&c| is_c_space(c)) {
        return None;
    }
    let text = c_string(text, usize::MAX);
    if text.is_empty() {
        return Some(0);
    }
    let (negative, digits) = match text[0] {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut value: u64 = 0;
    for &digit in digits {
        value = value.checked_mul(10)?.checked_add(u64::from(digit - b'0'))?;
    }
    Some(if negative { value.wrapping_neg() } else { value })
}

/// Parses the options after a scan's cursor (`TYPE` is allowed for the
/// keyspace only), as Redis: left to right, the first problem answers.
fn parse_options<'a>(args: &[&'a [u8]], keyspace: bool) -> Result<ScanOptions<'a>, &'static [u8]> {
    let mut options = ScanOptions { count: DEFAULT_COUNT, pattern: None, type_name: None };
    let mut i = 0;
    while i < args.len() {
        let name = c_string(args[i], usize::MAX);
        let has_value = i + 1 < args.len();
        if name.eq_ignore_ascii_case(b"COUNT") && has_value {
            let count = parse_i64(args[i + 1]).ok_or(NOT_INTEGER)?;
            if count < 1 {
                return Err(SYNTAX);
            }
            options.count = usize::try_from(count).unwrap_or(usize::MAX);
        } else if name.eq_ignore_ascii_case(b"MATCH") && has_value {
            // `*` matches everything: no filter.
            options.pattern = Some(args[i + 1]).filter(|pattern| *pattern != b"*");
        } else if name.eq_ignore_ascii_case(b"TYPE") && keyspace && has_value {
            options.type_name = Some(c_string(args[i + 1], usize::MAX));
        } else {
            return Err(SYNTAX);
        }
        i += 2;
    }
    Ok(options)
}

/// One call of a hash-ordered scan over `items` (a name and what goes with
/// it) from `cursor`: the items selected, by hash, and the next cursor (0
/// when none is left). It selects at least `count` items and at least 1/64
/// of them all, and every item that shares the last hash selected.
fn next_batch<'a, T>(
    items: impl Iterator<Item = (&'a [u8], T)>,
    cursor: u64,
    count: usize,
) -> (Vec<(&'a [u8], T)>, u64) {
    let mut total = 0usize;
    let mut candidates: Vec<(u64, &'a [u8], T)> = items
        .filter_map(|(name, extra)| {
            total += 1;
            let hash = scan_hash(name);
            (hash >= cursor).then_some((hash, name, extra))
        })
        .collect();
    let wanted = count.max(total >> MIN_BATCH_SHIFT).max(1);
    let mut next = 0;
    if candidates.len() > wanted {
        candidates.select_nth_unstable_by_key(wanted - 1, |candidate| candidate.0);
        let last = candidates[wanted - 1].0;
        if candidates[wanted..].iter().any(|candidate| candidate.0 > last) {
            next = last + 1;
        }
        candidates.retain(|candidate| candidate.0 <= last);
    }
    candidates.sort_unstable_by_key(|candidate| candidate.0);
    (candidates.into_iter().map(|(_, name, extra)| (name, extra)).collect(), next)
}

/// Writes a scan's reply: the cursor, then the elements.
fn write_scan_header(out: &mut Vec<u8>, cursor: u64, elements: usize) {
    write_array_header(out, 2);
    let mut digits = Vec::with_capacity(20);
    write_u64(&mut digits, cursor);
    write_bulk(out, &digits);
    write_array_header(out, elements);
}

/// Appends a listpack sorted set's score (see [`LISTPACK_INTEGER_LIMIT`]).
fn write_listpack_score(out: &mut Vec<u8>, score: f64) {
    if score.fract() == 0.0 && score.abs() <= LISTPACK_INTEGER_LIMIT {
        Member::Int(score as i64).write_bulk(out);
    } else {
        write_bulk(out, format_f64(score).as_bytes());
    }
}

impl Store {
    /// `KEYS pattern`: every live key matching, in no particular order.
    fn cmd_keys(&mut self, pattern: &[u8], now: u64, out: &mut Vec<u8>) {
        let everything = pattern == b"*";
        let found: Vec<&[u8]> = self
            .live_keys(now)
            .map(|(key, _)| key)
            .filter(|key| everything || glob_match(pattern, key, Case::Sensitive))
            .collect();
        write_array_header(out, found.len());
        for key in found {
            write_bulk(out, key);
        }
    }

    /// `SCAN cursor [MATCH pattern] [COUNT count] [TYPE type]`.
    fn cmd_scan(&mut self, args: &[&[u8]], now: u64, out: &mut Vec<u8>) {
        let Some(cursor) = parse_cursor(args[1]) else {
            return write_error(out, b"ERR invalid cursor");
        };
        let options = match parse_options(&args[2..], true) {
            Ok(options) => options,
            Err(message) => return write_error(out, message),
        };
        let (batch, next) = next_batch(self.live_keys(now), cursor, options.count);
        let keys: Vec<&[u8]> = batch
            .into_iter()
            .filter(|(key, value)| {
                options.matches(key)
                    && options.type_name.map_or(true, |name| name.eq_ignore_ascii_case(value.type_name().as_bytes()))
            })
            .map(|(key, _)| key)
            .collect();
        write_scan_header(out, next, keys.len());
        for key in keys {
            write_bulk(out, key);
        }
    }

    /// Parses a collection scan's cursor, looks its key up and checks its
    /// type with `expected`, then parses its options — Redis's order. `None`
    /// when the reply is already written: an error, or the empty scan of a
    /// missing key.
    fn scan_target<'s, 'a>(
        &'s mut self,
        args: &[&'a [u8]],
        expected: fn(&Value) -> bool,
        now: u64,
        out: &mut Vec<u8>,
    ) -> Option<(&'s Value, u64, ScanOptions<'a>)> {
        let Some(cursor) = parse_cursor(args[2]) else {
            write_error(out, b"ERR invalid cursor");
            return None;
        };
        let value = match self.get(args[1], now) {
            None => {
                out.extend_from_slice(EMPTY_SCAN);
                return None;
            }
            Some(value) if !expected(value) => {
                write_error(out, WRONGTYPE);
                return None;
            }
            Some(value) => value,
        };
        match parse_options(&args[3..], false) {
            Ok(options) => Some((value, cursor, options)),
            Err(message) => {
                write_error(out, message);
                None
            }
        }
    }

    /// `SSCAN key cursor [MATCH pattern] [COUNT count]`.
    fn cmd_sscan(&mut self, args: &[&[u8]], now: u64, out: &mut Vec<u8>) {
        let is_set = |value: &Value| matches!(value, Value::Set(_));
        let Some((Value::Set(set), cursor, options)) = self.scan_target(args, is_set, now, out) else {
            return;
        };
        if set.is_ints() {
            let members: Vec<Member<'_>> =
                set.iter().filter(|member| member.with_bytes(|bytes| options.matches(bytes))).collect();
            write_scan_header(out, 0, members.len());
            members.into_iter().for_each(|member| member.write_bulk(out));
            return;
        }
        let names = set.iter().filter_map(|member| match member {
            Member::Bytes(bytes) => Some((bytes, ())),
            Member::Int(_) => None,
        });
        let (batch, next) = next_batch(names, cursor, options.count);
        let members: Vec<&[u8]> =
            batch.into_iter().map(|(name, ())| name).filter(|name| options.matches(name)).collect();
        write_scan_header(out, next, members.len());
        members.into_iter().for_each(|member| write_bulk(out, member));
    }

    /// `HSCAN key cursor [MATCH pattern] [COUNT count]`: fields and values.
    fn cmd_hscan(&mut self, args: &[&[u8]], now: u64, out: &mut Vec<u8>) {
        let is_hash = |value: &Value| matches!(value, Value::Hash(_));
        let Some((Value::Hash(hash), cursor, options)) = self.scan_target(args, is_hash, now, out) else {
            return;
        };
        let (pairs, next) = match hash {
            Hash::Small(_) => (hash.iter().collect(), 0),
            Hash::Large(_) => next_batch(hash.iter(), cursor, options.count),
        };
        let pairs: Vec<(&[u8], &[u8])> = pairs.into_iter().filter(|(field, _)| options.matches(field)).collect();
        write_scan_header(out, next, pairs.len() * 2);
        for (field, value) in pairs {
            write_bulk(out, field);
            write_bulk(out, value);
        }
    }

    /// `ZSCAN key cursor [MATCH pattern] [COUNT count]`: members and scores.
    fn cmd_zscan(&mut self, args: &[&[u8]], now: u64, out: &mut Vec<u8>) {
        let is_zset = |value: &Value| matches!(value, Value::ZSet(_));
        let Some((Value::ZSet(set), cursor, options)) = self.scan_target(args, is_zset, now, out) else {
            return;
        };
        let compact = is_listpack(set);
        let (pairs, next) = if compact {
            (set.iter().map(|(score, member)| (member, score)).collect(), 0)
        } else {
            next_batch(set.iter().map(|(score, member)| (member, score)), cursor, options.count)
        };
        let pairs: Vec<(&[u8], Score)> = pairs.into_iter().filter(|(member, _)| options.matches(member)).collect();
        write_scan_header(out, next, pairs.len() * 2);
        for (member, score) in pairs {
            write_bulk(out, member);
            if compact {
                write_listpack_score(out, score.get());
            } else {
                write_bulk(out, format_f64(score.get()).as_bytes());
            }
        }
    }
}

/// Whether Redis would hold `set` in a listpack (its default limits).
fn is_listpack(set: &ZSet) -> bool {
    set.len() <= LISTPACK_ZSET_ENTRIES && set.iter().all(|(_, member)| member.len() <= LISTPACK_ZSET_VALUE)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn cursors_parse_as_strtoul() {
        for (text, expected) in [
            (&b"0"[..], Some(0)),
            (b"", Some(0)),
            (b"007", Some(7)),
            (b"+5", Some(5)),
            (b"-1", Some(u64::MAX)),
            (b"-0", Some(0)),
            (b"18446744073709551615", Some(u64::MAX)),
            (b"18446744073709551616", None),
            (b"-18446744073709551615", Some(1)),
            (b" 5", None),
            (b"5 ", None),
            (b"\t5", None),
            (b"-", None),
            (b"+", None),
            (b"0x10", None),
            (b"5\0junk", Some(5)),
            (b"\0", Some(0)),
            (b"abc", None),
        ] {
            assert_eq!(parse_cursor(text), expected, "{:?}", String::from_utf8_lossy(text));
        }
    }

    #[test]
    fn options_follow_redis() {
        let parse = |words: &[&str], keyspace| {
            let args: Vec<&[u8]> = words.iter().map(|w| w.as_bytes()).collect();
            parse_options(&args, keyspace)
                .map(|o| (o.count, o.pattern.map(<[u8]>::to_vec), o.type_name.map(<[u8]>::to_vec)))
        };
        assert_eq!(parse(&[], true), Ok((10, None, None)));
        assert_eq!(
            parse(&["count", "5", "MATCH", "a*", "type", "set"], true),
            Ok((5, Some(b"a*".to_vec()), Some(b"set".to_vec())))
        );
        assert_eq!(parse(&["MATCH", "*"], true), Ok((10, None, None)));
        assert_eq!(parse(&["TYPE", "set"], false), Err(SYNTAX));
        assert_eq!(parse(&["COUNT", "0"], true), Err(SYNTAX));
        assert_eq!(parse(&["COUNT", "x", "bad"], true), Err(NOT_INTEGER));
        assert_eq!(parse(&["COUNT"], true), Err(SYNTAX));
        assert_eq!(parse(&["bad", "x", "COUNT", "x"], true), Err(SYNTAX));
    }

    #[test]
    fn batches_partition_the_hash_space() {
        let names: Vec<Vec<u8>> = (0..1000).map(|i| format!("k{i}").into_bytes()).collect();
        let mut cursor = 0;
        let mut seen = BTreeSet::new();
        let mut calls = 0;
        loop {
            let (batch, next) = next_batch(names.iter().map(|n| (n.as_slice(), ())), cursor, 7);
            calls += 1;
            assert!(batch.len() >= 7 || next == 0);
            for (name, ()) in batch {
                assert!(scan_hash(name) >= cursor);
                assert!(next == 0 || scan_hash(name) < next);
                assert!(seen.insert(name.to_vec()), "returned twice");
            }
            if next == 0 {
                break;
            }
            assert!(next > cursor);
            cursor = next;
        }
        assert_eq!(seen.len(), names.len());
        assert!(calls <= 1000 / 7 + 2);
        // A large collection is covered in at most about 64 calls.
        let (batch, _) = next_batch(names.iter().map(|n| (n.as_slice(), ())), 0, 1);
        assert_eq!(batch.len(), 1000 / 64);
    }

    #[test]
    fn ties_are_never_split() {
        let names = [&b"a"[..], b"a", b"a", b"b"];
        let (batch, next) = next_batch(names.iter().map(|n| (*n, ())), 0, 1);
        let first = batch[0].0;
        let copies = names.iter().filter(|n| **n == first).count();
        assert_eq!(batch.len(), copies);
        assert_ne!(next, 0);
    }

    #[test]
    fn listpack_scores_print_integers_whole() {
        let mut out = Vec::new();
        for score in [1e17, 0.1, -2.0, f64::INFINITY, 4_611_686_018_427_387_904.0, 9e18] {
            write_listpack_score(&mut out, score);
        }
        assert_eq!(
            String::from_utf8(out).unwrap(),
            concat!(
                "$18\r\n100000000000000000\r\n$19\r\n0.10000000000000001\r\n$2\r\n-2\r\n$3\r\ninf\r\n",
                "$19\r\n4611686018427387904\r\n$5\r\n9e+18\r\n"
            )
        );
    }
}
