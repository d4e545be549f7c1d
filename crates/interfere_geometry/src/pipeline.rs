//! The multi-body interference pipeline of Lin–Manocha 1996
//! (`lin-manocha-1996-interference-dynamic.md`, sections 3–4 and the "Multi-body" pipeline
//! summarised by its Table 1):
//!
//! 1. **Sweep and prune** ([`crate::sap`]): each object's world box (its mesh box transformed by
//!    the pose, conservatively rounded outward) is refreshed and the persistent sorted endpoint
//!    lists yield the pairs whose boxes overlap.
//! 2. **Convex-hull closest features** ([`crate::closest_features`], section 4.1): for every box
//!    pair, a per-pair [`ClosestFeatures`] tracker, kept across steps (warm start), walks to the
//!    closest feature pair of the two convex hulls. Separated hulls end the pair (the distance is
//!    recorded); a mesh lies inside its hull, so separated hulls prove the meshes disjoint.
//! 3. **Exact contact determination** (section 4.2, OBBTrees): for hull-penetrating pairs the
//!    OBBTree traversal ([`MeshQueries::all_pairs`] with [`Method::Obb`]) finds every intersecting
//!    triangle pair with the exact triangle test, and when none crosses,
//!    [`MeshQueries::complete`] decides nesting exactly.
//!
//! [`StepReport`] counts what each stage did, in the spirit of the paper's Table 1 (box overlaps,
//! hull tests, feature steps, hull-penetrating pairs, triangle-pair contacts) with the time spent
//! per stage.
//!
//! Frames: every pair `(a, b)` with `a < b` is tested in A's frame with
//! `b_to_a = pose_a⁻¹ · pose_b` computed in `f64` from [`Pose::to_f64`], the same relative pose a
//! direct [`MeshQueries::interference`] call on the pair would be given.

use crate::aabb::Aabb;
use crate::closest_features::{ClosestFeatures, HullFeatures, Proximity};
use crate::containment::Containment;
use crate::error::SapError;
use crate::hull::{Hull, HullError, convex_hull};
use crate::interference::{InterferenceError, MeshQueries, Method};
use crate::mesh::TriMesh;
use crate::pose::{DPose, Pose};
use crate::sap::{ProxyId, SweepAndPrune};
use glam::{DVec3, Vec3};
use std::collections::HashMap;
use std::fmt;
use std::time::Instant;
use thiserror::Error;

/// An object in a [`LinManochaPipeline`]. Ids are never reused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjectId(u32);

impl ObjectId {
    /// The id as a number (issued in increasing order from 0).
    pub fn get(self) -> u32 {
        self.0
    }
}

impl fmt::Display for ObjectId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "object {}", self.0)
    }
}

