//! Properties of the RESP module over random input: the parsers and the
//! connection never panic, commands survive encoding and arbitrary splits,
//! and a random command sequence gets the same replies from the store as
//! from a deliberately simple model of Redis written here.

use std::collections::{BTreeMap, HashMap};

use granule_user::resp::{
    encode_command, parse_reply, parse_request, reply_len, request_len, Connection, Flow, Limits, Parser, Reply,
    Snapshot, Store,
};
use proptest::prelude::*;

fn small_limits() -> Limits {
    Limits { max_request: 256, max_args: 8, max_bulk: 64, max_inline: 64 }
}

/// Bytes that look like RESP often enough to reach deep parser states.
fn resp_like() -> impl Strategy<Value = Vec<u8>> {
    let token = prop_oneof![
        Just(b"*".to_vec()),
        Just(b"$".to_vec()),
        Just(b"+".to_vec()),
        Just(b"-".to_vec()),
        Just(b":".to_vec()),
        Just(b"\r\n".to_vec()),
        Just(b"\r".to_vec()),
        Just(b"\n".to_vec()),
        Just(b"-1".to_vec()),
        Just(b"\"".to_vec()),
        Just(b"'".to_vec()),
        Just(b"\\x4".to_vec()),
        Just(b" ".to_vec()),
        (0u32..40).prop_map(|n| n.to_string().into_bytes()),
        "[a-zA-Z]{1,5}".prop_map(String::into_bytes),
        proptest::collection::vec(any::<u8>(), 1..4),
    ];
    proptest::collection::vec(token, 0..40).prop_map(|tokens| tokens.concat())
}

fn any_input() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![proptest::collection::vec(any::<u8>(), 0..300), resp_like()]
}

fn arb_reply() -> impl Strategy<Value = Reply> {
    let leaf = prop_oneof![
        "[ -~]{0,8}".prop_map(|s| Reply::Simple(s.into_bytes())),
        "[ -~]{0,8}".prop_map(|s| Reply::Error(s.into_bytes())),
        any::<i64>().prop_map(Reply::Integer),
        proptest::option::of(proptest::collection::vec(any::<u8>(), 0..12)).prop_map(Reply::Bulk),
        Just(Reply::Array(None)),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| proptest::collection::vec(inner, 0..6).prop_map(|v| Reply::Array(Some(v))))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// No input makes a parser or the connection panic, and whatever they
    /// accept is within bounds.
    #[test]
    fn parsers_and_connections_never_panic(input in any_input(), chunk in 1usize..40) {
        let limits = small_limits();
        // The stack's framing scan agrees with the parser on every input:
        // the same end, the same incompleteness, the same error.
        let framing = Limits::with_max_request(limits.max_request);
        prop_assert_eq!(
            request_len(&input, limits.max_request),
            parse_request(&input, &framing).map(|parsed| parsed.map(|(_, used)| used))
        );
        match parse_request(&input, &limits) {
            Ok(Some((request, used))) => {
                prop_assert!(used <= input.len() && used <= limits.max_request);
                prop_assert_eq!(request_len(&input, limits.max_request), Ok(Some(used)));
                let _ = request.to_vec(&input);
            }
            Ok(None) => prop_assert!(input.len() <= limits.max_request),
            Err(_) => {}
        }
        if let Ok(Some((_, used))) = parse_reply(&input, 200) {
            prop_assert_eq!(reply_len(&input, 200), Ok(Some(used)));
            prop_assert!(used <= 200);
        }
        let (mut connection, mut store) = (Connection::new(limits), Store::new());
        let mut out = Vec::new();
        for piece in input.chunks(chunk) {
            if connection.feed(piece, &mut store, 0, &mut out) == Flow::Close {
                break;
            }
            prop_assert!(connection.pending_bytes() <= limits.max_request);
        }
        // Every reply the connection wrote is well-formed RESP.
        let mut at = 0;
        while at < out.len() {
            match parse_reply(&out[at..], usize::MAX) {
                Ok(Some((_, used))) => at += used,
                other => prop_assert!(false, "bad reply bytes at {}: {:?}", at, other),
            }
        }
    }

    /// A command encoded by a client parses back to the same arguments,
    /// whole or in two pieces.
    #[test]
    fn commands_round_trip_through_any_split(
        args in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..20), 1..12),
        split in any::<prop::sample::Index>(),
    ) {
        let refs: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
        let mut bytes = Vec::new();
        encode_command(&refs, &mut bytes);
        let limits = Limits::default();
        let (request, used) = parse_request(&bytes, &limits).unwrap().unwrap();
        prop_assert_eq!(used, bytes.len());
        prop_assert_eq!(request.to_vec(&bytes), args.clone());
        request.with_args(&bytes, |parsed| assert_eq!(parsed, refs.as_slice()));

        let cut = split.index(bytes.len());
        let mut parser = Parser::new();
        prop_assert!(parser.parse(&bytes[..cut], &limits).unwrap().is_none());
        let used = parser.parse(&bytes, &limits).unwrap().unwrap();
        prop_assert_eq!(used, bytes.len());
        prop_assert_eq!(parser.request().to_vec(&bytes), args);
    }

    /// Replies round-trip through the client-side reader.
    #[test]
    fn replies_round_trip(reply in arb_reply(), split in any::<prop::sample::Index>()) {
        let mut bytes = Vec::new();
        reply.encode(&mut bytes);
        prop_assert_eq!(reply_len(&bytes, usize::MAX), Ok(Some(bytes.len())));
        prop_assert_eq!(parse_reply(&bytes, usize::MAX), Ok(Some((reply, bytes.len()))));
        let cut = split.index(bytes.len());
        prop_assert_eq!(reply_len(&bytes[..cut], usize::MAX), Ok(None));
    }

    /// A random session against the store gives the model's replies, through
    /// a connection fed in random pieces, and leaves the model's data.
    #[test]
    fn the_store_agrees_with_a_model(ops in proptest::collection::vec(arb_op(), 1..60), chunk in 1usize..64) {
        let mut model = Model::default();
        let mut requests = Vec::new();
        let mut expected = Vec::new();
        for op in &ops {
            let args = op.args();
            let refs: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
            encode_command(&refs, &mut requests);
            expected.extend_from_slice(&model.apply(op));
        }
        let (mut connection, mut store) = (Connection::default(), Store::new());
        let mut out = Vec::new();
        for piece in requests.chunks(chunk) {
            prop_assert_eq!(connection.feed(piece, &mut store, 0, &mut out), Flow::Continue);
        }
        prop_assert_eq!(String::from_utf8_lossy(&out), String::from_utf8_lossy(&expected));
        prop_assert_eq!(store.snapshot(0), model.snapshot());
    }
}

