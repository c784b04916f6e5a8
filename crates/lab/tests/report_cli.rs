//! `granule report` end to end, on the smoke suite's output: the page it
//! regenerates is the page the suite wrote; two results files give one
//! page with two series (one per machine) in every figure; a damaged file
//! is read line by line, each bad line named and skipped.

mod common;

use std::path::{Path, PathBuf};

use common::{granule, of_kind, records};

/// The names of the files in `dir`, sorted.
fn files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> =
        std::fs::read_dir(dir).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

fn temp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("granule-report-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// An `ipc` record of step `ipc` (a line of `results.jsonl`) with every
/// field its struct requires.
fn ipc_line(regime: &str, cycles: f64) -> String {
    format!(
        "{{\"record\":\"ipc\",\"experiment\":\"ipc\",\"regime\":\"{regime}\",\"profiled\":false,\"runs\":3,\
         \"words\":0,\"round_trip_cycles_mean\":{cycles:.1},\"round_trip_cycles_std\":3.0,\
         \"round_trip_cycles_median\":{cycles:.1},\"round_trip_cycles_min\":{cycles:.1},\"round_trip_ns_mean\":100.0,\
         \"round_trip_ns_std\":1.0}}\n"
    )
}

/// Run the smoke suite into `dir`.
fn smoke(dir: &Path) {
    let (ok, _, err) = granule(&["suite", "--smoke", "--out", dir.to_str().unwrap()]);
    assert!(ok, "granule suite failed: {err}");
}

/// The `<svg>` elements of `html` with their legend texts, per figure id.
fn legend_texts(svg: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = svg;
    while let Some(i) = rest.find("<text") {
        rest = &rest[i..];
        let start = rest.find('>').unwrap() + 1;
        let end = rest.find("</text>").unwrap();
        // Plotters sets a text's content on a line of its own.
        out.push(rest[start..end].trim().to_string());
        rest = &rest[end..];
    }
    out
}

#[test]
fn report_regenerates_the_suites_page_and_compares_two_machines() {
    let a = temp("a");
    smoke(&a);
    let suite_page = std::fs::read_to_string(a.join("index.html")).unwrap();
    let results = a.join("results.jsonl");
    let recs = records(&std::fs::read_to_string(&results).unwrap());
    assert_eq!(of_kind(&recs, "machine").len(), 1);

    // The same page from the records alone, into another directory...
    let again = temp("again");
    let (ok, out, err) = granule(&["report", results.to_str().unwrap(), "--out", again.to_str().unwrap()]);
    assert!(ok, "granule report failed: {err}");
    assert!(out.contains("report: "), "{out}");
    assert_eq!(std::fs::read_to_string(again.join("index.html")).unwrap(), suite_page);
    for f in std::fs::read_dir(&a).unwrap().flatten() {
        let name = f.file_name().to_string_lossy().into_owned();
        if name.ends_with(".svg") {
            let here = std::fs::read_to_string(again.join(&name)).unwrap_or_default();
            assert_eq!(here, std::fs::read_to_string(f.path()).unwrap(), "{name}");
        }
    }
    // ... and in place by default (the file's own directory).
    let (ok, _, err) = granule(&["report", results.to_str().unwrap()]);
    assert!(ok, "{err}");
    assert_eq!(std::fs::read_to_string(a.join("index.html")).unwrap(), suite_page);

    // A second machine's results: every figure of the comparison has
    // series of both.
    let b = temp("b");
    std::fs::create_dir_all(&b).unwrap();
    let other = std::fs::read_to_string(&results).unwrap().replacen("\"cpu_model\":\"", "\"cpu_model\":\"Other ", 1);
    std::fs::write(b.join("results.jsonl"), other).unwrap();
    let cmp = temp("cmp");
    let (ok, out, err) = granule(&[
        "report",
        results.to_str().unwrap(),
        b.join("results.jsonl").to_str().unwrap(),
        "--out",
        cmp.to_str().unwrap(),
    ]);
    assert!(ok, "granule report (compare) failed: {err}");
    assert!(out.contains("comparison of 2 machines"), "{out}");
    let page = std::fs::read_to_string(cmp.join("index.html")).unwrap();
    assert!(page.contains("Other "), "the second machine is named");
    let mut figures = 0;
    for f in std::fs::read_dir(&cmp).unwrap().flatten() {
        let name = f.file_name().to_string_lossy().into_owned();
        if !name.ends_with(".svg") {
            continue;
        }
        figures += 1;
        let texts = legend_texts(&std::fs::read_to_string(f.path()).unwrap());
        for m in ["A: ", "B: "] {
            assert!(texts.iter().any(|t| t.starts_with(m)), "{name} has no series of machine {m}: {texts:?}");
        }
    }
    assert!(figures >= 8, "{figures} figures");
    // Comparing needs somewhere to write.
    let (ok, _, err) = granule(&["report", results.to_str().unwrap(), results.to_str().unwrap()]);
    assert!(!ok && err.contains("--out"), "{err}");
    for d in [a, again, b, cmp] {
        let _ = std::fs::remove_dir_all(d);
    }
}

#[test]
fn a_damaged_results_file_is_reported_line_by_line_never_a_panic() {
    let d = temp("damaged");
    std::fs::create_dir_all(&d).unwrap();
    let p = d.join("results.jsonl");
    let mut text =
        "{\"record\":\"machine\",\"cores\":\"two\"}\nnot json at all\n{\"x\":1}\n[]\n{\"record\":\"ipc\"\n".to_string();
    text.push_str(&ipc_line("none", 250.0));
    text.push_str(&ipc_line("bkl", 250.0));
    std::fs::write(&p, &text).unwrap();
    let (ok, out, err) = granule(&["report", p.to_str().unwrap()]);
    assert!(ok, "{err}");
    assert!(out.contains("report: "), "{out}");
    let name = p.display().to_string();
    for line in [2, 3, 4, 5] {
        assert!(err.contains(&format!("{name}:{line}: ")), "line {line} not named: {err}");
    }
    // A machine record whose field does not read as the machine record's
    // type is named with its line and field.
    assert!(err.contains(&format!("{name}:1: a machine record's field `cores`")), "{err}");
    // The ipc records after the bad lines are still lines 6 and 7.
    let page = std::fs::read_to_string(d.join("index.html")).unwrap();
    assert!(
        page.contains("<td><code>none</code></td>") && page.contains("<span class=\"none\">6</span>"),
        "line numbers kept"
    );
    // A record of a kind the page draws that does not read into its struct
    // (here an `ipc` record without its runs) is an error naming its line
    // and field, and the page already there is left as it was.
    let before = files(&d);
    let without_runs = ipc_line("fine", 260.0).replace("\"runs\":3,", "");
    std::fs::write(&p, format!("{text}{without_runs}")).unwrap();
    let (ok, _, err) = granule(&["report", p.to_str().unwrap()]);
    assert!(!ok && err.contains(&format!("{name}:8: ")) && err.contains("field `runs`"), "{err}");
    assert_eq!(std::fs::read_to_string(d.join("index.html")).unwrap(), page, "the page was replaced");
    assert_eq!(files(&d), before, "a file was written or left behind");
    // Nothing to draw: an error that says so, and the page already there
    // is left as it was.
    std::fs::write(&p, b"{\"record\":\"machine\",\"cores\":2}\n\xff\n").unwrap();
    let (ok, _, err) = granule(&["report", p.to_str().unwrap()]);
    assert!(!ok && err.contains("no record the report draws"), "{err}");
    assert!(err.contains(&format!("{name}:2: not UTF-8")), "{err}");
    assert_eq!(std::fs::read_to_string(d.join("index.html")).unwrap(), page, "the page was replaced");
    assert_eq!(files(&d), before, "a file was written or left behind");
    // A missing file is an error, not a panic.
    let (ok, _, err) = granule(&["report", d.join("missing.jsonl").to_str().unwrap()]);
    assert!(!ok && err.contains("missing.jsonl"), "{err}");
    let _ = std::fs::remove_dir_all(d);
}

#[test]
fn report_writes_only_where_asked_or_beside_a_results_file_and_nothing_on_failure() {
    let d = temp("where");
    std::fs::create_dir_all(&d).unwrap();
    let suite_page = "<html>the suite's page</html>";
    std::fs::write(d.join("index.html"), suite_page).unwrap();
    let ipc = format!("{{\"record\":\"machine\",\"cores\":2}}\n{}{}", ipc_line("bkl", 250.0), ipc_line("none", 200.0));
    std::fs::write(d.join("ipc.jsonl"), ipc).unwrap();
    std::fs::write(d.join("info.csv"), "record,cores\nmachine,2\n").unwrap();
    let before = files(&d);
    // One step's records or a CSV file, without --out: refused, naming
    // --out, before anything is written.
    for f in ["ipc.jsonl", "info.csv"] {
        let (ok, out, err) = granule(&["report", d.join(f).to_str().unwrap()]);
        assert!(!ok, "{f}: {out}");
        assert!(err.contains("--out") && err.contains(f), "{f}: {err}");
        assert_eq!(std::fs::read_to_string(d.join("index.html")).unwrap(), suite_page, "{f}");
        assert_eq!(files(&d), before, "{f}");
    }
    // A file that is not records, even with --out: an error and no page.
    let elsewhere = d.join("elsewhere");
    let (ok, _, err) = granule(&["report", d.join("info.csv").to_str().unwrap(), "--out", elsewhere.to_str().unwrap()]);
    assert!(!ok && err.contains("no record the report draws"), "{err}");
    assert!(!elsewhere.exists(), "an empty page was written");
    assert_eq!(files(&d), before);
    // The step's records with --out: the page goes there, and only there.
    let (ok, out, err) =
        granule(&["report", d.join("ipc.jsonl").to_str().unwrap(), "--out", elsewhere.to_str().unwrap()]);
    assert!(ok, "{err}");
    assert!(out.contains("report: "), "{out}");
    assert!(files(&elsewhere).contains(&"index.html".to_string()));
    assert!(!files(&elsewhere).iter().any(|n| n.starts_with('.')), "staging left behind");
    assert_eq!(std::fs::read_to_string(d.join("index.html")).unwrap(), suite_page);
    let _ = std::fs::remove_dir_all(d);
}
