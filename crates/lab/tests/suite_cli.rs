//! `granule suite --smoke` end to end: the report exists, links only to
//! files that exist, fetches nothing from a network, and every figure's
//! plotted numbers are the record fields it says they are.

mod common;

use std::path::Path;

use common::{granule, of_kind, records};
use serde_json::Value;

/// Every `href="…"` / `src="…"` target in `html`.
fn links(html: &str) -> Vec<String> {
    let mut out = Vec::new();
    for attr in ["href=\"", "src=\""] {
        let mut rest = html;
        while let Some(i) = rest.find(attr) {
            rest = &rest[i + attr.len()..];
            let end = rest.find('"').expect("closed attribute");
            out.push(rest[..end].to_string());
            rest = &rest[end..];
        }
    }
    out
}

/// The JSON of every `<script type="application/json" class="figure-data">`.
fn figure_data(html: &str) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    let mut rest = html;
    let open = "<script type=\"application/json\" class=\"figure-data\" data-figure=\"";
    while let Some(i) = rest.find(open) {
        rest = &rest[i + open.len()..];
        let id_end = rest.find('"').unwrap();
        let id = rest[..id_end].to_string();
        let body_start = rest.find('>').unwrap() + 1;
        let body_end = rest.find("</script>").unwrap();
        let json = rest[body_start..body_end].replace("<\\/", "</");
        out.push((id, serde_json::from_str(&json).expect("figure data is JSON")));
        rest = &rest[body_end..];
    }
    out
}

