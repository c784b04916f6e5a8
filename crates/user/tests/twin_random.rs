//! Random command sequences against a real `redis-server`: every reply the
//! same bytes (or, where Redis leaves the order to its hash table, the same
//! elements).
//!
//! The command-by-command twin tests check what their authors thought of;
//! this one mixes the data types' commands over a handful of keys, so that
//! commands meet keys of every type, empty and missing keys, integers,
//! floats and infinities where they parse, and each other's results. Most
//! commands drawn are ones whose reply Redis fixes; a random pick
//! (`SRANDMEMBER`, `HRANDFIELD`, `ZRANDMEMBER`, `RANDOMKEY`) is compared by
//! its shape (types and counts), and a clock reading (`TTL`, `PTTL`,
//! `EXPIRETIME`, `PEXPIRETIME`) by its sign, so that "missing", "no
//! deadline" and "a deadline" must agree; a scan asks for everything in
//! one call and is compared as a set (no `OBJECT ENCODING`, whose answers
//! differ knowingly: `docs/serve.md`). Two clients share the
//! keys, one of them now and then inside a transaction, and now and then
//! `RESET`s its connection. Each seed's sequence is the same on every run; a
//! difference names the seed and the step, and prints the commands that
//! led to it. A longer hunt: `GRANULE_TWIN_SEEDS=40 GRANULE_TWIN_STEPS=2000
//! cargo test --profile release-tests -p granule-user --test twin_random`.

#[allow(dead_code)]
mod common;

use common::compare::{tokens, Order};
use common::twin::Twin;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// Commands per seed, unless `GRANULE_TWIN_STEPS` says otherwise.
const STEPS: usize = 300;
/// Seeds run per protocol (each a fresh store and a fresh Redis), unless
/// `GRANULE_TWIN_SEEDS` says otherwise.
const SEEDS: u64 = 2;

/// Steps client 1 may stay blocked before client 0 deletes the keys it
/// names and makes the first a list with an element (`DEL`, then `LPUSH`,
/// until it is served: a `BLMOVE` to a key of another type waits on).
const UNBLOCK_AFTER: usize = 8;

/// Commands per seed of the watch test (four exchanges each), unless
/// `GRANULE_TWIN_STEPS` says otherwise.
const WATCH_STEPS: usize = 150;

/// A count from the environment variable `name`, or `default`.
fn from_env<T: std::str::FromStr>(name: &str, default: T) -> T {
    match std::env::var(name) {
        Ok(v) => v.parse().unwrap_or_else(|_| panic!("{name}={v:?} is not a count")),
        Err(_) => default,
    }
}

/// A drawn command.
struct Drawn {
    /// Which of the two clients sends it.
    client: usize,
    /// A blocking command (client 1 only, outside a transaction).
    blocks: bool,
    args: Vec<String>,
    order: Order,
}

struct Gen {
    rng: SmallRng,
}

const KEYS: &[&str] = &["k1", "k2", "k3", "k4", "{t}a", "{t}b"];
const VALUES: &[&str] = &[
    "0",
    "1",
    "-1",
    "7",
    "10",
    "2.5",
    "-0.5",
    "abc",
    "",
    "a",
    "b",
    "c",
    "x",
    "1e3",
    "99999999999999999999",
    "inf",
    "-0",
];
const INTS: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "-1",
    "-2",
    "5",
    "100",
    "-100",
    "abc",
    "1.5",
    "9223372036854775807",
    "-9223372036854775808",
    "9223372036854775808",
    "4611686018427387904",
];
const SCORES: &[&str] = &["0", "1", "-1", "2.5", "inf", "-inf", "+inf", "1e2", "3", "nan", "x"];
const RANGES: &[&str] = &["-inf", "+inf", "0", "1", "(1", "2.5", "(2.5", "-1", "3", "x"];
const LEX: &[&str] = &["-", "+", "[a", "(a", "[b", "(c", "[x", "a"];

