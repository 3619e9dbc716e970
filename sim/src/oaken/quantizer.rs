//! Bit-exact model of the Oaken quantization engine.
//! Paper: Oaken (ISCA 2025) §4.3-4.5, §5.2 "Quantization engine".
//! Spec: docs/spec.md §2.2-2.9. One token vector is `heads * head_dim`
//! elements, quantized as a whole; codes and COO lists are per head.

use super::format::{CooEntry, GroupMeta, Meta};
use super::params::{CodeKind, Coding, Group, OakenParams, GROUPS, SEGMENT};
use super::thresholds::{Kv, ThresholdError, ThresholdSet, ThresholdTable};
use crate::fp16;

/// Where the decomposer puts one element (spec §2.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Class {
    pub group: Group,
    /// Upper side: above the group's upper shift threshold (outer, middle).
    /// For the inner group, and for values on the lower side, false.
    pub upper: bool,
}

/// Eq. 1 of the paper with its strict outer bounds:
/// outer  x < lo_outer           | x > hi_outer
/// middle lo_outer <= x < lo_inner | hi_inner < x <= hi_outer
/// inner  lo_inner <= x <= hi_inner
pub fn classify(t: &ThresholdSet, x: u16) -> Class {
    let v = fp16::to_units(x);
    let [lo_o, lo_i, hi_i, hi_o] = t.units();
    let (group, upper) = if v < lo_o {
        (Group::Outer, false)
    } else if v > hi_o {
        (Group::Outer, true)
    } else if v < lo_i {
        (Group::Middle, false)
    } else if v > hi_i {
        (Group::Middle, true)
    } else {
        (Group::Inner, false)
    };
    Class { group, upper }
}

/// The shift thresholds (lower, upper) of a shifted group.
fn shift_pair(t: &ThresholdSet, g: Group) -> (i64, i64) {
    let [lo_o, lo_i, hi_i, hi_o] = t.units();
    match g {
        Group::Outer => (lo_o, hi_o),
        Group::Middle => (lo_i, hi_i),
        Group::Inner => (0, 0),
    }
}

/// The quantity a group codes (spec §2.5): x itself for plain groups, the
/// distance past the side's threshold for side-magnitude groups (always
/// > 0), and `x - T_side` for folded groups (< 0 on the lower side, held at
/// -65504 so that the FP16 minimum can reach it).
pub fn coded_value(p: &OakenParams, t: &ThresholdSet, c: Class, x_units: i64) -> i64 {
    let (lo, hi) = shift_pair(t, c.group);
    match (p.coding(c.group).kind, c.upper) {
        (CodeKind::Plain, _) => x_units,
        (CodeKind::SideMagnitude, true) => x_units - hi,
        (CodeKind::SideMagnitude, false) => lo - x_units,
        (CodeKind::Folded, true) => x_units - hi,
        (CodeKind::Folded, false) => (x_units - lo).max(-fp16::MAX_UNITS),
    }
}

/// A folded value below -65504 (only when the lower side's threshold is
/// positive): held at -65504 and exempt from the §2.10 bound.
pub fn folded_clamped(p: &OakenParams, t: &ThresholdSet, c: Class, x_units: i64) -> bool {
    let (lo, _) = shift_pair(t, c.group);
    p.coding(c.group).kind == CodeKind::Folded && !c.upper && x_units - lo < -fp16::MAX_UNITS
}

/// Twice the §2.10 bound on `|output - x|` for an element of a group coded
/// as `coding` with step `step_units`, decoded to `out_units`: `s + ulp`,
/// or `2 s + ulp` for a folded group, whose code may be moved one step to
/// stay on its side.
pub fn bound_x2(coding: Coding, step_units: i64, out_units: i64) -> i64 {
    let ulp = fp16::grid_ulp(out_units.unsigned_abs()) as i64;
    match coding.kind {
        CodeKind::Folded => 2 * step_units + ulp,
        _ => step_units + ulp,
    }
}

/// Per-group parameters derived once per token (spec §2.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupParams {
    pub meta: GroupMeta,
    pub min_units: i64,
    pub step_units: i64,
}

impl GroupParams {
    pub const EMPTY: GroupParams =
        GroupParams { meta: GroupMeta { min: 0, step: 0 }, min_units: 0, step_units: 0 };

    /// min = RD(v_min); step = RU(ceil((v_max - min) / (2^m - 1))).
    pub fn derive(coding: Coding, v_min: i64, v_max: i64) -> GroupParams {
        let min = fp16::round_down(v_min);
        let min_units = fp16::to_units(min);
        let d = v_max - min_units;
        assert!(d >= 0);
        let k = coding.levels_minus_one() as i64;
        let c = (d + k - 1) / k;
        let step = fp16::round_up(c);
        let step_units = fp16::to_units(step);
        assert!(step_units >= c && c < fp16::MAX_UNITS);
        GroupParams { meta: GroupMeta { min, step }, min_units, step_units }
    }

