//! Contact: which candidate pairs touch and what they exert. The contact stage's traits and what
//! flows between them (`stage`), the CPU stage (`cpu_stage`): the exact narrow phase
//! (`narrow_phase`, with the closed-form primitive pairs in `primitive_pairs`) then the volume
//! stage (`volume_stage`), whose pairs' intersection volumes become the parts of a manifold in
//! `parts/`; contacts computed at an earlier step and advanced by their gradient (`latent`). This
//! file holds the contact types the solver takes and the analytic sources its tests use.
//!
//! Two contact models feed the solver:
//! - **point contacts** (`point`, `normal` from body a to body b, penetration `depth`), one impulse
//!   per contact as in Lin–Manocha 1996 §5;
//! - **volume contacts** (Wang–Faure–Pai 2012 §2.2): the intersection volume `V ≥ 0` of a pair and
//!   its gradient with respect to body b's pose. The gradient is a generalized force: `linear =
//!   ∂V/∂x_b` and `angular = ∂V/∂θ_b` with rotations taken about the world point `point`; body a's
//!   gradient is minus body b's about the same point (the volume depends only on the relative
//!   pose). The solver turns `V` and the gradient into a Signorini constraint (see `solver`).
//!
//! A [`ContactSource`] produces the contacts of the current state for the integrator: the step's
//! latent contacts (`latent`) in a `Simulation`, and, in the tests, the analytic sources of
//! `analytic`. The exact volume of a mesh below a plane with its exact gradient
//! ([`volume_below_plane`], [`volume_below_plane_split`]) is here too: half-space contacts use it.

#[cfg(test)]
pub(crate) mod analytic;
pub(crate) mod cpu_stage;
pub(crate) mod latent;
pub(crate) mod narrow_phase;
pub(crate) mod overrides;
pub(crate) mod parts;
pub(crate) mod primitive_pairs;
pub(crate) mod speculative;
pub(crate) mod stage;
pub(crate) mod volume_stage;

use crate::body::Body;
use interfere_geometry::glam::{DMat3, DVec3};
use serde::{Deserialize, Serialize};

pub use crate::body::BodyId;

/// A point contact between bodies `body_a` and `body_b`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointContact {
    /// First body.
    pub body_a: BodyId,
    /// Second body.
    pub body_b: BodyId,
    /// Contact point, world space.
    pub point: DVec3,
    /// Unit normal pointing from body a to body b.
    pub normal: DVec3,
    /// Penetration depth (positive when overlapping, negative for a speculative gap).
    pub depth: f64,
    /// Feature key, stable from step to step for the same touching features (warm starting).
    pub feature: u64,
}

/// A volume contact between bodies `body_a` and `body_b` (Wang–Faure–Pai 2012 §2.2).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct VolumeContact {
    /// First body.
    pub body_a: BodyId,
    /// Second body.
    pub body_b: BodyId,
    /// Intersection volume, `≥ 0`.
    pub volume: f64,
    /// Reference point for the angular gradient and the point where friction acts (for example
    /// the centroid of the intersection or of its boundary).
    pub point: DVec3,
    /// `∂V/∂x_b`: change of volume per unit translation of body b (body a's is the negative).
    pub linear: DVec3,
    /// `∂V/∂θ_b`: change of volume per unit rotation of body b about `point` (body a's is the
    /// negative).
    pub angular: DVec3,
    /// Feature key for warm starting.
    pub feature: u64,
}

impl VolumeContact {
    /// Whether this is a speculative part of a moving pair: a contact its motion over the step
    /// would make, carried back to now (`contact::speculative`), or a part of the last step's
    /// contact that has come apart since (`Simulation::persist`): not an overlap the pair has.
    /// Contact messages and gizmos leave these out.
    pub fn is_predicted(&self) -> bool {
        self.feature & (speculative::SPECULATIVE_FEATURE | speculative::SEPARATED_FEATURE) != 0
    }
}

/// The contacts of one state.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Contacts {
    /// Point contacts.
    pub points: Vec<PointContact>,
    /// Volume contacts.
    pub volumes: Vec<VolumeContact>,
    /// Per-pair changes from a contact hook, sorted by pair ([`crate::ContactHook`]).
    #[serde(default)]
    pub overrides: Vec<overrides::PairOverride>,
}

