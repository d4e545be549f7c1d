//! Collision: what a body collides with and which bodies may touch. The shapes a body carries
//! (`shape`: meshes, primitives, compounds, half-spaces), the speculative margins near
//! half-spaces and primitives (`margin`), and the broad phase (`broad_phase`: sweep and prune,
//! Lin–Manocha 1996 §4.1, over the shapes' world boxes). Which of those pairs really touch, and
//! their contact, is `crate::contact`'s.

pub(crate) mod broad_phase;
pub(crate) mod margin;
pub(crate) mod shape;