    pub fn from_meta(m: GroupMeta) -> GroupParams {
        GroupParams { meta: m, min_units: fp16::to_units(m.min), step_units: fp16::to_units(m.step) }
    }

    /// q = floor((2n + step) / (2 step)) with n = v - min; 0 when step = 0.
    pub fn code(&self, v: i64) -> u64 {
        let n = v - self.min_units;
        assert!(n >= 0, "value below the group minimum");
        if self.step_units == 0 {
            0
        } else {
            ((2 * n + self.step_units) / (2 * self.step_units)) as u64
        }
    }

    /// A folded group's code (spec §2.7): the nearest grid index, moved by
    /// one when it lies on the other side of zero than the element (lower
    /// elements decode below zero, upper ones at or above it).
    pub fn folded_code(&self, v: i64, upper: bool) -> u64 {
        let q = self.code(v);
        let g = self.reconstruct(q);
        let q = if upper && g < 0 {
            q + 1
        } else if !upper && g >= 0 {
            q - 1
        } else {
            q
        };
        debug_assert!((self.reconstruct(q) >= 0) == upper);
        q
    }

    /// The first index of a folded group's grid at or above zero (spec
    /// §2.7): `z = min(ceil(-min / step), 2^m)` for a negative `min`
    /// (`2^m` when `step = 0`), 0 otherwise. Lower codes lie below `z`,
    /// upper ones at or above it, so a decoder finds the side as `q >= z`
    /// and an encoder keeps a code on its side by clamping it to `z - 1` or
    /// `z`: what hardware computes once per token instead of a sign per
    /// element.
    pub fn fold_zero(&self, m: u32) -> u64 {
        let top = 1u64 << m;
        if self.min_units >= 0 {
            0
        } else if self.step_units == 0 {
            top
        } else {
            let a = -self.min_units;
            (((a + self.step_units - 1) / self.step_units) as u64).min(top)
        }
    }

    /// v' = min + q * step, exact.
    pub fn reconstruct(&self, q: u64) -> i64 {
        self.min_units + q as i64 * self.step_units
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TokenStatus {
    /// A NaN or infinity was replaced (spec §2.2.1).
    pub nonfinite: bool,
    /// The token named a layer past the table; layer 0 was used.
    pub layer_oob: bool,
}

/// Everything the engine emits for one token vector (all heads).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QuantToken {
    /// `heads * head_dim` dense codes, element order, each < 2^inlier_bits.
    pub dense: Vec<u8>,
    /// Per head, its COO entries in increasing position order.
    pub coo: Vec<Vec<u8>>,
    /// Segment counts, `heads * segments`, head-major (spec §2.9).
    pub counts: Vec<u8>,
    /// One metadata word for the whole vector.
    pub meta: Meta,
    pub status: TokenStatus,
}

impl QuantToken {
    /// Head `h`'s dense slots.
    pub fn head_dense(&self, p: &OakenParams, h: usize) -> &[u8] {
        &self.dense[h * p.head_dim..(h + 1) * p.head_dim]
    }

    /// Head `h`'s segment counts.
    pub fn head_counts(&self, p: &OakenParams, h: usize) -> &[u8] {
        &self.counts[h * p.segments()..(h + 1) * p.segments()]
    }

    /// COO entries of all heads.
    pub fn outliers(&self) -> usize {
        self.coo.iter().map(Vec::len).sum()
    }
}

/// Per-element detail, for tests and metrics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ElementCode {
    pub class: Class,
    /// The group's full code: inlier_bits wide (middle) or outlier_bits wide.
    pub code: u64,
}

