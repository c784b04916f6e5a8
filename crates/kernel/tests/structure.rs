//! The kernel's structural rules, checked on its source (`docs/kernel.md`,
//! "Shape"; `docs/lockfree-kernel.md`, "A regime like the others"):
//!
//! * no two files of `src/` import each other in a circle (file-level graph
//!   of the top-level `use crate::…` and `use super::…` lines, and of every
//!   path `crate::…` written out in code; re-exports, `pub use`, are a
//!   folder's face, not an import);
//! * outside `src/lockfree/`, no file names the lock-free regime's types or
//!   functions in code (doc comments and comments may point to them), except
//!   `regime/mod.rs` and `lib.rs`, which re-export its public types as every
//!   regime's are;
//! * the executor of a decoded call, `fn execute`, is defined once.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`.
fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("read src") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module path of a source file (`object/tcb.rs` → `["object", "tcb"]`,
/// `lockfree/mod.rs` → `["lockfree"]`, `lib.rs` → `[]`).
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).expect("under src").with_extension("");
    let mut m: Vec<String> = rel.iter().map(|s| s.to_string_lossy().into_owned()).collect();
    if matches!(m.last().map(String::as_str), Some("mod" | "lib")) {
        m.pop();
    }
    m
}

/// The code of a file without comments (line comments and doc comments).
fn code(text: &str) -> String {
    text.lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n")
}

struct Source {
    src: PathBuf,
    files: BTreeMap<Vec<String>, (PathBuf, String)>,
}

fn source() -> Source {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut all = Vec::new();
    files(&src, &mut all);
    let files = all
        .into_iter()
        .map(|f| (module_of(&src, &f), (f.clone(), fs::read_to_string(&f).expect("read source"))))
        .collect();
    Source { src, files }
}

/// The deepest module that is a file on the path `base`, then the module
/// segments of `segs` (up to the first item name).
fn file_module<'a>(s: &Source, mut base: Vec<String>, segs: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    for seg in segs {
        if seg.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_') && !seg.is_empty() {
            base.push(seg.to_string());
        } else {
            break;
        }
    }
    while !base.is_empty() && !s.files.contains_key(&base) {
        base.pop();
    }
    base
}

/// The file-level import graph: module → modules it imports from.
fn imports(s: &Source) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let mut graph = BTreeMap::new();
    for (module, (_, text)) in &s.files {
        // `super` of `a/b.rs` and of `a/b/mod.rs` (module `a::b`) is `a`.
        let parent: Vec<String> = module[..module.len().saturating_sub(1)].to_vec();
        let mut to = BTreeSet::new();
        // Top-level `use` lines only: those of nested test modules speak of
        // their own `super`.
        for line in text.lines().filter(|l| l.starts_with("use ")) {
            let path = line.trim_start_matches("use ").trim_end_matches(';');
            let mut segs: Vec<&str> = path.split("::").collect();
            let base = match segs.first() {
                Some(&"crate") => {
                    segs.remove(0);
                    Vec::new()
                }
                Some(&"super") => {
                    let mut base = parent.clone();
                    while segs.first() == Some(&"super") {
                        segs.remove(0);
                        if segs.first() == Some(&"super") {
                            base.pop();
                        }
                    }
                    base
                }
                _ => continue,
            };
            to.insert(file_module(s, base, segs));
        }
        // Paths written out in code (a `crate::a::B` in a bound or a call
        // imports `a` as much as a `use` line does), outside re-exports.
        for line in code(text).lines().filter(|l| !l.trim_start().starts_with("pub use ")) {
            for (at, _) in line.match_indices("crate::") {
                // Not the tail of another name (`granule_sync::`'s crate is
                // another crate's).
                if line[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
                    continue;
                }
                let path = line[at + "crate::".len()..].split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'));
                let segs = path.into_iter().next().unwrap_or("").split("::");
                to.insert(file_module(s, Vec::new(), segs));
            }
        }
        to.retain(|t| !t.is_empty() && t != module);
        graph.insert(module.clone(), to);
    }
    graph
}

#[test]
fn no_two_kernel_files_import_each_other_in_a_circle() {
    let s = source();
    let graph = imports(&s);
    // Each module's reach; a module reached from one it reaches closes a circle.
    let reach = |from: &Vec<String>| {
        let mut seen = BTreeSet::new();
        let mut todo: Vec<&Vec<String>> = graph[from].iter().collect();
        while let Some(m) = todo.pop() {
            if seen.insert(m.clone()) {
                todo.extend(graph.get(m).into_iter().flatten());
            }
        }
        seen
    };
    let circles: Vec<String> = graph
        .keys()
        .filter(|m| reach(m).contains(*m))
        .map(|m| format!("{}", s.files[m].0.strip_prefix(&s.src).unwrap().display()))
        .collect();
    assert!(graph.len() > 50, "the walk found only {} files", graph.len());
    assert!(circles.is_empty(), "files on an import circle: {circles:?}");
}

#[test]
fn only_the_lockfree_folder_names_the_lockfree_regime() {
    let s = source();
    let names = ["lockfree::", "LfState", "LfCore", "CoreLists", "SharedOp", "Words::<", "fn lf_", ".lf_", ".lf()"];
    let mut found = Vec::new();
    for (module, (path, text)) in &s.files {
        let face = module.is_empty() || module == &["regime".to_string()];
        if module.first().map(String::as_str) == Some("lockfree") || face {
            continue;
        }
        let code = code(text);
        for name in names {
            // The lock-free objects of granule-sync are the general kernel's
            // data structures under every regime (mappings, frame pools,
            // the capability slots' sequence lock), not the regime's.
            let hits = code.matches(name).count() - code.matches(&format!("granule_sync::{name}")).count();
            if hits > 0 {
                found.push(format!("{}: {name}", path.strip_prefix(&s.src).unwrap().display()));
            }
        }
    }
    assert!(found.is_empty(), "the general kernel names the lockfree regime: {found:?}");
}

#[test]
fn the_executor_is_defined_once() {
    let s = source();
    let defs: Vec<_> = s
        .files
        .values()
        .flat_map(|(path, text)| {
            let code = code(text);
            let n = code.matches("fn execute<").count() + code.matches("fn execute(").count();
            std::iter::repeat_n(path.strip_prefix(&s.src).unwrap().display().to_string(), n)
        })
        .collect();
    assert_eq!(defs, ["rendezvous.rs"], "fn execute is defined in {defs:?}");
}
