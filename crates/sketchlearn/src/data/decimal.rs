//! Parsing the decimal numbers of the text formats (LIBSVM, VW, CSV): Clinger's exact fast path
//! for plain decimals, Rust's correctly rounded `f64::from_str` for everything else, so every
//! reader returns the same double for the same text.

/// Parses a finite `f64` from ASCII bytes (anything Rust's `f64::from_str` accepts), with the
/// same correctly rounded result.
pub(crate) fn parse_finite(token: &[u8]) -> Result<f64, FloatError> {
    if let Some(x) = fast_decimal(token) {
        return Ok(x);
    }
    let text = std::str::from_utf8(token).map_err(|_| FloatError::Unparsable)?;
    let x: f64 = text.parse().map_err(|_| FloatError::Unparsable)?;
    if x.is_finite() {
        Ok(x)
    } else {
        Err(FloatError::NonFinite)
    }
}

/// Exact powers of ten `10^0 ..= 10^22` (every one is a double exactly).
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// Clinger's fast path for the plain decimals that fill LIBSVM files (`-0.125`, `3`, `.5`):
/// when the digits form an integer `M ≤ 2^53` and there are `k ≤ 22` of them after the point,
/// `M` and `10^k` are exact doubles and one IEEE division rounds `M / 10^k` correctly — the
/// same double `f64::from_str` returns. Anything else (exponents, more digits, `inf`, junk)
/// returns `None` and goes through the standard parser. (W. D. Clinger, *How to read floating
/// point numbers accurately*, PLDI 1990.)
#[inline]
pub(crate) fn fast_decimal(token: &[u8]) -> Option<f64> {
    let (negative, digits) = match token.first()? {
        b'-' => (true, &token[1..]),
        b'+' => (false, &token[1..]),
        _ => (false, token),
    };
    if digits.is_empty() || digits.len() > 19 {
        return None;
    }
    let (mut mantissa, mut fraction, mut count, mut dot) = (0u64, 0usize, 0usize, false);
    for &b in digits {
        match b {
            b'0'..=b'9' => {
                // At most 19 digits: no overflow of u64.
                mantissa = mantissa * 10 + u64::from(b - b'0');
                count += 1;
                fraction += usize::from(dot);
            }
            b'.' if !dot => dot = true,
            _ => return None,
        }
    }
    if count == 0 || mantissa > 1u64 << 53 || fraction > 22 {
        return None;
    }
    let x = mantissa as f64 / POW10[fraction];
    Some(if negative { -x } else { x })
}

/// Why a number token was rejected.
pub(crate) enum FloatError {
    Unparsable,
    NonFinite,
}
