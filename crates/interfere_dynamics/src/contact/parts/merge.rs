//! The parts of a contact region too close together to resist a tilt are one part.
//!
//! A region's parts (`exact`, `sampled`, `half_space`: up to four per region, at its principal
//! radii or by its pieces) give it tilt stiffness through their lever arms. Where the region's
//! spread `r` is small beside the bodies' radii of gyration (a box's corner or edge grazing a
//! face, a sliver where two faces barely cross) the parts' rows are the same row but for a tilt
//! mode whose stiffness is `(r/ρ)²` of theirs: the Gauss–Seidel sweeps cannot resolve it (a mode
//! of relative stiffness `ε` needs about `1/ε` sweeps), and the near-duplicate rows pass the
//! region's impulse and its friction limits back and forth between them without converging. In
//! the 300-box pile, settled, regions with `|∂V/∂x|` of 10⁻¹⁰ m² (a hundredth of a square
//! millimetre) in four coincident parts each carried a box's weight and were the contacts whose
//! velocities still changed after the 40th sweep of every substep. Such a region is one part:
//! its volume, gradient and torque the sums of its parts' (the torque about the merged point),
//! at the parts' mean point weighted by `|∂V/∂x|`, so its force and torque are unchanged and
//! only the tilt stiffness it could not give is gone.
//!
//! Wang–Faure–Pai 2012 §7 (a Signorini constraint per part): the parts are the manifold's
//! resolution of the region's volume gradient; this keeps that resolution where the solver can
//! use it.

use crate::body::Body;
use crate::contact::VolumeContact;
use interfere_geometry::glam::{DMat3, DVec3};

/// The relative tilt stiffness `r² Σ tr(I⁻¹) / Σ m⁻¹` (over both bodies; `r` the parts' spread
/// about their mean point) below which a region's parts are merged: for a cube of half-size `a`
/// on a static body, a spread under 1.5 % of `a`, where the sweeps (at most 40 per substep)
/// are hundreds of sweeps short of resolving the tilt. Scanned on 2026-11-29 (nineteenth
/// session, docs/benchmarks.md "Regions too small to tilt are one part"): at 10⁻³ the 300-box
/// pile's solver has 42 % fewer contact rows and 44 % fewer updates, and every test holds; at
/// 3·10⁻⁴ (34 % fewer rows) three single-trajectory tests failed, at 10⁻⁴ a torus of the
/// 40-orientation test gained energy (by the test's former measure), and at 10⁻² a box of the
/// pile still rocked at 0.07 m/s after 10 s. Not a setting: the tilt a region can give the
/// solver is the bodies' and the region's, not the scene's.
const UNRESOLVED_TILT: f64 = 1e-3;

/// Which parts of the same region share: the same bodies and feature key but for the quadrant
/// (the key's two low bits, `parts::exact::feature_key`).
fn region_of(v: &VolumeContact) -> (usize, usize, u64) {
    (v.body_a, v.body_b, v.feature & !3)
}

/// Merges, in place, each run of consecutive `volumes` of one region (see [`region_of`]) whose
/// relative tilt stiffness between `bodies` is below [`UNRESOLVED_TILT`] into its first part.
/// The merged part keeps that part's feature key, and so its warm start, within the solver's
/// rule for a key whose gradient changed (carrying the parts' summed pushes across the change of
/// form was tried and not kept: the pile then needed more updates, docs/benchmarks.md).
pub(crate) fn merge_unresolved_parts(volumes: &mut Vec<VolumeContact>, bodies: &[Body]) {
    let mut write = 0;
    let mut start = 0;
    while start < volumes.len() {
        let region = region_of(&volumes[start]);
        let mut end = start + 1;
        while end < volumes.len() && region_of(&volumes[end]) == region {
            end += 1;
        }
        let merged = (end - start > 1)
            .then(|| merged_if_unresolved(&volumes[start..end], bodies))
            .flatten();
        match merged {
            Some(one) => {
                volumes[write] = one;
                write += 1;
            }
            None => {
                volumes.copy_within(start..end, write);
                write += end - start;
            }
        }
        start = end;
    }
    volumes.truncate(write);
}

