//! A page written whole or not at all: drawn into a fresh staging directory
//! inside the destination, then moved into place file by file (figures
//! first, `index.html` last). When drawing fails, the staging directory is
//! removed and the destination is as it was (a destination created for the
//! page is removed again).

use std::path::Path;

use anyhow::{Context, Result};

/// Run `draw` on a staging directory inside `out` and, if it succeeds, move
/// what it wrote into `out` (replacing files of the same name). On failure
/// nothing in `out` has changed.
pub fn write_whole<T>(out: &Path, draw: impl FnOnce(&Path) -> Result<T>) -> Result<T> {
    let created = !out.exists();
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let staged = match tempfile::Builder::new().prefix(".granule-report-").tempdir_in(out) {
        Ok(d) => d,
        Err(e) => {
            forget(out, created);
            return Err(e).with_context(|| format!("cannot write in {}", out.display()));
        }
    };
    let drawn = draw(staged.path()).and_then(|v| publish(staged.path(), out).map(|()| v));
    // Dropping the staging directory removes whatever is left in it.
    drop(staged);
    if drawn.is_err() {
        forget(out, created);
    }
    drawn
}

/// Remove `out` again if it was created for a page that was never written
/// (only when empty: `remove_dir` refuses anything else).
fn forget(out: &Path, created: bool) {
    if created {
        let _ = std::fs::remove_dir(out);
    }
}

/// Move every file of `staged` into `out`, `index.html` last.
fn publish(staged: &Path, out: &Path) -> Result<()> {
    let mut names: Vec<_> = std::fs::read_dir(staged)
        .with_context(|| format!("reading {}", staged.display()))?
        .map(|e| e.map(|e| e.file_name()))
        .collect::<std::io::Result<_>>()
        .with_context(|| format!("reading {}", staged.display()))?;
    names.sort_by_key(|n| (n == "index.html", n.clone()));
    for n in names {
        let to = out.join(&n);
        std::fs::rename(staged.join(&n), &to).with_context(|| format!("writing {}", to.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("granule-staging-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn a_failed_page_leaves_the_destination_as_it_was() {
        let out = temp("fail");
        std::fs::create_dir_all(&out).unwrap();
        std::fs::write(out.join("index.html"), "the suite's page").unwrap();
        let r = write_whole::<()>(&out, |d| {
            std::fs::write(d.join("index.html"), "")?;
            std::fs::write(d.join("a.svg"), "<svg/>")?;
            anyhow::bail!("nothing to draw")
        });
        assert!(r.is_err());
        assert_eq!(std::fs::read_to_string(out.join("index.html")).unwrap(), "the suite's page");
        let left: Vec<_> = std::fs::read_dir(&out).unwrap().flatten().map(|e| e.file_name()).collect();
        assert_eq!(left, vec![std::ffi::OsString::from("index.html")]);
        // A destination made for the page goes again.
        let fresh = temp("fresh").join("deeper");
        assert!(write_whole::<()>(&fresh, |_| anyhow::bail!("no")).is_err());
        assert!(!fresh.exists());
        temp("fresh");
        let _ = std::fs::remove_dir_all(out);
    }

    #[test]
    fn a_whole_page_replaces_the_old_one() {
        let out = temp("ok");
        std::fs::create_dir_all(&out).unwrap();
        std::fs::write(out.join("index.html"), "old").unwrap();
        std::fs::write(out.join("keep.txt"), "kept").unwrap();
        let n = write_whole(&out, |d| {
            std::fs::write(d.join("index.html"), "new")?;
            std::fs::write(d.join("a.svg"), "<svg/>")?;
            Ok(1)
        })
        .unwrap();
        assert_eq!(n, 1);
        assert_eq!(std::fs::read_to_string(out.join("index.html")).unwrap(), "new");
        assert_eq!(std::fs::read_to_string(out.join("a.svg")).unwrap(), "<svg/>");
        assert_eq!(std::fs::read_to_string(out.join("keep.txt")).unwrap(), "kept");
        assert_eq!(std::fs::read_dir(&out).unwrap().count(), 3, "no staging directory left");
        let _ = std::fs::remove_dir_all(out);
    }
}
