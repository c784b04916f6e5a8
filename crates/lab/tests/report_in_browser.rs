//! The smoke report in a real browser: Debian's Chromium, headless, loads a
//! copy of `index.html` with a probe script added (the report itself has no
//! scripts), and the test checks that every figure and its SVG is laid out
//! with a size and that nothing on the page raised an error: no script
//! error, no resource that failed to load, no `console.error`.
//!
//! Without Chromium the test is skipped, unless `CI` is set (CI installs
//! it): then it fails.

#[allow(dead_code)]
mod common;

use std::time::Duration;

use common::{browser, granule};
use serde_json::Value;

/// How long Chromium may take before the test kills it.
const CHROMIUM_TIMEOUT: Duration = Duration::from_secs(60);

/// The id of the `<pre>` the probe writes its JSON into.
const PROBE_ID: &str = "granule-browser-probe";

/// Runs before anything else on the page: it records script errors,
/// resources that failed to load and `console.error` calls, and after the
/// load event writes every figure's size and its SVG's, with the errors,
/// as JSON into a `<pre>`.
const PROBE: &str = r#"<script>
(function () {
  var errors = [];
  window.addEventListener('error', function (e) {
    var t = e.target;
    if (t && t !== window && (t.src || t.href)) {
      errors.push('resource failed to load: ' + (t.src || t.href));
    } else {
      errors.push('script error: ' + (e.message || String(e)));
    }
  }, true);
  window.addEventListener('unhandledrejection', function (e) {
    errors.push('unhandled rejection: ' + String(e.reason));
  });
  var original = console.error;
  console.error = function () {
    errors.push('console.error: ' + Array.prototype.map.call(arguments, String).join(' '));
    return original.apply(console, arguments);
  };
  window.addEventListener('load', function () {
    var figures = Array.prototype.map.call(document.querySelectorAll('figure'), function (f) {
      var r = f.getBoundingClientRect();
      var svg = f.querySelector('svg');
      var s = svg ? svg.getBoundingClientRect() : null;
      return {
        id: f.id,
        width: r.width,
        height: r.height,
        svg: s ? { width: s.width, height: s.height } : null
      };
    });
    var pre = document.createElement('pre');
    pre.id = 'PROBE_ID';
    // Whether the page fits the window's width (wide tables scroll inside
    // themselves): the probe's own element is not there yet.
    var fits = document.documentElement.scrollWidth <= window.innerWidth;
    // What reaches past the window's right edge, for the failure message.
    var overflowing = Array.prototype.filter.call(document.querySelectorAll('body *'), function (e) {
      return e.getBoundingClientRect().right > window.innerWidth;
    }).slice(0, 8).map(function (e) {
      return e.tagName + ': ' + (e.textContent || '').slice(0, 60);
    });
    pre.textContent = JSON.stringify({ figures: figures, errors: errors, fits_width: fits, width: window.innerWidth, overflowing: overflowing });
    document.body.appendChild(pre);
  });
})();
</script>
"#;

/// `html` with the probe inserted at the top of `<head>` (so it sees every
/// error), just after the charset declaration (which must stay within the
/// first kilobyte), or at the very start when there is no `<head>`.
fn with_probe(html: &str) -> String {
    let probe = PROBE.replace("PROBE_ID", PROBE_ID);
    let at = ["<meta charset=\"utf-8\">", "<head>"].iter().find_map(|tag| Some(html.find(tag)? + tag.len()));
    match at {
        Some(i) => format!("{}{probe}{}", &html[..i], &html[i..]),
        None => format!("{probe}{html}"),
    }
}

/// The probe's JSON in the dumped DOM.
fn probe_result(dom: &str) -> Option<Value> {
    browser::pre_json(dom, PROBE_ID)
}

/// Lines of Chromium's log that report an error from the page's console
/// (its own start-up noise — D-Bus, GPU — never says `CONSOLE`).
fn console_errors(stderr: &str) -> Vec<&str> {
    stderr.lines().filter(|l| l.contains("CONSOLE") && l.to_lowercase().contains("error")).collect()
}

#[test]
fn the_smoke_report_renders_in_chromium_without_errors() {
    let Some(chromium) = browser::chromium_or_skip() else { return };
    let dir = std::env::temp_dir().join(format!("granule-browser-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (ok, _, err) = granule(&["suite", "--smoke", "--out", dir.to_str().unwrap()]);
    assert!(ok, "granule suite failed: {err}");
    let html = std::fs::read_to_string(dir.join("index.html")).expect("index.html");
    assert!(!html.contains("<script>") && !html.contains("<script src"), "the report itself runs no scripts");
    let figures_in_page = html.matches("<figure").count();

    // The copy sits beside the original, so its relative links resolve the same.
    let page = dir.join("index-browser-probe.html");
    std::fs::write(&page, with_probe(&html)).expect("write the probed copy");
    let profile = dir.join("chromium-profile");
    std::fs::create_dir_all(&profile).expect("profile dir");
    let (ok, dom, log) = browser::dump_dom(
        &chromium,
        &page,
        &profile,
        &[
            "--disable-quic",
            "--window-size=1000,2000",
            "--virtual-time-budget=5000",
            "--enable-logging=stderr",
            "--v=0",
        ],
        CHROMIUM_TIMEOUT,
    );
    assert!(ok, "chromium failed; its log:\n{log}");

    let errors = console_errors(&log);
    assert!(errors.is_empty(), "the page logged errors:\n{}", errors.join("\n"));
    let probe = probe_result(&dom).unwrap_or_else(|| panic!("no probe output in the DOM; chromium's log:\n{log}"));
    let page_errors = probe["errors"].as_array().expect("errors");
    assert!(page_errors.is_empty(), "errors on the page: {page_errors:?}");
    let figures = probe["figures"].as_array().expect("figures");
    assert!(!figures.is_empty(), "no figure on the page");
    assert_eq!(
        probe["fits_width"], true,
        "the page is wider than the {} px window; past its edge: {}",
        probe["width"], probe["overflowing"]
    );
    assert_eq!(figures.len(), figures_in_page, "every figure of the report is in the DOM");
    for f in figures {
        let id = &f["id"];
        let positive = |v: &Value| v.as_f64().is_some_and(|x| x > 0.0);
        assert!(positive(&f["width"]) && positive(&f["height"]), "figure {id} has no size: {f}");
        let svg = &f["svg"];
        assert!(svg.is_object(), "figure {id} has no svg");
        assert!(positive(&svg["width"]) && positive(&svg["height"]), "the svg of figure {id} has no size: {f}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn console_errors_are_told_from_chromium_noise() {
    let log = "[1:2:1126/154903.020261:ERROR:dbus/bus.cc:405] Failed to connect to the bus\n\
               [1:1:1126/154903.710671:INFO:CONSOLE:1] \"hello\", source: file:///x.html (1)\n\
               [1:1:1126/154903.724189:INFO:CONSOLE:1] \"Uncaught ReferenceError: f is not defined\", source: x (1)\n";
    assert_eq!(console_errors(log).len(), 1);
    let probed = with_probe("<html><head><title>t</title></head><body></body></html>");
    assert!(probed.starts_with("<html><head><script>"));
    let probed = with_probe("<html><head>\n<meta charset=\"utf-8\">\n<title>t</title></head></html>");
    assert!(probed.starts_with("<html><head>\n<meta charset=\"utf-8\"><script>"));
    let dom = format!("<pre id=\"{PROBE_ID}\">{{\"errors\":[\"a &lt;b&gt; &amp; c\"],\"figures\":[]}}</pre>");
    assert_eq!(probe_result(&dom).unwrap()["errors"][0], "a <b> & c");
}
