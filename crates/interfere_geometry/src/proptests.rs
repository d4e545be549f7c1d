//! Property tests (proptest) of the input stage, not of a paper algorithm: the OBJ and STL
//! readers never panic on any bytes and every refusal names the file and the line (OBJ, ASCII
//! STL) or the triangle (binary STL) with the reason; the shape generators return `Ok` or a
//! typed [`ShapeError`] for any parameters, and an `Ok` is a closed, outward, finite solid.
//!
//! Each property runs [`cases`] cases: 256 by default, from a fixed seed, so that CI runs the same
//! bounded sample fast in debug builds on a 2-core machine; `PROPTEST_CASES=N` raises the count
//! and `PROPTEST_RNG_SEED=N` draws another sample for a longer run (docs/user-guide.md,
//! "Property tests").

use crate::error::{LoadError, ShapeError};
use crate::io::{MeshFormat, parse_mesh, write_obj, write_stl};
use crate::mesh::MeshOptions;
use crate::shapes::{self, MAX_TRIANGLES};
use crate::threads::{ThreadSpec, bolt, nut};
use crate::topology::Solid;
use glam::Vec3;
use proptest::prelude::*;
use std::path::Path;

/// The number of cases per property: `PROPTEST_CASES` when set, else `default`.
pub(crate) fn cases(default: u32) -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default);
    ProptestConfig {
        cases,
        // No regression files in the source tree; a failure prints its minimal input instead.
        failure_persistence: None,
        // The same sample on every run unless PROPTEST_RNG_SEED picks another one.
        rng_seed: match std::env::var("PROPTEST_RNG_SEED") {
            Ok(_) => ProptestConfig::default().rng_seed,
            Err(_) => proptest::test_runner::RngSeed::Fixed(0x1A7E_5FE5),
        },
        ..ProptestConfig::default()
    }
}

const FILE: &str = "dir/some mesh.obj";

fn parse(bytes: &[u8], format: MeshFormat) -> Result<crate::TriMesh, LoadError> {
    parse_mesh(bytes, format, &MeshOptions::default(), Path::new(FILE)).map(|(m, _)| m)
}

/// Every error names the file; parse errors name a line, a triangle, the header or the size.
fn check_error(e: &LoadError, format: MeshFormat) -> Result<(), TestCaseError> {
    let shown = e.to_string();
    prop_assert!(shown.starts_with(FILE), "{shown}");
    if let LoadError::Parse { reason, .. } = e {
        let located = reason == "empty file"
            || reason.contains("line ")
            || match format {
                MeshFormat::Obj => false,
                MeshFormat::Stl => reason.starts_with("binary STL") || reason.contains("triangle "),
            };
        prop_assert!(located, "{format:?} error without a location: {reason}");
        prop_assert!(
            !reason.starts_with("OBJ:"),
            "tobj refused checked text: {reason}"
        );
    }
    Ok(())
}

fn check_result(
    r: Result<crate::TriMesh, LoadError>,
    format: MeshFormat,
) -> Result<(), TestCaseError> {
    match r {
        Ok(mesh) => prop_assert!(mesh.vertices().iter().all(|v| v.is_finite())),
        Err(e) => check_error(&e, format)?,
    }
    Ok(())
}

/// A small valid OBJ (a tetrahedron with a quad split off one face, relative indices, normals
/// and texture references), one statement per line.
fn valid_obj_lines() -> Vec<String> {
    [
        "# a tetrahedron",
        "o tet",
        "v 0 0 0",
        "v 1 0 0",
        "v 0 1 0",
        "v 0 0 1",
        "vt 0.5 0.5",
        "vn 0 0 1",
        "f 1/1/1 3/1/1 2/1/1",
        "f 1 2 4",
        "f -4 -1 -2",
        "f 2//1 3//1 4//1",
    ]
    .map(String::from)
    .to_vec()
}

/// A bad replacement for one word of a `v` line: the text, and what the message must say.
fn bad_coordinate() -> impl Strategy<Value = (String, &'static str)> {
    prop_oneof![
        Just(("nan".to_string(), "not a finite number")),
        Just(("-inf".to_string(), "not a finite number")),
        Just(("Infinity".to_string(), "not a finite number")),
        Just(("1e300".to_string(), "exceeds the f32 range")),
        Just(("-3.5e38".to_string(), "exceeds the f32 range")),
        Just(("1e39".to_string(), "exceeds the f32 range")),
        "[a-z#/]{1,6}"
            .prop_filter("words that parse as floats", |w| w.parse::<f32>().is_err())
            .prop_map(|w| (w, "not a number")),
    ]
}

