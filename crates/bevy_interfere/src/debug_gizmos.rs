//! The debug drawing: a [`GizmoConfigGroup`] whose switches draw contact points and normals,
//! interfering triangles, world boxes, one level of each collider's balanced AABB tree
//! (Greß–Zachmann 2004 §3, the hierarchy the volume rays and the GPU traversal use), and the
//! volume-gradient arrows of Wang–Faure–Pai 2012 §2.2.
//!
//! Every drawing system runs only while the group is enabled, so the overlay costs nothing
//! when it is off.

use crate::stepper::PhysicsWorld;
use bevy::gizmos::config::{GizmoConfigGroup, GizmoConfigStore};
use bevy::prelude::*;

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
    /// This level of each collider's balanced AABB tree (0 is the root).
    pub tree_level: Option<usize>,
    /// Volume gradient arrows (`−∂V/∂x_b` at the contact point).
    pub volume_gradients: bool,
}

impl Default for InterfereGizmos {
    fn default() -> Self {
        Self {
            contacts: true,
            normal_length: 0.2,
            interfering_triangles: true,
            world_boxes: false,
            tree_level: None,
            volume_gradients: false,
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
            draw_debug
                .run_if(gizmos_enabled)
                .run_if(resource_exists::<PhysicsWorld>)
                .after(bevy::transform::TransformSystems::Propagate),
        );
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

fn draw_debug(pw: Res<PhysicsWorld>, mut gizmos: Gizmos<InterfereGizmos>) {
    let cfg = gizmos.config_ext.clone();
    if cfg.contacts || cfg.volume_gradients {
        for c in &pw.contacts {
            let k = &c.contact;
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
    if cfg.interfering_triangles {
        for pair in &pw.interfering {
            for &(ta, tb) in &pair.triangle_pairs {
                for (body, t) in [(pair.a, ta), (pair.b, tb)] {
                    let Some(shape) = &pw.slots[body].shape else {
                        continue;
                    };
                    let pose = pw.pose(body);
                    let Some(tri) = shape.solid.triangles().get(t as usize) else {
                        continue;
                    };
                    let v = tri.map(|i| {
                        pose.transform_point(shape.solid.vertices()[i as usize])
                            .as_vec3()
                    });
                    gizmos.linestrip([v[0], v[1], v[2], v[0]], TRIANGLE);
                }
            }
        }
    }
    if cfg.world_boxes {
        let hit: Vec<usize> = pw.interfering.iter().flat_map(|p| [p.a, p.b]).collect();
        for i in 0..pw.slots.len() {
            if let Some(b) = pw.world_aabb(i) {
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
    if let Some(level) = cfg.tree_level {
        for i in 0..pw.slots.len() {
            let Some(shape) = &pw.slots[i].shape else {
                continue;
            };
            let tree = shape.collider.balanced_tree();
            let level = level.min(tree.levels().saturating_sub(1));
            let pose = pw.pose(i);
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
