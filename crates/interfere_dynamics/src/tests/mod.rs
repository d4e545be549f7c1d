//! The crate's tests, with access to its internals: the step, the solver and its physics claims
//! (`scenes`, which drive the integrator with analytic contact sources as fixtures), forces,
//! primitive and compound pairs, queries.

mod character;
mod forces;
mod hooks;
mod joints;
mod mesh_compound;
mod primitive_pairs;
mod query;
mod scenes;
mod simulation;
mod test_bodies;
