//! Axis-aligned bounding boxes.

use crate::pose::{DPose, Pose};
use glam::{DVec3, Vec3};
use serde::{Deserialize, Serialize};

/// An axis-aligned box `[min, max]`. An empty box has `min > max` on every axis.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Aabb {
    /// Lower corner.
    pub min: Vec3,
    /// Upper corner.
    pub max: Vec3,
}

impl Default for Aabb {
    fn default() -> Self {
        Self::EMPTY
    }
}

impl Aabb {
    /// The `f32` box enclosing the `f64` box `[lo, hi]` placed by `pose`: its eight corners
    /// mapped exactly by [`DPose::transform_dpoint`], then rounded outward with a relative pad
    /// of `1e-6` so the `f32` box contains the `f64` one. `None` when a corner is not finite.
    pub fn of_placed_box(lo: DVec3, hi: DVec3, pose: &DPose) -> Option<Self> {
        let (mut wlo, mut whi) = (DVec3::INFINITY, DVec3::NEG_INFINITY);
        for k in 0..8 {
            let c = DVec3::new(
                if k & 1 == 0 { lo.x } else { hi.x },
                if k & 2 == 0 { lo.y } else { hi.y },
                if k & 4 == 0 { lo.z } else { hi.z },
            );
            let w = pose.transform_dpoint(c);
            wlo = wlo.min(w);
            whi = whi.max(w);
        }
        if !(wlo.is_finite() && whi.is_finite()) {
            return None;
        }
        let pad = |x: f64| 1e-6 * (1.0 + x.abs());
        let down = wlo.to_array().map(|x| (x - pad(x)) as f32);
        let up = whi.to_array().map(|x| (x + pad(x)) as f32);
        Some(Self {
            min: Vec3::from_array(down),
            max: Vec3::from_array(up),
        })
    }

    /// The empty box (the identity for [`Aabb::union`]).
    pub const EMPTY: Self = Self {
        min: Vec3::splat(f32::INFINITY),
        max: Vec3::splat(f32::NEG_INFINITY),
    };

    /// A box from its corners.
    pub fn new(min: Vec3, max: Vec3) -> Self {
        Self { min, max }
    }

    /// The smallest box holding the points.
    pub fn from_points(points: impl IntoIterator<Item = Vec3>) -> Self {
        points.into_iter().fold(Self::EMPTY, |b, p| b.grown_to(p))
    }

    /// Whether the box holds no point.
    pub fn is_empty(&self) -> bool {
        self.min.cmpgt(self.max).any()
    }

    /// The box grown to hold `p`.
    #[inline]
    pub fn grown_to(self, p: Vec3) -> Self {
        Self {
            min: self.min.min(p),
            max: self.max.max(p),
        }
    }

    /// The smallest box holding both.
    #[inline]
    pub fn union(self, other: Aabb) -> Self {
        Self {
            min: self.min.min(other.min),
            max: self.max.max(other.max),
        }
    }

    /// The overlap of both (empty when they are disjoint).
    #[inline]
    pub fn intersection(self, other: Aabb) -> Self {
        Self {
            min: self.min.max(other.min),
            max: self.max.min(other.max),
        }
    }

    /// Whether the closed boxes share a point (touching counts).
    #[inline]
    pub fn overlaps(&self, other: &Aabb) -> bool {
        self.min.cmple(other.max).all() && other.min.cmple(self.max).all()
    }

    /// Whether `p` lies in the closed box.
    #[inline]
    pub fn contains_point(&self, p: Vec3) -> bool {
        self.min.cmple(p).all() && p.cmple(self.max).all()
    }

    /// Centre.
    #[inline]
    pub fn center(&self) -> Vec3 {
        (self.min + self.max) * 0.5
    }

    /// Half of the side lengths.
    #[inline]
    pub fn half_extents(&self) -> Vec3 {
        (self.max - self.min) * 0.5
    }

    /// Side lengths.
    #[inline]
    pub fn size(&self) -> Vec3 {
        self.max - self.min
    }

    /// Volume (zero when empty).
    pub fn volume(&self) -> f32 {
        if self.is_empty() {
            0.0
        } else {
            self.size().element_product()
        }
    }

    /// The box grown by `margin` on every side.
    pub fn expanded(&self, margin: f32) -> Self {
        Self {
            min: self.min - Vec3::splat(margin),
            max: self.max + Vec3::splat(margin),
        }
    }

    /// The bounding box of this box moved by `pose` (Arvo's method: exact for the box's corners).
    pub fn transformed(&self, pose: &Pose) -> Self {
        if self.is_empty() {
            return *self;
        }
        let m = glam::Mat3::from_quat(pose.rotation);
        let c = pose.transform_point(self.center());
        let h = self.half_extents();
        let abs = glam::Mat3::from_cols(m.x_axis.abs(), m.y_axis.abs(), m.z_axis.abs());
        let e = abs * h;
        Self {
            min: c - e,
            max: c + e,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Quat;

    #[test]
    fn placed_box_encloses_every_placed_point() {
        use crate::test_support::random_pose;
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let (lo, hi) = (DVec3::new(-1.0, -2.0, 0.5), DVec3::new(3.0, 0.0, 0.75));
        for _ in 0..50 {
            let pose = random_pose(&mut rng, 100.0);
            let b = Aabb::of_placed_box(lo, hi, &pose).expect("finite");
            for _ in 0..20 {
                let t = DVec3::new(rng.random(), rng.random(), rng.random());
                let w = pose.transform_dpoint(lo + (hi - lo) * t);
                for k in 0..3 {
                    assert!(b.min[k] as f64 <= w[k] && w[k] <= b.max[k] as f64);
                }
            }
        }
        let mut bad = Pose::default().to_f64();
        bad.translation.x = f64::NAN;
        assert!(Aabb::of_placed_box(lo, hi, &bad).is_none());
    }

    #[test]
    fn union_overlap_and_transform() {
        let a = Aabb::new(Vec3::ZERO, Vec3::ONE);
        let b = Aabb::new(Vec3::splat(1.0), Vec3::splat(2.0));
        assert!(a.overlaps(&b), "touching boxes overlap");
        assert!(!a.overlaps(&Aabb::new(Vec3::splat(1.01), Vec3::splat(2.0))));
        assert_eq!(a.union(b), Aabb::new(Vec3::ZERO, Vec3::splat(2.0)));
        assert!(Aabb::EMPTY.is_empty());
        assert!(
            a.intersection(Aabb::new(Vec3::splat(3.0), Vec3::splat(4.0)))
                .is_empty()
        );
        let pose = Pose::new(Quat::from_rotation_z(std::f32::consts::FRAC_PI_4), Vec3::X);
        let t = a.transformed(&pose);
        let corners =
            (0..8).map(|i| Vec3::new((i & 1) as f32, ((i >> 1) & 1) as f32, ((i >> 2) & 1) as f32));
        let exact = Aabb::from_points(corners.map(|p| pose.transform_point(p)));
        assert!((t.min - exact.min).abs().max_element() < 1e-5);
        assert!((t.max - exact.max).abs().max_element() < 1e-5);
    }
}
