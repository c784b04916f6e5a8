//! The YCSB generator against YCSB's definitions: hashes and keys computed by
//! hand from the Java, the Zipfian against its closed form and against the
//! exact distribution Gray et al.'s inversion produces, the workloads'
//! operation mixes, and the Redis commands of every operation, byte for
//! byte. Behaviour only: counts and bytes, never timings.

use std::collections::HashMap;

use granule_user::resp::Reply;
use granule_user::ycsb::zipfian::zeta;
use granule_user::ycsb::{
    fnvhash64, key_name, Config, Distribution, Failure, Generator, Op, OpKind, ScrambledZipfian, Transaction, Workload,
    WorkloadSpec, Zipfian, ZIPFIAN_CONSTANT,
};
use rand::rngs::SmallRng;
use rand::SeedableRng;

/// Standard normal quantile of 0.999 (one-sided).
const Z_999: f64 = 3.090_232;

/// Tolerance of a frequency estimated from `n` draws of probability `p`:
/// five binomial standard deviations (a false alarm once in ~3.5 million
/// checks; the seeds are fixed anyway, so a pass is reproducible).
fn five_sigma(p: f64, n: u64) -> f64 {
    5.0 * (p * (1.0 - p) / n as f64).sqrt()
}

/// The 0.999 quantile of χ² with `k` degrees of freedom, by Wilson and
/// Hilferty's cube-root normal approximation
/// `k·(1 − 2/(9k) + z·√(2/(9k)))³`. For k = 99 it gives 148.29; the exact
/// quantile is 148.23.
fn chi2_999(k: f64) -> f64 {
    let v = 2.0 / (9.0 * k);
    k * (1.0 - v + Z_999 * v.sqrt()).powi(3)
}

// ---------------------------------------------------------------- keys

#[test]
fn fnvhash64_and_keys_match_ycsb() {
    // `Utils.fnvhash64` by hand in Java long arithmetic; record 0 is the
    // familiar first YCSB key.
    assert_eq!(fnvhash64(0), 6_284_781_860_667_377_211);
    assert_eq!(fnvhash64(1), 8_517_097_267_634_966_620);
    assert_eq!(fnvhash64(4), 3_232_700_585_171_816_769);
    assert_eq!(key_name(0), b"user6284781860667377211");
    assert_eq!(key_name(1), b"user8517097267634966620");
    assert_eq!(key_name(2), b"user1820151046732198393");
}

// ------------------------------------------------------------- zipfian

/// The exact distribution of `Zipfian::new(n)`'s draws: item 0 on
/// `u < 1/ζₙ`, item 1 on `u < (1 + 0.5^θ)/ζₙ`, and item `k ≥ 2` on the `u`
/// where `⌊n·(η·u − η + 1)^α⌋ = k`, i.e. `u ∈ [1 + ((k/n)^{1−θ} − 1)/η,
/// 1 + (((k+1)/n)^{1−θ} − 1)/η)`, cut below at `(1 + 0.5^θ)/ζₙ`.
fn gray_distribution(n: u64, theta: f64) -> Vec<f64> {
    let zetan = zeta(n, theta);
    let zeta2 = zeta(2, theta);
    let eta = (1.0 - (2.0 / n as f64).powf(1.0 - theta)) / (1.0 - zeta2 / zetan);
    let u1 = 1.0 / zetan;
    let u2 = (1.0 + 0.5f64.powf(theta)) / zetan;
    let edge = |k: u64| 1.0 + ((k as f64 / n as f64).powf(1.0 - theta) - 1.0) / eta;
    let mut p = vec![0.0; n as usize];
    p[0] = u1;
    p[1] = u2 - u1;
    for k in 0..n {
        let lo = edge(k).max(u2);
        let hi = edge(k + 1).min(1.0);
        if hi > lo {
            p[k as usize] += hi - lo;
        }
    }
    p
}

