//! Intersection volume of two primitives, or of a primitive and a placed closed mesh, with its
//! gradient with respect to the pose of the second body B (Wang, Faure & Pai 2012, §2.2).
//!
//! **Gradient.** For a piece of B's surface inside A with outward normal `n`, translating B by
//! `δ` sweeps `n·δ dA` of new intersection, so `∂V/∂x_b = ∫_{∂B∩A} n dA` and, rotating B about
//! `p`, `∂V/∂θ_b = ∫_{∂B∩A} (x − p) × n dA`. The boundary of `A ∩ B` is closed (`∮ n dA = 0`,
//! `∮ x × n dA = 0`), so the same two integrals are also `−∫_{∂A∩B} n_A dA` and
//! `−∫_{∂A∩B} (x − p) × n_A dA`: A's surface inside B with its normal reversed. Each closed form
//! below uses whichever side is flat, so every piece is a [`PlanarRegion`] whose vector area is
//! its share of `∂V/∂x_b` and whose moment `(c − p) × vector area` is its exact share of
//! `∂V/∂θ_b`:
//!
//! | pair | volume | regions |
//! |---|---|---|
//! | half-space A – sphere | cap `πη²(3r − η)/3`, `η = r − s` | the cap's disk, `−n` |
//! | half-space A – capsule | cylinder part + the two hemispheres (ball ∩ 2 planes) | the section, `−n` |
//! | half-space A – cylinder | `∫ segment area dy` (module `cylinder`) | the section, `−n` |
//! | half-space A – cuboid | convex clip (module `polytope`) | the cap polygon, `−n` |
//! | half-space A – mesh | clipped triangles fanned from the plane | the cap, `−n` |
//! | sphere – sphere | two caps of the lens | the radical disk, `−π a² û` |
//! | cuboid – cuboid | convex clip of B by A's six planes | B's faces inside A, `+n_B` |
//! | sphere A – cuboid | ball ∩ 6 planes (module `ball`) | B's faces inside A, `+n_B` |
//! | sphere A – mesh | ball ∩ mesh (module `ball`) | B's triangles inside A, `+n_B` |
//!
//! and the reversed pairs by [`PrimitiveVolume::swapped`]. Every other pair has no closed form
//! here ([`PrimitiveVolumeMethod::Tessellate`]): tessellate the curved side(s) with
//! [`Primitive::to_solid`] at [`Primitive::resolution_for`] and use the mesh–mesh volume.

use super::ball::{ball_mesh, ball_planes};
use super::cylinder::cylinder_below_plane;
use super::polytope::{FaceTag, Polytope};
use super::region::{Moments, PlanarRegion, SurfacePiece, outer};
use super::{Primitive, PrimitiveError, PrimitiveKind, check_pose};
use crate::bvh::BalancedTree;
use crate::pose::DPose;
use crate::topology::Solid;
use glam::{DMat3, DVec3};
use std::f64::consts::PI;

/// How the intersection volume of a pair is computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrimitiveVolumeMethod {
    /// Closed form or exact polyhedral clipping: [`intersection_volume`],
    /// [`primitive_solid_volume`].
    ClosedForm,
    /// No closed form: build meshes ([`Primitive::to_solid`], with the resolution from
    /// [`Primitive::resolution_for`] for a requested relative volume error; a cuboid's mesh is
    /// exact) and use the mesh–mesh intersection volume.
    Tessellate,
    /// Both are half-spaces: the intersection is unbounded.
    Unbounded,
}

/// The method for a primitive pair (symmetric).
pub fn volume_method(a: &Primitive, b: &Primitive) -> PrimitiveVolumeMethod {
    use PrimitiveKind::*;
    match (a.kind(), b.kind()) {
        (HalfSpace, HalfSpace) => PrimitiveVolumeMethod::Unbounded,
        (HalfSpace, Sphere | Capsule | Cylinder | Cuboid)
        | (Sphere | Capsule | Cylinder | Cuboid, HalfSpace)
        | (Sphere, Sphere)
        | (Cuboid, Cuboid)
        | (Sphere, Cuboid)
        | (Cuboid, Sphere) => PrimitiveVolumeMethod::ClosedForm,
        _ => PrimitiveVolumeMethod::Tessellate,
    }
}

