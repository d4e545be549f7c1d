//! A kinematic character controller: an upright capsule moved by move-and-slide against the
//! solids of a [`Simulation`] with the exact capsule casts of `query::capsule_cast`, climbing
//! steps up to a height, refusing slopes steeper than a limit, snapping down to the ground it
//! walks on, and pushing the dynamic bodies it walks into with a bounded force.
//!
//! One move ([`Simulation::plan_character_move`]) runs:
//! 1. **Depenetration**: where the capsule overlaps a solid (a body moved into it), it is pushed
//!    out along the deepest contact's normal, up to four times.
//! 2. **Slide**: the capsule, grown by the skin, is cast along what is left of the translation;
//!    it stops where it touches, and the rest is projected onto the touched plane — onto the
//!    crease of two planes, stopped by three (Quake's `ClipVelocity`, Fauerby 2003). A slope
//!    steeper than `max_slope` is a wall for motion that would climb it: the rest slides along it
//!    horizontally. Up to `max_slides` casts.
//! 3. **Steps**: a character on the ground blocked by a wall-like contact no higher than
//!    `step_height` above its feet tries rising by the step height, moving on, and dropping back
//!    onto a walkable surface; dynamic bodies are pushed, not climbed.
//! 4. **Snapping**: a character that was on the ground and is not moving up is put back down
//!    onto walkable ground within `snap_distance` (down stairs and over crests).
//! 5. **Ground**: a short cast down says whether it stands on walkable ground, and on what.
//!
//! Because the casts stop the skin short of the surface, distances never go below the skin by
//! the casts' own motion, and because a cast does not stop for surfaces it only grazes, the
//! coplanar edges of a tessellated floor never catch the capsule: closed meshes have no internal
//! edges to snag on (the ghost collisions of hollow triangle-mesh controllers).
//!
//! [`Simulation::move_character`] drives a kinematic body with it: it plans the move from the
//! body's position, sets the body's velocity so the next step carries it there, and pushes the
//! dynamic bodies it touched (an impulse that stops their approach, at most `push_force · dt`).

use crate::body::BodyKind;
use crate::query::QueryFilter;
use crate::query::capsule_cast::{Capsule, CapsuleHit};
use crate::simulation::{BodyHandle, Simulation, SimulationError};
use interfere_geometry::glam::DVec3;

/// Pushes out of overlaps per move.
const DEPENETRATION_ROUNDS: usize = 4;

/// Why a character move was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CharacterError {
    /// A controller parameter is out of range.
    #[error("character controller: {field} = {value} ({reason})")]
    BadParameter {
        /// The parameter.
        field: &'static str,
        /// Its value.
        value: f64,
        /// What it must be.
        reason: &'static str,
    },
    /// The position or translation is not finite.
    #[error("character controller: non-finite {0}")]
    NonFinite(&'static str),
    /// The body driven is not kinematic.
    #[error("character controller: body {0:?} is not kinematic")]
    NotKinematic(BodyHandle),
    /// The body is missing.
    #[error(transparent)]
    Simulation(#[from] SimulationError),
}

/// The shape and the walking rules of a character (SI units, radians). In a scene file every
/// field is optional (the defaults below).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CharacterController {
    /// Half the length of the capsule's core segment (along `up`), m; zero for a sphere.
    pub half_length: f64,
    /// Capsule radius, m.
    pub radius: f64,
    /// The up direction; `None` is against gravity (`+Z` without gravity).
    pub up: Option<DVec3>,
    /// The gap kept between the capsule and the solids, m.
    pub skin: f64,
    /// The steepest walkable slope, rad (a surface whose normal is tilted more from `up` is a
    /// wall).
    pub max_slope: f64,
    /// The highest step climbed without jumping, m (0 disables steps).
    pub step_height: f64,
    /// How far down the character is put back onto the ground after a move, m (0 disables).
    pub snap_distance: f64,
    /// Casts per move (each contact touched uses one).
    pub max_slides: u32,
    /// The largest force with which the character pushes a dynamic body, N.
    pub push_force: f64,
}

