//! One operation as Redis commands: YCSB's Redis binding (`RedisClient`).
//!
//! | operation | commands (each waits for the previous reply) |
//! |---|---|
//! | read | `HGETALL key`, or `HMGET key f…` when not reading all fields |
//! | update | `HSET key f v …` |
//! | insert | `HSET key f v …`, then, if it succeeded, `ZADD _indices score key` |
//! | scan | `ZRANGEBYSCORE _indices score +inf LIMIT 0 n`, then a read of each key returned |
//! | read-modify-write | a read, then `HSET key f v …` (whatever the read returned) |
//! | delete | `DEL key`, then `ZREM _indices key` |
//!
//! The binding sends `HMSET`; `HSET` with several pairs does the same since
//! Redis 4 and answers the number of new fields instead of `+OK`. The
//! `score` of a key is Java's `String.hashCode` of it, sent as Jedis sends a
//! double (Java's `Double.toString`: `-5.94971599E8`); `n` is the scan
//! length, as in the binding (`zrangeByScore(INDEX_KEY, hash(startkey),
//! +inf, 0, recordcount)`, whose `recordcount` parameter is the scan length).
//! Jedis spells the keyword `limit` and sends a delete's `ZREM` only when
//! `DEL` removed nothing (a short-circuit `&&`); we send `LIMIT` and always
//! both. Fields go out in the order `field0`, `field1`, … (Jedis in
//! `HashMap` order).
//!
//! **Checks.** Every error reply fails the operation. A whole-record read
//! must return every field (`2 · fieldcount` items for `HGETALL`), a
//! one-field read a value; a write, an index update or a delete an
//! integer; a delete fails if neither command removed anything (the
//! binding's rule). YCSB reports a scan as successful whatever its reads
//! return; here a scan fails if any of its reads does.

use std::fmt;

use super::generator::{Op, OpKind};

/// The sorted set indexing every key for scans (the binding's `INDEX_KEY`).
pub const INDEX_KEY: &[u8] = b"_indices";

/// Java's `String.hashCode` of an ASCII string: `Σ s[i]·31^(n−1−i)`, wrapping
/// in 32 bits.
#[must_use]
pub fn java_string_hash(s: &[u8]) -> i32 {
    s.iter().fold(0i32, |h, &b| h.wrapping_mul(31).wrapping_add(i32::from(b)))
}

/// Java's `Double.toString((double) v)`: `"123.0"` below 10⁷ in magnitude,
/// else the shortest scientific form `"1.234567E9"`.
#[must_use]
pub fn java_double_string(v: i32) -> String {
    let sign = if v < 0 { "-" } else { "" };
    let magnitude = v.unsigned_abs();
    if magnitude < 10_000_000 {
        return format!("{sign}{magnitude}.0");
    }
    let digits = magnitude.to_string();
    let exponent = digits.len() - 1;
    let (first, rest) = digits.trim_end_matches('0').split_at(1);
    let rest = if rest.is_empty() { "0" } else { rest };
    format!("{sign}{first}.{rest}E{exponent}")
}

/// The score of `key` in [`INDEX_KEY`], as sent (the binding's `hash(key)`).
#[must_use]
pub fn index_score(key: &[u8]) -> String {
    java_double_string(java_string_hash(key))
}

/// Append one command, RESP2-encoded (an array of bulk strings).
fn encode_command(args: &[&[u8]], out: &mut Vec<u8>) {
    out.extend_from_slice(format!("*{}\r\n", args.len()).as_bytes());
    for arg in args {
        out.extend_from_slice(format!("${}\r\n", arg.len()).as_bytes());
        out.extend_from_slice(arg);
        out.extend_from_slice(b"\r\n");
    }
}