/// The method for a primitive against a closed mesh: closed form for the sphere and the
/// half-space, tessellation (exact for the cuboid) otherwise.
pub fn volume_method_with_solid(a: &Primitive) -> PrimitiveVolumeMethod {
    match a.kind() {
        PrimitiveKind::Sphere | PrimitiveKind::HalfSpace => PrimitiveVolumeMethod::ClosedForm,
        _ => PrimitiveVolumeMethod::Tessellate,
    }
}

/// The intersection of two bodies A and B: its volume and the gradient of the volume with
/// respect to B's pose, in world coordinates.
///
/// Conventions (as `interfere_dynamics`' `VolumeContact`): `translation_gradient = ∂V/∂x_b`,
/// `rotation_gradient = ∂V/∂θ_b` for rotations of B about `point`; A's gradient is minus B's
/// about the same point (the volume depends only on the relative pose). `normal` is the unit
/// vector along `−∂V/∂x_b` (from A towards B: moving B along it reduces the overlap); when the
/// gradient vanishes (one body nested in the other) it is the direction from A's centre to B's,
/// or `+Y` when those coincide. `point` is the area-weighted mean of the regions' centroids, or
/// the centre of the nested body when there are none.
#[derive(Clone, Debug, PartialEq)]
pub struct PrimitiveVolume {
    /// Intersection volume, `> 0`.
    pub volume: f64,
    /// Reference point of the contact (see above), world frame.
    pub point: DVec3,
    /// Unit contact normal, from A towards B.
    pub normal: DVec3,
    /// `∂V/∂x_b`.
    pub translation_gradient: DVec3,
    /// `∂V/∂θ_b` about `point`.
    pub rotation_gradient: DVec3,
    /// The flat surface regions whose vector areas sum to `∂V/∂x_b` (and moments to
    /// `∂V/∂θ_b`): see the module documentation for which side each pair uses.
    pub regions_b: Vec<PlanarRegion>,
    /// The regions as point pieces for a contact manifold: a region holding at least 1/8 of the
    /// total region area is spread into 8 pieces ([`PlanarRegion::spread`]), a smaller one is
    /// one piece at its centroid. Sums and moments are those of the regions, exactly.
    pub pieces_b: Vec<SurfacePiece>,
}

impl PrimitiveVolume {
    /// Builds the result from world-frame regions; `a_center`, `b_center` give the fallback
    /// normal and `nested_point` the point when there are no regions.
    fn from_regions(
        volume: f64,
        regions: Vec<PlanarRegion>,
        a_center: DVec3,
        b_center: DVec3,
        nested_point: DVec3,
    ) -> Option<Self> {
        if !(volume > 0.0 && volume.is_finite()) {
            return None;
        }
        let total: DVec3 = regions.iter().map(|r| r.vector_area).sum();
        let weight: f64 = regions.iter().map(PlanarRegion::area).sum();
        let point = if weight > 0.0 {
            regions.iter().map(|r| r.centroid * r.area()).sum::<DVec3>() / weight
        } else {
            nested_point
        };
        let rotation: DVec3 = regions
            .iter()
            .map(|r| (r.centroid - point).cross(r.vector_area))
            .sum();
        let normal = if total.length_squared() > 0.0 {
            -total.normalize()
        } else {
            (b_center - a_center).try_normalize().unwrap_or(DVec3::Y)
        };
        let mut pieces = Vec::new();
        for r in &regions {
            if r.area() * 8.0 >= weight {
                pieces.extend(r.spread());
            } else {
                pieces.push(SurfacePiece {
                    centroid: r.centroid,
                    vector_area: r.vector_area,
                });
            }
        }
        Some(Self {
            volume,
            point,
            normal,
            translation_gradient: total,
            rotation_gradient: rotation,
            regions_b: regions,
            pieces_b: pieces,
        })
    }

