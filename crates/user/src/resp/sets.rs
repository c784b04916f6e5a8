//! The set commands (`SADD`, `SPOP`, `SINTER`…), as Redis 7.0's `t_set.c`.
//!
//! Each follows its Redis counterpart: arguments are validated before
//! anything changes, a missing key reads as an empty set, a set emptied by
//! a removal is deleted, and a key of another type answers `WRONGTYPE`
//! (for the commands of several keys, the first such key, in argument
//! order). Replies that are sets — `SMEMBERS`, `SINTER`, `SUNION`, `SDIFF`,
//! `SPOP` with a count — are RESP3 sets (`~`) for RESP3 clients, arrays
//! otherwise; `SRANDMEMBER` with a count answers an array, as in Redis.
//!
//! Orders follow Redis where Redis has one: an integer set lists its
//! members ascending; `SINTER` lists them in the order of the smallest set
//! (the first of the smallest); `SUNION`, `SDIFF` and an `SPOP` that takes
//! every member build a new set and list it, so a result of at most 512
//! integers comes back sorted, as from Redis. Random draws come from the
//! store's generator ([`Random`](super::random::Random)).

use super::command::{NOT_INTEGER, SYNTAX, WRONGTYPE};
use super::encode::{write_array_header, write_error, write_integer, write_null, write_set_header, Protocol};
use super::number::parse_i64;
use super::set::{Member, Set, MAX_INTSET};
use super::store::{Store, Ttl, Value};
use super::table::{spec, Flags, Spec, ALL_KEYS, KEY1, NO_KEYS};

const R: Flags = Flags::READONLY;
const RF: Flags = Flags::READONLY.or(Flags::FAST);
const WF: Flags = Flags::WRITE.or(Flags::FAST);
const WD: Flags = Flags::WRITE.or(Flags::DENYOOM);
const WDF: Flags = Flags::WRITE.or(Flags::DENYOOM).or(Flags::FAST);

/// The set commands.
pub(crate) const SET_COMMANDS: &[Spec] = &[
    spec("sadd", -3, WDF, KEY1, |s, c| s.cmd_sadd(c.args, c.now, c.out)),
    spec("srem", -3, WF, KEY1, |s, c| s.cmd_srem(c.args, c.now, c.out)),
    spec("spop", -2, WF, KEY1, |s, c| s.cmd_spop(c.args, c.now, c.out)),
    spec("srandmember", -2, R, KEY1, |s, c| s.cmd_srandmember(c.args, c.now, c.out)),
    spec("smembers", 2, R, KEY1, |s, c| s.cmd_sinter(&c.args[1..], c.now, c.out)),
    spec("sismember", 3, RF, KEY1, |s, c| s.cmd_sismember(c.args[1], c.args[2], c.now, c.out)),
    spec("smismember", -3, RF, KEY1, |s, c| s.cmd_smismember(c.args, c.now, c.out)),
    spec("scard", 2, RF, KEY1, |s, c| s.cmd_scard(c.args[1], c.now, c.out)),
    spec("sinter", -2, R, ALL_KEYS, |s, c| s.cmd_sinter(&c.args[1..], c.now, c.out)),
    spec("sunion", -2, R, ALL_KEYS, |s, c| s.cmd_combine(&c.args[1..], None, Combine::Union, c.now, c.out)),
    spec("sdiff", -2, R, ALL_KEYS, |s, c| s.cmd_combine(&c.args[1..], None, Combine::Diff, c.now, c.out)),
    spec("sinterstore", -3, WD, ALL_KEYS, |s, c| s.cmd_sinterstore(c.args, c.now, c.out)),
    spec("sunionstore", -3, WD, ALL_KEYS, |s, c| {
        s.cmd_combine(&c.args[2..], Some(c.args[1]), Combine::Union, c.now, c.out)
    }),
    spec("sdiffstore", -3, WD, ALL_KEYS, |s, c| {
        s.cmd_combine(&c.args[2..], Some(c.args[1]), Combine::Diff, c.now, c.out)
    }),
    spec("sintercard", -3, R.or(Flags::MOVABLE_KEYS), NO_KEYS, |s, c| s.cmd_sintercard(c.args, c.now, c.out)),
    spec("smove", 4, WF, (1, 2, 1), |s, c| s.cmd_smove(c.args, c.now, c.out)),
];

