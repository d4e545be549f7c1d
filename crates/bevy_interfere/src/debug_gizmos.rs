//! The debug drawing: a [`GizmoConfigGroup`] whose switches draw contact points and normals,
//! interfering triangles, world boxes, one level of each collider's balanced AABB tree
//! (Greß–Zachmann 2004 §3, the hierarchy the volume rays and the GPU traversal use), the
//! volume-gradient arrows of Wang–Faure–Pai 2012 §2.2, the volume ray samples (the parts of
//! each line where both solids overlap, Eq. 1) and their sampling density (the pixel or EBPI
//! tile each ray stands for, §3–5).
//!
//! The ray samples are not kept by the simulation (a step casts up to hundreds of thousands of
//! rays and needs only their sums): while their switches are on, the drawing system casts the
//! volume query of the first [`InterfereGizmos::sampled_pairs`] interfering pairs again, on the
//! CPU, with the plugin's current [`PhysicsSettings`] (uniform spacing or adaptive budget; for an
//! exact volume, a uniform lattice of the default spacing, to show where the overlap is), at the
//! poses of the last step. That costs about one volume stage for those pairs per frame, and only
//! then.
//!
//! Every drawing system runs only while the group is enabled, so the overlay costs nothing
//! when it is off.

use crate::settings::PhysicsSettings;
use crate::world::PhysicsWorld;
use bevy::gizmos::config::{GizmoConfigGroup, GizmoConfigStore};
use bevy::prelude::*;
use interfere_dynamics::Shape;
use interfere_dynamics::sampled_volume;
use interfere_geometry::glam::{DMat3, DVec3};
use interfere_geometry::primitives::Primitive;
use interfere_geometry::{DPose, VolumeResult};

/// Switches for the debug drawing (enable the group with
/// `GizmoConfigStore::config_mut::<InterfereGizmos>().0.enabled`).
#[derive(Clone, Debug, Reflect, GizmoConfigGroup)]
pub struct InterfereGizmos {
    /// Contact points with their normals (length scaled by depth, at least `normal_length`).
    pub contacts: bool,
    /// Length of a drawn normal.
    pub normal_length: f32,
    /// The triangles of the intersecting triangle pairs the narrow phase reported.
    pub interfering_triangles: bool,
    /// World boxes of the bodies (red where the body interferes with another).
    pub world_boxes: bool,
    /// Outlines of primitive colliders and of each part of a compound (spheres, capsules,
    /// cuboids, cylinders, which have no mesh to render; a mesh part's local box).
    pub primitive_outlines: bool,
    /// This level of each collider's balanced AABB tree (0 is the root).
    pub tree_level: Option<usize>,
    /// Volume gradient arrows (`−∂V/∂x_b` at the contact point).
    pub volume_gradients: bool,
    /// The volume ray samples: each part of a sampling line inside both solids of an
    /// interfering pair, coloured by axis (x red, y green, z blue). Recast for drawing; see
    /// the module docs for the cost.
    pub ray_samples: bool,
    /// The sampling density: at the entry of each sampled segment, a square the size of the
    /// pixel (uniform) or EBPI tile (adaptive) that ray stands for, across its axis, from
    /// yellow (the finest in view) to blue (the coarsest). Recast like `ray_samples`.
    pub sample_density: bool,
    /// At most this many interfering pairs (in pair order) are recast for `ray_samples` and
    /// `sample_density` per frame.
    pub sampled_pairs: usize,
    /// Joints: each anchor (a cross), the line between the two anchors (their error), the joint
    /// axis on the first body and, for a revolute joint with a limit, the arc of its range
    /// (broken joints in grey).
    pub joints: bool,
}

impl Default for InterfereGizmos {
    fn default() -> Self {
        Self {
            contacts: true,
            normal_length: 0.2,
            interfering_triangles: true,
            world_boxes: false,
            primitive_outlines: true,
            tree_level: None,
            volume_gradients: false,
            ray_samples: false,
            sample_density: false,
            sampled_pairs: 8,
            joints: true,
        }
    }
}

