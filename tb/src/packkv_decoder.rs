//! Driving `packkv-decoder` and predicting its output from
//! `sim::packkv::codec::decode_stream` and the token grid's `decode`.
//! Spec: docs/spec.md §14.4, §14.6-§14.8, §14.14.2.
//!
//! A case is a list of transfers, each a few blocks of K/V pairs encoded by
//! `encode_pair` from tokens quantized by `quantize_token` (the quantizer
//! test's token kinds: real slice, synthetic, flat, zero, non-finite, ...),
//! with or without median repacking; the middle block of a transfer may be
//! corrupted in one of the ways of spec §14.7. Words go in as beats of 1 to
//! `wi` words under an input stall pattern; output beats are taken under
//! another. A good block must come out beat for beat, then its end beat;
//! a bad block may show some data beats, then its end beat with the
//! model's status.

use crate::coverage::Coverage;
use crate::model::{Model, PortId};
use crate::packkv_quantizer::{token_of, Kind, QuantParams};
use crate::stalls::{self, Stall};
use crate::stim::Xorshift;
use crate::stream::{self, Sink, Source};
use proptest::prelude::*;
use serde::Deserialize;
use sim::packkv::codec::{encode_pair, pack_fields, BlockError, DecodedBlock, TokenBlock};
use sim::packkv::params::{PackKvParams, Repack};
use sim::packkv::quantizer::{quantize_token, TokenGrid};

#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct DecParams {
    pub head_dim: usize,
    pub heads: usize,
    pub levels: u32,
    pub block: usize,
    pub pack: usize,
    pub lanes: usize,
    /// 1: the parser's core at `lanes`; 2: at `2 lanes`, behind an output
    /// queue (spec §14.14.2, "Burst").
    pub burst: usize,
}

