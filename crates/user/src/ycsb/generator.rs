//! One client's stream of YCSB operations (YCSB's `CoreWorkload` with one
//! client thread's state).

use std::fmt;
use std::iter::StepBy;
use std::ops::Range;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::workload::{Config, Distribution, WorkloadSpec};
use super::zipfian::{fnvhash64, ScrambledZipfian, SkewedLatest};

/// The kind of a database operation (YCSB's `DB` methods).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum OpKind {
    /// Read one record (all fields, or one).
    Read,
    /// Overwrite fields of one record.
    Update,
    /// Write a new record.
    Insert,
    /// Read the records from a start key on, in index order.
    Scan,
    /// Read a record, then update it.
    ReadModifyWrite,
    /// Remove a record (never chosen by the core workloads).
    Delete,
}

impl OpKind {
    /// Every kind, in order.
    pub const ALL: [OpKind; 6] =
        [OpKind::Read, OpKind::Update, OpKind::Insert, OpKind::Scan, OpKind::ReadModifyWrite, OpKind::Delete];

    /// YCSB's measurement name (`READ`, `UPDATE`, `INSERT`, `SCAN`,
    /// `READ-MODIFY-WRITE`, `DELETE`).
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            OpKind::Read => "READ",
            OpKind::Update => "UPDATE",
            OpKind::Insert => "INSERT",
            OpKind::Scan => "SCAN",
            OpKind::ReadModifyWrite => "READ-MODIFY-WRITE",
            OpKind::Delete => "DELETE",
        }
    }

    /// Index in [`OpKind::ALL`] (for per-kind tallies).
    #[must_use]
    pub fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for OpKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One operation, ready to become Redis commands ([`Transaction`](super::Transaction)).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Op {
    /// What to do.
    pub kind: OpKind,
    /// The record's number (the start record's, for a scan).
    pub keynum: u64,
    /// The record's key, [`key_name`]`(keynum)`.
    pub key: Vec<u8>,
    /// Fields to read (read, scan, read-modify-write): `None` for all of
    /// them (`HGETALL`), else these (`HMGET`).
    pub read_fields: Option<Vec<Vec<u8>>>,
    /// Field–value pairs to write (update, insert, read-modify-write).
    pub values: Vec<(Vec<u8>, Vec<u8>)>,
    /// Records to scan (scan only; 0 otherwise).
    pub scan_length: u64,
    /// Fields of every record, to check whole-record reads.
    pub field_count: usize,
}

/// The key of record `keynum`: `"user"` followed by [`fnvhash64`]`(keynum)`
/// in decimal (YCSB's `buildKeyName` with `insertorder=hashed` and the
/// default `zeropadding=1`). Record 0 is `user6284781860667377211`.
#[must_use]
pub fn key_name(keynum: u64) -> Vec<u8> {
    format!("user{}", fnvhash64(keynum as i64)).into_bytes()
}

/// The name of field `i`: `field{i}`.
#[must_use]
pub fn field_name(i: usize) -> Vec<u8> {
    format!("field{i}").into_bytes()
}

/// `len` random bytes as YCSB's `RandomByteIterator` makes them: six bytes
/// per random 32-bit word, bits `0..5`, `5..11`, `10..17`, `15..20`,
/// `20..26`, `25..32` masked with 31, 63, 95, 31, 63, 95 and offset by
/// `' '` — so every byte is in `0x20..=0x7f` (printable ASCII and DEL).
pub fn random_value<R: Rng + ?Sized>(rng: &mut R, len: usize) -> Vec<u8> {
    const SHIFT_MASK: [(u32, i32); 6] = [(0, 31), (5, 63), (10, 95), (15, 31), (20, 63), (25, 95)];
    let mut out = Vec::with_capacity(len);
    while out.len() < len {
        let word: i32 = rng.gen();
        let n = (len - out.len()).min(6);
        out.extend(SHIFT_MASK[..n].iter().map(|&(shift, mask)| (((word >> shift) & mask) + i32::from(b' ')) as u8));
    }
    out
}

/// How the run phase picks existing keys.
#[derive(Clone, Debug)]
enum KeyChooser {
    Zipfian(ScrambledZipfian),
    Latest(SkewedLatest),
    Uniform,
}

/// One client's YCSB workload: its share of the load phase and its stream of
/// run-phase operations, deterministic for a given seed and client index.
///
/// **Keys a client knows.** YCSB's threads share one insert counter; our
/// clients share nothing. Client `c` of `n` inserts, during the run, the
/// records `recordcount + c`, `recordcount + c + n`, `recordcount + c + 2n`,
/// …, so clients never insert the same record, and it picks the keys of its
/// reads, updates and scans as one YCSB client would over the records it
/// knows exist: the loaded ones and its own inserts, numbered `0, 1, …` in
/// that order (its *view*) and mapped to their record numbers. A run-phase
/// insert counts as acknowledged as soon as it is generated: a client that
/// finishes each operation before asking for the next (or sends all of them
/// on one connection, in order) never reads a record before its insert.
#[derive(Clone, Debug)]
pub struct Generator {
    config: Config,
    spec: WorkloadSpec,
    client: usize,
    clients: usize,
    rng: SmallRng,
    keys: KeyChooser,
    /// Run-phase inserts generated by this client.
    inserted: u64,
    /// Operation weights, YCSB's order, zero weights left out.
    ops: Vec<(f64, OpKind)>,
}

