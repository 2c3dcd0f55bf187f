//! Parsing the decimal numbers of the text formats (LIBSVM, VW, CSV): Clinger's exact fast path
//! for plain decimals, read in place from the line ([`decimal_at`]); everything else through
//! the `fast-float2` crate (the Eisel–Lemire algorithm that Rust's own `f64::from_str` also
//! implements), on the bytes without a UTF-8 check. Both give the correctly rounded double, so
//! every reader returns the same bits as `str::parse::<f64>` and accepts exactly the same text
//! (`tests/suite/decimal_parse.rs` compares them on random text: digits, signs, points, exponents,
//! `inf`/`infinity`/`nan` in any case, and junk).

/// Parses a finite `f64` from ASCII bytes (anything Rust's `f64::from_str` accepts), with the
/// same correctly rounded result; `inf`, `nan` and overflow such as `1e999` are
/// [`FloatError::NonFinite`].
pub(crate) fn parse_finite(token: &[u8]) -> Result<f64, FloatError> {
    if let Some(x) = fast_decimal(token) {
        return Ok(x);
    }
    let x: f64 = fast_float2::parse(token).map_err(|_| FloatError::Unparsable)?;
    if x.is_finite() {
        Ok(x)
    } else {
        Err(FloatError::NonFinite)
    }
}

/// `str::parse::<f64>` on bytes, through the same two paths as [`parse_finite`] but keeping
/// `inf` and `nan` (`None`: not a number). Public for the comparison test
/// (`tests/suite/decimal_parse.rs`); the readers use [`parse_finite`].
///
/// ```
/// use sketchlearn::data::parse_f64;
/// assert_eq!(parse_f64(b"-1.25e2"), Some(-125.0));
/// assert_eq!(parse_f64(b"+.5"), ".5".parse().ok());
/// assert!(parse_f64(b"NaN").unwrap().is_nan());
/// assert_eq!(parse_f64(b"1e"), None);
/// ```
pub fn parse_f64(token: &[u8]) -> Option<f64> {
    fast_decimal(token).or_else(|| fast_float2::parse(token).ok())
}

/// Exact powers of ten `10^0 ..= 10^22` (every one is a double exactly).
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// [`decimal_at`] on a whole token: `None` unless the plain decimal fills it.
#[inline]
pub(crate) fn fast_decimal(token: &[u8]) -> Option<f64> {
    match decimal_at(token, 0) {
        Some((x, end)) if end == token.len() => Some(x),
        _ => None,
    }
}

/// The decimal digits of `line` from `p` added to `acc` (`acc·10^k + digits`, wrapping: the
/// caller bounds the count): the value and the position after the last digit.
#[inline(always)]
pub(crate) fn digits_at(line: &[u8], mut p: usize, mut acc: u64) -> (u64, usize) {
    while let Some(&b) = line.get(p) {
        let d = b.wrapping_sub(b'0');
        if d >= 10 {
            break;
        }
        acc = acc.wrapping_mul(10).wrapping_add(u64::from(d));
        p += 1;
    }
    (acc, p)
}

/// Clinger's fast path for the plain decimals that fill LIBSVM files (`-0.125`, `3`, `.5`),
/// read from `line` at `p` up to whitespace or the end of the line: the value and the position
/// where it ends. When the digits form an integer `M ≤ 2^53` (at most 19 digits) and there are
/// `k ≤ 22` of them after the point, `M` and `10^k` are exact doubles and one IEEE division
/// rounds `M / 10^k` correctly — the same double `f64::from_str` returns. Anything else
/// (exponents, more digits, `inf`, junk, a number not followed by whitespace) returns `None`
/// and goes through the general parser. (W. D. Clinger, *How to read floating point numbers
/// accurately*, PLDI 1990.)
#[inline(always)]
pub(crate) fn decimal_at(line: &[u8], mut p: usize) -> Option<(f64, usize)> {
    let first = *line.get(p)?;
    let negative = first == b'-';
    p += usize::from(negative || first == b'+');
    let start = p;
    let (mut mantissa, mut end) = digits_at(line, p, 0);
    let mut fraction = 0;
    let mut count = end - start;
    if line.get(end) == Some(&b'.') {
        let (m, e) = digits_at(line, end + 1, mantissa);
        fraction = e - end - 1;
        count += fraction;
        (mantissa, end) = (m, e);
    }
    if count == 0 || count > 19 || mantissa > 1u64 << 53 || fraction > 22 {
        return None;
    }
    if line.get(end).is_some_and(|&b| !is_space(b)) {
        return None;
    }
    let x = mantissa as f64 / POW10[fraction];
    Some((with_sign(x, negative), end))
}

/// `−x` when `negative`, else `x`, for `x ≥ +0` (a quotient of non-negative numbers): the
/// sign bit set without a branch. Bit for bit `if negative { -x } else { x }` (negation only
/// flips the sign bit; `−0` included), but a text's signs are as random as its values, and the
/// branch the compiler made of that `if` was mispredicted on about half the values of a dense
/// file (`docs/results/speed.md`, branch `dense12`).
#[inline(always)]
fn with_sign(x: f64, negative: bool) -> f64 {
    debug_assert!(x.is_sign_positive(), "a quotient of non-negative numbers");
    f64::from_bits(x.to_bits() | (u64::from(negative) << 63))
}

/// The whitespace of the LIBSVM line: space, tab, `\r`, `\n`, `\x0b`, `\x0c`.
#[inline(always)]
pub(crate) fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n' | 0x0b | 0x0c)
}

/// Why a number token was rejected.
pub(crate) enum FloatError {
    Unparsable,
    NonFinite,
}

#[cfg(test)]
mod tests {
    use super::{decimal_at, with_sign};

    #[test]
    fn with_sign_is_negation_bit_for_bit() {
        for x in [
            0.0,
            1e-300,
            0.1305,
            1.0,
            2.0f64.powi(53),
            f64::MAX,
            f64::INFINITY,
        ] {
            assert_eq!(with_sign(x, true).to_bits(), (-x).to_bits());
            assert_eq!(with_sign(x, false).to_bits(), x.to_bits());
        }
        for (text, x) in [
            ("-0", -0.0f64),
            ("-0.0", -0.0),
            ("+0", 0.0),
            ("-1.7042", -1.7042),
        ] {
            let (got, end) = decimal_at(text.as_bytes(), 0).unwrap();
            assert_eq!((got.to_bits(), end), (x.to_bits(), text.len()));
        }
    }
}
