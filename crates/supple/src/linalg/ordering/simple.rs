//! The two reference orderings: natural (the identity, in `mod.rs`) and random.

/// SplitMix64 (Steele, Lea & Flood 2014, the seeding generator of `java.util.SplittableRandom`):
/// a tiny, well-mixed 64-bit generator, enough to shuffle vertices reproducibly.
pub(crate) struct SplitMix64(u64);

impl SplitMix64 {
    pub(crate) fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..bound` (`bound > 0`), by Lemire's multiply-shift (bias < 2⁻³², fine here).
    pub(crate) fn below(&mut self, bound: usize) -> usize {
        ((self.next_u64() as u128 * bound as u128) >> 64) as usize
    }
}

/// A uniformly random permutation of `0..n` (Fisher–Yates / Durstenfeld shuffle), the same
/// for the same seed on every platform.
pub(crate) fn random(n: usize, seed: u64) -> Vec<u32> {
    let mut rng = SplitMix64::new(seed);
    let mut p: Vec<u32> = (0..n as u32).collect();
    for i in (1..n).rev() {
        let j = rng.below(i + 1);
        p.swap(i, j);
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_is_a_reproducible_shuffle() {
        let a = random(100, 7);
        assert_eq!(a, random(100, 7));
        assert_ne!(a, random(100, 8));
        let mut s = a.clone();
        s.sort_unstable();
        assert_eq!(s, (0..100).collect::<Vec<u32>>());
        assert!(random(0, 1).is_empty());
    }
}