/// Why the pipeline refused a request.
#[derive(Debug, Error)]
pub enum PipelineError {
    /// The mesh's convex hull has no volume (all vertices on a point, a line or a plane), so
    /// the closest-feature stage cannot handle it.
    #[error("the mesh's convex hull is degenerate ({0}); the pipeline needs a hull with volume")]
    DegenerateHull(&'static str),
    /// The convex hull or its features could not be built.
    #[error("convex hull: {0}")]
    Hull(#[from] HullError),
    /// The id was never issued or the object was removed.
    #[error("unknown or removed {0}")]
    UnknownObject(ObjectId),
    /// The pose has a non-finite component or a non-unit rotation.
    #[error("invalid pose for {0}: non-finite or non-unit rotation")]
    InvalidPose(ObjectId),
    /// The mesh box under the pose could not be represented (for example it overflows `f32`).
    #[error("sweep and prune: {0}")]
    Sap(#[from] SapError),
    /// More objects than 32-bit ids allow were added over the pipeline's life.
    #[error("object ids exhausted")]
    TooManyObjects,
    /// The exact stage could not answer.
    #[error("exact stage: {0}")]
    Interference(#[from] InterferenceError),
}

/// An interfering object pair found by [`LinManochaPipeline::step`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PipelinePair {
    /// The object with the smaller id.
    pub a: ObjectId,
    /// The object with the larger id.
    pub b: ObjectId,
    /// Intersecting triangle pairs `(triangle of a, triangle of b)`, sorted.
    pub pairs: Vec<(u32, u32)>,
    /// Set when no triangle pair crosses but one solid lies inside the other.
    pub contained: Option<Containment>,
}

/// A box-overlapping pair whose convex hulls were found disjoint.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PairDistance {
    /// The object with the smaller id.
    pub a: ObjectId,
    /// The object with the larger id.
    pub b: ObjectId,
    /// Distance between the two convex hulls (a lower bound on the meshes' distance).
    pub distance: f64,
}

/// What one [`LinManochaPipeline::step`] did, stage by stage (after the paper's Table 1).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepReport {
    /// Live objects.
    pub objects: usize,
    /// Pairs whose world boxes overlap (sweep-and-prune pairs).
    pub box_overlaps: usize,
    /// Endpoint swaps made by the sweep-and-prune insertion sorts.
    pub sap_swaps: u64,
    /// Convex-hull proximity queries run (one per box pair).
    pub hull_tests: usize,
    /// Feature-walk steps summed over those queries (each query's `last_steps`).
    pub hull_feature_steps: u64,
    /// Queries that hit the step limit and fell back to brute force.
    pub hull_fallbacks: u64,
    /// Hull queries that started from a pair remembered from an earlier step.
    pub hull_warm_queries: usize,
    /// Pairs whose hulls penetrate (sent to the exact stage).
    pub hull_penetrating: usize,
    /// Object pairs that interfere (triangle contacts or nesting).
    pub interfering_pairs: usize,
    /// Intersecting triangle pairs summed over all object pairs.
    pub triangle_contacts: usize,
    /// Time updating world boxes (µs).
    pub aabb_us: f64,
    /// Time in the sweep-and-prune update (µs).
    pub sap_us: f64,
    /// Time in the hull closest-feature queries (µs).
    pub hull_us: f64,
    /// Time in the OBBTree traversals and containment tests (µs).
    pub exact_us: f64,
    /// Interfering pairs, sorted by `(a, b)`.
    pub contacts: Vec<PipelinePair>,
    /// Box pairs with separated hulls and their hull distance, sorted by `(a, b)`.
    pub separated: Vec<PairDistance>,
}

impl StepReport {
    /// Mean feature steps per hull query (0 when there was none).
    pub fn mean_feature_steps(&self) -> f64 {
        if self.hull_tests == 0 {
            0.0
        } else {
            self.hull_feature_steps as f64 / self.hull_tests as f64
        }
    }

    /// Total time of the four stages (µs).
    pub fn total_us(&self) -> f64 {
        self.aabb_us + self.sap_us + self.hull_us + self.exact_us
    }
}

struct Object {
    collider: MeshQueries,
    features: HullFeatures,
    /// Centre and half extents of the mesh box in the object's frame.
    local_center: DVec3,
    local_half: DVec3,
    pose: Pose,
    dpose: DPose,
    proxy: ProxyId,
    moved: bool,
}

/// The world box of a local box `center ± half` under `pose`, in `f64`, padded and rounded
/// outward to `f32` so that it holds every point an exact test can place (see module docs).
fn world_box(center: DVec3, half: DVec3, pose: &DPose) -> Aabb {
    let c = pose.transform_dpoint(center);
    let r = pose.rotation;
    let abs = glam::DMat3::from_cols(r.x_axis.abs(), r.y_axis.abs(), r.z_axis.abs());
    let e = abs * half;
    // Relative pose products and f64 rounding move points by ~1e-15 of the magnitudes involved;
    // the f32 rounding below is handled by next_down/next_up. 1e-9 is a wide margin.
    let pad = 1e-9
        * (c.abs().max_element() + e.max_element() + pose.translation.abs().max_element())
        + f64::MIN_POSITIVE;
    let lo = c - e - DVec3::splat(pad);
    let hi = c + e + DVec3::splat(pad);
    let down = |x: f64| {
        let f = x as f32;
        if (f as f64) > x { f.next_down() } else { f }
    };
    let up = |x: f64| {
        let f = x as f32;
        if (f as f64) < x { f.next_up() } else { f }
    };
    Aabb::new(
        Vec3::new(down(lo.x), down(lo.y), down(lo.z)),
        Vec3::new(up(hi.x), up(hi.y), up(hi.z)),
    )
}

/// The Lin–Manocha multi-body interference pipeline: sweep and prune, then incremental convex
/// hull closest features, then exact OBBTree contact determination (see the module docs).
#[derive(Default)]
pub struct LinManochaPipeline {
    objects: HashMap<ObjectId, Object>,
    /// Object of each sweep-and-prune proxy (indexed by proxy index).
    proxy_object: Vec<Option<ObjectId>>,
    sap: SweepAndPrune,
    /// Closest-feature trackers of the pairs that overlapped at the last step.
    trackers: HashMap<(ObjectId, ObjectId), ClosestFeatures>,
    next_id: u32,
}

impl LinManochaPipeline {
    /// An empty pipeline.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of live objects.
    pub fn len(&self) -> usize {
        self.objects.len()
    }

