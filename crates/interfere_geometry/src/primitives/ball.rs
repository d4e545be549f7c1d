//! Exact volume of a ball intersected with a polyhedron (convex, as an intersection of
//! half-spaces, or any closed triangle mesh), by the divergence theorem with cones from the
//! ball's centre `c`.
//!
//! For `S` the ball of radius `r` and `P` the polyhedron with faces `f` (outward unit normals
//! `n_f`, planes at signed distance `h_f = n_f·(x − c)` from `c`):
//! `V(S ∩ P) = ⅓ ∮ (x − c)·n dA = ⅓ [Σ_f h_f · area(f ∩ S) + r · area(∂S ∩ P)]`, and by Gauss
//! (the flux of `(x − c)/|x − c|³` out of `S ∩ P` minus a small ball around `c`),
//! `area(∂S ∩ P) = r² [ω_P(c) − Σ_f Ω_f(f ∩ S)]`, with `Ω_f` the signed solid angle of the face
//! piece seen from `c` and `ω_P(c)` the solid angle of `P` at `c`: `4π` inside, 0 outside, and on
//! the boundary the principal value (`2π` on a face, twice the interior dihedral angle on an
//! edge, the corner's solid angle at a vertex). Faces whose plane passes through `c` (`h_f = 0`)
//! contribute neither volume nor solid angle. Each face piece `f ∩ S` is a polygon ∩ disk of
//! radius `√(r² − h_f²)` about the foot of `c`, whose area, moments and solid angle are closed
//! form (module `region`).
//!
//! For a closed mesh `ω_P(c)` comes from the exact point location; on the boundary it is the
//! sum of the full triangles' solid angles (Van Oosterom–Strackee), every triangle whose plane
//! holds `c` (exact `orient3d`) left out — the same principal value.
//!
//! The terms are of size `r³` and cancel when the overlap is small: the absolute rounding is
//! about `1e-16 r³` per face, so a volume below `1e-13 r³` is reported as zero.
//!
//! The gradient needs no extra work: translating the ball moves only its spherical part, whose
//! vector area is `−Σ_f n_f area(f ∩ S)` by closure, and the face pieces' moments about any point
//! give the rotation part (the spherical part has zero moment about `c`).

use super::region::{DiskStats, Moments, clip_2d, disk_polygon, outer};
use crate::bvh::BalancedTree;
use crate::containment::{PointLocation, locate_point};
use crate::topology::Solid;
use crate::tri_tri::orient3d_sign;
use glam::{DVec2, DVec3};
use std::f64::consts::PI;

/// One face's piece inside the ball: the plane's foot `q`, in-plane basis `(u, v)` (`u × v =
/// n`), the signed distance `h`, and the disk ∩ polygon statistics.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FacePiece {
    pub normal: DVec3,
    pub h: f64,
    pub foot: DVec3,
    pub u: DVec3,
    pub v: DVec3,
    pub stats: DiskStats,
}

impl FacePiece {
    /// Raw moments about `o` (area signed positive).
    pub fn moments(&self, o: DVec3) -> Moments {
        let s = &self.stats;
        let d = self.foot - o;
        let f3 = self.u * s.first.x + self.v * s.first.y;
        let in_plane = outer(self.u, self.u) * s.second[0]
            + (outer(self.u, self.v) + outer(self.v, self.u)) * s.second[1]
            + outer(self.v, self.v) * s.second[2];
        Moments {
            area: s.area,
            first: d * s.area + f3,
            second: outer(d, d) * s.area + outer(d, f3) + outer(f3, d) + in_plane,
        }
    }
}

/// The piece of the face with unit outward normal `n` and signed distance `h` from `c`, whose
/// polygon is given by `to_2d` in the plane's coordinates (with the foot at the origin).
fn face_piece(
    c: DVec3,
    r: f64,
    n: DVec3,
    h: f64,
    u: DVec3,
    polygon: impl FnOnce(DVec3, DVec3, DVec3, f64) -> Vec<DVec2>,
) -> Option<FacePiece> {
    if h.abs() >= r {
        return None;
    }
    let rho = ((r - h.abs()) * (r + h.abs())).sqrt();
    let foot = c + n * h;
    let v = n.cross(u);
    let poly = polygon(foot, u, v, rho);
    if poly.len() < 3 {
        return None;
    }
    let stats = disk_polygon(&poly, rho, h, r);
    (stats.area > 0.0).then_some(FacePiece {
        normal: n,
        h,
        foot,
        u,
        v,
        stats,
    })
}

