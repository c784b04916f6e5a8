//! Minimising a failing program: drop threads, then runs of operations
//! (halving the run length, delta-debugging style), keeping each cut that
//! still fails, until nothing more can go or the attempt budget is spent.
//! Concurrent failures may not reproduce every time, so the predicate
//! usually runs a candidate several times.

use std::time::{Duration, Instant};

use crate::program::Program;

/// Limits of one minimisation.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    /// Candidates to try.
    pub candidates: usize,
    /// Wall time.
    pub time: Duration,
}

/// The result: the smallest failing program found, and candidates tried.
#[derive(Clone, Debug)]
pub struct Shrunk {
    /// The program.
    pub program: Program,
    /// Candidates tried.
    pub tried: usize,
}

/// Shrink `prog`, which fails (`fails(prog)` is true).
pub fn shrink(prog: &Program, budget: Budget, mut fails: impl FnMut(&Program) -> bool) -> Shrunk {
    let start = Instant::now();
    let mut best = prog.clone();
    let mut tried = 0;
    let mut attempt = |c: &Program, tried: &mut usize| -> Option<bool> {
        if *tried >= budget.candidates || start.elapsed() > budget.time {
            return None;
        }
        *tried += 1;
        Some(fails(c))
    };
    'outer: loop {
        let mut improved = false;
        for i in (0..best.threads.len()).rev() {
            let Some(c) = best.without_thread(i) else { continue };
            match attempt(&c, &mut tried) {
                None => break 'outer,
                Some(true) => {
                    best = c;
                    improved = true;
                }
                Some(false) => {}
            }
        }
        for t in 0..best.threads.len() {
            let mut chunk = best.threads[t].ops.len();
            while chunk > 0 {
                let mut start = 0;
                while start < best.threads[t].ops.len() {
                    let end = (start + chunk).min(best.threads[t].ops.len());
                    let c = best.without_ops(t, start..end);
                    match attempt(&c, &mut tried) {
                        None => break 'outer,
                        Some(true) => {
                            best = c;
                            improved = true;
                        }
                        Some(false) => start += chunk,
                    }
                }
                chunk /= 2;
            }
        }
        if !improved {
            break;
        }
    }
    Shrunk { program: best, tried }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::generate;
    use crate::program::Op;

    #[test]
    fn shrinks_to_the_operations_that_matter() {
        let p = (0..500)
            .map(|s| generate(s, 2))
            .find(|p| p.total_ops() > 20 && p.threads.iter().flat_map(|t| &t.ops).any(|o| matches!(o, Op::Call { .. })))
            .unwrap();
        // "Fails" while some thread still has a call.
        let has_call = |p: &Program| p.threads.iter().flat_map(|t| &t.ops).any(|o| matches!(o, Op::Call { .. }));
        let b = Budget { candidates: 10_000, time: Duration::from_secs(60) };
        let s = shrink(&p, b, has_call);
        assert_eq!(s.program.threads.len(), 1);
        assert_eq!(s.program.total_ops(), 1);
        assert!(has_call(&s.program));
    }
}