/// Registers [`InterfereGizmos`] (disabled by default) and its drawing systems, when Bevy's
/// gizmo plugin is present.
#[derive(Default)]
pub struct InterfereDebugPlugin;

impl Plugin for InterfereDebugPlugin {
    fn build(&self, app: &mut App) {
        if !app.is_plugin_added::<bevy::gizmos::GizmoPlugin>() {
            debug!("interfere: no GizmoPlugin, debug drawing disabled");
            return;
        }
        app.init_gizmo_group::<InterfereGizmos>();
        // Off until the game (or the overlay) turns it on.
        if let Some(mut store) = app.world_mut().get_resource_mut::<GizmoConfigStore>() {
            store.config_mut::<InterfereGizmos>().0.enabled = false;
        }
        app.add_systems(
            PostUpdate,
            (draw_debug, draw_joints)
                .run_if(gizmos_enabled)
                .run_if(resource_exists::<PhysicsWorld>)
                .after(bevy::transform::TransformSystems::Propagate),
        );
    }
}

const JOINT: Color = Color::srgb(0.2, 0.8, 1.0);
const JOINT_AXIS: Color = Color::srgb(1.0, 0.4, 0.9);
const JOINT_BROKEN: Color = Color::srgb(0.5, 0.5, 0.5);

/// Draws the joints (see [`InterfereGizmos::joints`]).
fn draw_joints(mut gizmos: Gizmos<InterfereGizmos>, pw: Res<PhysicsWorld>) {
    if !gizmos.config_ext.joints {
        return;
    }
    let sim = pw.simulation();
    let size = gizmos.config_ext.normal_length * 0.5;
    for h in sim.joints().collect::<Vec<_>>() {
        let (Some(j), Some((a, b)), Some(state)) =
            (sim.joint(h), sim.joint_bodies(h), sim.joint_state(h))
        else {
            continue;
        };
        let (Some(ba), Some(bb)) = (sim.body(a), sim.body(b)) else {
            continue;
        };
        let pa = j.frame_a.world_anchor(ba).as_vec3();
        let pb = j.frame_b.world_anchor(bb).as_vec3();
        let qa = j.frame_a.world_rotation(ba);
        let (color, axis_color) = if state.broken {
            (JOINT_BROKEN, JOINT_BROKEN)
        } else {
            (JOINT, JOINT_AXIS)
        };
        for p in [pa, pb] {
            for d in [Vec3::X, Vec3::Y, Vec3::Z] {
                gizmos.line(p - d * size * 0.3, p + d * size * 0.3, color);
            }
        }
        gizmos.line(pa, pb, color);
        let axis = (qa * DVec3::X).as_vec3();
        gizmos.line(pa, pa + axis * size * 2.0, axis_color);
        if let interfere_dynamics::JointKind::Revolute {
            limit: Some(limit), ..
        } = j.kind
        {
            // The range's arc in the plane across the hinge, from the first frame's Y axis.
            let (y, z) = ((qa * DVec3::Y).as_vec3(), (qa * DVec3::Z).as_vec3());
            let steps = 16;
            let at = |t: f64| {
                let angle = (limit.min + (limit.max - limit.min) * t) as f32;
                pa + (y * angle.cos() + z * angle.sin()) * size * 1.5
            };
            for k in 0..steps {
                let (t0, t1) = (k as f64 / steps as f64, (k + 1) as f64 / steps as f64);
                gizmos.line(at(t0), at(t1), axis_color);
            }
            gizmos.line(pa, at(0.0), axis_color);
            gizmos.line(pa, at(1.0), axis_color);
        }
    }
}

fn gizmos_enabled(store: Res<GizmoConfigStore>) -> bool {
    store.config::<InterfereGizmos>().0.enabled
}

