//! The "SAT lite" box overlap test of Greß & Zachmann 2004 (section 4.3 and appendix A, after
//! van den Bergen 1997): box `A` in its own frame against box `B` mapped into `A`'s frame by a
//! rigid `b_to_a`, testing only the 3 face axes of `A` and the 3 face axes of `B` and skipping
//! the 9 edge-edge cross axes.
//!
//! Skipping axes can only make the test report overlap for some disjoint pairs, never the other
//! way round, so it is conservative. It runs in `f64` on the exact `f64` images of the `f32` box
//! corners and declares a pair disjoint only when an axis separates them by more than a tiny
//! relative margin ([`SatLite::RELATIVE_MARGIN`] times the magnitude of the coordinates
//! involved), so the rounding of the `f64` arithmetic cannot make it miss an overlap (touching
//! boxes overlap). Non-finite poses make every pair overlap.

use super::balanced::BalancedNode;
use crate::aabb::Aabb;
use crate::pose::DPose;
use glam::{DMat3, DVec3};

/// The SAT-lite test for one relative pose, with the rotation and its absolute value
/// precomputed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SatLite {
    rotation: DMat3,
    rotation_t: DMat3,
    abs_rotation: DMat3,
    abs_rotation_t: DMat3,
    translation: DVec3,
    finite: bool,
}

impl SatLite {
    /// A pair is declared disjoint only when an axis separates it by more than this times the
    /// magnitude of the coordinates in the test (about 10⁶ times the `f64` rounding error, and
    /// far below any `f32` spacing).
    pub const RELATIVE_MARGIN: f64 = 1e-10;

    /// Precomputes the test for `b_to_a` (maps `B`'s frame into `A`'s; its rotation part must be
    /// orthonormal up to rounding, as every pose from [`crate::Pose::to_f64`] is).
    pub fn new(b_to_a: &DPose) -> Self {
        let r = b_to_a.rotation;
        let abs = DMat3::from_cols(r.x_axis.abs(), r.y_axis.abs(), r.z_axis.abs());
        Self {
            rotation: r,
            rotation_t: r.transpose(),
            abs_rotation: abs,
            abs_rotation_t: abs.transpose(),
            translation: b_to_a.translation,
            finite: r.is_finite() && b_to_a.translation.is_finite(),
        }
    }

    /// Whether tree nodes `a` (in `A`'s frame) and `b` (in `B`'s frame) may overlap.
    #[inline]
    pub fn overlaps(&self, a: &BalancedNode, b: &BalancedNode) -> bool {
        self.test(a.dmin(), a.dmax(), b.dmin(), b.dmax(), 0.0)
    }

    /// As [`Self::overlaps`] with `a` grown by `inflate` on every side (used to record pair lists
    /// that stay valid while the pose moves by less than `inflate`).
    #[inline]
    pub fn overlaps_inflated(&self, a: &BalancedNode, b: &BalancedNode, inflate: f64) -> bool {
        self.test(a.dmin(), a.dmax(), b.dmin(), b.dmax(), inflate)
    }

    /// Whether the boxes may overlap; an empty box overlaps nothing.
    pub fn overlaps_aabb(&self, a: &Aabb, b: &Aabb) -> bool {
        if a.is_empty() || b.is_empty() {
            return false;
        }
        self.test(
            a.min.as_dvec3(),
            a.max.as_dvec3(),
            b.min.as_dvec3(),
            b.max.as_dvec3(),
            0.0,
        )
    }