/// The result of a ball ∩ polyhedron computation, in the polyhedron's frame.
#[derive(Clone, Debug, Default)]
pub(crate) struct BallClip {
    pub volume: f64,
    /// `(face index, piece)` for every face meeting the ball.
    pub pieces: Vec<(usize, FacePiece)>,
}

/// The interior solid angle at `c` of `∩ {n_i · x ≤ d_i}` from the distances `h_i = d_i − n_i·c`:
/// `4π` strictly inside, 0 strictly outside, `2π` on one plane, twice the interior dihedral
/// angle on two, and the trihedral corner `Σ dihedral − π` on three (more than three planes
/// through one point do not occur for boxes and half-space pairs; the first three are used).
fn interior_solid_angle(planes: &[(DVec3, f64)], h: &[f64]) -> f64 {
    if h.iter().any(|&x| x < 0.0) {
        return 0.0;
    }
    let active: Vec<DVec3> = planes
        .iter()
        .zip(h)
        .filter(|(_, x)| **x == 0.0)
        .map(|(p, _)| p.0)
        .collect();
    let dihedral = |a: DVec3, b: DVec3| PI - a.dot(b).clamp(-1.0, 1.0).acos();
    match active.len() {
        0 => 4.0 * PI,
        1 => 2.0 * PI,
        2 => 2.0 * dihedral(active[0], active[1]),
        _ => {
            dihedral(active[0], active[1])
                + dihedral(active[1], active[2])
                + dihedral(active[0], active[2])
                - PI
        }
    }
}

/// `V(S ∩ P)` for the ball `S = B(c, r)` and `P = ∩_i {n_i · x ≤ d_i}` (unit `n_i`), with the
/// pieces of every plane inside the ball. Each face polygon is a square of side `4ρ` about the
/// foot (it holds the disk) clipped by the other planes.
pub(crate) fn ball_planes(c: DVec3, r: f64, planes: &[(DVec3, f64)]) -> BallClip {
    let h: Vec<f64> = planes.iter().map(|(n, d)| d - n.dot(c)).collect();
    if h.iter().any(|&x| x <= -r) {
        return BallClip::default();
    }
    let mut pieces = Vec::new();
    let (mut sum_ha, mut sum_omega) = (0.0, 0.0);
    for (i, &(n, _)) in planes.iter().enumerate() {
        let u = n.any_orthonormal_vector();
        let piece = face_piece(c, r, n, h[i], u, |foot, u, v, rho| {
            let s = 2.0 * rho;
            let mut poly = vec![
                DVec2::new(-s, -s),
                DVec2::new(s, -s),
                DVec2::new(s, s),
                DVec2::new(-s, s),
            ];
            for (j, &(m, dj)) in planes.iter().enumerate() {
                if j == i || poly.is_empty() {
                    continue;
                }
                let a = DVec2::new(m.dot(u), m.dot(v));
                let g = dj - m.dot(foot);
                if a == DVec2::ZERO {
                    if g < 0.0 {
                        poly.clear();
                    }
                    continue;
                }
                poly = clip_2d(&poly, a, g);
            }
            poly
        });
        if let Some(p) = piece {
            sum_ha += p.h * p.stats.area;
            sum_omega += p.stats.solid_angle;
            pieces.push((i, p));
        }
    }
    let omega = interior_solid_angle(planes, &h);
    BallClip {
        volume: cone_volume(r, sum_ha, omega - sum_omega),
        pieces,
    }
}

/// Below this fraction of `r³` the cone formula's terms (of size `r³`) have cancelled to
/// rounding: such a volume is reported as zero (no overlap).
pub(crate) const CONE_NOISE: f64 = 1e-13;