// The model: a HashMap of plain values, and the reply bytes spelled out.

#[derive(Clone, Debug)]
enum Op {
    Set(usize, Vec<u8>),
    Get(usize),
    Del(Vec<usize>),
    Incr(usize),
    HSet(usize, Vec<(usize, Vec<u8>)>),
    HGetAll(usize),
    ZAdd(usize, Vec<(i32, usize)>),
    ZRem(usize, Vec<usize>),
    ZRangeByScore { key: usize, min: (i32, bool), max: (i32, bool), with_scores: bool },
}

const KEYS: [&str; 3] = ["a", "b", "c"];
const FIELDS: [&str; 3] = ["f", "g", "h"];
const MEMBERS: [&str; 4] = ["m", "n", "o", "p"];

fn arb_value() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![(-3i64..4).prop_map(|n| n.to_string().into_bytes()), "[a-z]{0,3}".prop_map(String::into_bytes)]
}

fn arb_op() -> impl Strategy<Value = Op> {
    let key = 0..KEYS.len();
    let bound = (-6i32..7, any::<bool>());
    prop_oneof![
        (key.clone(), arb_value()).prop_map(|(k, v)| Op::Set(k, v)),
        key.clone().prop_map(Op::Get),
        proptest::collection::vec(key.clone(), 1..4).prop_map(Op::Del),
        key.clone().prop_map(Op::Incr),
        (key.clone(), proptest::collection::vec((0..FIELDS.len(), arb_value()), 1..4))
            .prop_map(|(k, p)| Op::HSet(k, p)),
        key.clone().prop_map(Op::HGetAll),
        (key.clone(), proptest::collection::vec((-6i32..7, 0..MEMBERS.len()), 1..4)).prop_map(|(k, p)| Op::ZAdd(k, p)),
        (key.clone(), proptest::collection::vec(0..MEMBERS.len(), 1..3)).prop_map(|(k, m)| Op::ZRem(k, m)),
        (key, bound.clone(), bound, any::<bool>()).prop_map(|(key, min, max, with_scores)| Op::ZRangeByScore {
            key,
            min,
            max,
            with_scores
        }),
    ]
}

