//! The pose format of the command line: `X,Y,Z` (translation) optionally followed by `@` and a
//! rotation, either axis-angle in degrees `AX,AY,AZ:DEG` or a quaternion `q:X,Y,Z,W`.
//!
//! Examples: `0.5,0,0` · `0,0,1@0,0,1:30` (30° about z) · `1,2,3@q:0,0,0.3826834,0.9238795`.

use clap::Args;
use interfere_geometry::Pose;
use interfere_geometry::glam::{Quat, Vec3};
use std::path::PathBuf;

/// Two mesh files and their poses: the arguments `check` and `volume` share.
#[derive(Args)]
pub struct MeshPair {
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

impl MeshPair {
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
    let t = parse_floats(translation, 3, "translation")?;
    let translation = Vec3::new(t[0], t[1], t[2]);
    let rotation = match rotation {
        None => Quat::IDENTITY,
        Some(r) => {
            if let Some(q) = r.strip_prefix("q:") {
                let q = parse_floats(q, 4, "quaternion")?;
                let quat = Quat::from_xyzw(q[0], q[1], q[2], q[3]);
                let len = quat.length();
                if len.is_nan() || len <= 1e-6 {
                    return Err(format!("quaternion '{r}' has zero length"));
                }
                quat / len
            } else {
                let (axis, angle) = r.split_once(':').ok_or_else(|| {
                    format!("rotation '{r}' must be AX,AY,AZ:DEGREES or q:X,Y,Z,W")
                })?;
                let a = parse_floats(axis, 3, "rotation axis")?;
                let deg = parse_floats(angle, 1, "rotation angle")?[0];
                let axis = Vec3::new(a[0], a[1], a[2]);
                if axis.length().is_nan() || axis.length() <= 1e-9 {
                    return Err(format!("rotation axis {axis} has zero length"));
                }
                Quat::from_axis_angle(axis.normalize(), deg.to_radians())
            }
        }
    };
    let pose = Pose::new(rotation, translation);
    if !pose.is_valid() {
        return Err(format!("pose '{text}' is not finite"));
    }
    Ok(pose)
}

fn parse_floats(text: &str, n: usize, what: &str) -> Result<Vec<f32>, String> {
    let values: Vec<&str> = text.split(',').map(str::trim).collect();
    if values.len() != n {
        return Err(format!(
            "{what} '{text}' needs {n} comma-separated numbers, got {}",
            values.len()
        ));
    }
    values
        .iter()
        .map(|v| match v.parse::<f32>() {
            Ok(x) if x.is_finite() => Ok(x),
            _ => Err(format!("{what} '{text}': '{v}' is not a finite number")),
        })
        .collect()
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
        for bad in [
            "1,2",
            "1,2,x",
            "1,2,NaN",
            "0,0,0@0,0,0:30",
            "0,0,0@1,0,0",
            "0,0,0@q:0,0,0,0",
            "0,0,0@q:1,2",
        ] {
            let err = parse_pose(bad).unwrap_err();
            assert!(!err.is_empty(), "{bad}");
        }
    }
}