/// A RESP2 reply seen through its type: what [`Transaction::on_reply`]
/// needs of a reply, whichever type holds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum View<'a, R> {
    /// `+…`
    Simple(&'a [u8]),
    /// `-…`
    Error(&'a [u8]),
    /// `:…`
    Integer(i64),
    /// `$…`, `None` for the nil bulk string.
    Bulk(Option<&'a [u8]>),
    /// `*…`, `None` for the nil array.
    Array(Option<&'a [R]>),
}

/// A parsed RESP2 reply [`Transaction`] can read. `resp::Reply` is one; a
/// parser's own reply type with the same five cases implements it with a
/// one-line `match` per case, as `resp::Reply` does:
///
/// ```ignore
/// impl ReplyView for resp::Reply {
///     fn view(&self) -> View<'_, Self> {
///         match self {
///             Self::Simple(s) => View::Simple(s),
///             Self::Error(e) => View::Error(e),
///             Self::Integer(i) => View::Integer(*i),
///             Self::Bulk(b) => View::Bulk(b.as_deref()),
///             Self::Array(a) => View::Array(a.as_deref()),
///         }
///     }
/// }
/// ```
pub trait ReplyView: Sized {
    /// The reply's type and contents.
    fn view(&self) -> View<'_, Self>;
}

/// Why an operation failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    /// The server answered `command` with an error.
    Error {
        /// The command.
        command: &'static str,
        /// The error message.
        message: Vec<u8>,
    },
    /// The reply to `command` is not of the type that command returns.
    Malformed {
        /// The command.
        command: &'static str,
        /// What it should have returned.
        expected: &'static str,
    },
    /// A read of `key` found `found` of the `expected` fields (0: no record).
    Missing {
        /// The command.
        command: &'static str,
        /// The record read.
        key: Vec<u8>,
        /// Fields returned.
        found: usize,
        /// Fields asked for.
        expected: usize,
    },
    /// A delete's `DEL` and `ZREM` both removed nothing.
    NotFound {
        /// The record.
        key: Vec<u8>,
    },
    /// A reply arrived while no request was outstanding.
    Unsolicited,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Error { command, message } => {
                write!(f, "{command} answered -{}", String::from_utf8_lossy(message))
            }
            Failure::Malformed { command, expected } => write!(f, "{command} did not answer {expected}"),
            Failure::Missing { command, key, found, expected } => {
                write!(f, "{command} {} returned {found} of {expected} fields", String::from_utf8_lossy(key))
            }
            Failure::NotFound { key } => write!(f, "DEL/ZREM {}: no such record", String::from_utf8_lossy(key)),
            Failure::Unsolicited => f.write_str("a reply arrived with no request outstanding"),
        }
    }
}

impl std::error::Error for Failure {}

/// Where a transaction stands: the command to send next, or whose reply
/// is awaited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Read the op's key.
    Read,
    /// `HSET` the op's values.
    Write,
    /// `ZADD` the key to the index.
    Index,
    /// `ZRANGEBYSCORE` from the start key.
    Range,
    /// Read the scan's i-th key.
    ScanRead(usize),
    /// `DEL` the key.
    Delete,
    /// `ZREM` the key from the index.
    Unindex,
    /// Nothing left.
    Done,
}

/// One [`Op`] on the wire: the commands it takes, one at a time, each sent
/// after the previous reply (as the binding's blocking Jedis calls do).
///
/// ```ignore
/// let mut t = Transaction::new(op);
/// while let Some(n) = t.next_request(&mut out) {
///     send(&out); out.clear();
///     for _ in 0..n { t.on_reply(&read_reply()); }
/// }
/// if !t.ok() { failures += 1 }
/// ```
#[derive(Clone, Debug)]
pub struct Transaction {
    op: Op,
    phase: Phase,
    /// A request was written and its reply not fed yet.
    awaiting: bool,
    /// Keys returned by a scan's `ZRANGEBYSCORE`.
    scan_keys: Vec<Vec<u8>>,
    /// What a delete's `DEL` returned.
    deleted: i64,
    commands: usize,
    failure: Option<Failure>,
}

impl Transaction {
    /// The transaction of `op`, nothing sent yet.
    #[must_use]
    pub fn new(op: Op) -> Self {
        let phase = match op.kind {
            OpKind::Read | OpKind::ReadModifyWrite => Phase::Read,
            OpKind::Update | OpKind::Insert => Phase::Write,
            OpKind::Scan => Phase::Range,
            OpKind::Delete => Phase::Delete,
        };
        Self { op, phase, awaiting: false, scan_keys: Vec::new(), deleted: 0, commands: 0, failure: None }
    }

    /// The operation.
    #[must_use]
    pub fn op(&self) -> &Op {
        &self.op
    }

    /// The operation's kind.
    #[must_use]
    pub fn kind(&self) -> OpKind {
        self.op.kind
    }

    /// Commands sent so far.
    #[must_use]
    pub fn commands(&self) -> usize {
        self.commands
    }

    /// Every command was sent and answered.
    #[must_use]
    pub fn is_done(&self) -> bool {
        self.phase == Phase::Done
    }

    /// No reply so far failed its check.
    #[must_use]
    pub fn ok(&self) -> bool {
        self.failure.is_none()
    }