    /// The test on `f64` corners; `inflate` grows `A`'s half extents.
    pub fn test(
        &self,
        a_min: DVec3,
        a_max: DVec3,
        b_min: DVec3,
        b_max: DVec3,
        inflate: f64,
    ) -> bool {
        if !self.finite {
            return true;
        }
        let ca = (a_min + a_max) * 0.5;
        let ha = (a_max - a_min) * 0.5 + DVec3::splat(inflate.max(0.0));
        let cb = (b_min + b_max) * 0.5;
        let hb = (b_max - b_min) * 0.5;
        // Centre of B minus centre of A, in A's frame.
        let d = self.rotation * cb + self.translation - ca;
        let scale = ca.abs().max_element()
            + 3.0 * cb.abs().max_element()
            + self.translation.abs().max_element()
            + 3.0 * (ha.max_element() + hb.max_element());
        let tol = Self::RELATIVE_MARGIN * scale;
        // A's axes: B's projection radius is |R| hb.
        let s = d.abs() - (ha + self.abs_rotation * hb);
        // NaN comparisons are false, so anything non-finite reports overlap.
        if s.x > tol || s.y > tol || s.z > tol {
            return false;
        }
        // B's axes: A's projection radius is |R|ᵀ ha, the centre offset Rᵀ d.
        let s = (self.rotation_t * d).abs() - (hb + self.abs_rotation_t * ha);
        !(s.x > tol || s.y > tol || s.z > tol)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pose::Pose;
    use glam::{Quat, Vec3};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn corners(min: DVec3, max: DVec3) -> [DVec3; 8] {
        std::array::from_fn(|i| {
            DVec3::new(
                if i & 1 == 0 { min.x } else { max.x },
                if i & 2 == 0 { min.y } else { max.y },
                if i & 4 == 0 { min.z } else { max.z },
            )
        })
    }

    /// Exact-ish oracle: the full 15-axis separating-axis test by projecting all 16 corners.
    /// Returns (disjoint by the full test, disjoint on one of the 6 face axes).
    fn full_sat(pose: &DPose, a: (DVec3, DVec3), b: (DVec3, DVec3)) -> (bool, bool) {
        let ca = corners(a.0, a.1);
        let cb = corners(b.0, b.1).map(|p| pose.transform_dpoint(p));
        let ea = [DVec3::X, DVec3::Y, DVec3::Z];
        let eb = [
            pose.rotation.x_axis,
            pose.rotation.y_axis,
            pose.rotation.z_axis,
        ];
        let separates = |axis: DVec3| {
            if axis.length_squared() < 1e-20 {
                return false;
            }
            let (mut a_lo, mut a_hi, mut b_lo, mut b_hi) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
            for p in ca {
                a_lo = a_lo.min(p.dot(axis));
                a_hi = a_hi.max(p.dot(axis));
            }
            for p in cb {
                b_lo = b_lo.min(p.dot(axis));
                b_hi = b_hi.max(p.dot(axis));
            }
            a_hi < b_lo || b_hi < a_lo
        };
        let face = ea.iter().chain(eb.iter()).any(|&ax| separates(ax));
        let edge = ea
            .iter()
            .any(|&x| eb.iter().any(|&y| separates(x.cross(y))));
        (face || edge, face)
    }

    fn random_pose(rng: &mut ChaCha8Rng, reach: f32) -> DPose {
        let q = loop {
            let v = glam::Vec4::new(
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
            );
            if v.length_squared() > 0.01 && v.length_squared() < 1.0 {
                break Quat::from_vec4(v.normalize());
            }
        };
        let mut c = || {
            if reach > 0.0 {
                rng.random_range(-reach..reach)
            } else {
                0.0
            }
        };
        let t = Vec3::new(c(), c(), c());
        Pose::new(q, t).to_f64()
    }

    fn random_box(rng: &mut ChaCha8Rng) -> (DVec3, DVec3) {
        let c = DVec3::new(
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
        );
        let h = DVec3::new(
            rng.random_range(0.0..1.0),
            rng.random_range(0.0..0.5),
            rng.random_range(0.0..1.5),
        );
        // Round through f32 like tree boxes.
        ((c - h).as_vec3().as_dvec3(), (c + h).as_vec3().as_dvec3())
    }

    #[test]
    fn conservative_against_full_sat_on_random_boxes() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let (mut lite_disjoint, mut full_disjoint, mut only_edge) = (0, 0, 0);
        for _ in 0..3000 {
            let pose = random_pose(&mut rng, 3.0);
            let (a, b) = (random_box(&mut rng), random_box(&mut rng));
            let lite = SatLite::new(&pose).test(a.0, a.1, b.0, b.1, 0.0);
            let (full, face) = full_sat(&pose, a, b);
            if !full {
                assert!(
                    lite,
                    "overlapping boxes reported disjoint: {pose:?} {a:?} {b:?}"
                );
            }
            // Away from ties, the lite test is exactly the face-axis part of the full test.
            assert_eq!(lite, !face, "{pose:?} {a:?} {b:?}");
            lite_disjoint += usize::from(!lite);
            full_disjoint += usize::from(full);
            only_edge += usize::from(full && !face);
        }
        assert!(lite_disjoint > 500, "the test must reject some pairs");
        assert!(
            only_edge > 0,
            "some pairs are separated only by an edge axis"
        );
        assert!(full_disjoint > lite_disjoint);
    }

