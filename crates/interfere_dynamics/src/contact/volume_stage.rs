//! The CPU volume stage: the intersection volume of every interfering pair and its gradient,
//! split into the volume contacts the solver takes (Wang–Faure–Pai 2012 §2.2 and §7).
//!
//! - Mesh–mesh, [`VolumeMethod::Exact`] (the default): the exact intersection volume and
//!   gradient from the surfaces in contact (`interfere_geometry::volume::exact`), from the
//!   narrow phase's triangle pairs (nothing is traversed twice), each contact region a four-part
//!   manifold at the principal radii of its contact surface
//!   ([`crate::contact::parts::sampled::principal_parts`]).
//! - Mesh–mesh, [`VolumeMethod::Uniform`]: uniform ray sampling on a lattice fixed in A's frame
//!   (`interfere_geometry::UniformVolume`), split by [`crate::split_mesh_volume`].
//! - Mesh–mesh, [`VolumeMethod::Adaptive`]: EBPI sampling within a ray budget
//!   ([`crate::AdaptiveSampling::sample_pair`]), split by [`crate::split_adaptive_volume`].
//! - Mesh–half-space: the exact volume of the mesh below the plane and its exact gradient,
//!   split into quadrants ([`crate::contact::parts::half_space`]).
//! - Pairs with a primitive or a compound: closed forms, or the exact volume of tessellations
//!   where there is none ([`crate::contact::primitive_pairs`]).
//!
//! Each part becomes a [`VolumeContact`] with a feature key stable while the pair and the
//! quadrant stay the same (warm starting). Pairs run on every core, assembled in pair order.

use crate::collision::shape::{HalfSpace, MeshShape, Shape};
pub use crate::contact::parts::exact::{feature_key, fill_from_exact};
use crate::contact::parts::half_space::mesh_plane_contact;
use crate::contact::parts::sampled::{
    MeshSpacing, MeshVolumePart, split_adaptive_volume, split_mesh_volume,
};
use crate::contact::stage::{InterferingPair, PairContact, StageInput, VolumeMethod, VolumeStage};
use crate::contact::{BodyId, VolumeContact};
use crate::parallel::par_map_with;
use interfere_geometry::glam::DVec3;
use interfere_geometry::volume::{ExactOptions, ExactVolume};
use interfere_geometry::{DPose, Sampling, UniformOptions, UniformVolume, VolumeResult};

/// The CPU volume stage (see the module documentation).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CpuVolumeStage {
    /// Shift of the uniform lattice ([`VolumeMethod::Uniform`]) in A's mesh frame, in units of
    /// the pair's spacing: the lines sit at `(i + ½ + shift) h` instead of `(i + ½) h`
    /// (`interfere_geometry::Sampling::ShiftedSpacing`). Zero (the default) is the plain lattice;
    /// the adaptive and exact methods ignore it. For studies of where a small feature falls
    /// between the lines (`interfere bench small-obstacle`, `interfere_cli::small_obstacle_study`).
    pub lattice_shift: DVec3,
}

impl VolumeStage for CpuVolumeStage {
    fn name(&self) -> &'static str {
        "cpu"
    }

    fn contacts(
        &mut self,
        input: &StageInput<'_>,
        pairs: Vec<InterferingPair>,
        out: &mut Vec<PairContact>,
    ) -> usize {
        let shift = self.lattice_shift;
        let contacts = par_map_with(input.settings.thread_count(), &pairs, |p| {
            pair_contact_shifted(input, p.clone(), shift)
        });
        let rays = contacts.iter().map(|c| c.rays).sum();
        out.extend(contacts);
        rays
    }
}

/// The contact of one interfering pair at the bodies' current states, on the CPU.
pub fn pair_contact(input: &StageInput<'_>, p: InterferingPair) -> PairContact {
    pair_contact_shifted(input, p, DVec3::ZERO)
}

/// [`pair_contact`] with the uniform lattice shifted by `shift` spacings
/// ([`CpuVolumeStage::lattice_shift`]).
pub fn pair_contact_shifted(
    input: &StageInput<'_>,
    p: InterferingPair,
    shift: DVec3,
) -> PairContact {
    let (a, b) = (p.a, p.b);
    let mut c = PairContact::touching(p, input.bodies, input.step);
    match (input.shape(a), input.shape(b)) {
        (Some(sa), Some(sb)) if sa.is_primitive() || sb.is_primitive() => {
            crate::contact::primitive_pairs::primitive_pair_contact(input, &mut c)
        }
        (Some(Shape::Mesh(_)), Some(Shape::Mesh(_))) => mesh_mesh(input, &mut c, shift),
        (Some(Shape::HalfSpace(h)), Some(Shape::Mesh(m))) => half_space(input, &mut c, a, h, m),
        (Some(Shape::Mesh(m)), Some(Shape::HalfSpace(h))) => half_space(input, &mut c, b, h, m),
        _ => {}
    }
    c
}