/// `⅓ [Σ h_f A_f + r³ (ω − Σ Ω_f)]`, with the rounding floor [`CONE_NOISE`].
fn cone_volume(r: f64, sum_ha: f64, solid_angle: f64) -> f64 {
    let v = (sum_ha + r * r * r * solid_angle) / 3.0;
    if v > CONE_NOISE * r * r * r { v } else { 0.0 }
}

/// The solid angle of triangle `(a, b, c)` seen from the origin (Van Oosterom–Strackee),
/// positive when the origin is behind it (on the side opposite `(b − a) × (c − a)`).
fn triangle_solid_angle(a: DVec3, b: DVec3, c: DVec3) -> f64 {
    let (la, lb, lc) = (a.length(), b.length(), c.length());
    let num = a.dot(b.cross(c));
    let den = la * lb * lc + a.dot(b) * lc + a.dot(c) * lb + b.dot(c) * la;
    2.0 * num.atan2(den)
}

/// Triangles of `tree` whose leaf box meets the box `[lo, hi]`.
pub(crate) fn tree_candidates(tree: &BalancedTree, lo: DVec3, hi: DVec3) -> Vec<usize> {
    let mut out = Vec::new();
    let mut stack = vec![(0usize, 0usize)];
    let leaf = tree.depth();
    while let Some((l, i)) = stack.pop() {
        let Some(node) = tree.node(l, i) else {
            continue;
        };
        if !(node.dmin().cmple(hi).all() && lo.cmple(node.dmax()).all()) {
            continue;
        }
        if l == leaf {
            out.push(node.index as usize);
        } else {
            for j in tree.children(l, i) {
                stack.push((l + 1, j));
            }
        }
    }
    out.sort_unstable();
    out
}

/// `V(S ∩ M)` for the ball `B(c, r)` (mesh frame) and the closed mesh `solid`, with the piece
/// of every triangle inside the ball (`(triangle, piece)`); triangles are found through `tree`.
pub(crate) fn ball_mesh(c: DVec3, r: f64, solid: &Solid, tree: &BalancedTree) -> BallClip {
    let mut pieces = Vec::new();
    let (mut sum_ha, mut sum_omega) = (0.0, 0.0);
    for t in tree_candidates(tree, c - DVec3::splat(r), c + DVec3::splat(r)) {
        let [a, b, cc] = solid.triangle(t).map(|p| p.as_dvec3());
        let raw = (b - a).cross(cc - a);
        let len = raw.length();
        let ab = (b - a).length();
        if !(len > 0.0 && ab > 0.0) {
            continue;
        }
        let n = raw / len;
        let side = orient3d_sign(a, b, cc, c);
        let mut h = n.dot((a + b + cc) / 3.0 - c);
        if side == 0 {
            h = 0.0;
        } else if h == 0.0 || (h > 0.0) != (side > 0) {
            h = f64::from(side) * h.abs().max(f64::MIN_POSITIVE);
        }
        let piece = face_piece(c, r, n, h, (b - a) / ab, |foot, u, v, _| {
            [a, b, cc]
                .iter()
                .map(|p| DVec2::new((*p - foot).dot(u), (*p - foot).dot(v)))
                .collect()
        });
        if let Some(p) = piece {
            sum_ha += p.h * p.stats.area;
            sum_omega += p.stats.solid_angle;
            pieces.push((t, p));
        }
    }
    let omega = match locate_point(solid, c) {
        PointLocation::Inside => 4.0 * PI,
        PointLocation::Outside => 0.0,
        PointLocation::Boundary => (0..solid.triangle_count())
            .map(|t| {
                let [a, b, cc] = solid.triangle(t).map(|p| p.as_dvec3());
                if orient3d_sign(a, b, cc, c) == 0 {
                    0.0
                } else {
                    triangle_solid_angle(a - c, b - c, cc - c)
                }
            })
            .sum(),
    };
    BallClip {
        volume: cone_volume(r, sum_ha, omega - sum_omega),
        pieces,
    }
}