impl Contacts {
    /// Removes all contacts, keeping the allocations.
    pub fn clear(&mut self) {
        self.points.clear();
        self.volumes.clear();
        self.overrides.clear();
    }

    /// Total number of contacts.
    pub fn len(&self) -> usize {
        self.points.len() + self.volumes.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Something that finds the contacts of the current state. Implementations append to `out`
/// (which the world clears beforehand) and must be deterministic: the same bodies give the same
/// contacts in the same order.
pub trait ContactSource {
    /// Appends the contacts between `bodies` (indexed by [`BodyId`]).
    fn contacts(&mut self, bodies: &[Body], out: &mut Contacts);
}

impl<A: ContactSource, B: ContactSource> ContactSource for (A, B) {
    fn contacts(&mut self, bodies: &[Body], out: &mut Contacts) {
        self.0.contacts(bodies, out);
        self.1.contacts(bodies, out);
    }
}

impl<S: ContactSource + ?Sized> ContactSource for Box<S> {
    fn contacts(&mut self, bodies: &[Body], out: &mut Contacts) {
        (**self).contacts(bodies, out);
    }
}

/// Volume of a closed surface below the plane `n·x = offset` and its gradient with respect to
/// translating and rotating the surface (about `point`, the returned cap centroid estimate).
/// Returns `(volume, linear, angular, point)`; `None` if nothing is below.
pub fn volume_below_plane(
    vertices: &[DVec3],
    triangles: &[[u32; 3]],
    n: DVec3,
    offset: f64,
) -> Option<(f64, DVec3, DVec3, DVec3)> {
    let o = n * offset;
    let mut six_v = 0.0;
    let mut lin = DVec3::ZERO;
    let mut moment = DVec3::ZERO; // Σ c_t × a_t about the origin
    // Cap centroid from its boundary: each crossing triangle contributes one boundary segment
    // from its exit crossing to its entry crossing (consistently oriented); fan them from o.
    let mut cap_area = 0.0;
    let mut cap_moment = DVec3::ZERO;
    let mut crossings = [DVec3::ZERO; 2];
    let mut poly: Vec<DVec3> = Vec::with_capacity(4);
    for tri in triangles {
        let mut p = [DVec3::ZERO; 3];
        for k in 0..3 {
            p[k] = *vertices.get(tri[k] as usize)?;
        }
        let s = p.map(|q| offset - n.dot(q)); // > 0 below
        poly.clear();
        let mut nc = 0;
        for k in 0..3 {
            let (a, b) = (p[k], p[(k + 1) % 3]);
            let (sa, sb) = (s[k], s[(k + 1) % 3]);
            if sa >= 0.0 {
                poly.push(a);
            }
            if (sa >= 0.0) != (sb >= 0.0) {
                let t = sa / (sa - sb);
                let x = a + (b - a) * t;
                poly.push(x);
                // Slot 0: where the boundary leaves the submerged part, slot 1: where it
                // re-enters; the cap edge of this triangle runs from the first to the second.
                crossings[if sa >= 0.0 { 0 } else { 1 }] = x;
                nc += 1;
            }
        }
        if nc == 2 {
            let [x1, x2] = crossings;
            let a = 0.5 * n.dot((x1 - o).cross(x2 - o));
            cap_area += a;
            cap_moment += (o + x1 + x2) * (a / 3.0);
        }
        for k in 1..poly.len().saturating_sub(1) {
            let (a, b, c) = (poly[0], poly[k], poly[k + 1]);
            six_v += (a - o).dot((b - o).cross(c - o));
            let area = (b - a).cross(c - a) * 0.5;
            lin += area;
            moment += ((a + b + c) / 3.0).cross(area);
        }
    }
    let volume = six_v / 6.0;
    if volume <= 0.0 || !volume.is_finite() {
        return None;
    }
    // Friction and torque reference: the cap's area centroid (or, when the solid lies entirely
    // below and there is no cap, the projection of the vertex mean onto the plane).
    let point = if cap_area.abs() > 1e-300 {
        cap_moment / cap_area
    } else {
        let mean = vertices.iter().copied().sum::<DVec3>() / vertices.len().max(1) as f64;
        mean + n * (offset - n.dot(mean))
    };
    let angular = moment - point.cross(lin);
    Some((volume, lin, angular, point))
}

/// One part of a split volume contact: see [`volume_below_plane_split`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct VolumePart {
    /// Volume of this part.
    pub volume: f64,
    /// `∂V/∂x` of this part.
    pub linear: DVec3,
    /// `∂V/∂θ` of this part about `point`.
    pub angular: DVec3,
    /// Reference point: the part's downward-facing area centroid projected onto the plane.
    pub point: DVec3,
    /// Its quadrant around the cap centroid, `0..4` (stable while the cut stays put).
    pub quadrant: u8,
}

/// Keeps the part of the convex polygon `poly` where `dist ≥ 0` (Sutherland–Hodgman).
fn clip_polygon(poly: &[DVec3], dist: impl Fn(DVec3) -> f64, out: &mut Vec<DVec3>) {
    out.clear();
    for k in 0..poly.len() {
        let (a, b) = (poly[k], poly[(k + 1) % poly.len()]);
        let (da, db) = (dist(a), dist(b));
        if da >= 0.0 {
            out.push(a);
        }
        if (da >= 0.0) != (db >= 0.0) {
            out.push(a + (b - a) * (da / (da - db)));
        }
    }
}

/// Two unit vectors completing the unit `n` to an orthonormal basis, chosen in the frame `frame`
/// (a rotation: `n.any_orthonormal_pair()` of `n`'s coordinates in that frame, turned back), so
/// that they turn with the body whose frame it is: a scene and its turned copy get the same
/// tangents, and so the same friction rows and contact parts. With the identity frame it is
/// `n.any_orthonormal_pair()` bit for bit.
pub(crate) fn tangent_pair_in(n: DVec3, frame: &DMat3) -> (DVec3, DVec3) {
    let (t1, t2) = (frame.transpose() * n).any_orthonormal_pair();
    (*frame * t1, *frame * t2)
}

/// The volume below the plane split into up to four parts by the two vertical planes through the
/// cap centroid along the tangent directions `n.any_orthonormal_pair()` (the quadrants): see
/// `volume_below_plane_split_in`, here with the world's axes as the frame.
pub fn volume_below_plane_split(
    vertices: &[DVec3],
    triangles: &[[u32; 3]],
    n: DVec3,
    offset: f64,
) -> Option<Vec<VolumePart>> {
    volume_below_plane_split_in(vertices, triangles, n, offset, &DMat3::IDENTITY)
}

/// The volume below the plane split into up to four parts by the two vertical planes through the
/// cap centroid along the tangent directions [`tangent_pair_in`]`(n, frame)` (the quadrants;
/// `frame` is the half-space body's orientation, so that they turn with it). Each part
/// is an exact volume with its exact gradient (Reynolds transport: `dV/dt = ∫ (v + ω × (x − q))·dA`
/// over the part's share of the moving surface, the cut planes held fixed), so a resting face
/// gets four constraints that resist tilting at first order, like a four-point manifold, where a
/// single volume constraint is only neutrally stable. Parts with no volume are omitted.
pub(crate) fn volume_below_plane_split_in(
    vertices: &[DVec3],
    triangles: &[[u32; 3]],
    n: DVec3,
    offset: f64,
    frame: &DMat3,
) -> Option<Vec<VolumePart>> {
    let (_, _, _, p) = volume_below_plane(vertices, triangles, n, offset)?;
    let (t1, t2) = tangent_pair_in(n, frame);
    let mut six_v = [0.0; 4];
    let mut lin = [DVec3::ZERO; 4];
    let mut moment = [DVec3::ZERO; 4]; // about p
    let mut wsum = [0.0; 4];
    let mut wc = [DVec3::ZERO; 4];
    let (mut below, mut half, mut quarter) = (Vec::new(), Vec::new(), Vec::new());
    for tri in triangles {
        let mut tri_p = [DVec3::ZERO; 3];
        for k in 0..3 {
            tri_p[k] = *vertices.get(tri[k] as usize)?;
        }
        clip_polygon(&tri_p, |x| offset - n.dot(x), &mut below);
        if below.len() < 3 {
            continue;
        }
        for (q, (s1, s2)) in [(1.0, 1.0), (-1.0, 1.0), (-1.0, -1.0), (1.0, -1.0)]
            .into_iter()
            .enumerate()
        {
            clip_polygon(&below, |x| s1 * t1.dot(x - p), &mut half);
            if half.len() < 3 {
                continue;
            }
            clip_polygon(&half, |x| s2 * t2.dot(x - p), &mut quarter);
            for k in 1..quarter.len().saturating_sub(1) {
                let (a, b, c) = (quarter[0], quarter[k], quarter[k + 1]);
                six_v[q] += (a - p).dot((b - p).cross(c - p));
                let area = (b - a).cross(c - a) * 0.5;
                let centroid = (a + b + c) / 3.0;
                lin[q] += area;
                moment[q] += (centroid - p).cross(area);
                let w = (-n.dot(area)).max(0.0);
                wsum[q] += w;
                wc[q] += centroid * w;
            }
        }
    }
    let mut parts = Vec::with_capacity(4);
    for q in 0..4 {
        let volume = six_v[q] / 6.0;
        if !(volume > 0.0 && volume.is_finite()) {
            continue;
        }
        let c = if wsum[q] > 0.0 { wc[q] / wsum[q] } else { p };
        let point = c + n * (offset - n.dot(c));
        parts.push(VolumePart {
            volume,
            linear: lin[q],
            angular: moment[q] + (p - point).cross(lin[q]),
            point,
            quadrant: q as u8,
        });
    }
    Some(parts)
}

#[cfg(test)]
mod tests {
    use super::analytic::*;
    use super::*;
    use interfere_geometry::Solid;
    use interfere_geometry::glam::{DMat3, DQuat};
    use interfere_geometry::shapes::{cuboid, icosphere, torus};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn posed(solid: &Solid, q: DQuat, t: DVec3) -> Vec<DVec3> {
        let r = DMat3::from_quat(q);
        solid
            .vertices()
            .iter()
            .map(|v| r * v.as_dvec3() + t)
            .collect()
    }