    /// The same intersection with the roles of A and B exchanged: gradients, normal, regions
    /// and pieces negated (the volume and the point are unchanged).
    pub fn swapped(&self) -> Self {
        Self {
            volume: self.volume,
            point: self.point,
            normal: -self.normal,
            translation_gradient: -self.translation_gradient,
            rotation_gradient: -self.rotation_gradient,
            regions_b: self.regions_b.iter().map(PlanarRegion::negated).collect(),
            pieces_b: self
                .pieces_b
                .iter()
                .map(|p| SurfacePiece {
                    centroid: p.centroid,
                    vector_area: -p.vector_area,
                })
                .collect(),
        }
    }

    /// `∂V/∂θ_b` about another point `q`: `rotation_gradient + (point − q) × translation_gradient`.
    pub fn rotation_gradient_about(&self, q: DVec3) -> DVec3 {
        self.rotation_gradient + (self.point - q).cross(self.translation_gradient)
    }
}

/// The intersection volume of A and B placed by their poses, with `∂V/∂x_b` and `∂V/∂θ_b`
/// (see [`PrimitiveVolume`]); `Ok(None)` when the interiors do not overlap (touching gives
/// `None`). Pairs without a closed form are refused with [`PrimitiveError::NoClosedForm`] (see
/// [`volume_method`]); two half-spaces with [`PrimitiveError::Unbounded`].
pub fn intersection_volume(
    a: &Primitive,
    pose_a: &DPose,
    b: &Primitive,
    pose_b: &DPose,
) -> Result<Option<PrimitiveVolume>, PrimitiveError> {
    check_pose(pose_a, "A")?;
    check_pose(pose_b, "B")?;
    match (*a, *b) {
        (Primitive::HalfSpace { .. }, Primitive::HalfSpace { .. }) => Err(
            PrimitiveError::Unbounded("two half-spaces have no finite intersection volume"),
        ),
        (Primitive::HalfSpace { normal }, _) => Ok(half_space_primitive(normal, pose_a, b, pose_b)),
        (_, Primitive::HalfSpace { normal }) => {
            Ok(half_space_primitive(normal, pose_b, a, pose_a).map(|v| v.swapped()))
        }
        (Primitive::Sphere { radius: ra }, Primitive::Sphere { radius: rb }) => {
            Ok(lens(ra, pose_a.translation, rb, pose_b.translation))
        }
        (Primitive::Cuboid { half_extents: ha }, Primitive::Cuboid { half_extents: hb }) => {
            Ok(box_box(ha, pose_a, hb, pose_b))
        }
        (Primitive::Sphere { radius }, Primitive::Cuboid { half_extents }) => {
            Ok(sphere_box(radius, pose_a, half_extents, pose_b))
        }
        (Primitive::Cuboid { half_extents }, Primitive::Sphere { radius }) => {
            Ok(sphere_box(radius, pose_b, half_extents, pose_a).map(|v| v.swapped()))
        }
        _ => Err(PrimitiveError::NoClosedForm {
            a: a.kind(),
            b: b.kind(),
        }),
    }
}