    /// Whether there is no live object.
    pub fn is_empty(&self) -> bool {
        self.objects.is_empty()
    }

    /// Adds an object at the identity pose: builds its [`MeshQueries`] (OBBTree prepared now) and
    /// its hull features. Meshes whose convex hull has no volume are refused.
    pub fn add_object(&mut self, mesh: TriMesh) -> Result<ObjectId, PipelineError> {
        self.add_object_at(mesh, Pose::IDENTITY)
    }

    /// Adds an object at `pose` (see [`Self::add_object`]).
    pub fn add_object_at(&mut self, mesh: TriMesh, pose: Pose) -> Result<ObjectId, PipelineError> {
        let id = ObjectId(self.next_id);
        if !pose.is_valid() {
            return Err(PipelineError::InvalidPose(id));
        }
        let collider = MeshQueries::new(mesh);
        let hull = match convex_hull(collider.mesh().vertices())? {
            Hull::Solid(h) => h,
            Hull::Point { .. } => return Err(PipelineError::DegenerateHull("a single point")),
            Hull::Collinear { .. } => return Err(PipelineError::DegenerateHull("collinear")),
            Hull::Planar { .. } => return Err(PipelineError::DegenerateHull("planar")),
        };
        let features = HullFeatures::new(&hull)?;
        let bb = collider.mesh().aabb();
        let (lo, hi) = (bb.min.as_dvec3(), bb.max.as_dvec3());
        let local_center = (lo + hi) * 0.5;
        // Round the half extents up so centre ± half still covers [lo, hi].
        let local_half = ((hi - lo) * 0.5) * (1.0 + 1e-12);
        let dpose = pose.to_f64();
        let proxy = self
            .sap
            .insert(world_box(local_center, local_half, &dpose))?;
        self.next_id = self
            .next_id
            .checked_add(1)
            .ok_or(PipelineError::TooManyObjects)?;
        collider.prepare(Method::Obb);
        if self.proxy_object.len() <= proxy.index() {
            self.proxy_object.resize(proxy.index() + 1, None);
        }
        self.proxy_object[proxy.index()] = Some(id);
        self.objects.insert(
            id,
            Object {
                collider,
                features,
                local_center,
                local_half,
                pose,
                dpose,
                proxy,
                moved: false,
            },
        );
        Ok(id)
    }

    /// Moves an object; takes effect at the next [`Self::step`].
    pub fn set_pose(&mut self, id: ObjectId, pose: Pose) -> Result<(), PipelineError> {
        if !pose.is_valid() {
            return Err(PipelineError::InvalidPose(id));
        }
        let o = self
            .objects
            .get_mut(&id)
            .ok_or(PipelineError::UnknownObject(id))?;
        o.pose = pose;
        o.dpose = pose.to_f64();
        o.moved = true;
        Ok(())
    }

