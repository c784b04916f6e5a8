use super::*;
use crate::topology::Place;

fn steps(p: Profile, cpus: usize, regimes: &str) -> Vec<Step> {
    Plan::new(p, &Topology::synthetic(cpus), regimes, true).steps
}

fn lines(steps: &[Step], name: &str) -> Vec<String> {
    steps.iter().filter(|s| s.name == name).map(Step::command_line).collect()
}

#[test]
fn every_profile_runs_the_same_experiments() {
    for p in [Profile::Quick, Profile::Full, Profile::Smoke] {
        let names: Vec<String> = steps(p, 2, "all").into_iter().map(|s| s.name).collect();
        assert_eq!(
            names,
            ["info", "locks", "quaject", "synthesis", "ipc", "ipc_profile", "scale", "kv", "subsystems"],
            "{p:?}"
        );
    }
}

#[test]
fn two_cores_quick_measures_both_counts_at_every_delay_for_every_regime() {
    let s = steps(Profile::Quick, 2, "all");
    assert_eq!(
        lines(&s, "scale"),
        ["granule scale --regimes all --cores 1..2 --delays 0,1000,4000,16000 --warmup 0.2 --seconds 0.4 --hold-times"]
    );
    let kv = lines(&s, "kv");
    assert_eq!(kv.len(), 1, "{kv:?}");
    assert!(kv[0].starts_with("granule kv --regimes all --cores 1..2 --workload a,c"), "{kv:?}");
}

#[test]
fn full_follows_the_seeds_protocol() {
    let s = steps(Profile::Full, 4, "all");
    let scale = lines(&s, "scale");
    assert_eq!(scale.len(), 1);
    assert!(scale[0].contains("--cores 1..4"), "{scale:?}");
    assert!(scale[0].contains("--delays 0,500,1000,2000,4000,8000,16000,32000"), "{scale:?}");
    assert!(scale[0].contains("--warmup 2 --seconds 1"), "{scale:?}");
    let ipc = lines(&s, "ipc").remove(0);
    assert!(ipc.contains("--runs 16 --seconds 1"), "{ipc}");
    let kv = lines(&s, "kv");
    assert!(kv[0].contains("--regimes all --cores 1..2 --workload a,c --records 32000"), "{kv:?}");
    assert!(kv[0].contains("--seconds 5") && kv[0].contains("--runs 3") && kv[0].ends_with("--linux"), "{kv:?}");
    assert!(kv[1].contains("--regimes bkl,fine,lockfree --cores 4 "), "{kv:?}");
    // Beyond 4 cores: three delays, 1 s warm-up.
    let big = lines(&steps(Profile::Full, 64, "all"), "scale");
    assert_eq!(big.len(), 2);
    assert!(big[0].contains("--cores 1..4 --delays 0,500,1000,2000,4000,8000,16000,32000 --warmup 2 --seconds 1"));
    assert!(big[1].contains("--cores 6,8,12,16,24,32,48,64 --delays 0,4000,16000 --warmup 1 --seconds 1"));
}

#[test]
fn big_machines_take_fewer_delays_and_kv_series_beyond_eight_cores() {
    let s = steps(Profile::Quick, 256, "all");
    assert_eq!(
        lines(&s, "scale"),
        [
            "granule scale --regimes all --cores 1,2,3,4,6,8 --delays 0,1000,4000,16000 --warmup 0.2 --seconds 0.4 --hold-times",
            "granule scale --regimes all --cores 12,16,24,32,48,64 --delays 0,4000,16000 --warmup 0.2 --seconds 0.4 --hold-times",
        ]
    );
    let kv = lines(&s, "kv");
    assert!(kv[0].contains("--regimes all --cores 1..2 "), "{kv:?}");
    assert!(kv[1].contains("--regimes bkl,fine,lockfree --cores 64 "), "{kv:?}");
    let sub = lines(&s, "subsystems").remove(0);
    assert!(sub.contains("--cores 64 "), "{sub}");
}

#[test]
fn smoke_kv_is_tiny_and_on_at_most_two_cores() {
    let kv = |cpus| lines(&steps(Profile::Smoke, cpus, "all"), "kv");
    assert_eq!(
        kv(8),
        ["granule kv --regimes all --cores 1..2 --workload a --records 200 --seconds 0.1 --warmup 0 --runs 1 --linux"]
    );
    assert!(kv(1)[0].contains("--cores 1..1"), "{:?}", kv(1));
    let sub = steps(Profile::Smoke, 8, "none,fine").pop().unwrap().command_line();
    assert_eq!(
        sub, "granule subsystems --regimes fine --cores 2 --seconds 0.03 --warmup 0 --runs 1 --workers 2",
        "the subsystem study skips none and stays on two cores"
    );
}