impl DecParams {
    pub fn packkv(&self, repack: Repack) -> PackKvParams {
        PackKvParams {
            head_dim: self.head_dim,
            heads: self.heads,
            levels: self.levels,
            block: self.block,
            pack: self.pack,
            lanes: self.lanes,
            repack,
            ..Default::default()
        }
    }
    pub fn c(&self) -> usize {
        self.heads * self.head_dim
    }
    pub fn r(&self) -> usize {
        (32 - self.levels.leading_zeros()) as usize
    }
    pub fn wb(&self) -> usize {
        (32 - (self.r() as u32).leading_zeros()) as usize
    }
    /// The core's lanes, `burst lanes`.
    pub fn core_lanes(&self) -> usize {
        self.burst * self.lanes
    }
    /// Words per input beat: `ceil(lanes r / 32)` at `burst = 1`; at
    /// `burst = 2` the least count from `ceil(2 lanes r / 32)` with which a
    /// block of full widths with a permutation takes the core no more
    /// cycles than its `B C / lanes + 1` output beats (spec §14.14.2).
    pub fn wi(&self) -> usize {
        let base = (self.core_lanes() * self.r()).div_ceil(32);
        if self.burst == 1 {
            return base;
        }
        let (f, out) = (self.r() + self.wb(), self.beats() + 1);
        (base..)
            .take_while(|&wi| (self.core_lanes() * f).max(32 * wi) + 64 * wi - 1 <= 512)
            .find(|&wi| self.core_cycles(wi, &vec![self.r() * self.c(); self.block / self.pack], true) <= out as u64)
            .expect("a legal burst-2 decoder has an input width")
    }
    pub fn pl(&self) -> usize {
        self.pack.min(self.lanes)
    }
    pub fn lb(&self) -> usize {
        self.block.trailing_zeros() as usize
    }
    /// Metadata words a cycle: `wi` rounded down to a power of two, halved
    /// while `1 + B / mw` advances do not pass the shifter's `Lz` (spec
    /// §14.14.2).
    pub fn mw(&self) -> usize {
        self.mw_at(self.wi())
    }
    fn mw_at(&self, wi: usize) -> usize {
        let mut mw = 1 << wi.ilog2();
        while mw > 1 && 1 + self.block / mw <= self.lz() {
            mw /= 2;
        }
        mw
    }
    /// The zero-insert shifter's latency (spec §3.1, `k = 3`) over
    /// `N = next_pow2(core lanes r)` one-bit lanes: `1 + s + ceil((2
    /// log2 N - 1) / 3)`, `s = 1` from `N = 32`.
    fn lz(&self) -> usize {
        let n = (self.core_lanes() * self.r()).next_power_of_two();
        let ln = n.trailing_zeros() as usize;
        if n == 1 {
            return 1;
        }
        1 + (ln >= 5) as usize + (2 * ln - 1).div_ceil(3)
    }
    /// Permutation indices a cycle: the largest power of two with
    /// `pk lb <= 32 wi`, at most `B` (spec §14.14.2).
    pub fn pk(&self) -> usize {
        self.pk_at(self.wi())
    }
    fn pk_at(&self, wi: usize) -> usize {
        (1usize << (32 * wi / self.lb()).ilog2()).min(self.block)
    }
    /// The core's cycles for a good block (spec §14.14.2's rule) whose pack
    /// rows' width sums are `s`, at `wi` words a beat.
    fn core_cycles(&self, wi: usize, s: &[usize], perm: bool) -> u64 {
        let (b, c, l, pk, r, wb) = (self.block, self.c(), self.core_lanes(), self.pack, self.r(), self.wb());
        let (f, win) = (r + wb, 32 * wi);
        let mut t = 3 + b / self.mw_at(wi) + if perm { b / self.pk_at(wi) } else { 0 };
        for &s in s {
            t += (c / l).max((c * f).div_ceil(win)) + (c * pk / l).max((pk * s).div_ceil(win));
        }
        t as u64
    }
    /// Width sums of a stored block's pack rows, and whether it stores a
    /// permutation.
    fn row_sums(&self, w: &[u32]) -> (Vec<usize>, bool) {
        let (b, c, pk, r, wb) = (self.block, self.c(), self.pack, self.r(), self.wb());
        let f = r + wb;
        let perm = w[0] >> 24 & 1 == 1;
        let mut at = 32 * (1 + b) + if perm { b * self.lb() } else { 0 };
        let mut sums = vec![];
        for _ in 0..b / pk {
            let s: usize = (0..c).map(|ch| get(w, at + ch * f + r, wb) as usize).sum();
            at += c * f + pk * s;
            sums.push(s);
        }
        (sums, perm)
    }
    /// Spec §14.14.2's sustained-rate rule: the cycles from the first word
    /// in to the last data beat out (less the latency) of good blocks sent
    /// in full beats with no output stall. At `burst = 1` the parser's
    /// cycles; at `burst = 2` also at least the output's, one beat a cycle
    /// from the first block's first data beat (an end beat after each block).
    pub fn rule_cycles(&self, blocks: &[&[u32]]) -> u64 {
        let core: u64 = blocks
            .iter()
            .map(|w| {
                let (s, perm) = self.row_sums(w);
                self.core_cycles(self.wi(), &s, perm)
            })
            .sum();
        if self.burst == 1 || blocks.is_empty() {
            return core;
        }
        let (_, perm) = self.row_sums(blocks[0]);
        let (c, f, win) = (self.c(), self.r() + self.wb(), 32 * self.wi());
        let first = 2 + self.block / self.mw() + if perm { self.block / self.pk() } else { 0 }
            + (c / self.core_lanes()).max((c * f).div_ceil(win));
        core.max((first + blocks.len() * (self.beats() + 1) - 1) as u64)
    }
    fn quant(&self) -> QuantParams {
        QuantParams { head_dim: self.head_dim, heads: self.heads, levels: self.levels, lanes: self.lanes }
    }
    /// Data beats of a good block.
    pub fn beats(&self) -> usize {
        self.block * self.c() / self.lanes
    }
}

pub fn params_of(m: &Model) -> DecParams {
    serde_json::from_str(m.info().params_json).expect("model parameters are packkv-decoder's")
}

/// The parameters of a tb/models.toml entry without building its model.
pub fn params_of_spec(params: &toml::Table) -> DecParams {
    let d = PackKvParams::default();
    let get = |k: &str, v: usize| params.get(k).and_then(|x| x.as_integer()).map_or(v, |x| x as usize);
    DecParams {
        head_dim: get("head-dim", d.head_dim),
        heads: get("heads", d.heads),
        levels: get("levels", d.levels as usize) as u32,
        block: get("block", d.block),
        pack: get("pack", d.pack),
        lanes: get("lanes", d.lanes),
        burst: get("burst", 2),
    }
}

