//! What the golden tests share: the FNV-1a hash of bit patterns, reading a LIBSVM file into
//! memory, and the deterministic planted sparse streams (generators written here, so a stream
//! never depends on a crate's random number generator).
#![allow(dead_code)] // each golden test file uses a part

use sketchlearn::{Example, LibsvmOptions, LibsvmReader};
use std::path::{Path, PathBuf};

/// Examples as `(indices, values, label)`.
pub type Data = Vec<(Vec<u32>, Vec<f64>, f64)>;

/// The repository's root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The folder of golden records and model files (`tests/golden`).
pub fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

/// FNV-1a (64 bits) over the little-endian bytes of each `f64`'s bit pattern.
pub struct Fnv(pub u64);

impl Fnv {
    pub fn new() -> Self {
        Fnv(0xcbf29ce484222325)
    }

    pub fn f64(&mut self, x: f64) {
        for b in x.to_bits().to_le_bytes() {
            self.0 ^= b as u64;
            self.0 = self.0.wrapping_mul(0x100000001b3);
        }
    }

    /// The hash as 16 hexadecimal digits.
    pub fn hex(&self) -> String {
        format!("{:016x}", self.0)
    }
}

/// The first `limit` examples of a LIBSVM file.
pub fn read_libsvm(path: &Path, limit: usize) -> Data {
    let mut r = LibsvmReader::open(path.to_str().unwrap(), LibsvmOptions::default()).unwrap();
    let mut ex = Example::default();
    let mut out = Vec::new();
    while out.len() < limit && r.read_into(&mut ex).unwrap() {
        out.push((ex.indices.clone(), ex.values.clone(), ex.label));
    }
    out
}

/// Uniform draws in [0, 1) from a 64-bit LCG (Knuth's MMIX constants), the top 53 bits.
pub fn lcg(mut s: u64) -> impl FnMut() -> f64 {
    move || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (s >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Uniform draws in [0, 1) from xorshift64 (13, 7, 17), the top 53 bits.
pub fn xorshift(mut s: u64) -> impl FnMut() -> f64 {
    move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A sparse stream with labels from a planted direction. Per row, in this order of draws:
/// `draws` indices `⌊u·scale⌋` (then `always`, if any, sorted and de-duplicated), one value
/// `u·value.0 + value.1` per index, and — when `noise` is given — one draw of label noise:
/// `y = sign(Σ wⱼ xⱼ + noise·(u − ½))` with `wⱼ = 1` where `signal(j)` and `off` elsewhere.
pub struct Planted {
    pub rows: usize,
    pub draws: usize,
    pub scale: f64,
    pub always: Option<u32>,
    pub value: (f64, f64),
    pub signal: fn(u32) -> bool,
    pub off: f64,
    pub noise: Option<f64>,
}

impl Planted {
    pub fn stream(&self, mut next: impl FnMut() -> f64) -> Data {
        (0..self.rows)
            .map(|_| {
                let mut idx: Vec<u32> = (0..self.draws)
                    .map(|_| (next() * self.scale) as u32)
                    .collect();
                idx.extend(self.always);
                idx.sort_unstable();
                idx.dedup();
                let val: Vec<f64> = idx
                    .iter()
                    .map(|_| next() * self.value.0 + self.value.1)
                    .collect();
                let score: f64 = idx
                    .iter()
                    .zip(&val)
                    .map(|(&j, &v)| if (self.signal)(j) { v } else { self.off * v })
                    .sum();
                let noise = self.noise.map_or(0.0, |a| a * (next() - 0.5));
                (idx, val, if score + noise > 0.0 { 1.0 } else { -1.0 })
            })
            .collect()
    }
}
