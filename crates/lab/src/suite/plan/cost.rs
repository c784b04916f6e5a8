//! How long the suite's experiments take: a cost model per measured point,
//! calibrated on the quick suite of a 2-core AMD EPYC VM (its suite record's
//! `step_seconds`, and single points timed with the release build), so that
//! `granule suite --plan` and the progress bar quote honest times.
//!
//! Windows and warm-ups are sleeps, so they cost exactly what the command
//! line says; what the model adds is the work around them — starting the
//! process, booting and stopping a hosted machine, loading the KV store —
//! and the part of that which grows with cores is stated with each constant.
//! Machines larger than the calibration machine are estimated from those
//! growth terms, not measured.

/// Starting one `granule` process: loading, calibrating the cycle counter
/// (five 20 ms windows) and `git describe`.
pub const PROCESS_S: f64 = 0.25;

/// Booting, building the experiment in and shutting down one hosted machine
/// of one core (measured: 6 to 20 ms a point at 1 and 2 cores).
pub const BOOT_S: f64 = 0.02;

/// What each further core adds to a machine's boot and shutdown: one pinned
/// OS thread started, its idle loop parked and woken, joined. Not measured
/// beyond 2 cores; 5 ms is several times what thread start and join cost.
pub const BOOT_PER_CORE_S: f64 = 0.005;

/// KV records one server loads per second (its two clients together): the
/// 2-core quick suite's kv points took 1.24 s each beyond their windows,
/// Linux points included; a 1-core point with 1000 records took 0.05 s. The servers load in parallel,
/// but every kernel entry of a big-lock regime queues on one lock, so the
/// model charges the total over all servers at this rate, capped at
/// [`KV_LOAD_PARALLEL`] servers' worth.
pub const KV_LOAD_PER_S: f64 = 28_000.0;

/// How many servers' loads the model lets overlap. A big lock serialises
/// every kernel entry: an insert is about 18 entries of a few hundred
/// cycles' hold each, which bounds a big-lock machine at roughly ten
/// single-core servers' load rate; the model takes 8.
pub const KV_LOAD_PARALLEL: f64 = 8.0;

/// Starting a KV machine beyond [`BOOT_S`]: the driver, the network stacks
/// and the clients of every server.
pub const KV_SETUP_S: f64 = 0.1;

/// Starting one `redis-server` and connecting to it.
pub const REDIS_START_S: f64 = 0.15;

/// Records one Linux `redis-server` loads per second over loopback TCP.
pub const REDIS_LOAD_PER_S: f64 = 24_000.0;

/// Seconds to boot and shut down a hosted machine of `cores` cores.
pub fn machine_s(cores: usize) -> f64 {
    BOOT_S + BOOT_PER_CORE_S * cores.max(1) as f64
}

/// One point of a windowed experiment (`scale`, `ipc`, `subsystems`): a
/// fresh machine, its warm-up, its window.
pub fn point_s(cores: usize, warmup: f64, window: f64) -> f64 {
    machine_s(cores) + warmup + window
}

/// KV servers on a machine of `cores` cores (core 0 runs the driver; alone,
/// it runs the one server too).
pub fn kv_servers(cores: usize) -> f64 {
    cores.saturating_sub(1).max(1) as f64
}

/// One `kv` point of a kernel regime on `cores` cores: boot, load
/// `records` per server, warm up, measure.
pub fn kv_point_s(cores: usize, records: f64, warmup: f64, window: f64) -> f64 {
    let servers = kv_servers(cores);
    let load = records * servers / (KV_LOAD_PER_S * servers.min(KV_LOAD_PARALLEL));
    machine_s(cores) + KV_SETUP_S + load + warmup + window
}

/// One Linux `redis-server` point on `cores` cores: a server per core
/// (started one after another, loaded in parallel), warm-up, window.
pub fn kv_linux_point_s(cores: usize, records: f64, warmup: f64, window: f64) -> f64 {
    let servers = kv_servers(cores);
    REDIS_START_S * servers + records / REDIS_LOAD_PER_S + warmup + window
}

/// What every `kv` command runs before its points: one short single-core
/// ping-pong per regime for the entry cost (50 ms warm-up, 200 ms window).
pub fn kv_entry_costs_s(regimes: f64) -> f64 {
    regimes * point_s(1, 0.05, 0.2)
}

/// `synthesis`: per run and regime, the uncontended rows (`iterations` of
/// each, about 0.2 ms an iteration in all) and, for the regimes that can
/// run on two cores (all but `none`), six contended points of
/// `contended` seconds after a warm-up of a third of that (at most 0.2 s).
pub fn synthesis_s(regimes: f64, contended_regimes: f64, runs: f64, iterations: f64, contended: f64) -> f64 {
    let per_point = if contended > 0.0 { point_s(2, (contended / 3.0).min(0.2), contended) } else { 0.0 };
    runs * (regimes * (iterations * 2e-4 + machine_s(2)) + contended_regimes * 6.0 * per_point)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_cost_their_windows_plus_a_boot_that_grows_with_cores() {
        assert!((point_s(1, 0.3, 0.5) - 0.825).abs() < 1e-9);
        assert!(machine_s(64) > machine_s(2));
        assert!(kv_point_s(64, 32000.0, 0.25, 0.5) > kv_point_s(2, 32000.0, 0.25, 0.5));
        assert_eq!(kv_servers(1), 1.0);
        assert_eq!(kv_servers(8), 7.0);
    }
}
