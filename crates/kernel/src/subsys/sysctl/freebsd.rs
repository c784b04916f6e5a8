//! The tree a kernel boots with: a few hundred parameters named and
//! numbered as on FreeBSD 14 (`kern.ostype` is `{1, 1}`, `hw.ncpu`
//! `{6, 3}`; names without a fixed number get FreeBSD's `OID_AUTO`
//! numbers from `0x100`). The values are plausible, not measured: the
//! study needs the shape of the tree (depth, fan-out, value sizes — one
//! value, `kern.conftxt`, is longer than a page, as the kernel
//! configuration text is), not the numbers.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use crate::abi::SysctlKind;
use crate::config::BootConfig;

use super::tree::{Plain, Retire, Tree};

/// A node path, created level by level; a fixed number for the last
/// level, or `OID_AUTO`.
struct Builder<'a, R: Retire<SysctlKind>> {
    t: &'a Tree,
    r: &'a R,
    limit: usize,
}

impl<R: Retire<SysctlKind>> Builder<'_, R> {
    fn node(&self, path: &str, number: Option<u32>) {
        self.leaf(path, number, SysctlKind::Node, false, &[]);
    }

    fn leaf(&self, path: &str, number: Option<u32>, kind: SysctlKind, writable: bool, value: &[u8]) {
        let (parent, name) = path.rsplit_once('.').unwrap_or(("", path));
        let p = if parent.is_empty() {
            self.t.root()
        } else {
            match self.t.find_path(parent.split('.'), &Plain) {
                Ok((p, _)) => p,
                Err(_) => {
                    self.node(parent, None);
                    match self.t.find_path(parent.split('.'), &Plain) {
                        Ok((p, _)) => p,
                        Err(_) => return,
                    }
                }
            }
        };
        // A node past the configured boot size or capacity is left out (a
        // small `sysctl_boot_nodes` boots a partial tree).
        if self.t.len() < self.limit {
            let _ = self.t.add(p, name, number, kind, writable, value, self.r);
        }
    }

    fn int(&self, path: &str, number: Option<u32>, writable: bool, v: i64) {
        self.leaf(path, number, SysctlKind::Int, writable, &v.to_le_bytes());
    }

    fn string(&self, path: &str, number: Option<u32>, writable: bool, s: &str) {
        self.leaf(path, number, SysctlKind::Str, writable, s.as_bytes());
    }

    fn opaque(&self, path: &str, number: Option<u32>, b: &[u8]) {
        self.leaf(path, number, SysctlKind::Opaque, false, b);
    }
}