const CONTACT: Color = Color::srgb(1.0, 0.85, 0.1);
const TRIANGLE: Color = Color::srgb(1.0, 0.2, 0.2);
const BOX: Color = Color::srgb(0.3, 0.8, 0.3);
const BOX_HIT: Color = Color::srgb(1.0, 0.25, 0.25);
const TREE: Color = Color::srgb(0.3, 0.6, 1.0);
const GRADIENT: Color = Color::srgb(0.9, 0.3, 0.9);
const OUTLINE: Color = Color::srgb(0.85, 0.85, 0.95);
const AXES: [Color; 3] = [
    Color::srgb(1.0, 0.3, 0.3),
    Color::srgb(0.3, 1.0, 0.3),
    Color::srgb(0.35, 0.5, 1.0),
];
const FINE: Color = Color::srgb(1.0, 0.9, 0.2);
const COARSE: Color = Color::srgb(0.2, 0.4, 1.0);

/// One sampled part of a volume ray: where the line lies inside both solids of a pair
/// (an interval of Wang–Faure–Pai 2012 Eq. 1), with the sampling cell it stands for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RaySegment {
    /// Entry into the intersection, in A's frame.
    pub start: DVec3,
    /// Exit from the intersection, in A's frame.
    pub end: DVec3,
    /// The sampling axis (0, 1, 2 for x, y, z).
    pub axis: u8,
    /// Area of the pixel or EBPI tile the ray stands for (across its axis), so that
    /// `Σ length · cell_area` over one axis's segments is that axis's volume estimate.
    pub cell_area: f64,
}

/// The sampled segments of a volume result, from its interval endpoints
/// ([`VolumeResult::points`], filled when points are collected): consecutive entry and exit
/// points of each line ([`VolumeResult::lines`]). A point without a partner on its line (only
/// possible for an open mesh) is skipped.
pub fn ray_segments(result: &VolumeResult) -> Vec<RaySegment> {
    result
        .lines()
        .flat_map(|line| line.chunks_exact(2))
        .filter_map(|ends| {
            let (p, q) = (&ends[0], &ends[1]);
            let k = p.axis as usize;
            (k < 3 && q.point[k] >= p.point[k]).then(|| RaySegment {
                start: p.point,
                end: q.point,
                axis: p.axis,
                cell_area: p.area * p.normal[k].abs(),
            })
        })
        .collect()
}

/// The recast samples of the first `sampled_pairs` interfering pairs, in world space.
fn draw_samples(
    pw: &PhysicsWorld,
    settings: &PhysicsSettings,
    cfg: &InterfereGizmos,
    gizmos: &mut Gizmos<InterfereGizmos>,
) {
    let sim = pw.simulation();
    let input = sim.stage_input(&[]);
    // An exact volume casts no rays: `sampled_volume` then samples a default lattice.
    let method = settings.volume;
    let mut drawn: Vec<(interfere_geometry::DPose, Vec<RaySegment>)> = Vec::new();
    for pair in sim.pair_contacts().iter().take(cfg.sampled_pairs) {
        let Some((Ok(result), frame)) = sampled_volume(&input, pair.a, pair.b, method) else {
            continue;
        };
        drawn.push((frame, ray_segments(&result)));
    }
    let sides = drawn
        .iter()
        .flat_map(|(_, s)| s.iter().map(|s| s.cell_area.sqrt()))
        .filter(|s| *s > 0.0);
    let (lo, hi) = sides.fold((f64::INFINITY, 0.0f64), |(lo, hi), s| {
        (lo.min(s), hi.max(s))
    });
    for (pa, segments) in &drawn {
        let world = |p: DVec3| pa.transform_dpoint(p).as_vec3();
        for s in segments {
            let k = s.axis as usize;
            if cfg.ray_samples {
                gizmos.line(world(s.start), world(s.end), AXES[k]);
            }
            if cfg.sample_density {
                let side = s.cell_area.sqrt();
                let t = if hi > lo {
                    ((side / lo).ln() / (hi / lo).ln()) as f32
                } else {
                    0.0
                };
                let colour = FINE.mix(&COARSE, t.clamp(0.0, 1.0));
                let (u, v) = ((k + 1) % 3, (k + 2) % 3);
                let half = 0.5 * side;
                let corner = |du: f64, dv: f64| {
                    let mut p = s.start;
                    p[u] += du * half;
                    p[v] += dv * half;
                    world(p)
                };
                gizmos.lineloop(
                    [
                        corner(-1.0, -1.0),
                        corner(1.0, -1.0),
                        corner(1.0, 1.0),
                        corner(-1.0, 1.0),
                    ],
                    colour,
                );
            }
        }
    }
}