    /// The pose of an object.
    pub fn pose(&self, id: ObjectId) -> Option<Pose> {
        self.objects.get(&id).map(|o| o.pose)
    }

    /// The collider (mesh and hierarchies) of an object.
    pub fn collider(&self, id: ObjectId) -> Option<&MeshQueries> {
        self.objects.get(&id).map(|o| &o.collider)
    }

    /// The ids of the live objects, sorted.
    pub fn ids(&self) -> Vec<ObjectId> {
        let mut ids: Vec<ObjectId> = self.objects.keys().copied().collect();
        ids.sort_unstable();
        ids
    }

    /// The relative pose of `b` in `a`'s frame, `pose_a⁻¹ · pose_b` in `f64`: the pose the
    /// pipeline's exact tests use for the pair.
    pub fn relative_pose(&self, a: ObjectId, b: ObjectId) -> Option<DPose> {
        let (oa, ob) = (self.objects.get(&a)?, self.objects.get(&b)?);
        Some(oa.dpose.inverse().mul(&ob.dpose))
    }

    /// Removes an object and forgets its pair trackers.
    pub fn remove(&mut self, id: ObjectId) -> Result<(), PipelineError> {
        let o = self
            .objects
            .remove(&id)
            .ok_or(PipelineError::UnknownObject(id))?;
        self.sap.remove(o.proxy)?;
        // The proxy index may be reissued by a later insert; only clear it if still ours.
        if self.proxy_object.get(o.proxy.index()) == Some(&Some(id)) {
            self.proxy_object[o.proxy.index()] = None;
        }
        self.trackers.retain(|&(a, b), _| a != id && b != id);
        Ok(())
    }

    /// Number of per-pair closest-feature trackers held (the pairs overlapping at the last step).
    pub fn tracker_count(&self) -> usize {
        self.trackers.len()
    }