/// Fills `c` from a split (volume, `∂V/∂x_b`, `∂V/∂θ_b` about the centroid, centroid, parts).
pub fn fill_from_split(
    c: &mut PairContact,
    split: Option<(f64, DVec3, DVec3, DVec3, Vec<MeshVolumePart>)>,
) {
    let Some((volume, linear, angular, point, parts)) = split else {
        return;
    };
    c.volume = volume;
    c.linear = linear;
    c.angular = angular;
    c.point = point;
    c.parts = parts
        .iter()
        .map(|part| VolumeContact {
            body_a: c.a,
            body_b: c.b,
            volume: part.volume,
            point: part.point,
            linear: part.linear,
            angular: part.angular,
            feature: feature_key(c.a, c.b, 0, part.quadrant),
        })
        .collect();
}

/// The lattice spacing of a uniform query of `a` and `b`.
pub fn spacing_for(spacing: MeshSpacing, a: &MeshShape, b: &MeshShape) -> f64 {
    match spacing {
        MeshSpacing::Relative(f) => f * a.size().min(b.size()),
        MeshSpacing::Absolute(h) => h,
    }
}

/// The uniform query options of a pair.
pub fn uniform_options(spacing: f64, max_rays: u64) -> UniformOptions {
    UniformOptions {
        sampling: Sampling::Spacing(spacing),
        centre: DVec3::ZERO,
        collect_points: true,
        max_rays,
    }
}

/// The ray-sampled volume of mesh pair `(a, b)` at the bodies' current states with `method`
/// (uniform, or adaptive), with its surface points, and the pose of the frame it is in (A's
/// mesh pose; B's for an adaptive query that ran in B's frame, see
/// [`crate::AdaptiveSample`]). `None` unless both bodies carry meshes; `Err` when the query is
/// refused (too many rays, bad spacing). The debug drawing recasts pairs with this.
pub fn sampled_volume(
    input: &StageInput<'_>,
    a: BodyId,
    b: BodyId,
    method: VolumeMethod,
) -> Option<(Result<VolumeResult, String>, DPose)> {
    sampled_volume_shifted(input, a, b, method, DVec3::ZERO)
}

/// [`sampled_volume`] with the uniform lattice shifted by `shift` spacings in A's mesh frame
/// ([`CpuVolumeStage::lattice_shift`]; the adaptive method ignores it).
pub fn sampled_volume_shifted(
    input: &StageInput<'_>,
    a: BodyId,
    b: BodyId,
    method: VolumeMethod,
    shift: DVec3,
) -> Option<(Result<VolumeResult, String>, DPose)> {
    let (ma, mb, pa, b_to_a) = input.mesh_pair(a, b)?;
    let max_rays = input.settings.max_rays_per_pair;
    let (tree_a, tree_b) = (
        ma.queries().balanced_tree().clone(),
        mb.queries().balanced_tree().clone(),
    );
    let method = match method {
        // The exact method casts no rays: sample a default lattice (the debug drawing).
        VolumeMethod::Exact => VolumeMethod::Uniform {
            spacing: MeshSpacing::default(),
        },
        m => m,
    };
    Some(match method {
        VolumeMethod::Exact => unreachable!("mapped to a lattice above"),
        VolumeMethod::Uniform { spacing } => {
            let h = spacing_for(spacing, ma, mb);
            let mut opts = uniform_options(h, max_rays);
            if shift != DVec3::ZERO {
                opts.sampling = Sampling::ShiftedSpacing {
                    spacing: h,
                    offset: shift * h,
                };
            }
            let r = UniformVolume::with_trees(ma.solid(), tree_a, mb.solid(), tree_b)
                .and_then(|uv| uv.compute(&b_to_a, &opts))
                .map_err(|e| e.to_string());
            (r, pa)
        }
        VolumeMethod::Adaptive(adaptive) => {
            match adaptive.sample_pair(ma.solid(), tree_a, mb.solid(), tree_b, &b_to_a, max_rays) {
                Ok(s) => {
                    let pb = input.bodies[b].mesh_pose();
                    let frame = s.frame_pose(pa, pb);
                    (Ok(s.result), frame)
                }
                Err(e) => (Err(e.to_string()), pa),
            }
        }
    })
}

/// Pairs with more candidate triangle pairs than this split their exact volume's per-pair work
/// over the worker threads (smaller ones run on one: the pairs themselves are spread over
/// threads).
const EXACT_THREADED_PAIRS: usize = 2048;

