//! The kinematic character controller as components: a [`Character`] on a kinematic body with a
//! capsule collider is moved each fixed step by the translation the game asked for, with
//! move-and-slide against the exact solids (`interfere_dynamics::CharacterController`: steps,
//! slopes, snapping to the ground, pushing dynamic bodies), and its [`CharacterOutput`] says
//! where it went, whether it stands on the ground and what it touched.
//!
//! ```no_run
//! use bevy::prelude::*;
//! use bevy_interfere::prelude::*;
//!
//! fn spawn(mut commands: Commands) {
//!     let character = Character::default();
//!     commands.spawn((
//!         RigidBody::Kinematic,
//!         character.collider(),
//!         character,
//!         Transform::from_xyz(0.0, 1.0, 0.0),
//!     ));
//! }
//!
//! /// Each fixed step: walk along +X at 2 m/s, falling when off the ground.
//! fn walk(
//!     time: Res<Time>,
//!     mut fall: Local<f32>,
//!     mut q: Query<(&mut Character, &CharacterOutput)>,
//! ) {
//!     for (mut c, out) in &mut q {
//!         *fall = if out.grounded { 0.0 } else { *fall - 9.81 * time.delta_secs() };
//!         c.translation = Some(Vec3::new(2.0, *fall, 0.0) * time.delta_secs());
//!     }
//! }
//! # App::new().add_systems(Startup, spawn).add_systems(FixedUpdate, walk);
//! ```
//!
//! The move runs in [`InterfereSystems::Prepare`](crate::InterfereSystems), after the bodies and
//! their drives are mirrored and before the step, which carries the kinematic body to the planned
//! position; the collider's layers decide what it collides with (sensors never stop it). The
//! controller's capsule is the one that moves; [`Character::collider`] gives the matching
//! collider, which the dynamic bodies collide with.

use crate::world::PhysicsWorld;
use crate::{Collider, InterfereSystems, PhysicsSchedule};
use bevy::ecs::schedule::ScheduleLabel;
use bevy::platform::collections::HashSet;
use bevy::prelude::*;
use interfere_dynamics::{CharacterController, CharacterMove};

/// A character moved by the controller (see the module documentation).
#[derive(Component, Clone, Debug, PartialEq)]
#[require(CharacterOutput)]
pub struct Character {
    /// The capsule and the walking rules (SI units, radians; the capsule's axis is `up`).
    pub controller: CharacterController,
    /// The translation wanted over the next fixed step; taken (and set back to `None`) by the
    /// step. `None` stands still (still pushed out of overlaps and snapped to the ground).
    pub translation: Option<Vec3>,
}

impl Default for Character {
    /// [`CharacterController::default`]: a 1.8 m capsule of radius 0.3 m.
    fn default() -> Self {
        Self::new(CharacterController::default())
    }
}

impl Character {
    /// A character with these rules.
    pub fn new(controller: CharacterController) -> Self {
        Self {
            controller,
            translation: None,
        }
    }

    /// The collider matching the controller's capsule (axis local Y, as Bevy's `Capsule3d`),
    /// for an up direction along the entity's Y axis.
    pub fn collider(&self) -> Collider {
        let c = &self.controller;
        if c.half_length > 0.0 {
            Collider::capsule(c.half_length as f32, c.radius as f32)
        } else {
            Collider::sphere(c.radius as f32)
        }
    }
}

/// A solid the character touched.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CharacterContact {
    /// The body's entity.
    pub entity: Entity,
    /// The normal at the contact, towards the character.
    pub normal: Vec3,
    /// The contact point.
    pub point: Vec3,
}

/// What the last move did (written each fixed step).
#[derive(Component, Clone, Debug, Default, PartialEq)]
pub struct CharacterOutput {
    /// The translation asked for.
    pub desired: Vec3,
    /// The translation applied.
    pub translation: Vec3,
    /// Whether it stands on walkable ground.
    pub grounded: bool,
    /// What is under it within its skin (walkable or not).
    pub ground: Option<CharacterContact>,
    /// The solids it touched while moving, in order.
    pub collisions: Vec<CharacterContact>,
    /// The height climbed on steps, m.
    pub stepped: f32,
    /// The distance it was put back down onto the ground, m.
    pub snapped: f32,
}

impl CharacterOutput {
    fn from_move(m: &CharacterMove, pw: &PhysicsWorld) -> Self {
        let contact = |body, normal: bevy::math::DVec3, point: bevy::math::DVec3| {
            pw.entity_of(body).map(|entity| CharacterContact {
                entity,
                normal: normal.as_vec3(),
                point: point.as_vec3(),
            })
        };
        Self {
            desired: m.desired.as_vec3(),
            translation: m.translation.as_vec3(),
            grounded: m.grounded,
            ground: m.ground.and_then(|g| contact(g.body, g.normal, g.point)),
            collisions: m
                .collisions
                .iter()
                .filter_map(|c| contact(c.body, c.normal, c.point))
                .collect(),
            stepped: m.stepped as f32,
            snapped: m.snapped as f32,
        }
    }
}

/// Characters moved by the kinematic character controller (see the module documentation); in
/// [`crate::InterferePlugins`].
pub struct CharacterPlugin;

impl Plugin for CharacterPlugin {
    fn build(&self, app: &mut App) {
        let schedule = app
            .world()
            .get_resource::<PhysicsSchedule>()
            .map(|s| s.0)
            .unwrap_or_else(|| FixedPostUpdate.intern());
        app.add_systems(
            schedule,
            move_characters
                .in_set(InterfereSystems::Prepare)
                .after(crate::forces::sync_drives),
        );
    }
}

/// Prepare, after the drives: moves each character's kinematic body for the coming step.
fn move_characters(
    mut pw: ResMut<PhysicsWorld>,
    mut characters: Query<(Entity, &mut Character, &mut CharacterOutput)>,
    mut warned: Local<HashSet<Entity>>,
) {
    let pw = &mut *pw;
    warned.retain(|e| characters.contains(*e));
    for (entity, mut character, mut output) in &mut characters {
        let Some(h) = pw.handle(entity) else {
            continue; // not in the simulation yet (its collider is being prepared)
        };
        let translation = character.translation.take().unwrap_or(Vec3::ZERO);
        let filter = pw.sim.character_filter(h);
        match pw
            .sim
            .move_character(h, &character.controller, translation.as_dvec3(), &filter)
        {
            Ok(m) => *output = CharacterOutput::from_move(&m, pw),
            Err(e) => {
                if warned.insert(entity) {
                    warn!("interfere: character {entity} not moved: {e}");
                }
            }
        }
    }
}
