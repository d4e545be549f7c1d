//! The fixed-step pipeline: ECS bodies into an [`interfere_dynamics::World`], sweep and prune
//! (Lin–Manocha 1996 §4.1), the narrow phase (exact OBBTree traversal, or CInDeR on the GPU),
//! the intersection volume and its gradient (Wang–Faure–Pai 2012 §2.2, Eq. 1–2) turned into
//! volume contacts, the sequential-impulse solver, and the write-back into `Transform` and the
//! velocity components.
//!
//! Contacts are found once per fixed step, at the poses the step starts from. The solver's
//! substeps (and, for the asynchronous GPU backend, the next step) reuse them advanced to the
//! current poses by their gradient: a contact found with volume `V` at poses `q₀` has volume
//! `V + ∂V/∂x_b·(Δx_b − Δx_a) + ∂V/∂θ_b·(Δθ_b − Δθ_a)` at the current poses (the first-order
//! term of Eq. 2, with `Δx` the displacement of the contact point on each body), and is dropped
//! when that is not positive.

use crate::collider::{ColliderShape, PreparedShape};
use crate::components::*;
use crate::messages::*;
use crate::settings::{Backend, PhysicsSettings, PhysicsStats, SleepSettings};
use bevy::platform::collections::{HashMap, HashSet};
use bevy::prelude::*;
use interfere_dynamics::{
    BodyKind, ContactSampling, ContactSource, Contacts, MassProperties, Material,
    RigidBody as DynBody, VolumeContact, World, WorldSettings,
};
use interfere_geometry::glam::{DQuat, DVec3};
use interfere_geometry::{
    Aabb, DPose, Method, ProxyId, Sampling, SweepAndPrune, UniformOptions, UniformVolume,
};
use std::sync::Arc;
use std::time::Instant;

/// One body of the world and what the ECS side last saw of it.
pub(crate) struct Slot {
    pub entity: Entity,
    pub kind: RigidBody,
    pub shape: Option<Arc<PreparedShape>>,
    /// Density actually used (from `Density` or `Mass`), to notice changes.
    pub density: f64,
    /// What the last write-back put into the components (to notice teleports).
    pub written: Option<(Vec3, Quat, Vec3, Vec3)>,
    /// Seconds spent below the sleep thresholds.
    pub calm: f32,
    pub sleeping: bool,
    pub proxy: Option<ProxyId>,
}

/// An interfering pair found by the narrow phase.
#[derive(Clone, Debug, PartialEq)]
pub struct InterferingPair {
    /// Body index of the first body.
    pub a: usize,
    /// Body index of the second body.
    pub b: usize,
    /// Intersecting triangle pairs found (see [`ContactMessage::triangle_pairs`]).
    pub triangle_pairs: Vec<(u32, u32)>,
    /// One solid inside the other.
    pub contained: bool,
}

/// A volume contact with the body states it was computed at.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LatentContact {
    pub contact: VolumeContact,
    pub a0: (DVec3, DQuat),
    pub b0: (DVec3, DQuat),
}

/// The simulation state behind the ECS: the `f64` world, the body slots, the broad phase and the
/// products of the current step. Read it for diagnostics (the debug overlay does).
#[derive(Resource)]
pub struct PhysicsWorld {
    pub(crate) world: World,
    pub(crate) slots: Vec<Slot>,
    pub(crate) index: HashMap<Entity, usize>,
    pub(crate) sap: SweepAndPrune,
    pub(crate) proxy_owner: Vec<usize>,
    pub(crate) candidates: Vec<(usize, usize)>,
    pub(crate) interfering: Vec<InterferingPair>,
    pub(crate) contacts: Vec<LatentContact>,
    pub(crate) colliding: HashSet<(Entity, Entity)>,
    pub(crate) wake: Vec<usize>,
    /// Incremented whenever the bodies are renumbered (a rebuild).
    pub(crate) generation: u64,
}

impl Default for PhysicsWorld {
    fn default() -> Self {
        Self {
            world: World::new(WorldSettings::default()).expect("default settings are valid"),
            slots: Vec::new(),
            index: HashMap::default(),
            sap: SweepAndPrune::new(),
            proxy_owner: Vec::new(),
            candidates: Vec::new(),
            interfering: Vec::new(),
            contacts: Vec::new(),
            colliding: HashSet::default(),
            wake: Vec::new(),
            generation: 0,
        }
    }
}