/// Most bytes of a reply that repeats members (`SRANDMEMBER` with a
/// negative count): Redis would keep writing; the store refuses instead.
const MAX_REPEATED_REPLY: usize = 1 << 30;

/// `SPOP` with a count keeps the members that stay, rather than drawing
/// those that go, when it takes more than this many times as many as it
/// leaves (Redis's `SPOP_MOVE_STRATEGY_MUL`).
const SPOP_KEEP_RATIO: usize = 5;

/// The key holds another type.
struct WrongType;

/// What `SUNION`/`SDIFF` compute.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Combine {
    /// Members of any of the sets.
    Union,
    /// Members of the first set in none of the others.
    Diff,
}

impl Store {
    /// The sets at `keys` for reading (`None` for a missing key), each
    /// looked up as Redis's `lookupKeyRead` does, in order; `Err` at the
    /// first key of another type.
    fn sets_for_read(&mut self, keys: &[&[u8]], now: u64) -> Result<Vec<Option<&Set>>, WrongType> {
        for key in keys {
            match self.get(key, now) {
                None | Some(Value::Set(_)) => {}
                Some(_) => return Err(WrongType),
            }
        }
        let store = &*self;
        Ok(keys
            .iter()
            .map(|key| match store.peek(key, now) {
                Some(Value::Set(set)) => Some(set),
                _ => None,
            })
            .collect())
    }

    /// The set at `key` for reading: `Ok(None)` if missing.
    fn set_for_read(&mut self, key: &[u8], now: u64) -> Result<Option<&Set>, WrongType> {
        match self.get(key, now) {
            None => Ok(None),
            Some(Value::Set(set)) => Ok(Some(set)),
            Some(_) => Err(WrongType),
        }
    }

    /// Stores `result` at `destination` (replacing any value and deadline),
    /// or deletes `destination` when `result` is empty; replies the size.
    fn store_set(&mut self, destination: &[u8], result: Set, now: u64, out: &mut Vec<u8>) {
        let len = result.len();
        if len == 0 {
            self.remove(destination, now);
        } else {
            self.insert(destination, Value::Set(result), Ttl::Clear, now);
        }
        write_integer(out, len as i64);
    }

    /// `SADD key member [member ...]`.
    fn cmd_sadd(&mut self, args: &[&[u8]], now: u64, out: &mut Vec<u8>) {
        let key = args[1];
        if let Some(value) = self.get_mut(key, now) {
            let Value::Set(set) = value else {
                return write_error(out, WRONGTYPE);
            };
            let added = args[2..].iter().filter(|member| set.insert(member)).count();
            if added == 0 {
                self.unchanged(key);
            }
            return write_integer(out, added as i64);
        }
        let mut set = Set::new();
        let added = args[2..].iter().filter(|member| set.insert(member)).count();
        self.insert(key, Value::Set(set), Ttl::Clear, now);
        write_integer(out, added as i64);
    }

    /// `SREM key member [member ...]`.
    fn cmd_srem(&mut self, args: &[&[u8]], now: u64, out: &mut Vec<u8>) {
        let removed = self.remove_items(args[1], now, |value| match value {
            Value::Set(set) => Some((args[2..].iter().filter(|member| set.remove(member)).count(), set.is_empty())),
            _ => None,
        });
        match removed {
            Some(n) => write_integer(out, n as i64),
            None => write_error(out, WRONGTYPE),
        }
    }