#[test]
fn zipfian_matches_closed_form_head_and_exact_algorithm() {
    const N: u64 = 100;
    const DRAWS: u64 = 2_000_000;
    let theta = ZIPFIAN_CONSTANT;
    let mut z = Zipfian::new(N);
    let mut rng = SmallRng::seed_from_u64(0x5eed);
    let mut counts = vec![0u64; N as usize];
    for _ in 0..DRAWS {
        let v = z.next(&mut rng);
        assert!(v < N, "{v}");
        counts[v as usize] += 1;
    }
    let freq = |k: usize| counts[k] as f64 / DRAWS as f64;
    let zetan = zeta(N, theta);
    let closed = |rank: usize| 1.0 / (rank as f64).powf(theta) / zetan;
    let exact = gray_distribution(N, theta);
    assert!((exact.iter().sum::<f64>() - 1.0).abs() < 1e-12);

    // Ranks 1 and 2 are drawn exactly: Zipf's p_i = (1/i^θ)/ζ(n, θ).
    for rank in [1, 2] {
        let p = closed(rank);
        assert!((exact[rank - 1] - p).abs() < 1e-12);
        let f = freq(rank - 1);
        assert!((f - p).abs() < five_sigma(p, DRAWS), "rank {rank}: {f} vs {p}");
    }
    // Ranks from 3 on follow Gray et al.'s continuous tail, within 15 % of
    // Zipf's law at n = 100 (14.6 % heavy at rank 3, 5.2 % light at 100)…
    for rank in 3..=N as usize {
        let ratio = exact[rank - 1] / closed(rank);
        assert!((0.94..1.15).contains(&ratio), "rank {rank}: {ratio}");
    }
    // …and the draws follow that tail: the top ten ranks one by one…
    for (k, &p) in exact.iter().enumerate().take(10) {
        let f = freq(k);
        assert!((f - p).abs() < five_sigma(p, DRAWS), "rank {}: {f} vs {p}", k + 1);
    }
    // …and all ranks together: Pearson's χ² over the 100 ranks (every
    // expected count above 3700), 99 degrees of freedom, below its 0.999
    // quantile.
    let chi2: f64 = exact
        .iter()
        .zip(&counts)
        .map(|(&p, &c)| {
            let e = p * DRAWS as f64;
            (c as f64 - e).powi(2) / e
        })
        .sum();
    assert!(chi2 < chi2_999(99.0), "χ² = {chi2}");
}

#[test]
fn scrambled_zipfian_hottest_key_has_share_one_over_zetan() {
    const ITEMS: u64 = 10_000;
    const DRAWS: u64 = 1_000_000;
    let mut z = ScrambledZipfian::new(ITEMS);
    let mut rng = SmallRng::seed_from_u64(7);
    let mut counts: HashMap<u64, u64> = HashMap::new();
    for _ in 0..DRAWS {
        let v = z.next(&mut rng);
        assert!(v < ITEMS, "{v}");
        *counts.entry(v).or_default() += 1;
    }
    let mut by_count: Vec<(u64, u64)> = counts.into_iter().collect();
    by_count.sort_by_key(|&(item, c)| (std::cmp::Reverse(c), item));
    // Rank 0 and rank 1 land where fnvhash64 puts them…
    assert_eq!(by_count[0].0, z.item_of_rank(0));
    assert_eq!(by_count[1].0, z.item_of_rank(1));
    // …with probabilities 1/ZETAN and 0.5^θ/ZETAN, plus the share of the
    // 10¹⁰ tail ranks that hash onto the same item (about 1/ITEMS).
    for (rank, &(_, c)) in by_count.iter().take(2).enumerate() {
        let p = 0.5f64.powf(ZIPFIAN_CONSTANT * rank as f64) / ScrambledZipfian::ZETAN;
        let f = c as f64 / DRAWS as f64;
        assert!((f - p).abs() < five_sigma(p, DRAWS) + 2.0 / ITEMS as f64, "rank {rank}: {f} vs {p}");
    }
}

// ------------------------------------------------------------ workloads

fn config(workload: Workload) -> Config {
    Config { workload, seed: 42, ..Config::default() }
}

fn mix(workload: Workload, ops: u64) -> HashMap<OpKind, u64> {
    let mut g = Generator::new(&config(workload), 0, 1);
    let mut counts = HashMap::new();
    for _ in 0..ops {
        *counts.entry(g.next_op().kind).or_default() += 1;
    }
    counts
}