pub fn quantize_token_detail(
    p: &OakenParams,
    t: &ThresholdSet,
    x: &[u16],
) -> (QuantToken, Vec<ElementCode>) {
    assert_eq!(x.len(), p.vector_len());
    let mut nonfinite = false;
    let xs: Vec<u16> = x
        .iter()
        .map(|&e| {
            let (s, f) = fp16::sanitize(e);
            nonfinite |= f;
            s
        })
        .collect();
    let classes: Vec<Class> = xs.iter().map(|&e| classify(t, e)).collect();
    let values: Vec<i64> =
        xs.iter().zip(&classes).map(|(&e, &c)| coded_value(p, t, c, fp16::to_units(e))).collect();

    let mut params = [GroupParams::EMPTY; 3];
    for g in GROUPS {
        let vs = values.iter().zip(&classes).filter(|(_, c)| c.group == g).map(|(&v, _)| v);
        let (lo, hi) = vs.fold((i64::MAX, i64::MIN), |(a, b), v| (a.min(v), b.max(v)));
        if lo <= hi {
            params[g as usize] = GroupParams::derive(p.coding(g), lo, hi);
        }
    }

    let ib = p.inlier_bits;
    let dense_mask = (1u64 << ib) - 1;
    let mut dense = Vec::with_capacity(p.vector_len());
    let mut coo = vec![Vec::new(); p.heads];
    let mut counts = vec![0u8; p.heads * p.segments()];
    let mut detail = Vec::with_capacity(p.vector_len());
    for (i, (&c, &v)) in classes.iter().zip(&values).enumerate() {
        let coding = p.coding(c.group);
        let gp = &params[c.group as usize];
        let q = match coding.kind {
            CodeKind::Folded => gp.folded_code(v, c.upper),
            _ => gp.code(v),
        };
        assert!(q <= coding.levels_minus_one());
        // A side-magnitude code is {side, magnitude}.
        let code = match coding.kind {
            CodeKind::SideMagnitude => (c.upper as u64) << coding.mag_bits | q,
            _ => q,
        };
        dense.push((code & dense_mask) as u8);
        if c.group != Group::Middle {
            let hi = (code >> ib) & 1 == 1;
            // position within the head, then within its segment (spec §2.8)
            let (h, j) = (i / p.head_dim, i % p.head_dim);
            let e = CooEntry { idx: (j % SEGMENT) as u8, outer: c.group == Group::Outer, hi };
            coo[h].push(e.encode());
            counts[h * p.segments() + j / SEGMENT] += 1;
        }
        detail.push(ElementCode { class: c, code });
    }
    let meta = Meta { groups: params.map(|g| g.meta) };
    let status = TokenStatus { nonfinite, layer_oob: false };
    (QuantToken { dense, coo, counts, meta, status }, detail)
}

pub fn quantize_token(p: &OakenParams, t: &ThresholdSet, x: &[u16]) -> QuantToken {
    quantize_token_detail(p, t, x).0
}

/// The engine as a whole: the threshold table plus per-token quantization.
#[derive(Clone, Debug)]
pub struct QuantEngine {
    pub params: OakenParams,
    pub table: ThresholdTable,
}

impl QuantEngine {
    pub fn new(params: OakenParams) -> Self {
        params.validate().expect("invalid Oaken parameters");
        let table = ThresholdTable::new(params.layers);
        QuantEngine { params, table }
    }

    pub fn write_thresholds(&mut self, layer: usize, kv: Kv, raw: [u16; 4]) -> Result<(), ThresholdError> {
        self.table.write(layer, kv, raw)
    }

    pub fn token(&self, layer: usize, kv: Kv, x: &[u16]) -> QuantToken {
        let (t, oob) = self.table.lookup(layer, kv);
        let mut q = quantize_token(&self.params, &t, x);
        q.status.layer_oob = oob;
        q
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kvgen::Rng;

    /// The two statements of §2.7's folded rule agree: the nearest code
    /// moved by one across zero is the nearest code clamped to `z - 1`
    /// (lower) or `z` (upper), and a code is upper exactly when `q >= z`.
    /// Over random grids (FP16 min of either sign, steps from 0 to large)
    /// and every grid point, midpoint and a random value per index.
    #[test]
    fn fold_zero_clamp_equals_the_side_move() {
        let mut r = Rng::new(7);
        let (mut moved, mut checked) = (0u64, 0u64);
        for _ in 0..20_000 {
            let m = 2 + r.below(8) as u32;
            let k = (1i64 << m) - 1;
            // min from about -16.7 to 7.2, either sign
            let min = fp16::round_down(((r.uniform() - 0.7) * 4e8) as i64);
            let min_units = fp16::to_units(min);
            let step = if r.below(20) == 0 { 0 } else { fp16::round_up(1 + (r.uniform() * 2e8 / k as f64) as i64) };
            let gp = GroupParams { meta: crate::oaken::format::GroupMeta { min, step }, min_units, step_units: fp16::to_units(step) };
            let z = gp.fold_zero(m);
            for q in 0..=k as u64 {
                assert_eq!(gp.reconstruct(q) >= 0, q >= z, "{gp:?} q {q} z {z}");
            }
            let hi = gp.reconstruct(k as u64);
            for _ in 0..8 {
                let v = min_units + ((hi - min_units) as f64 * r.uniform()) as i64;
                if v == 0 {
                    continue;
                }
                let upper = v > 0;
                let q = gp.code(v);
                let clamped = if upper { q.max(z) } else { q.min(z.saturating_sub(1)) };
                let f = gp.folded_code(v, upper);
                assert_eq!(f, clamped, "{gp:?} v {v} q {q} z {z}");
                moved += (f != q) as u64;
                checked += 1;
            }
        }
        println!("checked {checked}, moved {moved}");
        assert!(moved > 0 && checked > 100_000);
    }
}
