//! Field checks shared by the schema and the builder: `f32` fields read without silent
//! overflow or underflow, positive lengths and counts in range, numbers shown readably.

use super::*;

/// Reads an `f32` field from a JSON number, refusing one that overflows `f32` (`1e300` would
/// become infinity) or that is not zero but rounds to zero.
pub(super) fn f32_checked<'de, D: Deserializer<'de>>(d: D) -> Result<f32, D::Error> {
    to_f32(f64::deserialize(d)?).map_err(serde::de::Error::custom)
}

/// [`f32_checked`] for `[x, y, z]`.
pub(super) fn f32x3_checked<'de, D: Deserializer<'de>>(d: D) -> Result<[f32; 3], D::Error> {
    let v = <[f64; 3]>::deserialize(d)?;
    let mut out = [0.0f32; 3];
    for (o, x) in out.iter_mut().zip(v) {
        *o = to_f32(x).map_err(serde::de::Error::custom)?;
    }
    Ok(out)
}

pub(super) fn to_f32(v: f64) -> Result<f32, String> {
    let x = v as f32;
    if x.is_infinite() && v.is_finite() {
        return Err(format!(
            "{} exceeds the f32 range (±{:e})",
            short(v),
            f32::MAX
        ));
    }
    if x == 0.0 && v != 0.0 {
        return Err(format!(
            "{} is below the smallest f32 ({:e}) and would round to 0",
            short(v),
            f32::from_bits(1)
        ));
    }
    Ok(x)
}

/// A value for a message: plain when ordinary, `1e300` rather than 301 digits when not.
pub(super) fn num(v: impl Into<f64>) -> String {
    let v = v.into();
    if v != 0.0 && v.is_finite() && !(1e-6..1e16).contains(&v.abs()) {
        short(v)
    } else {
        format!("{v}")
    }
}

/// `v` to 7 significant digits, trailing zeros dropped (the JSON reader's last-digit noise,
/// `9.999999999999999e-51` for `1e-50`, is not shown).
pub(super) fn short(v: f64) -> String {
    let s = format!("{v:.6e}");
    let (mantissa, exponent) = s.split_once('e').unwrap_or((&s, "0"));
    let mantissa = mantissa.trim_end_matches('0').trim_end_matches('.');
    format!("{mantissa}e{exponent}")
}

/// Refuses a length that is not finite and > 0, naming the field.
pub(super) fn positive(at: &BodyAt, field: &str, v: f32) -> Result<(), SceneError> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(at.invalid(field, format!("{} is not finite and > 0", num(v))))
    }
}

/// Refuses a count outside `range`, naming the field.
pub(super) fn count_in(
    at: &BodyAt,
    field: &str,
    v: u32,
    range: std::ops::RangeInclusive<u32>,
) -> Result<(), SceneError> {
    if range.contains(&v) {
        Ok(())
    } else {
        Err(at.invalid(
            field,
            format!("{v} is not in {}..={}", range.start(), range.end()),
        ))
    }
}
