//! Procedural ISO metric screw threads: a bolt (threaded rod with a hexagonal head) and a matching
//! nut, as closed solids, for the nut-and-bolt demo (Wang–Faure–Pai 2012, section 7, Fig. 1a).
//!
//! Both parts are built by a *ring sweep*: `columns` angular samples θᵢ = 2πi/N, and a stack of
//! rings at heights zⱼ, each ring giving a radius per column. For the threaded parts the ring
//! spacing is exactly `pitch / columns`, so every corner of the trapezoidal ISO profile lies on a
//! ring in every column, and the quads are split along the helix direction: the mesh represents
//! the thread's flanks, crests and roots exactly as ruled helical strips (faceted only in θ), and
//! it maps onto itself under the screw motion (Δθ = 2π/N, Δz = pitch/N).
//!
//! ISO 68-1 basic profile: fundamental triangle height H = √3/2 · P; external thread crest flat
//! P/8 at the major radius, root flat P/4 at the minor radius d/2 − 5H/8; the flanks have a 60°
//! included angle. The nut's internal thread is the same profile enlarged radially by a clearance.

use crate::error::ShapeError;
use crate::shapes::{bad, checked_solid, finite, positive, triangle_budget};
use crate::topology::Solid;
use glam::Vec3;
use std::f32::consts::TAU;

/// Dimensions of an ISO metric thread and of the parts built on it (millimetres or any unit).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ThreadSpec {
    /// Nominal (major) diameter d, e.g. 10 for M10.
    pub major_diameter: f32,
    /// Pitch P (axial advance per turn), e.g. 1.5 for M10.
    pub pitch: f32,
    /// Angular samples per turn (facets of the thread surface); a multiple of 16 keeps every
    /// profile corner on a ring.
    pub columns: u32,
    /// Radial clearance between the bolt's and the nut's thread surfaces.
    pub clearance: f32,
}

impl ThreadSpec {
    /// M10 × 1.5 with 64 facets per turn and 0.05 radial clearance.
    pub const M10: ThreadSpec = ThreadSpec {
        major_diameter: 10.0,
        pitch: 1.5,
        columns: 64,
        clearance: 0.05,
    };

    /// Height H of the fundamental triangle.
    pub fn fundamental_height(&self) -> f32 {
        3f32.sqrt() / 2.0 * self.pitch
    }

    /// Major radius of the external thread.
    pub fn major_radius(&self) -> f32 {
        self.major_diameter / 2.0
    }

    /// Minor radius of the external thread (at the root flat).
    pub fn minor_radius(&self) -> f32 {
        self.major_radius() - 5.0 / 8.0 * self.fundamental_height()
    }

    /// The lead angle at the pitch diameter, atan(P / (π d₂)).
    pub fn lead_angle(&self) -> f32 {
        let d2 = self.major_diameter - 0.75 * self.fundamental_height();
        (self.pitch / (std::f32::consts::PI * d2)).atan()
    }

    /// Friction coefficient above which the thread is self-locking: tan of the lead angle
    /// adjusted for the 30° flank half-angle, μ > tan(λ)·cos(30°).
    pub fn self_locking_friction(&self) -> f32 {
        self.lead_angle().tan() * (30f32.to_radians()).cos()
    }

    /// External-thread radius at axial phase `u` ∈ [0, 1) of one pitch, where u = 0 starts the
    /// crest flat: crest P/8, falling flank 5P/16, root P/4, rising flank 5P/16.
    pub fn external_radius(&self, u: f32) -> f32 {
        let u = u.rem_euclid(1.0);
        let (rmaj, rmin) = (self.major_radius(), self.minor_radius());
        let (c, f, r) = (2.0 / 16.0, 5.0 / 16.0, 4.0 / 16.0);
        if u <= c {
            rmaj
        } else if u <= c + f {
            rmaj + (rmin - rmaj) * (u - c) / f
        } else if u <= c + f + r {
            rmin
        } else {
            rmin + (rmaj - rmin) * (u - c - f - r) / f
        }
    }

