//! The experiments' own seeded generator: SplitMix64 with Box–Muller Gaussians. The draws only
//! have to be reproducible (same seed, same bits), not cryptographic; each experiment's data
//! come from the flavour of Gaussian it was written with, so that regenerated data are
//! bit-identical to the published ones.

/// SplitMix64 (Steele, Lea, Flood 2014).
pub struct SplitMix64 {
    state: u64,
    /// The sine half of the last Box–Muller pair, for [`normal`](Self::normal).
    spare: Option<f64>,
}

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64 {
            state: seed,
            spare: None,
        }
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in (0, 1): the midpoints of 2^53 equal cells.
    pub fn uniform(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    /// Standard normal, Box–Muller on [`uniform`](Self::uniform), both halves of each pair used
    /// (the sparse and dense throughput data).
    pub fn normal(&mut self) -> f64 {
        if let Some(s) = self.spare.take() {
            return s;
        }
        let (u, v) = (self.uniform(), self.uniform());
        let r = (-2.0 * u.ln()).sqrt();
        let t = std::f64::consts::TAU * v;
        self.spare = Some(r * t.sin());
        r * t.cos()
    }

    /// A uniformly random unit vector of dimension `d` (normalised [`normal`](Self::normal)s).
    pub fn unit_vector(&mut self, d: usize) -> Vec<f64> {
        let mut v: Vec<f64> = (0..d).map(|_| self.normal()).collect();
        let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        v.iter_mut().for_each(|x| *x /= norm);
        v
    }

    /// Standard normal, Box–Muller cosine branch only, on uniforms in (0, 1] (the SON §5.1
    /// synthetic data).
    pub fn gaussian(&mut self) -> f64 {
        let u1 = ((self.next_u64() >> 11) as f64 + 1.0) / (1u64 << 53) as f64;
        let u2 = ((self.next_u64() >> 11) as f64 + 1.0) / (1u64 << 53) as f64;
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }
}

#[cfg(test)]
mod tests {
    use super::SplitMix64;

    #[test]
    fn splitmix64_reference_value() {
        // The first output of SplitMix64 seeded with 0 (the reference implementation's).
        assert_eq!(SplitMix64::new(0).next_u64(), 0xE220_A839_7B1D_CDAF);
    }

    #[test]
    fn same_seed_same_bits() {
        let (mut a, mut b) = (SplitMix64::new(7), SplitMix64::new(7));
        for _ in 0..5 {
            assert_eq!(a.normal().to_bits(), b.normal().to_bits());
            assert_eq!(a.gaussian().to_bits(), b.gaussian().to_bits());
        }
    }
}