fn draw_debug(
    pw: Res<PhysicsWorld>,
    settings: Option<Res<PhysicsSettings>>,
    mut gizmos: Gizmos<InterfereGizmos>,
) {
    let cfg = gizmos.config_ext.clone();
    let sim = pw.simulation();
    if (cfg.ray_samples || cfg.sample_density)
        && let Some(settings) = &settings
    {
        draw_samples(&pw, settings, &cfg, &mut gizmos);
    }
    if cfg.contacts || cfg.volume_gradients {
        for k in sim
            .pair_contacts()
            .iter()
            .flat_map(|c| &c.parts)
            .filter(|k| !k.is_predicted())
        {
            let p = k.point.as_vec3();
            let g = k.linear;
            let glen = g.length();
            if cfg.contacts && glen > 0.0 {
                let n = (-g / glen).as_vec3();
                let depth = (k.volume / glen) as f32;
                gizmos.sphere(
                    Isometry3d::from_translation(p),
                    0.02 * cfg.normal_length * 5.0,
                    CONTACT,
                );
                gizmos.arrow(p, p + n * cfg.normal_length.max(depth), CONTACT);
            }
            if cfg.volume_gradients {
                gizmos.arrow(p, p - g.as_vec3(), GRADIENT);
            }
        }
    }
    let mesh = |i: usize| match sim.colliders().get(i).and_then(Option::as_ref) {
        Some(c) => match &c.shape {
            Shape::Mesh(m) => Some(m.clone()),
            _ => None,
        },
        None => None,
    };
    if cfg.interfering_triangles {
        for pair in sim.pair_contacts() {
            for &(ta, tb) in &pair.triangle_pairs {
                for (body, t) in [(pair.a, ta), (pair.b, tb)] {
                    let Some(shape) = mesh(body) else {
                        continue;
                    };
                    let pose = sim.bodies()[body].mesh_pose();
                    let solid = shape.solid();
                    let Some(tri) = solid.triangles().get(t as usize) else {
                        continue;
                    };
                    let v =
                        tri.map(|i| pose.transform_point(solid.vertices()[i as usize]).as_vec3());
                    gizmos.linestrip([v[0], v[1], v[2], v[0]], TRIANGLE);
                }
            }
        }
    }
    if cfg.world_boxes {
        let hit: Vec<usize> = sim
            .pair_contacts()
            .iter()
            .flat_map(|p| [p.a, p.b])
            .collect();
        for (i, body) in sim.bodies().iter().enumerate() {
            // Every bounded shape (meshes, primitives, compounds; a half-space has no box).
            let Some(c) = sim.colliders().get(i).and_then(Option::as_ref) else {
                continue;
            };
            if let Some(b) = c.shape.world_aabb(&body.mesh_pose()) {
                let (lo, hi) = (
                    Vec3::from_array(b.min.to_array()),
                    Vec3::from_array(b.max.to_array()),
                );
                let colour = if hit.contains(&i) { BOX_HIT } else { BOX };
                gizmos.cube(
                    Transform::from_translation((lo + hi) * 0.5).with_scale(hi - lo),
                    colour,
                );
            }
        }
    }
    if cfg.primitive_outlines {
        for (i, body) in sim.bodies().iter().enumerate() {
            let Some(c) = sim.colliders().get(i).and_then(Option::as_ref) else {
                continue;
            };
            let pose = body.mesh_pose();
            match &c.shape {
                Shape::Primitive(p) => outline(&mut gizmos, p.primitive(), &pose),
                Shape::Compound(k) => {
                    for (part, local) in k.parts() {
                        outline(&mut gizmos, part.primitive(), &pose.mul(&local));
                    }
                    // A mesh part: its local box, placed with the part.
                    for m in k.meshes() {
                        let (lo, hi) = m.shape.local_box();
                        let Ok(cuboid) = Primitive::cuboid((hi - lo) * 0.5) else {
                            continue;
                        };
                        let centre = DPose {
                            rotation: DMat3::IDENTITY,
                            translation: (lo + hi) * 0.5,
                        };
                        outline(&mut gizmos, &cuboid, &pose.mul(&m.pose).mul(&centre));
                    }
                }
                Shape::Mesh(_) | Shape::HalfSpace(_) => {}
            }
        }
    }
    if let Some(level) = cfg.tree_level {
        for (i, body) in sim.bodies().iter().enumerate() {
            let Some(shape) = mesh(i) else {
                continue;
            };
            let tree = shape.queries().balanced_tree();
            let level = level.min(tree.levels().saturating_sub(1));
            let pose = body.mesh_pose();
            let rotation = Quat::from_mat3(&pose.rotation.as_mat3());
            for node in tree.level(level) {
                let (lo, hi) = (Vec3::from_array(node.min), Vec3::from_array(node.max));
                let centre = pose.transform_point(interfere_geometry::glam::Vec3::from_array(
                    ((lo + hi) * 0.5).to_array(),
                ));
                gizmos.cube(
                    Transform {
                        translation: centre.as_vec3(),
                        rotation,
                        scale: hi - lo,
                    },
                    TREE,
                );
            }
        }
    }
}