/// Half-integer scores: `n / 2`, exact in binary and printed the same way
/// by Rust and by `%.17g`.
fn score(n: i32) -> f64 {
    f64::from(n) / 2.0
}

impl Op {
    fn args(&self) -> Vec<Vec<u8>> {
        let word = |s: &str| s.as_bytes().to_vec();
        match self {
            Op::Set(k, v) => vec![word("SET"), word(KEYS[*k]), v.clone()],
            Op::Get(k) => vec![word("get"), word(KEYS[*k])],
            Op::Del(keys) => std::iter::once(word("DEL")).chain(keys.iter().map(|&k| word(KEYS[k]))).collect(),
            Op::Incr(k) => vec![word("incr"), word(KEYS[*k])],
            Op::HSet(k, pairs) => {
                let mut args = vec![word("HSET"), word(KEYS[*k])];
                for (f, v) in pairs {
                    args.push(word(FIELDS[*f]));
                    args.push(v.clone());
                }
                args
            }
            Op::HGetAll(k) => vec![word("HGETALL"), word(KEYS[*k])],
            Op::ZAdd(k, pairs) => {
                let mut args = vec![word("ZADD"), word(KEYS[*k])];
                for (s, m) in pairs {
                    args.push(score(*s).to_string().into_bytes());
                    args.push(word(MEMBERS[*m]));
                }
                args
            }
            Op::ZRem(k, members) => std::iter::once(word("ZREM"))
                .chain(std::iter::once(word(KEYS[*k])))
                .chain(members.iter().map(|&m| word(MEMBERS[m])))
                .collect(),
            Op::ZRangeByScore { key, min, max, with_scores } => {
                let bound = |(n, exclusive): (i32, bool)| {
                    format!("{}{}", if exclusive { "(" } else { "" }, score(n)).into_bytes()
                };
                let mut args = vec![word("ZRANGEBYSCORE"), word(KEYS[*key]), bound(*min), bound(*max)];
                if *with_scores {
                    args.push(word("WITHSCORES"));
                }
                args
            }
        }
    }
}

#[derive(Clone, Debug)]
enum ModelValue {
    Str(Vec<u8>),
    /// Fields in insertion order (Redis's small-hash order).
    Hash(Vec<(Vec<u8>, Vec<u8>)>),
    /// Member → score.
    ZSet(HashMap<Vec<u8>, f64>),
}

#[derive(Debug, Default)]
struct Model {
    keys: HashMap<Vec<u8>, ModelValue>,
}

const WRONGTYPE: &str = "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n";

fn bulk(data: &[u8]) -> Vec<u8> {
    let mut out = format!("${}\r\n", data.len()).into_bytes();
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
    out
}

