//! Summaries of repeated measurements: medians and the binomial standard error of an error rate.

/// Median of a non-empty slice, every value counted (NaN sorts last, by `total_cmp`).
pub fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        0.5 * (s[n / 2 - 1] + s[n / 2])
    }
}

/// The median of the finite values; NaN when there is none.
pub fn median_finite(v: &[f64]) -> f64 {
    let s: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    if s.is_empty() {
        return f64::NAN;
    }
    median(&s)
}

/// One binomial standard error `√(p(1−p)/n)`.
pub fn binomial_se(p: f64, n: usize) -> f64 {
    (p * (1.0 - p) / n as f64).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median_finite(&[f64::NAN, 1.0, 3.0, f64::INFINITY]), 2.0);
        assert!(median_finite(&[f64::NAN]).is_nan());
        assert!((binomial_se(0.5, 100) - 0.05).abs() < 1e-15);
    }
}
