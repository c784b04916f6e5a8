//! The concurrency regimes the experiments know, by name, and how to build
//! each one (profiled or not) for an experiment generic over the regime.
//!
//! An experiment implements [`Experiment`]; [`with_regime`] builds the named
//! regime and calls it monomorphised, with a probe that reads the regime's
//! lock profile and counts its atomic instructions (profiled builds only).

use anyhow::{bail, Result};
use granule_hosted::granule_kernel::regime::{BigLock, Fine, LockFree, Transactional};
use granule_hosted::granule_kernel::{BootConfig, Kernel, NoLock, Regime, RmwCounts};
use granule_sync::lock::{Clh, Mcs, RawLock, Ticket};
use granule_sync::profile::{NoStats, Profile, SiteRecord};
use granule_sync::rtm::Rtm;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::borrow::Cow;

use crate::output::Record;

/// The regimes the platform boots, in table order: `granule_verify`'s list
/// ([`granule_verify::regimes::REGIMES`]), the one list of regime names.
/// Everything here is derived from it.
pub use granule_verify::regimes::REGIMES as ALL_REGIMES;

/// The regimes of [`ALL_REGIMES`] only `granule verify` runs: `rtm`'s
/// fallback path on its own (the experiments measure `rtm` itself).
pub const VERIFY_ONLY: &[&str] = &["rtm-fallback"];

/// Every regime the experiments run, in table order: [`ALL_REGIMES`] less
/// [`VERIFY_ONLY`]. `all` on a command line means all of them.
pub const REGIMES: &[&str] = &without::<{ ALL_REGIMES.len() - VERIFY_ONLY.len() }>(ALL_REGIMES, VERIFY_ONLY);

/// The regimes of [`REGIMES`] with one big lock: the ones the queueing
/// model describes (`model fit`, `scale --fit`).
pub const BIG_LOCK_REGIMES: &[&str] = &with_prefix::<{ count_prefixed(REGIMES, "bkl") }>(REGIMES, "bkl");

/// One line about each regime of [`ALL_REGIMES`], keyed by name, for the
/// `--regimes` / `--regime` help (a test checks that the two name the same
/// regimes).
pub const HELP: [(&str, &str); 8] = [
    ("none", "no lock at all (sound only while cores touch disjoint objects)"),
    ("bkl", "one big kernel lock, CLH"),
    ("bkl-ticket", "one big kernel lock, ticket"),
    ("bkl-mcs", "one big kernel lock, MCS"),
    ("fine", "a big-reader lock plus a lock per object and per core"),
    ("rtm", "each kernel entry one Intel RTM transaction, the CLH big lock as fallback"),
    ("rtm-fallback", "rtm's fallback path alone: every transaction aborts"),
    ("lockfree", "IPC and notifications on compare-and-swap words, management behind a gate"),
];

/// Whether `name` is one of `names` (usable in constants).
const fn listed(name: &str, names: &[&str]) -> bool {
    let mut i = 0;
    while i < names.len() {
        if granule_verify::regimes::same(name, names[i]) {
            return true;
        }
        i += 1;
    }
    false
}