impl PhysicsWorld {
    /// Number of bodies.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether there are no bodies.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// The entity of body `i`.
    pub fn entity(&self, i: usize) -> Option<Entity> {
        self.slots.get(i).map(|s| s.entity)
    }

    /// The simulated body of `entity` (`f64` state).
    pub fn body(&self, entity: Entity) -> Option<&DynBody> {
        self.index.get(&entity).and_then(|&i| self.world.body(i))
    }

    /// The interfering pairs of the last step, as entity pairs.
    pub fn interfering_pairs(&self) -> Vec<(Entity, Entity)> {
        self.interfering
            .iter()
            .map(|p| (self.slots[p.a].entity, self.slots[p.b].entity))
            .collect()
    }

    /// The candidate (box-overlapping) pairs of the last step.
    pub fn candidate_pairs(&self) -> Vec<(Entity, Entity)> {
        self.candidates
            .iter()
            .map(|&(a, b)| (self.slots[a].entity, self.slots[b].entity))
            .collect()
    }

    /// The volume contacts of the last step (world space), as the solver got them at the start
    /// of the step.
    pub fn volume_contacts(&self) -> impl Iterator<Item = (Entity, Entity, &VolumeContact)> {
        self.contacts.iter().map(|c| {
            (
                self.slots[c.contact.body_a].entity,
                self.slots[c.contact.body_b].entity,
                &c.contact,
            )
        })
    }

    /// Simulated time in seconds.
    pub fn time(&self) -> f64 {
        self.world.time()
    }

    /// World pose of body `i`'s mesh frame.
    pub(crate) fn pose(&self, i: usize) -> DPose {
        self.world.bodies()[i].mesh_pose()
    }

    /// The world box of body `i`'s collider, rounded outward to `f32`.
    pub(crate) fn world_aabb(&self, i: usize) -> Option<Aabb> {
        let shape = self.slots[i].shape.as_ref()?;
        Aabb::of_placed_box(shape.lo, shape.hi, &self.pose(i))
    }

    /// Whether a pair needs contact work: at least one awake dynamic body.
    pub(crate) fn pair_is_active(&self, a: usize, b: usize) -> bool {
        let awake = |i: usize| {
            let s = &self.slots[i];
            s.kind == RigidBody::Dynamic && !s.sleeping
        };
        let movable = |i: usize| self.slots[i].kind == RigidBody::Dynamic;
        (awake(a) || awake(b)) && movable(a) | movable(b)
    }
}

fn material(friction: Option<&Friction>, restitution: Option<&Restitution>) -> Material {
    let f = friction.copied().unwrap_or_default();
    Material {
        static_friction: f.static_coefficient.max(0.0) as f64,
        dynamic_friction: f.dynamic_coefficient.max(0.0) as f64,
        restitution: restitution.map_or(0.0, |r| r.0.clamp(0.0, 1.0) as f64),
    }
}

fn scaled_mass(unit: &MassProperties, density: f64) -> MassProperties {
    MassProperties {
        volume: unit.volume,
        mass: unit.volume * density,
        center_of_mass: unit.center_of_mass,
        inertia: unit.inertia * density,
    }
}

type BodyQueryData = (
    Entity,
    &'static RigidBody,
    &'static Transform,
    &'static LinearVelocity,
    &'static AngularVelocity,
    Option<&'static ColliderShape>,
    Option<&'static Density>,
    Option<&'static Mass>,
    Option<&'static Friction>,
    Option<&'static Restitution>,
    Has<Sleeping>,
);

type BodyQueryItem<'a> = (
    Entity,
    &'a RigidBody,
    &'a Transform,
    &'a LinearVelocity,
    &'a AngularVelocity,
    Option<&'a ColliderShape>,
    Option<&'a Density>,
    Option<&'a Mass>,
    Option<&'a Friction>,
    Option<&'a Restitution>,
    bool,
);