    #[test]
    fn box_below_plane_matches_analytic() {
        // Half extents exactly representable in f32, so the mesh is exactly this box.
        let half = DVec3::new(0.5, 0.375, 0.25);
        let solid = cuboid(half.as_vec3()).unwrap();
        for depth in [1e-6, 0.1, 0.25, 0.49] {
            let verts = posed(
                &solid,
                DQuat::IDENTITY,
                DVec3::new(0.0, 0.0, half.z - depth),
            );
            let (v, lin, ang, point) =
                volume_below_plane(&verts, solid.triangles(), DVec3::Z, 0.0).unwrap();
            let area = 4.0 * half.x * half.y;
            assert!((v - area * depth).abs() < 1e-12, "{v} vs {}", area * depth);
            assert!(
                (lin - DVec3::new(0.0, 0.0, -area)).length() < 1e-12,
                "{lin}"
            );
            assert!(ang.length() < 1e-12, "{ang}");
            assert!(point.z.abs() < 1e-12 && point.truncate().length() < 1e-12);
        }
        // Entirely above or exactly touching: no contact.
        let verts = posed(&solid, DQuat::IDENTITY, DVec3::new(0.0, 0.0, half.z));
        assert!(volume_below_plane(&verts, solid.triangles(), DVec3::Z, 0.0).is_none());
        // Entirely below: the whole volume, and zero gradient (closed surface, all submerged).
        let verts = posed(&solid, DQuat::IDENTITY, DVec3::new(0.0, 0.0, -5.0));
        let (v, lin, ang, _) =
            volume_below_plane(&verts, solid.triangles(), DVec3::Z, 0.0).unwrap();
        assert!((v - 8.0 * half.x * half.y * half.z).abs() < 1e-12);
        assert!(lin.length() < 1e-12 && ang.length() < 1e-12);
    }

