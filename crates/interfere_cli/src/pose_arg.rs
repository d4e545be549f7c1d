//! The pose format of the command line: `X,Y,Z` (translation) optionally followed by `@` and a
//! rotation, either axis-angle in degrees `AX,AY,AZ:DEG` or a quaternion `q:X,Y,Z,W`.
//!
//! Examples: `0.5,0,0` · `0,0,1@0,0,1:30` (30° about z) · `1,2,3@q:0,0,0.3826834,0.9238795`.
//!
//! Every number must be a finite `f32`: `nan` and `inf` are refused as not finite, and a finite
//! number beyond ±3.4028235e38 (`1e300`) as exceeding the `f32` range. The axis and the
//! quaternion are normalized in `f64`, so any non-zero ones are accepted. Errors name the part
//! at fault (translation, rotation axis, rotation angle, quaternion) and the text.

use clap::Args;
use interfere_geometry::Pose;
use interfere_geometry::glam::{DQuat, DVec3, Quat, Vec3};
use std::path::PathBuf;

/// Two mesh files and their poses: the arguments `check` and `volume` share.
#[derive(Args)]
pub struct PosedMeshPair {
    /// First mesh (.obj or .stl).
    pub a: PathBuf,
    /// Second mesh (.obj or .stl).
    pub b: PathBuf,
    /// Pose of the first mesh: `X,Y,Z[@AX,AY,AZ:DEG | @q:X,Y,Z,W]`.
    #[arg(long, default_value = "0,0,0", allow_hyphen_values = true)]
    pub pose_a: String,
    /// Pose of the second mesh, same format.
    #[arg(long, default_value = "0,0,0", allow_hyphen_values = true)]
    pub pose_b: String,
}

impl PosedMeshPair {
    /// Both poses; the error names the option at fault.
    pub fn poses(&self) -> Result<(Pose, Pose), String> {
        let a = parse_pose(&self.pose_a).map_err(|e| format!("--pose-a: {e}"))?;
        let b = parse_pose(&self.pose_b).map_err(|e| format!("--pose-b: {e}"))?;
        Ok((a, b))
    }
}

/// Parses a pose; the error says what is wrong with which part.
pub fn parse_pose(text: &str) -> Result<Pose, String> {
    let (translation, rotation) = match text.split_once('@') {
        Some((t, r)) => (t, Some(r)),
        None => (text, None),
    };
    let t = parse_floats::<3>(translation, "translation")?;
    let translation = Vec3::new(t[0], t[1], t[2]);
    let rotation = match rotation {
        None => Quat::IDENTITY,
        Some(r) => {
            if let Some(q) = r.strip_prefix("q:") {
                let q = parse_floats::<4>(q, "quaternion")?.map(f64::from);
                let quat = DQuat::from_xyzw(q[0], q[1], q[2], q[3]);
                if quat.length() == 0.0 {
                    return Err(format!("quaternion '{r}' has zero length"));
                }
                quat.normalize().as_quat()
            } else {
                let (axis, angle) = r.split_once(':').ok_or_else(|| {
                    format!("rotation '{r}' must be AX,AY,AZ:DEGREES or q:X,Y,Z,W")
                })?;
                let a = parse_floats::<3>(axis, "rotation axis")?.map(f64::from);
                let [deg] = parse_floats::<1>(angle, "rotation angle")?;
                let axis = DVec3::from_array(a);
                if axis.length() == 0.0 {
                    return Err(format!("rotation axis '{r}' has zero length"));
                }
                DQuat::from_axis_angle(axis.normalize(), f64::from(deg).to_radians()).as_quat()
            }
        }
    };
    let pose = Pose::new(rotation, translation);
    if !pose.is_valid() {
        return Err(format!("pose '{text}' is not finite"));
    }
    Ok(pose)
}

fn parse_floats<const N: usize>(text: &str, what: &str) -> Result<[f32; N], String> {
    let values: Vec<&str> = text.split(',').map(str::trim).collect();
    if values.len() != N {
        return Err(format!(
            "{what} '{text}' needs {N} comma-separated numbers, got {}",
            values.len()
        ));
    }
    let mut out = [0.0; N];
    for (o, v) in out.iter_mut().zip(values) {
        *o = parse_f32(v).map_err(|why| format!("{what} '{text}': {why}"))?;
    }
    Ok(out)
}