    /// `SMOVE source destination member`.
    fn cmd_smove(&mut self, args: &[&[u8]], now: u64, out: &mut Vec<u8>) {
        let (source, destination, member) = (args[1], args[2], args[3]);
        match self.get_mut(source, now) {
            None => return write_integer(out, 0),
            Some(Value::Set(_)) => {}
            Some(_) => return write_error(out, WRONGTYPE),
        }
        match self.get_mut(destination, now) {
            None | Some(Value::Set(_)) => {}
            Some(_) => return write_error(out, WRONGTYPE),
        }
        let (moved, emptied) = match self.get_mut(source, now) {
            Some(Value::Set(set)) if source == destination => {
                let found = set.contains(member);
                self.unchanged(source);
                return write_integer(out, i64::from(found));
            }
            Some(Value::Set(set)) => (set.remove(member), set.is_empty()),
            _ => (false, false),
        };
        if !moved {
            self.unchanged(source);
            self.unchanged(destination);
            return write_integer(out, 0);
        }
        if emptied {
            self.remove(source, now);
        }
        if let Some(Value::Set(set)) = self.get_mut(destination, now) {
            set.insert(member);
        } else {
            let mut set = Set::new();
            set.insert(member);
            self.insert(destination, Value::Set(set), Ttl::Clear, now);
        }
        write_integer(out, 1);
    }

    fn cmd_sismember(&mut self, key: &[u8], member: &[u8], now: u64, out: &mut Vec<u8>) {
        match self.set_for_read(key, now) {
            Err(WrongType) => write_error(out, WRONGTYPE),
            Ok(set) => write_integer(out, i64::from(set.is_some_and(|set| set.contains(member)))),
        }
    }

    /// `SMISMEMBER key member [member ...]`: 1 or 0 for each member.
    fn cmd_smismember(&mut self, args: &[&[u8]], now: u64, out: &mut Vec<u8>) {
        let Ok(set) = self.set_for_read(args[1], now) else {
            return write_error(out, WRONGTYPE);
        };
        write_array_header(out, args.len() - 2);
        for member in &args[2..] {
            write_integer(out, i64::from(set.is_some_and(|set| set.contains(member))));
        }
    }

    fn cmd_scard(&mut self, key: &[u8], now: u64, out: &mut Vec<u8>) {
        match self.set_for_read(key, now) {
            Err(WrongType) => write_error(out, WRONGTYPE),
            Ok(set) => write_integer(out, set.map_or(0, Set::len) as i64),
        }
    }

    /// `SPOP key [count]`.
    fn cmd_spop(&mut self, args: &[&[u8]], now: u64, out: &mut Vec<u8>) {
        match args.len() {
            2 => {}
            3 => return self.spop_count(args, now, out),
            _ => return write_error(out, SYNTAX),
        }
        let (protocol, key) = (self.protocol, args[1]);
        let (value, random) = self.get_mut_and_random(key, now);
        let emptied = match value {
            Some(Value::Set(set)) if !set.is_empty() => {
                let index = random.below(set.len());
                if let Some(member) = set.get(index) {
                    member.write_bulk(out);
                }
                set.remove_at(index);
                set.is_empty()
            }
            None | Some(Value::Set(_)) => return write_null(out, protocol),
            Some(_) => return write_error(out, WRONGTYPE),
        };
        if emptied {
            self.remove(key, now);
        }
    }