/// Query of everything the synchronisation reads.
pub(crate) type BodyQuery<'w, 's> = Query<'w, 's, BodyQueryData>;

/// Density from `Mass` or `Density`; `Err` names the problem.
fn density_of(
    shape: Option<&ColliderShape>,
    density: Option<&Density>,
    mass: Option<&Mass>,
) -> Result<f64, String> {
    let d = match (mass, shape) {
        (Some(m), Some(s)) => m.0 as f64 / s.0.unit_mass.volume,
        _ => density.copied().unwrap_or_default().0 as f64,
    };
    if d.is_finite() && d > 0.0 {
        Ok(d)
    } else {
        Err(format!(
            "mass {:?} / density {:?} gives density {d}, which is not positive",
            mass.map(|m| m.0),
            density.map(|d| d.0)
        ))
    }
}

fn world_settings(settings: &PhysicsSettings, dt: f64) -> WorldSettings {
    WorldSettings {
        gravity: settings.gravity.as_dvec3(),
        dt,
        substeps: settings.substeps.max(1),
        solver: settings.solver,
    }
}

/// Run condition: whether this fixed step simulates (not paused, or a single step is queued).
pub(crate) fn physics_active(settings: Res<PhysicsSettings>) -> bool {
    !settings.paused || settings.single_steps > 0
}

/// Prepare: brings the world in line with the ECS (new, removed and changed bodies, teleports,
/// velocities set by the game, materials, sleeping).
pub(crate) fn sync_bodies(
    mut pw: ResMut<PhysicsWorld>,
    settings: Res<PhysicsSettings>,
    time: Res<Time<Fixed>>,
    mut stats: ResMut<PhysicsStats>,
    bodies: BodyQuery,
    mut refused: Local<HashSet<Entity>>,
    mut commands: Commands,
) {
    let start = Instant::now();
    let dt = time.timestep().as_secs_f64();
    let ws = world_settings(&settings, dt);
    let pw = &mut *pw;
    // What the world should hold, in a stable order.
    let mut wanted: Vec<BodyQueryItem> = bodies
        .iter()
        .filter(|(e, kind, _, _, _, shape, density, mass, ..)| {
            if **kind != RigidBody::Dynamic {
                return true;
            }
            // Dynamic bodies need a prepared collider and a valid density.
            match shape {
                None => false,
                Some(_) => match density_of(*shape, *density, *mass) {
                    Ok(_) => {
                        refused.remove(e);
                        true
                    }
                    Err(why) => {
                        if refused.insert(*e) {
                            warn!("interfere: dynamic body {e} refused: {why}");
                        }
                        false
                    }
                },
            }
        })
        .collect();
    wanted.sort_by_key(|item| item.0);

    let same_set = wanted.len() == pw.slots.len()
        && wanted.iter().zip(&pw.slots).all(|(item, slot)| {
            let (e, kind, _, _, _, shape, density, mass, ..) = item;
            *e == slot.entity
                && **kind == slot.kind
                && match (shape, &slot.shape) {
                    (Some(a), Some(b)) => Arc::ptr_eq(&a.0, b),
                    (None, None) => true,
                    _ => false,
                }
                && (slot.kind != RigidBody::Dynamic
                    || density_of(*shape, *density, *mass).ok() == Some(slot.density))
        })
        && *pw.world.settings() == ws;

    if !same_set {
        rebuild(pw, &wanted, ws);
    } else {
        for (i, item) in wanted.iter().enumerate() {
            let (_, _, transform, lin, ang, _, _, _, friction, restitution, sleeping) = *item;
            let slot = &mut pw.slots[i];
            let body = pw.world.body_mut(i).expect("slot and body indices agree");
            body.material = material(friction, restitution);
            let moved = slot
                .written
                .is_none_or(|(t, r, _, _)| t != transform.translation || r != transform.rotation);
            if moved {
                let rotation = transform.rotation.as_dquat().normalize();
                body.orientation = rotation;
                body.position = transform.translation.as_dvec3() + rotation * body.local_center();
            }
            let vel_set = slot
                .written
                .is_none_or(|(_, _, l, a)| l != lin.0 || a != ang.0);
            if vel_set {
                body.linear_velocity = lin.0.as_dvec3();
                body.angular_velocity = ang.0.as_dvec3();
            }
            if slot.kind == RigidBody::Dynamic {
                let wake = slot.sleeping && (!sleeping || moved || vel_set);
                if wake {
                    slot.sleeping = false;
                    slot.calm = 0.0;
                    if sleeping {
                        commands.entity(slot.entity).remove::<Sleeping>();
                    }
                } else if sleeping && !slot.sleeping {
                    slot.sleeping = true;
                }
                body.kind = if slot.sleeping {
                    BodyKind::Static
                } else {
                    BodyKind::Dynamic
                };
                if slot.sleeping {
                    body.linear_velocity = DVec3::ZERO;
                    body.angular_velocity = DVec3::ZERO;
                }
            }
        }
    }
    stats.bodies = pw.slots.len();
    stats.sync_ms = start.elapsed().as_secs_f64() * 1e3;
}