/// Half-space A (local unit normal `normal`, plane through A's origin) against bounded B.
fn half_space_primitive(
    normal: DVec3,
    pose_a: &DPose,
    b: &Primitive,
    pose_b: &DPose,
) -> Option<PrimitiveVolume> {
    // The plane in B's frame: n · x ≤ d.
    let a_in_b = pose_b.inverse().mul(pose_a);
    let n = (a_in_b.rotation * normal).normalize();
    let d = n.dot(a_in_b.translation);
    let (volume, section) = match *b {
        Primitive::Sphere { radius: r } => {
            // Depth of the cap: r − s, s = −d the centre's height over the plane.
            let eta = r + d;
            if eta <= 0.0 {
                return None;
            }
            if eta >= 2.0 * r {
                (Primitive::Sphere { radius: r }.volume(), Moments::default())
            } else {
                let volume = PI * eta * eta * (3.0 * r - eta) / 3.0;
                let rho2 = eta * (2.0 * r - eta);
                let area = PI * rho2;
                let foot = n * d;
                let lateral = (DMat3::IDENTITY - outer(n, n)) * (area * rho2 / 4.0);
                (
                    volume,
                    Moments {
                        area,
                        first: foot * area,
                        second: outer(foot, foot) * area + lateral,
                    },
                )
            }
        }
        Primitive::Cylinder {
            half_height,
            radius,
        } => {
            let cut = cylinder_below_plane(radius, half_height, n, d);
            (cut.volume, cut.section)
        }
        Primitive::Capsule {
            half_length: l,
            radius: r,
        } => {
            let cut = cylinder_below_plane(r, l, n, d);
            let mut volume = cut.volume;
            let mut section = cut.section;
            for sign in [1.0, -1.0] {
                let c = DVec3::new(0.0, sign * l, 0.0);
                // Hemisphere beyond the cap plane: −sign·y ≤ −l.
                let clip = ball_planes(c, r, &[(n, d), (DVec3::new(0.0, -sign, 0.0), -l)]);
                volume += clip.volume;
                for (i, piece) in &clip.pieces {
                    if *i == 0 {
                        section.add(&piece.moments(DVec3::ZERO));
                    }
                }
            }
            (volume, section)
        }
        Primitive::Cuboid { half_extents } => {
            let clipped = Polytope::cuboid(half_extents, &DPose::IDENTITY).clip(n, d, 0);
            let volume = clipped.volume_about(DVec3::ZERO);
            let mut section = Moments::default();
            for f in &clipped.faces {
                if f.tag == FaceTag::Cap(0) {
                    section = Moments::polygon(&f.points, n);
                }
            }
            (volume, section)
        }
        Primitive::HalfSpace { .. } => return None,
    };
    let regions: Vec<PlanarRegion> = section
        .region(DVec3::ZERO, n, -1.0)
        .map(|r| r.transformed(pose_b))
        .into_iter()
        .collect();
    PrimitiveVolume::from_regions(
        volume,
        regions,
        pose_a.translation,
        pose_b.translation,
        pose_b.translation,
    )
}

/// Sphere A (radius `ra`, centre `ca`) and sphere B: the lens.
fn lens(ra: f64, ca: DVec3, rb: f64, cb: DVec3) -> Option<PrimitiveVolume> {
    let dvec = cb - ca;
    let d = dvec.length();
    if d >= ra + rb {
        return None;
    }
    if d <= (ra - rb).abs() {
        let (r, c) = if ra <= rb { (ra, ca) } else { (rb, cb) };
        return PrimitiveVolume::from_regions(4.0 / 3.0 * PI * r.powi(3), Vec::new(), ca, cb, c);
    }
    let u = dvec / d;
    let gap = ra + rb - d;
    // Cap heights without cancellation: h_a = (r_b² − (d − r_a)²)/(2d) etc.
    let ha = gap * (rb - ra + d) / (2.0 * d);
    let hb = gap * (ra - rb + d) / (2.0 * d);
    let volume = PI * ha * ha * (3.0 * ra - ha) / 3.0 + PI * hb * hb * (3.0 * rb - hb) / 3.0;
    let a2 = ha * (2.0 * ra - ha);
    let area = PI * a2;
    let center = ca + u * (ra - ha);
    let region = PlanarRegion {
        centroid: center,
        vector_area: -u * area,
        second_moment: (DMat3::IDENTITY - outer(u, u)) * (area * a2 / 4.0),
    };
    PrimitiveVolume::from_regions(volume, vec![region], ca, cb, center)
}