    /// `SPOP key count`: up to `count` distinct random members, as a set.
    fn spop_count(&mut self, args: &[&[u8]], now: u64, out: &mut Vec<u8>) {
        let (protocol, key) = (self.protocol, args[1]);
        let Some(count) = parse_i64(args[2]).and_then(|count| u64::try_from(count).ok()) else {
            return write_error(out, b"ERR value is out of range, must be positive");
        };
        let count = usize::try_from(count).unwrap_or(usize::MAX);
        let (value, random) = self.get_mut_and_random(key, now);
        let set = match value {
            None => return write_set_header(out, 0, protocol),
            Some(Value::Set(set)) => set,
            Some(_) => return write_error(out, WRONGTYPE),
        };
        if count == 0 {
            // Nothing popped: the key's watchers are left alone.
            self.unchanged(key);
            return write_set_header(out, 0, protocol);
        }
        let size = set.len();
        if count >= size {
            // Every member goes: listed as a copy of the set, then deleted.
            write_as_new_set(out, set, protocol);
            self.remove(key, now);
            return;
        }
        write_set_header(out, count, protocol);
        let remaining = size - count;
        if remaining.saturating_mul(SPOP_KEEP_RATIO) > count {
            for _ in 0..count {
                let index = random.below(set.len());
                if let Some(member) = set.get(index) {
                    member.write_bulk(out);
                }
                set.remove_at(index);
            }
        } else {
            // Most members go: draw those that stay, list the others in
            // the set's order.
            let mut kept = Set::new();
            for index in random.distinct_below(size, remaining).into_iter() {
                if let Some(member) = set.get(index) {
                    kept.insert_member(member);
                }
            }
            for member in set.iter().filter(|member| !kept.contains_member(*member)) {
                member.write_bulk(out);
            }
            *set = kept;
        }
    }

    /// `SRANDMEMBER key [count]`.
    fn cmd_srandmember(&mut self, args: &[&[u8]], now: u64, out: &mut Vec<u8>) {
        match args.len() {
            2 => {}
            3 => return self.srandmember_count(args, now, out),
            _ => return write_error(out, SYNTAX),
        }
        let (protocol, key) = (self.protocol, args[1]);
        let len = match self.set_for_read(key, now) {
            Err(WrongType) => return write_error(out, WRONGTYPE),
            Ok(set) => set.map_or(0, Set::len),
        };
        if len == 0 {
            return write_null(out, protocol);
        }
        if let (Some(Value::Set(set)), random) = self.get_mut_and_random(key, now) {
            if let Some(member) = set.get(random.below(len)) {
                return member.write_bulk(out);
            }
        }
        write_null(out, protocol);
    }

    /// `SRANDMEMBER key count`: `count` distinct random members (all of
    /// them if fewer), or with a negative count `-count` members drawn
    /// independently (repeats allowed).
    fn srandmember_count(&mut self, args: &[&[u8]], now: u64, out: &mut Vec<u8>) {
        let count = match parse_i64(args[2]) {
            None => return write_error(out, NOT_INTEGER),
            Some(i64::MIN) => {
                return write_error(
                    out,
                    b"ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807",
                )
            }
            Some(count) => count,
        };
        let key = args[1];
        match self.set_for_read(key, now) {
            Err(WrongType) => return write_error(out, WRONGTYPE),
            Ok(None) => return write_array_header(out, 0),
            Ok(Some(_)) => {}
        }
        let wanted = usize::try_from(count.unsigned_abs()).unwrap_or(usize::MAX);
        let (Some(Value::Set(set)), random) = self.get_mut_and_random(key, now) else {
            return write_array_header(out, 0);
        };
        let set = &*set;
        let size = set.len();
        if wanted == 0 || size == 0 {
            return write_array_header(out, 0);
        }
        if count < 0 {
            // Find the reply's size with a copy of the generator first, so
            // that a huge count is refused before anything is written.
            let mut trial = random.clone();
            let mut bytes = 0usize;
            for _ in 0..wanted {
                let index = trial.below(size);
                bytes += set.get(index).map_or(0, |member| member.with_bytes(|b| b.len())) + 16;
                if bytes > MAX_REPEATED_REPLY {
                    return write_error(out, b"ERR SRANDMEMBER reply would be too large");
                }
            }
            write_array_header(out, wanted);
            for _ in 0..wanted {
                if let Some(member) = set.get(random.below(size)) {
                    member.write_bulk(out);
                }
            }
        } else if wanted >= size {
            write_array_header(out, size);
            set.iter().for_each(|member| member.write_bulk(out));
        } else {
            write_array_header(out, wanted);
            for index in random.distinct_below(size, wanted).into_iter() {
                if let Some(member) = set.get(index) {
                    member.write_bulk(out);
                }
            }
        }
    }