/// How the middle block of a transfer is spoiled (spec §14.7).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Spoil {
    None,
    /// A reserved header bit.
    Header,
    /// A header length of 0: skipped to the transfer's end.
    HeaderZeroLength,
    /// Row 0's first field with a width of `r + 1` (not expressible when
    /// `r = 2^wb - 1`; then left alone).
    Width,
    /// A pack minimum raised so that a code passes `N`.
    Code,
    /// A permutation index equal to an earlier one, both drawn (K blocks).
    Permutation,
    /// One word longer than its contents (a zero word inserted).
    LengthLong,
    /// Its last word cut, and the length with it: the payload runs past.
    LengthShort,
    /// A length inside the header, metadata and permutation words, the
    /// block cut to it (`bad_header`, resumed at start + length): within
    /// the permutation words of a K block, or the metadata of a V block.
    LengthBelowFixed,
    /// The transfer ends inside the block.
    Truncated,
}

pub const SPOILS: [Spoil; 10] = [
    Spoil::None,
    Spoil::Header,
    Spoil::HeaderZeroLength,
    Spoil::Width,
    Spoil::Code,
    Spoil::Permutation,
    Spoil::LengthLong,
    Spoil::LengthShort,
    Spoil::LengthBelowFixed,
    Spoil::Truncated,
];

/// What a block's tokens are made of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// Token kinds drawn as in the quantizer test.
    Mixed,
    /// One flat token repeated: every pack of width 0.
    Flat,
    /// Random FP16 patterns: packs of the maximum width.
    Wide,
}

#[derive(Clone, Debug)]
pub struct Case {
    pub transfers: Vec<Vec<u32>>,
    pub in_stall: Stall,
    pub out_stall: Stall,
    pub seed: u64,
    pub facts: Facts,
    /// Every beat but a transfer's last carries `wi` words (else 1 to `wi`).
    pub full_beats: bool,
}

#[derive(Clone, Debug, Default)]
pub struct Facts {
    pub blocks: u64,
    pub perm_blocks: u64,
    pub v_blocks: u64,
    /// Transfers of K blocks only, each with a permutation.
    pub k_runs: u64,
    pub width0_packs: u64,
    pub widthr_packs: u64,
    pub flat_tokens: u64,
    pub nonfinite_blocks: u64,
    /// Blocks of more than 2^16 bits after the header: `left` past its
    /// low half (spec §14.14.2's `lbig`).
    pub long_blocks: u64,
    /// A repeated permutation index whose first use is in the same
    /// decoder step (`pk` indices a step), or in an earlier one.
    pub dup_same_step: u64,
    pub dup_earlier_step: u64,
    /// `LengthBelowFixed` within a K block's permutation words (past its
    /// metadata), and within a V block's metadata.
    pub short_in_perm: u64,
    pub short_in_meta: u64,
    pub spoils: Vec<Spoil>,
}

fn kind_of(r: &mut Xorshift) -> Kind {
    match r.next_u64() % 16 {
        0..=4 => Kind::Real,
        5..=6 => Kind::Synthetic,
        7..=8 => Kind::Grid,
        9 => Kind::Flat,
        10 => Kind::Zero,
        11 => Kind::NonFinite,
        12..=13 => Kind::Random,
        _ => Kind::WideRange,
    }
}

/// A K/V pair of blocks of the same tokens, encoded; `with_v` false: the
/// caller keeps only the K block, and `f` counts only its facts.
fn pair(p: &DecParams, r: &mut Xorshift, f: &mut Facts, median: bool, with_v: bool) -> [Vec<u32>; 2] {
    let repack = if median || r.next_u64() % 2 == 1 { Repack::Median } else { Repack::None };
    let kp = p.packkv(repack);
    let q = p.quant();
    let style = match r.next_u64() % 5 {
        0 => Style::Flat,
        1 => Style::Wide,
        _ => Style::Mixed,
    };
    let mut tb = |f: &mut Facts| -> TokenBlock {
        let flat = token_of(r, &q, Kind::Flat);
        let toks: Vec<_> = (0..p.block)
            .map(|_| {
                let x = match style {
                    Style::Flat => flat.x.clone(),
                    Style::Wide => token_of(r, &q, Kind::Random).x,
                    Style::Mixed => {
                        let k = kind_of(r);
                        token_of(r, &q, k).x
                    }
                };
                quantize_token(&kp, &x)
            })
            .collect();
        f.flat_tokens += toks.iter().filter(|t| t.codes.iter().all(|&c| c == 0)).count() as u64;
        TokenBlock {
            meta: toks.iter().map(|t| t.meta).collect(),
            rows: toks.iter().map(|t| t.codes.clone()).collect(),
            nonfinite: toks.iter().any(|t| t.nonfinite),
        }
    };
    let k = tb(f);
    let v = if with_v { tb(f) } else { tb(&mut Facts::default()) };
    for b in [&k, &v].into_iter().take(1 + with_v as usize) {
        for row in pack_fields(&kp, &b.rows) {
            f.width0_packs += row.iter().filter(|x| x.1 == 0).count() as u64;
            f.widthr_packs += row.iter().filter(|x| x.1 as usize == p.r()).count() as u64;
        }
        f.nonfinite_blocks += b.nonfinite as u64;
    }
    let [(kw, _), (vw, _)] = encode_pair(&kp, &kp, &k, &v).expect("quantizer codes never overflow");
    f.perm_blocks += (repack == Repack::Median) as u64;
    f.v_blocks += with_v as u64;
    f.long_blocks += [&kw, &vw].iter().take(1 + with_v as usize).filter(|w| 32 * (w.len() - 1) >= 1 << 16).count() as u64;
    [kw, vw]
}