    /// Runs the three stages on the current poses and reports the interfering pairs.
    pub fn step(&mut self) -> Result<StepReport, PipelineError> {
        let mut report = StepReport {
            objects: self.objects.len(),
            ..StepReport::default()
        };

        // (1) World boxes.
        let t0 = Instant::now();
        for o in self.objects.values_mut().filter(|o| o.moved) {
            let bb = world_box(o.local_center, o.local_half, &o.dpose);
            self.sap.set_aabb(o.proxy, bb)?;
            o.moved = false;
        }
        let t1 = Instant::now();
        let stats = self.sap.update();
        report.sap_swaps = stats.swaps;
        let t2 = Instant::now();
        report.aabb_us = (t1 - t0).as_secs_f64() * 1e6;
        report.sap_us = (t2 - t1).as_secs_f64() * 1e6;

        let mut pairs: Vec<(ObjectId, ObjectId)> = Vec::with_capacity(self.sap.pair_count());
        for (pa, pb) in self.sap.pairs() {
            let oa = self.proxy_object.get(pa.index()).copied().flatten();
            let ob = self.proxy_object.get(pb.index()).copied().flatten();
            if let (Some(a), Some(b)) = (oa, ob) {
                pairs.push(if a < b { (a, b) } else { (b, a) });
            }
        }
        pairs.sort_unstable();
        report.box_overlaps = pairs.len();

        // Trackers of pairs no longer overlapping are dropped (the paper activates the hull
        // test only for box-overlapping pairs).
        let mut old = std::mem::take(&mut self.trackers);

        // (2) Hull closest features.
        let mut penetrating = Vec::new();
        let t3 = Instant::now();
        for &(a, b) in &pairs {
            let (oa, ob) = (&self.objects[&a], &self.objects[&b]);
            let b_to_a = oa.dpose.inverse().mul(&ob.dpose);
            let mut tracker = old.remove(&(a, b)).unwrap_or_default();
            report.hull_warm_queries += usize::from(tracker.pair().is_some());
            let fallbacks = tracker.stats.fallbacks;
            let proximity = tracker.query(&oa.features, &ob.features, &b_to_a);
            report.hull_tests += 1;
            report.hull_feature_steps += u64::from(tracker.stats.last_steps);
            report.hull_fallbacks += tracker.stats.fallbacks - fallbacks;
            match proximity {
                Proximity::Separated { distance, .. } => {
                    report.separated.push(PairDistance { a, b, distance })
                }
                Proximity::Penetrating { .. } => penetrating.push((a, b, b_to_a)),
            }
            self.trackers.insert((a, b), tracker);
        }
        let t4 = Instant::now();
        report.hull_us = (t4 - t3).as_secs_f64() * 1e6;
        report.hull_penetrating = penetrating.len();

        // (3) Exact contact determination.
        for (a, b, b_to_a) in penetrating {
            let (ca, cb) = (&self.objects[&a].collider, &self.objects[&b].collider);
            let tri = ca.all_pairs(cb, &b_to_a, Method::Obb)?;
            let result = ca.complete(cb, &b_to_a, tri);
            if result.intersecting {
                report.triangle_contacts += result.pairs.len();
                report.contacts.push(PipelinePair {
                    a,
                    b,
                    pairs: result.pairs,
                    contained: result.contained,
                });
            }
        }
        report.exact_us = t4.elapsed().as_secs_f64() * 1e6;
        report.interfering_pairs = report.contacts.len();
        Ok(report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shapes;
    use glam::Quat;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use std::collections::BTreeMap;

    type Truth = BTreeMap<(ObjectId, ObjectId), (Vec<(u32, u32)>, Option<Containment>)>;

    /// The oracle: every live object pair through the plain query (no broad phase, no hulls).
    fn brute_force(p: &LinManochaPipeline, method: Method) -> Truth {
        let ids = p.ids();
        let mut out = Truth::new();
        for (i, &a) in ids.iter().enumerate() {
            for &b in &ids[i + 1..] {
                let (ca, cb) = (p.collider(a).unwrap(), p.collider(b).unwrap());
                let rel = p.relative_pose(a, b).unwrap();
                let r = ca.interference(cb, &rel, method, true).unwrap();
                if r.intersecting {
                    out.insert((a, b), (r.pairs, r.contained));
                }
            }
        }
        out
    }

    fn reported(r: &StepReport) -> Truth {
        r.contacts
            .iter()
            .map(|c| ((c.a, c.b), (c.pairs.clone(), c.contained)))
            .collect()
    }

    fn random_shape(rng: &mut ChaCha8Rng) -> TriMesh {
        let s = rng.random_range(0.4f32..1.0);
        match rng.random_range(0..3) {
            0 => shapes::icosphere(s, 1).unwrap().mesh().clone(),
            1 => shapes::cuboid(Vec3::new(
                s,
                rng.random_range(0.2f32..0.9),
                rng.random_range(0.2f32..0.9),
            ))
            .unwrap()
            .mesh()
            .clone(),
            _ => shapes::torus(s, s * 0.3, 10, 6).unwrap().mesh().clone(),
        }
    }

    fn random_unit(rng: &mut ChaCha8Rng) -> Vec3 {
        Vec3::new(
            rng.random_range(-1.0f32..1.0),
            rng.random_range(-1.0f32..1.0),
            rng.random_range(-1.0f32..1.0),
        )
        .normalize_or(Vec3::X)
    }

    struct Body {
        id: ObjectId,
        pose: Pose,
        vel: Vec3,
        axis: Vec3,
        omega: f32,
    }

    fn spawn(p: &mut LinManochaPipeline, rng: &mut ChaCha8Rng, half: f32) -> Body {
        let pose = Pose::new(
            Quat::from_axis_angle(
                random_unit(rng),
                rng.random_range(0.0f32..std::f32::consts::TAU),
            ),
            Vec3::new(
                rng.random_range(-half..half),
                rng.random_range(-half..half),
                rng.random_range(-half..half),
            ),
        );
        let id = p.add_object_at(random_shape(rng), pose).unwrap();
        Body {
            id,
            pose,
            vel: random_unit(rng) * rng.random_range(0.01f32..0.06),
            axis: random_unit(rng),
            omega: rng.random_range(0.0f32..0.05),
        }
    }

    /// Random moving scenes with insertions and removals: the pipeline's interfering pairs,
    /// their triangle pairs and nesting equal the brute-force answer over all object pairs at
    /// every frame; warm-started hull queries take few feature steps on average.
    #[test]
    fn random_scenes_match_brute_force() {
        let (mut steps, mut queries, mut warm, mut contacts, mut nested) = (0u64, 0usize, 0, 0, 0);
        for seed in 0..3u64 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let n = rng.random_range(10..=30);
            // Room scaled so that a few pairs touch at any time.
            let half = 0.9 * (n as f32).cbrt();
            let mut p = LinManochaPipeline::new();
            let mut bodies: Vec<Body> = (0..n).map(|_| spawn(&mut p, &mut rng, half)).collect();
            for frame in 0..50 {
                if frame % 10 == 5 {
                    let k = rng.random_range(0..bodies.len());
                    let gone = bodies.swap_remove(k);
                    p.remove(gone.id).unwrap();
                    bodies.push(spawn(&mut p, &mut rng, half));
                }
                for b in &mut bodies {
                    let mut t = b.pose.translation + b.vel;
                    for k in 0..3 {
                        if t[k].abs() > half {
                            b.vel[k] = -b.vel[k];
                            t[k] = t[k].clamp(-half, half);
                        }
                    }
                    let r = (Quat::from_axis_angle(b.axis, b.omega) * b.pose.rotation).normalize();
                    b.pose = Pose::new(r, t);
                    p.set_pose(b.id, b.pose).unwrap();
                }
                let report = p.step().unwrap();
                let truth = brute_force(&p, Method::Aabb);
                assert_eq!(reported(&report), truth, "seed {seed} frame {frame}");
                assert_eq!(report.interfering_pairs, truth.len());
                assert_eq!(
                    report.triangle_contacts,
                    truth.values().map(|v| v.0.len()).sum::<usize>()
                );
                assert!(report.hull_penetrating >= report.interfering_pairs);
                assert_eq!(report.hull_tests, report.box_overlaps);
                assert_eq!(
                    report.hull_tests,
                    report.hull_penetrating + report.separated.len()
                );
                assert!(report.separated.iter().all(|s| s.distance > 0.0));
                assert_eq!(p.tracker_count(), report.box_overlaps);
                if frame > 0 {
                    steps += report.hull_feature_steps;
                    queries += report.hull_tests;
                    warm += report.hull_warm_queries;
                }
                contacts += truth.len();
                nested += truth.values().filter(|v| v.1.is_some()).count();
            }
        }
        let mean = steps as f64 / queries.max(1) as f64;
        println!(
            "hull queries {queries} (warm {warm}), mean feature steps {mean:.3}, \
             interfering pair-frames {contacts} (nested {nested})"
        );
        assert!(
            contacts > 50,
            "scenes too sparse to test anything: {contacts}"
        );
        assert!(
            warm * 2 > queries,
            "most queries should be warm: {warm}/{queries}"
        );
        assert!(
            mean < 3.0,
            "warm-started walks should be short, mean {mean}"
        );
    }

    /// Triangle pairs of every reported contact equal the all-pairs brute force.
    #[test]
    fn triangle_pairs_match_all_pairs_brute() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut p = LinManochaPipeline::new();
        for _ in 0..12 {
            spawn(&mut p, &mut rng, 1.2);
        }
        let report = p.step().unwrap();
        assert!(report.interfering_pairs > 3);
        assert_eq!(reported(&report), brute_force(&p, Method::Brute));
    }