    /// `SINTER key [key ...]` and `SMEMBERS key`.
    fn cmd_sinter(&mut self, keys: &[&[u8]], now: u64, out: &mut Vec<u8>) {
        let protocol = self.protocol;
        let Ok(sets) = self.sets_for_read(keys, now) else {
            return write_error(out, WRONGTYPE);
        };
        let Some(mut sets) = sets.into_iter().collect::<Option<Vec<&Set>>>() else {
            return write_set_header(out, 0, protocol);
        };
        let mut common = Vec::new();
        for_each_common(&mut sets, |member| {
            common.push(member);
            true
        });
        write_set_header(out, common.len(), protocol);
        for member in common {
            member.write_bulk(out);
        }
    }

    /// `SINTERSTORE destination key [key ...]`.
    fn cmd_sinterstore(&mut self, args: &[&[u8]], now: u64, out: &mut Vec<u8>) {
        let Ok(sets) = self.sets_for_read(&args[2..], now) else {
            return write_error(out, WRONGTYPE);
        };
        let mut result = Set::new();
        if let Some(mut sets) = sets.into_iter().collect::<Option<Vec<&Set>>>() {
            for_each_common(&mut sets, |member| {
                result.insert_member(member);
                true
            });
        }
        self.store_set(args[1], result, now, out);
    }

    /// `SINTERCARD numkeys key [key ...] [LIMIT limit]`.
    fn cmd_sintercard(&mut self, args: &[&[u8]], now: u64, out: &mut Vec<u8>) {
        let Some(keys) = parse_i64(args[1]).filter(|&n| n >= 1).and_then(|n| usize::try_from(n).ok()) else {
            return write_error(out, b"ERR numkeys should be greater than 0");
        };
        if keys > args.len() - 2 {
            return write_error(out, b"ERR Number of keys can't be greater than number of args");
        }
        let mut limit = 0usize;
        let mut i = 2 + keys;
        while i < args.len() {
            if args[i].eq_ignore_ascii_case(b"LIMIT") && i + 1 < args.len() {
                let Some(value) = parse_i64(args[i + 1]).and_then(|n| usize::try_from(n).ok()) else {
                    return write_error(out, b"ERR LIMIT can't be negative");
                };
                limit = value;
                i += 2;
            } else {
                return write_error(out, SYNTAX);
            }
        }
        let Ok(sets) = self.sets_for_read(&args[2..2 + keys], now) else {
            return write_error(out, WRONGTYPE);
        };
        let mut found = 0usize;
        if let Some(mut sets) = sets.into_iter().collect::<Option<Vec<&Set>>>() {
            for_each_common(&mut sets, |_| {
                found += 1;
                limit == 0 || found < limit
            });
        }
        write_integer(out, found as i64);
    }

    /// `SUNION`/`SDIFF key [key ...]`, or with a `destination` their
    /// `STORE` forms.
    fn cmd_combine(&mut self, keys: &[&[u8]], destination: Option<&[u8]>, op: Combine, now: u64, out: &mut Vec<u8>) {
        let protocol = self.protocol;
        let Ok(sets) = self.sets_for_read(keys, now) else {
            return write_error(out, WRONGTYPE);
        };
        let mut result = Set::new();
        match op {
            Combine::Union => {
                for member in sets.iter().flatten().flat_map(|set| set.iter()) {
                    result.insert_member(member);
                }
            }
            Combine::Diff => {
                let (first, others) = (sets[0], &sets[1..]);
                // The first key again among the others leaves nothing.
                let repeated = first.is_some_and(|first| others.iter().flatten().any(|set| std::ptr::eq(*set, first)));
                if let (Some(first), false) = (first, repeated) {
                    for member in first.iter() {
                        if !others.iter().flatten().any(|set| set.contains_member(member)) {
                            result.insert_member(member);
                        }
                    }
                }
            }
        }
        match destination {
            Some(destination) => self.store_set(destination, result, now, out),
            None => {
                write_set_header(out, result.len(), protocol);
                result.iter().for_each(|member| member.write_bulk(out));
            }
        }
    }
}