#[test]
fn every_workload_has_its_operation_mix() {
    const OPS: u64 = 100_000;
    for w in Workload::ALL {
        let s = w.spec();
        let counts = mix(w, OPS);
        let expected = [
            (OpKind::Read, s.read),
            (OpKind::Update, s.update),
            (OpKind::Insert, s.insert),
            (OpKind::Scan, s.scan),
            (OpKind::ReadModifyWrite, s.read_modify_write),
            (OpKind::Delete, 0.0),
        ];
        for (kind, p) in expected {
            let f = counts.get(&kind).copied().unwrap_or(0) as f64 / OPS as f64;
            assert!((f - p).abs() <= five_sigma(p, OPS), "workload {w}, {kind}: {f} vs {p}");
        }
    }
}

#[test]
fn ops_carry_the_configured_fields() {
    let mut g = Generator::new(&config(Workload::A), 0, 1);
    for _ in 0..1000 {
        let op = g.next_op();
        assert!(op.keynum < 32_000);
        assert_eq!(op.key, key_name(op.keynum));
        assert_eq!(op.field_count, 10);
        assert_eq!(op.read_fields, None);
        match op.kind {
            OpKind::Read => assert!(op.values.is_empty()),
            OpKind::Update => {
                // Every field, in order, 100 bytes each (our default).
                assert_eq!(op.values.len(), 10);
                for (i, (f, v)) in op.values.iter().enumerate() {
                    assert_eq!(f, format!("field{i}").as_bytes());
                    assert_eq!(v.len(), 100);
                }
            }
            other => panic!("workload A issued {other}"),
        }
    }
    // YCSB's defaults: one random field read, one written.
    let ycsb = Config { read_all_fields: false, write_all_fields: false, field_length: 7, ..config(Workload::F) };
    let mut g = Generator::new(&ycsb, 0, 1);
    for _ in 0..1000 {
        let op = g.next_op();
        let fields = op.read_fields.as_ref().expect("one field read");
        assert_eq!(fields.len(), 1);
        if op.kind == OpKind::ReadModifyWrite {
            assert_eq!(op.values.len(), 1);
            assert_eq!(op.values[0].1.len(), 7);
        }
    }
}

#[test]
fn latest_picks_recent_keys() {
    const RECORDS: u64 = 1000;
    const OPS: u64 = 100_000;
    let cfg = Config { record_count: RECORDS, ..config(Workload::D) };
    let mut g = Generator::new(&cfg, 0, 1);
    let (mut reads, mut newest, mut recent) = (0u64, 0u64, 0u64);
    let mut last = RECORDS - 1;
    for _ in 0..OPS {
        let op = g.next_op();
        match op.kind {
            OpKind::Insert => {
                assert_eq!(op.keynum, last + 1, "inserts continue the record numbers");
                last = op.keynum;
            }
            OpKind::Read => {
                assert!((1..=last).contains(&op.keynum), "{} outside 1..={last}", op.keynum);
                reads += 1;
                newest += u64::from(op.keynum == last);
                recent += u64::from(last - op.keynum < (last + 1) / 10);
            }
            other => panic!("workload D issued {other}"),
        }
    }
    // With ~6000 records at the end, the newest is read with probability
    // 1/ζ(n) ≥ 1/ζ(6000) ≈ 0.11, the newest tenth with ≈ 0.7.
    let newest = newest as f64 / reads as f64;
    let recent = recent as f64 / reads as f64;
    assert!(newest > 1.0 / zeta(6000, ZIPFIAN_CONSTANT) - 0.01, "newest {newest}");
    assert!(recent > 0.6, "newest tenth {recent}");
    assert_eq!(g.inserted(), last + 1 - RECORDS);
}

#[test]
fn clients_insert_disjoint_records_and_read_only_known_ones() {
    const CLIENTS: usize = 3;
    const RECORDS: u64 = 100;
    let cfg = Config { record_count: RECORDS, ..config(Workload::D) };
    let mut seen = Vec::new();
    for c in 0..CLIENTS {
        let mut g = Generator::new(&cfg, c, CLIENTS);
        let mut mine = Vec::new();
        for _ in 0..20_000 {
            let op = g.next_op();
            match op.kind {
                OpKind::Insert => {
                    assert_eq!(op.keynum % CLIENTS as u64, (RECORDS + c as u64) % CLIENTS as u64);
                    assert!(op.keynum >= RECORDS);
                    mine.push(op.keynum);
                }
                _ => assert!(op.keynum < RECORDS || mine.contains(&op.keynum), "client {c} read {}", op.keynum),
            }
        }
        seen.extend(mine);
    }
    let n = seen.len();
    seen.sort_unstable();
    seen.dedup();
    assert_eq!(seen.len(), n, "two clients inserted the same record");
}