/// The one part that `parts` (a region's) make when their spread cannot resist a tilt of the
/// bodies; `None` when it can (or the parts carry no gradient, or a body is not found).
fn merged_if_unresolved(parts: &[VolumeContact], bodies: &[Body]) -> Option<VolumeContact> {
    let (a, b) = (bodies.get(parts[0].body_a)?, bodies.get(parts[0].body_b)?);
    let weight: f64 = parts.iter().map(|p| p.linear.length()).sum();
    if !(weight > 0.0 && weight.is_finite()) {
        return None;
    }
    let centre = parts
        .iter()
        .map(|p| p.point * p.linear.length())
        .sum::<DVec3>()
        / weight;
    let spread = parts
        .iter()
        .map(|p| p.linear.length() * p.point.distance_squared(centre))
        .sum::<f64>()
        / weight;
    let inv_mass = (a.effective_inv_mass() + b.effective_inv_mass()).max_element();
    let inv_inertia = inv_inertia_trace(a) + inv_inertia_trace(b);
    // Neither body moves along any axis: nothing to resolve either way.
    if inv_mass <= 0.0 && inv_inertia <= 0.0 {
        return None;
    }
    // A spread that is not a number (a part at no finite point) is not merged either.
    let tilt = spread * inv_inertia;
    if tilt.is_nan() || tilt >= UNRESOLVED_TILT * inv_mass {
        return None;
    }
    let mut one = parts[0];
    one.volume = parts.iter().map(|p| p.volume).sum();
    one.linear = parts.iter().map(|p| p.linear).sum();
    // About the merged point: τ_c = τ_p + (p − c) × ∂V/∂x.
    one.angular = parts
        .iter()
        .map(|p| p.angular + (p.point - centre).cross(p.linear))
        .sum();
    one.point = centre;
    Some(one)
}