/// Cuboid A and cuboid B: B clipped by A's six planes in A's frame; regions on B's faces.
fn box_box(ha: DVec3, pose_a: &DPose, hb: DVec3, pose_b: &DPose) -> Option<PrimitiveVolume> {
    let rel = pose_a.inverse().mul(pose_b);
    let mut poly = Polytope::cuboid(hb, &rel);
    for k in 0..3 {
        for sign in [1.0, -1.0] {
            let mut n = DVec3::ZERO;
            n[k] = sign;
            poly = poly.clip(n, ha[k], (2 * k) as u8 + u8::from(sign > 0.0));
            if poly.faces.is_empty() {
                return None;
            }
        }
    }
    let o = poly.reference();
    let volume = poly.volume_about(o);
    let regions: Vec<PlanarRegion> = poly
        .faces
        .iter()
        .filter(|f| matches!(f.tag, FaceTag::Original(_)))
        .filter_map(|f| {
            let rel_pts: Vec<DVec3> = f.points.iter().map(|p| *p - o).collect();
            Moments::polygon(&rel_pts, f.normal).region(o, f.normal, 1.0)
        })
        .map(|r| r.transformed(pose_a))
        .collect();
    let nested = pose_a.transform_dpoint(o);
    PrimitiveVolume::from_regions(
        volume,
        regions,
        pose_a.translation,
        pose_b.translation,
        nested,
    )
}

/// Sphere A (radius `r`) and cuboid B: ball ∩ six planes in B's frame; regions on B's faces.
fn sphere_box(r: f64, pose_a: &DPose, h: DVec3, pose_b: &DPose) -> Option<PrimitiveVolume> {
    let c = pose_b.inverse().transform_dpoint(pose_a.translation);
    let planes: Vec<(DVec3, f64)> = (0..6)
        .map(|f| {
            let mut n = DVec3::ZERO;
            n[f / 2] = if f % 2 == 0 { -1.0 } else { 1.0 };
            (n, h[f / 2])
        })
        .collect();
    let clip = ball_planes(c, r, &planes);
    let regions: Vec<PlanarRegion> = clip
        .pieces
        .iter()
        .filter_map(|(_, p)| p.moments(c).region(c, p.normal, 1.0))
        .map(|reg| reg.transformed(pose_b))
        .collect();
    let nested = if clip.volume >= 4.0 / 3.0 * PI * r.powi(3) * (1.0 - 1e-12) {
        pose_a.translation
    } else {
        pose_b.translation
    };
    PrimitiveVolume::from_regions(
        clip.volume,
        regions,
        pose_a.translation,
        pose_b.translation,
        nested,
    )
}

fn check_tree(solid: &Solid, tree: &BalancedTree) -> Result<(), PrimitiveError> {
    if tree.triangle_count() == solid.triangle_count() {
        Ok(())
    } else {
        Err(PrimitiveError::TreeMismatch {
            tree: tree.triangle_count(),
            mesh: solid.triangle_count(),
        })
    }
}

/// Exact volume of the ball of radius `radius` (A, centre `sphere_pose.translation`) inside the
/// closed mesh `solid` (B, placed by `solid_pose`; `tree` built over it), with the gradient
/// with respect to the mesh's pose (module `ball`): regions are the mesh triangles' pieces
/// inside the ball. Cost: the triangles near the ball (through `tree`) plus one exact point
/// location of the centre (`O(n)`).
pub fn sphere_solid_volume(
    radius: f64,
    sphere_pose: &DPose,
    solid: &Solid,
    tree: &BalancedTree,
    solid_pose: &DPose,
) -> Result<Option<PrimitiveVolume>, PrimitiveError> {
    let sphere = Primitive::sphere(radius)?;
    check_pose(sphere_pose, "the sphere")?;
    check_pose(solid_pose, "the mesh")?;
    check_tree(solid, tree)?;
    let c = solid_pose
        .inverse()
        .transform_dpoint(sphere_pose.translation);
    let clip = ball_mesh(c, radius, solid, tree);
    let regions: Vec<PlanarRegion> = clip
        .pieces
        .iter()
        .filter_map(|(_, p)| p.moments(c).region(c, p.normal, 1.0))
        .map(|reg| reg.transformed(solid_pose))
        .collect();
    let nested = if clip.volume >= sphere.volume() * (1.0 - 1e-12) {
        sphere_pose.translation
    } else {
        solid_pose.translation
    };
    Ok(PrimitiveVolume::from_regions(
        clip.volume,
        regions,
        sphere_pose.translation,
        solid_pose.translation,
        nested,
    ))
}