#[test]
fn smoke_suite_writes_a_self_contained_traceable_report() {
    let dir = std::env::temp_dir().join(format!("granule-suite-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (ok, out, err) = granule(&["suite", "--smoke", "--out", dir.to_str().unwrap()]);
    assert!(ok, "granule suite failed: {err}");
    assert!(out.contains("report: "), "{out}");
    // The console says what the page says: a smoke run's numbers mean
    // nothing, before any conclusion.
    let warning = out.find("the numbers mean nothing").unwrap_or_else(|| panic!("no smoke warning: {out}"));
    let first_conclusion = out.find("  - ").unwrap_or(out.len());
    assert!(warning < first_conclusion, "the warning comes after the conclusions: {out}");
    let html = std::fs::read_to_string(dir.join("index.html")).expect("index.html");

    // Nothing from a network: no absolute URLs to fetch, no external scripts.
    for l in links(&html) {
        assert!(!l.contains("://"), "network link {l}");
        assert!(Path::new(&dir).join(&l).is_file(), "the report links to {l}, which does not exist");
    }
    assert!(!html.contains("<script src"), "external script");
    assert!(!html.contains("<link"), "external stylesheet");

    // results.jsonl: the machine record first, every line a JSON object.
    let results = std::fs::read_to_string(dir.join("results.jsonl")).unwrap();
    let recs = records(&results);
    assert_eq!(recs[0]["record"], "machine");
    for kind in ["ipc", "scale", "lock_uncontended", "quaject", "atomic_cost", "model_fit", "model_simulate", "kv"] {
        assert!(!of_kind(&recs, kind).is_empty(), "no {kind} record");
    }
    // The KV step measures Linux's redis-server too, or says why it could not.
    let linux = of_kind(&recs, "kv_linux");
    assert!(!linux.is_empty() || !of_kind(&recs, "linux_skipped").is_empty(), "neither kv_linux nor linux_skipped");
    for r in of_kind(&recs, "kv").into_iter().chain(linux.iter().copied()) {
        assert_eq!(r["experiment"], "kv", "{r}");
        assert_eq!((r["failed"].as_u64(), r["run"].as_u64()), (Some(0), Some(1)), "{r}");
    }

    // The Synthesis tables: every row of Tables 2-4 under some regime.
    let syn = of_kind(&recs, "synthesis");
    for t in [2, 3, 4] {
        assert!(syn.iter().any(|r| r["table"] == t), "no synthesis row of table {t}");
    }
    assert!(!of_kind(&recs, "null_call").is_empty());
    assert!(!of_kind(&recs, "synthesis_contended").is_empty());
    assert!(!of_kind(&recs, "synthesis_atomics").is_empty());

    // The subsystem study ran every policy, with no failed call, and its
    // three profiler tables are named on the page (every lock in subsystems.csv).
    let sub = of_kind(&recs, "subsystems");
    for p in ["giant", "sx", "improper", "lockfree"] {
        assert!(sub.iter().any(|r| r["policy"] == p), "no subsystems record for {p}");
    }
    assert!(sub.iter().all(|r| r["errors"].as_u64() == Some(0)), "{sub:?}");
    assert!(!of_kind(&recs, "subsystem_findings").is_empty());
    assert!(html.contains("the paper's Tables 2, 1 and 3 for giant, sx and improper"), "the profiler tables are named");

    // Every figure is there, as inline SVG and as a sibling file, and every
    // number it plotted is the record field it names.
    let figs = figure_data(&html);
    let ids: Vec<&str> = figs.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "fig-frontier",
            "fig-ipc",
            "fig-scale",
            "fig-predict",
            "fig-kv",
            "fig-kv-xput",
            "fig-locks",
            "fig-subsystems",
            "fig-synthesis"
        ]
    );
    for (id, data) in &figs {
        assert!(dir.join(format!("{id}.svg")).is_file(), "{id}.svg");
        let sources = data.as_array().expect("a list of sources");
        assert!(!sources.is_empty(), "{id} plots nothing");
        for s in sources {
            let line = s["line"].as_u64().unwrap() as usize;
            let field = s["field"].as_str().unwrap();
            let rec = &recs[line - 1];
            assert_eq!(rec[field].as_f64(), s["value"].as_f64(), "{id}: line {line} field {field}");
        }
    }
    // The scaling figure draws the measurements, and a fitted model only
    // where `model fit` marked the fit determined enough to quote (never
    // from the smoke run's two core counts).
    let scale_svg = std::fs::read_to_string(dir.join("fig-scale.svg")).unwrap();
    assert!(scale_svg.contains("(measured)"));
    let quoted = of_kind(&recs, "model_fit").iter().any(|r| r["quoted"] == true);
    assert_eq!(scale_svg.contains("(fitted model)"), quoted, "a fitted line exactly when a fit is quoted");
    assert!(!of_kind(&recs, "service_band").is_empty(), "the band is recorded");
    // The KV figures plot every point (one run each in the smoke profile):
    // each kv and kv_linux record's cores and its throughput or Xput.
    for (id, field) in [("fig-kv", "ops_per_sec"), ("fig-kv-xput", "xput")] {
        let (_, data) = figs.iter().find(|(i, _)| i == id).unwrap();
        let plotted: Vec<(u64, &str)> = data
            .as_array()
            .unwrap()
            .iter()
            .map(|s| (s["line"].as_u64().unwrap(), s["field"].as_str().unwrap()))
            .collect();
        for (i, r) in recs.iter().enumerate().filter(|(_, r)| r["record"] == "kv" || r["record"] == "kv_linux") {
            let line = i as u64 + 1;
            for f in ["cores", field] {
                assert!(plotted.contains(&(line, f)), "{id} does not plot field {f} of line {line}: {r}");
            }
        }
        let svg = std::fs::read_to_string(dir.join(format!("{id}.svg"))).unwrap();
        assert!(svg.contains("YCSB workload A") && svg.contains("bkl (measured)"), "{id}");
        assert_eq!(svg.contains("Linux redis-server (measured)"), !linux.is_empty(), "{id}");
    }
    assert!(html.contains("KV macrobenchmark (measured on this machine)"));
    // The page opens with the answer: a verdict of three to five sentences,
    // each naming its lines, in ordinary units; then the frontier figure.
    let verdict = &html[html.find("<ul class=\"verdict\">").expect("a verdict")..];
    let verdict = &verdict[..verdict.find("</ul>").unwrap()];
    let items = verdict.matches("<li>").count();
    assert!((3..=5).contains(&items), "{items} verdict sentences: {verdict}");
    assert_eq!(verdict.matches("(results.jsonl line").count(), items, "{verdict}");
    assert!(!verdict.contains("e6") && !verdict.contains("e+"), "{verdict}");
    assert!(html.find("<ul class=\"verdict\">") < html.find("id=\"fig-frontier\""));
    assert!(html.find("id=\"fig-frontier\"") < html.find("id=\"fig-ipc\""));
    // Every step's command line is recorded for repetition.
    let commands = std::fs::read_to_string(dir.join("commands.txt")).unwrap();
    for step in [
        "granule info",
        "granule locks",
        "granule quaject",
        "granule ipc",
        "granule scale",
        "granule kv",
        "granule model fit",
    ] {
        assert!(commands.contains(step), "{step} missing from commands.txt");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn suite_profiles_exclude_each_other_and_bad_regimes_are_refused() {
    let (ok, _, err) = granule(&["suite", "--quick", "--full"]);
    assert!(!ok && err.contains("cannot be used with"), "{err}");
    let (ok, _, err) = granule(&["suite", "--smoke", "--regimes", "nonsense", "--out", "/tmp/granule-never"]);
    assert!(!ok && err.contains("nonsense"), "{err}");
}