impl Gen {
    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[self.rng.gen_range(0..from.len())]
    }

    fn key(&mut self) -> String {
        self.pick(KEYS).to_owned()
    }

    fn value(&mut self) -> String {
        self.pick(VALUES).to_owned()
    }

    fn int(&mut self) -> String {
        self.pick(INTS).to_owned()
    }

    fn some<F: FnMut(&mut Self) -> String>(&mut self, most: usize, mut f: F) -> Vec<String> {
        let n = self.rng.gen_range(1..=most);
        (0..n).map(|_| f(self)).collect()
    }

    fn maybe(&mut self, word: &str) -> Vec<String> {
        if self.rng.gen_bool(0.3) {
            vec![word.to_owned()]
        } else {
            vec![]
        }
    }

    fn draw(&mut self) -> Drawn {
        use Order::*;
        let k = self.key();
        let (order, mut args): (Order, Vec<String>) = match self.rng.gen_range(0..97) {
            // Strings.
            0 => {
                let mut a = vec!["SET".into(), k, self.value()];
                if self.rng.gen_bool(0.3) {
                    a.push(self.pick(&["NX", "XX"]).into());
                }
                a.extend(self.maybe("GET"));
                (Exact, a)
            }
            1 => (Exact, vec!["GET".into(), k]),
            2 => (Exact, vec!["GETSET".into(), k, self.value()]),
            3 => (Exact, vec!["GETDEL".into(), k]),
            4 => (Exact, vec!["SETNX".into(), k, self.value()]),
            5 => {
                let mut a = vec!["MGET".into()];
                a.extend(self.some(3, Gen::key));
                (Exact, a)
            }
            6 => {
                let mut a = vec![self.pick(&["MSET", "MSETNX"]).into()];
                for _ in 0..self.rng.gen_range(1..3) {
                    a.push(self.key());
                    a.push(self.value());
                }
                (Exact, a)
            }
            7 => (Exact, vec![self.pick(&["INCR", "DECR"]).into(), k]),
            8 => (Exact, vec![self.pick(&["INCRBY", "DECRBY"]).into(), k, self.int()]),
            9 => (Exact, vec!["APPEND".into(), k, self.value()]),
            10 => (Exact, vec!["STRLEN".into(), k]),
            11 => (Exact, vec!["GETRANGE".into(), k, self.int(), self.int()]),
            12 => (Exact, vec!["SETRANGE".into(), k, self.pick(&["0", "1", "3", "-1"]).into(), self.value()]),
            13 => (Exact, vec!["INCRBYFLOAT".into(), k, self.pick(VALUES).into()]),
            14 => {
                let mut a = vec!["LCS".into(), k, self.key()];
                let opt = self.pick(&["LEN", "IDX"]);
                a.extend(self.maybe(opt));
                (Exact, a)
            }
            // Hashes.
            15 => {
                let mut a = vec![self.pick(&["HSET", "HMSET"]).into(), k];
                for _ in 0..self.rng.gen_range(1..3) {
                    a.push(self.pick(&["f", "g", "h"]).into());
                    a.push(self.value());
                }
                (Exact, a)
            }
            16 => (Exact, vec!["HSETNX".into(), k, self.pick(&["f", "g"]).into(), self.value()]),
            17 => (Exact, vec!["HGET".into(), k, self.pick(&["f", "g", "h"]).into()]),
            18 => (Exact, vec!["HMGET".into(), k, "f".into(), "h".into()]),
            19 => (Exact, vec!["HGETALL".into(), k]),
            20 => (Exact, vec!["HDEL".into(), k, self.pick(&["f", "g", "h"]).into()]),
            21 => (Exact, vec![self.pick(&["HLEN", "HKEYS", "HVALS"]).into(), k]),
            22 => (Exact, vec![self.pick(&["HEXISTS", "HSTRLEN"]).into(), k, self.pick(&["f", "g"]).into()]),
            23 => (Exact, vec!["HINCRBY".into(), k, self.pick(&["f", "g"]).into(), self.int()]),
            24 => (Exact, vec!["HINCRBYFLOAT".into(), k, self.pick(&["f", "g"]).into(), self.value()]),
            // Lists.
            25 => {
                let mut a = vec![self.pick(&["LPUSH", "RPUSH", "LPUSHX", "RPUSHX"]).into(), k];
                a.extend(self.some(3, Gen::value));
                (Exact, a)
            }
            26 => {
                let mut a = vec![self.pick(&["LPOP", "RPOP"]).into(), k];
                if self.rng.gen_bool(0.5) {
                    a.push(self.int());
                }
                (Exact, a)
            }
            27 => (Exact, vec!["LRANGE".into(), k, self.int(), self.int()]),
            28 => (Exact, vec!["LLEN".into(), k]),
            29 => (Exact, vec!["LINDEX".into(), k, self.int()]),
            30 => (Exact, vec!["LSET".into(), k, self.int(), self.value()]),
            31 => (Exact, vec!["LREM".into(), k, self.int(), self.value()]),
            32 => (Exact, vec!["LTRIM".into(), k, self.int(), self.int()]),
            33 => (
                Exact,
                vec!["LINSERT".into(), k, self.pick(&["BEFORE", "AFTER", "x"]).into(), self.value(), self.value()],
            ),
            34 => {
                let mut a = vec!["LPOS".into(), k, self.value()];
                if self.rng.gen_bool(0.4) {
                    a.push("RANK".into());
                    a.push(self.int());
                }
                if self.rng.gen_bool(0.4) {
                    a.push("COUNT".into());
                    a.push(self.int());
                }
                (Exact, a)
            }
            35 => {
                let (from, to) = (self.pick(&["LEFT", "RIGHT"]), self.pick(&["LEFT", "RIGHT"]));
                (Exact, vec!["LMOVE".into(), k, self.key(), from.into(), to.into()])
            }
            36 => (Exact, vec!["RPOPLPUSH".into(), k, self.key()]),
            // Sets.
            37 => {
                let mut a = vec![self.pick(&["SADD", "SREM"]).into(), k];
                a.extend(self.some(3, Gen::value));
                (Exact, a)
            }
            38 => (Unordered, vec!["SMEMBERS".into(), k]),
            39 => (Exact, vec!["SISMEMBER".into(), k, self.value()]),
            40 => (Exact, vec!["SMISMEMBER".into(), k, self.value(), self.value()]),
            41 => (Exact, vec!["SCARD".into(), k]),
            42 => (Unordered, vec![self.pick(&["SINTER", "SUNION", "SDIFF"]).into(), k, self.key()]),
            43 => (
                Exact,
                vec![self.pick(&["SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE"]).into(), k, self.key(), self.key()],
            ),
            44 => (Exact, vec!["SINTERCARD".into(), "2".into(), k, self.key()]),
            45 => (Exact, vec!["SMOVE".into(), k, self.key(), self.value()]),
            // Sorted sets.
            46 => {
                let mut a = vec!["ZADD".into(), k];
                if self.rng.gen_bool(0.3) {
                    a.push(self.pick(&["NX", "XX", "GT", "LT"]).into());
                }
                a.extend(self.maybe("CH"));
                let incr = self.rng.gen_bool(0.15);
                if incr {
                    a.push("INCR".into());
                }
                for _ in 0..if incr { 1 } else { self.rng.gen_range(1..3) } {
                    a.push(self.pick(SCORES).into());
                    a.push(self.pick(&["a", "b", "c", "d"]).into());
                }
                (Exact, a)
            }
            47 => (Exact, vec!["ZREM".into(), k, self.pick(&["a", "b", "c"]).into()]),
            48 => (Exact, vec!["ZCARD".into(), k]),
            49 => (Exact, vec!["ZSCORE".into(), k, self.pick(&["a", "b", "c"]).into()]),
            50 => (Exact, vec!["ZMSCORE".into(), k, "a".into(), "d".into()]),
            51 => (Exact, vec!["ZINCRBY".into(), k, self.pick(SCORES).into(), self.pick(&["a", "b"]).into()]),
            52 => {
                let mut a = vec![self.pick(&["ZRANGE", "ZREVRANGE"]).into(), k, self.int(), self.int()];
                a.extend(self.maybe("WITHSCORES"));
                (Exact, a)
            }
            53 => {
                let mut a = vec![
                    self.pick(&["ZRANGEBYSCORE", "ZREVRANGEBYSCORE"]).into(),
                    k,
                    self.pick(RANGES).into(),
                    self.pick(RANGES).into(),
                ];
                a.extend(self.maybe("WITHSCORES"));
                if self.rng.gen_bool(0.3) {
                    a.extend(["LIMIT".into(), self.int(), self.int()]);
                }
                (Exact, a)
            }
            54 => (Exact, vec![self.pick(&["ZRANK", "ZREVRANK"]).into(), k, self.pick(&["a", "b", "c"]).into()]),
            55 => (Exact, vec!["ZCOUNT".into(), k, self.pick(RANGES).into(), self.pick(RANGES).into()]),
            56 => (Exact, vec!["ZLEXCOUNT".into(), k, self.pick(LEX).into(), self.pick(LEX).into()]),
            57 => {
                let mut a = vec![self.pick(&["ZPOPMIN", "ZPOPMAX"]).into(), k];
                if self.rng.gen_bool(0.5) {
                    a.push(self.int());
                }
                (Exact, a)
            }
            58 => (Exact, vec!["ZREMRANGEBYRANK".into(), k, self.int(), self.int()]),
            59 => (Exact, vec!["ZREMRANGEBYSCORE".into(), k, self.pick(RANGES).into(), self.pick(RANGES).into()]),
            60 => {
                let mut a = vec![
                    self.pick(&["ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE"]).into(),
                    k,
                    "2".into(),
                    self.key(),
                    self.key(),
                ];
                if self.rng.gen_bool(0.3) {
                    a.extend(["WEIGHTS".into(), self.pick(SCORES).into(), "2".into()]);
                }
                if self.rng.gen_bool(0.3) {
                    a.extend(["AGGREGATE".into(), self.pick(&["SUM", "MIN", "MAX"]).into()]);
                }
                (Exact, a)
            }
            61 => {
                let mut a = vec![
                    self.pick(&["ZRANGEBYLEX", "ZREVRANGEBYLEX"]).into(),
                    k,
                    self.pick(LEX).into(),
                    self.pick(LEX).into(),
                ];
                if self.rng.gen_bool(0.3) {
                    a.extend(["LIMIT".into(), self.int(), self.int()]);
                }
                (Exact, a)
            }
            62 => {
                let mut a =
                    vec!["ZRANGE".into(), k, self.pick(RANGES).into(), self.pick(RANGES).into(), "BYSCORE".into()];
                a.extend(self.maybe("REV"));
                a.extend(self.maybe("WITHSCORES"));
                (Exact, a)
            }
            63 => (Exact, vec!["ZRANGESTORE".into(), k, self.key(), self.int(), self.int()]),
            64 => {
                let mut a = vec![self.pick(&["ZUNION", "ZINTER", "ZDIFF"]).into(), "2".into(), k, self.key()];
                a.extend(self.maybe("WITHSCORES"));
                (Exact, a)
            }
            // Keys.
            65 => {
                let mut a = vec![self.pick(&["DEL", "EXISTS", "UNLINK", "TOUCH"]).into()];
                a.extend(self.some(3, Gen::key));
                (Exact, a)
            }
            66 => (Exact, vec!["TYPE".into(), k]),
            67 => (Exact, vec![self.pick(&["RENAME", "RENAMENX"]).into(), k, self.key()]),
            68 => {
                let mut a = vec!["COPY".into(), k, self.key()];
                a.extend(self.maybe("REPLACE"));
                (Exact, a)
            }
            69 => (Exact, vec!["DBSIZE".into()]),
            70 => (Exact, vec!["EXPIRE".into(), k, self.pick(&["1000", "2000", "-1", "0"]).into()]),
            71 => (Exact, vec!["PERSIST".into(), k]),
            72 => (Unordered, vec!["KEYS".into(), self.pick(&["*", "k*", "{t}?", "k[12]", "*x*"]).into()]),
            73 => (Exact, vec!["SELECT".into(), self.pick(&["0", "1", "0", "16"]).into()]),
            // Transactions.
            74 => (Exact, vec!["MULTI".into()]),
            75 => (Exact, vec!["EXEC".into()]),
            76 => (Exact, vec!["DISCARD".into()]),
            77 => {
                let mut a = vec!["WATCH".into()];
                a.extend(self.some(2, Gen::key));
                (Exact, a)
            }
            78 => (Exact, vec!["UNWATCH".into()]),
            // Deadlines far enough away that no step sees them pass.
            79 => (
                Exact,
                vec![
                    self.pick(&["SETEX", "PSETEX"]).into(),
                    k,
                    self.pick(&["100000", "0", "-5", "x"]).into(),
                    self.value(),
                ],
            ),
            80 => {
                let mut a = vec!["GETEX".into(), k];
                match self.rng.gen_range(0..4) {
                    0 => a.push("PERSIST".into()),
                    1 => a.extend(["EX".into(), self.pick(&["100000", "0", "x"]).into()]),
                    2 => a.extend(["PX".into(), "100000000".into(), "PERSIST".into()]),
                    _ => {}
                }
                (Exact, a)
            }
            81 => {
                let mut a =
                    vec![self.pick(&["EXPIRE", "PEXPIRE"]).into(), k, self.pick(&["100000", "200000", "-1"]).into()];
                if self.rng.gen_bool(0.5) {
                    a.push(self.pick(&["NX", "XX", "GT", "LT", "BAD"]).into());
                }
                (Exact, a)
            }
            82 => {
                let mut a = vec!["SET".into(), k, self.value()];
                match self.rng.gen_range(0..5) {
                    0 => a.push("KEEPTTL".into()),
                    1 => a.extend(["EX".into(), self.pick(&["100000", "0", "-1", "x"]).into()]),
                    2 => a.extend(["PX".into(), "100000000".into(), "KEEPTTL".into()]),
                    3 => a.extend(["NX".into(), "XX".into()]),
                    _ => a.extend(["XX".into(), "GET".into(), "EX".into(), "100000".into()]),
                }
                (Exact, a)
            }
            83 => (Exact, vec!["MOVE".into(), k, self.pick(&["1", "0", "16", "x"]).into()]),
            84 => (Exact, vec!["SWAPDB".into(), self.pick(&["0", "1"]).into(), self.pick(&["1", "0", "x"]).into()]),
            85 => {
                let mut a = vec![self.pick(&["ZINTERCARD", "SINTERCARD"]).into(), "2".into(), k, self.key()];
                if self.rng.gen_bool(0.5) {
                    a.extend(["LIMIT".into(), self.int()]);
                }
                (Exact, a)
            }
            86 => {
                let mut a = vec!["ZRANGE".into(), k, self.pick(LEX).into(), self.pick(LEX).into(), "BYLEX".into()];
                a.extend(self.maybe("REV"));
                if self.rng.gen_bool(0.4) {
                    a.extend(["LIMIT".into(), self.int(), self.int()]);
                }
                (Exact, a)
            }
            87 => (Exact, vec![self.pick(&["FLUSHDB", "ECHO"]).into()]),
            88 => (
                Exact,
                vec![
                    "ZADD".into(),
                    k,
                    self.pick(&["GT", "LT", "NX"]).into(),
                    self.pick(&["XX", "CH", "GT", "NX"]).into(),
                    self.pick(SCORES).into(),
                    "a".into(),
                ],
            ),
            89 => (Exact, vec!["ZREMRANGEBYLEX".into(), k, self.pick(LEX).into(), self.pick(LEX).into()]),
            90 => (Exact, vec!["SUBSTR".into(), k, self.int(), self.int()]),
            // Deadlines at fixed times: far ahead (2100), long past, bad.
            91 => {
                let mut a = if self.rng.gen_bool(0.5) {
                    vec!["EXPIREAT".into(), k, self.pick(&["4102444800", "4102444801", "1", "-1", "x"]).into()]
                } else {
                    vec!["PEXPIREAT".into(), k, self.pick(&["4102444800000", "4102444800500", "1", "x"]).into()]
                };
                if self.rng.gen_bool(0.4) {
                    a.push(self.pick(&["NX", "XX", "GT", "LT", "BAD"]).into());
                }
                (Exact, a)
            }
            92 => (Clock, vec![self.pick(&["TTL", "PTTL", "EXPIRETIME", "PEXPIRETIME"]).into(), k]),
            93 => {
                let mut a = match self.rng.gen_range(0..4) {
                    0 => vec!["SRANDMEMBER".into(), k],
                    1 => vec!["HRANDFIELD".into(), k],
                    2 => vec!["ZRANDMEMBER".into(), k],
                    _ => vec!["RANDOMKEY".into()],
                };
                if a.len() == 2 && self.rng.gen_bool(0.6) {
                    a.push(self.pick(&["0", "1", "2", "-3", "5", "x"]).into());
                    match a[0].as_str() {
                        "HRANDFIELD" => a.extend(self.maybe("WITHVALUES")),
                        "ZRANDMEMBER" => a.extend(self.maybe("WITHSCORES")),
                        _ => {}
                    }
                }
                (Shape, a)
            }
            94 => {
                let mut a = vec!["FLUSHALL".into()];
                let how = self.pick(&["SYNC", "ASYNC", "BAD"]);
                a.extend(self.maybe(how));
                (Exact, a)
            }
            95 if self.rng.gen_bool(0.3) => (Exact, vec!["RESET".into()]),
            // A whole scan in one call: a count beyond every key and member
            // here returns them all with cursor 0, in hash order.
            96 => {
                let mut a = match self.rng.gen_range(0..4) {
                    0 => vec!["SCAN".into()],
                    1 => vec!["HSCAN".into(), k],
                    2 => vec!["SSCAN".into(), k],
                    _ => vec!["ZSCAN".into(), k],
                };
                // Cursor 0, or one Redis refuses or reads as 0 (`""`); where
                // another cursor leads depends on the hash table's layout.
                let cursor = self.pick(&["0", "0", "0", "+0", "x", "", " 0", "1.5", "99999999999999999999"]);
                a.extend([cursor.into(), "COUNT".into(), "1000".into()]);
                if self.rng.gen_bool(0.4) {
                    a.extend(["MATCH".into(), self.pick(&["*", "k*", "{t}?", "[fa]*", "*1*"]).into()]);
                }
                if a[0] == "SCAN" && self.rng.gen_bool(0.4) {
                    a.extend(["TYPE".into(), self.pick(&["string", "list", "set", "zset", "hash", "nope"]).into()]);
                }
                (Unordered, a)
            }
            _ => (Exact, vec!["ECHO".into(), self.value()]),
        };
        // A missing argument or one too many now and then: the arity errors.
        if self.rng.gen_bool(0.02) {
            if self.rng.gen_bool(0.5) && args.len() > 1 {
                args.pop();
            } else {
                args.push(self.value());
            }
        }
        let client = usize::from(self.rng.gen_bool(0.15));
        Drawn { client, blocks: false, args, order }
    }

    /// A blocking list command of client 1, with no timeout.
    fn draw_blocking(&mut self) -> Drawn {
        let k = self.key();
        let args: Vec<String> = match self.rng.gen_range(0..4) {
            0 => vec!["BLPOP".into(), k, self.key(), "0".into()],
            1 => vec!["BRPOP".into(), k, "0".into()],
            2 => {
                let (from, to) = (self.pick(&["LEFT", "RIGHT"]), self.pick(&["LEFT", "RIGHT"]));
                vec!["BLMOVE".into(), k, self.key(), from.into(), to.into(), "0".into()]
            }
            _ => vec!["BRPOPLPUSH".into(), k, self.key(), "0".into()],
        };
        Drawn { client: 1, blocks: true, args, order: Order::Exact }
    }
}