/// A finite `f32`, or what is wrong with the text.
fn parse_f32(v: &str) -> Result<f32, String> {
    let x = v
        .parse::<f32>()
        .map_err(|_| format!("'{v}' is not a number"))?;
    if x.is_finite() {
        return Ok(x);
    }
    let spelled_infinite = v
        .trim_start_matches(['+', '-'])
        .get(..3)
        .is_some_and(|w| w.eq_ignore_ascii_case("inf"));
    Err(if x.is_nan() || spelled_infinite {
        format!("'{v}' is not a finite number")
    } else {
        format!("'{v}' exceeds the f32 range (±{:e})", f32::MAX)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_translation_axis_angle_and_quaternion() {
        let p = parse_pose("1,2,3").unwrap();
        assert_eq!(p.translation, Vec3::new(1.0, 2.0, 3.0));
        let p = parse_pose("0,0,0@0,0,2:90").unwrap();
        assert!((p.transform_point(Vec3::X) - Vec3::Y).length() < 1e-6);
        let p = parse_pose("0,0,0@q:0,0,1,1").unwrap();
        assert!((p.transform_point(Vec3::X) - Vec3::Y).length() < 1e-6);
    }

    #[test]
    fn rejects_malformed_poses_with_a_reason() {
        for (bad, reason) in [
            (
                "1,2",
                "translation '1,2' needs 3 comma-separated numbers, got 2",
            ),
            ("1,2,x", "translation '1,2,x': 'x' is not a number"),
            (
                "1,2,NaN",
                "translation '1,2,NaN': 'NaN' is not a finite number",
            ),
            ("0,0,0@0,0,0:30", "rotation axis '0,0,0:30' has zero length"),
            (
                "0,0,0@1,0,0",
                "rotation '1,0,0' must be AX,AY,AZ:DEGREES or q:X,Y,Z,W",
            ),
            ("0,0,0@q:0,0,0,0", "quaternion 'q:0,0,0,0' has zero length"),
            (
                "0,0,0@q:1,2",
                "quaternion '1,2' needs 4 comma-separated numbers, got 2",
            ),
        ] {
            assert_eq!(parse_pose(bad).unwrap_err(), reason, "{bad}");
        }
        let e = parse_pose("1,1e300,0").unwrap_err();
        assert_eq!(
            e,
            "translation '1,1e300,0': '1e300' exceeds the f32 range (±3.4028235e38)"
        );
        let e = parse_pose("0,0,0@0,0,1:inf").unwrap_err();
        assert_eq!(e, "rotation angle 'inf': 'inf' is not a finite number");
        // Huge but finite components are normalized in f64.
        let p = parse_pose("0,0,0@q:0,0,3e38,3e38").unwrap();
        assert!((p.transform_point(Vec3::X) - Vec3::Y).length() < 1e-6);
        let p = parse_pose("0,0,0@0,0,1e-40:90").unwrap();
        assert!((p.transform_point(Vec3::X) - Vec3::Y).length() < 1e-6);
    }

    /// Property tests (proptest): any text, and poses assembled from random number words, are
    /// parsed or refused with a message naming the part and the text at fault; a parsed pose is
    /// finite with a unit rotation. 256 cases by default; `PROPTEST_CASES=N` raises it
    /// (docs/user-guide.md, "Property tests").
    mod proptests {
        use super::*;
        use proptest::prelude::*;

        fn cases(default: u32) -> ProptestConfig {
            let cases = std::env::var("PROPTEST_CASES")
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(default);
            ProptestConfig {
                cases,
                failure_persistence: None,
                // The same sample on every run unless PROPTEST_RNG_SEED picks another one.
                rng_seed: match std::env::var("PROPTEST_RNG_SEED") {
                    Ok(_) => ProptestConfig::default().rng_seed,
                    Err(_) => proptest::test_runner::RngSeed::Fixed(0x1A7E_5FE5),
                },
                ..ProptestConfig::default()
            }
        }

        /// A number word and what it is: finite as f32, or the phrase its refusal must use.
        fn word() -> impl Strategy<Value = (String, Option<&'static str>)> {
            prop_oneof![
                3 => any::<f32>()
                    .prop_filter("finite", |x| x.is_finite())
                    .prop_map(|x| (format!("{x:e}"), None)),
                1 => (-1e3f64..1e3).prop_map(|x| (format!("{x}"), None)),
                1 => prop::sample::select(vec![
                    ("nan", Some("is not a finite number")),
                    ("-inf", Some("is not a finite number")),
                    ("infinity", Some("is not a finite number")),
                    ("1e300", Some("exceeds the f32 range")),
                    ("-3.5e38", Some("exceeds the f32 range")),
                    ("x", Some("is not a number")),
                    ("", Some("is not a number")),
                    ("1,", Some("comma-separated")),
                ])
                .prop_map(|(w, e)| (w.to_string(), e)),
            ]
        }

        fn check(text: &str, parsed: Result<Pose, String>) -> Result<(), TestCaseError> {
            match parsed {
                Ok(p) => {
                    prop_assert!(p.is_valid(), "{text}: {p:?}");
                    prop_assert!((p.rotation.length() - 1.0).abs() < 1e-5, "{text}");
                }
                Err(e) => prop_assert!(!e.is_empty(), "{text}"),
            }
            Ok(())
        }

        proptest! {
            #![proptest_config(cases(256))]

            #[test]
            fn arbitrary_text_never_panics(text in "[-0-9a-z.,:@qe ]{0,40}|.{0,40}") {
                check(&text, parse_pose(&text))?;
            }

            /// `X,Y,Z@AX,AY,AZ:DEG` or `X,Y,Z@q:X,Y,Z,W` with random words: refused exactly when a
            /// word is bad (naming the part, the word and the reason) or the axis or quaternion is
            /// zero; otherwise a valid pose.
            #[test]
            fn structured_poses(
                words in proptest::collection::vec(word(), 8),
                form in 0u8..3,
            ) {
                let w: Vec<&str> = words.iter().map(|(w, _)| w.as_str()).collect();
                let (text, parts): (String, Vec<(&str, std::ops::Range<usize>)>) = match form {
                    0 => (w[..3].join(","), vec![("translation", 0..3)]),
                    1 => (
                        format!("{}@{}:{}", w[..3].join(","), w[3..6].join(","), w[6]),
                        vec![("translation", 0..3), ("rotation axis", 3..6), ("rotation angle", 6..7)],
                    ),
                    _ => (
                        format!("{}@q:{}", w[..3].join(","), w[3..7].join(",")),
                        vec![("translation", 0..3), ("quaternion", 3..7)],
                    ),
                };
                let parsed = parse_pose(&text);
                check(&text, parsed.clone())?;
                // The first part with a bad word is the one refused: for a word holding a comma
                // the count of numbers, else the first bad word, with its reason.
                let first_bad = parts.iter().find_map(|(name, range)| {
                    let part = &words[range.clone()];
                    if let Some((w, _)) = part.iter().find(|(w, _)| w.contains(',')) {
                        return Some((*name, w, "comma-separated"));
                    }
                    part.iter().find_map(|(w, e)| e.map(|e| (*name, w, e)))
                });
                match (first_bad, &parsed) {
                    (Some((part, w, reason)), Err(e)) => {
                        prop_assert!(e.starts_with(part), "{text}: {e}");
                        prop_assert!(e.contains(reason), "{text}: {e} lacks {reason}");
                        if !reason.starts_with("comma") {
                            prop_assert!(e.contains(&format!("'{w}'")), "{text}: {e}");
                        }
                    }
                    (Some(_), Ok(p)) => prop_assert!(false, "{text} parsed to {p:?}"),
                    (None, Err(e)) => prop_assert!(e.contains("zero length"), "{text}: {e}"),
                    (None, Ok(_)) => {}
                }
            }
        }
    }
}