impl Default for CharacterController {
    /// A 1.8 m tall capsule (radius 0.3 m), 1 cm skin, 45° slopes, 0.3 m steps, 0.3 m snap,
    /// 4 slides, 800 N of push.
    fn default() -> Self {
        Self {
            half_length: 0.6,
            radius: 0.3,
            up: None,
            skin: 0.01,
            max_slope: std::f64::consts::FRAC_PI_4,
            step_height: 0.3,
            snap_distance: 0.3,
            max_slides: 4,
            push_force: 800.0,
        }
    }
}

/// What the character is standing on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CharacterGround {
    /// The body.
    pub body: BodyHandle,
    /// The ground's normal at the contact (towards the character).
    pub normal: DVec3,
    /// The contact point.
    pub point: DVec3,
}

/// A solid the character touched during a move.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CharacterCollision {
    /// The body.
    pub body: BodyHandle,
    /// The normal at the contact, towards the character.
    pub normal: DVec3,
    /// The contact point.
    pub point: DVec3,
    /// The translation the character still had when it touched.
    pub remaining: DVec3,
}

/// The outcome of one character move.
#[derive(Clone, Debug, PartialEq)]
pub struct CharacterMove {
    /// The capsule's new centre.
    pub position: DVec3,
    /// The translation applied (new centre − old centre).
    pub translation: DVec3,
    /// The translation asked for.
    pub desired: DVec3,
    /// Whether it ends on walkable ground.
    pub grounded: bool,
    /// The ground it ends on, walkable or not (the closest surface below within the skin).
    pub ground: Option<CharacterGround>,
    /// The solids touched, in order.
    pub collisions: Vec<CharacterCollision>,
    /// The height climbed by steps, m.
    pub stepped: f64,
    /// The distance put back down onto the ground, m.
    pub snapped: f64,
    /// The push out of overlaps at the start.
    pub depenetration: DVec3,
}

impl CharacterController {
    /// Checks the parameters.
    pub fn validate(&self) -> Result<(), CharacterError> {
        let bad = |field, value, reason| {
            Err(CharacterError::BadParameter {
                field,
                value,
                reason,
            })
        };
        let checks: [(&'static str, f64, bool, &'static str); 7] = [
            (
                "half_length",
                self.half_length,
                self.half_length >= 0.0,
                "finite, ≥ 0",
            ),
            ("radius", self.radius, self.radius > 0.0, "finite, > 0"),
            (
                "skin",
                self.skin,
                self.skin > 0.0 && self.skin < self.radius,
                "in (0, radius)",
            ),
            (
                "max_slope",
                self.max_slope,
                (0.0..std::f64::consts::FRAC_PI_2).contains(&self.max_slope),
                "in [0, π/2)",
            ),
            (
                "step_height",
                self.step_height,
                self.step_height >= 0.0,
                "finite, ≥ 0",
            ),
            (
                "snap_distance",
                self.snap_distance,
                self.snap_distance >= 0.0,
                "finite, ≥ 0",
            ),
            (
                "push_force",
                self.push_force,
                self.push_force >= 0.0,
                "finite, ≥ 0",
            ),
        ];
        for (field, value, ok, reason) in checks {
            if !(value.is_finite() && ok) {
                return bad(field, value, reason);
            }
        }
        if self.max_slides == 0 {
            return bad("max_slides", 0.0, "at least 1");
        }
        if let Some(up) = self.up
            && !(up.is_finite() && up.length_squared() > 0.0)
        {
            return bad("up", up.length(), "finite and non-zero");
        }
        Ok(())
    }

    /// The capsule centred at `position` with its core along `up`.
    pub fn capsule(&self, position: DVec3, up: DVec3) -> Capsule {
        Capsule {
            a: position - up * self.half_length,
            b: position + up * self.half_length,
            radius: self.radius,
        }
    }
}

/// `v` with the components into the planes `normals` removed: projected onto the last plane,
/// onto the crease of two, stopped by three that it still pushes into.
fn clip(v: DVec3, normals: &[DVec3]) -> DVec3 {
    let Some((&n, earlier)) = normals.split_last() else {
        return v;
    };
    let mut out = v - n * v.dot(n).min(0.0);
    for &m in earlier {
        if out.dot(m) < -1e-12 * v.length() {
            let crease = m.cross(n);
            let len = crease.length();
            if len < 1e-9 {
                return DVec3::ZERO;
            }
            let e = crease / len;
            out = e * e.dot(v);
            if earlier.iter().any(|&k| out.dot(k) < -1e-12 * v.length()) {
                return DVec3::ZERO;
            }
            break;
        }
    }
    out
}