    /// Checks that the spec describes a buildable thread: diameter and pitch finite and > 0, a
    /// pitch of at least 10⁻⁴ × diameter (finer profiles are below `f32` resolution at their
    /// radius), a positive minor radius (pitch < 0.9238 × diameter), at least 3 columns, and a finite
    /// clearance that keeps the nut's thread surface off the axis (minor radius + clearance > 0)
    /// and inside its hexagon (major radius + clearance < 0.8 × diameter, the hexagon's
    /// apothem). `shape` names the generator in the error.
    pub fn validate(&self, shape: &'static str) -> Result<(), ShapeError> {
        positive(shape, "major_diameter", self.major_diameter)?;
        positive(shape, "pitch", self.pitch)?;
        finite(shape, "clearance", self.clearance)?;
        if (self.pitch as f64) < 1e-4 * self.major_diameter as f64 {
            return Err(bad(
                shape,
                "pitch",
                self.pitch,
                format!(
                    "is less than 1e-4 × major_diameter ({:?}): the profile is below f32 \
                     resolution at that radius",
                    self.major_diameter
                ),
            ));
        }
        if self.columns < 3 {
            return Err(bad(shape, "columns", self.columns, "must be at least 3"));
        }
        let minor = self.minor_radius();
        // All finite here: the diameter and pitch were checked above.
        if minor <= 0.0 {
            return Err(bad(
                shape,
                "pitch",
                self.pitch,
                format!(
                    "leaves no thread core: minor radius d/2 - 5H/8 = {minor:?} for diameter {:?}",
                    self.major_diameter
                ),
            ));
        }
        if minor + self.clearance <= 0.0 {
            return Err(bad(
                shape,
                "clearance",
                self.clearance,
                format!("puts the nut's thread through the axis (minor radius {minor:?})"),
            ));
        }
        let apothem = 0.8 * self.major_diameter;
        if self.major_radius() + self.clearance >= apothem {
            return Err(bad(
                shape,
                "clearance",
                self.clearance,
                format!(
                    "puts the nut's thread through its hexagon (major radius {:?}, apothem {apothem:?})",
                    self.major_radius()
                ),
            ));
        }
        Ok(())
    }

    /// Rows of ring steps for a part of `length`: `length / (P/N)` rounded, at least 2, with the
    /// triangle budget checked (the head's or outer hexagon's rings and the caps on top).
    fn rows(
        &self,
        shape: &'static str,
        parameter: &'static str,
        length: f32,
    ) -> Result<u32, ShapeError> {
        positive(shape, parameter, length)?;
        let rows = (length as f64 / self.ring_step() as f64).round().max(2.0);
        // Thread bands, the bands to the head or outer rings, and the caps: 2·N per ring.
        let triangles = 2.0 * self.columns as f64 * (rows + 4.0);
        // `as` saturates: an infinite count (a pitch too small for f32) is refused too.
        triangle_budget(shape, triangles as u128)?;
        Ok(rows as u32)
    }

    fn ring_step(&self) -> f32 {
        self.pitch / self.columns as f32
    }

    /// Radius of the thread surface in column `i` at height `z` (right-hand thread: the profile
    /// phase is (z − P·i/N)/P).
    fn thread_radius(&self, i: u32, z: f32, offset: f32) -> f32 {
        let phase = (z - self.ring_step() * i as f32) / self.pitch;
        self.external_radius(phase) + offset
    }
}

/// One ring of the sweep: a height and a radius per column.
struct Ring {
    z: f32,
    r: Vec<f32>,
}

fn ring_vertices(columns: u32, rings: &[Ring]) -> Vec<Vec3> {
    let mut vertices = Vec::with_capacity(rings.len() * columns as usize + 2);
    for ring in rings {
        for (i, &r) in ring.r.iter().enumerate() {
            let a = TAU * i as f32 / columns as f32;
            vertices.push(Vec3::new(r * a.cos(), r * a.sin(), ring.z));
        }
    }
    vertices
}

/// Builds a rod from rings stacked bottom to top, capped by fans to the axis at both ends.
/// `helical[j]` says whether the band between rings j and j+1 is a thread band, split along the
/// helix direction (Δz = +P/N per column); other bands (flat annuli, prisms) are split the other
/// way, which does not matter for them.
fn sweep_rod(columns: u32, rings: &[Ring], helical: &[bool]) -> Result<Solid, ShapeError> {
    let n = columns as usize;
    let mut vertices = ring_vertices(columns, rings);
    let id = |j: usize, i: usize| (j * n + i % n) as u32;
    let mut triangles = Vec::with_capacity(rings.len() * n * 2 + 2 * n);
    for (j, &is_helical) in helical.iter().enumerate().take(rings.len() - 1) {
        for i in 0..n {
            // Ring j below (or inside) ring j+1, θ increasing counter-clockwise seen from +z:
            // (a, b, c) and (a, c, d) face outward; the diagonal a–c follows the helix.
            let (a, b, c, d) = (id(j, i), id(j, i + 1), id(j + 1, i + 1), id(j + 1, i));
            if is_helical {
                triangles.push([a, b, c]);
                triangles.push([a, c, d]);
            } else {
                triangles.push([a, b, d]);
                triangles.push([b, c, d]);
            }
        }
    }
    let bottom = vertices.len() as u32;
    vertices.push(Vec3::new(0.0, 0.0, rings[0].z));
    let top = vertices.len() as u32;
    vertices.push(Vec3::new(0.0, 0.0, rings[rings.len() - 1].z));
    let last = rings.len() - 1;
    for i in 0..n {
        triangles.push([bottom, id(0, i + 1), id(0, i)]);
        triangles.push([top, id(last, i), id(last, i + 1)]);
    }
    checked_solid("bolt", vertices, triangles)
}