#[test]
fn core_counts_are_geometric_plus_the_machine_and_its_boundaries() {
    let counts = |n| core_counts(&Topology::synthetic(n));
    assert_eq!(counts(1), [1]);
    assert_eq!(counts(2), [1, 2]);
    assert_eq!(counts(5), [1, 2, 3, 4, 5]);
    assert_eq!(counts(16), [1, 2, 3, 4, 6, 8, 12, 16]);
    assert_eq!(counts(40), [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 40]);
    assert_eq!(counts(256), [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64], "the kernel runs at most 64 cores");
    // Two sockets of 10 cores (one LLC each) and their SMT siblings: the
    // socket boundary and the last physical core are measured.
    let places: Vec<Place> =
        (0..40).map(|c| Place { cpu: c, socket: (c % 20) / 10, llc: (c % 20) / 10, core: c % 20 }).collect();
    let t = Topology::from_places("sysfs", &places, Vec::new());
    assert_eq!(t.boundaries.counts(), [10, 20]);
    assert_eq!(core_counts(&t), [1, 2, 3, 4, 6, 8, 10, 12, 16, 20, 24, 32, 40]);
}

#[test]
fn cores_args_are_ranges_when_they_can_be() {
    assert_eq!(cores_arg(&[1]), "1..1");
    assert_eq!(cores_arg(&[1, 2]), "1..2");
    assert_eq!(cores_arg(&[1, 2, 3, 4]), "1..4");
    assert_eq!(cores_arg(&[1, 2, 4]), "1,2,4");
    assert_eq!(cores_arg(&[12, 16]), "12,16");
    // What the commands' parser reads back.
    let parse = crate::bounds::counts(KERNEL_MAX_CORES);
    assert_eq!(parse(&cores_arg(&[1, 2, 3, 4, 6, 8, 12])).unwrap().0, [1, 2, 3, 4, 6, 8, 12]);
}

#[test]
fn plans_fit_their_time_limits_at_every_size() {
    for n in [2, 16, 64, 256] {
        let t = Topology::synthetic(n);
        let quick = Plan::new(Profile::Quick, &t, "all", true).total_s();
        let full = Plan::new(Profile::Full, &t, "all", true).total_s();
        assert!(quick <= 8.0 * 60.0, "quick at {n} CPUs: {quick:.0} s");
        assert!(full <= 45.0 * 60.0, "full at {n} CPUs: {full:.0} s");
        assert!(quick < full, "{n}");
    }
    let two = Plan::new(Profile::Quick, &Topology::synthetic(2), "all", true).total_s();
    assert!(two <= 180.0, "quick at 2 CPUs: {two:.0} s");
}

#[test]
fn estimates_match_what_the_steps_took_on_two_cores() {
    // The 2-core EPYC quick suite (RTM unavailable: six regimes) with the
    // knobs of that run, step by step: scale 38.7 s for 48 points of
    // 0.3 + 0.5 s, subsystems 15.2 s for 36 points of 0.1 + 0.3 s.
    let scale = cost::point_s(2, 0.3, 0.5) * 48.0 + PROCESS_S;
    assert!((38.7..38.7 * 1.1).contains(&scale), "{scale}");
    let sub = cost::point_s(2, 0.1, 0.3) * 36.0 + PROCESS_S;
    assert!((15.2..15.2 * 1.1).contains(&sub), "{sub}");
    let synthesis = cost::synthesis_s(6.0, 5.0, 3.0, 200.0, 0.3) + PROCESS_S;
    assert!((36.7..36.7 * 1.15).contains(&synthesis), "{synthesis}");
    // kv: 67.5 s for 20 kernel and 4 Linux points of 0.5 + 1 s over 32000
    // records, after five entry-cost runs.
    let kv = PROCESS_S
        + cost::kv_entry_costs_s(5.0)
        + 10.0 * (cost::kv_point_s(1, 32000.0, 0.5, 1.0) + cost::kv_point_s(2, 32000.0, 0.5, 1.0))
        + 2.0 * (cost::kv_linux_point_s(1, 32000.0, 0.5, 1.0) + cost::kv_linux_point_s(2, 32000.0, 0.5, 1.0));
    assert!((67.5..67.5 * 1.1).contains(&kv), "{kv}");
}