/// One move's working state.
struct Mover<'a, 's> {
    sim: &'s Simulation,
    ctrl: &'a CharacterController,
    filter: &'a QueryFilter<'a>,
    up: DVec3,
    cos_slope: f64,
}

impl Mover<'_, '_> {
    fn skinned(&self, p: DVec3) -> Capsule {
        self.ctrl.capsule(p, self.up).inflated(self.ctrl.skin)
    }

    fn cast(&self, p: DVec3, d: DVec3) -> Option<CapsuleHit> {
        if d.length_squared() == 0.0 {
            return None;
        }
        self.sim.cast_capsule(&self.skinned(p), d, self.filter)
    }

    fn walkable(&self, n: DVec3) -> bool {
        n.dot(self.up) >= self.cos_slope
    }

    fn is_dynamic(&self, h: BodyHandle) -> bool {
        self.sim
            .body(h)
            .is_some_and(|b| b.kind == BodyKind::Dynamic)
    }

    /// The ground within the skin below `p` (a cast down by the skin).
    fn ground(&self, p: DVec3) -> Option<CharacterGround> {
        self.cast(p, -self.up * self.ctrl.skin)
            .map(|h| CharacterGround {
                body: h.body,
                normal: h.normal,
                point: h.point,
            })
    }

    /// Whether a contact at `point` with normal `normal` holds up a character centred at `p`:
    /// its normal is walkable, or it is below the centre, no higher than a step above the feet,
    /// on the edge of walkable ground (a short ray down just beside the contact, towards or away
    /// from the centre, meets walkable ground at about its height). A capsule going up or
    /// standing on the nosing of a stair touches only the edge.
    fn supports(&self, p: DVec3, point: DVec3, normal: DVec3) -> bool {
        if self.walkable(normal) {
            return true;
        }
        let foot = p - self.up * (self.ctrl.half_length + self.ctrl.radius + self.ctrl.skin);
        let height = (point - foot).dot(self.up);
        if (point - p).dot(self.up) >= 0.0 || height > self.ctrl.step_height {
            return false;
        }
        let toward = (p - point) - self.up * (p - point).dot(self.up);
        let Some(dir) = toward.try_normalize() else {
            return false;
        };
        let reach = 0.1 * self.ctrl.radius;
        [dir, -dir].into_iter().any(|side| {
            let origin = point + side * reach + self.up * reach;
            self.sim
                .cast_ray(origin, -self.up, 2.0 * reach, false, self.filter)
                .is_some_and(|h| self.walkable(h.normal))
        })
    }

    /// [`Self::ground`], and whether it holds the character up.
    fn standing(&self, p: DVec3) -> (Option<CharacterGround>, bool) {
        let g = self.ground(p);
        let held = g.is_some_and(|g| self.supports(p, g.point, g.normal));
        (g, held)
    }

    /// Pushes the capsule out of overlapping solids.
    fn depenetrate(&self, mut p: DVec3) -> DVec3 {
        for _ in 0..DEPENETRATION_ROUNDS {
            let capsule = self.ctrl.capsule(p, self.up);
            let deepest = self
                .sim
                .capsule_contacts(&capsule, 0.0, self.filter)
                .into_iter()
                .filter(|c| c.distance < 0.0)
                .min_by(|a, b| a.distance.total_cmp(&b.distance));
            let Some(c) = deepest else { break };
            p += c.normal * (-c.distance + 0.5 * self.ctrl.skin);
        }
        p
    }

    /// Climbs a step: rise by the step height (less under a ceiling), move on by `horizontal`,
    /// drop back onto the step. The new centre, the horizontal distance covered and the landing,
    /// or `None` when that is not a step (blocked higher up, nothing to land on within the
    /// step height, no height gained, or a landing that is not walkable).
    fn step_up(&self, p: DVec3, horizontal: DVec3) -> Option<(DVec3, DVec3, CapsuleHit)> {
        let rise = self.up * self.ctrl.step_height;
        let r = self.cast(p, rise).map_or(1.0, |h| h.fraction);
        let p1 = p + rise * r;
        let f = self.cast(p1, horizontal).map_or(1.0, |h| h.fraction);
        let moved = horizontal * f;
        if moved.length() < 1e-6 {
            return None;
        }
        let p2 = p1 + moved;
        let drop = -rise * r;
        let land = self.cast(p2, drop)?;
        let p3 = p2 + drop * land.fraction;
        if (p3 - p).dot(self.up) <= 1e-9 {
            return None;
        }
        // The surface stepped onto holds it up (on the step's edge: the tread beyond).
        self.supports(p3, land.point, land.normal)
            .then_some((p3, moved, land))
    }
}