/// Sets `n` bits at stream bit `at` of `w` to `v`.
fn put(w: &mut [u32], at: usize, n: usize, v: u64) {
    for i in 0..n {
        let (k, b) = ((at + i) / 32, (at + i) % 32);
        w[k] = (w[k] & !(1 << b)) | ((((v >> i) & 1) as u32) << b);
    }
}

fn get(w: &[u32], at: usize, n: usize) -> u64 {
    (0..n).map(|i| (((w[(at + i) / 32] >> ((at + i) % 32)) & 1) as u64) << i).sum()
}

/// Spoils block `b` (the words of one block) in place; `false` if the kind
/// cannot be made on this block (e.g. no permutation to spoil).
fn spoil(p: &DecParams, b: &mut Vec<u32>, s: Spoil, r: &mut Xorshift, f: &mut Facts) -> bool {
    let (bl, r_, wb) = (p.block, p.r(), p.wb());
    let has_perm = b[0] >> 24 & 1 == 1;
    let fields = 32 * (1 + bl + if has_perm { bl * p.lb() / 32 } else { 0 });
    match s {
        Spoil::None | Spoil::Truncated => true,
        Spoil::Header => {
            b[0] |= 1 << (26 + r.next_u64() % 6);
            true
        }
        Spoil::HeaderZeroLength => {
            b[0] &= !0xF_FFFF;
            true
        }
        Spoil::Width => {
            if r_ + 1 >= 1 << wb {
                return false;
            }
            let ch = (r.next_u64() as usize) % p.c();
            put(b, fields + ch * (r_ + wb) + r_, wb, (r_ + 1) as u64);
            true
        }
        Spoil::Code => {
            // a row-0 pack with a payload: its minimum to 2^r - 1; or, when
            // N < 2^r - 1, any pack's minimum to N + 1
            let f = r_ + wb;
            let widths: Vec<u64> = (0..p.c()).map(|ch| get(b, fields + ch * f + r_, wb)).collect();
            let top = (1u64 << r_) - 1;
            match widths.iter().position(|&w| w > 0) {
                Some(ch) => put(b, fields + ch * f, r_, top),
                None if (p.levels as u64) < top => put(b, fields, r_, p.levels as u64 + 1),
                None => return false,
            }
            true
        }
        Spoil::Permutation => {
            if !has_perm {
                return false;
            }
            // index j repeats an index i < j of the same step or of an
            // earlier one, each half the time where both can be made
            let (lb, pk) = (p.lb(), p.pk());
            let earlier = bl > pk && (pk == 1 || r.next_u64() % 2 == 0);
            let (i, j) = if earlier {
                let j = pk + (r.next_u64() as usize) % (bl - pk);
                ((r.next_u64() as usize) % (j - j % pk), j)
            } else {
                // a j that is not the first of its step
                let j = loop {
                    let j = 1 + (r.next_u64() as usize) % (bl - 1);
                    if j % pk > 0 {
                        break j;
                    }
                };
                (j - 1 - (r.next_u64() as usize) % (j % pk), j)
            };
            if i / pk == j / pk {
                f.dup_same_step += 1;
            } else {
                f.dup_earlier_step += 1;
            }
            let first = get(b, 32 * (1 + bl) + i * lb, lb);
            put(b, 32 * (1 + bl) + j * lb, lb, first);
            true
        }
        Spoil::LengthLong => {
            b[0] += 1;
            b.push(0);
            true
        }
        Spoil::LengthShort => {
            b[0] -= 1;
            b.pop();
            true
        }
        Spoil::LengthBelowFixed => {
            // a K block with a permutation: a length past the header and
            // metadata, inside the permutation; a V block: inside the
            // metadata (1 = the header alone)
            let (lo, hi) = if has_perm { (1 + bl, fields / 32) } else { (1, 1 + bl) };
            if lo >= hi {
                return false;
            }
            let len = lo + (r.next_u64() as usize) % (hi - lo);
            b[0] = (b[0] & !0xF_FFFF) | len as u32;
            b.truncate(len);
            if has_perm {
                f.short_in_perm += 1;
            } else {
                f.short_in_meta += 1;
            }
            true
        }
    }
}