    /// The first failed check, if any.
    #[must_use]
    pub fn failure(&self) -> Option<&Failure> {
        self.failure.as_ref()
    }

    /// The next request to send, RESP2-encoded and appended to `out`, with
    /// the number of commands it holds (replies to feed to
    /// [`on_reply`](Self::on_reply) before asking again); `None` when the
    /// transaction is finished.
    ///
    /// # Panics
    /// If the replies to the previous request have not all been fed.
    pub fn next_request(&mut self, out: &mut Vec<u8>) -> Option<usize> {
        assert!(!self.awaiting, "next_request with a reply outstanding");
        let op = &self.op;
        let score;
        let limit;
        let mut args: Vec<&[u8]> = Vec::with_capacity(2 + 2 * op.values.len().max(op.field_count));
        match self.phase {
            Phase::Done => return None,
            Phase::Read => read_args(&op.key, op.read_fields.as_deref(), &mut args),
            Phase::ScanRead(i) => read_args(&self.scan_keys[i], op.read_fields.as_deref(), &mut args),
            Phase::Write => {
                args.extend([&b"HSET"[..], &op.key]);
                for (field, value) in &op.values {
                    args.extend([&field[..], &value[..]]);
                }
            }
            Phase::Index => {
                score = index_score(&op.key);
                args.extend([&b"ZADD"[..], INDEX_KEY, score.as_bytes(), &op.key]);
            }
            Phase::Range => {
                score = index_score(&op.key);
                limit = op.scan_length.to_string();
                args.extend([&b"ZRANGEBYSCORE"[..], INDEX_KEY, score.as_bytes(), b"+inf", b"LIMIT", b"0"]);
                args.push(limit.as_bytes());
            }
            Phase::Delete => args.extend([&b"DEL"[..], &op.key]),
            Phase::Unindex => args.extend([&b"ZREM"[..], INDEX_KEY, &op.key]),
        }
        encode_command(&args, out);
        self.awaiting = true;
        self.commands += 1;
        Some(1)
    }

    /// Feed the reply to the last request; whether it passed its check. The
    /// first failed check is kept ([`failure`](Self::failure), and
    /// [`ok`](Self::ok) turns false) and the transaction goes on as the
    /// binding would: an insert whose `HSET` failed skips its `ZADD`, a scan
    /// whose `ZRANGEBYSCORE` failed reads nothing, a read-modify-write
    /// writes whatever its read returned. A reply fed with no request
    /// outstanding fails the transaction ([`Failure::Unsolicited`]).
    pub fn on_reply<R: ReplyView>(&mut self, reply: &R) -> bool {
        if !self.awaiting {
            self.fail(Failure::Unsolicited);
            return false;
        }
        self.awaiting = false;
        let op = &self.op;
        let (result, next) = match self.phase {
            Phase::Done => unreachable!("awaiting a reply when done"),
            Phase::Read => {
                let next = if op.kind == OpKind::ReadModifyWrite { Phase::Write } else { Phase::Done };
                (check_read(reply, &op.key, op.read_fields.as_deref(), op.field_count), next)
            }
            Phase::ScanRead(i) => {
                let next = if i + 1 < self.scan_keys.len() { Phase::ScanRead(i + 1) } else { Phase::Done };
                (check_read(reply, &self.scan_keys[i], op.read_fields.as_deref(), op.field_count), next)
            }
            Phase::Write => {
                let result = match reply.view() {
                    View::Integer(n) if n >= 0 => Ok(()),
                    View::Simple(b"OK") => Ok(()),
                    other => Err(unexpected("HSET", other, "an integer")),
                };
                let next = if op.kind == OpKind::Insert && result.is_ok() { Phase::Index } else { Phase::Done };
                (result, next)
            }
            Phase::Index => (integer("ZADD", reply).map(drop), Phase::Done),
            Phase::Range => match reply.view() {
                View::Array(Some(items)) => {
                    let limit = usize::try_from(op.scan_length).unwrap_or(usize::MAX);
                    let keys: Option<Vec<Vec<u8>>> = items
                        .iter()
                        .take(limit)
                        .map(|item| match item.view() {
                            View::Bulk(Some(key)) => Some(key.to_vec()),
                            _ => None,
                        })
                        .collect();
                    match keys {
                        Some(keys) => {
                            let next = if keys.is_empty() { Phase::Done } else { Phase::ScanRead(0) };
                            self.scan_keys = keys;
                            (Ok(()), next)
                        }
                        None => (Err(malformed("ZRANGEBYSCORE", "an array of keys")), Phase::Done),
                    }
                }
                other => (Err(unexpected("ZRANGEBYSCORE", other, "an array of keys")), Phase::Done),
            },
            Phase::Delete => match integer("DEL", reply) {
                Ok(n) => {
                    self.deleted = n;
                    (Ok(()), Phase::Unindex)
                }
                Err(e) => (Err(e), Phase::Unindex),
            },
            Phase::Unindex => match integer("ZREM", reply) {
                Ok(0) if self.deleted == 0 => (Err(Failure::NotFound { key: op.key.clone() }), Phase::Done),
                Ok(_) => (Ok(()), Phase::Done),
                Err(e) => (Err(e), Phase::Done),
            },
        };
        self.phase = next;
        match result {
            Ok(()) => true,
            Err(failure) => {
                self.fail(failure);
                false
            }
        }
    }

