//! Oaken stimulus shared by the `waves` and `bench` binaries: deterministic
//! tokens and threshold writes drawn from `sim::testgen`.

use crate::oaken::{TableWrite, Token};
use sim::oaken::params::OakenParams;
use sim::oaken::thresholds::ThresholdSet;
use sim::testgen;

/// Deterministic draws from `sim::testgen` strategies.
pub struct Draw {
    runner: proptest::test_runner::TestRunner,
}

impl Draw {
    pub fn new(seed: u64) -> Draw {
        use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
        let mut key = [0u8; 32];
        for (i, b) in key.iter_mut().enumerate() {
            *b = (seed >> (8 * (i % 8))) as u8 ^ i as u8;
        }
        Draw { runner: TestRunner::new_with_rng(Config::default(), TestRng::from_seed(RngAlgorithm::ChaCha, &key)) }
    }

    /// A token for thresholds `set` (`testgen::token`: mostly realistic KV
    /// values, some threshold-adjacent values and specials, now and then a
    /// constant or all-outlier token).
    pub fn token(&mut self, head_dim: usize, set: ThresholdSet) -> Vec<u16> {
        use proptest::strategy::{Strategy, ValueTree};
        testgen::token(head_dim, set).new_tree(&mut self.runner).expect("token strategy").current()
    }

    /// Like `token`, but redrawn until it has at least `head_dim / 4`
    /// distinct values (no constant or all-outlier tokens).
    pub fn varied_token(&mut self, head_dim: usize, set: ThresholdSet) -> Vec<u16> {
        loop {
            let x = self.token(head_dim, set);
            let mut d = x.clone();
            d.sort_unstable();
            d.dedup();
            if d.len() >= (head_dim / 4).max(1) {
                return x;
            }
        }
    }
}

/// Realistic thresholds (`testgen::realistic_thresholds(1.0)`) for layer 0
/// K and V, and `n` tokens drawn around them, alternating K and V.
pub fn oaken_stream(p: &OakenParams, n: usize, seed: u64) -> (Vec<TableWrite>, Vec<Token>) {
    let set = testgen::realistic_thresholds(1.0);
    let writes = vec![TableWrite::of(0, false, set), TableWrite::of(0, true, set)];
    let mut draw = Draw::new(seed);
    let tokens = (0..n).map(|i| Token { layer: 0, v: i % 2 == 1, x: draw.token(p.vector_len(), set) }).collect();
    (writes, tokens)
}