/// The names of `from` that are not in `drop`, in order; `N` must be their
/// number (checked when the constant is built).
pub const fn without<const N: usize>(from: &[&'static str], drop: &[&str]) -> [&'static str; N] {
    let mut out = [""; N];
    let (mut i, mut n) = (0, 0);
    while i < from.len() {
        if !listed(from[i], drop) {
            assert!(n < N, "more regimes are left than the constant holds");
            out[n] = from[i];
            n += 1;
        }
        i += 1;
    }
    assert!(n == N, "fewer regimes are left than the constant holds");
    out
}

/// How many names of `from` start with `prefix`.
const fn count_prefixed(from: &[&str], prefix: &str) -> usize {
    let (mut i, mut n) = (0, 0);
    while i < from.len() {
        if has_prefix(from[i], prefix) {
            n += 1;
        }
        i += 1;
    }
    n
}

/// Whether `name` starts with `prefix` (usable in constants).
const fn has_prefix(name: &str, prefix: &str) -> bool {
    let (a, p) = (name.as_bytes(), prefix.as_bytes());
    if a.len() < p.len() {
        return false;
    }
    let mut i = 0;
    while i < p.len() {
        if a[i] != p[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The names of `from` that start with `prefix`, in order (`N`: their
/// number, [`count_prefixed`]).
const fn with_prefix<const N: usize>(from: &[&'static str], prefix: &str) -> [&'static str; N] {
    let mut out = [""; N];
    let (mut i, mut n) = (0, 0);
    while i < from.len() {
        if has_prefix(from[i], prefix) {
            out[n] = from[i];
            n += 1;
        }
        i += 1;
    }
    out
}

/// What `name` is, from [`HELP`], for help texts.
fn about(name: &str) -> &'static str {
    HELP.iter().find(|(n, _)| *n == name).map_or("", |(_, a)| a)
}

/// The value parser of a `--regimes` list over `known` (plus `all`): its
/// `--help` lists every regime with its line from [`HELP`]; names in
/// `hidden` are accepted but not listed (the command explains why it cannot
/// run them). Validation and `all` are [`select_from`]'s.
pub fn parser(
    known: &'static [&'static str],
    hidden: &'static [&'static str],
    all: bool,
) -> clap::builder::PossibleValuesParser {
    let values = known
        .iter()
        .map(|&n| clap::builder::PossibleValue::new(n).help(about(n)).hide(hidden.contains(&n)))
        .chain(all.then(|| clap::builder::PossibleValue::new("all").help("every regime above")));
    clap::builder::PossibleValuesParser::new(values)
}

/// A regime's place in [`REGIMES`] (tables and figures order regimes by
/// it); unknown names come last. Colours come from [`colour`].
pub fn rank(name: &str) -> usize {
    REGIMES.iter().position(|r| *r == name).unwrap_or(REGIMES.len())
}

/// The first palette index of the regimes' colours: index
/// `REGIME_COLOURS + k` is regime `k` of [`COLOURS`]
/// (past its end: the colour of an unknown regime). Smaller indices are
/// the other palette's (`crate::plot`).
pub const REGIME_COLOURS: usize = 1 << 20;

/// The fixed colour of every regime in every figure, by name: the
/// regimes of [`ALL_REGIMES`] and `rtm-fallback` (`granule verify`'s) and
/// `linux` (real Redis on Linux in the KV figures). The big locks share a
/// warm family, the rtm pair a purple one.
pub const COLOURS: [(&str, &str); 9] = [
    ("none", "#7f7f7f"),
    ("bkl", "#d62728"),
    ("bkl-ticket", "#ff7f0e"),
    ("bkl-mcs", "#8c564b"),
    ("fine", "#2ca02c"),
    ("rtm", "#9467bd"),
    ("rtm-fallback", "#e377c2"),
    ("lockfree", "#1f77b4"),
    ("linux", "#17becf"),
];

/// The colour of a regime missing from [`COLOURS`].
const UNKNOWN_COLOUR: &str = "#c7c7c7";

/// The palette index of regime `name`'s colour (for
/// [`crate::plot::Series::colour`] and the report's bars): the same in
/// every figure, and never the colour of a series that is not a regime.
pub fn colour(name: &str) -> usize {
    REGIME_COLOURS + COLOURS.iter().position(|(n, _)| *n == name).unwrap_or(COLOURS.len())
}

/// The colour of entry `k` of [`COLOURS`] (past its end: an unknown
/// regime's).
pub fn hex(k: usize) -> &'static str {
    COLOURS.get(k).map_or(UNKNOWN_COLOUR, |(_, c)| c)
}

/// The regimes named by a comma-separated command-line list (`all` = every
/// regime), validated and deduplicated, in the order given.
pub fn selected(list: &[String]) -> Result<Vec<&'static str>> {
    select_from(REGIMES, list)
}

/// `list` (names, or `all` for every one of `known`) validated against
/// `known` and deduplicated, in the order given. Every command that takes
/// `--regimes` selects through this, whatever its own list of regimes.
pub fn select_from(known: &[&'static str], list: &[String]) -> Result<Vec<&'static str>> {
    let mut out = Vec::new();
    for r in list {
        let r = r.trim();
        let names: Vec<&'static str> = if r == "all" {
            known.to_vec()
        } else {
            match known.iter().find(|k| **k == r) {
                Some(k) => vec![*k],
                None => bail!("unknown regime `{r}`; known regimes: {} (or all)", known.join(", ")),
            }
        };
        for k in names {
            if !out.contains(&k) {
                out.push(k);
            }
        }
    }
    if out.is_empty() {
        bail!("no regime selected; known regimes: {} (or all)", known.join(", "));
    }
    Ok(out)
}

/// The regimes of `list` this machine can run; each of the others becomes a
/// `regime_skipped` record (with the reason) in `records`.
pub fn runnable(list: &[&'static str], records: &mut Vec<Map<String, Value>>) -> Vec<&'static str> {
    let mut out = Vec::new();
    for &r in list {
        match unavailable(r) {
            None => out.push(r),
            Some(reason) => records.push(RegimeSkipped { regime: Cow::Borrowed(r), reason }.to_map()),
        }
    }
    out
}

/// `regime_skipped`: a regime the command was asked for but did not run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RegimeSkipped {
    /// The regime.
    pub regime: Cow<'static, str>,
    /// Why: what this machine lacks, or why the experiment cannot run it.
    pub reason: String,
}

impl Record for RegimeSkipped {
    const KIND: &'static str = "regime_skipped";
}

/// Why regime `name` cannot run on this machine, or `None` if it can.
pub fn unavailable(name: &str) -> Option<String> {
    match name {
        "rtm" => Rtm::new().err().map(|e| format!("rtm needs Intel RTM: {e}")),
        _ => None,
    }
}

/// Atomic instructions a regime executed, counted from its profile (or,
/// for `lockfree`, by its counting build).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Atomics {
    /// Read-modify-writes by instruction: `xchg` (CLH and MCS acquire),
    /// `lock xadd` (ticket acquire), `lock cmpxchg` (MCS release, ticket
    /// try-acquire, lock-free words), `lock cmpxchg16b` (lock-free
    /// notification words).
    pub rmw: RmwCounts,
    /// Hardware transactions started (`xbegin` … `xend` or abort).
    pub transactions: u64,
    /// How the numbers were obtained: [`Source::Counted`] as the regime
    /// executed them, or [`Source::Derived`] from its lock profile's
    /// acquisitions and each lock algorithm's instructions per acquisition.
    pub source: Source,
}

/// Whether atomic-instruction figures were counted or derived.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Source {
    /// Every instruction counted as executed (`lockfree`'s counting build;
    /// `none` has none).
    #[default]
    Counted,
    /// Acquisitions counted by the lock profiler, times the instructions the
    /// lock algorithm executes per acquisition when uncontended (`bkl`,
    /// `fine`; `rtm`'s fallback acquisitions). Contended acquisitions
    /// execute more (failed tries, MCS release CAS), which this leaves out.
    Derived,
}

impl Source {
    /// As written in records.
    pub fn name(self) -> &'static str {
        match self {
            Source::Counted => "counted",
            Source::Derived => "derived",
        }
    }
}