/// Exact volume of the closed mesh `solid` (B, placed by `solid_pose`) inside the half-space
/// `normal · x ≤ 0` placed by `half_space_pose` (A): the triangles clipped to the plane and
/// fanned from a point on it (the cap adds nothing); the region is the cap, the plane's section
/// of the mesh, from its boundary segments. `O(n)`, no tree needed.
pub fn half_space_solid_volume(
    normal: DVec3,
    half_space_pose: &DPose,
    solid: &Solid,
    solid_pose: &DPose,
) -> Result<Option<PrimitiveVolume>, PrimitiveError> {
    let normal = match Primitive::half_space(normal)? {
        Primitive::HalfSpace { normal } => normal,
        other => return Err(PrimitiveError::NoClosedFormWithMesh(other.kind())),
    };
    check_pose(half_space_pose, "the half-space")?;
    check_pose(solid_pose, "the mesh")?;
    let a_in_b = solid_pose.inverse().mul(half_space_pose);
    let n = (a_in_b.rotation * normal).normalize();
    let o = a_in_b.translation;
    let mut six_v = 0.0;
    let mut cap = Moments::default();
    let mut poly: Vec<DVec3> = Vec::with_capacity(4);
    for t in 0..solid.triangle_count() {
        let p = solid.triangle(t).map(|v| v.as_dvec3() - o);
        let s = p.map(|q| -n.dot(q)); // ≥ 0 below
        poly.clear();
        let (mut entry, mut exit) = (None, None);
        for k in 0..3 {
            let (a, b) = (p[k], p[(k + 1) % 3]);
            let (sa, sb) = (s[k], s[(k + 1) % 3]);
            if sa >= 0.0 {
                poly.push(a);
            }
            if (sa >= 0.0) != (sb >= 0.0) {
                let x = a + (b - a) * (sa / (sa - sb));
                poly.push(x);
                if sa >= 0.0 {
                    exit = Some(x);
                } else {
                    entry = Some(x);
                }
            }
        }
        if let (Some(x_in), Some(x_out)) = (entry, exit) {
            cap.add(&Moments::triangle(DVec3::ZERO, x_in, x_out, n));
        }
        for k in 1..poly.len().saturating_sub(1) {
            six_v += poly[0].dot(poly[k].cross(poly[k + 1]));
        }
    }
    let volume = six_v / 6.0;
    let regions: Vec<PlanarRegion> = cap
        .region(o, n, -1.0)
        .map(|r| r.transformed(solid_pose))
        .into_iter()
        .collect();
    // Nested (the mesh entirely below): the mesh's vertex mean stands for its centre.
    let mean = solid.vertices().iter().map(|v| v.as_dvec3()).sum::<DVec3>()
        / solid.vertices().len().max(1) as f64;
    let nested = solid_pose.transform_dpoint(mean);
    Ok(PrimitiveVolume::from_regions(
        volume,
        regions,
        half_space_pose.translation,
        nested,
        nested,
    ))
}

/// The closed-form volume of primitive A against the closed mesh B (`solid` placed by
/// `solid_pose`, `tree` built over it): the sphere ([`sphere_solid_volume`]) and the half-space
/// ([`half_space_solid_volume`]); other primitives are refused with
/// [`PrimitiveError::NoClosedFormWithMesh`] (see [`volume_method_with_solid`]).
pub fn primitive_solid_volume(
    a: &Primitive,
    pose_a: &DPose,
    solid: &Solid,
    tree: &BalancedTree,
    solid_pose: &DPose,
) -> Result<Option<PrimitiveVolume>, PrimitiveError> {
    match *a {
        Primitive::Sphere { radius } => {
            sphere_solid_volume(radius, pose_a, solid, tree, solid_pose)
        }
        Primitive::HalfSpace { normal } => {
            check_tree(solid, tree)?;
            half_space_solid_volume(normal, pose_a, solid, solid_pose)
        }
        _ => Err(PrimitiveError::NoClosedFormWithMesh(a.kind())),
    }
}