/// Runs seeds `seeds` of the sequence, each on a fresh twin speaking
/// RESP `protocol`; panics at the first difference.
fn run_seeds(protocol: u8, seeds: std::ops::Range<u64>) {
    for seed in seeds {
        let Some(mut twin) = Twin::start() else { return };
        assert_eq!(twin.client(), 1);
        twin.speak(protocol, &[0, 1]);
        let mut gen = Gen { rng: SmallRng::seed_from_u64(seed) };
        let mut history: Vec<String> = Vec::new();
        // Whether each client has a transaction open: a command whose reply
        // is not compared byte for byte is not drawn there (EXEC's reply
        // would hold it as it is).
        let mut in_multi = [false; 2];
        // Each client's database (as far as `SELECT` outside a transaction
        // says).
        let mut db = [0u8; 2];
        // The keys client 1 waits on, and for how many steps, while it is
        // blocked (everything is then client 0's).
        let mut blocked: Option<(Vec<String>, usize)> = None;
        for step in 0..from_env("GRANULE_TWIN_STEPS", STEPS) {
            let d = match &blocked {
                // Waited long: client 0 leaves its transaction, goes to
                // client 1's database, deletes the keys and makes the first
                // a list with an element.
                Some((keys, waited)) if *waited > UNBLOCK_AFTER => {
                    let args = if in_multi[0] {
                        vec!["DISCARD".into()]
                    } else if db[0] != db[1] {
                        vec!["SELECT".into(), db[1].to_string()]
                    } else if (waited - UNBLOCK_AFTER) % 2 == 1 {
                        ["DEL".to_owned()].into_iter().chain(keys.iter().cloned()).collect()
                    } else {
                        vec!["LPUSH".into(), keys[0].clone(), "w".into()]
                    };
                    Drawn { client: 0, blocks: false, args, order: Order::Exact }
                }
                _ if blocked.is_none() && !in_multi[1] && gen.rng.gen_bool(0.02) => gen.draw_blocking(),
                _ => loop {
                    let mut d = gen.draw();
                    if blocked.is_some() {
                        d.client = 0;
                    }
                    if !(in_multi[d.client] && d.order != Order::Exact) {
                        break d;
                    }
                },
            };
            history.push(format!("[{}] {}", d.client, d.args.join(" ")));
            let words: Vec<&str> = d.args.iter().map(String::as_str).collect();
            let (ours, theirs) = if d.blocks { twin.raw_may_block(1, &words) } else { twin.raw(d.client, &words) };
            if d.blocks && ours.is_empty() && theirs.is_empty() {
                // The keys it names (the last argument is the timeout).
                blocked = Some((
                    d.args[1..d.args.len() - 1]
                        .iter()
                        .filter(|a| !a.chars().all(|c| c.is_ascii_uppercase()))
                        .cloned()
                        .collect(),
                    0,
                ));
            }
            let name = d.args[0].to_ascii_uppercase();
            let single = d.args.len() == 1;
            if name == "SELECT" && !in_multi[d.client] && ours.starts_with(b"+OK") {
                db[d.client] = d.args[1].parse().unwrap_or(0);
            }
            if name == "MULTI" && single && ours.starts_with(b"+OK") {
                in_multi[d.client] = true;
            } else if name == "EXEC" || (name == "DISCARD" && single) {
                in_multi[d.client] = false;
            } else if name == "RESET" && ours.starts_with(b"+RESET") {
                // Out of any transaction, back to database 0 (and RESP2).
                (in_multi[d.client], db[d.client]) = (false, 0);
            }
            if let Some((_, waited)) = &mut blocked {
                *waited += 1;
                if !d.blocks {
                    let (ours, theirs) = twin.arrivals(1);
                    if ours != theirs {
                        let what =
                            format!("RESP{protocol}, seed {seed}, step {step}: client 1's arrivals after {:?}", d.args);
                        differ(&what, &ours, &theirs, &history);
                    }
                    if !ours.is_empty() {
                        blocked = None;
                    }
                }
            }
            if !d.order.same(&ours, &theirs) {
                let what = format!("RESP{protocol}, seed {seed}, step {step}, client {}: {:?}", d.client, d.args);
                differ(&what, &ours, &theirs, &history);
            }
        }
    }
}