/// A bad replacement for one index of an `f` line (4 vertices are defined before any face).
fn bad_index() -> impl Strategy<Value = (String, &'static str)> {
    prop_oneof![
        Just(("0".to_string(), "out of range")),
        (5i64..i64::MAX).prop_map(|i| (i.to_string(), "out of range")),
        (i64::MIN..-4i64).prop_map(|i| (i.to_string(), "out of range")),
        Just(("99999999999999999999".to_string(), "bad face vertex")),
        "[a-z]{1,4}".prop_map(|w| (format!("{w}/1"), "bad face vertex")),
    ]
}

fn valid_binary_record(rng: &[f32; 9]) -> Vec<u8> {
    let mut out = vec![0u8; 12];
    for c in rng {
        out.extend_from_slice(&c.to_le_bytes());
    }
    out.extend_from_slice(&[0, 0]);
    out
}

proptest! {
    #![proptest_config(cases(256))]

    /// Any bytes, read as OBJ and as STL: no panic, and refusals are located.
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        for format in [MeshFormat::Obj, MeshFormat::Stl] {
            check_result(parse(&bytes, format), format)?;
        }
    }

    /// Text built from OBJ and STL keywords and numbers (more likely to get deep into the
    /// parsers than random bytes).
    #[test]
    fn keyword_soup_never_panics(
        words in proptest::collection::vec(
            prop_oneof![
                Just("v"), Just("f"), Just("vt"), Just("vn"), Just("solid"), Just("facet"),
                Just("normal"), Just("outer"), Just("loop"), Just("vertex"), Just("endloop"),
                Just("endfacet"), Just("endsolid"), Just("\n"), Just("1"), Just("-1"), Just("0"),
                Just("2"), Just("3"), Just("1e300"), Just("nan"), Just("0.5"), Just("1/2/3"),
                Just("-9223372036854775808"), Just("\u{fffd}"),
            ],
            0..80,
        )
    ) {
        let text = words.join(" ");
        for format in [MeshFormat::Obj, MeshFormat::Stl] {
            check_result(parse(text.as_bytes(), format), format)?;
        }
    }

    /// A valid OBJ with one coordinate replaced by a bad word: refused, naming that line and the
    /// limit or reason.
    #[test]
    fn obj_bad_coordinate_names_its_line(
        vertex in 0usize..4,
        axis in 0usize..3,
        (word, needle) in bad_coordinate(),
    ) {
        let mut lines = valid_obj_lines();
        let line = 2 + vertex; // 0-based index of the vertex's line
        let mut parts: Vec<String> = lines[line].split(' ').map(String::from).collect();
        parts[1 + axis] = word.clone();
        lines[line] = parts.join(" ");
        let text = lines.join("\n");
        match parse(text.as_bytes(), MeshFormat::Obj) {
            Err(LoadError::Parse { path, reason }) => {
                prop_assert_eq!(path, Path::new(FILE));
                prop_assert!(reason.starts_with(&format!("line {}:", line + 1)), "{reason}");
                prop_assert!(reason.contains(needle), "{word}: {reason}");
            }
            other => prop_assert!(false, "{word}: expected a parse error, got {other:?}"),
        }
    }

    /// A valid OBJ with one face index replaced by a bad one: refused, naming that line.
    #[test]
    fn obj_bad_index_names_its_line(
        face in 0usize..4,
        corner in 0usize..3,
        (word, needle) in bad_index(),
    ) {
        let mut lines = valid_obj_lines();
        let line = 8 + face;
        let mut parts: Vec<String> = lines[line].split(' ').map(String::from).collect();
        parts[1 + corner] = word.clone();
        lines[line] = parts.join(" ");
        let text = lines.join("\n");
        match parse(text.as_bytes(), MeshFormat::Obj) {
            Err(LoadError::Parse { path, reason }) => {
                prop_assert_eq!(path, Path::new(FILE));
                prop_assert!(reason.starts_with(&format!("line {}:", line + 1)), "{reason}");
                prop_assert!(reason.contains(needle), "{word}: {reason}");
            }
            other => prop_assert!(false, "{word}: expected a parse error, got {other:?}"),
        }
    }

    /// Faces with fewer than 3 vertices are refused on their line; polygons of any size are
    /// triangulated as fans (n − 2 triangles), with absolute or relative indices.
    #[test]
    fn obj_faces_of_any_size(n in 0usize..12, relative in any::<bool>()) {
        let mut text = String::new();
        for k in 0..n.max(1) {
            let a = std::f32::consts::TAU * k as f32 / n.max(1) as f32;
            text.push_str(&format!("v {} {} 0\n", a.cos(), a.sin()));
        }
        let count = n.max(1);
        let idx: Vec<String> = (0..n)
            .map(|k| if relative { format!("-{}", count - k) } else { format!("{}", k + 1) })
            .collect();
        text.push_str(&format!("f {}\n", idx.join(" ")));
        let r = parse(text.as_bytes(), MeshFormat::Obj);
        if n < 3 {
            match r {
                Err(LoadError::Parse { reason, .. }) => {
                    prop_assert!(reason.contains(&format!("line {}", count + 1)), "{reason}");
                    prop_assert!(reason.contains("at least 3"), "{reason}");
                }
                other => prop_assert!(false, "{n}: {other:?}"),
            }
        } else {
            let mesh = r.map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(mesh.triangle_count(), n - 2);
        }
    }

    /// Binary STL with any announced count, any number of records and any bit patterns: the
    /// count must fit the file (else "truncated", nothing allocated for the claim), and the
    /// first non-finite coordinate is refused naming its triangle.
    #[test]
    fn binary_stl_counts_and_bits(
        claimed in prop_oneof![0u32..8, any::<u32>()],
        records in proptest::collection::vec(
            proptest::array::uniform9(prop_oneof![
                4 => -10.0f32..10.0,
                1 => any::<u32>().prop_map(f32::from_bits),
            ]),
            0..8,
        ),
        trailing in proptest::collection::vec(any::<u8>(), 0..3),
    ) {
        let mut bytes = vec![b'x'; 80];
        bytes.extend_from_slice(&claimed.to_le_bytes());
        for r in &records {
            bytes.extend_from_slice(&valid_binary_record(r));
        }
        bytes.extend_from_slice(&trailing);
        let available = (bytes.len() - 84) / 50;
        let r = parse(&bytes, MeshFormat::Stl);
        if claimed as usize > available {
            match r {
                Err(LoadError::Parse { reason, .. }) => {
                    prop_assert!(reason.contains("truncated"), "{reason}");
                    prop_assert!(reason.contains(&format!("announces {claimed} triangles")), "{reason}");
                }
                other => prop_assert!(false, "{other:?}"),
            }
        } else {
            let used = &records[..claimed as usize];
            match used.iter().position(|r| r.iter().any(|c| !c.is_finite())) {
                Some(t) => match r {
                    Err(LoadError::Parse { reason, .. }) => {
                        prop_assert!(reason.contains(&format!("triangle {t},")), "{t}: {reason}");
                        prop_assert!(reason.contains("not a finite number"), "{reason}");
                    }
                    other => prop_assert!(false, "triangle {t}: {other:?}"),
                },
                None => match r {
                    // Finite: a mesh, or refused by validation (no triangles) — never a parse
                    // error.
                    Ok(mesh) => prop_assert_eq!(mesh.triangle_count(), claimed as usize),
                    Err(LoadError::Invalid { .. }) => prop_assert_eq!(claimed, 0),
                    Err(e) => prop_assert!(false, "{e}"),
                },
            }
        }
    }

    /// ASCII STL of a few facets with one word replaced: refused with the line (and the
    /// triangle, inside a facet), or read to the same triangles when the word was equivalent.
    #[test]
    fn ascii_stl_one_bad_word(
        facets in 1usize..4,
        target in any::<prop::sample::Index>(),
        (word, needle) in prop_oneof![
            bad_coordinate(),
            Just(("endsolid".to_string(), "")),
            Just(("vertex".to_string(), "")),
            Just(("".to_string(), "")),
        ],
    ) {
        let mut lines = vec!["solid test".to_string()];
        for f in 0..facets {
            let z = f as f32;
            lines.push("facet normal 0 0 1".into());
            lines.push("outer loop".into());
            for (x, y) in [(0.0, 0.0), (1.0, 0.0), (0.0, 1.0)] {
                lines.push(format!("vertex {x} {y} {z}"));
            }
            lines.push("endloop".into());
            lines.push("endfacet".into());
        }
        lines.push("endsolid test".into());
        // Replace one word of a line between the first and the last.
        let line = 1 + target.index(lines.len() - 2);
        let mut parts: Vec<String> = lines[line].split(' ').map(String::from).collect();
        let k = target.index(parts.len());
        let is_coordinate = parts[0] == "vertex" && k > 0;
        parts[k] = word.clone();
        lines[line] = parts.join(" ");
        let text = lines.join("\n");
        match parse(text.as_bytes(), MeshFormat::Stl) {
            Err(e) => {
                check_error(&e, MeshFormat::Stl)?;
                let LoadError::Parse { reason, .. } = &e else {
                    return Err(TestCaseError::fail(format!("not a parse error: {e}")));
                };
                prop_assert!(reason.starts_with("ASCII STL: line "), "{reason}");
                if is_coordinate && !needle.is_empty() {
                    prop_assert!(reason.starts_with(&format!("ASCII STL: line {}:", line + 1)), "{reason}");
                    prop_assert!(reason.contains(needle), "{reason}");
                    prop_assert!(reason.contains(&format!("(triangle {}", (line - 1) / 7)), "{reason}");
                }
            }
            // Replacing a word by an equal keyword (`vertex` for `vertex`) changes nothing.
            Ok(mesh) => prop_assert_eq!(mesh.triangle_count(), facets),
        }
    }

    /// Valid meshes round-trip through both writers and readers (a sanity check that the
    /// structured properties above start from files the readers accept).
    #[test]
    fn written_meshes_read_back(r in 0.1f32..10.0, s in 0u32..2) {
        let solid = shapes::icosphere(r, s).map_err(|e| TestCaseError::fail(e.to_string()))?;
        for format in [MeshFormat::Obj, MeshFormat::Stl] {
            let mut bytes = Vec::new();
            match format {
                MeshFormat::Obj => write_obj(solid.mesh(), &mut bytes),
                MeshFormat::Stl => write_stl(solid.mesh(), &mut bytes),
            }
            .unwrap();
            let back = parse(&bytes, format).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(back.triangle_count(), solid.triangle_count());
        }
    }
}

