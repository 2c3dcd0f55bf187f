//! The next line of a buffered input, found 32 bytes at a time: [`read_line`] is
//! `BufRead::read_until(b'\n', …)` with the newline searched by AVX2 compares
//! ([`find_newline`]) instead of the standard library's word-at-a-time `memchr`, which was 4 % of
//! the CPU of a dense Oja-SON run from text (lines of 11 kB, read twice: the dimension pre-scan
//! and the pass; `docs/results/speed.md`, branch `dense12`). Same bytes, same errors.

use std::io::{BufRead, ErrorKind, Result};

/// Appends to `buf` the bytes of `reader` up to and including the next `\n` (or to the end of
/// the input) and returns how many were appended (0: at the end): `read_until(b'\n', buf)`'s
/// contract, including its errors (an interrupted read is retried; any other error is returned,
/// with the bytes read before it left in `buf`).
#[inline]
pub(crate) fn read_line<R: BufRead + ?Sized>(reader: &mut R, buf: &mut Vec<u8>) -> Result<usize> {
    let mut read = 0;
    loop {
        let (done, used) = {
            let available = match reader.fill_buf() {
                Ok(bytes) => bytes,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            match find_newline(available) {
                Some(i) => {
                    buf.extend_from_slice(&available[..=i]);
                    (true, i + 1)
                }
                None => {
                    buf.extend_from_slice(available);
                    (available.is_empty(), available.len())
                }
            }
        };
        reader.consume(used);
        read += used;
        if done {
            return Ok(read);
        }
    }
}

/// The position of the first `\n` in `bytes`.
#[inline]
pub(crate) fn find_newline(bytes: &[u8]) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    if crate::linear::sparse::has_avx2() {
        // SAFETY: the CPU supports AVX2 (checked just above).
        return unsafe { avx2::find_newline(bytes) };
    }
    bytes.iter().position(|&b| b == b'\n')
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::{
        __m256i, _mm256_cmpeq_epi8, _mm256_loadu_si256, _mm256_movemask_epi8, _mm256_or_si256,
        _mm256_set1_epi8,
    };

    /// [`super::find_newline`]: 64 bytes a step (two compares folded into one test), then 32,
    /// then the last bytes one at a time.
    #[target_feature(enable = "avx2")]
    pub(super) fn find_newline(bytes: &[u8]) -> Option<usize> {
        let nl = _mm256_set1_epi8(b'\n' as i8);
        let p = bytes.as_ptr();
        let mut i = 0;
        while i + 64 <= bytes.len() {
            // SAFETY: `i + 64 ≤ bytes.len()`: both loads are inside `bytes`.
            let (a, b) = unsafe {
                (
                    _mm256_loadu_si256(p.add(i) as *const __m256i),
                    _mm256_loadu_si256(p.add(i + 32) as *const __m256i),
                )
            };
            let hits = _mm256_or_si256(_mm256_cmpeq_epi8(a, nl), _mm256_cmpeq_epi8(b, nl));
            if _mm256_movemask_epi8(hits) != 0 {
                break;
            }
            i += 64;
        }
        while i + 32 <= bytes.len() {
            // SAFETY: `i + 32 ≤ bytes.len()`.
            let v = unsafe { _mm256_loadu_si256(p.add(i) as *const __m256i) };
            let m = _mm256_movemask_epi8(_mm256_cmpeq_epi8(v, nl)) as u32;
            if m != 0 {
                return Some(i + m.trailing_zeros() as usize);
            }
            i += 32;
        }
        bytes[i..].iter().position(|&b| b == b'\n').map(|p| i + p)
    }
}

#[cfg(test)]
mod tests {
    use super::{find_newline, read_line};
    use std::io::{BufRead, BufReader, Cursor};

    #[test]
    fn finds_the_first_newline_at_every_place() {
        for len in 0..200 {
            for at in 0..=len {
                let mut bytes = vec![b'x'; len];
                if at < len {
                    bytes[at] = b'\n';
                    if at + 5 < len {
                        bytes[at + 5] = b'\n';
                    }
                }
                let want = bytes.iter().position(|&b| b == b'\n');
                assert_eq!(find_newline(&bytes), want, "len {len}, newline at {at}");
            }
        }
    }

    #[test]
    fn lines_equal_read_until_over_small_buffers() {
        let text: Vec<u8> = (0..5000u32)
            .flat_map(|i| {
                let mut line = vec![b'a' + (i % 26) as u8; (i as usize * 37) % 301];
                line.push(b'\n');
                line
            })
            .chain(*b"last line without a newline")
            .collect();
        for capacity in [1, 7, 64, 100, 4096] {
            let mut ours = BufReader::with_capacity(capacity, Cursor::new(&text));
            let mut std = BufReader::with_capacity(capacity, Cursor::new(&text));
            let (mut a, mut b) = (Vec::new(), Vec::new());
            loop {
                a.clear();
                b.clear();
                let (n, m) = (
                    read_line(&mut ours, &mut a).unwrap(),
                    std.read_until(b'\n', &mut b).unwrap(),
                );
                assert_eq!((n, &a), (m, &b));
                if n == 0 {
                    break;
                }
            }
        }
    }
}
