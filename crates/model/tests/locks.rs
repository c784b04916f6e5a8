//! Lock kinds in the simulator: a ticket lock's throughput falls past its
//! peak (its hand-off grows with the waiters), a FIFO queue lock's does not;
//! per-core fine locks scale; the seeds' two sockets cost the queue lock
//! throughput once the second socket joins.

use granule_model::{simulate, Config, Dist, LockKind, Outcome, Topology};

fn sweep(topo: &Topology, lock: LockKind, cores: impl Iterator<Item = usize>) -> Vec<Outcome> {
    cores
        .map(|n| {
            let mut c = Config::new(n, Dist::Exponential(2000.0), Dist::Constant(200.0), lock);
            c.completions = 30_000;
            c.warmup = 3_000;
            c.seed = 42;
            simulate(&c, topo).unwrap()
        })
        .collect()
}

fn peak(xs: &[Outcome]) -> f64 {
    xs.iter().map(|o| o.throughput).fold(0.0, f64::max)
}

#[test]
fn ticket_collapses_past_its_peak_queue_lock_does_not() {
    let topo = Topology::uniform(48, 100.0).unwrap();
    let ticket = sweep(&topo, LockKind::Ticket, 1..=48);
    let queue = sweep(&topo, LockKind::Queue, 1..=48);
    let (tp, qp) = (peak(&ticket), peak(&queue));
    let t_last = ticket.last().unwrap().throughput;
    let q_last = queue.last().unwrap().throughput;
    assert!(t_last < 0.6 * tp, "ticket: last {t_last}, peak {tp}");
    assert!(q_last > 0.97 * qp, "queue: last {q_last}, peak {qp}");
    // The queue lock saturates at one critical section plus one transfer.
    assert!((q_last - 1.0 / 300.0).abs() / (1.0 / 300.0) < 0.02, "{q_last}");
    // Below the knee the two locks agree: few waiters, few extra transfers.
    assert!((ticket[1].throughput - queue[1].throughput).abs() / queue[1].throughput < 0.03);
    // The ticket lock's hold time grows with the waiters.
    assert!(ticket[47].mean_hold.unwrap() > 3.0 * queue[47].mean_hold.unwrap());
}

#[test]
fn fine_grained_locks_scale_linearly() {
    let topo = Topology::uniform(32, 100.0).unwrap();
    let fine = sweep(&topo, LockKind::Fine, [1, 8, 32].into_iter());
    for o in &fine {
        let want = o.cores as f64 / 2200.0;
        assert!((o.throughput - want).abs() / want < 0.03, "{o:?}");
    }
}

#[test]
fn the_second_socket_lowers_the_queue_locks_plateau() {
    let x86 = Topology::x86_two_socket();
    let xs = sweep(&x86, LockKind::Queue, [14, 28].into_iter());
    // One socket: saturated hold ≈ 200 + 115; two sockets: hand-offs cross
    // the sockets half the time and the plateau drops.
    assert!(xs[1].mean_hold.unwrap() > xs[0].mean_hold.unwrap() + 30.0, "{xs:?}");
    assert!(xs[1].throughput < xs[0].throughput, "{xs:?}");
}
