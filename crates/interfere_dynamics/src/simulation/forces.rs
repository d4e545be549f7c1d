//! Driving bodies from the game: persistent forces and torques, one-shot impulses, gravity
//! scale, damping, locked axes and speed limits, set through the [`Simulation`] by handle (the
//! model and its integration are documented in [`crate::body`]; no paper, these are the usual
//! game-engine controls).
//!
//! Every setter checks the handle, refuses non-finite or out-of-range input with
//! [`SimulationError::Body`] naming the field (the body is left unchanged), and wakes a sleeping
//! body when the value actually changes (setting the same value again leaves a sleeping body
//! asleep, so a game may set its controls every frame). Forces, torques and points are in world
//! axes; a force at a point is turned into the force and a torque about the centre of mass as it
//! is at the call.

use crate::body::{Body, LockedAxes};
use crate::simulation::{BodyHandle, Simulation, SimulationError};
use interfere_geometry::glam::DVec3;

impl Simulation {
    /// Runs `change` on the body, waking it if the body changed.
    fn drive(
        &mut self,
        h: BodyHandle,
        change: impl FnOnce(&mut Body) -> Result<(), crate::BodyError>,
    ) -> Result<(), SimulationError> {
        let id = self.check(h)?;
        let b = self.world.body_mut(id).expect("checked");
        let before = b.clone();
        change(b)?;
        if *b != before {
            self.wake_id(id);
        }
        Ok(())
    }

    /// Multiplies gravity on the body (1 by default; 0 floats, 2 falls twice as fast).
    pub fn set_gravity_scale(&mut self, h: BodyHandle, scale: f64) -> Result<(), SimulationError> {
        self.drive(h, |b| b.set_gravity_scale(scale))
    }

    /// Linear and angular damping per second (`v ← v / (1 + c h)` every substep).
    pub fn set_damping(
        &mut self,
        h: BodyHandle,
        linear: f64,
        angular: f64,
    ) -> Result<(), SimulationError> {
        self.drive(h, |b| {
            let mut next = b.clone();
            next.set_linear_damping(linear)?;
            next.set_angular_damping(angular)?;
            *b = next;
            Ok(())
        })
    }

    /// Locks world axes of the body's translation and rotation.
    pub fn set_locked_axes(
        &mut self,
        h: BodyHandle,
        locked: LockedAxes,
    ) -> Result<(), SimulationError> {
        self.drive(h, |b| {
            b.set_locked_axes(locked);
            Ok(())
        })
    }

    /// Largest linear and angular speed (`f64::INFINITY` for no limit).
    pub fn set_max_speeds(
        &mut self,
        h: BodyHandle,
        linear: f64,
        angular: f64,
    ) -> Result<(), SimulationError> {
        self.drive(h, |b| {
            let mut next = b.clone();
            next.set_max_linear_speed(linear)?;
            next.set_max_angular_speed(angular)?;
            *b = next;
            Ok(())
        })
    }

    /// Sets the persistent force through the centre of mass and the persistent torque
    /// (replacing both).
    pub fn set_force_and_torque(
        &mut self,
        h: BodyHandle,
        force: DVec3,
        torque: DVec3,
    ) -> Result<(), SimulationError> {
        self.drive(h, |b| {
            let mut next = b.clone();
            next.set_force(force)?;
            next.set_torque(torque)?;
            *b = next;
            Ok(())
        })
    }

    /// Sets the persistent force through the centre of mass (the torque is kept).
    pub fn set_force(&mut self, h: BodyHandle, force: DVec3) -> Result<(), SimulationError> {
        self.drive(h, |b| b.set_force(force))
    }

    /// Sets the persistent torque (the force is kept).
    pub fn set_torque(&mut self, h: BodyHandle, torque: DVec3) -> Result<(), SimulationError> {
        self.drive(h, |b| b.set_torque(torque))
    }

    /// Adds a persistent force at world point `point` (the force, and the torque
    /// `(point − centre of mass) × force` about the centre of mass now).
    pub fn add_force_at_point(
        &mut self,
        h: BodyHandle,
        force: DVec3,
        point: DVec3,
    ) -> Result<(), SimulationError> {
        self.drive(h, |b| b.add_force_at_point(force, point))
    }

    /// Removes the persistent force and torque.
    pub fn clear_forces(&mut self, h: BodyHandle) -> Result<(), SimulationError> {
        self.drive(h, |b| {
            b.clear_forces();
            Ok(())
        })
    }

    /// An impulse through the centre of mass, applied once at the start of the next step
    /// (`Δv = J / m`); impulses queued before the step add up.
    pub fn apply_impulse(&mut self, h: BodyHandle, impulse: DVec3) -> Result<(), SimulationError> {
        self.drive(h, |b| b.queue_impulse(impulse))
    }

    /// An impulse at world point `point`, applied once at the start of the next step: linear
    /// momentum changes by `J`, angular momentum about the centre of mass by `(point − c) × J`.
    pub fn apply_impulse_at_point(
        &mut self,
        h: BodyHandle,
        impulse: DVec3,
        point: DVec3,
    ) -> Result<(), SimulationError> {
        self.drive(h, |b| b.queue_impulse_at_point(impulse, point))
    }

    /// An angular impulse about the centre of mass, applied once at the start of the next step
    /// (`Δω = I⁻¹ A`).
    pub fn apply_angular_impulse(
        &mut self,
        h: BodyHandle,
        angular_impulse: DVec3,
    ) -> Result<(), SimulationError> {
        self.drive(h, |b| b.queue_angular_impulse(angular_impulse))
    }
}
