//! Chunks of independent work on several threads with results in chunk order, so the outcome
//! does not depend on the thread count: the calling thread and scoped helpers each take the next
//! chunk from a shared counter. Used by the traversal front's parallel resume, the exact
//! volume's split of a large pair's candidates and `interfere_dynamics`' per-pair maps.
//!
//! The calling thread works too instead of waiting: on the 2-core reference machine (a virtual
//! one) a helper runs about 77 µs after it is started while the caller keeps its core busy, and
//! helpers started while the caller waited ran on the caller's core first, so the work ran
//! nearly one chunk after another (docs/benchmarks.md, "Two threads in the contact stage").

use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The machine's available parallelism (at least 1), asked once and remembered: the standard
/// library asks the kernel and reads the cgroup quota files on every call, about 12 µs on the
/// 2-core reference machine, and the contact stage asked four to six times a step (about 50 µs,
/// half a percent of the 200-mesh heap's step).
pub fn available_threads() -> usize {
    static THREADS: OnceLock<usize> = OnceLock::new();
    *THREADS.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Maps chunks `0..count` with `map_chunk` on the calling thread and on up to `threads − 1`
/// scoped helpers at once, each taking the next chunk from a shared counter, and returns the
/// chunks' results in chunk order (`map_chunk` gives `None` for a chunk with nothing to map). A
/// panic in any of them is propagated.
pub fn map_chunks<R: Send>(
    threads: usize,
    count: usize,
    map_chunk: impl Fn(usize) -> Option<Vec<R>> + Sync,
) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        loop {
            let k = next.fetch_add(1, Ordering::Relaxed);
            if k >= count {
                break done;
            }
            if let Some(v) = map_chunk(k) {
                done.push((k, v));
            }
        }
    };
    let mut done = std::thread::scope(|scope| {
        let started: Vec<_> = (1..threads.min(count)).map(|_| scope.spawn(work)).collect();
        let mut done = work();
        for h in started {
            done.extend(h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)));
        }
        done
    });
    done.sort_unstable_by_key(|(k, _)| *k);
    done.into_iter().flat_map(|(_, v)| v).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Chunks of very different cost come back in chunk order for any thread count, chunks
    /// with nothing to map are left out, and a panic on any thread reaches the caller.
    #[test]
    fn chunks_come_back_in_order_and_panics_propagate() {
        let cost = |k: usize| {
            let n = if k.is_multiple_of(7) { 50_000 } else { 10 };
            (0..n).fold(k as u64, |a, i| a.wrapping_mul(31).wrapping_add(i))
        };
        let serial: Vec<u64> = (0..100).filter(|k| k % 5 != 3).map(cost).collect();
        for threads in [1, 2, 3, 8, 200] {
            let got = map_chunks(threads, 100, |k| (k % 5 != 3).then(|| vec![cost(k)]));
            assert_eq!(got, serial, "{threads} threads");
        }
        assert!(map_chunks(4, 0, |_| Some(vec![1u8])).is_empty());
        for bad in [0usize, 41, 99] {
            let r = std::panic::catch_unwind(|| {
                map_chunks(2, 100, |k| {
                    assert!(k != bad, "chunk {bad}");
                    Some(vec![k])
                })
            });
            assert!(r.is_err(), "chunk {bad}");
        }
    }
}
