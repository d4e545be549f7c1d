//! Transform interpolation between fixed steps (no paper; the usual game-engine remedy for
//! motion that stutters when the display runs faster than the physics).
//!
//! A body with [`TransformInterpolation`] shows, every frame, the pose between its last two
//! fixed-step poses at the fixed clock's overstep fraction `α`: `lerp` of the translations and
//! `slerp` of the rotations (so the shown motion lags the simulation by up to one step, as in
//! avian's interpolation). The simulation itself never sees the interpolated pose: before the
//! fixed steps of a frame the `Transform` is put back to the last step's pose, unless the game
//! moved the body in the meantime, which is then a teleport as usual (and the interpolation
//! starts afresh from there).

use crate::InterfereSystems;
use crate::PhysicsSchedule;
use bevy::ecs::schedule::ScheduleLabel;
use bevy::prelude::*;

/// Opt-in per body: interpolate its `Transform` between fixed steps.
#[derive(Component, Reflect, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[reflect(Component)]
#[require(InterpolationState)]
pub struct TransformInterpolation;

/// The two step poses a [`TransformInterpolation`] body is shown between (read-only for games).
#[derive(Component, Clone, Copy, Debug, Default, PartialEq)]
pub struct InterpolationState {
    /// The pose after the step before the last one.
    pub previous: Option<(Vec3, Quat)>,
    /// The pose after the last step.
    pub current: Option<(Vec3, Quat)>,
    /// What was last shown (to tell the game's own moves from ours).
    shown: Option<(Vec3, Quat)>,
}

/// Adds [`TransformInterpolation`] (part of `InterferePlugins`).
#[derive(Default)]
pub struct InterpolationPlugin;

impl Plugin for InterpolationPlugin {
    fn build(&self, app: &mut App) {
        let schedule = app
            .world()
            .get_resource::<PhysicsSchedule>()
            .map_or(FixedPostUpdate.intern(), |s| s.0);
        app.register_type::<TransformInterpolation>()
            .add_systems(
                schedule,
                record_step
                    .in_set(InterfereSystems::Writeback)
                    .after(crate::writeback::writeback),
            )
            .add_systems(
                RunFixedMainLoop,
                (
                    restore_step_pose.in_set(RunFixedMainLoopSystems::BeforeFixedMainLoop),
                    show_interpolated.in_set(RunFixedMainLoopSystems::AfterFixedMainLoop),
                ),
            );
    }
}

/// After a step's write-back: the step's pose becomes the current one.
fn record_step(
    mut bodies: Query<(&Transform, &mut InterpolationState), With<TransformInterpolation>>,
) {
    for (transform, mut state) in &mut bodies {
        let pose = (transform.translation, transform.rotation);
        state.previous = Some(state.current.unwrap_or(pose));
        state.current = Some(pose);
        state.shown = None;
    }
}

/// Before the frame's fixed steps: the simulation's own pose back in `Transform`, unless the
/// game moved the body since it was shown (a teleport: the interpolation restarts from there).
fn restore_step_pose(
    mut bodies: Query<(&mut Transform, &mut InterpolationState), With<TransformInterpolation>>,
) {
    for (mut transform, mut state) in &mut bodies {
        let Some(shown) = state.shown.take() else {
            continue;
        };
        if (transform.translation, transform.rotation) == shown {
            if let Some((t, r)) = state.current {
                transform.translation = t;
                transform.rotation = r;
            }
        } else {
            state.previous = None;
            state.current = None;
        }
    }
}

/// After the frame's fixed steps: show the pose at the overstep fraction between the last two.
fn show_interpolated(
    time: Res<Time<Fixed>>,
    mut bodies: Query<(&mut Transform, &mut InterpolationState), With<TransformInterpolation>>,
) {
    let alpha = time.overstep_fraction().clamp(0.0, 1.0);
    for (mut transform, mut state) in &mut bodies {
        let (Some(a), Some(b)) = (state.previous, state.current) else {
            continue;
        };
        transform.translation = a.0.lerp(b.0, alpha);
        transform.rotation = a.1.slerp(b.1, alpha);
        state.shown = Some((transform.translation, transform.rotation));
    }
}