    fn add(p: &mut LinManochaPipeline, mesh: &crate::topology::Solid, pose: Pose) -> ObjectId {
        p.add_object_at(mesh.mesh().clone(), pose).unwrap()
    }

    /// Touching faces, coplanar contact, nesting, a sphere in a torus hole (hulls penetrate,
    /// meshes do not) and huge coordinates.
    #[test]
    fn adversarial_configurations() {
        let cube = shapes::cuboid(Vec3::splat(1.0)).unwrap();
        let small = shapes::cuboid(Vec3::splat(0.25)).unwrap();
        let ball = shapes::icosphere(0.3, 1).unwrap();
        let ring = shapes::torus(1.0, 0.2, 16, 8).unwrap();
        for offset in [
            Vec3::ZERO,
            Vec3::splat(1.0e5),
            Vec3::new(-3.0e6, 2.0e6, 1.0e6),
        ] {
            let at = |v: Vec3| Pose::from_translation(v + offset);
            let mut p = LinManochaPipeline::new();
            // Face to face exactly (x = 1), then a coplanar-top neighbour sharing z = 1.
            let a = add(&mut p, &cube, at(Vec3::ZERO));
            let b = add(&mut p, &cube, at(Vec3::new(2.0, 0.0, 0.0)));
            let c = add(&mut p, &cube, at(Vec3::new(2.0, 2.0, 0.0)));
            // Nested: a small cube inside the first cube.
            let d = add(&mut p, &small, at(Vec3::new(0.3, -0.2, 0.1)));
            // A ball in the hole of a ring: hulls penetrate, meshes do not.
            let r = add(&mut p, &ring, at(Vec3::new(10.0, 0.0, 0.0)));
            let s = add(&mut p, &ball, at(Vec3::new(10.0, 0.0, 0.0)));
            // Separated by a small gap.
            let e = add(&mut p, &cube, at(Vec3::new(0.0, 0.0, -2.001)));
            let report = p.step().unwrap();
            let truth = brute_force(&p, Method::Brute);
            assert_eq!(reported(&report), truth, "offset {offset}");
            let got: Vec<_> = report.contacts.iter().map(|c| (c.a, c.b)).collect();
            assert!(got.contains(&(a, d)), "nesting at {offset}");
            assert!(report.contacts.iter().any(|c| c.contained.is_some()));
            assert!(!got.contains(&(r, s)), "ring and ball do not touch");
            if offset == Vec3::ZERO {
                // Exactly representable: the touching pairs are found and the gap is not.
                assert!(got.contains(&(a, b)) && got.contains(&(b, c)));
                assert!(!got.contains(&(a, e)));
                assert!(report.hull_penetrating > report.interfering_pairs);
            }
        }
    }

