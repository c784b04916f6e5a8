//! Headless Chromium for the report's browser tests: find it (or skip the
//! test, unless `CI` is set), run it on a page and read back the DOM, and
//! take a probe's JSON out of that DOM.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// Chromium: `/usr/bin/chromium`, or `chromium` on `PATH`.
fn find() -> Option<PathBuf> {
    let debian = PathBuf::from("/usr/bin/chromium");
    if debian.is_file() {
        return Some(debian);
    }
    std::env::split_paths(&std::env::var_os("PATH")?).map(|d| d.join("chromium")).find(|p| p.is_file())
}

/// Chromium, or `None` after printing why the test is skipped; without it
/// and with `CI` set, the test fails (CI installs it).
pub fn chromium_or_skip() -> Option<PathBuf> {
    let found = find();
    if found.is_none() {
        if std::env::var_os("CI").is_some() {
            panic!(
                "chromium is not installed (neither /usr/bin/chromium nor chromium on PATH), and CI is set: \
                 .ci/run installs Debian's chromium package for this test"
            );
        }
        println!("skipped: chromium is not installed (/usr/bin/chromium or chromium on PATH)");
    }
    found
}

/// Run Chromium headless on `page` with a fresh profile in `profile` and
/// the options `extra` (window size, time budget, logging), killing it
/// after `timeout`: (exit success, DOM after load, log).
pub fn dump_dom(
    chromium: &Path,
    page: &Path,
    profile: &Path,
    extra: &[&str],
    timeout: Duration,
) -> (bool, String, String) {
    let profile_arg = format!("--user-data-dir={}", profile.display());
    let page_arg = format!("file://{}", page.display());
    let mut args = vec![
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        profile_arg.as_str(),
    ];
    args.extend_from_slice(extra);
    args.extend(["--dump-dom", page_arg.as_str()]);
    let mut child = Command::new(chromium)
        .args(&args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start chromium");
    // Read both pipes while waiting, so a full pipe cannot stall Chromium.
    let read = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = r.read_to_end(&mut buf);
            String::from_utf8_lossy(&buf).into_owned()
        })
    };
    let out = read(Box::new(child.stdout.take().expect("stdout")));
    let err = read(Box::new(child.stderr.take().expect("stderr")));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for chromium") {
            break Some(status);
        }
        if started.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let (out, err) = (out.join().expect("stdout reader"), err.join().expect("stderr reader"));
    let Some(status) = status else {
        panic!("chromium did not finish within {timeout:?}; its log:\n{err}");
    };
    (status.success(), out, err)
}

/// Undo the HTML escaping of text content.
fn unescape(s: &str) -> String {
    s.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", "\"").replace("&#39;", "'").replace("&amp;", "&")
}

/// The JSON a probe script wrote into `<pre id="{id}">` of the dumped DOM.
pub fn pre_json(dom: &str, id: &str) -> Option<Value> {
    let open = format!("<pre id=\"{id}\">");
    let start = dom.find(&open)? + open.len();
    let end = start + dom[start..].find("</pre>")?;
    serde_json::from_str(&unescape(&dom[start..end])).ok()
}