impl From<RmwCounts> for Atomics {
    fn from(rmw: RmwCounts) -> Self {
        Atomics { rmw, transactions: 0, source: Source::Counted }
    }
}

impl Atomics {
    /// `self - earlier`, per instruction.
    pub fn since(&self, earlier: &Atomics) -> Atomics {
        Atomics {
            rmw: self.rmw.since(&earlier.rmw),
            transactions: self.transactions.saturating_sub(earlier.transactions),
            source: self.source,
        }
    }

    /// All of them.
    pub fn total(&self) -> u64 {
        self.rmw.total() + self.transactions
    }
}

/// What a profiled regime reports.
#[derive(Clone, Debug, Default)]
pub struct Probe {
    /// Every lock's acquisition sites.
    pub sites: Vec<SiteRecord>,
    /// Atomic instructions so far.
    pub atomics: Atomics,
}

/// An experiment generic over the regime.
pub trait Experiment {
    /// What it returns.
    type Out;
    /// Whether the experiment keeps `none`'s promise: cores touch disjoint
    /// objects (see `NoLock::new`). Experiments that do not must not run it.
    const DISJOINT: bool;
    /// Run with `regime`; `probe` reads its profile (`None` unprofiled).
    fn run<R: Regime>(self, regime: R, probe: &dyn Fn(&Kernel<R>) -> Option<Probe>) -> Result<Self::Out>;
}

fn acquisitions(sites: &[SiteRecord]) -> u64 {
    sites.iter().map(|s| s.acquisitions).sum()
}