    #[test]
    fn errors_are_typed() {
        let mut p = LinManochaPipeline::new();
        let flat = TriMesh::new(
            vec![Vec3::ZERO, Vec3::X, Vec3::Y, Vec3::new(1.0, 1.0, 0.0)],
            vec![[0, 1, 2], [1, 3, 2]],
        )
        .unwrap();
        assert!(matches!(
            p.add_object(flat),
            Err(PipelineError::DegenerateHull("planar"))
        ));
        let id = p
            .add_object(shapes::cuboid(Vec3::ONE).unwrap().mesh().clone())
            .unwrap();
        let bad = Pose::new(Quat::from_xyzw(0.0, 0.0, 0.0, 2.0), Vec3::ZERO);
        assert!(matches!(
            p.set_pose(id, bad),
            Err(PipelineError::InvalidPose(_))
        ));
        let nan = Pose::from_translation(Vec3::new(f32::NAN, 0.0, 0.0));
        assert!(matches!(
            p.set_pose(id, nan),
            Err(PipelineError::InvalidPose(_))
        ));
        let huge = Pose::from_translation(Vec3::splat(f32::MAX));
        assert!(p.set_pose(id, huge).is_ok());
        // f32::MAX + extent rounds up to infinity, which sweep and prune accepts.
        assert!(p.step().is_ok());
        p.remove(id).unwrap();
        assert!(matches!(p.remove(id), Err(PipelineError::UnknownObject(_))));
        assert!(matches!(
            p.set_pose(id, Pose::IDENTITY),
            Err(PipelineError::UnknownObject(_))
        ));
        assert!(p.is_empty());
    }

