//! The report's layout in a real browser, from a real run's records (a
//! 2-core AMD EPYC VM, `tests/fixtures/epyc-2core/results.jsonl`): in
//! Debian's Chromium, headless, 1280 px wide, the page is at most 8,000 px
//! tall, nothing is wider than the window or than its own box (tables,
//! `<pre>`, SVG), no Markdown backtick shows, and every figure has its SVG.
//!
//! Without Chromium the test is skipped with a printed reason, unless `CI`
//! is set (CI installs it): then it fails.

#[allow(dead_code)]
mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{browser, granule};
use serde_json::Value;

/// The tallest the page may be at 1280 px wide.
const MAX_HEIGHT: f64 = 8000.0;

/// How long Chromium may take before the test kills it.
const CHROMIUM_TIMEOUT: Duration = Duration::from_secs(90);

/// Appended to the page: after the load event, writes the layout's
/// measurements as JSON into `<pre id="layout-metrics">`. Elements inside
/// an SVG are measured by their `<svg>`; the probe's own element is not
/// there yet when it measures.
const PROBE: &str = r#"<script>
window.addEventListener('load', function () {
  var vw = document.documentElement.clientWidth;
  var wide = [];
  var all = document.body.querySelectorAll('*');
  for (var i = 0; i < all.length; i++) {
    var e = all[i];
    if (e.tagName === 'SCRIPT' || (e.ownerSVGElement && e.tagName !== 'svg')) continue;
    var r = e.getBoundingClientRect();
    var what = e.tagName + (e.id ? '#' + e.id : '') + ' "' + (e.textContent || '').slice(0, 50) + '"';
    if (r.width > 0 && r.right > vw + 1) wide.push(what + ' ends at ' + r.right + ' px');
    if (e.tagName !== 'svg' && e.clientWidth > 0 && e.scrollWidth > e.clientWidth + 1) {
      wide.push(what + ' scrolls: ' + e.scrollWidth + ' > ' + e.clientWidth);
    }
  }
  var text = document.body.innerText;
  var ticks = [];
  var at = text.indexOf('`');
  while (at >= 0 && ticks.length < 20) {
    ticks.push(text.slice(Math.max(0, at - 40), at + 40));
    at = text.indexOf('`', at + 1);
  }
  var figures = Array.prototype.map.call(document.querySelectorAll('figure'), function (f) {
    var s = f.querySelector('svg');
    var r = s ? s.getBoundingClientRect() : null;
    return { id: f.id, svg: !!s, width: r ? r.width : 0, height: r ? r.height : 0 };
  });
  var pre = document.createElement('pre');
  pre.id = 'layout-metrics';
  pre.textContent = JSON.stringify({
    height: document.documentElement.scrollHeight,
    page_width: document.documentElement.scrollWidth,
    window: vw,
    wide: wide,
    backticks: ticks,
    figures: figures
  });
  document.body.appendChild(pre);
});
</script>
"#;

/// The recorded run the page is drawn from.
fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/epyc-2core/results.jsonl")
}

/// The probe's JSON in the dumped DOM.
fn metrics(dom: &str) -> Option<Value> {
    browser::pre_json(dom, "layout-metrics")
}

#[test]
fn the_page_of_a_real_run_fits_1280_px_without_clipping_or_backticks() {
    let Some(chromium) = browser::chromium_or_skip() else { return };
    let dir = std::env::temp_dir().join(format!("granule-page-layout-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = dir.to_str().expect("a UTF-8 temporary directory");
    let (ok, _, err) = granule(&["report", fixture().to_str().expect("a UTF-8 fixture path"), "--out", out]);
    assert!(ok, "granule report failed: {err}");
    let html = std::fs::read_to_string(dir.join("index.html")).expect("index.html");
    let figures_in_page = html.matches("<figure").count();
    assert!(figures_in_page >= 8, "the real run's page draws its figures ({figures_in_page})");

    let page = dir.join("index-layout-probe.html");
    std::fs::write(&page, format!("{html}{PROBE}")).expect("write the probed copy");
    let profile = dir.join("chromium-profile");
    std::fs::create_dir_all(&profile).expect("profile dir");
    let (ok, dom, log) = browser::dump_dom(
        &chromium,
        &page,
        &profile,
        &["--window-size=1280,900", "--virtual-time-budget=3000"],
        CHROMIUM_TIMEOUT,
    );
    assert!(ok, "chromium failed; its log:\n{log}");
    let m = metrics(&dom).unwrap_or_else(|| panic!("no layout metrics in the DOM; chromium's log:\n{log}"));

    let height = m["height"].as_f64().expect("height");
    assert!(height <= MAX_HEIGHT, "the page is {height} px tall at 1280 px wide (at most {MAX_HEIGHT})");
    let window = m["window"].as_f64().expect("window");
    assert!(m["page_width"].as_f64().expect("page width") <= window + 1.0, "the page is wider than the window");
    let wide = m["wide"].as_array().expect("wide");
    assert!(wide.is_empty(), "clipped or wider than their box: {wide:#?}");
    let ticks = m["backticks"].as_array().expect("backticks");
    assert!(ticks.is_empty(), "backticks shown on the page: {ticks:#?}");
    let figures = m["figures"].as_array().expect("figures");
    assert_eq!(figures.len(), figures_in_page, "every figure is in the DOM");
    for f in figures {
        let ok = f["svg"] == true
            && f["width"].as_f64().is_some_and(|w| w > 0.0)
            && f["height"].as_f64().is_some_and(|h| h > 0.0);
        assert!(ok, "figure {} has no drawn SVG: {f}", f["id"]);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn metrics_are_read_back_from_the_dom() {
    let dom = "<body><pre id=\"layout-metrics\">{\"height\":12,\"backticks\":[\"a &lt;b&gt;\"]}</pre></body>";
    let m = metrics(dom).expect("metrics");
    assert_eq!(m["height"], 12);
    assert_eq!(m["backticks"][0], "a <b>");
    assert!(metrics("<body></body>").is_none());
}