/// Fails the test at a difference: where (`what`), both servers' bytes,
/// and the 40 commands before it.
fn differ(what: &str, ours: &[u8], theirs: &[u8], history: &[String]) -> ! {
    let tail = history.len().saturating_sub(40);
    panic!(
        "{what}\ngranule: {}\nRedis:   {}\nthe commands before it:\n{}",
        text(ours),
        text(theirs),
        history[tail..].join("\n")
    )
}

/// A reply's bytes as text a reader can follow.
fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).replace("\r\n", " ")
}

/// Whether `args` is a transaction command (`MULTI`, `EXEC`, `DISCARD`,
/// `WATCH`, `UNWATCH`).
fn transactional(args: &[String]) -> bool {
    ["MULTI", "EXEC", "DISCARD", "WATCH", "UNWATCH"].iter().any(|t| args[0].eq_ignore_ascii_case(t))
}

/// Each step: client 0 watches every key, client 1 sends a random command,
/// and client 0's `MULTI` / `EXEC` says whether it touched one. The two
/// servers must agree on every command's touches, changes that change
/// nothing included.
fn run_watch_seeds(seeds: std::ops::Range<u64>) {
    for seed in seeds {
        let Some(mut twin) = Twin::start() else { return };
        assert_eq!(twin.client(), 1);
        let mut gen = Gen { rng: SmallRng::seed_from_u64(seed) };
        let mut history: Vec<String> = Vec::new();
        let mut watch = vec!["WATCH"];
        watch.extend(KEYS);
        for step in 0..from_env("GRANULE_TWIN_STEPS", WATCH_STEPS) {
            let d = loop {
                let d = gen.draw();
                if !transactional(&d.args) {
                    break d;
                }
            };
            history.push(d.args.join(" "));
            let words: Vec<&str> = d.args.iter().map(String::as_str).collect();
            for (c, args) in [(0, &watch[..]), (1, &words[..]), (0, &["MULTI"][..]), (0, &["EXEC"][..])] {
                let (ours, theirs) = twin.raw(c, args);
                let order = if c == 1 { d.order } else { Order::Exact };
                if !order.same(&ours, &theirs) {
                    differ(
                        &format!("watch seed {seed}, step {step}: {args:?} after {:?}", d.args),
                        &ours,
                        &theirs,
                        &history,
                    );
                }
            }
        }
    }
}