impl Model {
    fn apply(&mut self, op: &Op) -> Vec<u8> {
        let key = |k: usize| KEYS[k].as_bytes().to_vec();
        match op {
            Op::Set(k, v) => {
                self.keys.insert(key(*k), ModelValue::Str(v.clone()));
                b"+OK\r\n".to_vec()
            }
            Op::Get(k) => match self.keys.get(&key(*k)) {
                None => b"$-1\r\n".to_vec(),
                Some(ModelValue::Str(v)) => bulk(v),
                Some(_) => WRONGTYPE.into(),
            },
            Op::Del(keys) => {
                let removed = keys.iter().filter(|&&k| self.keys.remove(&key(k)).is_some()).count();
                format!(":{removed}\r\n").into_bytes()
            }
            Op::Incr(k) => match self.keys.get(&key(*k)) {
                None => {
                    self.keys.insert(key(*k), ModelValue::Str(b"1".to_vec()));
                    b":1\r\n".to_vec()
                }
                Some(ModelValue::Str(v)) => {
                    let text = String::from_utf8_lossy(v);
                    // The values generated are small; Redis's strict syntax
                    // rejects `-0`, leading zeros and `+`, which never appear.
                    match text.parse::<i64>() {
                        Ok(n) if !text.is_empty() => {
                            self.keys.insert(key(*k), ModelValue::Str((n + 1).to_string().into_bytes()));
                            format!(":{}\r\n", n + 1).into_bytes()
                        }
                        _ => b"-ERR value is not an integer or out of range\r\n".to_vec(),
                    }
                }
                Some(_) => WRONGTYPE.into(),
            },
            Op::HSet(k, pairs) => {
                let entry = self.keys.entry(key(*k)).or_insert_with(|| ModelValue::Hash(Vec::new()));
                let ModelValue::Hash(fields) = entry else {
                    return WRONGTYPE.into();
                };
                let mut added = 0;
                for (f, v) in pairs {
                    let f = FIELDS[*f].as_bytes();
                    match fields.iter_mut().find(|(name, _)| name == f) {
                        Some((_, old)) => *old = v.clone(),
                        None => {
                            fields.push((f.to_vec(), v.clone()));
                            added += 1;
                        }
                    }
                }
                format!(":{added}\r\n").into_bytes()
            }
            Op::HGetAll(k) => match self.keys.get(&key(*k)) {
                None => b"*0\r\n".to_vec(),
                Some(ModelValue::Hash(fields)) => {
                    let mut out = format!("*{}\r\n", fields.len() * 2).into_bytes();
                    for (f, v) in fields {
                        out.extend(bulk(f));
                        out.extend(bulk(v));
                    }
                    out
                }
                Some(_) => WRONGTYPE.into(),
            },
            Op::ZAdd(k, pairs) => {
                let entry = self.keys.entry(key(*k)).or_insert_with(|| ModelValue::ZSet(HashMap::new()));
                let ModelValue::ZSet(members) = entry else {
                    return WRONGTYPE.into();
                };
                let added = pairs
                    .iter()
                    .filter(|(s, m)| members.insert(MEMBERS[*m].as_bytes().to_vec(), score(*s)).is_none())
                    .count();
                format!(":{added}\r\n").into_bytes()
            }
            Op::ZRem(k, ms) => {
                let Some(value) = self.keys.get_mut(&key(*k)) else {
                    return b":0\r\n".to_vec();
                };
                let ModelValue::ZSet(members) = value else {
                    return WRONGTYPE.into();
                };
                let removed = ms.iter().filter(|&&m| members.remove(MEMBERS[m].as_bytes()).is_some()).count();
                if members.is_empty() {
                    self.keys.remove(&key(*k));
                }
                format!(":{removed}\r\n").into_bytes()
            }
            Op::ZRangeByScore { key: k, min, max, with_scores } => {
                let members = match self.keys.get(&key(*k)) {
                    None => return b"*0\r\n".to_vec(),
                    Some(ModelValue::ZSet(members)) => members,
                    Some(_) => return WRONGTYPE.into(),
                };
                let (low, high) = (score(min.0), score(max.0));
                let mut selected: Vec<(f64, &Vec<u8>)> = members
                    .iter()
                    .map(|(m, &s)| (s, m))
                    .filter(|&(s, _)| if min.1 { s > low } else { s >= low })
                    .filter(|&(s, _)| if max.1 { s < high } else { s <= high })
                    .collect();
                selected.sort_by(|a, b| a.0.total_cmp(&b.0).then_with(|| a.1.cmp(b.1)));
                let per = if *with_scores { 2 } else { 1 };
                let mut out = format!("*{}\r\n", selected.len() * per).into_bytes();
                for (s, m) in selected {
                    out.extend(bulk(m));
                    if *with_scores {
                        out.extend(bulk(s.to_string().as_bytes()));
                    }
                }
                out
            }
        }
    }

    fn snapshot(&self) -> BTreeMap<Vec<u8>, Snapshot> {
        self.keys
            .iter()
            .map(|(k, v)| {
                let value = match v {
                    ModelValue::Str(data) => Snapshot::String(data.clone()),
                    ModelValue::Hash(fields) => Snapshot::Hash(fields.iter().cloned().collect()),
                    ModelValue::ZSet(members) => {
                        let mut pairs: Vec<(f64, Vec<u8>)> = members.iter().map(|(m, &s)| (s, m.clone())).collect();
                        pairs.sort_by(|a, b| a.0.total_cmp(&b.0).then_with(|| a.1.cmp(&b.1)));
                        Snapshot::ZSet(pairs)
                    }
                };
                (k.clone(), value)
            })
            .collect()
    }
}

#[test]
fn expiry_is_deterministic_in_the_callers_time() {
    let mut store = Store::new();
    let mut out = Vec::new();
    let _ = store.execute(&[b"SET", b"k", b"v", b"PX", b"10"], 1_000, &mut out);
    let _ = store.execute(&[b"GET", b"k"], 1_010, &mut out);
    let _ = store.execute(&[b"GET", b"k"], 1_011, &mut out);
    assert_eq!(out, b"+OK\r\n$1\r\nv\r\n$-1\r\n");
    assert!(store.snapshot(1_011).is_empty());
}