    /// Oracle: central finite differences of the clipped volume for random poses of a box and a
    /// non-convex torus against random planes.
    #[test]
    fn gradient_matches_finite_differences() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let shapes = [
            cuboid(DVec3::new(0.5, 0.3, 0.2).as_vec3()).unwrap(),
            torus(0.6, 0.2, 24, 12).unwrap(),
            icosphere(0.5, 2).unwrap(),
        ];
        let mut checked = 0;
        for case in 0..60 {
            let solid = &shapes[case % shapes.len()];
            let axis = DVec3::new(
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
            )
            .normalize_or(DVec3::X);
            let q = DQuat::from_axis_angle(axis, rng.random_range(-3.0..3.0));
            let t = DVec3::new(
                rng.random_range(-0.2..0.2),
                rng.random_range(-0.2..0.2),
                rng.random_range(-0.3..0.3),
            );
            let n = DVec3::new(
                rng.random_range(-0.3..0.3),
                rng.random_range(-0.3..0.3),
                1.0,
            )
            .normalize();
            let offset = rng.random_range(-0.1..0.1);
            let tris = solid.triangles();
            let base = posed(solid, q, t);
            let Some((v, lin, ang, p)) = volume_below_plane(&base, tris, n, offset) else {
                continue;
            };
            let vol =
                |verts: &[DVec3]| volume_below_plane(verts, tris, n, offset).map_or(0.0, |x| x.0);
            let eps = 1e-6;
            for k in 0..3 {
                let d = DVec3::AXES[k] * eps;
                let plus: Vec<DVec3> = base.iter().map(|x| *x + d).collect();
                let minus: Vec<DVec3> = base.iter().map(|x| *x - d).collect();
                let fd = (vol(&plus) - vol(&minus)) / (2.0 * eps);
                assert!(
                    (fd - lin[k]).abs() < 1e-5,
                    "case {case} lin {k}: {fd} vs {}",
                    lin[k]
                );
                let rp = DQuat::from_scaled_axis(DVec3::AXES[k] * eps);
                let rm = DQuat::from_scaled_axis(-DVec3::AXES[k] * eps);
                let plus: Vec<DVec3> = base.iter().map(|x| rp * (*x - p) + p).collect();
                let minus: Vec<DVec3> = base.iter().map(|x| rm * (*x - p) + p).collect();
                let fd = (vol(&plus) - vol(&minus)) / (2.0 * eps);
                assert!(
                    (fd - ang[k]).abs() < 1e-5,
                    "case {case} ang {k}: {fd} vs {}",
                    ang[k]
                );
            }
            assert!(v > 0.0);
            checked += 1;
        }
        assert!(checked > 30, "{checked}");
    }

