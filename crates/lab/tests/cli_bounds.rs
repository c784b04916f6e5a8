//! Every option of every command, given out-of-range, non-numeric,
//! negative, zero, NaN and huge values, and every input file given malformed
//! lines and out-of-range numbers: `granule` must answer with a non-zero
//! exit and one line on stderr, never a panic, an abort or a hang.
//!
//! The table below is checked against `--help`: an option that takes a value
//! and is missing from it fails the test, so a new option cannot skip this.

#[allow(dead_code)]
mod common;

use std::collections::BTreeSet;
use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use wait_timeout::ChildExt;

/// How an option's value can be wrong.
#[derive(Clone, Copy, Debug)]
enum Kind {
    /// An integer; `zero_ok` if 0 is in range; `over` is the smallest value
    /// above the range (`None`: every `u64` is valid).
    Int { zero_ok: bool, over: Option<&'static str> },
    /// A real; `zero_ok` if 0 is in range; `over` is a value above it.
    Real { zero_ok: bool, over: &'static str },
    /// Core counts (`1..N` or a list); `over` is one count too many.
    Counts { over: &'static str },
    /// A word from a fixed vocabulary (regimes, locks, workloads, …).
    Word { bad: &'static [&'static str] },
    /// A file to read.
    InputFile,
    /// A file or directory written at the end of a run: its errors are the
    /// OS's, and trying one means running the whole command, so only its
    /// presence in the table is checked.
    Output,
}

use Kind::*;

/// Stands for a well-formed `granule scale` results file in the table.
const SCALE_INPUT: &str = "@scale-input";

/// Every command (as argument words), the options it needs to run at all
/// (`--name value` pairs), and its options that take a value.
type Table =
    &'static [(&'static [&'static str], &'static [(&'static str, &'static str)], &'static [(&'static str, Kind)])];

const RUNS: Kind = Int { zero_ok: false, over: Some("1001") };
const SECONDS: Kind = Real { zero_ok: false, over: "3600.5" };
const WARMUP: Kind = Real { zero_ok: true, over: "3600.5" };
const FORMAT: (&str, Kind) = ("--format", Word { bad: &["bogus", "", "1"] });
const SEED: Kind = Int { zero_ok: true, over: None };
const CYCLES: Kind = Real { zero_ok: true, over: "1.5e12" };
const POSITIVE_CYCLES: Kind = Real { zero_ok: false, over: "1.5e12" };
const GHZ: Kind = Real { zero_ok: false, over: "101" };
const REGIMES: Kind = Word { bad: &["bogus", "", "bkl,bogus"] };
const REGIME: Kind = Word { bad: &["bogus", "", "none"] };
/// One regime of the bare-metal image (`all` or a name; no lists).
const METAL_REGIME: Kind = Word { bad: &["bogus", "", "bkl,fine", "rtm-fallback"] };

/// The model-fitting options `scale` and `model fit` share.
const FIT: &[(&str, Kind)] = &[
    ("--regime", Word { bad: &["bogus"] }),
    ("--delay", CYCLES),
    ("--think", CYCLES),
    ("--min-cores", Int { zero_ok: false, over: Some("4097") }),
    ("--locks-per-round-trip", Real { zero_ok: false, over: "1000.5" }),
    ("--predict-cores", Counts { over: "4097" }),
    ("--plot", Output),
];

/// The commands that take the [`FIT`] options besides their own.
const FITTING: &[&[&str]] = &[&["scale"], &["model", "fit"]];