/// Draws a primitive's outline at `pose` (its local frame to the world).
fn outline(gizmos: &mut Gizmos<InterfereGizmos>, p: &Primitive, pose: &DPose) {
    let at = Isometry3d::new(
        pose.translation.as_vec3(),
        Quat::from_mat3(&pose.rotation.as_mat3()),
    );
    match *p {
        Primitive::Sphere { radius, .. } => {
            gizmos.sphere(at, radius as f32, OUTLINE);
        }
        Primitive::Capsule {
            half_length,
            radius,
            ..
        } => {
            gizmos.primitive_3d(
                &Capsule3d::new(radius as f32, 2.0 * half_length as f32),
                at,
                OUTLINE,
            );
        }
        Primitive::Cuboid { half_extents, .. } => {
            gizmos.primitive_3d(
                &Cuboid::from_size(2.0 * half_extents.as_vec3()),
                at,
                OUTLINE,
            );
        }
        Primitive::Cylinder {
            half_height,
            radius,
            ..
        } => {
            gizmos.primitive_3d(
                &Cylinder::new(radius as f32, 2.0 * half_height as f32),
                at,
                OUTLINE,
            );
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use interfere_geometry::glam::{Quat, Vec3};
    use interfere_geometry::shapes::{cuboid, icosphere, torus};
    use interfere_geometry::{
        AdaptiveOptions, Pose, Sampling, Tolerance, UniformOptions, adaptive_volume, uniform_volume,
    };

    /// `Σ length · cell_area` per axis must give back the result's own axis volumes: the
    /// segments are exactly the intervals the estimate integrated.
    fn assert_segments_integrate(r: &VolumeResult) -> usize {
        let segments = ray_segments(r);
        assert_eq!(segments.len() * 2, r.points.len(), "every endpoint paired");
        for k in 0..3 {
            let sum: f64 = segments
                .iter()
                .filter(|s| s.axis as usize == k)
                .map(|s| {
                    let d = s.end - s.start;
                    assert!(d[k] >= 0.0);
                    assert_eq!(d[(k + 1) % 3], 0.0, "segment along its axis");
                    assert_eq!(d[(k + 2) % 3], 0.0, "segment along its axis");
                    d[k] * s.cell_area
                })
                .sum();
            let want = r.axis_volumes[k];
            assert!(
                (sum - want).abs() <= 1e-9 * want.abs().max(1e-12),
                "axis {k}: segments integrate to {sum}, estimate {want}"
            );
        }
        segments.len()
    }

    fn poses() -> Vec<Pose> {
        (0..12)
            .map(|i| {
                let f = i as f32;
                let axis = Vec3::new((f * 1.3).sin(), (f * 0.7).cos(), 0.5 + 0.1 * f).normalize();
                Pose::new(
                    Quat::from_axis_angle(axis, 0.37 * f),
                    Vec3::new(
                        0.3 * (f * 0.9).cos(),
                        0.25 * (f * 1.7).sin(),
                        0.1 * (f - 6.0) / 6.0,
                    ),
                )
            })
            .collect()
    }

    #[test]
    fn uniform_segments_integrate_to_the_estimate() {
        let a = torus(0.5, 0.2, 24, 12).unwrap();
        let b = icosphere(0.4, 2).unwrap();
        let mut overlapping = 0;
        for pose in poses() {
            for sampling in [Sampling::Resolution(16), Sampling::Spacing(0.05)] {
                let opts = UniformOptions {
                    sampling,
                    ..Default::default()
                };
                let r = uniform_volume(&a, &b, &pose.to_f64(), &opts).expect("query");
                if assert_segments_integrate(&r) > 0 {
                    overlapping += 1;
                }
            }
        }
        assert!(overlapping >= 12, "only {overlapping} overlapping cases");
    }

    #[test]
    fn adaptive_segments_integrate_to_the_estimate() {
        let a = torus(0.5, 0.2, 24, 12).unwrap();
        let b = icosphere(0.4, 2).unwrap();
        let mut sides = Vec::new();
        for pose in poses().into_iter().take(6) {
            let opts = AdaptiveOptions {
                tolerance: Tolerance::Relative(0.02),
                finest_resolution: 32,
                ..Default::default()
            };
            let r = adaptive_volume(&a, &b, &pose.to_f64(), &opts).expect("query");
            assert_segments_integrate(&r.result);
            sides.extend(ray_segments(&r.result).iter().map(|s| s.cell_area));
        }
        let (lo, hi) = sides
            .iter()
            .fold((f64::INFINITY, 0.0f64), |(l, h), &s| (l.min(s), h.max(s)));
        assert!(hi > lo, "adaptive tiles of one size only ({lo})");
    }

    #[test]
    fn boxes_give_analytic_segments_and_touching_boxes_none() {
        let a = cuboid(Vec3::splat(0.5)).unwrap();
        let b = cuboid(Vec3::new(0.25, 0.5, 0.5)).unwrap();
        let opts = UniformOptions {
            sampling: Sampling::Spacing(0.1),
            ..Default::default()
        };
        // B overlaps A's +x half by 0.2 in x: every segment along x is 0.2 long.
        let overlap = Pose::from_translation(Vec3::new(0.55, 0.0, 0.0)).to_f64();
        let r = uniform_volume(&a, &b, &overlap, &opts).expect("query");
        assert_segments_integrate(&r);
        let segments = ray_segments(&r);
        for s in segments.iter().filter(|s| s.axis == 0) {
            assert!((s.end.x - s.start.x - 0.2).abs() < 1e-6, "{s:?}");
            assert!((s.cell_area - 0.01).abs() < 1e-12);
        }
        assert!((r.volume - 0.2).abs() < 1e-6, "volume {}", r.volume);
        // Nested: B inside A; every segment is B's own chord.
        let nested = Pose::from_translation(Vec3::new(0.1, 0.0, 0.0)).to_f64();
        let small = cuboid(Vec3::splat(0.2)).unwrap();
        let r = uniform_volume(&a, &small, &nested, &opts).expect("query");
        assert!(assert_segments_integrate(&r) > 0);
        // Touching faces: no interval, nothing drawn.
        let touching = Pose::from_translation(Vec3::new(0.75, 0.0, 0.0)).to_f64();
        let r = uniform_volume(&a, &b, &touching, &opts).expect("query");
        assert!(ray_segments(&r).is_empty());
    }
}