/// Transfers of a few blocks each; at most one spoiled block per transfer,
/// never its first (so the block after a bad one is checked too).
pub fn case_of(p: &DecParams, transfers: usize, seed: u64, in_stall: Stall, out_stall: Stall) -> Case {
    case_with(p, transfers, seed, in_stall, out_stall, true)
}

/// `case_of` with every transfer one good K/V pair (a rate measurement's
/// stimulus: drawing spoils and keeping the seeds without any would take
/// thousands of draws, as 8 in 9 transfers are spoiled).
pub fn good_case_of(p: &DecParams, transfers: usize, seed: u64, in_stall: Stall, out_stall: Stall) -> Case {
    case_with(p, transfers, seed, in_stall, out_stall, false)
}

fn case_with(p: &DecParams, transfers: usize, seed: u64, in_stall: Stall, out_stall: Stall, spoils: bool) -> Case {
    let mut r = Xorshift::new(seed);
    let mut f = Facts::default();
    let mut out = vec![];
    for _ in 0..transfers {
        if spoils && r.next_u64() % 4 == 0 {
            // one side's own stream (a decoder per side, §14.6): K blocks
            // with permutations back to back, so that a block's permutation
            // copy meets the next one's writes (spec §14.14.2, Memories)
            let blocks: Vec<Vec<u32>> = (0..3)
                .map(|_| {
                    let [k, _] = pair(p, &mut r, &mut f, true, false);
                    k
                })
                .collect();
            f.k_runs += 1;
            f.spoils.push(Spoil::None);
            f.blocks += blocks.len() as u64;
            out.push(blocks.concat());
            continue;
        }
        let [k0, v0] = pair(p, &mut r, &mut f, false, true);
        let mut blocks = vec![k0, v0];
        let mut kind = if spoils { SPOILS[(r.next_u64() % SPOILS.len() as u64) as usize] } else { Spoil::None };
        if kind != Spoil::None {
            // a permutation to spoil, or a length to cut inside one, needs
            // a median-repacked K block
            let perm = kind == Spoil::Permutation || kind == Spoil::LengthBelowFixed;
            let [k1, v1] = pair(p, &mut r, &mut f, perm, true);
            // spoil block 1 (a V block) or 2 (a K block, which may carry a permutation)
            let at = if kind == Spoil::Permutation || r.next_u64() % 2 == 0 { 2 } else { 1 };
            blocks.push(k1);
            blocks.push(v1);
            if !spoil(p, &mut blocks[at], kind, &mut r, &mut f) {
                kind = Spoil::None;
            }
            if kind == Spoil::Truncated {
                let n = blocks[at].len();
                let cut = 1 + (r.next_u64() as usize) % (n - 1);
                blocks[at].truncate(cut);
                blocks.truncate(at + 1);
            }
        }
        f.spoils.push(kind);
        f.blocks += blocks.len() as u64;
        out.push(blocks.concat());
    }
    Case { transfers: out, in_stall, out_stall, seed: r.next_u64(), facts: f, full_beats: false }
}

pub fn case(p: DecParams, transfers: std::ops::Range<usize>) -> impl Strategy<Value = Case> {
    (transfers, any::<u64>(), stalls::stall(), prop_oneof![3 => stalls::stall(), 1 => stalls::long_stall()])
        .prop_map(move |(n, seed, i, o)| case_of(&p, n, seed, i, o))
}

/// One output beat.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OutBeat {
    Data { x: Vec<u16>, row: u32, ch: u32 },
    End { status: u8, nonfinite: bool, perm: Option<Vec<u32>> },
}

pub fn status_code(e: Option<BlockError>) -> u8 {
    match e {
        None => 0,
        Some(BlockError::BadHeader) => 1,
        Some(BlockError::BadWidth) => 2,
        Some(BlockError::BadCode) => 3,
        Some(BlockError::BadPermutation) => 4,
        Some(BlockError::BadLength) => 5,
        Some(BlockError::Truncated) => 6,
        Some(BlockError::Overflow) => unreachable!("encoder only"),
    }
}

