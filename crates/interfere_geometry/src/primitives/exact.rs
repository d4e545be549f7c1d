//! Exact sign of a short sum of products of `f64`s, by expansion arithmetic (Shewchuk 1997:
//! `TwoProduct` through a fused multiply-add, then `Grow-Expansion` with `TwoSum`). Used for the
//! point-location predicates of the curved primitives (`r² − |p|²` and its capsule and cylinder
//! variants) and the half-space side test, so that a point exactly on a surface is reported as
//! on it. Exact barring overflow or underflow of the products (magnitudes within about
//! `1e-140 ..= 1e150`).

#[inline]
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    let e = (a - (s - bb)) + (b - bb);
    (s, e)
}

#[inline]
fn two_product(a: f64, b: f64) -> (f64, f64) {
    let p = a * b;
    (p, a.mul_add(b, -p))
}

/// Adds `b` to the expansion `e` (components non-overlapping, increasing in magnitude).
fn grow(e: &mut Vec<f64>, b: f64) {
    let mut q = b;
    for h in e.iter_mut() {
        let (s, err) = two_sum(q, *h);
        *h = err;
        q = s;
    }
    e.push(q);
}

/// The exact sign (`-1`, `0`, `1`) of `Σ a_i · b_i`.
pub(crate) fn sign_of_sum_of_products(terms: &[(f64, f64)]) -> i8 {
    let mut e = Vec::with_capacity(2 * terms.len());
    for &(a, b) in terms {
        let (p, err) = two_product(a, b);
        grow(&mut e, err);
        grow(&mut e, p);
    }
    // The components are non-overlapping and sorted by magnitude: the largest non-zero one
    // carries the sign.
    match e.iter().rev().find(|x| **x != 0.0) {
        Some(x) if *x > 0.0 => 1,
        Some(_) => -1,
        None => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signs_that_rounding_gets_wrong() {
        // 1 + 1e-30 - 1 rounds to 0 but is positive.
        assert_eq!(
            sign_of_sum_of_products(&[(1.0, 1.0), (1e-15, 1e-15), (-1.0, 1.0)]),
            1
        );
        // (1 + 2^-52)^2 - 1 - 2^-51 = 2^-104 > 0: lost by plain f64 evaluation.
        let a = 1.0 + f64::EPSILON;
        let plain = a * a - 1.0 - 2.0 * f64::EPSILON;
        assert_eq!(plain, 0.0);
        assert_eq!(
            sign_of_sum_of_products(&[(a, a), (-1.0, 1.0), (-2.0, f64::EPSILON)]),
            1
        );
        // Exact zeros: 3² + 4² − 5².
        assert_eq!(
            sign_of_sum_of_products(&[(3.0, 3.0), (4.0, 4.0), (-5.0, 5.0)]),
            0
        );
        assert_eq!(sign_of_sum_of_products(&[]), 0);
        assert_eq!(sign_of_sum_of_products(&[(0.1, 0.1), (-0.1, 0.1)]), 0);
        assert_eq!(sign_of_sum_of_products(&[(-2.0, 3.0), (1.0, 5.0)]), -1);
    }
}