/// The exact volume of a mesh–mesh pair from the narrow phase's triangle pairs (all of them:
/// [`StageInput::needs_all_triangle_pairs`]), split into parts per contact region.
fn exact_mesh_mesh(input: &StageInput<'_>, c: &mut PairContact) {
    let Some((ma, mb, pa, b_to_a)) = input.mesh_pair(c.a, c.b) else {
        return;
    };
    let ev = match ExactVolume::with_topology(
        ma.solid(),
        ma.topology().clone(),
        mb.solid(),
        mb.topology().clone(),
    ) {
        Ok(ev) => ev,
        Err(e) => {
            c.refused = Some(e.to_string());
            return;
        }
    };
    let threads = if c.triangle_pairs.len() > EXACT_THREADED_PAIRS {
        input.settings.thread_count()
    } else {
        1
    };
    let options = ExactOptions {
        centre: DVec3::ZERO,
        collect_pieces: true,
        threads,
    };
    match ev.compute(&b_to_a, &c.triangle_pairs, &options) {
        Ok(r) => fill_from_exact(c, &r, &pa),
        Err(e) => c.refused = Some(e.to_string()),
    }
}

fn mesh_mesh(input: &StageInput<'_>, c: &mut PairContact, shift: DVec3) {
    let method = input.settings.volume;
    if method == VolumeMethod::Exact {
        return exact_mesh_mesh(input, c);
    }
    let Some((result, frame)) = sampled_volume_shifted(input, c.a, c.b, method, shift) else {
        return;
    };
    match result {
        Ok(r) => fill_from_sampled(c, &r, &frame, matches!(method, VolumeMethod::Adaptive(_))),
        Err(e) => c.refused = Some(e),
    }
}

/// Fills `c` from a ray-sampled volume `r` (with its surface points) in the frame `frame`:
/// split into parts ([`split_mesh_volume`], or [`split_adaptive_volume`] for an `adaptive`
/// sample). The CPU uniform method and the GPU stages (whose volumes are the same uniform
/// sampling) share it.
pub fn fill_from_sampled(c: &mut PairContact, r: &VolumeResult, frame: &DPose, adaptive: bool) {
    c.rays = r.ray_count;
    let split = if adaptive {
        split_adaptive_volume(r, frame)
    } else {
        split_mesh_volume(r, frame)
    };
    fill_from_split(c, split);
    if c.volume == 0.0 && r.volume > 0.0 && !r.points.is_empty() {
        // A wholly inside B: no surface of B bounds the intersection, so moving B a little does
        // not change the volume (zero gradient, no parts, no force), but the volume is still A's
        // (a sensor zone reports it). The point is the centroid of the sampled boundary (A's
        // surface).
        let sum = r.points.iter().fold(DVec3::ZERO, |s, p| s + p.point);
        c.volume = r.volume;
        c.point = frame.transform_dpoint(sum / r.points.len() as f64);
    }
}

/// Mesh body `m` against half-space body `h` (either may be `c.a`).
///
/// The pair's volume and gradient are the exact ones below the plane. The solver's parts are
/// computed below the plane raised by the speculative margin
/// ([`crate::contact::narrow_phase::plane_margin`]), each with its volume corrected back to the real plane
/// to first order (`V_q − δ · cap area_q`): a quadrant that is not yet in contact gets a
/// speculative part (negative volume), so a face landing or resting on the plane has its four
/// constraints in every substep.
fn half_space(
    input: &StageInput<'_>,
    c: &mut PairContact,
    h: BodyId,
    half: &HalfSpace,
    m: &MeshShape,
) {
    let mesh_body = if h == c.a { c.b } else { c.a };
    let (Some(hb), Some(mb)) = (input.bodies.get(h), input.bodies.get(mesh_body)) else {
        return;
    };
    let plane_pose = hb.mesh_pose();
    let (n, offset) = half.world(&plane_pose);
    // The split's gradients are with respect to the mesh's motion; b's gradient is minus a's.
    let sign = if mesh_body == c.b { 1.0 } else { -1.0 };
    let delta = crate::contact::narrow_phase::plane_margin(mb, m, input.dt);
    let contact = mesh_plane_contact(
        (c.a, c.b),
        m,
        &mb.mesh_pose(),
        (n, offset, &plane_pose.rotation),
        delta,
        sign,
        0,
    );
    if let Some((volume, linear, angular, point)) = contact.totals {
        c.volume = volume;
        c.linear = linear;
        c.angular = angular;
        c.point = point;
    }
    c.parts = contact.parts;
}