/// The data beats of a good block, in the order of spec §14.14.2.
pub fn data_beats(p: &DecParams, d: &DecodedBlock) -> Vec<OutBeat> {
    let (c, pk, l, pl) = (p.c(), p.pack, p.lanes, p.pl());
    let (g, mpc) = (l / pl, pk / pl);
    let grids: Vec<TokenGrid> = d.meta.iter().map(|&m| TokenGrid::from_meta(m)).collect();
    let mut out = vec![];
    for rho in 0..p.block / pk {
        for beat in 0..c / g * mpc {
            let (ch0, m) = (beat / mpc * g, beat % mpc);
            let x = (0..l)
                .map(|i| {
                    let (ch, row) = (ch0 + i / pl, rho * pk + m * pl + i % pl);
                    grids[row].decode(d.rows[row][ch])
                })
                .collect();
            out.push(OutBeat::Data { x, row: (rho * pk + m * pl) as u32, ch: ch0 as u32 });
        }
    }
    out
}

/// Per block: `Ok(beats)` with the end beat last, or the bad status.
/// A transfer of good blocks cut at their headers' lengths.
pub fn blocks_of(t: &[u32]) -> Vec<&[u32]> {
    let mut out = vec![];
    let mut at = 0;
    while at < t.len() {
        let n = (t[at] & 0xF_FFFF) as usize;
        assert!(n > 0 && at + n <= t.len(), "a block's length runs past its transfer");
        out.push(&t[at..at + n]);
        at += n;
    }
    out
}

pub fn expected(p: &DecParams, c: &Case) -> Vec<Result<Vec<OutBeat>, u8>> {
    let kp = p.packkv(Repack::None);
    let mut out = vec![];
    for t in &c.transfers {
        for b in sim::packkv::codec::decode_stream(&kp, t) {
            out.push(match b {
                Ok(d) => {
                    let mut v = data_beats(p, &d);
                    v.push(OutBeat::End {
                        status: 0,
                        nonfinite: d.nonfinite,
                        perm: d.perm.as_ref().map(|q| q.iter().map(|&i| i as u32).collect()),
                    });
                    Ok(v)
                }
                Err(e) => Err(status_code(Some(e))),
            });
        }
    }
    out
}

/// Walks the beats out against the blocks expected; `cut`: a reset ended
/// the run, so the beats may stop anywhere. Returns the statuses seen.
pub fn check(p: &DecParams, got: &[OutBeat], want: &[Result<Vec<OutBeat>, u8>], cut: bool) -> Result<Vec<u8>, String> {
    let mut i = 0;
    let mut seen = vec![];
    for (bi, w) in want.iter().enumerate() {
        if i >= got.len() {
            return if cut { Ok(seen) } else { Err(format!("block {bi}: no beats (of {} blocks)", want.len())) };
        }
        match w {
            Ok(beats) => {
                let n = beats.len().min(got.len() - i);
                if n < beats.len() && !cut {
                    return Err(format!("block {bi}: {} of {} beats", n, beats.len()));
                }
                stream::compare(&got[i..i + n], &beats[..n], true, |k| format!("block {bi} beat {k}"))?;
                i += n;
                if n == beats.len() {
                    seen.push(0);
                }
            }
            Err(st) => {
                let mut k = 0;
                loop {
                    match got.get(i) {
                        None if cut => return Ok(seen),
                        None => return Err(format!("block {bi}: no end beat (status {st} expected)")),
                        Some(OutBeat::Data { .. }) => {
                            k += 1;
                            i += 1;
                            if k > p.beats() {
                                return Err(format!("block {bi}: more data beats than a block has"));
                            }
                        }
                        Some(OutBeat::End { status, .. }) => {
                            if status != st {
                                return Err(format!("block {bi}: status {status}, expected {st}"));
                            }
                            i += 1;
                            seen.push(*st);
                            break;
                        }
                    }
                }
            }
        }
    }
    if i != got.len() {
        return Err(format!("{} beats after the last block", got.len() - i));
    }
    Ok(seen)
}