impl Generator {
    /// Client `client` of `clients` running `config.workload`, with YCSB's
    /// `operationcount` taken as `record_count` (its workload files set both
    /// to 1000). See [`Generator::with_spec`].
    ///
    /// # Panics
    /// If `clients == 0`, `client >= clients`, `record_count == 0` or
    /// `field_count == 0`.
    #[must_use]
    pub fn new(config: &Config, client: usize, clients: usize) -> Self {
        Self::with_spec(config, &config.workload.spec(), client, clients, config.record_count)
    }

    /// Client `client` of `clients` running `spec` (whose `workload` field
    /// in `config` is then ignored). `operation_count` is YCSB's
    /// `operationcount` for the whole run: the Zipfian key chooser spreads
    /// over `record_count + 2 · operation_count · insert` records (YCSB's
    /// guess of the inserts to come, with its fudge factor 2), redrawing
    /// records not inserted yet, so that inserting does not move the popular
    /// keys. Give every client the same value, so they share their popular
    /// keys.
    ///
    /// # Panics
    /// If `clients == 0`, `client >= clients`, `record_count == 0`,
    /// `field_count == 0`, no proportion is positive, or
    /// `min_scan_length` is 0 or above `max_scan_length`.
    #[must_use]
    pub fn with_spec(
        config: &Config,
        spec: &WorkloadSpec,
        client: usize,
        clients: usize,
        operation_count: u64,
    ) -> Self {
        assert!(client < clients, "client {client} of {clients}");
        assert!(config.record_count > 0, "record_count must be positive");
        assert!(config.field_count > 0, "field_count must be positive");
        assert!(
            spec.min_scan_length >= 1 && spec.min_scan_length <= spec.max_scan_length,
            "scan lengths {}..={}",
            spec.min_scan_length,
            spec.max_scan_length
        );
        let ops: Vec<(f64, OpKind)> = [
            (spec.read, OpKind::Read),
            (spec.update, OpKind::Update),
            (spec.insert, OpKind::Insert),
            (spec.scan, OpKind::Scan),
            (spec.read_modify_write, OpKind::ReadModifyWrite),
        ]
        .into_iter()
        .filter(|&(w, _)| w > 0.0)
        .collect();
        assert!(!ops.is_empty(), "no operation has a positive proportion");
        let record_count = config.record_count;
        let keys = match spec.distribution {
            Distribution::Zipfian => {
                // YCSB: `(int) (opcount * insertproportion * 2.0)`, and the
                // inclusive maximum `insertstart + insertcount + expectednewkeys`.
                let expected_new_keys = (operation_count as f64 * spec.insert * 2.0) as u64;
                KeyChooser::Zipfian(ScrambledZipfian::with_range(0, record_count + expected_new_keys))
            }
            Distribution::Latest => KeyChooser::Latest(SkewedLatest::new(record_count - 1)),
            Distribution::Uniform => KeyChooser::Uniform,
        };
        let seed = config.seed ^ (client as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        Self {
            config: *config,
            spec: *spec,
            client,
            clients,
            rng: SmallRng::seed_from_u64(seed),
            keys,
            inserted: 0,
            ops,
        }
    }

    /// The configuration.
    #[must_use]
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The operation mix.
    #[must_use]
    pub fn spec(&self) -> &WorkloadSpec {
        &self.spec
    }

    /// Run-phase inserts generated so far.
    #[must_use]
    pub fn inserted(&self) -> u64 {
        self.inserted
    }

    /// This client's share of the load phase: records `client`,
    /// `client + clients`, … below `record_count`.
    pub fn load_keys(&self) -> StepBy<Range<u64>> {
        (self.client as u64..self.config.record_count).step_by(self.clients)
    }

    /// The insert of record `keynum` with every field (a load-phase insert;
    /// YCSB's `doInsert`).
    pub fn insert_op(&mut self, keynum: u64) -> Op {
        let values = self.all_values();
        self.op(OpKind::Insert, keynum, None, values, 0)
    }

    /// The delete of record `keynum` (YCSB's `DB.delete`; no core workload
    /// issues one).
    #[must_use]
    pub fn delete_op(&self, keynum: u64) -> Op {
        self.op(OpKind::Delete, keynum, None, Vec::new(), 0)
    }

    /// The next run-phase operation (YCSB's `doTransaction`).
    pub fn next_op(&mut self) -> Op {
        match self.next_kind() {
            OpKind::Read => {
                let keynum = self.next_keynum();
                let fields = self.read_fields();
                self.op(OpKind::Read, keynum, fields, Vec::new(), 0)
            }
            OpKind::Update => {
                let keynum = self.next_keynum();
                let values = self.write_values();
                self.op(OpKind::Update, keynum, None, values, 0)
            }
            OpKind::Insert => {
                let keynum = self.record_of(self.config.record_count + self.inserted);
                self.inserted += 1;
                let values = self.all_values();
                self.op(OpKind::Insert, keynum, None, values, 0)
            }
            OpKind::Scan => {
                let keynum = self.next_keynum();
                let length = self.rng.gen_range(self.spec.min_scan_length..=self.spec.max_scan_length);
                let fields = self.read_fields();
                self.op(OpKind::Scan, keynum, fields, Vec::new(), length)
            }
            OpKind::ReadModifyWrite => {
                let keynum = self.next_keynum();
                let fields = self.read_fields();
                let values = self.write_values();
                self.op(OpKind::ReadModifyWrite, keynum, fields, values, 0)
            }
            OpKind::Delete => unreachable!("the operation chooser has no deletes"),
        }
    }

    fn op(
        &self,
        kind: OpKind,
        keynum: u64,
        read_fields: Option<Vec<Vec<u8>>>,
        values: Vec<(Vec<u8>, Vec<u8>)>,
        scan_length: u64,
    ) -> Op {
        Op {
            kind,
            keynum,
            key: key_name(keynum),
            read_fields,
            values,
            scan_length,
            field_count: self.config.field_count,
        }
    }

    /// YCSB's `DiscreteGenerator.nextValue`: one uniform draw against the
    /// normalised weights, in the order read, update, insert, scan,
    /// read-modify-write.
    fn next_kind(&mut self) -> OpKind {
        let sum: f64 = self.ops.iter().map(|&(w, _)| w).sum();
        let mut val: f64 = self.rng.gen();
        for &(w, kind) in &self.ops {
            let pw = w / sum;
            if val < pw {
                return kind;
            }
            val -= pw;
        }
        // Rounding left `val` just above the last weight.
        self.ops[self.ops.len() - 1].1
    }

    /// The newest record of this client's view (YCSB's
    /// `transactioninsertkeysequence.lastValue()`).
    fn last_view_index(&self) -> u64 {
        self.config.record_count - 1 + self.inserted
    }

    /// The record number of view index `index`.
    fn record_of(&self, index: u64) -> u64 {
        let loaded = self.config.record_count;
        if index < loaded {
            index
        } else {
            loaded + self.client as u64 + (index - loaded) * self.clients as u64
        }
    }

    /// YCSB's `nextKeynum`: a record this client knows exists.
    fn next_keynum(&mut self) -> u64 {
        let last = self.last_view_index();
        let index = match &mut self.keys {
            KeyChooser::Zipfian(z) => loop {
                let k = z.next(&mut self.rng);
                if k <= last {
                    break k;
                }
            },
            KeyChooser::Latest(l) => l.next(&mut self.rng, last),
            KeyChooser::Uniform => self.rng.gen_range(0..self.config.record_count),
        };
        self.record_of(index)
    }

    fn random_field(&mut self) -> usize {
        self.rng.gen_range(0..self.config.field_count)
    }

    fn read_fields(&mut self) -> Option<Vec<Vec<u8>>> {
        if self.config.read_all_fields {
            None
        } else {
            Some(vec![field_name(self.random_field())])
        }
    }

    fn all_values(&mut self) -> Vec<(Vec<u8>, Vec<u8>)> {
        (0..self.config.field_count)
            .map(|i| (field_name(i), random_value(&mut self.rng, self.config.field_length)))
            .collect()
    }

    fn write_values(&mut self) -> Vec<(Vec<u8>, Vec<u8>)> {
        if self.config.write_all_fields {
            self.all_values()
        } else {
            let i = self.random_field();
            vec![(field_name(i), random_value(&mut self.rng, self.config.field_length))]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_values_use_ycsbs_alphabet() {
        let mut rng = SmallRng::seed_from_u64(5);
        for len in [0, 1, 5, 6, 7, 100] {
            let v = random_value(&mut rng, len);
            assert_eq!(v.len(), len);
            assert!(v.iter().all(|b| (0x20..=0x7f).contains(b)));
            // Positions 0 and 3 of each group of six are masked with 31.
            assert!(v.iter().enumerate().filter(|(i, _)| i % 3 == 0).all(|(_, &b)| b < 0x40));
        }
    }

    #[test]
    fn view_maps_inserts_to_interleaved_records() {
        let config = Config { workload: super::super::Workload::D, record_count: 10, ..Config::default() };
        let mut g = Generator::new(&config, 1, 3);
        assert_eq!(g.record_of(9), 9);
        assert_eq!(g.record_of(10), 11);
        assert_eq!(g.record_of(11), 14);
        let inserts: Vec<u64> = std::iter::repeat_with(|| g.next_op())
            .filter(|op| op.kind == OpKind::Insert)
            .take(3)
            .map(|op| op.keynum)
            .collect();
        assert_eq!(inserts, [11, 14, 17]);
    }
}
