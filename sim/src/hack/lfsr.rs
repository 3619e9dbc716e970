//! The stochastic-rounding LFSR (docs/spec.md §15.4): a 16-bit Galois LFSR,
//! feedback polynomial x^16 + x^14 + x^13 + x^11 + 1 (mask 0xB400), shifted
//! right, advanced 16 steps per coded element.

/// Feedback mask of x^16 + x^14 + x^13 + x^11 + 1 in a right-shifting
/// Galois LFSR.
pub const MASK: u16 = 0xB400;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lfsr {
    pub state: u16,
}

impl Lfsr {
    pub fn new(seed: u16) -> Lfsr {
        assert_ne!(seed, 0, "an LFSR seed is never 0");
        Lfsr { state: seed }
    }

    /// One step: `s = (s >> 1) ^ (s[0] ? 0xB400 : 0)`.
    pub fn step(&mut self) {
        let lsb = self.state & 1;
        self.state = (self.state >> 1) ^ (lsb.wrapping_neg() & MASK);
    }

    /// The word one element uses: the state after 16 more steps, so that
    /// consecutive elements see disjoint 16-bit windows of the sequence.
    pub fn next_word(&mut self) -> u16 {
        for _ in 0..16 {
            self.step();
        }
        self.state
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn period_is_maximal() {
        let mut l = Lfsr::new(0xACE1);
        let mut n = 0u32;
        loop {
            l.step();
            n += 1;
            if l.state == 0xACE1 {
                break;
            }
        }
        assert_eq!(n, 65535);
    }
}