/// Rebuilds the world from `wanted`, keeping the `f64` state of bodies that stay.
fn rebuild(pw: &mut PhysicsWorld, wanted: &[BodyQueryItem], ws: WorldSettings) {
    let mut world = World::new(ws).unwrap_or_else(|e| {
        warn!("interfere: invalid world settings ({e}); using the defaults");
        World::new(WorldSettings::default()).expect("default settings are valid")
    });
    let mut slots = Vec::with_capacity(wanted.len());
    let mut index = HashMap::default();
    for item in wanted {
        let (
            entity,
            kind,
            transform,
            lin,
            ang,
            shape,
            density,
            mass,
            friction,
            restitution,
            sleeping,
        ) = *item;
        let old = pw
            .index
            .get(&entity)
            .map(|&i| (&pw.slots[i], &pw.world.bodies()[i]));
        let rotation = transform.rotation.as_dquat().normalize();
        let translation = transform.translation.as_dvec3();
        let density = if *kind == RigidBody::Dynamic {
            density_of(shape, density, mass).unwrap_or(1.0)
        } else {
            0.0
        };
        let made = match kind {
            RigidBody::Dynamic => {
                let unit = &shape
                    .expect("filtered: dynamic bodies have shapes")
                    .0
                    .unit_mass;
                DynBody::dynamic(&scaled_mass(unit, density), translation, rotation)
            }
            RigidBody::Static => DynBody::fixed(translation, rotation),
            RigidBody::Kinematic => DynBody::kinematic(translation, rotation),
        };
        let mut body = match made {
            Ok(b) => b,
            Err(e) => {
                warn!("interfere: body {entity} refused: {e}");
                continue;
            }
        };
        body = body
            .with_material(material(friction, restitution))
            .with_velocity(lin.0.as_dvec3(), ang.0.as_dvec3());
        let mut slot = Slot {
            entity,
            kind: *kind,
            shape: shape.map(|s| s.0.clone()),
            density,
            written: None,
            calm: 0.0,
            sleeping: sleeping && *kind == RigidBody::Dynamic,
            proxy: None,
        };
        // A body that stays keeps its exact state unless the game moved it.
        if let Some((old_slot, old_body)) = old
            && old_slot.kind == *kind
            && let Some(w) = old_slot.written
            && w == (transform.translation, transform.rotation, lin.0, ang.0)
        {
            body.orientation = old_body.orientation;
            body.position = old_body.position - old_body.orientation * old_body.local_center()
                + body.orientation * body.local_center();
            body.linear_velocity = old_body.linear_velocity;
            body.angular_velocity = old_body.angular_velocity;
            slot.written = Some(w);
            slot.calm = old_slot.calm;
        }
        if slot.sleeping {
            body.kind = BodyKind::Static;
        }
        index.insert(entity, slots.len());
        world.add_body(body);
        slots.push(slot);
    }
    // Pairs that ended because a body went away.
    pw.world = world;
    pw.slots = slots;
    pw.index = index;
    pw.sap = SweepAndPrune::new();
    pw.proxy_owner.clear();
    pw.contacts.clear();
    pw.generation += 1;
}