/// Radius of a regular hexagon with apothem `apothem`, flats facing ±x, at angle `a`.
fn hexagon_radius(apothem: f32, a: f32) -> f32 {
    let sector = std::f32::consts::FRAC_PI_3;
    let local = (a + sector / 2.0).rem_euclid(sector) - sector / 2.0;
    apothem / local.cos()
}

/// A bolt along +z: threaded shank from `z = 0` to `z = thread_length` (the tip at z = 0 with a
/// 0.5P chamfer band at the minor radius), and a hexagonal head of across-flats `1.6 d` and height
/// `0.7 d` on top. Triangle count ≈ 2·N·(thread_length·N/P + 10).
///
/// Refused: a spec that [`ThreadSpec::validate`] refuses, a thread length that is not finite
/// and > 0, more than [`crate::shapes::MAX_TRIANGLES`] triangles.
pub fn bolt(spec: &ThreadSpec, thread_length: f32) -> Result<Solid, ShapeError> {
    spec.validate("bolt")?;
    let rows = spec.rows("bolt", "thread_length", thread_length)?;
    let n = spec.columns;
    let dz = spec.ring_step();
    let mut rings = Vec::new();
    let mut helical = Vec::new();
    for j in 0..=rows {
        let z = j as f32 * dz;
        rings.push(Ring {
            z,
            r: (0..n).map(|i| spec.thread_radius(i, z, 0.0)).collect(),
        });
        helical.push(j < rows);
    }
    let top = rows as f32 * dz;
    let d = spec.major_diameter;
    let head_apothem = 0.8 * d;
    let head_height = 0.7 * d;
    let head: Vec<f32> = (0..n)
        .map(|i| hexagon_radius(head_apothem, TAU * i as f32 / n as f32))
        .collect();
    rings.push(Ring {
        z: top,
        r: head.clone(),
    });
    helical.push(false);
    rings.push(Ring {
        z: top + head_height,
        r: head,
    });
    sweep_rod(n, &rings, &helical)
}

/// A hexagonal nut with an internal thread matching [`bolt`] (enlarged radially by the
/// clearance), from `z = 0` to `z = height` (rounded to whole ring steps), across-flats `1.6 d`.
///
/// Refused: a spec that [`ThreadSpec::validate`] refuses, a height that is not finite and > 0,
/// more than [`crate::shapes::MAX_TRIANGLES`] triangles.
pub fn nut(spec: &ThreadSpec, height: f32) -> Result<Solid, ShapeError> {
    spec.validate("nut")?;
    let rows = spec.rows("nut", "height", height)?;
    let n = spec.columns;
    let dz = spec.ring_step();
    let apothem = 0.8 * spec.major_diameter;
    let outer: Vec<f32> = (0..n)
        .map(|i| hexagon_radius(apothem, TAU * i as f32 / n as f32))
        .collect();
    // Loop of rings: inner thread bottom → top (faces inward, i.e. its outward normal points to
    // the axis), then the outer hexagon top → bottom.
    let mut inner_rings = Vec::new();
    for j in 0..=rows {
        let z = j as f32 * dz;
        inner_rings.push(Ring {
            z,
            r: (0..n)
                .map(|i| spec.thread_radius(i, z, spec.clearance))
                .collect(),
        });
    }
    let top = rows as f32 * dz;
    // Walk the loop downward along the outside and upward along the inside, so that "ring j
    // below ring k" holds on the outside; the inside then gets the reversed winding it needs.
    let mut rings = vec![
        Ring {
            z: 0.0,
            r: outer.clone(),
        },
        Ring { z: top, r: outer },
    ];
    let mut helical = vec![false, false];
    for ring in inner_rings.into_iter().rev() {
        rings.push(ring);
        helical.push(true);
    }
    // Bands: outer (0→1), top annulus (1→2), inner thread (descending), bottom annulus (last→0).
    let last = helical.len() - 1;
    helical[last] = false;
    helical[1] = false;
    sweep_nut(n, &rings, &helical)
}