/// Calls `found` with each member common to all `sets`, in the order of
/// the smallest set (the first of the smallest, as Redis's stable sort
/// picks it), until `found` returns false.
fn for_each_common<'a>(sets: &mut [&'a Set], mut found: impl FnMut(Member<'a>) -> bool) {
    sets.sort_by_key(|set| set.len());
    let Some((&smallest, others)) = sets.split_first() else {
        return;
    };
    for member in smallest.iter() {
        let everywhere = others.iter().all(|&set| std::ptr::eq(set, smallest) || set.contains_member(member));
        if everywhere && !found(member) {
            return;
        }
    }
}

/// Lists every member of `set` as Redis lists a copy of it (`SPOP` of all
/// members): a copy starts as an integer set, so a table of at most
/// [`MAX_INTSET`] integers comes back sorted.
fn write_as_new_set(out: &mut Vec<u8>, set: &Set, protocol: Protocol) {
    write_set_header(out, set.len(), protocol);
    if !set.is_ints() && set.len() <= MAX_INTSET {
        let ints: Option<Vec<i64>> = set.iter().map(|member| member.with_bytes(parse_i64)).collect();
        if let Some(mut ints) = ints {
            ints.sort_unstable();
            for value in ints {
                Member::Int(value).write_bulk(out);
            }
            return;
        }
    }
    set.iter().for_each(|member| member.write_bulk(out));
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::resp::testing::run;

    #[test]
    fn integer_sets_answer_in_order() {
        let mut store = Store::new();
        assert_eq!(
            run(&mut store, &["SADD s 3 1 2 1", "SMEMBERS s", "SINTER s s", "SUNION s nokey", "SDIFF s nokey"]),
            concat!(
                ":3\r\n",
                "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n",
                "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n",
                "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n",
                "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n",
            )
        );
    }

    #[test]
    fn spop_empties_and_deletes() {
        let mut store = Store::new();
        let replies = run(&mut store, &["SADD s a b c", "SPOP s 2", "SCARD s", "SPOP s", "EXISTS s", "SPOP s"]);
        let shape = replies.replace(['a', 'b', 'c'], "?");
        assert_eq!(shape, ":3\r\n*2\r\n$1\r\n?\r\n$1\r\n?\r\n:1\r\n$1\r\n?\r\n:0\r\n$-1\r\n");
        for member in ["a", "b", "c"] {
            assert_eq!(replies.matches(&format!("\r\n{member}\r\n")).count(), 1, "{replies}");
        }
    }

    #[test]
    fn spop_keeping_few_members_keeps_the_rest_intact() {
        let mut store = Store::new();
        let members: Vec<String> = (0..100).map(|i| format!("m{i}")).collect();
        let mut sadd = vec!["SADD".to_string(), "s".to_string()];
        sadd.extend(members.iter().cloned());
        let words: Vec<&[u8]> = sadd.iter().map(|w| w.as_bytes()).collect();
        let mut out = Vec::new();
        let _ = store.execute(&words, 0, &mut out);
        let _ = store.execute(&[b"SPOP", b"s", b"90"], 0, &mut out);
        let snapshot = store.snapshot(0);
        let Some(crate::resp::Snapshot::Set(left)) = snapshot.get(&b"s"[..]) else { panic!("a set") };
        assert_eq!(left.len(), 10);
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with(":100\r\n*90\r\n"));
        for member in left {
            let member = std::str::from_utf8(member).unwrap();
            assert!(!text.contains(&format!("\r\n{member}\r\n")), "{member} both popped and kept");
        }
    }

    #[test]
    fn negative_counts_are_bounded() {
        let mut store = Store::new();
        assert_eq!(
            run(&mut store, &["SADD s a", "SRANDMEMBER s -3", "SRANDMEMBER s -9223372036854775807"]),
            ":1\r\n*3\r\n$1\r\na\r\n$1\r\na\r\n$1\r\na\r\n-ERR SRANDMEMBER reply would be too large\r\n"
        );
    }
}