#[test]
fn random_commands_touch_watched_keys_as_redis() {
    run_watch_seeds(200..200 + from_env("GRANULE_TWIN_SEEDS", 2));
}

#[test]
fn random_sequences_reply_as_redis_resp2() {
    run_seeds(2, 0..from_env("GRANULE_TWIN_SEEDS", SEEDS));
}

#[test]
fn random_sequences_reply_as_redis_resp3() {
    run_seeds(3, 100..100 + from_env("GRANULE_TWIN_SEEDS", SEEDS));
}

const CHANNELS: &[&str] = &["news", "news.a", "sport", "x"];
const PATTERNS: &[&str] = &["news*", "*", "s?ort", "[ns]*", "x"];

/// A random publish/subscribe command: what it is and whether its replies
/// come in hash order (unsubscribing from everything, listing channels).
fn draw_pubsub(rng: &mut SmallRng) -> (Vec<String>, Order) {
    let pick = |rng: &mut SmallRng, from: &[&str]| from[rng.gen_range(0..from.len())].to_owned();
    let some = |rng: &mut SmallRng, from: &[&str], least: usize| -> Vec<String> {
        (0..rng.gen_range(least..=2)).map(|_| pick(rng, from)).collect()
    };
    let mut order = Order::Exact;
    let args = match rng.gen_range(0..14) {
        0 | 1 => [vec!["SUBSCRIBE".to_owned()], some(rng, CHANNELS, 1)].concat(),
        2 => [vec!["PSUBSCRIBE".to_owned()], some(rng, PATTERNS, 1)].concat(),
        3 => [vec!["SSUBSCRIBE".to_owned()], vec![pick(rng, CHANNELS)]].concat(),
        4..=6 => vec!["PUBLISH".into(), pick(rng, CHANNELS), pick(rng, VALUES)],
        7 => vec!["SPUBLISH".into(), pick(rng, CHANNELS), pick(rng, VALUES)],
        8 => {
            let verb = pick(rng, &["UNSUBSCRIBE", "PUNSUBSCRIBE", "SUNSUBSCRIBE"]);
            let names = some(rng, if verb == "PUNSUBSCRIBE" { PATTERNS } else { CHANNELS }, 0);
            if names.is_empty() {
                order = Order::Unordered;
            }
            [vec![verb], names].concat()
        }
        9 => {
            order = Order::Unordered;
            vec!["PUBSUB".into(), pick(rng, &["CHANNELS", "SHARDCHANNELS"]), pick(rng, &["*", "news*", "x"])]
        }
        10 => [vec!["PUBSUB".to_owned(), pick(rng, &["NUMSUB", "SHARDNUMSUB"])], some(rng, CHANNELS, 0)].concat(),
        11 => vec!["PUBSUB".into(), "NUMPAT".into()],
        // Every subscription dropped, and back to RESP2 (where a
        // subscriber may send only the subscription commands, `PING`,
        // `QUIT` and `RESET`).
        13 if rng.gen_bool(0.3) => vec!["RESET".into()],
        _ => [vec![pick(rng, &["PING", "GET", "ECHO"])], some(rng, CHANNELS, 0)].concat(),
    };
    (args, order)
}