    /// Record `failure` unless an earlier one is recorded.
    fn fail(&mut self, failure: Failure) {
        self.failure.get_or_insert(failure);
    }
}

/// `HGETALL key`, or `HMGET key fields…`.
fn read_args<'a>(key: &'a [u8], fields: Option<&'a [Vec<u8>]>, args: &mut Vec<&'a [u8]>) {
    match fields {
        None => args.extend([&b"HGETALL"[..], key]),
        Some(fields) => {
            args.extend([&b"HMGET"[..], key]);
            args.extend(fields.iter().map(|f| &f[..]));
        }
    }
}

/// Check a read's reply: every field of the record (`HGETALL`), or a value
/// for every field asked (`HMGET`).
fn check_read<R: ReplyView>(
    reply: &R,
    key: &[u8],
    fields: Option<&[Vec<u8>]>,
    field_count: usize,
) -> Result<(), Failure> {
    let command = if fields.is_some() { "HMGET" } else { "HGETALL" };
    let items = match reply.view() {
        View::Array(Some(items)) => items,
        other => return Err(unexpected(command, other, "an array")),
    };
    let mut found = 0;
    for item in items {
        match item.view() {
            View::Bulk(Some(_)) => found += 1,
            View::Bulk(None) if fields.is_some() => {}
            _ => return Err(malformed(command, "an array of bulk strings")),
        }
    }
    let (found, expected) = match fields {
        None if items.len() % 2 == 0 => (found / 2, field_count),
        None => return Err(malformed(command, "an even number of items")),
        Some(fields) if items.len() == fields.len() => (found, fields.len()),
        Some(_) => return Err(malformed(command, "one item per field")),
    };
    if found == expected {
        Ok(())
    } else {
        Err(Failure::Missing { command, key: key.to_vec(), found, expected })
    }
}

/// An integer reply.
fn integer<R: ReplyView>(command: &'static str, reply: &R) -> Result<i64, Failure> {
    match reply.view() {
        View::Integer(n) => Ok(n),
        other => Err(unexpected(command, other, "an integer")),
    }
}

fn malformed(command: &'static str, expected: &'static str) -> Failure {
    Failure::Malformed { command, expected }
}

/// The failure of a reply of the wrong type: the server's error if it is
/// one.
fn unexpected<R>(command: &'static str, reply: View<'_, R>, expected: &'static str) -> Failure {
    match reply {
        View::Error(message) => Failure::Error { command, message: message.to_vec() },
        _ => malformed(command, expected),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_string_hash_matches_java() {
        assert_eq!(java_string_hash(b""), 0);
        assert_eq!(java_string_hash(b"a"), 97);
        // "user6284781860667377211".hashCode(), computed by hand.
        assert_eq!(java_string_hash(b"user6284781860667377211"), -594_971_599);
    }

    #[test]
    fn java_double_strings() {
        assert_eq!(java_double_string(0), "0.0");
        assert_eq!(java_double_string(-1), "-1.0");
        assert_eq!(java_double_string(9_999_999), "9999999.0");
        assert_eq!(java_double_string(10_000_000), "1.0E7");
        assert_eq!(java_double_string(-594_971_599), "-5.94971599E8");
        assert_eq!(java_double_string(120_000_000), "1.2E8");
        assert_eq!(java_double_string(i32::MIN), "-2.147483648E9");
        assert_eq!(java_double_string(i32::MAX), "2.147483647E9");
    }

    #[test]
    fn encoding() {
        let mut out = Vec::new();
        encode_command(&[b"GET", b"k"], &mut out);
        assert_eq!(out, b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n");
    }
}
