//! Convex polytopes as lists of outward face polygons, clipped by half-spaces
//! (Sutherland–Hodgman on every face plus one cap polygon per cutting plane). Volume by the
//! divergence theorem, `V = ⅙ Σ_faces Σ_fan (p₀ − o)·((p_j − o) × (p_{j+1} − o))`. The
//! arithmetic is `f64` with one rounding per clipped vertex; the result is the exact volume of
//! the polytope whose vertices are those rounded points.

use crate::pose::DPose;
use glam::DVec3;

/// Where a face comes from: a face of the original polytope, or the cap left by a cut.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FaceTag {
    /// Face `k` of the polytope being clipped.
    Original(u8),
    /// The cap of cutting plane `k`.
    Cap(u8),
}

/// A planar convex face: outward unit normal and its corners, counter-clockwise about it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Face {
    pub normal: DVec3,
    pub points: Vec<DVec3>,
    pub tag: FaceTag,
}

/// A convex polytope (possibly empty: no faces).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Polytope {
    pub faces: Vec<Face>,
}

/// The box corners `k` in the order used by [`Polytope::cuboid`] and the outward quads.
pub(crate) const BOX_QUADS: [[usize; 4]; 6] = [
    [0, 4, 6, 2], // -x
    [1, 3, 7, 5], // +x
    [0, 1, 5, 4], // -y
    [2, 6, 7, 3], // +y
    [0, 2, 3, 1], // -z
    [4, 5, 7, 6], // +z
];

/// Corner `k` of the box `[-h, h]`: bit 0 → x, bit 1 → y, bit 2 → z.
pub(crate) fn box_corner(h: DVec3, k: usize) -> DVec3 {
    DVec3::new(
        if k & 1 == 0 { -h.x } else { h.x },
        if k & 2 == 0 { -h.y } else { h.y },
        if k & 4 == 0 { -h.z } else { h.z },
    )
}

impl Polytope {
    /// The box `[-h, h]` placed by `pose` (corners mapped once by [`DPose::transform_dpoint`]).
    pub fn cuboid(h: DVec3, pose: &DPose) -> Self {
        let corners: Vec<DVec3> = (0..8)
            .map(|k| pose.transform_dpoint(box_corner(h, k)))
            .collect();
        let faces = BOX_QUADS
            .iter()
            .enumerate()
            .map(|(f, quad)| {
                let mut n = DVec3::ZERO;
                n[f / 2] = if f % 2 == 0 { -1.0 } else { 1.0 };
                Face {
                    normal: pose.rotation * n,
                    points: quad.iter().map(|&k| corners[k]).collect(),
                    tag: FaceTag::Original(f as u8),
                }
            })
            .collect();
        Self { faces }
    }

    /// The part with `n · x ≤ d` (`n` unit); the cut face is tagged `FaceTag::Cap(tag)`.
    ///
    /// A plane that no corner crosses by more than `1e-12` of the coordinates' size leaves the
    /// polytope as it is (so a face lying in the plane, as in resting contact, or a repeated
    /// plane, does not grow a second copy of that face), and one that every corner reaches
    /// within that margin empties it (the rest is a face or an edge, of no volume).
    pub fn clip(&self, n: DVec3, d: f64, tag: u8) -> Self {
        let (mut lo, mut hi, mut size) = (f64::INFINITY, f64::NEG_INFINITY, d.abs());
        for p in self.faces.iter().flat_map(|f| f.points.iter()) {
            let s = n.dot(*p) - d;
            lo = lo.min(s);
            hi = hi.max(s);
            size = size.max(p.abs().max_element());
        }
        let tol = 1e-12 * size;
        if hi <= tol {
            return self.clone();
        }
        if lo >= -tol {
            return Self::default();
        }
        let mut faces = Vec::with_capacity(self.faces.len() + 1);
        let mut cut: Vec<DVec3> = Vec::new();
        for f in &self.faces {
            let mut poly = Vec::with_capacity(f.points.len() + 1);
            let m = f.points.len();
            for j in 0..m {
                let (p, q) = (f.points[j], f.points[(j + 1) % m]);
                let (sp, sq) = (n.dot(p) - d, n.dot(q) - d);
                if sp <= 0.0 {
                    poly.push(p);
                }
                if sp == 0.0 {
                    cut.push(p);
                }
                if (sp <= 0.0) != (sq <= 0.0) {
                    let x = p + (q - p) * (sp / (sp - sq));
                    poly.push(x);
                    cut.push(x);
                }
            }
            if poly.len() >= 3 {
                faces.push(Face {
                    normal: f.normal,
                    points: poly,
                    tag: f.tag,
                });
            }
        }
        if faces.is_empty() {
            return Self::default();
        }
        if cut.len() >= 3 {
            let c = cut.iter().sum::<DVec3>() / cut.len() as f64;
            let u = n.any_orthonormal_vector();
            let v = n.cross(u);
            cut.sort_by(|a, b| {
                let (pa, pb) = (*a - c, *b - c);
                pa.dot(v)
                    .atan2(pa.dot(u))
                    .total_cmp(&pb.dot(v).atan2(pb.dot(u)))
            });
            let scale = cut.iter().map(|p| (*p - c).length()).fold(0.0f64, f64::max);
            cut.dedup_by(|a, b| (*a - *b).length() <= 1e-14 * scale);
            while cut.len() > 1 && (cut[0] - cut[cut.len() - 1]).length() <= 1e-14 * scale {
                cut.pop();
            }
            if cut.len() >= 3 {
                faces.push(Face {
                    normal: n,
                    points: cut,
                    tag: FaceTag::Cap(tag),
                });
            }
        }
        Self { faces }
    }

    /// Enclosed volume (0 for an empty polytope), fanned from `o` (choose a point near the
    /// polytope for precision).
    pub fn volume_about(&self, o: DVec3) -> f64 {
        let mut six = 0.0;
        for f in &self.faces {
            let p = &f.points;
            for j in 1..p.len().saturating_sub(1) {
                six += (p[0] - o).dot((p[j] - o).cross(p[j + 1] - o));
            }
        }
        six / 6.0
    }

    /// A point inside or on the polytope (the mean of its first face's corners), for
    /// [`Polytope::volume_about`].
    pub fn reference(&self) -> DVec3 {
        self.faces
            .first()
            .map(|f| f.points.iter().sum::<DVec3>() / f.points.len() as f64)
            .unwrap_or(DVec3::ZERO)
    }
}