/// Broad phase: sweep and prune over the bodies' world boxes.
pub(crate) fn broad_phase(mut pw: ResMut<PhysicsWorld>, mut stats: ResMut<PhysicsStats>) {
    let start = Instant::now();
    let pw = &mut *pw;
    for i in 0..pw.slots.len() {
        let Some(aabb) = pw.world_aabb(i) else {
            continue;
        };
        match pw.slots[i].proxy {
            Some(id) => {
                let _ = pw.sap.set_aabb(id, aabb);
            }
            None => {
                if let Ok(id) = pw.sap.insert(aabb) {
                    let k = id.index();
                    if pw.proxy_owner.len() <= k {
                        pw.proxy_owner.resize(k + 1, usize::MAX);
                    }
                    pw.proxy_owner[k] = i;
                    pw.slots[i].proxy = Some(id);
                }
            }
        }
    }
    pw.sap.update();
    let mut pairs: Vec<(usize, usize)> = pw
        .sap
        .pairs()
        .filter_map(|(p, q)| {
            let (i, j) = (
                *pw.proxy_owner.get(p.index())?,
                *pw.proxy_owner.get(q.index())?,
            );
            (i != j && i < pw.slots.len() && j < pw.slots.len()).then_some((i.min(j), i.max(j)))
        })
        .filter(|&(i, j)| pw.pair_is_active(i, j))
        .collect();
    pairs.sort_unstable();
    pw.candidates = pairs;
    stats.candidate_pairs = pw.candidates.len();
    stats.broad_phase_ms = start.elapsed().as_secs_f64() * 1e3;
}

/// Narrow phase on the CPU: the exact OBBTree query (first or all crossing triangle pairs, then
/// containment) for every candidate pair.
pub(crate) fn narrow_phase_cpu(
    mut pw: ResMut<PhysicsWorld>,
    settings: Res<PhysicsSettings>,
    mut stats: ResMut<PhysicsStats>,
) {
    let start = Instant::now();
    let pw = &mut *pw;
    let candidates = std::mem::take(&mut pw.candidates);
    pw.interfering = par_map(&candidates, |&(a, b)| {
        exact_pair(pw, a, b, settings.all_triangle_pairs)
    })
    .into_iter()
    .flatten()
    .collect();
    pw.candidates = candidates;
    stats.backend = Backend::Cpu;
    stats.latency_pairs = 0;
    stats.gpu_ms = None;
    stats.interfering_pairs = pw.interfering.len();
    stats.narrow_phase_ms = start.elapsed().as_secs_f64() * 1e3;
}

/// The exact test of one pair at the current poses.
pub(crate) fn exact_pair(
    pw: &PhysicsWorld,
    a: usize,
    b: usize,
    all: bool,
) -> Option<InterferingPair> {
    let (sa, sb) = (pw.slots[a].shape.as_ref()?, pw.slots[b].shape.as_ref()?);
    let b_to_a = pw.pose(a).inverse().mul(&pw.pose(b));
    let r = sa
        .collider
        .interference(&sb.collider, &b_to_a, Method::Obb, all)
        .ok()?;
    r.intersecting.then(|| InterferingPair {
        a,
        b,
        triangle_pairs: r.pairs,
        contained: r.contained.is_some(),
    })
}

/// Collision started/ended messages from the change in the interfering set; wakes sleeping
/// bodies touched by awake ones.
pub(crate) fn collision_messages(
    mut pw: ResMut<PhysicsWorld>,
    mut started: MessageWriter<CollisionStarted>,
    mut ended: MessageWriter<CollisionEnded>,
) {
    let pw = &mut *pw;
    let now: HashSet<(Entity, Entity)> = pw
        .interfering
        .iter()
        .map(|p| (pw.slots[p.a].entity, pw.slots[p.b].entity))
        .collect();
    let mut s: Vec<_> = now.difference(&pw.colliding).copied().collect();
    let mut e: Vec<_> = pw.colliding.difference(&now).copied().collect();
    s.sort_unstable();
    e.sort_unstable();
    started.write_batch(s.into_iter().map(|(a, b)| CollisionStarted(a, b)));
    // Pairs with a removed body end too; pairs merely gone to sleep together stay.
    ended.write_batch(
        e.into_iter()
            .filter(|(a, b)| {
                let asleep = |x: &Entity| pw.index.get(x).is_some_and(|&i| pw.slots[i].sleeping);
                let alive = pw.index.contains_key(a) && pw.index.contains_key(b);
                !(alive && asleep(a) && asleep(b))
            })
            .map(|(a, b)| CollisionEnded(a, b)),
    );
    pw.colliding = now;
    for p in &pw.interfering {
        for (x, y) in [(p.a, p.b), (p.b, p.a)] {
            if pw.slots[x].sleeping
                && !pw.slots[y].sleeping
                && pw.slots[y].kind != RigidBody::Static
            {
                pw.wake.push(x);
            }
        }
    }
}

