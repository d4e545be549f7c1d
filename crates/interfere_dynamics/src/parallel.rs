//! Running independent per-pair work on every core with results in input order, so the outcome
//! does not depend on the thread count (determinism).

/// The number of worker threads to use: `INTERFERE_THREADS` when set to a positive integer,
/// else the machine's available parallelism.
pub fn thread_count() -> usize {
    std::env::var("INTERFERE_THREADS")
        .ok()
        .and_then(|s| s.parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// `items.map(f)` on up to `threads` threads, in order (contiguous chunks, one scoped thread
/// each). A panic in `f` is propagated.
pub fn par_map_with<T: Sync, R: Send>(
    threads: usize,
    items: &[T],
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    if threads <= 1 || items.len() < 2 {
        return items.iter().map(&f).collect();
    }
    let chunk = items.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let handles: Vec<_> = items
            .chunks(chunk)
            .map(|c| {
                let f = &f;
                scope.spawn(move || c.iter().map(f).collect::<Vec<R>>())
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    })
}

/// `items.map(f)` with `f` taking each item mutably, on up to `threads` threads, in order
/// (contiguous chunks, one scoped thread each). A panic in `f` is propagated.
pub fn par_map_mut_with<T: Send, R: Send>(
    threads: usize,
    items: &mut [T],
    f: impl Fn(&mut T) -> R + Sync,
) -> Vec<R> {
    if threads <= 1 || items.len() < 2 {
        return items.iter_mut().map(&f).collect();
    }
    let chunk = items.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let handles: Vec<_> = items
            .chunks_mut(chunk)
            .map(|c| {
                let f = &f;
                scope.spawn(move || c.iter_mut().map(f).collect::<Vec<R>>())
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
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
    }
}