impl Simulation {
    /// The up direction a controller uses: its own, else against gravity, else `+Z`.
    pub(crate) fn character_up(&self, ctrl: &CharacterController) -> DVec3 {
        ctrl.up
            .map(|u| u.normalize())
            .or_else(|| (-self.settings().world.gravity).try_normalize())
            .unwrap_or(DVec3::Z)
    }

    /// What a character moving `character` collides with by default: the bodies its collider's
    /// layers interact with, sensors skipped (all bodies but sensors without a collider). Pass it
    /// to [`Simulation::move_character`], which leaves the character's own body out itself.
    pub fn character_filter(&self, character: BodyHandle) -> QueryFilter<'static> {
        let filter = QueryFilter::default().without_sensors();
        match self.collider(character) {
            Some(c) => filter.with_layers(c.layers),
            None => filter,
        }
    }

    /// Moves a character capsule centred at `position` by `translation` with move-and-slide
    /// against the bodies the filter admits (exclude the character's own body), without changing
    /// the simulation (see the module documentation for the rules). The caller applies the
    /// result: [`Simulation::move_character`] does so for a kinematic body.
    pub fn plan_character_move(
        &self,
        ctrl: &CharacterController,
        position: DVec3,
        translation: DVec3,
        filter: &QueryFilter<'_>,
    ) -> Result<CharacterMove, CharacterError> {
        ctrl.validate()?;
        if !position.is_finite() {
            return Err(CharacterError::NonFinite("position"));
        }
        if !translation.is_finite() {
            return Err(CharacterError::NonFinite("translation"));
        }
        let up = self.character_up(ctrl);
        let m = Mover {
            sim: self,
            ctrl,
            filter,
            up,
            cos_slope: ctrl.max_slope.cos(),
        };
        let start = m.depenetrate(position);
        let mut p = start;
        let (_, was_grounded) = m.standing(p);
        let rising = translation.dot(up) > 0.0;
        let mut on_ground = was_grounded;
        let mut collisions = Vec::new();
        let mut planes: Vec<DVec3> = Vec::new();
        let mut stepped = 0.0;
        let mut remaining = translation;
        for _ in 0..ctrl.max_slides {
            if remaining.length() <= 1e-12 * (1.0 + p.abs().max_element()) {
                break;
            }
            let Some(hit) = m.cast(p, remaining) else {
                p += remaining;
                break;
            };
            p += remaining * hit.fraction;
            let mut left = remaining * (1.0 - hit.fraction);
            collisions.push(CharacterCollision {
                body: hit.body,
                normal: hit.normal,
                point: hit.point,
                remaining: left,
            });
            let walkable = m.supports(p, hit.point, hit.normal);
            if walkable {
                on_ground = true;
            } else if on_ground && ctrl.step_height > 0.0 && !m.is_dynamic(hit.body) {
                let horizontal = left - up * left.dot(up);
                let foot = p - up * (ctrl.half_length + ctrl.radius + ctrl.skin);
                if horizontal.length() > 1e-9
                    && (hit.point - foot).dot(up) <= ctrl.step_height
                    && let Some((next, moved, _)) = m.step_up(p, horizontal)
                {
                    stepped += (next - p).dot(up);
                    p = next;
                    left -= moved;
                    remaining = left;
                    continue;
                }
            }
            planes.push(hit.normal);
            let mut next = if walkable && !rising {
                // Along walkable ground the horizontal motion is kept and lifted onto the
                // surface (what presses into it, gravity, is dropped), then kept off the planes
                // touched before.
                let horizontal = left - up * left.dot(up);
                let lift = -hit.normal.dot(horizontal) / hit.normal.dot(up);
                clip(horizontal + up * lift, &planes[..planes.len() - 1])
            } else {
                clip(left, &planes)
            };
            if !walkable && !rising && next.dot(up) > 0.0 {
                // A steep slope (or a wall leaning back) is not climbed: slide along it level.
                let e = hit.normal.cross(up);
                next = match e.try_normalize() {
                    Some(e) => e * e.dot(next),
                    None => DVec3::ZERO,
                };
            }
            remaining = next;
        }
        let mut snapped = 0.0;
        if on_ground && !rising && ctrl.snap_distance > 0.0 {
            let down = -up * ctrl.snap_distance;
            if let Some(h) = m.cast(p, down)
                && m.supports(p + down * h.fraction, h.point, h.normal)
            {
                snapped = ctrl.snap_distance * h.fraction;
                p += down * h.fraction;
            }
        }
        let (ground, grounded) = m.standing(p);
        Ok(CharacterMove {
            position: p,
            translation: p - position,
            desired: translation,
            grounded,
            ground,
            collisions,
            stepped,
            snapped,
            depenetration: start - position,
        })
    }

    /// Moves the kinematic body `character` (the capsule's centre is the body's position) by
    /// `translation` over the coming step: plans the move against every other body the filter
    /// admits, sets the body's velocity so that [`Simulation::step`] carries it to the planned
    /// position (its rotation is left alone), and pushes the dynamic bodies it touched with an
    /// impulse that stops their approach, at most `push_force · dt`.
    pub fn move_character(
        &mut self,
        character: BodyHandle,
        ctrl: &CharacterController,
        translation: DVec3,
        filter: &QueryFilter<'_>,
    ) -> Result<CharacterMove, CharacterError> {
        let body = self
            .body(character)
            .ok_or(SimulationError::NoBody(character))?;
        if body.kind != BodyKind::Kinematic {
            return Err(CharacterError::NotKinematic(character));
        }
        let position = body.position;
        let mut own = filter.clone();
        own.exclude.insert(character);
        let planned = self.plan_character_move(ctrl, position, translation, &own)?;
        let dt = self.settings().world.dt;
        let angular = body.angular_velocity;
        self.set_velocity(character, planned.translation / dt, angular)?;
        self.push_touched(ctrl, &planned, dt);
        Ok(planned)
    }

    /// Pushes each dynamic body the move touched: an impulse at the contact against the
    /// character's approach, `j = v_n / (m⁻¹ + (r×n)ᵀ I⁻¹ (r×n))` with `v_n` the approach speed
    /// of the desired motion relative to the body's point, at most `push_force · dt`; one per
    /// body (its fastest approach).
    fn push_touched(&mut self, ctrl: &CharacterController, planned: &CharacterMove, dt: f64) {
        let velocity = planned.desired / dt;
        // A sleeping body has no effective mass until it is woken: wake what was touched (the
        // push then decides whether it moves).
        for c in planned.collisions.iter().filter(|_| ctrl.push_force > 0.0) {
            if self
                .body(c.body)
                .is_some_and(|b| b.kind == BodyKind::Dynamic && b.sleeping)
            {
                let _ = self.wake(c.body);
            }
        }
        let mut pushes: Vec<(BodyHandle, DVec3, DVec3)> = Vec::new();
        for c in &planned.collisions {
            let Some(b) = self.body(c.body) else { continue };
            if b.kind != BodyKind::Dynamic {
                continue;
            }
            let n = c.normal;
            let approach = (velocity - b.velocity_at(c.point)).dot(-n);
            if approach <= 0.0 {
                continue;
            }
            let rn = (c.point - b.position).cross(n);
            let k =
                n.dot(b.effective_inv_mass() * n) + rn.dot(b.effective_inv_inertia_world() * rn);
            if k <= 0.0 {
                continue;
            }
            let j = (approach / k).min(ctrl.push_force * dt);
            let impulse = -n * j;
            match pushes.iter_mut().find(|p| p.0 == c.body) {
                Some(p) if p.1.length() < j => *p = (c.body, impulse, c.point),
                Some(_) => {}
                None => pushes.push((c.body, impulse, c.point)),
            }
        }
        for (h, impulse, point) in pushes {
            // The body was found above; a refused impulse leaves it as it was.
            let _ = self.apply_impulse_at_point(h, impulse, point);
        }
    }
}