/// A pair's volume result (or why it failed) and the pose of the frame it is in (A's, or B's for
/// an adaptive query sampled in B's frame).
pub(crate) type VolumeQuery = (Result<interfere_geometry::VolumeResult, String>, DPose);

/// The sampling options, A's pose and B's pose in A's frame for one pair; `None` when a body
/// has no shape.
pub(crate) fn volume_setup(
    pw: &PhysicsWorld,
    settings: &PhysicsSettings,
    p: &InterferingPair,
) -> Option<(UniformOptions, DPose, DPose)> {
    let (sa, sb) = (pw.slots[p.a].shape.as_ref()?, pw.slots[p.b].shape.as_ref()?);
    let h = settings
        .volume_spacing_absolute
        .map(|h| h as f64)
        .unwrap_or(settings.volume_spacing as f64 * sa.size().min(sb.size()));
    let (pa, pb) = (pw.pose(p.a), pw.pose(p.b));
    let b_to_a = pa.inverse().mul(&pb);
    let opts = UniformOptions {
        sampling: Sampling::Spacing(h),
        centre: DVec3::ZERO,
        collect_points: true,
        max_rays: settings.max_rays_per_pair,
    };
    Some((opts, pa, b_to_a))
}

/// The uniform volume of one interfering pair at the current poses (with surface points), on
/// the CPU.
pub(crate) fn volume_query(
    pw: &PhysicsWorld,
    settings: &PhysicsSettings,
    p: &InterferingPair,
) -> Option<VolumeQuery> {
    let (opts, pa, b_to_a) = volume_setup(pw, settings, p)?;
    let (sa, sb) = (pw.slots[p.a].shape.as_ref()?, pw.slots[p.b].shape.as_ref()?);
    if let ContactSampling::Adaptive(adaptive) = settings.volume_sampling {
        // Sampled in the frame of the body with the tighter overlap box; a result in B's frame
        // is split with B's pose (see `interfere_dynamics::AdaptiveSample`).
        return match adaptive.sample_pair(
            &sa.solid,
            sa.collider.balanced_tree().clone(),
            &sb.solid,
            sb.collider.balanced_tree().clone(),
            &b_to_a,
            settings.max_rays_per_pair,
        ) {
            Ok(s) => {
                let pose = s.frame_pose(pa, pw.pose(p.b));
                Some((Ok(s.result), pose))
            }
            Err(e) => Some((Err(e.to_string()), pa)),
        };
    }
    let result = UniformVolume::with_trees(
        &sa.solid,
        sa.collider.balanced_tree().clone(),
        &sb.solid,
        sb.collider.balanced_tree().clone(),
    )
    .and_then(|uv| uv.compute(&b_to_a, &opts))
    .map_err(|e| e.to_string());
    Some((result, pa))
}

/// `items.map(f)` on all cores, in order (contiguous chunks, one scoped thread each).
pub(crate) fn par_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    if threads <= 1 || items.len() < 2 {
        return items.iter().map(&f).collect();
    }
    let chunk = items.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let handles: Vec<_> = items
            .chunks(chunk)
            .map(|c| {
                let f = &f;
                scope.spawn(move || c.iter().map(f).collect::<Vec<R>>())
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    })
}

