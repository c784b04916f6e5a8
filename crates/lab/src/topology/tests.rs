use std::path::Path;

use super::*;

/// One CPU of a fake tree: its number, package, sibling list and
/// last-level cache's shared list (`None`: that file is missing).
type FakeCpu<'a> = (usize, Option<usize>, Option<&'a str>, Option<&'a str>);

/// A fake sysfs CPU tree.
fn fake(root: &Path, cpus: &[FakeCpu<'_>]) {
    for &(cpu, package, siblings, llc) in cpus {
        let topo = root.join(format!("cpu{cpu}/topology"));
        std::fs::create_dir_all(&topo).unwrap();
        if let Some(p) = package {
            std::fs::write(topo.join("physical_package_id"), format!("{p}\n")).unwrap();
        }
        if let Some(s) = siblings {
            std::fs::write(topo.join("thread_siblings_list"), format!("{s}\n")).unwrap();
        }
        // L1 data and instruction caches are private; L2 is private too; the
        // LLC is the highest level. Without an LLC, no cache files at all.
        let Some(llc) = llc else { continue };
        let cache = root.join(format!("cpu{cpu}/cache"));
        for (i, (level, kind, shared)) in
            [(1, "Data", cpu.to_string()), (1, "Instruction", cpu.to_string()), (2, "Unified", cpu.to_string())]
                .into_iter()
                .chain([(3, "Unified", llc.to_string())])
                .enumerate()
        {
            let d = cache.join(format!("index{i}"));
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("level"), format!("{level}\n")).unwrap();
            std::fs::write(d.join("type"), format!("{kind}\n")).unwrap();
            std::fs::write(d.join("shared_cpu_list"), format!("{shared}\n")).unwrap();
        }
    }
}

#[test]
fn cpu_lists_parse_and_print_in_the_kernels_notation() {
    assert_eq!(parse_cpulist("0-3,8,10-11\n"), Some(vec![0, 1, 2, 3, 8, 10, 11]));
    assert_eq!(parse_cpulist(""), Some(vec![]));
    for bad in ["x", "3-1", "1,,2", "-1", "0-"] {
        assert_eq!(parse_cpulist(bad), None, "{bad}");
    }
    assert_eq!(format_cpulist(&[0, 1, 2, 3, 8, 10, 11]), "0-3,8,10-11");
    assert_eq!(format_cpulist(&[4, 0, 1]), "4,0-1", "the order is kept");
    assert_eq!(format_cpulist(&[]), "");
}

#[test]
fn one_socket_without_smt_fills_in_os_order() {
    let dir = tempfile::tempdir().unwrap();
    let cpus: Vec<_> = (0..4).map(|c| (c, Some(0), Some(["0", "1", "2", "3"][c]), Some("0-3"))).collect();
    fake(dir.path(), &cpus);
    let t = Topology::read(dir.path(), &[0, 1, 2, 3]);
    assert_eq!(t.sockets, vec![vec![0, 1, 2, 3]]);
    assert_eq!(t.llc_domains, vec![vec![0, 1, 2, 3]]);
    assert!(t.smt_groups.is_empty());
    assert_eq!(t.fill_order, vec![0, 1, 2, 3]);
    assert_eq!(t.boundaries, Boundaries { llc: vec![4], socket: vec![4], smt_from: None });
    assert!(t.unknown.is_empty(), "{:?}", t.unknown);
    assert!(t.boundaries.marks(4).is_empty(), "the machine's edge is not a mark");
}

/// Two sockets of two LLC domains of two physical cores with two threads
/// each, numbered as Linux numbers them (siblings in the upper half):
/// socket 0 = CPUs 0-3 and 8-11, socket 1 = CPUs 4-7 and 12-15.
fn two_sockets(root: &Path) {
    let mut cpus = Vec::new();
    let sib = ["0,8", "1,9", "2,10", "3,11", "4,12", "5,13", "6,14", "7,15"];
    let llc = ["0-1,8-9", "2-3,10-11", "4-5,12-13", "6-7,14-15"];
    for c in 0..16 {
        let core = c % 8;
        cpus.push((c, Some(core / 4), Some(sib[core]), Some(llc[core / 2])));
    }
    fake(root, &cpus);
}

#[test]
fn two_sockets_fill_one_domain_then_one_socket_at_a_time_siblings_last() {
    let dir = tempfile::tempdir().unwrap();
    two_sockets(dir.path());
    let all: Vec<usize> = (0..16).collect();
    let t = Topology::read(dir.path(), &all);
    assert_eq!(t.sockets, vec![vec![0, 1, 2, 3, 8, 9, 10, 11], vec![4, 5, 6, 7, 12, 13, 14, 15]]);
    assert_eq!(t.llc_domains, vec![vec![0, 1, 8, 9], vec![2, 3, 10, 11], vec![4, 5, 12, 13], vec![6, 7, 14, 15]]);
    assert_eq!(t.smt_groups.len(), 8);
    assert_eq!(t.smt_groups[0], vec![0, 8]);
    assert_eq!(t.fill_order, vec![0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]);
    assert_eq!(t.boundaries, Boundaries { llc: vec![2, 4, 6, 8], socket: vec![4, 8], smt_from: Some(9) });
    let marks: Vec<(usize, &str)> = t.boundaries.marks(16).into_iter().map(|m| (m.cores, m.kind)).collect();
    assert_eq!(marks, [(2, "llc"), (4, "socket"), (6, "llc"), (8, "socket")]);
    assert_eq!(t.boundaries.counts(), vec![2, 4, 6, 8]);
    assert!(t.unknown.is_empty(), "{:?}", t.unknown);
    let r = t.record();
    assert_eq!(r.sockets, ["0-3,8-11", "4-7,12-15"]);
    assert_eq!(r.smt_groups[0], "0,8");
    assert_eq!(r.fill_order, "0-15");
}