/// The options of a table entry, with the shared ones it takes.
fn options_of(command: &[&str], own: &[(&'static str, Kind)]) -> Vec<(&'static str, Kind)> {
    let mut all = own.to_vec();
    if FITTING.contains(&command) {
        all.extend_from_slice(FIT);
    }
    all
}

const TABLE: Table = &[
    (
        &["info"],
        &[],
        &[
            FORMAT,
            ("--samples", Int { zero_ok: false, over: Some("10001") }),
            ("--round-trips", Int { zero_ok: false, over: Some("100000001") }),
            ("--latency-cpus", Int { zero_ok: true, over: Some("257") }),
            ("--pair-budget", SECONDS),
        ],
    ),
    (
        &["locks"],
        &[],
        &[
            FORMAT,
            ("--locks", Word { bad: &["bogus", "", "ttas,bogus"] }),
            ("--threads", Int { zero_ok: false, over: Some("1025") }),
            ("--critical-cycles", Int { zero_ok: true, over: Some("1000000001") }),
            ("--seconds", SECONDS),
            ("--runs", RUNS),
            ("--pairs", Int { zero_ok: false, over: Some("1000000001") }),
        ],
    ),
    (&["quaject"], &[], &[FORMAT, ("--iterations", Int { zero_ok: false, over: Some("16777217") }), ("--runs", RUNS)]),
    (
        &["ipc"],
        &[],
        &[
            FORMAT,
            ("--regimes", REGIMES),
            ("--runs", RUNS),
            ("--seconds", SECONDS),
            ("--warmup", WARMUP),
            ("--words", Int { zero_ok: true, over: Some("65") }),
            ("--roundtrip-bin", InputFile),
            ("--instr-short", Int { zero_ok: false, over: Some("1000001") }),
            ("--instr-long", Int { zero_ok: false, over: Some("1000001") }),
        ],
    ),
    (
        &["scale"],
        &[],
        &[
            FORMAT,
            ("--regimes", REGIMES),
            ("--cores", Counts { over: "65" }),
            ("--delays", Int { zero_ok: true, over: Some("1000000001") }),
            ("--warmup", WARMUP),
            ("--seconds", SECONDS),
            ("--runs", RUNS),
            ("--words", Int { zero_ok: true, over: Some("65") }),
        ],
    ),
    (
        &["synthesis"],
        &[],
        &[
            FORMAT,
            ("--regimes", REGIMES),
            ("--runs", RUNS),
            ("--iterations", Int { zero_ok: false, over: Some("100001") }),
            ("--contended-seconds", WARMUP),
        ],
    ),
    (
        &["subsystems"],
        &[],
        &[
            FORMAT,
            ("--regimes", REGIMES),
            ("--subsystem-locking", Word { bad: &["bogus", "", "sx,bogus"] }),
            ("--cores", Counts { over: "65" }),
            ("--workers", Int { zero_ok: false, over: Some("65") }),
            ("--compute-cycles", CYCLES),
            ("--reads-per-job", Int { zero_ok: false, over: Some("1001") }),
            ("--write-permille", Int { zero_ok: true, over: Some("1001") }),
            ("--walk-permille", Int { zero_ok: true, over: Some("1001") }),
            ("--log-permille", Int { zero_ok: true, over: Some("1001") }),
            ("--seconds", SECONDS),
            ("--warmup", WARMUP),
            ("--runs", RUNS),
        ],
    ),
    (
        &["kv"],
        &[],
        &[
            FORMAT,
            ("--regimes", REGIMES),
            ("--cores", Counts { over: "65" }),
            ("--workload", Word { bad: &["bogus", "", "a,g"] }),
            ("--records", Int { zero_ok: false, over: Some("1000001") }),
            ("--ops", Int { zero_ok: false, over: Some("1000000001") }),
            ("--seconds", SECONDS),
            ("--warmup", WARMUP),
            ("--runs", RUNS),
            ("--idle-spin-cycles", Int { zero_ok: true, over: Some("1000000000001") }),
        ],
    ),
    (
        &["verify"],
        &[],
        &[
            FORMAT,
            ("--regimes", REGIMES),
            ("--cores", Int { zero_ok: false, over: Some("9") }),
            ("--programs", Int { zero_ok: false, over: Some("1000000001") }),
            ("--seed", SEED),
            ("--run-seconds", SECONDS),
            ("--shrink", Int { zero_ok: true, over: Some("1001") }),
        ],
    ),
    (
        &["serve"],
        &[],
        &[
            ("--regime", REGIME),
            ("--cores", Int { zero_ok: false, over: Some("65") }),
            ("--port", Int { zero_ok: false, over: Some("65536") }),
            ("--max-request", Int { zero_ok: false, over: Some("536870913") }),
            ("--max-clients", Int { zero_ok: false, over: Some("65001") }),
            ("--seconds", Real { zero_ok: false, over: "31536001" }),
        ],
    ),
    (
        &["serve-bench"],
        &[],
        &[
            FORMAT,
            ("--regime", REGIME),
            ("--rounds", Int { zero_ok: false, over: Some("101") }),
            ("--requests", Int { zero_ok: false, over: Some("100000001") }),
            ("--requests-pipelined", Int { zero_ok: false, over: Some("100000001") }),
            ("--clients", Int { zero_ok: false, over: Some("10001") }),
            ("--pipeline", Int { zero_ok: false, over: Some("1001") }),
            ("--tests", Word { bad: &["bogus", "", "ping"] }),
        ],
    ),
    (
        &["model", "predict"],
        &[("--service", "100"), ("--delay", "1000")],
        &[
            FORMAT,
            ("--service", POSITIVE_CYCLES),
            ("--delay", CYCLES),
            ("--cores", Counts { over: "4097" }),
            ("--ghz", GHZ),
            ("--service-dist", Word { bad: &["bogus", ""] }),
            ("--plot", Output),
        ],
    ),
    (
        &["model", "fit"],
        &[("--input", SCALE_INPUT)],
        &[FORMAT, ("--input", InputFile), ("--latency-input", InputFile), ("--ghz", GHZ)],
    ),
    (
        &["model", "simulate"],
        &[("--service", "100"), ("--delay", "1000")],
        &[
            FORMAT,
            (
                "--topology",
                Word { bad: &["bogus", "", "uniform:100000:10", "uniform:0:1", "uniform:4:NaN", "uniform:x"] },
            ),
            ("--topology-input", InputFile),
            ("--lock", Word { bad: &["bogus", "", "clh,bogus"] }),
            ("--service", POSITIVE_CYCLES),
            ("--delay", CYCLES),
            ("--cores", Counts { over: "57" }),
            ("--seed", SEED),
            ("--completions", Int { zero_ok: false, over: Some("100000001") }),
            ("--delay-dist", Word { bad: &["bogus", "", "empirical:/nonexistent/granule-delays"] }),
            ("--service-dist", Word { bad: &["bogus", ""] }),
            ("--abort", Real { zero_ok: true, over: "1.5" }),
            ("--retries", Int { zero_ok: true, over: Some("1001") }),
            ("--ghz", GHZ),
            ("--plot", Output),
        ],
    ),
    (
        &["model", "validate"],
        &[],
        &[
            FORMAT,
            ("--service", POSITIVE_CYCLES),
            ("--delay", POSITIVE_CYCLES),
            ("--cores", Counts { over: "4097" }),
            ("--service-dist", Word { bad: &["bogus", ""] }),
            ("--completions", Int { zero_ok: false, over: Some("100000001") }),
            ("--seed", SEED),
            ("--tolerance", Real { zero_ok: false, over: "1.5" }),
            ("--plot", Output),
        ],
    ),
    (
        &["suite"],
        &[],
        &[("--regimes", REGIMES), ("--out", Output), ("--cpus", Int { zero_ok: false, over: Some("4097") })],
    ),
    (&["report"], &[], &[("--out", Output)]),
    (
        &["metal", "run"],
        &[],
        &[
            FORMAT,
            ("--regime", METAL_REGIME),
            ("--cores", Int { zero_ok: false, over: Some("17") }),
            ("--rounds", Int { zero_ok: false, over: Some("1000000001") }),
            ("--check", Word { bad: &["bogus", "", "always"] }),
            ("--timeout", SECONDS),
            ("--out", Output),
            ("--experiment", Word { bad: &["bogus", "", "fuzz"] }),
            ("--runs", Int { zero_ok: false, over: Some("101") }),
            ("--delay", Int { zero_ok: true, over: Some("1000000001") }),
        ],
    ),
    (
        &["metal", "image"],
        &[],
        &[
            ("--out", Output),
            ("--regime", METAL_REGIME),
            ("--rounds", Int { zero_ok: false, over: Some("1000000001") }),
            ("--cores", Int { zero_ok: false, over: Some("17") }),
            ("--experiment", Word { bad: &["bogus", "", "fuzz"] }),
            ("--runs", Int { zero_ok: false, over: Some("101") }),
            ("--delay", Int { zero_ok: true, over: Some("1000000001") }),
        ],
    ),
];

/// The wrong values of one kind.
fn wrong(kind: Kind) -> Vec<String> {
    let mut v: Vec<&str> = match kind {
        Int { zero_ok, over } => {
            let mut v = vec!["x", "-1", "1.5", "NaN", "inf", "1e20", "18446744073709551616", ""];
            if !zero_ok {
                v.push("0");
            }
            v.extend(over);
            v
        }
        Real { zero_ok, over } => {
            let mut v = vec!["x", "-1", "NaN", "inf", "-inf", "1e300", ""];
            if !zero_ok {
                v.push("0");
            }
            v.push(over);
            v
        }
        Counts { over } => {
            vec!["x", "-1", "0", "NaN", "", "1..1e11", "1..100000000000", "0..2", "3..1", "1,,2", "1e20", over]
        }
        Word { bad } => bad.to_vec(),
        InputFile => vec!["/nonexistent/granule-input"],
        Output => vec![],
    };
    v.dedup();
    v.into_iter().map(String::from).collect()
}

/// Run `granule` with `args` for at most a minute: (exit code, stderr).
/// `None` as the code means killed by a signal (an abort).
fn run(args: &[String]) -> (Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_granule"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start granule");
    let status = match child.wait_timeout(Duration::from_secs(60)).expect("wait for granule") {
        Some(s) => s,
        None => {
            child.kill().ok();
            child.wait().ok();
            panic!("granule {args:?} still running after 60 s");
        }
    };
    let mut err = String::new();
    child.stderr.take().expect("stderr").read_to_string(&mut err).expect("read stderr");
    (status.code(), err)
}

/// `granule args` must fail cleanly: exit 1 or 2, one line on stderr that
/// starts `granule: error:`, no panic. Returns that line, or what went wrong.
fn try_refused(args: &[String]) -> Result<String, String> {
    let (code, err) = run(args);
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    if !matches!(code, Some(1 | 2)) || err.contains("panicked") {
        return Err(format!("granule {args:?}: exit {code:?} (None: a signal), stderr: {err}"));
    }
    match lines.as_slice() {
        [line] if line.starts_with("granule: error: ") => Ok(line.to_string()),
        _ => Err(format!("granule {args:?}: not one `granule: error:` line: {err}")),
    }
}

/// [`try_refused`], failing the test at once.
fn refused(args: &[String]) -> String {
    try_refused(args).unwrap_or_else(|e| panic!("{e}"))
}

/// The arguments for `option = value` on `command`, with the options it
/// needs (except the one tried; [`SCALE_INPUT`] becomes `scale_input`).
fn arguments(command: &[&str], needs: &[(&str, &str)], option: &str, value: &str, scale_input: &str) -> Vec<String> {
    let mut args: Vec<String> = command.iter().map(|s| s.to_string()).collect();
    for (name, v) in needs.iter().filter(|(name, _)| *name != option) {
        args.push(format!("{name}={}", if *v == SCALE_INPUT { scale_input } else { v }));
    }
    if option == "--topology-input" {
        args.push("--topology=this-machine".into());
    }
    args.push(format!("{option}={value}"));
    args
}

#[test]
fn every_option_refuses_every_wrong_value_in_one_line() {
    let points = [(1, 2.0e6), (2, 1.5e6), (4, 1.0e6)].map(|(c, x)| {
        format!(
            "{{\"record\":\"scale\",\"regime\":\"bkl\",\"cores\":{c},\"delay_cycles\":0,\"round_trips_per_sec\":{x}}}"
        )
    });
    let input = Scratch::new("scale-input", format!("{MACHINE}\n{}\n", points.join("\n")).as_bytes());
    let (mut tried, mut failures) = (0, Vec::new());
    for (command, needs, options) in TABLE {
        for (option, kind) in options_of(command, options) {
            for value in wrong(kind) {
                tried += 1;
                let line = match try_refused(&arguments(command, needs, option, &value, &input.path())) {
                    Ok(line) => line,
                    Err(e) => {
                        failures.push(e);
                        continue;
                    }
                };
                // The line names the option, the value, or the bad element
                // of a list (`unknown lock `bogus``).
                let named = line.contains(option)
                    || line.contains(&value)
                    || value.split(',').any(|v| line.contains(&format!("`{v}`")) || line.contains(&format!("\"{v}\"")))
                    || matches!(kind, InputFile);
                if !named {
                    failures.push(format!("{command:?} {option}={value}: the message names neither: {line}"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} of {tried} cases failed:\n{}", failures.len(), failures.join("\n"));
    assert!(tried > 300, "only {tried} cases");
}

/// The options of one command that take a value, from its `--help`.
fn options_taking_values(command: &[&str]) -> BTreeSet<String> {
    let mut args: Vec<&str> = command.to_vec();
    args.push("--help");
    let (ok, help, _) = common::granule(&args);
    assert!(ok, "granule {command:?} --help");
    help.lines()
        .map(str::trim)
        .filter(|l| l.starts_with("--") && l.contains(" <"))
        .map(|l| l.split_whitespace().next().unwrap_or_default().to_string())
        .collect()
}

/// The subcommands listed by `granule [prefix] --help`.
fn subcommands(prefix: &[&str]) -> Vec<String> {
    let mut args: Vec<&str> = prefix.to_vec();
    args.push("--help");
    let (_, help, _) = common::granule(&args);
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(String::from)
        .collect()
}

#[test]
fn the_table_covers_every_command_and_every_option() {
    let mut commands: Vec<Vec<String>> = Vec::new();
    for c in subcommands(&[]) {
        let nested = subcommands(&[c.as_str()]);
        if nested.is_empty() {
            commands.push(vec![c]);
        } else {
            commands.extend(nested.into_iter().map(|n| vec![c.clone(), n]));
        }
    }
    assert!(commands.len() >= 14, "{commands:?}");
    for command in &commands {
        let words: Vec<&str> = command.iter().map(String::as_str).collect();
        let Some((_, _, options)) = TABLE.iter().find(|(c, _, _)| *c == words.as_slice()) else {
            panic!("granule {} is not in the table", command.join(" "));
        };
        let listed: BTreeSet<String> = options_of(&words, options).iter().map(|(o, _)| o.to_string()).collect();
        assert_eq!(options_taking_values(&words), listed, "granule {}", command.join(" "));
    }
}

#[test]
fn oversubscribing_spinning_locks_needs_the_flag_and_says_why() {
    let line = refused(&["locks".into(), "--threads=1000".into()]);
    assert!(line.contains("--oversubscribe") && line.contains("preempted"), "{line}");
    let line = refused(&["scale".into(), "--cores=64".into()]);
    assert!(line.contains("needs a CPU of its own"), "{line}");
}

/// A scratch file holding `text`, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str, text: &[u8]) -> Self {
        let path = std::env::temp_dir().join(format!("granule-cli-bounds-{}-{name}", std::process::id()));
        std::fs::write(&path, text).expect("write scratch file");
        Self(path)
    }

    fn path(&self) -> String {
        self.0.display().to_string()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        std::fs::remove_file(&self.0).ok();
    }
}

const MACHINE: &str = r#"{"record":"machine","tsc_ghz":2.0}"#;

#[test]
fn input_files_name_the_file_and_line_of_every_bad_number() {
    let scale = |fields: &str| format!("{MACHINE}\n{{\"record\":\"scale\",\"regime\":\"bkl\",{fields}}}\n");
    let fit_cases: Vec<(&str, String, usize)> = vec![
        ("huge-cores", scale(r#""cores":18446744073709551615,"delay_cycles":0,"round_trips_per_sec":1e6"#), 2),
        ("zero-cores", scale(r#""cores":0,"delay_cycles":0,"round_trips_per_sec":1e6"#), 2),
        ("fraction-cores", scale(r#""cores":1.5,"delay_cycles":0,"round_trips_per_sec":1e6"#), 2),
        ("text-cores", scale(r#""cores":"two","delay_cycles":0,"round_trips_per_sec":1e6"#), 2),
        ("nan-throughput", scale(r#""cores":2,"delay_cycles":0,"round_trips_per_sec":"NaN""#), 2),
        ("negative-throughput", scale(r#""cores":2,"delay_cycles":0,"round_trips_per_sec":-5"#), 2),
        ("negative-delay", scale(r#""cores":2,"delay_cycles":-1,"round_trips_per_sec":1e6"#), 2),
        (
            "huge-ghz",
            format!("{{\"record\":\"machine\",\"tsc_ghz\":1e400}}\n{}", scale("").lines().nth(1).unwrap_or("")),
            1,
        ),
        ("malformed", format!("{MACHINE}\n\n{{\"record\":\"scale\",\n"), 3),
        ("array", format!("{MACHINE}\n[1,2]\n"), 2),
        ("csv-cells", "cores,throughput\n1,2\n3\n".into(), 3),
        ("csv-nan", "cores,throughput\n1,2\n2,NaN\n".into(), 3),
        ("generic-huge-cores", "cores,throughput\n99999999999999999999,2\n".into(), 2),
    ];
    for (name, text, line) in &fit_cases {
        let f = Scratch::new(name, text.as_bytes());
        let msg = refused(&["model".into(), "fit".into(), format!("--input={}", f.path())]);
        assert!(msg.contains(&format!("{}:{line}", f.path())), "{name}: {msg}");
    }
    let not_utf8 = Scratch::new("not-utf8", b"{\"record\":\"machine\"}\n\xff\xfe\n");
    let msg = refused(&["model".into(), "fit".into(), format!("--input={}", not_utf8.path())]);
    assert!(msg.contains(&format!("{}:2", not_utf8.path())), "{msg}");

    let topo_cases = [
        ("topo-huge-cpu", r#"{"record":"core_latency","from":0,"to":18446744073709551615,"one_way_cycles":80}"#),
        ("topo-negative", r#"{"record":"core_latency","from":0,"to":1,"one_way_cycles":-80}"#),
        ("topo-nan", r#"{"record":"core_latency","from":0,"to":1,"one_way_cycles":"NaN"}"#),
    ];
    for (name, text) in topo_cases {
        let f = Scratch::new(name, format!("{MACHINE}\n{text}\n").as_bytes());
        let args = ["model", "simulate", "--service=100", "--delay=1000", "--topology=this-machine"];
        let mut args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        args.push(format!("--topology-input={}", f.path()));
        let msg = refused(&args);
        assert!(msg.contains(&format!("{}:2", f.path())), "{name}: {msg}");
    }

    for (name, text, line) in
        [("delays-nan", "10\n20 NaN\n", 2), ("delays-negative", "-1\n", 1), ("delays-word", "# c\n\nten\n", 3)]
    {
        let f = Scratch::new(name, text.as_bytes());
        let args = ["model", "simulate", "--service=100", "--delay=1000"];
        let mut args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        args.push(format!("--delay-dist=empirical:{}", f.path()));
        let msg = refused(&args);
        assert!(msg.contains(&format!("{}:{line}", f.path())), "{name}: {msg}");
    }
}