    /// Oracle for the split: the parts sum to the total volume and gradient, and each part's
    /// gradient matches finite differences with the cut planes held fixed.
    #[test]
    fn split_parts_sum_to_total_and_match_finite_differences() {
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let shapes = [
            cuboid(DVec3::new(0.5, 0.3, 0.2).as_vec3()).unwrap(),
            torus(0.6, 0.2, 24, 12).unwrap(),
        ];
        let mut checked = 0;
        for case in 0..30 {
            let solid = &shapes[case % shapes.len()];
            let axis = DVec3::new(
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
            )
            .normalize_or(DVec3::X);
            let q = DQuat::from_axis_angle(axis, rng.random_range(-3.0..3.0));
            let t = DVec3::new(0.0, 0.0, rng.random_range(-0.2..0.2));
            let tris = solid.triangles();
            let base = posed(solid, q, t);
            let Some((v, lin, _, p)) = volume_below_plane(&base, tris, DVec3::Z, 0.0) else {
                continue;
            };
            let parts = volume_below_plane_split(&base, tris, DVec3::Z, 0.0).unwrap();
            let vs: f64 = parts.iter().map(|x| x.volume).sum();
            let ls: DVec3 = parts.iter().map(|x| x.linear).sum();
            assert!((vs - v).abs() < 1e-12 * v.max(1.0), "{vs} vs {v}");
            assert!((ls - lin).length() < 1e-12, "{ls} vs {lin}");
            // Finite differences of one part with the cut planes (through p) fixed.
            let (t1, t2) = DVec3::Z.any_orthonormal_pair();
            let part_volume = |verts: &[DVec3], qd: (f64, f64)| -> f64 {
                let (mut below, mut half, mut quarter) = (Vec::new(), Vec::new(), Vec::new());
                let mut six = 0.0;
                for tri in tris {
                    let tp = tri.map(|i| verts[i as usize]);
                    clip_polygon(&tp, |x| -x.z, &mut below);
                    clip_polygon(&below, |x| qd.0 * t1.dot(x - p), &mut half);
                    clip_polygon(&half, |x| qd.1 * t2.dot(x - p), &mut quarter);
                    for k in 1..quarter.len().saturating_sub(1) {
                        six += (quarter[0] - p).dot((quarter[k] - p).cross(quarter[k + 1] - p));
                    }
                }
                six / 6.0
            };
            let quadrants = [(1.0, 1.0), (-1.0, 1.0), (-1.0, -1.0), (1.0, -1.0)];
            for qd in quadrants {
                let vq = part_volume(&base, qd);
                let Some(part) = parts.iter().find(|x| (x.volume - vq).abs() < 1e-15) else {
                    assert!(vq <= 1e-15, "missing part of volume {vq}");
                    continue;
                };
                let eps = 1e-6;
                for k in 0..3 {
                    let d = DVec3::AXES[k] * eps;
                    let plus: Vec<DVec3> = base.iter().map(|x| *x + d).collect();
                    let minus: Vec<DVec3> = base.iter().map(|x| *x - d).collect();
                    let fd = (part_volume(&plus, qd) - part_volume(&minus, qd)) / (2.0 * eps);
                    assert!(
                        (fd - part.linear[k]).abs() < 1e-5,
                        "lin {fd} vs {}",
                        part.linear[k]
                    );
                    let c = part.point;
                    let rp = DQuat::from_scaled_axis(DVec3::AXES[k] * eps);
                    let rm = DQuat::from_scaled_axis(-DVec3::AXES[k] * eps);
                    let plus: Vec<DVec3> = base.iter().map(|x| rp * (*x - c) + c).collect();
                    let minus: Vec<DVec3> = base.iter().map(|x| rm * (*x - c) + c).collect();
                    let fd = (part_volume(&plus, qd) - part_volume(&minus, qd)) / (2.0 * eps);
                    assert!(
                        (fd - part.angular[k]).abs() < 1e-5,
                        "ang {fd} vs {}",
                        part.angular[k]
                    );
                }
                checked += 1;
            }
        }
        assert!(checked > 30, "{checked}");
    }