/// Build regime `name` for a kernel booted with `boot` (profiled if
/// `profile`) and run `e` with it.
pub fn with_regime<E: Experiment>(name: &str, boot: &BootConfig, profile: bool, e: E) -> Result<E::Out> {
    fn bkl<L: RawLock + 'static, E: Experiment>(cores: usize, profile: bool, e: E) -> Result<E::Out> {
        // Per acquisition: CLH one xchg; ticket one lock xadd; MCS one xchg,
        // plus one lock cmpxchg to release when nobody queued.
        let per = |n: u64| match L::NAME {
            "ticket" => RmwCounts { xadd: n, ..RmwCounts::default() },
            "mcs" => RmwCounts { xchg: n, cmpxchg: n, ..RmwCounts::default() },
            _ => RmwCounts { xchg: n, ..RmwCounts::default() },
        };
        if profile {
            e.run(BigLock::<L, Profile>::new(cores), &|k| {
                let sites = k.regime().stats().snapshot();
                let atomics = Atomics { source: Source::Derived, ..per(acquisitions(&sites)).into() };
                Some(Probe { atomics, sites })
            })
        } else {
            e.run(BigLock::<L, NoStats>::new(cores), &|_| None)
        }
    }
    if let Some(why) = unavailable(name) {
        bail!("regime {name} is unavailable on this machine: {why}");
    }
    let cores = boot.cores;
    match name {
        "none" => {
            if !E::DISJOINT {
                bail!("regime none is only sound when cores touch disjoint objects; this experiment does not");
            }
            // SAFETY: the experiment declared (`E::DISJOINT`) that it keeps
            // `NoLock`'s promise: cores only ever touch disjoint objects
            // (set up while the other cores are held out of the kernel).
            let none = unsafe { NoLock::new() };
            e.run(none, &|_| None)
        }
        "bkl" => bkl::<Clh, E>(cores, profile, e),
        "bkl-ticket" => bkl::<Ticket, E>(cores, profile, e),
        "bkl-mcs" => bkl::<Mcs, E>(cores, profile, e),
        "fine" => {
            if profile {
                e.run(Fine::<Profile>::new(boot), &|k| {
                    let f = k.regime();
                    let mut sites = f.write_stats().snapshot();
                    for s in f.class_stats() {
                        sites.extend(s.snapshot());
                    }
                    let c = f.counts();
                    // Every lock a shared entry takes (its read side, its
                    // core's reader lock, included) is waited for (lock xadd)
                    // or tried (lock cmpxchg); the write side is one lock
                    // xadd per core.
                    let xadd = c.exclusive * cores as u64 + c.waited;
                    let rmw = RmwCounts { xadd, cmpxchg: c.tried, ..RmwCounts::default() };
                    Some(Probe { sites, atomics: Atomics { rmw, transactions: 0, source: Source::Derived } })
                })
            } else {
                e.run(Fine::<NoStats>::new(boot), &|_| None)
            }
        }
        "rtm" => {
            if profile {
                let t = Transactional::<Rtm, Profile>::new(cores).map_err(|e| anyhow::anyhow!("{e}"))?;
                e.run(t, &|k| {
                    let sites = k.regime().stats().snapshot();
                    let transactions = sites.iter().map(|s| s.commits + s.aborts()).sum();
                    let fallbacks: u64 = sites.iter().map(|s| s.fallbacks).sum();
                    let rmw = RmwCounts { xchg: fallbacks, ..RmwCounts::default() };
                    Some(Probe { sites, atomics: Atomics { rmw, transactions, source: Source::Derived } })
                })
            } else {
                let t = Transactional::<Rtm, NoStats>::new(cores).map_err(|e| anyhow::anyhow!("{e}"))?;
                e.run(t, &|_| None)
            }
        }
        // `lockfree` has no locks to profile; its counting build counts
        // every read-modify-write its paths execute.
        "lockfree" => {
            if profile {
                e.run(LockFree::counting(cores), &|k| {
                    Some(Probe { sites: Vec::new(), atomics: k.regime().rmw_counts().into() })
                })
            } else {
                e.run(LockFree::new(cores), &|_| None)
            }
        }
        other => bail!("unknown regime `{other}`; known regimes: {}", REGIMES.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_regime_has_its_own_colour() {
        let mut seen: Vec<&str> = Vec::new();
        for r in REGIMES.iter().chain(&["rtm-fallback", "linux"]) {
            let c = crate::plot::colour(colour(r));
            assert!(!seen.contains(&c), "{r} shares colour {c}");
            assert_ne!(c, UNKNOWN_COLOUR, "{r} has no colour of its own");
            seen.push(c);
        }
        assert_eq!(colour("bkl"), colour("bkl"));
        assert_eq!(crate::plot::colour(colour("no-such-regime")), UNKNOWN_COLOUR);
    }

    #[test]
    fn the_help_lines_cover_exactly_the_registry() {
        let mut helped: Vec<&str> = HELP.iter().map(|(n, _)| *n).collect();
        let mut registered: Vec<&str> = ALL_REGIMES.to_vec();
        helped.sort_unstable();
        registered.sort_unstable();
        assert_eq!(helped, registered);
        assert!(HELP.iter().all(|(_, about)| !about.is_empty()));
    }

    #[test]
    fn the_derived_lists_are_filters_of_the_registry_in_its_order() {
        assert_eq!(REGIMES, ["none", "bkl", "bkl-ticket", "bkl-mcs", "fine", "rtm", "lockfree"]);
        assert_eq!(BIG_LOCK_REGIMES, ["bkl", "bkl-ticket", "bkl-mcs"]);
        for list in [REGIMES, BIG_LOCK_REGIMES] {
            let positions: Vec<usize> =
                list.iter().map(|r| ALL_REGIMES.iter().position(|a| a == r).unwrap_or(usize::MAX)).collect();
            assert!(positions.windows(2).all(|w| w[0] < w[1]), "{list:?}");
        }
        for r in VERIFY_ONLY {
            assert!(ALL_REGIMES.contains(r) && !REGIMES.contains(r), "{r}");
        }
    }
}