/// Floats that hit every case of the generators' checks: NaN, infinities, zeros, subnormals,
/// extremes, negatives and ordinary values.
fn any_length() -> impl Strategy<Value = f32> {
    prop_oneof![
        3 => 0.01f32..10.0,
        1 => prop::sample::select(vec![
            f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 0.0, -0.0, f32::MIN_POSITIVE,
            f32::from_bits(1), f32::MAX, f32::MIN, -1.0, 1e-30, 1e30, 3e38,
        ]),
        1 => any::<f32>(),
    ]
}

/// Counts: small ones that build quickly, and huge ones that the triangle budget refuses (no
/// count between, which would build millions of triangles in a debug test).
fn any_count() -> impl Strategy<Value = u32> {
    prop_oneof![4 => 0u32..24, 1 => (1u32 << 24)..=u32::MAX]
}

/// An `Ok` generator result is a closed, outward, finite solid with a positive volume.
fn check_solid(r: Result<Solid, ShapeError>, what: &str) -> Result<Option<Solid>, TestCaseError> {
    match r {
        Ok(s) => {
            prop_assert!(!s.was_reoriented(), "{what}: built inside out");
            prop_assert!(s.mesh().vertices().iter().all(|v| v.is_finite()), "{what}");
            let v = s.volume();
            prop_assert!(v.is_finite() && v > 0.0, "{what}: volume {v}");
            prop_assert!(s.triangle_count() as u64 <= MAX_TRIANGLES);
            Ok(Some(s))
        }
        Err(e) => {
            let shown = e.to_string();
            prop_assert!(!shown.is_empty());
            if let ShapeError::Parameter { parameter, .. } = &e {
                prop_assert!(shown.contains(parameter), "{shown}");
            }
            Ok(None)
        }
    }
}