#[test]
fn load_phase_partitions_the_records() {
    let cfg = Config { record_count: 1001, ..Config::default() };
    let mut all: Vec<u64> = (0..4).flat_map(|c| Generator::new(&cfg, c, 4).load_keys().collect::<Vec<_>>()).collect();
    all.sort_unstable();
    assert_eq!(all, (0..1001).collect::<Vec<_>>());
    let mut g = Generator::new(&cfg, 2, 4);
    let op = g.insert_op(17);
    assert_eq!((op.kind, op.keynum, op.values.len()), (OpKind::Insert, 17, 10));
    assert!(op.values.iter().all(|(_, v)| v.len() == 100 && v.iter().all(|b| (0x20..=0x7f).contains(b))));
}

#[test]
fn scan_lengths_are_uniform_over_1_to_100() {
    let mut g = Generator::new(&config(Workload::E), 0, 1);
    let mut lengths = [0u64; 101];
    for _ in 0..100_000 {
        let op = g.next_op();
        if op.kind == OpKind::Scan {
            assert!((1..=100).contains(&op.scan_length), "{}", op.scan_length);
            lengths[op.scan_length as usize] += 1;
        } else {
            assert_eq!(op.scan_length, 0);
        }
    }
    assert_eq!(lengths[0], 0);
    let scans: u64 = lengths.iter().sum();
    for (len, &c) in lengths.iter().enumerate().skip(1) {
        let f = c as f64 / scans as f64;
        assert!((f - 0.01).abs() < five_sigma(0.01, scans), "length {len}: {f}");
    }
}

#[test]
fn uniform_distribution_covers_the_loaded_records() {
    let spec = WorkloadSpec { read: 1.0, distribution: Distribution::Uniform, ..WorkloadSpec::default() };
    let cfg = Config { record_count: 50, ..Config::default() };
    let mut g = Generator::with_spec(&cfg, &spec, 0, 1, 1000);
    let mut counts = [0u64; 50];
    for _ in 0..50_000 {
        counts[g.next_op().keynum as usize] += 1;
    }
    assert!(counts.iter().all(|&c| (c as f64 - 1000.0).abs() < 5.0 * 1000f64.sqrt()), "{counts:?}");
}

#[test]
fn a_seed_determines_the_run() {
    for w in Workload::ALL {
        let ops = |seed: u64, client: usize| -> Vec<Op> {
            let mut g = Generator::new(&Config { seed, ..config(w) }, client, 2);
            (0..200).map(|_| g.next_op()).collect()
        };
        assert_eq!(ops(1, 0), ops(1, 0), "workload {w}");
        assert_ne!(ops(1, 0), ops(2, 0), "workload {w}");
        assert_ne!(ops(1, 0), ops(1, 1), "workload {w}");
    }
}

// --------------------------------------------------------- transactions

fn bulk(s: &[u8]) -> Reply {
    Reply::Bulk(Some(s.to_vec()))
}

fn array(items: Vec<Reply>) -> Reply {
    Reply::Array(Some(items))
}

/// A record of `fields` fields as `HGETALL` returns it.
fn record(fields: usize) -> Reply {
    array((0..fields).flat_map(|i| [bulk(format!("field{i}").as_bytes()), bulk(b"v")]).collect())
}

/// `OpKind` `kind` on record 0 of a two-field table, writing `a`, `b`.
fn op(kind: OpKind) -> Op {
    let writes = matches!(kind, OpKind::Update | OpKind::Insert | OpKind::ReadModifyWrite);
    Op {
        kind,
        keynum: 0,
        key: key_name(0),
        read_fields: None,
        values: if writes {
            vec![(b"field0".to_vec(), b"a".to_vec()), (b"field1".to_vec(), b"b".to_vec())]
        } else {
            vec![]
        },
        scan_length: if kind == OpKind::Scan { 3 } else { 0 },
        field_count: 2,
    }
}

