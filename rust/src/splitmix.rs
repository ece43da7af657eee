//! SplitMix64 (Steele, Lea and Flood 2014): the one source of the
//! library's pseudo-random integers. Its stream is a pure function of the
//! seed and the position, the same on every platform and thread count.
//!
//! Two ways in: [`SplitMix64`], the sequential generator (state += γ, then
//! the finaliser), and [`mix`] with [`GAMMA`] for counter-based draws (draw i
//! of seed s is `mix(s + (i + 1)·γ)`: the same value the sequential
//! generator seeded with s gives at its i-th call).

/// The golden-ratio increment γ = 0x9E3779B97F4A7C15.
pub const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// SplitMix64's finaliser (a bijection of u64).
#[inline]
pub fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The sequential generator; the field is its state.
#[derive(Clone, Debug)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(GAMMA);
        mix(self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The stream of splitmix64.c (Vigna) seeded with 1234567, as an
    /// independent Python transcription of it prints.
    #[test]
    fn matches_the_reference_stream() {
        let mut g = SplitMix64(1234567);
        let want = [
            6457827717110365317u64,
            3203168211198807973,
            9817491932198370423,
            4593380528125082431,
            16408922859458223821,
        ];
        for w in want {
            assert_eq!(g.next_u64(), w);
        }
        // Counter-based draw i = sequential draw i.
        let mut s = SplitMix64(99);
        for i in 0..10u64 {
            assert_eq!(
                s.next_u64(),
                mix(99u64.wrapping_add((i + 1).wrapping_mul(GAMMA)))
            );
        }
    }
}