    /// Removing an object drops its contacts and trackers; ids are not reused.
    #[test]
    fn removal() {
        let cube = shapes::cuboid(Vec3::splat(1.0)).unwrap();
        let mut p = LinManochaPipeline::new();
        let a = add(&mut p, &cube, Pose::IDENTITY);
        let b = add(
            &mut p,
            &cube,
            Pose::from_translation(Vec3::new(1.5, 0.0, 0.0)),
        );
        let c = add(
            &mut p,
            &cube,
            Pose::from_translation(Vec3::new(0.0, 1.5, 0.0)),
        );
        let r = p.step().unwrap();
        let pairs: Vec<_> = r.contacts.iter().map(|x| (x.a, x.b)).collect();
        assert!(pairs.contains(&(a, b)) && pairs.contains(&(a, c)));
        assert_eq!(p.tracker_count(), 3);
        p.remove(a).unwrap();
        assert_eq!(p.tracker_count(), 1);
        let r = p.step().unwrap();
        assert!(r.contacts.iter().all(|x| x.a != a && x.b != a));
        assert_eq!(r.objects, 2);
        let d = add(&mut p, &cube, Pose::IDENTITY);
        assert!(d > c);
        let r = p.step().unwrap();
        assert_eq!(reported(&r), brute_force(&p, Method::Brute));
        let pairs: Vec<_> = r.contacts.iter().map(|x| (x.a, x.b)).collect();
        assert!(pairs.contains(&(b, d)) && pairs.contains(&(c, d)));
    }

    /// Timing: `cargo test -p interfere_geometry --release --locked pipeline_timing -- --ignored
    /// --nocapture`.
    #[test]
    #[ignore]
    fn pipeline_timing() {
        // Dense (room edge ~1.8 n^(1/3)) and sparse (twice that) scenes.
        for density in [0.9f32, 1.8] {
            timing_scene(50, density);
        }
    }

    fn timing_scene(n: usize, density: f32) {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let half = density * (n as f32).cbrt();
        let mut p = LinManochaPipeline::new();
        let mut bodies: Vec<Body> = (0..n).map(|_| spawn(&mut p, &mut rng, half)).collect();
        let frames = 200;
        let mut sum = StepReport::default();
        for _ in 0..frames {
            for b in &mut bodies {
                let mut t = b.pose.translation + b.vel;
                for k in 0..3 {
                    if t[k].abs() > half {
                        b.vel[k] = -b.vel[k];
                        t[k] = t[k].clamp(-half, half);
                    }
                }
                let r = (Quat::from_axis_angle(b.axis, b.omega) * b.pose.rotation).normalize();
                b.pose = Pose::new(r, t);
                p.set_pose(b.id, b.pose).unwrap();
            }
            let r = p.step().unwrap();
            sum.box_overlaps += r.box_overlaps;
            sum.hull_tests += r.hull_tests;
            sum.hull_feature_steps += r.hull_feature_steps;
            sum.hull_fallbacks += r.hull_fallbacks;
            sum.hull_penetrating += r.hull_penetrating;
            sum.interfering_pairs += r.interfering_pairs;
            sum.triangle_contacts += r.triangle_contacts;
            sum.aabb_us += r.aabb_us;
            sum.sap_us += r.sap_us;
            sum.hull_us += r.hull_us;
            sum.exact_us += r.exact_us;
        }
        let f = frames as f64;
        println!(
            "{n} objects, room half-width {half:.2}, {frames} frames, per frame: box overlaps {:.1}, hull tests {:.1}, \
             feature steps/query {:.3}, fallbacks {}, hull-penetrating {:.1}, interfering {:.1}, \
             triangle contacts {:.1}; µs: aabb {:.1}, sap {:.1}, hull {:.1}, exact {:.1}, total {:.1}",
            sum.box_overlaps as f64 / f,
            sum.hull_tests as f64 / f,
            sum.mean_feature_steps(),
            sum.hull_fallbacks,
            sum.hull_penetrating as f64 / f,
            sum.interfering_pairs as f64 / f,
            sum.triangle_contacts as f64 / f,
            sum.aabb_us / f,
            sum.sap_us / f,
            sum.hull_us / f,
            sum.exact_us / f,
            sum.total_us() / f,
        );
    }
}