/// Builds the nut from a loop of rings around its cross-section (outer prism up, top annulus,
/// inner thread down, bottom annulus back to the start). The inner thread runs downward in the
/// ring list, so the helical split there must still follow the helix, which going downward is the other
/// diagonal.
fn sweep_nut(columns: u32, rings: &[Ring], helical: &[bool]) -> Result<Solid, ShapeError> {
    let n = columns as usize;
    let vertices = ring_vertices(columns, rings);
    let id = |j: usize, i: usize| (j * n + i % n) as u32;
    let mut triangles = Vec::with_capacity(rings.len() * n * 2);
    for (j, &is_helical) in helical.iter().enumerate().take(rings.len()) {
        let k = (j + 1) % rings.len();
        for i in 0..n {
            // Ring j → ring k. On the outer band ring j is the lower one; everywhere else the
            // winding (a, b, c), (a, c, d) with a = (j, i), b = (j, i+1), c = (k, i+1),
            // d = (k, i) is outward because the loop runs consistently around the cross-section.
            let (a, b, c, d) = (id(j, i), id(j, i + 1), id(k, i + 1), id(k, i));
            if is_helical {
                // Inner thread, ring k is below ring j: the helix runs from (k, i) up to
                // (j, i+1), so split along d–b.
                triangles.push([a, b, d]);
                triangles.push([b, c, d]);
            } else {
                triangles.push([a, b, c]);
                triangles.push([a, c, d]);
            }
        }
    }
    checked_solid("nut", vertices, triangles)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> ThreadSpec {
        ThreadSpec {
            columns: 32,
            ..ThreadSpec::M10
        }
    }

    #[test]
    fn profile_matches_iso_dimensions() {
        let s = ThreadSpec::M10;
        assert!((s.minor_radius() - (5.0 - 0.625 * 1.299_038)).abs() < 1e-5);
        assert_eq!(s.external_radius(0.0), s.major_radius());
        assert_eq!(s.external_radius(0.5), s.minor_radius());
        // Flank slope: radial drop 5H/8 over axial 5P/16 → tan(60°) = 1.732 (30° flank angle
        // measured from the radial direction).
        let slope = (s.major_radius() - s.minor_radius()) / (5.0 / 16.0 * s.pitch);
        assert!((slope - 3f32.sqrt()).abs() < 1e-4);
        // The lead angle of M10×1.5 at d₂ = 9.026 is atan(1.5 / (π·9.026)) = 3.03°; the self-locking friction is small.
        assert!((s.lead_angle().to_degrees() - 3.03).abs() < 0.01);
        assert!(s.self_locking_friction() > 0.04 && s.self_locking_friction() < 0.05);
    }

    #[test]
    fn bolt_and_nut_are_closed_outward_solids() {
        let s = small();
        let bolt = bolt(&s, 6.0).unwrap();
        let nut = nut(&s, 3.0).unwrap();
        assert!(!bolt.was_reoriented(), "bolt built inside out");
        assert!(!nut.was_reoriented(), "nut built inside out");
        // Volume of the threaded part: the mean of r² over one pitch of the trapezoidal profile
        // times π·length (up to faceting of the N-gon, factor sin(2π/N)/(2π/N)).
        let mean_r2 = {
            let samples = 16_000;
            (0..samples)
                .map(|k| s.external_radius((k as f32 + 0.5) / samples as f32).powi(2) as f64)
                .sum::<f64>()
                / samples as f64
        };
        let facet = (TAU / s.columns as f32).sin() as f64 / (TAU / s.columns as f32) as f64;
        let threaded = std::f64::consts::PI * mean_r2 * 6.0 * facet;
        let head = 2.0 * 3f64.sqrt() * 8.0f64.powi(2) * 7.0; // hexagon area (2√3 a²) × height
        // The head's hexagon is sampled at N columns, so its flats are exact only where columns
        // hit corners; allow 1 %.
        let expected = threaded + head;
        assert!(
            ((bolt.volume() - expected) / expected).abs() < 0.01,
            "{} vs {expected}",
            bolt.volume()
        );
        let nut_hole = std::f64::consts::PI * (mean_r2 + 2.0 * 0.05 * mean_r2.sqrt()) * 3.0 * facet;
        let nut_expected = 2.0 * 3f64.sqrt() * 64.0 * 3.0 - nut_hole;
        assert!(
            ((nut.volume() - nut_expected) / nut_expected).abs() < 0.01,
            "{} vs {nut_expected}",
            nut.volume()
        );
    }

    #[test]
    fn thread_maps_onto_itself_under_the_screw_step() {
        // Column i at height z has the same radius as column i+1 at height z + P/N.
        let s = small();
        for i in 0..s.columns {
            for k in 0..50 {
                let z = k as f32 * 0.173;
                let a = s.thread_radius(i, z, 0.0);
                let b = s.thread_radius(i + 1, z + s.ring_step(), 0.0);
                assert!((a - b).abs() < 1e-4);
            }
        }
    }
}
