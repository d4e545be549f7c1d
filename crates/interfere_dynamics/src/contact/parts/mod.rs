//! A pair's intersection volume split into the parts of its contact manifold (Wang–Faure–Pai
//! 2012 §7: a Signorini constraint per part): from the exact volume's contact regions (`exact`),
//! from ray samples (`sampled`) and against a half-space (`half_space`).

pub(crate) mod exact;
pub(crate) mod half_space;
pub(crate) mod merge;
pub(crate) mod sampled;
