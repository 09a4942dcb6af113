//! Seeded noise that the Rust and the Python robot compute identically.
//!
//! SplitMix64 (Steele, Lea, Flood 2014) for the bits, and an Irwin-Hall sum of four uniforms
//! for an approximately normal deviate: only integer arithmetic and IEEE additions and
//! multiplications, so `interop/python/linetrace/linetrace.py` reproduces every value bit for
//! bit (no `ln`/`cos` whose last bit could differ between math libraries).

/// SplitMix64: a 64-bit state advanced by a Weyl sequence and finalised by a mixer.
#[derive(Clone, Debug)]
pub struct SplitMix64 {
    state: u64,
}

/// sqrt(3): the Irwin-Hall sum of four uniforms has variance 1/3.
const SQRT_3: f64 = 1.732_050_807_568_877_2;

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1) with 53 bits.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Zero mean, unit variance, within +-2 sqrt(3).
    pub fn normalish(&mut self) -> f64 {
        let sum = self.uniform() + self.uniform() + self.uniform() + self.uniform();
        (sum - 2.0) * SQRT_3
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix_matches_the_reference_sequence() {
        // First outputs for seed 1234567 from the reference C implementation (Vigna).
        let mut rng = SplitMix64::new(1_234_567);
        assert_eq!(rng.next_u64(), 6_457_827_717_110_365_317);
        assert_eq!(rng.next_u64(), 3_203_168_211_198_807_973);
    }

    #[test]
    fn normalish_has_unit_variance() {
        let mut rng = SplitMix64::new(7);
        let n = 20_000;
        let xs: Vec<f64> = (0..n).map(|_| rng.normalish()).collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
        assert!(mean.abs() < 0.03, "mean {mean}");
        assert!((var - 1.0).abs() < 0.05, "variance {var}");
    }
}