/// Volume stage: the intersection volume and gradient of every interfering pair, split into up
/// to four volume contacts (see `interfere_dynamics::mesh_volume`), with their messages.
#[allow(clippy::too_many_arguments)]
pub(crate) fn volume_contacts(
    mut pw: ResMut<PhysicsWorld>,
    settings: Res<PhysicsSettings>,
    mut stats: ResMut<PhysicsStats>,
    mut contact_out: MessageWriter<ContactMessage>,
    mut volume_out: MessageWriter<IntersectionVolumeMessage>,
    mut commands: Commands,
    gpu: Option<Res<crate::gpu_backend::GpuNarrow>>,
    backend: Res<Backend>,
) {
    let start = Instant::now();
    let pw = &mut *pw;
    // Wake what the narrow phase touched, before the solver runs.
    for i in std::mem::take(&mut pw.wake) {
        if pw.slots[i].sleeping {
            pw.slots[i].sleeping = false;
            pw.slots[i].calm = 0.0;
            if let Some(b) = pw.world.body_mut(i) {
                b.kind = BodyKind::Dynamic;
            }
            commands.entity(pw.slots[i].entity).remove::<Sleeping>();
        }
    }
    pw.contacts.clear();
    let (mut rays, mut refused) = (0usize, 0usize);
    // The pairs' volume queries are independent: run them on all cores, then assemble the
    // contacts and messages serially in pair order (so the result does not depend on the
    // thread count).
    let on_gpu = match (&gpu, *backend) {
        (Some(gpu), Backend::Gpu | Backend::GpuBlocking)
            if settings.gpu_volume && settings.volume_sampling == ContactSampling::Uniform =>
        {
            crate::gpu_backend::gpu_volume_queries(gpu, pw, &settings)
        }
        _ => None,
    };
    stats.volume_on_gpu = on_gpu.is_some();
    let results = match on_gpu {
        Some(r) => r,
        None => par_map(&pw.interfering, |p| volume_query(pw, &settings, p)),
    };
    for (p, result) in pw.interfering.iter().zip(results) {
        let Some((result, pa)) = result else {
            continue;
        };
        let (ea, eb) = (pw.slots[p.a].entity, pw.slots[p.b].entity);
        let r = match result {
            Ok(r) => r,
            Err(_) => {
                refused += 1;
                contact_out.write(ContactMessage {
                    a: ea,
                    b: eb,
                    points: Vec::new(),
                    triangle_pairs: p.triangle_pairs.clone(),
                    contained: p.contained,
                });
                continue;
            }
        };
        rays += r.ray_count;
        let mut points = Vec::new();
        if let Some((volume, linear, angular, centroid, parts)) =
            settings.volume_sampling.split(&r, &pa)
        {
            let (ba, bb) = (&pw.world.bodies()[p.a], &pw.world.bodies()[p.b]);
            let a0 = (ba.position, ba.orientation);
            let b0 = (bb.position, bb.orientation);
            for part in &parts {
                let glen = part.linear.length();
                points.push(ContactPoint {
                    point: part.point.as_vec3(),
                    normal: (-part.linear / glen.max(f64::MIN_POSITIVE)).as_vec3(),
                    depth: (part.volume / glen.max(f64::MIN_POSITIVE)) as f32,
                    volume: part.volume as f32,
                });
                pw.contacts.push(LatentContact {
                    contact: VolumeContact {
                        body_a: p.a,
                        body_b: p.b,
                        volume: part.volume,
                        point: part.point,
                        linear: part.linear,
                        angular: part.angular,
                        feature: ((p.a as u64) << 34) ^ ((p.b as u64) << 4) ^ part.quadrant as u64,
                    },
                    a0,
                    b0,
                });
            }
            // Torque about b's centre of mass: Σ (x − com) × g = Σ (x − c) × g + (c − com) × G.
            let about_com = angular + (centroid - bb.position).cross(linear);
            volume_out.write(IntersectionVolumeMessage {
                a: ea,
                b: eb,
                volume: volume as f32,
                force: (-linear).as_vec3(),
                torque: (-about_com).as_vec3(),
                point: centroid.as_vec3(),
                rays: r.ray_count as u32,
            });
        }
        contact_out.write(ContactMessage {
            a: ea,
            b: eb,
            points,
            triangle_pairs: p.triangle_pairs.clone(),
            contained: p.contained,
        });
    }
    stats.rays = rays;
    stats.pairs_refused = refused;
    stats.volume_contacts = pw.contacts.len();
    stats.volume_ms = start.elapsed().as_secs_f64() * 1e3;
}