#[derive(Clone, Debug, Default)]
pub struct Run {
    pub cycles: u64,
    pub in_blocked: u64,
    pub out_held: u64,
    pub in_idle: u64,
    pub multi_word_beats: u64,
    pub data_beats: u64,
    pub statuses: Vec<u8>,
    pub after_bad: u64,
    pub facts: Facts,
    pub first_data: Option<u64>,
    pub last_data: Option<u64>,
    /// Cycles of the data beats out.
    pub out_cycles: Vec<u64>,
    /// From the first word beat taken to the first data beat out.
    pub first_latency: Option<u64>,
    /// Cycle of the first word beat taken.
    pub first_in: Option<u64>,
    pub cut_owed: bool,
}

pub const POINTS: &[&str] = &[
    "input blocked (buffer full)",
    "output held (backpressure)",
    "input idle",
    "beat of several words",
    "block: K with permutation",
    "block: V (no permutation)",
    "permutation blocks back to back",
    "pack width 0",
    "pack width r (largest)",
    "token: max = min (codes 0)",
    "block: nonfinite",
    "status: ok",
    "status: bad_header",
    "status: bad_width",
    "status: bad_code",
    "status: bad_permutation",
    "status: bad_length",
    "status: truncated",
    "good block right after a bad one",
    "repeated index: same step",
    "repeated index: earlier step",
    "length inside the permutation words",
    "length inside the metadata words",
    LONG_BLOCK,
];

/// Reached only by sets whose widest block passes 2^16 bits (`h2_l32`).
pub const LONG_BLOCK: &str = "block of 2^16 bits or more";

const STATUS: [&str; 7] = [
    "status: ok",
    "status: bad_header",
    "status: bad_width",
    "status: bad_code",
    "status: bad_permutation",
    "status: bad_length",
    "status: truncated",
];

pub fn cover(cov: &Coverage, r: &Run) {
    cov.add("input blocked (buffer full)", r.in_blocked);
    cov.add("output held (backpressure)", r.out_held);
    cov.add("input idle", r.in_idle);
    cov.add("beat of several words", r.multi_word_beats);
    let f = &r.facts;
    cov.add("block: K with permutation", f.perm_blocks);
    cov.add("block: V (no permutation)", f.v_blocks);
    cov.add("permutation blocks back to back", f.k_runs);
    cov.add("pack width 0", f.width0_packs);
    cov.add("pack width r (largest)", f.widthr_packs);
    cov.add("token: max = min (codes 0)", f.flat_tokens);
    cov.add("block: nonfinite", f.nonfinite_blocks);
    cov.add(LONG_BLOCK, f.long_blocks);
    cov.add("repeated index: same step", f.dup_same_step);
    cov.add("repeated index: earlier step", f.dup_earlier_step);
    cov.add("length inside the permutation words", f.short_in_perm);
    cov.add("length inside the metadata words", f.short_in_meta);
    for &s in &r.statuses {
        cov.hit(STATUS[s as usize]);
    }
    cov.add("good block right after a bad one", r.after_bad);
}

/// The beat the outputs show (meaningful while `out_valid`).
pub fn read_out(m: &Model, p: &DecParams) -> OutBeat {
    let g = |n: &str| m.get(m.port(n));
    if g("out_end") == 1 {
        let (lb, pw) = (p.lb(), m.get_words(m.port("out_perm")));
        OutBeat::End {
            status: g("out_status") as u8,
            nonfinite: g("out_nonfinite") == 1,
            perm: (g("out_has_perm") == 1).then(|| (0..p.block).map(|i| get(&pw, i * lb, lb) as u32).collect()),
        }
    } else {
        OutBeat::Data {
            x: m.get_lanes(m.port("out_x")).iter().map(|&v| v as u16).collect(),
            row: g("out_row") as u32,
            ch: g("out_ch") as u32,
        }
    }
}

struct Ports {
    in_valid: PortId,
    in_ready: PortId,
    in_words: PortId,
    in_count: PortId,
    in_last: PortId,
    out_valid: PortId,
    out_ready: PortId,
}

#[derive(Clone, Debug)]
struct InBeat {
    words: Vec<u32>,
    count: usize,
    last: bool,
}

pub fn run(m: &mut Model, p: &DecParams, c: &Case) -> Result<Run, String> {
    run_inner(m, p, c, None)
}

/// `run`, with a one-cycle reset at cycle `reset_at`: the beats out before
/// it must be a prefix of the expected ones.
pub fn run_until(m: &mut Model, p: &DecParams, c: &Case, reset_at: u64) -> Result<Run, String> {
    run_inner(m, p, c, Some(reset_at))
}