/// `tr(I⁻¹)` of the inverse inertia the solver uses ([`Body::effective_inv_inertia_world`]): a
/// rotation leaves the trace as it is, so only a body with locked rotations (whose projection
/// does not commute with the rotation) has its world matrix built. Every region of every pair
/// asks, at every substep.
fn inv_inertia_trace(b: &Body) -> f64 {
    let trace = |m: DMat3| m.x_axis.x + m.y_axis.y + m.z_axis.z;
    if b.locked_axes().locks_rotation() {
        trace(b.effective_inv_inertia_world())
    } else {
        trace(b.inv_inertia_local())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::body::LockedAxes;
    use crate::body::mass::MassProperties;
    use interfere_geometry::glam::DQuat;

    /// A 0.2 m cube of 8 kg (half-size 0.1 m) at the origin, and a static body.
    fn cube_and_ground() -> Vec<Body> {
        let (m, a) = (8.0, 0.1);
        let mass = MassProperties {
            volume: 0.008,
            mass: m,
            center_of_mass: DVec3::ZERO,
            inertia: DMat3::from_diagonal(DVec3::splat(m * (2.0 * a) * (2.0 * a) / 6.0)),
        };
        let ground = Body::fixed(DVec3::new(0.0, 0.0, -1.0), DQuat::IDENTITY).unwrap();
        let cube = Body::dynamic(&mass, DVec3::ZERO, DQuat::from_rotation_x(0.3)).unwrap();
        vec![ground, cube]
    }

    /// Four parts of region `region` around `centre`, `r` apart along x and y, each with a
    /// quarter of a gradient along +z, a torque of its own and a volume share.
    fn region(region: u64, centre: DVec3, r: f64) -> Vec<VolumeContact> {
        [(1.0, 1.0), (-1.0, 1.0), (-1.0, -1.0), (1.0, -1.0)]
            .iter()
            .enumerate()
            .map(|(q, &(sx, sy))| VolumeContact {
                body_a: 0,
                body_b: 1,
                volume: 1e-9 * (1.0 + 0.1 * q as f64),
                point: centre + DVec3::new(sx * r, sy * r, 0.0),
                linear: DVec3::new(0.01 * sx, -0.02 * sy, 1.0) * 1e-4 * (1.0 + q as f64),
                angular: DVec3::new(1e-7 * q as f64, -2e-7, 3e-8),
                feature: (region << 2) | q as u64,
            })
            .collect()
    }

    /// The rate `dV/dt` of part `p` when body b moves at `(v, w)` and a is still.
    fn rate(p: &VolumeContact, b: &Body, v: DVec3, w: DVec3) -> f64 {
        p.linear.dot(v + w.cross(p.point - b.position)) + p.angular.dot(w)
    }

    /// A region whose parts lie within microns of each other on a 0.2 m cube is one part whose
    /// volume and rate for any motion (force and torque: the row) are its parts' sums; a region
    /// as wide as the cube's face keeps its four parts; the two regions are not mixed.
    #[test]
    fn a_region_too_small_to_tilt_is_one_part_with_its_parts_force_and_torque() {
        let bodies = cube_and_ground();
        let small = region(5, DVec3::new(0.05, -0.02, -0.1), 1e-5);
        let wide = region(6, DVec3::new(0.0, 0.0, -0.1), 0.05);
        let mut volumes: Vec<VolumeContact> = small.iter().chain(&wide).copied().collect();
        merge_unresolved_parts(&mut volumes, &bodies);
        assert_eq!(volumes.len(), 5, "{volumes:#?}");
        assert_eq!(&volumes[1..], &wide[..]);
        let one = volumes[0];
        assert_eq!(one.feature, small[0].feature);
        let total: f64 = small.iter().map(|p| p.volume).sum();
        assert!((one.volume - total).abs() <= 1e-15 * total);
        let b = &bodies[1];
        for (v, w) in [
            (DVec3::new(0.3, -1.0, 2.0), DVec3::ZERO),
            (DVec3::ZERO, DVec3::new(4.0, 1.0, -2.0)),
            (DVec3::new(-0.2, 0.5, 0.1), DVec3::new(-1.0, 3.0, 0.7)),
        ] {
            let parts: f64 = small.iter().map(|p| rate(p, b, v, w)).sum();
            let merged = rate(&one, b, v, w);
            assert!(
                (merged - parts).abs() <= 1e-12 * parts.abs().max(1e-12),
                "v {v} w {w}: merged {merged}, parts {parts}"
            );
        }
    }

    /// The threshold is the spread beside the bodies' radii of gyration: just under it the
    /// parts merge, just over they stay; with the cube's rotations locked (no tilt to resist)
    /// even the wide region is one part.
    #[test]
    fn the_spread_is_judged_beside_the_radius_of_gyration() {
        let mut bodies = cube_and_ground();
        // tr(I⁻¹) m = 3 / ρ² with ρ² = (0.2)²/6: merged while 2 r² · 3 / ρ² < 10⁻³ (the four
        // parts at (±r, ±r) are √2 r from their mean).
        let rho2: f64 = 0.04 / 6.0;
        let limit = (UNRESOLVED_TILT * rho2 / 6.0).sqrt();
        for (r, parts) in [(0.99 * limit, 1), (1.01 * limit, 4)] {
            let mut volumes = region(1, DVec3::new(0.0, 0.0, -0.1), r);
            // Equal weights: the parts' mean is the region's centre.
            for p in &mut volumes {
                p.linear = DVec3::new(0.0, 0.0, 1e-4);
            }
            merge_unresolved_parts(&mut volumes, &bodies);
            assert_eq!(volumes.len(), parts, "spread {r} (limit {limit})");
        }
        bodies[1].set_locked_axes(LockedAxes::ROTATION);
        let mut volumes = region(1, DVec3::new(0.0, 0.0, -0.1), 0.05);
        merge_unresolved_parts(&mut volumes, &bodies);
        assert_eq!(volumes.len(), 1);
    }
}