/// Three clients subscribe, unsubscribe and publish at random; every reply
/// and every message that arrives at a subscriber must be Redis's.
fn run_pubsub_seeds(protocol: u8, seeds: std::ops::Range<u64>) {
    for seed in seeds {
        let Some(mut twin) = Twin::start() else { return };
        let clients = [0, twin.client(), twin.client()];
        twin.speak(protocol, &clients);
        let mut rng = SmallRng::seed_from_u64(seed);
        let mut history: Vec<String> = Vec::new();
        // Clients that ever subscribed: messages may arrive for them.
        let mut listening = [false; 3];
        for step in 0..from_env("GRANULE_TWIN_STEPS", PUBSUB_STEPS) {
            let c = rng.gen_range(0..3);
            let (args, order) = draw_pubsub(&mut rng);
            history.push(format!("[{c}] {}", args.join(" ")));
            let words: Vec<&str> = args.iter().map(String::as_str).collect();
            let at = format!("pubsub RESP{protocol}, seed {seed}, step {step}");
            let (ours, theirs) = twin.raw(c, &words);
            let same = match order {
                Order::Exact => same_messages(&ours, &theirs),
                other => other.same(&ours, &theirs),
            };
            if !same {
                differ(&format!("{at}: client {c}: {args:?}"), &ours, &theirs, &history);
            }
            if args[0].ends_with("SUBSCRIBE") && !args[0].contains("UN") {
                listening[c] = true;
            }
            if args[0].ends_with("PUBLISH") {
                for other in clients.into_iter().filter(|&o| o != c && listening[o]) {
                    let (ours, theirs) = twin.arrivals(other);
                    if !same_messages(&ours, &theirs) {
                        differ(
                            &format!("{at}: client {other}'s arrivals after [{c}] {args:?}"),
                            &ours,
                            &theirs,
                            &history,
                        );
                    }
                }
            }
        }
    }
}

/// Whether two servers' bytes are the same, up to the order of pattern
/// messages: Redis sends one message per matching pattern in its pattern
/// table's hash order, which each start reseeds.
fn same_messages(ours: &[u8], theirs: &[u8]) -> bool {
    let patterns = String::from_utf8_lossy(theirs).matches("pmessage").count();
    ours == theirs || (patterns > 1 && tokens(ours) == tokens(theirs))
}

/// Commands per seed of the publish/subscribe tests, unless
/// `GRANULE_TWIN_STEPS` says otherwise.
const PUBSUB_STEPS: usize = 150;

#[test]
fn random_pubsub_reaches_subscribers_as_redis_resp2() {
    run_pubsub_seeds(2, 300..300 + from_env("GRANULE_TWIN_SEEDS", 2));
}

#[test]
fn random_pubsub_reaches_subscribers_as_redis_resp3() {
    run_pubsub_seeds(3, 400..400 + from_env("GRANULE_TWIN_SEEDS", 2));
}