fn run_inner(m: &mut Model, p: &DecParams, c: &Case, reset_at: Option<u64>) -> Result<Run, String> {
    let g = |n: &str| m.port(n);
    let io = Ports {
        in_valid: g("in_valid"),
        in_ready: g("in_ready"),
        in_words: g("in_words"),
        in_count: g("in_count"),
        in_last: g("in_last"),
        out_valid: g("out_valid"),
        out_ready: g("out_ready"),
    };
    let wi = p.wi();
    let width = m.port_info(io.in_words).width;
    if width != 32 * wi {
        return Err(format!("in_words is {width} bits; spec §14.14.2 gives {wi} words"));
    }
    let mut rng = Xorshift::new(c.seed ^ 0x5a);
    let mut beats = vec![];
    for t in &c.transfers {
        let mut at = 0;
        while at < t.len() {
            let n = if c.full_beats { wi } else { 1 + (rng.next_u64() as usize) % wi }.min(t.len() - at);
            let mut words = t[at..at + n].to_vec();
            words.resize(wi, 0);
            at += n;
            beats.push(InBeat { words, count: n, last: at == t.len() });
        }
    }
    let mut run = Run { facts: c.facts.clone(), ..Default::default() };
    run.multi_word_beats = beats.iter().filter(|b| b.count > 1).count() as u64;
    let want = expected(p, c);
    let total_words: usize = c.transfers.iter().map(|t| t.len()).sum();
    let mut src: Source<InBeat> = Source::new(beats, &c.in_stall, c.seed ^ 1);
    let mut sink: Sink<OutBeat> = Sink::new(&c.out_stall, c.seed ^ 2);
    let ends = want.len();
    let timeout = 20_000 + 60 * (total_words as u64 + (want.len() * p.beats()) as u64);
    let mut cyc = 0u64;
    let mut first_in: Option<u64> = None;
    loop {
        if reset_at == Some(cyc) {
            run.cut_owed = true;
            check(p, &sink.beats, &want, true).map_err(|e| format!("before the reset: {e}"))?;
            m.reset(1);
            run.cycles = cyc;
            return Ok(run);
        }
        let n_end = sink.beats.iter().filter(|b| matches!(b, OutBeat::End { .. })).count();
        if src.is_empty() && n_end == ends {
            break;
        }
        if cyc > timeout {
            return Err(format!("timeout after {cyc} cycles: {n_end} of {ends} blocks ended, {} beats", sink.beats.len()));
        }
        let offer = src.offer().cloned();
        m.set(io.in_valid, offer.is_some() as u64);
        match &offer {
            Some(b) => {
                m.set_words(io.in_words, &b.words);
                m.set(io.in_count, b.count as u64);
                m.set(io.in_last, b.last as u64);
            }
            None => {
                run.in_idle += 1;
                let noise: Vec<u32> = (0..wi).map(|_| rng.next_u64() as u32).collect();
                m.set_words(io.in_words, &noise);
                m.set(io.in_count, 1 + rng.next_u64() % wi as u64);
                m.set(io.in_last, rng.next_u64() & 1);
            }
        }
        let ready = sink.ready();
        let in_ready = stream::settle_ready(m, io.in_ready, io.out_ready, ready)?;
        if offer.is_some() && !in_ready {
            run.in_blocked += 1;
        }
        let valid = m.get(io.out_valid) == 1;
        if valid && !ready {
            run.out_held += 1;
        }
        let cycle = m.cycle();
        let took = sink
            .sample(cycle, valid, ready, || read_out(m, p))?
            .cloned();
        if let Some(OutBeat::Data { .. }) = took {
            run.data_beats += 1;
            run.first_data.get_or_insert(cycle);
            run.last_data = Some(cycle);
            run.out_cycles.push(cycle);
            if let Some(f) = first_in {
                run.first_latency.get_or_insert(cycle - f);
            }
        }
        // each block's end checked as it comes: a wrong block fails the case
        // at once, not after the timeout (which a shrinking run pays per step)
        if let Some(OutBeat::End { .. }) = took {
            check(p, &sink.beats, &want, true).map_err(|e| format!("cycle {cycle}: {e}"))?;
        }
        if offer.is_some() && in_ready {
            src.take();
            first_in.get_or_insert(cycle);
        }
        m.tick();
        cyc += 1;
    }
    run.cycles = cyc;
    run.first_in = first_in;
    run.statuses = check(p, &sink.beats, &want, false)?;
    run.after_bad = run.statuses.windows(2).filter(|w| w[0] != 0 && w[1] == 0).count() as u64;
    Ok(run)
}