/// Drive `t` with `replies`, one per request; the requests sent.
fn drive(t: &mut Transaction, replies: &[Reply]) -> Vec<String> {
    let mut sent = Vec::new();
    let mut replies = replies.iter();
    loop {
        let mut out = Vec::new();
        let Some(n) = t.next_request(&mut out) else { break };
        assert_eq!(n, 1);
        sent.push(String::from_utf8(out).expect("ASCII"));
        t.on_reply(replies.next().expect("a reply for every request"));
    }
    assert!(replies.next().is_none(), "unused replies");
    assert!(t.is_done());
    sent
}

const KEY0: &str = "$23\r\nuser6284781860667377211\r\n";
const HSET0: &str =
    "*6\r\n$4\r\nHSET\r\n$23\r\nuser6284781860667377211\r\n$6\r\nfield0\r\n$1\r\na\r\n$6\r\nfield1\r\n$1\r\nb\r\n";

#[test]
fn read_is_hgetall_or_hmget() {
    let mut t = Transaction::new(op(OpKind::Read));
    assert_eq!(drive(&mut t, &[record(2)]), [format!("*2\r\n$7\r\nHGETALL\r\n{KEY0}")]);
    assert!(t.ok());
    assert_eq!(t.commands(), 1);

    let mut one = op(OpKind::Read);
    one.read_fields = Some(vec![b"field1".to_vec()]);
    let mut t = Transaction::new(one.clone());
    assert_eq!(drive(&mut t, &[array(vec![bulk(b"v")])]), [format!("*3\r\n$5\r\nHMGET\r\n{KEY0}$6\r\nfield1\r\n")]);
    assert!(t.ok());

    // A missing record: HMGET's nil, HGETALL's empty array; a short record.
    let mut t = Transaction::new(one);
    drive(&mut t, &[array(vec![Reply::Bulk(None)])]);
    assert!(matches!(t.failure(), Some(Failure::Missing { found: 0, expected: 1, .. })), "{:?}", t.failure());
    for (reply, found) in [(array(vec![]), 0), (record(1), 1)] {
        let mut t = Transaction::new(op(OpKind::Read));
        drive(&mut t, &[reply]);
        assert!(matches!(t.failure(), Some(&Failure::Missing { found: f, expected: 2, .. }) if f == found));
    }
    let mut t = Transaction::new(op(OpKind::Read));
    drive(&mut t, &[Reply::Error(b"ERR boom".to_vec())]);
    assert_eq!(t.failure(), Some(&Failure::Error { command: "HGETALL", message: b"ERR boom".to_vec() }));
    assert!(!t.ok());
}

#[test]
fn update_is_one_hset() {
    let mut t = Transaction::new(op(OpKind::Update));
    assert_eq!(drive(&mut t, &[Reply::Integer(0)]), [HSET0]);
    assert!(t.ok());
    let mut t = Transaction::new(op(OpKind::Update));
    drive(&mut t, &[bulk(b"?")]);
    assert_eq!(t.failure(), Some(&Failure::Malformed { command: "HSET", expected: "an integer" }));
}

#[test]
fn insert_is_hset_then_zadd_of_the_java_hash() {
    let zadd = format!("*4\r\n$4\r\nZADD\r\n$8\r\n_indices\r\n$13\r\n-5.94971599E8\r\n{KEY0}");
    let mut t = Transaction::new(op(OpKind::Insert));
    assert_eq!(drive(&mut t, &[Reply::Integer(2), Reply::Integer(1)]), [HSET0.to_owned(), zadd]);
    assert!(t.ok());
    // No index entry for a record that was not written.
    let mut t = Transaction::new(op(OpKind::Insert));
    assert_eq!(drive(&mut t, &[Reply::Error(b"OOM".to_vec())]), [HSET0]);
    assert!(!t.ok());
}

