//! The two shared-memory parallel algorithms of Kitamura et al. 1995
//! (`kitamura-1995-parallel-colliding-faces.md`, §4.2 and §4.3), on `std::thread::scope`.
//!
//! * Static load distribution (§4.2): steps 1–3 run serially; thread `k` of `N` then tests
//!   candidate pairs `k, k + N, k + 2N, …` (step 4).
//! * Dynamic load distribution (§4.3, producer–consumer): steps 1–2 run serially; the calling
//!   thread is the producer and runs step 3, sending each leaf cell's not-yet-seen face pairs
//!   over a `crossbeam-channel` as one batch; `N − 1` consumer threads test batches as they
//!   arrive. When the octree is exhausted the producer closes the channel, consumes what is
//!   left itself, then joins the consumers.
//!
//! Both return exactly what [`super::detect`] returns: the colliding pairs are merged and
//! sorted, and the candidate count is the number of distinct pairs.

use super::octree::{for_each_leaf, pair, regions_with_faces};
use super::{
    Detection, FacePair, KitamuraConfig, KitamuraError, MovingMesh, candidate_pairs, check_input,
    pair_collides,
};
use std::collections::HashSet;

/// Static load distribution (§4.2) on `threads` threads (the calling thread is one of them).
pub fn detect_static(
    objects: &[MovingMesh],
    config: &KitamuraConfig,
    threads: usize,
) -> Result<Detection, KitamuraError> {
    if threads == 0 {
        return Err(KitamuraError::NoThreads);
    }
    let candidates = candidate_pairs(objects, config)?;
    let work = |k: usize| -> Vec<FacePair> {
        candidates
            .iter()
            .skip(k)
            .step_by(threads)
            .filter(|p| pair_collides(objects, p))
            .copied()
            .collect()
    };
    let mut colliding = std::thread::scope(|s| {
        let handles: Vec<_> = (1..threads).map(|k| s.spawn(move || work(k))).collect();
        let mut all = work(0);
        for h in handles {
            // A worker can only panic through a bug in step 4; re-raise it unchanged.
            match h.join() {
                Ok(v) => all.extend(v),
                Err(e) => std::panic::resume_unwind(e),
            }
        }
        all
    });
    colliding.sort_unstable();
    Ok(Detection {
        colliding,
        candidates: candidates.len(),
    })
}

fn consume(
    objects: &[MovingMesh],
    rx: &crossbeam_channel::Receiver<Vec<FacePair>>,
) -> Vec<FacePair> {
    let mut out = Vec::new();
    for batch in rx.iter() {
        out.extend(batch.into_iter().filter(|p| pair_collides(objects, p)));
    }
    out
}

/// Dynamic load distribution (§4.3) on `threads` threads: the calling thread produces candidate
/// pairs (step 3) for `threads − 1` consumers, then helps consume. With one thread the producer
/// consumes everything itself after producing.
pub fn detect_dynamic(
    objects: &[MovingMesh],
    config: &KitamuraConfig,
    threads: usize,
) -> Result<Detection, KitamuraError> {
    if threads == 0 {
        return Err(KitamuraError::NoThreads);
    }
    check_input(objects, config)?;
    let regions = regions_with_faces(objects);
    let (tx, rx) = crossbeam_channel::unbounded::<Vec<FacePair>>();
    let (mut colliding, candidates) = std::thread::scope(|s| {
        let handles: Vec<_> = (1..threads)
            .map(|_| {
                let rx = rx.clone();
                s.spawn(move || consume(objects, &rx))
            })
            .collect();
        // Producer: step 3, sending each leaf's new pairs at once.
        let mut candidates = 0usize;
        for rf in &regions {
            let mut seen: HashSet<(u32, u32)> = HashSet::new();
            for_each_leaf(rf, config.depth, &mut |fa, fb| {
                let mut batch = Vec::new();
                for a in fa {
                    for b in fb {
                        if seen.insert((a.0, b.0)) {
                            batch.push(pair(&rf.region, a.0, b.0));
                        }
                    }
                }
                if !batch.is_empty() {
                    candidates += batch.len();
                    // The receiver `rx` lives until the end of this scope, so sending succeeds.
                    let _ = tx.send(batch);
                }
            });
        }
        drop(tx);
        // The producer becomes a consumer, then joins the others.
        let mut all = consume(objects, &rx);
        for h in handles {
            match h.join() {
                Ok(v) => all.extend(v),
                Err(e) => std::panic::resume_unwind(e),
            }
        }
        (all, candidates)
    });
    colliding.sort_unstable();
    Ok(Detection {
        colliding,
        candidates,
    })
}