    #[test]
    fn touching_boxes_overlap() {
        // B placed so that one of its corners (or face centres) lands exactly on one of A's
        // corners: the closed boxes share that point and must overlap, whatever the rotation.
        let mut rng = ChaCha8Rng::seed_from_u64(12);
        for _ in 0..500 {
            let pose = random_pose(&mut rng, 0.0);
            let (a, b) = (random_box(&mut rng), random_box(&mut rng));
            let pa = corners(a.0, a.1)[rng.random_range(0..8)];
            let pb = if rng.random_bool(0.5) {
                corners(b.0, b.1)[rng.random_range(0..8)]
            } else {
                DVec3::new((b.0.x + b.1.x) * 0.5, b.0.y, (b.0.z + b.1.z) * 0.5)
            };
            let pose = DPose {
                rotation: pose.rotation,
                translation: pa - pose.rotation * pb,
            };
            assert!(SatLite::new(&pose).test(a.0, a.1, b.0, b.1, 0.0));
        }
        // Face-to-face contact of unit cubes, exactly representable: overlap; a gap of one f32
        // step at 2.0: disjoint.
        let a = Aabb::new(Vec3::ZERO, Vec3::ONE);
        let touch = SatLite::new(&Pose::from_translation(Vec3::X).to_f64());
        assert!(touch.overlaps_aabb(&a, &a));
        let gap = SatLite::new(&Pose::from_translation(Vec3::new(1.0 + 1e-6, 0.0, 0.0)).to_f64());
        assert!(!gap.overlaps_aabb(&a, &a));
        assert!(!touch.overlaps_aabb(&a, &Aabb::EMPTY));
    }

    #[test]
    fn identity_pose_matches_aabb_overlap() {
        let mut rng = ChaCha8Rng::seed_from_u64(13);
        let sat = SatLite::new(&DPose::IDENTITY);
        for _ in 0..2000 {
            // Small integer coordinates: many exact ties.
            let mut b = || {
                let p = Vec3::new(
                    rng.random_range(-4..4) as f32,
                    rng.random_range(-4..4) as f32,
                    rng.random_range(-4..4) as f32,
                );
                let q = p + Vec3::new(
                    rng.random_range(0..3) as f32,
                    rng.random_range(0..3) as f32,
                    rng.random_range(0..3) as f32,
                );
                Aabb::new(p, q)
            };
            let (x, y) = (b(), b());
            assert_eq!(sat.overlaps_aabb(&x, &y), x.overlaps(&y), "{x:?} {y:?}");
        }
    }

    #[test]
    fn huge_coordinates_and_bad_poses() {
        let big = 1.0e30f32;
        let a = Aabb::new(Vec3::splat(big), Vec3::splat(big * 1.5));
        let pose = Pose::new(Quat::from_rotation_z(0.3), Vec3::ZERO).to_f64();
        let sat = SatLite::new(&pose);
        let b = a.transformed(&Pose::new(Quat::from_rotation_z(-0.3), Vec3::ZERO));
        assert!(sat.overlaps_aabb(&a, &b), "B rotated back onto A");
        assert!(!sat.overlaps_aabb(&a, &Aabb::new(Vec3::splat(-big), Vec3::splat(-0.5 * big))));
        let nan = DPose {
            rotation: DMat3::IDENTITY,
            translation: DVec3::new(f64::NAN, 0.0, 0.0),
        };
        let far = Aabb::new(Vec3::splat(10.0), Vec3::splat(11.0));
        assert!(
            SatLite::new(&nan).overlaps_aabb(&a, &far),
            "non-finite: conservative"
        );
        let inf = DPose {
            rotation: DMat3::IDENTITY,
            translation: DVec3::new(f64::INFINITY, 0.0, 0.0),
        };
        assert!(SatLite::new(&inf).overlaps_aabb(&a, &far));
    }

    #[test]
    fn inflation_grows_a() {
        let a = BalancedNode {
            min: [0.0; 3],
            max: [1.0; 3],
            ..Default::default()
        };
        let b = a;
        let sat = SatLite::new(&Pose::from_translation(Vec3::new(1.5, 0.0, 0.0)).to_f64());
        assert!(!sat.overlaps(&a, &b));
        assert!(!sat.overlaps_inflated(&a, &b, 0.49));
        assert!(sat.overlaps_inflated(&a, &b, 0.5));
    }
}