#[test]
fn scan_reads_the_keys_the_index_returns() {
    let k1 = key_name(1);
    let k2 = key_name(2);
    let mut t = Transaction::new(op(OpKind::Scan));
    let sent = drive(&mut t, &[array(vec![bulk(&k1), bulk(&k2)]), record(2), record(2)]);
    assert_eq!(
        sent,
        [
            "*7\r\n$13\r\nZRANGEBYSCORE\r\n$8\r\n_indices\r\n$13\r\n-5.94971599E8\r\n$4\r\n+inf\r\n$5\r\nLIMIT\r\n\
             $1\r\n0\r\n$1\r\n3\r\n"
                .to_owned(),
            "*2\r\n$7\r\nHGETALL\r\n$23\r\nuser8517097267634966620\r\n".to_owned(),
            "*2\r\n$7\r\nHGETALL\r\n$23\r\nuser1820151046732198393\r\n".to_owned(),
        ]
    );
    assert!(t.ok());
    // An empty range reads nothing; a failed read fails the scan but the
    // others are still read.
    let mut t = Transaction::new(op(OpKind::Scan));
    assert_eq!(drive(&mut t, &[array(vec![])]).len(), 1);
    assert!(t.ok());
    let mut t = Transaction::new(op(OpKind::Scan));
    assert_eq!(drive(&mut t, &[array(vec![bulk(&k1), bulk(&k2)]), array(vec![]), record(2)]).len(), 3);
    assert!(matches!(t.failure(), Some(Failure::Missing { key, .. }) if *key == k1));
}

#[test]
fn read_modify_write_reads_then_writes() {
    let mut t = Transaction::new(op(OpKind::ReadModifyWrite));
    let sent = drive(&mut t, &[record(2), Reply::Integer(0)]);
    assert_eq!(sent, [format!("*2\r\n$7\r\nHGETALL\r\n{KEY0}"), HSET0.to_owned()]);
    assert!(t.ok());
    // The write goes out even when the read failed, as in YCSB.
    let mut t = Transaction::new(op(OpKind::ReadModifyWrite));
    assert_eq!(drive(&mut t, &[array(vec![]), Reply::Integer(2)]).len(), 2);
    assert!(!t.ok());
}

#[test]
fn delete_is_del_then_zrem() {
    let del = format!("*2\r\n$3\r\nDEL\r\n{KEY0}");
    let zrem = format!("*3\r\n$4\r\nZREM\r\n$8\r\n_indices\r\n{KEY0}");
    let mut t = Transaction::new(op(OpKind::Delete));
    assert_eq!(drive(&mut t, &[Reply::Integer(1), Reply::Integer(1)]), [del.clone(), zrem]);
    assert!(t.ok());
    let mut t = Transaction::new(op(OpKind::Delete));
    drive(&mut t, &[Reply::Integer(0), Reply::Integer(0)]);
    assert_eq!(t.failure(), Some(&Failure::NotFound { key: key_name(0) }));
}

#[test]
fn unsolicited_reply_fails_the_transaction() {
    let mut t = Transaction::new(op(OpKind::Read));
    assert!(!t.on_reply(&record(2)));
    assert_eq!(t.failure(), Some(&Failure::Unsolicited));
}

#[test]
#[should_panic(expected = "reply outstanding")]
fn next_request_waits_for_the_reply() {
    let mut t = Transaction::new(op(OpKind::ReadModifyWrite));
    let mut out = Vec::new();
    let _ = t.next_request(&mut out);
    let _ = t.next_request(&mut out);
}

#[test]
fn generated_ops_run_to_completion_against_well_behaved_replies() {
    // Every operation of every workload, answered as a correct store would.
    for w in Workload::ALL {
        let mut g = Generator::new(&Config { record_count: 500, ..config(w) }, 0, 1);
        for _ in 0..300 {
            let op = g.next_op();
            let (kind, scan_length) = (op.kind, op.scan_length);
            let mut t = Transaction::new(op);
            let mut out = Vec::new();
            while let Some(n) = t.next_request(&mut out) {
                let cmd = out.split(|&b| b == b'\n').nth(2).expect("command name").to_vec();
                let reply = match &cmd[..] {
                    b"HGETALL\r" => record(10),
                    b"HSET\r" | b"ZADD\r" => Reply::Integer(1),
                    b"ZRANGEBYSCORE\r" => array((0..scan_length).map(|i| bulk(&key_name(i))).collect()),
                    other => panic!("unexpected {}", String::from_utf8_lossy(other)),
                };
                assert_eq!(n, 1);
                assert!(t.on_reply(&reply));
                out.clear();
            }
            assert!(t.ok(), "{kind}: {:?}", t.failure());
            let expected = match kind {
                OpKind::Insert | OpKind::ReadModifyWrite => 2,
                OpKind::Scan => 1 + scan_length as usize,
                _ => 1,
            };
            assert_eq!(t.commands(), expected, "{kind}");
        }
    }
}