#[test]
fn interleaved_numbering_still_fills_a_domain_before_the_next() {
    // CPUs numbered round-robin across two sockets (even: socket 0, odd:
    // socket 1), one LLC per socket, no SMT.
    let dir = tempfile::tempdir().unwrap();
    let cpus: Vec<_> = (0..8)
        .map(|c| {
            let s = c % 2;
            (c, Some(s), Some(["0", "1", "2", "3", "4", "5", "6", "7"][c]), Some(["0,2,4,6", "1,3,5,7"][s]))
        })
        .collect();
    fake(dir.path(), &cpus);
    let t = Topology::read(dir.path(), &(0..8).collect::<Vec<_>>());
    assert_eq!(t.fill_order, vec![0, 2, 4, 6, 1, 3, 5, 7]);
    assert_eq!(t.boundaries, Boundaries { llc: vec![4, 8], socket: vec![4, 8], smt_from: None });
    assert_eq!(t.record().fill_order, "0,2,4,6,1,3,5,7");
}

#[test]
fn only_the_allowed_cpus_are_placed() {
    let dir = tempfile::tempdir().unwrap();
    two_sockets(dir.path());
    let t = Topology::read(dir.path(), &[5, 1, 0, 9]);
    assert_eq!(t.fill_order, vec![0, 1, 5, 9]);
    assert_eq!(t.llc_domains, vec![vec![0, 1, 9], vec![5]]);
    assert_eq!(t.boundaries, Boundaries { llc: vec![2, 3], socket: vec![2, 3], smt_from: Some(4) });
}

#[test]
fn missing_files_degrade_to_one_socket_one_domain_no_smt() {
    let dir = tempfile::tempdir().unwrap();
    // No package ids, no sibling lists, no LLC.
    fake(dir.path(), &[(0, None, None, None), (1, None, None, None), (2, None, None, None)]);
    let t = Topology::read(dir.path(), &[0, 1, 2]);
    assert_eq!(t.sockets, vec![vec![0, 1, 2]]);
    assert_eq!(t.llc_domains, vec![vec![0, 1, 2]]);
    assert!(t.smt_groups.is_empty());
    assert_eq!(t.fill_order, vec![0, 1, 2]);
    assert_eq!(t.unknown.len(), 3, "{:?}", t.unknown);
    for what in ["sockets", "SMT", "LLC"] {
        assert!(t.unknown.iter().any(|u| u.starts_with(what)), "{what}: {:?}", t.unknown);
    }
    // No tree at all reads the same.
    let none = Topology::read(&dir.path().join("absent"), &[0, 1, 2]);
    assert_eq!(none.fill_order, vec![0, 1, 2]);
    assert_eq!(none.unknown.len(), 3);
}

#[test]
fn missing_cache_files_assume_one_domain_per_socket() {
    let dir = tempfile::tempdir().unwrap();
    let cpus: Vec<_> = (0..4).map(|c| (c, Some(c / 2), Some(["0", "1", "2", "3"][c]), None)).collect();
    fake(dir.path(), &cpus);
    let t = Topology::read(dir.path(), &[0, 1, 2, 3]);
    assert_eq!(t.llc_domains, vec![vec![0, 1], vec![2, 3]]);
    assert_eq!(t.boundaries, Boundaries { llc: vec![2, 4], socket: vec![2, 4], smt_from: None });
    assert_eq!(t.unknown.len(), 1);
    assert!(t.unknown[0].starts_with("LLC"), "{:?}", t.unknown);
}

#[test]
fn synthetic_machines_have_a_socket_per_64_and_a_domain_per_16() {
    let t = Topology::synthetic(256);
    assert_eq!((t.sockets.len(), t.llc_domains.len(), t.smt_groups.len()), (4, 16, 0));
    assert_eq!(t.boundaries.socket, vec![64, 128, 192, 256]);
    assert_eq!(t.boundaries.llc, (1..=16).map(|d| d * 16).collect::<Vec<_>>());
    assert_eq!(t.fill_order, (0..256).collect::<Vec<_>>());
    assert_eq!(t.source, "synthetic");
    let small = Topology::synthetic(2);
    assert_eq!(small.boundaries, Boundaries { llc: vec![2], socket: vec![2], smt_from: None });
}

#[test]
fn boundaries_read_back_from_a_topology_record() {
    let t = Topology::synthetic(40);
    let written = serde_json::to_value(t.record()).unwrap();
    let b = serde_json::from_value::<TopologyRecord>(written).unwrap().boundaries;
    assert_eq!(b, Boundaries { llc: vec![16, 32, 40], socket: vec![40], smt_from: None });
    assert_eq!(b.marks(40), [Mark { cores: 16, kind: "llc" }, Mark { cores: 32, kind: "llc" }]);
}
