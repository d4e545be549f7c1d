//! Running independent per-pair work on every core with results in input order, so the outcome
//! does not depend on the thread count (determinism): the calling thread and scoped helpers take
//! chunks from a shared counter (`interfere_geometry::parallel::map_chunks`).

use interfere_geometry::parallel::map_chunks;
use std::sync::{Mutex, PoisonError};

/// The number of worker threads to use: `INTERFERE_THREADS` when set to a positive integer,
/// else the machine's available parallelism (asked once:
/// `interfere_geometry::parallel::available_threads`).
pub fn thread_count() -> usize {
    std::env::var("INTERFERE_THREADS")
        .ok()
        .and_then(|s| s.parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or_else(interfere_geometry::parallel::available_threads)
}

/// Chunks per thread of a map: small enough that a helper that starts late (or a thread whose
/// pairs are light) still takes its share of what is left, large enough to keep the counter cold.
const CHUNKS_PER_THREAD: usize = 8;

/// The chunk length for `len` items on `threads` threads.
fn chunk_len(len: usize, threads: usize) -> usize {
    len.div_ceil(CHUNKS_PER_THREAD * threads).max(1)
}

/// `items.map(f)` on up to `threads` threads, in order. A panic in `f` is propagated.
///
/// The calling thread works too, beside `threads − 1` scoped helpers, and every thread takes the
/// next chunk of items from a shared counter: on the 2-core reference machine (a virtual one) a
/// helper runs about 77 µs after it is started when the caller keeps its core busy, and the
/// caller used to wait idle while one contiguous half per thread was mapped (the helpers then
/// started on the caller's core, and the maps of a 150-box pile ran no faster than on one thread;
/// docs/benchmarks.md, "Two threads in the contact stage").
pub fn par_map_with<T: Sync, R: Send>(
    threads: usize,
    items: &[T],
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    if threads <= 1 || items.len() < 2 {
        return items.iter().map(&f).collect();
    }
    let chunks: Vec<&[T]> = items.chunks(chunk_len(items.len(), threads)).collect();
    map_chunks(threads, chunks.len(), |k| {
        Some(chunks[k].iter().map(&f).collect())
    })
}

/// `items.map(f)` with `f` taking each item mutably, on up to `threads` threads, in order (as
/// [`par_map_with`]). A panic in `f` is propagated.
pub fn par_map_mut_with<T: Send, R: Send>(
    threads: usize,
    items: &mut [T],
    f: impl Fn(&mut T) -> R + Sync,
) -> Vec<R> {
    if threads <= 1 || items.len() < 2 {
        return items.iter_mut().map(&f).collect();
    }
    let chunk = chunk_len(items.len(), threads);
    let slots: Vec<Mutex<Option<&mut [T]>>> = items
        .chunks_mut(chunk)
        .map(|c| Mutex::new(Some(c)))
        .collect();
    map_chunks(threads, slots.len(), |k| {
        let taken = slots[k]
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        taken.map(|c| c.iter_mut().map(&f).collect())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_is_kept_for_any_thread_count() {
        let items: Vec<u64> = (0..1000).collect();
        let serial: Vec<u64> = items.iter().map(|x| x * x + 1).collect();
        for threads in [1, 2, 3, 7, 64] {
            assert_eq!(par_map_with(threads, &items, |x| x * x + 1), serial);
        }
        assert!(par_map_with(4, &[] as &[u64], |x| *x).is_empty());
        for threads in [1, 2, 3, 7, 64] {
            let mut items = items.clone();
            let got = par_map_mut_with(threads, &mut items, |x| {
                *x += 1;
                *x * 2
            });
            assert_eq!(got, (1..=1000).map(|x| x * 2).collect::<Vec<u64>>());
            assert_eq!(items, (1..=1000).collect::<Vec<u64>>());
        }
        // Items of very different cost (a few heavy ones together), any thread count: the
        // chunks come back in order.
        let cost = |x: &u64| {
            let n = if *x % 97 < 3 { 20_000 } else { 10 };
            (0..n).fold(*x, |a, i| a.wrapping_mul(31).wrapping_add(i))
        };
        let serial: Vec<u64> = items.iter().map(cost).collect();
        for threads in [2, 3, 5] {
            assert_eq!(par_map_with(threads, &items, cost), serial);
        }
    }

    /// A panic in the work, on the calling thread or a helper, reaches the caller.
    #[test]
    fn a_panic_in_the_work_is_propagated() {
        for bad in [0u64, 57, 99] {
            let items: Vec<u64> = (0..100).collect();
            let r = std::panic::catch_unwind(|| {
                par_map_with(2, &items, |&x| {
                    assert!(x != bad, "item {bad}");
                    x
                })
            });
            assert!(r.is_err(), "item {bad}");
            let mut items = items;
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                par_map_mut_with(3, &mut items, |x| {
                    assert!(*x != bad, "item {bad}");
                    *x
                })
            }));
            assert!(r.is_err(), "item {bad}");
        }
    }
}