/// Fill `t` (boot: nothing else runs).
pub(crate) fn populate(t: &Tree, r: &impl Retire<SysctlKind>, config: &BootConfig) {
    let b = Builder { t, r, limit: config.sysctl_boot_nodes };
    let ncpu = config.cores as i64;
    for (name, n) in [
        ("kern", 1),
        ("vm", 2),
        ("vfs", 3),
        ("net", 4),
        ("debug", 5),
        ("hw", 6),
        ("machdep", 7),
        ("user", 8),
        ("p1003_1b", 9),
    ] {
        b.node(name, Some(n));
    }
    for name in ["security", "dev", "compat"] {
        b.node(name, None);
    }

    // kern: the fixed CTL_KERN numbers, then OID_AUTO ones.
    b.string("kern.ostype", Some(1), false, "FreeBSD");
    b.string("kern.osrelease", Some(2), false, "14.1-RELEASE");
    b.int("kern.osrevision", Some(3), false, 199506);
    b.string("kern.version", Some(4), false, "FreeBSD 14.1-RELEASE releng/14.1-n267679-10e31f0946d8 GENERIC\n");
    b.int("kern.maxvnodes", Some(5), true, 262_144);
    b.int("kern.maxproc", Some(6), false, 16_404);
    b.int("kern.maxfiles", Some(7), true, 523_536);
    b.int("kern.argmax", Some(8), false, 524_288);
    b.int("kern.securelevel", Some(9), true, -1);
    b.string("kern.hostname", Some(10), true, "granule");
    b.int("kern.hostid", Some(11), true, 0x6772_616e);
    b.opaque("kern.clockrate", Some(12), &[0xe8, 3, 0, 0, 0x10, 0x27, 0, 0, 0, 0, 0, 0, 0x80, 0, 0, 0, 0x80, 0, 0, 0]);
    b.int("kern.posix1version", Some(17), false, 200_809);
    b.int("kern.ngroups", Some(18), false, 1023);
    b.int("kern.job_control", Some(19), false, 1);
    b.int("kern.saved_ids", Some(20), false, 0);
    b.opaque("kern.boottime", Some(21), &[0x40, 0x2c, 0x44, 0x67, 0, 0, 0, 0, 0x20, 0xa1, 7, 0, 0, 0, 0, 0]);
    b.string("kern.nisdomainname", Some(22), true, "");
    b.int("kern.update", Some(23), true, 30);
    b.int("kern.osreldate", Some(24), false, 1_401_000);
    b.int("kern.maxfilesperproc", Some(27), true, 471_177);
    b.int("kern.maxprocperuid", Some(28), true, 14_763);
    b.string("kern.bootfile", Some(26), true, "/boot/kernel/kernel");
    b.int("kern.hz", None, false, 1000);
    b.int("kern.openfiles", None, false, 512);
    b.int("kern.lastpid", None, false, 1234);
    b.int("kern.shutdown.poweroff_delay", None, true, 5000);
    b.int("kern.shutdown.kproc_shutdown_wait", None, true, 60);
    b.opaque("kern.cp_time", None, &[0u8; 40]);
    b.opaque("kern.cp_times", None, &vec_of(40 * config.cores.max(1), 0));
    b.opaque("kern.conftxt", None, conftxt().as_bytes());
    b.string("kern.vm_guest", None, false, "kvm");
    b.string("kern.sched.name", None, false, "ULE");
    for (i, name) in [
        "slice",
        "preempt_thresh",
        "interact",
        "static_boost",
        "idlespins",
        "idlespinthresh",
        "affinity",
        "balance",
        "steal_idle",
        "steal_thresh",
        "always_steal",
        "trysteal_limit",
    ]
    .iter()
    .enumerate()
    {
        b.int(&format!("kern.sched.{name}"), None, true, 4 + i as i64);
    }
    b.string("kern.timecounter.hardware", None, true, "TSC-low");
    b.string("kern.timecounter.choice", None, false, "ACPI-fast(900) i8254(0) HPET(950) TSC-low(1000) dummy(-1000000)");
    for name in ["stepwarnings", "alloweddeviation", "smp_tsc", "invariant_tsc", "fast_gettime"] {
        b.int(&format!("kern.timecounter.{name}"), None, true, 1);
    }
    for name in [
        "inet",
        "inet6",
        "ktrace",
        "posix_shm",
        "sysv_msg",
        "sysv_sem",
        "sysv_shm",
        "ufs_acl",
        "ufs_quota",
        "nfscl",
        "kqueue_timers",
        "stack",
        "compat_freebsd11",
        "compat_freebsd12",
        "compat_freebsd13",
        "linuxulator_v4l2",
        "vimage",
        "capability_mode",
        "capabilities",
        "process_descriptors",
    ] {
        b.int(&format!("kern.features.{name}"), None, false, 1);
    }
    for (name, v) in [
        ("maxsockbuf", 2_097_152),
        ("sockbuf_waste_factor", 8),
        ("max_linkhdr", 16),
        ("max_protohdr", 60),
        ("max_hdr", 76),
        ("max_datalen", 124),
        ("nmbclusters", 1_019_877),
        ("soacceptqueue", 4096),
        ("shm_use_phys", 0),
        ("shmmax", 34_359_738_368),
        ("shmmin", 1),
        ("shmmni", 192),
        ("shmseg", 128),
        ("shmall", 8_388_608),
        ("msgmax", 16_384),
        ("msgmni", 40),
        ("msgmnb", 2048),
        ("msgtql", 40),
        ("semmni", 50),
        ("semmns", 340),
        ("semmnu", 150),
        ("semmsl", 340),
        ("semopm", 100),
        ("semume", 50),
        ("semvmx", 32_767),
    ] {
        b.int(&format!("kern.ipc.{name}"), None, true, v);
    }
    for (name, v) in [("max_threads_per_proc", 1500), ("max_threads_hits", 0)] {
        b.int(&format!("kern.threads.{name}"), None, true, v);
    }
    for name in ["harvest.mask", "fortuna.minpoolsize", "random_sources_count"] {
        b.int(&format!("kern.random.{name}"), None, true, 64);
    }
    b.int("kern.smp.cpus", None, false, ncpu);
    b.int("kern.smp.maxcpus", None, false, 256);
    b.int("kern.smp.active", None, false, 1);
    b.string("kern.smp.topology_spec", None, false, "<groups>\n <group level=\"1\" cache-level=\"0\"/>\n</groups>\n");

    // vm
    for name in [
        "v_swtch",
        "v_trap",
        "v_syscall",
        "v_intr",
        "v_soft",
        "v_vm_faults",
        "v_io_faults",
        "v_cow_faults",
        "v_cow_optim",
        "v_zfod",
        "v_ozfod",
        "v_swapin",
        "v_swapout",
        "v_swappgsin",
        "v_swappgsout",
        "v_vnodein",
        "v_vnodeout",
        "v_vnodepgsin",
        "v_vnodepgsout",
        "v_intrans",
        "v_reactivated",
        "v_pdwakeups",
        "v_pdpages",
        "v_pdshortfalls",
        "v_dfree",
        "v_pfree",
        "v_tfree",
        "v_forks",
        "v_vforks",
        "v_rforks",
        "v_kthreads",
        "v_forkpages",
        "v_vforkpages",
        "v_rforkpages",
        "v_kthreadpages",
        "v_page_size",
        "v_page_count",
        "v_free_reserved",
        "v_free_target",
        "v_free_min",
        "v_free_count",
        "v_wire_count",
        "v_active_count",
        "v_inactive_target",
        "v_inactive_count",
        "v_laundry_count",
        "v_pageout_free_min",
        "v_interrupt_free_min",
        "v_free_severe",
        "v_user_wire_count",
        "v_nofree_count",
    ] {
        b.int(&format!("vm.stats.vm.{name}"), None, false, 4096);
    }
    for name in ["v_swtch", "v_trap", "v_syscall", "v_intr", "v_soft"] {
        b.int(&format!("vm.stats.sys.{name}"), None, false, 1_000_000);
    }
    for name in ["zero_page_count", "cnt_prezero"] {
        b.int(&format!("vm.stats.misc.{name}"), None, false, 0);
    }
    for name in ["bypasses", "collapses", "collapse_waits", "shadow_faults"] {
        b.int(&format!("vm.stats.object.{name}"), None, false, 0);
    }
    b.opaque("vm.loadavg", None, &[0u8; 24]);
    for (name, v) in [
        ("swap_total", 2_147_483_648),
        ("overcommit", 0),
        ("v_free_min", 25_000),
        ("v_free_target", 85_000),
        ("v_free_reserved", 6_000),
        ("v_cache_min", 0),
        ("pageout_update_period", 600),
        ("max_user_wired", 1_000_000),
        ("kmem_size", 6_000_000_000),
        ("kmem_map_size", 90_000_000),
        ("kmem_map_free", 5_000_000_000),
        ("disable_swapspace_pageouts", 0),
        ("swap_enabled", 1),
        ("md_malloc_wait", 0),
        ("idlezero_enable", 0),
    ] {
        b.int(&format!("vm.{name}"), None, true, v);
    }
    b.opaque("vm.phys_segs", None, &vec_of(2048, 0x5a));

    // vfs
    for (name, v) in [
        ("numvnodes", 40_000),
        ("wantfreevnodes", 65_000),
        ("freevnodes", 20_000),
        ("maxbufspace", 1_000_000_000),
        ("bufspace", 500_000_000),
        ("hirunningspace", 16_777_216),
        ("lorunningspace", 11_141_120),
        ("runningbufspace", 0),
        ("numdirtybuffers", 0),
        ("hidirtybuffers", 13_000),
        ("lodirtybuffers", 6_500),
        ("dirtybufthresh", 11_700),
        ("nbuf", 105_000),
        ("read_max", 64),
        ("write_behind", 1),
        ("usermount", 0),
        ("aio.max_aio_procs", 32),
        ("aio.max_aio_queue", 65_536),
        ("ufs.dirhash_maxmem", 2_097_152),
        ("nfs.access_cache_timeout", 60),
    ] {
        b.int(&format!("vfs.{name}"), None, true, v);
    }

    // net
    for (name, v) in [
        ("sendspace", 32_768),
        ("recvspace", 65_536),
        ("mssdflt", 536),
        ("minmss", 216),
        ("rfc1323", 1),
        ("sack.enable", 1),
        ("delayed_ack", 1),
        ("delacktime", 40),
        ("msl", 30_000),
        ("keepidle", 7_200_000),
        ("keepintvl", 75_000),
        ("keepcnt", 8),
        ("blackhole", 0),
        ("log_in_vain", 0),
        ("tcbhashsize", 524_288),
        ("do_tso", 1),
        ("initcwnd_segments", 10),
        ("ecn.enable", 2),
        ("abc_l_var", 2),
        ("sendbuf_auto", 1),
        ("sendbuf_inc", 8192),
        ("sendbuf_max", 2_097_152),
        ("recvbuf_auto", 1),
        ("recvbuf_max", 2_097_152),
        ("path_mtu_discovery", 1),
        ("fast_finwait2_recycle", 0),
        ("finwait2_timeout", 60_000),
        ("syncookies", 1),
        ("syncache.bucketlimit", 30),
        ("syncache.cachelimit", 15_375),
        ("syncache.rexmtlimit", 3),
        ("cc.algorithm", 0),
        ("tso_max_size", 65_536),
        ("nolocaltimewait", 0),
        ("maxtcptw", 27_767),
        ("per_cpu_timers", 0),
        ("v6mssdflt", 1220),
        ("insecure_rst", 0),
        ("drop_synfin", 0),
        ("ts_offset_per_conn", 1),
    ] {
        b.int(&format!("net.inet.tcp.{name}"), None, true, v);
    }
    for (name, v) in [
        ("checksum", 1),
        ("maxdgram", 9216),
        ("recvspace", 42_080),
        ("blackhole", 0),
        ("log_in_vain", 0),
        ("soreceive_stream", 0),
    ] {
        b.int(&format!("net.inet.udp.{name}"), None, true, v);
    }
    for (name, v) in [
        ("forwarding", 0),
        ("redirect", 1),
        ("ttl", 64),
        ("sourceroute", 0),
        ("accept_sourceroute", 0),
        ("fastforwarding", 0),
        ("intr_queue_maxlen", 256),
        ("maxfragpackets", 7818),
        ("maxfragsperpacket", 16),
        ("random_id", 0),
        ("portrange.first", 10_000),
        ("portrange.last", 65_535),
        ("portrange.hifirst", 49_152),
        ("portrange.hilast", 65_535),
        ("rfc6864", 1),
    ] {
        b.int(&format!("net.inet.ip.{name}"), None, true, v);
    }
    for (name, v) in [("isr.maxthreads", 1), ("isr.dispatch", 0), ("route.netisr_maxqlen", 256)] {
        b.int(&format!("net.{name}"), None, true, v);
    }

    // hw: the fixed CTL_HW numbers, then OID_AUTO ones.
    b.string("hw.machine", Some(1), false, "amd64");
    b.string("hw.model", Some(2), false, "granule hosted core");
    b.int("hw.ncpu", Some(3), false, ncpu);
    b.int("hw.byteorder", Some(4), false, 1234);
    b.int("hw.physmem", Some(5), false, 25_769_803_776);
    b.int("hw.usermem", Some(6), false, 24_000_000_000);
    b.int("hw.pagesize", Some(7), false, 4096);
    b.int("hw.floatingpoint", Some(10), false, 1);
    b.string("hw.machine_arch", Some(11), false, "amd64");
    b.int("hw.realmem", Some(12), false, 25_769_803_776);
    for (name, v) in [
        ("availpages", 6_000_000),
        ("clockrate", 2600),
        ("instruction_sse", 1),
        ("bus.devctl_queue", 1000),
        ("pci.enable_msi", 1),
        ("pci.enable_msix", 1),
        ("acpi.cpu.cx_lowest", 1),
        ("intr_storm_threshold", 0),
        ("kbd.keymap_restrict_change", 0),
        ("vmm.maxcpu", 256),
    ] {
        b.int(&format!("hw.{name}"), None, false, v);
    }
    for c in 0..config.cores {
        b.int(&format!("dev.cpu.{c}.freq"), None, false, 2600);
        b.string(&format!("dev.cpu.{c}.%desc"), None, false, "ACPI CPU");
        b.string(&format!("dev.cpu.{c}.%driver"), None, false, "cpu");
        b.string(&format!("dev.cpu.{c}.%parent"), None, false, "acpi0");
        b.string(&format!("dev.cpu.{c}.freq_levels"), None, false, "2600/-1");
    }

    // machdep, debug, security, user, p1003_1b, compat
    for (name, v) in [
        ("tsc_freq", 2_600_000_000),
        ("idle_mwait", 1),
        ("disable_mtrrs", 0),
        ("hyperthreading_allowed", 1),
        ("smap", 1),
        ("smep", 1),
        ("mitigations.ibrs.active", 0),
        ("mitigations.ssb.active", 0),
    ] {
        b.int(&format!("machdep.{name}"), None, true, v);
    }
    b.string("machdep.idle", None, true, "acpi");
    for (name, v) in [
        ("kdb.enter", 0),
        ("kdb.panic", 0),
        ("minidump", 1),
        ("debugger_on_panic", 0),
        ("trace_on_panic", 1),
        ("sizeof.vnode", 448),
        ("sizeof.proc", 1336),
        ("sizeof.thread", 1408),
        ("sizeof.bio", 392),
        ("sizeof.buf", 448),
    ] {
        b.int(&format!("debug.{name}"), None, true, v);
    }
    for (name, v) in [
        ("see_other_uids", 1),
        ("see_other_gids", 1),
        ("see_jail_proc", 1),
        ("unprivileged_read_msgbuf", 1),
        ("unprivileged_proc_debug", 1),
        ("hardlink_check_uid", 0),
        ("hardlink_check_gid", 0),
        ("conservative_signals", 1),
        ("suser_enabled", 1),
        ("stack_guard_page", 1),
    ] {
        b.int(&format!("security.bsd.{name}"), None, true, v);
    }
    b.string("user.cs_path", Some(1), false, "/usr/bin:/bin:/usr/sbin:/sbin");
    for (i, name) in [
        "bc_base_max",
        "bc_dim_max",
        "bc_scale_max",
        "bc_string_max",
        "coll_weights_max",
        "expr_nest_max",
        "line_max",
        "re_dup_max",
        "posix2_version",
        "posix2_c_bind",
        "posix2_c_dev",
        "posix2_char_term",
        "posix2_fort_dev",
        "posix2_fort_run",
        "posix2_localedef",
        "posix2_sw_dev",
        "posix2_upe",
        "stream_max",
        "tzname_max",
        "localbase",
    ]
    .iter()
    .enumerate()
    {
        if *name == "localbase" {
            b.string("user.localbase", Some(21), false, "/usr/local");
        } else {
            b.int(&format!("user.{name}"), Some(i as u32 + 2), false, 99 + i as i64);
        }
    }
    for (i, name) in [
        "asynchronous_io",
        "mapped_files",
        "memlock",
        "memlock_range",
        "memory_protection",
        "message_passing",
        "prioritized_io",
        "priority_scheduling",
        "realtime_signals",
        "semaphores",
        "fsync",
        "shared_memory_objects",
        "synchronized_io",
        "timers",
        "aio_listio_max",
        "aio_max",
        "aio_prio_delta_max",
        "delaytimer_max",
        "mq_open_max",
        "pagesize",
        "rtsig_max",
        "sem_nsems_max",
        "sem_value_max",
        "sigqueue_max",
        "timer_max",
    ]
    .iter()
    .enumerate()
    {
        b.int(&format!("p1003_1b.{name}"), Some(i as u32 + 1), false, 200_112);
    }
    b.int("compat.linux.osrelease_int", None, true, 5_015_000);
    b.string("compat.linux.osrelease", None, true, "5.15.0");
    b.string("compat.linux.osname", None, true, "Linux");
}