/// The solver's contact source: this step's contacts advanced to the current poses.
pub(crate) struct LatentSource<'a> {
    pub contacts: &'a [LatentContact],
}

/// Displacement of the material point at `p` and rotation vector of a body since `(x0, q0)`.
fn motion(body: &DynBody, (x0, q0): (DVec3, DQuat), p: DVec3) -> (DVec3, DVec3) {
    let dq = body.orientation * q0.inverse();
    let theta = dq.to_scaled_axis();
    let moved = body.position + dq * (p - x0);
    (moved - p, theta)
}

impl ContactSource for LatentSource<'_> {
    fn contacts(&mut self, bodies: &[DynBody], out: &mut Contacts) {
        for c in self.contacts {
            let k = &c.contact;
            let (Some(a), Some(b)) = (bodies.get(k.body_a), bodies.get(k.body_b)) else {
                continue;
            };
            let (da, ta) = motion(a, c.a0, k.point);
            let (db, tb) = motion(b, c.b0, k.point);
            let volume = k.volume + k.linear.dot(db - da) + k.angular.dot(tb - ta);
            if volume > 0.0 && volume.is_finite() {
                out.volumes.push(VolumeContact {
                    volume,
                    point: k.point + db,
                    ..*k
                });
            }
        }
    }
}

/// Solver: one fixed step of the world with this step's contacts.
pub(crate) fn solve(mut pw: ResMut<PhysicsWorld>, mut stats: ResMut<PhysicsStats>) {
    let start = Instant::now();
    let pw = &mut *pw;
    let contacts = std::mem::take(&mut pw.contacts);
    pw.world.step(&mut LatentSource {
        contacts: &contacts,
    });
    pw.contacts = contacts;
    stats.steps += 1;
    stats.solver_ms = start.elapsed().as_secs_f64() * 1e3;
}

/// Writeback: transforms and velocities out, sleeping in, single steps counted.
#[allow(clippy::type_complexity)]
pub(crate) fn writeback(
    mut pw: ResMut<PhysicsWorld>,
    mut settings: ResMut<PhysicsSettings>,
    sleep: Res<SleepSettings>,
    time: Res<Time<Fixed>>,
    mut stats: ResMut<PhysicsStats>,
    mut query: Query<(
        &mut Transform,
        &mut LinearVelocity,
        &mut AngularVelocity,
        Has<NeverSleep>,
    )>,
    mut commands: Commands,
) {
    let start = Instant::now();
    let dt = time.timestep().as_secs_f32();
    let pw = &mut *pw;
    for (i, slot) in pw.slots.iter_mut().enumerate() {
        let body = &pw.world.bodies()[i];
        let Ok((mut transform, mut lin, mut ang, never_sleep)) = query.get_mut(slot.entity) else {
            continue;
        };
        if slot.kind != RigidBody::Static {
            let pose = body.mesh_pose();
            let t = pose.translation.as_vec3();
            let r = body.orientation.as_quat().normalize();
            if transform.translation != t || transform.rotation != r {
                transform.translation = t;
                transform.rotation = r;
            }
            let (l, a) = (
                body.linear_velocity.as_vec3(),
                body.angular_velocity.as_vec3(),
            );
            if lin.0 != l {
                lin.0 = l;
            }
            if ang.0 != a {
                ang.0 = a;
            }
        }
        slot.written = Some((transform.translation, transform.rotation, lin.0, ang.0));
        if slot.kind == RigidBody::Dynamic && !slot.sleeping {
            let calm = body.linear_velocity.length() < sleep.linear_threshold as f64
                && body.angular_velocity.length() < sleep.angular_threshold as f64;
            slot.calm = if calm { slot.calm + dt } else { 0.0 };
            if sleep.enabled && !never_sleep && slot.calm >= sleep.time_to_sleep {
                slot.sleeping = true;
                commands.entity(slot.entity).insert(Sleeping);
            }
        }
    }
    settings.single_steps = settings.single_steps.saturating_sub(1);
    stats.writeback_ms = start.elapsed().as_secs_f64() * 1e3;
}