    #[test]
    fn manifold_is_at_most_four_points_and_keeps_the_deepest() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        for _ in 0..50 {
            let cands: Vec<(DVec3, f64, u32)> = (0..rng.random_range(1..40))
                .map(|i| {
                    let p = DVec3::new(
                        rng.random_range(-1.0..1.0),
                        rng.random_range(-1.0..1.0),
                        0.0,
                    );
                    (p, rng.random_range(0.0..0.1), i)
                })
                .collect();
            let picked: Vec<usize> = reduce_manifold(&cands, DVec3::Z)
                .into_iter()
                .flatten()
                .collect();
            assert_eq!(picked.len(), cands.len().min(4));
            let deepest = cands.iter().map(|c| c.1).fold(f64::NEG_INFINITY, f64::max);
            assert!(picked.iter().any(|&i| cands[i].1 == deepest));
            let mut sorted = picked.clone();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(sorted.len(), picked.len(), "duplicates");
        }
        // Degenerate: all candidates at the same point; picks distinct indices, no panic.
        let same = vec![(DVec3::ZERO, 0.0, 0); 10];
        let picked: Vec<usize> = reduce_manifold(&same, DVec3::Z)
            .into_iter()
            .flatten()
            .collect();
        assert!(!picked.is_empty() && picked.len() <= 4);
    }

    #[test]
    fn sources_ignore_missing_bodies_and_bad_input() {
        assert!(Plane::new(0, DVec3::ZERO, DVec3::ZERO).is_none());
        assert!(Plane::new(0, DVec3::Z, DVec3::NAN).is_none());
        let mut s = SphereSource::new(f64::NAN);
        assert!(!s.add_sphere(0, -1.0));
        assert!(s.add_sphere(7, 1.0));
        s.add_plane(Plane::new(3, DVec3::Z, DVec3::ZERO).unwrap());
        let mut out = Contacts::default();
        s.contacts(&[], &mut out);
        assert!(out.is_empty());
        let mut h = HalfSpaceSource::new(-1.0);
        h.add_plane(Plane::new(0, DVec3::Z, DVec3::ZERO).unwrap());
        h.add_mesh(5, &cuboid(DVec3::ONE.as_vec3()).unwrap());
        h.contacts(&[], &mut out);
        assert!(out.is_empty());
    }
}