/// A parameter in the documented range of a length: finite and > 0.
fn ok_length(v: f32) -> bool {
    v.is_finite() && v > 0.0
}

proptest! {
    #![proptest_config(cases(256))]

    /// Boxes: `Ok` exactly for finite positive half extents, with the exact volume.
    #[test]
    fn cuboids(x in any_length(), y in any_length(), z in any_length(), n in any_count()) {
        let h = Vec3::new(x, y, z);
        let valid = ok_length(x) && ok_length(y) && ok_length(z);
        let exact = 8.0 * x as f64 * y as f64 * z as f64;
        let expected_ok = valid && exact.is_normal();
        if let Some(s) = check_solid(shapes::cuboid(h), "cuboid")? {
            prop_assert!(valid);
            prop_assert!((s.volume() - exact).abs() <= 1e-9 * exact, "{} vs {exact}", s.volume());
        } else if expected_ok {
            // Only an f32-limited case may be refused with valid parameters.
            let refused = matches!(shapes::cuboid(h), Err(ShapeError::Mesh { .. }));
            prop_assert!(refused, "valid box {h} refused by a parameter check");
        }
        let r = shapes::subdivided_cuboid(h, n);
        if let Some(s) = check_solid(r, "subdivided_cuboid")? {
            prop_assert!(valid && n >= 1 && 12 * (n as u64).pow(2) <= MAX_TRIANGLES);
            prop_assert_eq!(s.triangle_count() as u64, 12 * (n as u64).pow(2));
        } else if valid && (1..24).contains(&n) && x.min(y).min(z) > 1e-3 && x.max(y).max(z) < 1e3 {
            prop_assert!(false, "refused a moderate subdivided box {h} {n}");
        }
    }

    /// Spheres, tori, cylinders, bumpy spheres: `Ok` or a typed error for any parameters, and
    /// `Ok` for every moderate parameter in the documented range.
    #[test]
    fn round_shapes(
        a in any_length(),
        b in any_length(),
        m in any_count(),
        n in any_count(),
        sub in prop_oneof![0u32..3, 10u32..=u32::MAX],
        amplitude in prop_oneof![-0.99f32..0.99, any::<f32>()],
        seed in any::<u64>(),
    ) {
        let moderate = |v: f32| (1e-3..1e3).contains(&v);
        let r = check_solid(shapes::icosphere(a, sub), "icosphere")?;
        if moderate(a) && sub < 3 {
            prop_assert!(r.is_some(), "icosphere({a}, {sub}) refused");
        }
        if r.is_some() {
            prop_assert!(ok_length(a) && sub <= 9);
        }
        let r = check_solid(shapes::uv_sphere(a, m, n), "uv_sphere")?;
        if moderate(a) && (3..24).contains(&m) && (2..24).contains(&n) {
            prop_assert!(r.is_some(), "uv_sphere({a}, {m}, {n}) refused");
        }
        let r = check_solid(shapes::torus(a, b, m, n), "torus")?;
        if r.is_some() {
            prop_assert!(ok_length(b) && a > b && m >= 3 && n >= 3);
        }
        if moderate(a) && moderate(b) && a > 1.01 * b && (3..24).contains(&m) && (3..24).contains(&n) {
            prop_assert!(r.is_some(), "torus({a}, {b}, {m}, {n}) refused");
        }
        let r = check_solid(shapes::cylinder(a, b, m), "cylinder")?;
        if moderate(a) && moderate(b) && (3..24).contains(&m) {
            prop_assert!(r.is_some(), "cylinder({a}, {b}, {m}) refused");
        }
        let r = check_solid(shapes::bumpy_sphere(a, amplitude, b, sub, seed), "bumpy_sphere")?;
        if r.is_some() {
            prop_assert!(amplitude.abs() < 1.0 && b.is_finite());
        }
        if moderate(a) && amplitude.abs() < 0.9 && moderate(b) && sub < 3 {
            prop_assert!(r.is_some(), "bumpy_sphere({a}, {amplitude}, {b}, {sub}) refused");
        }
    }

    /// Wheels: any sagitta above −apothem/2 gives a star-shaped profile, so a valid solid; the
    /// volume is the prism's plus the faces' parabolic caps (2/3 · chord · sagitta each), up to
    /// the polyline's chord error.
    #[test]
    fn polygon_wheels(
        radius in any_length(),
        sides in any_count(),
        half_width in any_length(),
        sagitta_fraction in prop_oneof![-1.5f32..2.0, any::<f32>()],
        segments in any_count(),
    ) {
        let apothem = radius as f64 * (std::f64::consts::PI / sides.max(3) as f64).cos();
        let sagitta = (sagitta_fraction as f64 * apothem) as f32;
        let r = check_solid(
            shapes::polygon_wheel(radius, sides, half_width, sagitta, segments),
            "polygon_wheel",
        )?;
        let moderate = |v: f32| (1e-2..1e2).contains(&v);
        let in_range = moderate(radius) && moderate(half_width) && (3..24).contains(&sides)
            && (1..24).contains(&segments) && (-0.49..2.0).contains(&sagitta_fraction);
        if in_range {
            let s = r.as_ref().ok_or_else(|| TestCaseError::fail(format!(
                "polygon_wheel({radius}, {sides}, {half_width}, {sagitta}, {segments}) refused"
            )))?;
            // Shoelace area of the sampled profile (exactly what the mesh encloses).
            let n = sides as usize;
            let m = segments as usize;
            let corner = |k: usize| {
                let a = std::f64::consts::TAU * (k % n) as f64 / n as f64;
                (radius as f64 * a.cos(), radius as f64 * a.sin())
            };
            let mut pts = Vec::new();
            for k in 0..n {
                let (c0, c1) = (corner(k), corner(k + 1));
                let mid = ((c0.0 + c1.0) / 2.0, (c0.1 + c1.1) / 2.0);
                let len = mid.0.hypot(mid.1);
                for j in 0..m {
                    let t = j as f64 / m as f64;
                    let bump = sagitta as f64 * 4.0 * t * (1.0 - t) / len;
                    pts.push((
                        c0.0 + (c1.0 - c0.0) * t + mid.0 * bump,
                        c0.1 + (c1.1 - c0.1) * t + mid.1 * bump,
                    ));
                }
            }
            let area: f64 = (0..pts.len())
                .map(|i| {
                    let (p, q) = (pts[i], pts[(i + 1) % pts.len()]);
                    p.0 * q.1 - q.0 * p.1
                })
                .sum::<f64>() / 2.0;
            let expected = area * 2.0 * half_width as f64;
            prop_assert!(
                (s.volume() - expected).abs() <= 1e-4 * expected,
                "{} vs {expected}", s.volume()
            );
        }
        if let Some(s) = &r {
            // The end caps are fans from the axis, so the solid is valid only if its profile (the
            // first ring of vertices, at z = −half_width) turns strictly counter-clockwise about
            // the axis, each step by less than π.
            let v = s.mesh().vertices();
            let p = (sides * segments) as usize;
            for i in 0..p {
                let (a, b) = (v[i].as_dvec3(), v[(i + 1) % p].as_dvec3());
                let cross = a.x * b.y - a.y * b.x;
                prop_assert!(
                    cross > 0.0,
                    "profile not star-shaped at {i}: sagitta {sagitta} (apothem {apothem})"
                );
            }
        }
    }

    /// Bolts and nuts: any spec and length give `Ok` or a typed error (the length is a multiple
    /// of the pitch, small or beyond the triangle budget, so no case builds millions of
    /// triangles).
    #[test]
    fn threads(
        major_diameter in any_length(),
        pitch_fraction in prop_oneof![0.01f32..1.0, any::<f32>()],
        columns in prop_oneof![0u32..40, (1u32 << 24)..=u32::MAX],
        clearance_fraction in prop_oneof![-0.2f32..0.2, any::<f32>()],
        pitches in prop_oneof![0.0f32..6.0, 1e9f32..1e30, Just(f32::NAN), Just(-1.0f32)],
    ) {
        let pitch = major_diameter * pitch_fraction;
        let spec = ThreadSpec {
            major_diameter,
            pitch,
            columns,
            clearance: pitch * clearance_fraction,
        };
        let length = pitch * pitches;
        for (what, r) in [("bolt", bolt(&spec, length)), ("nut", nut(&spec, length))] {
            if check_solid(r, what)?.is_some() {
                prop_assert!(spec.validate(what).is_ok());
            }
        }
        let moderate = (1e-2..1e2).contains(&major_diameter)
            && (0.05..0.5).contains(&pitch_fraction)
            && (0.0..0.1).contains(&clearance_fraction)
            && (3..40).contains(&columns)
            && (0.5..6.0).contains(&pitches);
        if moderate {
            prop_assert!(bolt(&spec, length).is_ok(), "bolt {spec:?} {length}");
            prop_assert!(nut(&spec, length).is_ok(), "nut {spec:?} {length}");
        }
    }
}