fn vec_of(n: usize, b: u8) -> Vec<u8> {
    alloc::vec![b; n]
}

/// A kernel configuration text of about six KiB (FreeBSD's `GENERIC` is
/// longer), so one value takes more than a page to copy out.
fn conftxt() -> String {
    let mut s = String::from("options\tCONFIG_AUTOGENERATED\nident\tGENERIC\nmachine\tamd64\n");
    let options = [
        "SCHED_ULE",
        "NUMA",
        "VIMAGE",
        "PREEMPTION",
        "INET",
        "INET6",
        "IPSEC_SUPPORT",
        "TCP_OFFLOAD",
        "TCP_HHOOK",
        "TCP_RFC7413",
        "SCTP_SUPPORT",
        "KERN_TLS",
        "FFS",
        "SOFTUPDATES",
        "UFS_ACL",
        "UFS_DIRHASH",
        "UFS_GJOURNAL",
        "QUOTA",
        "MD_ROOT",
        "NFSCL",
        "NFSD",
        "NFSLOCKD",
        "NFS_ROOT",
        "MSDOSFS",
        "CD9660",
        "PROCFS",
        "PSEUDOFS",
        "TMPFS",
        "GEOM_RAID",
        "GEOM_LABEL",
        "EFIRT",
        "COMPAT_FREEBSD32",
        "COMPAT_FREEBSD4",
        "COMPAT_FREEBSD5",
        "COMPAT_FREEBSD6",
        "COMPAT_FREEBSD7",
        "COMPAT_FREEBSD9",
        "COMPAT_FREEBSD10",
        "COMPAT_FREEBSD11",
        "COMPAT_FREEBSD12",
        "COMPAT_FREEBSD13",
        "SCSI_DELAY=5000",
        "KTRACE",
        "STACK",
        "SYSVSHM",
        "SYSVMSG",
        "SYSVSEM",
        "_KPOSIX_PRIORITY_SCHEDULING",
        "PRINTF_BUFR_SIZE=128",
        "KBD_INSTALL_CDEV",
        "HWPMC_HOOKS",
        "AUDIT",
        "CAPABILITY_MODE",
        "CAPABILITIES",
        "MAC",
        "KDTRACE_FRAME",
        "KDTRACE_HOOKS",
        "DDB_CTF",
        "INCLUDE_CONFIG_FILE",
        "RACCT",
        "RCTL",
        "SMP",
        "EARLY_AP_STARTUP",
        "INTRNG",
    ];
    let devices = [
        "cpufreq",
        "acpi",
        "smbios",
        "pci",
        "ahci",
        "mvs",
        "siis",
        "ata",
        "scbus",
        "da",
        "cd",
        "pass",
        "ses",
        "atkbdc",
        "atkbd",
        "psm",
        "kbdmux",
        "vga",
        "splash",
        "sc",
        "vt",
        "vt_vga",
        "vt_efifb",
        "vt_vbefb",
        "agp",
        "uart",
        "puc",
        "em",
        "ix",
        "ixv",
        "ixl",
        "iavf",
        "ice",
        "igc",
        "bxe",
        "le",
        "ti",
        "mlx5",
        "mlx5en",
        "miibus",
        "ae",
        "age",
        "alc",
        "ale",
        "bce",
        "bfe",
        "bge",
        "cas",
        "dc",
        "et",
        "fxp",
        "gem",
        "jme",
        "lge",
        "msk",
        "nfe",
        "nge",
        "re",
        "rl",
        "sge",
        "sis",
        "sk",
        "ste",
        "stge",
        "vge",
        "vr",
        "xl",
        "wlan",
        "wlan_wep",
        "wlan_ccmp",
        "wlan_tkip",
        "wlan_amrr",
        "ath",
        "ath_pci",
        "ath_hal",
        "ath_rate_sample",
        "ipw",
        "iwi",
        "iwn",
        "malo",
        "mwl",
        "ral",
        "wpi",
        "crypto",
        "aesni",
        "loop",
        "padlock_rng",
        "rdrand_rng",
        "ether",
        "vlan",
        "tuntap",
        "md",
        "gif",
        "firmware",
        "xz",
        "bpf",
        "uhci",
        "ohci",
        "ehci",
        "xhci",
        "usb",
        "ukbd",
        "umass",
        "sound",
        "mmc",
        "mmcsd",
        "sdhci",
        "virtio",
        "virtio_pci",
        "vtnet",
        "virtio_blk",
        "virtio_scsi",
        "virtio_balloon",
        "hyperv",
        "xenpci",
        "vmx",
        "netmap",
        "evdev",
        "uinput",
        "hid",
    ];
    for o in options {
        s.push_str("options\t");
        s.push_str(o);
        s.push('\n');
    }
    for d in devices.iter().cycle().take(devices.len() * 3) {
        s.push_str("device\t");
        s.push_str(d);
        s.push('\n');
    }
    s
}
