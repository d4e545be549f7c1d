//! Tests of the primitive colliders against independent oracles.
