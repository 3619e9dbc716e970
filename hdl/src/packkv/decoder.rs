//! `packkv-decoder`: PackKV block bitstreams back to FP16, `lanes` elements
//! per cycle of payload, every malformed block flagged and skipped. This is
//! the unit at `burst = 1` and the core of `decoder_burst.rs` at `burst = 2`
//! (then built at twice the lanes).
//!
//! Paper: PackKV §III-B (bit-packing; decoding inverts packing and
//! quantization), §III-C. Spec: docs/spec.md §14.4 (format), §14.6
//! (contract), §14.7 (dequantization, malformed streams), §14.14.2 (ports,
//! stages). Model: `sim::packkv::codec::decode_stream`, `dequantize_token`.
//!
//! - Input register (`rv`): each beat is registered before the bit buffer,
//!   so no input port reaches the buffer's shifts (timing).
//! - Gearbox: a bit buffer (`gbuf`, `nb` valid bits, stream bit 0 at bit 0)
//!   takes the registered beat while it holds at most `win` bits, and
//!   gives the parser its state's step (`plan`), all its bits, or none a
//!   cycle. It holds one transfer's end at
//!   most (`tend`): a truncated block is found there, never in the next
//!   transfer.
//! - Parser (advances on `adv`, as the whole pipeline): header; `B` metadata
//!   words shifted into a register file; the permutation, `pk` indices a
//!   cycle, checked against a seen bit per row and each other; per pack row `lanes` fields a cycle into a
//!   field shift register, then payload beats. A payload beat takes the
//!   widths of its `G = lanes / min(P, lanes)` channels, so its bit count is
//!   known before the data: the zero-insert shifter (spec §3.1), one bit per
//!   lane over `lanes r` slot bits, spreads them into `r`-bit slots.
//! - After the shifter: C `code = min + payload`, checked against `N`
//!   (a bad code suppresses the block's later beats and is reported on its
//!   end beat); D1-D7 `(q + z) * units(step)` exact as magnitude and sign,
//!   from four 4 x 11-bit products; R0-R2 RNE (`UnitsToFp16`).
//! - Every block ends with an end beat carrying its status, its `nonfinite`
//!   bit and (status ok) its permutation.

use crate::prim::fp16::{UnitsToFp16, FX, RNE};
use crate::prim::reg::{reg_logic, Reg};
use crate::prim::vecs::{consts, regs, sigs};
use crate::prim::zero_insert::ZeroInsert;
use rust_hdl::prelude::*;

pub const S_HDR: u64 = 0;
pub const S_META: u64 = 1;
pub const S_PERM: u64 = 2;
pub const S_FLD: u64 = 3;
pub const S_PAY: u64 = 4;
pub const S_SKIP: u64 = 5;
pub const S_END: u64 = 6;

/// Status codes on `out_status` (spec §14.14.2).
pub const ST_OK: u64 = 0;
pub const ST_BAD_HEADER: u64 = 1;
pub const ST_BAD_WIDTH: u64 = 2;
pub const ST_BAD_CODE: u64 = 3;
pub const ST_BAD_PERMUTATION: u64 = 4;
pub const ST_BAD_LENGTH: u64 = 5;
pub const ST_TRUNCATED: u64 = 6;

/// Registers after the code stage C: D1-D7 and R0-R2.
const DSTAGES: usize = 10;
/// Zero-insert pipeline: a register every 3 network stages.
const ZPIPE: usize = 3;

/// Sizes derived from the parameters (spec §14.1, §14.14.2).
#[derive(Clone, Debug)]
pub struct Geometry {
    pub c: usize,
    pub b: usize,
    pub p: usize,
    pub levels: u32,
    pub r: usize,
    pub wb: usize,
    pub f: usize,
    pub lanes: usize,
    /// Words per input beat, `ceil(lanes r / 32)`.
    pub wi: usize,
    /// Zero-insert lanes (bits), `lanes r` rounded up to a power of two.
    pub zn: usize,
    pub lz: usize,
    /// `min(P, lanes)`: rows per payload beat.
    pub pl: usize,
    /// Channels per payload beat.
    pub g: usize,
    /// Payload beats per channel.
    pub mpc: usize,
    pub lb: usize,
    /// The gearbox takes a beat while it holds at most `win` bits.
    pub win: usize,
    /// Metadata words taken per cycle: `wi` rounded down to a power of two.
    pub mw: usize,
    /// Permutation indices checked per cycle: the largest power of two
    /// whose indices fit one input beat (`pk lb <= 32 wi`), at most `B`.
    pub pk: usize,
    pub latency: usize,
}

impl Geometry {
    /// The geometry with `ceil(lanes r / 32)` words a beat (spec §14.14.2).
    pub fn new(c: usize, b: usize, p: usize, levels: u32, lanes: usize) -> Geometry {
        let r = (32 - levels.leading_zeros()) as usize;
        Self::with_words(c, b, p, levels, lanes, (lanes * r).div_ceil(32)).expect("legal decoder geometry")
    }

    /// The geometry with `wi` words an input beat (at least `ceil(lanes r /
    /// 32)`); an error when the bit buffer would pass 512 bits or the
    /// permutation copy would be overwritten before it is caught.
    pub fn with_words(c: usize, b: usize, p: usize, levels: u32, lanes: usize, wi: usize) -> Result<Geometry, String> {
        let r = (32 - levels.leading_zeros()) as usize;
        let wb = (32 - (r as u32).leading_zeros()) as usize;
        let f = r + wb;
        if 32 * wi < lanes * r {
            return Err(format!("{wi} words cannot carry a beat of {lanes} x {r} bits"));
        }
        let zn = (lanes * r).next_power_of_two();
        let lz = ZeroInsert::<1>::latency(zn, ZPIPE);
        let pl = p.min(lanes);
        // the most bits a parser step needs (a field beat or a full payload
        // beat), plus a beat: a step waiting for bits never blocks the
        // input, and one that takes them every cycle leaves room for the next
        // beat (with `win` = the need, field beats ran at 2 beats in 3 cycles)
        let win = (lanes * f).max(32 * wi) + 32 * wi - 1;
        if win + 32 * wi > 512 {
            return Err(format!("a bit buffer of {} bits (at most 512)", win + 32 * wi));
        }
        let lb = b.trailing_zeros() as usize;
        let pk = (1usize << (32 * wi / lb).ilog2()).min(b);
        // the permutation is caught as the end beat passes C, `lz`
        // advances after the parser sent it; the next block's permutation
        // is written no sooner than `1 + B / mw` advances after that: a
        // short block takes fewer metadata words a cycle
        let mut mw = 1 << wi.ilog2();
        while mw > 1 && 1 + b / mw <= lz {
            mw /= 2;
        }
        if 1 + b / mw <= lz {
            return Err(format!("block {b} too short for the shifter's {lz} stages at {mw} metadata words a cycle"));
        }
        Ok(Geometry {
            c,
            b,
            p,
            levels,
            r,
            wb,
            f,
            lanes,
            wi,
            zn,
            lz,
            pl,
            g: lanes / pl,
            mpc: p / pl,
            lb,
            win,
            mw,
            pk,
            // a payload beat taken by the parser in cycle t is out in t + latency
            latency: lz + 1 + DSTAGES,
        })
    }

    /// Spec §14.14.2's sustained-rate rule: cycles of a good block whose
    /// pack rows' width sums are all `s`, with or without a permutation.
    pub fn block_cycles(&self, s: usize, perm: bool) -> usize {
        let (b, c, l, p, w) = (self.b, self.c, self.lanes, self.p, 32 * self.wi);
        let row = self.field_cycles() + (c * p / l).max((p * s).div_ceil(w));
        3 + b / self.mw + if perm { b / self.pk } else { 0 } + (b / p) * row
    }

    /// Parser cycles from a block's last data beat to the next block's
    /// first (skip, end beat, header, metadata, permutation, row 0's fields).
    pub fn block_gap(&self) -> usize {
        3 + self.b / self.mw + self.b / self.pk + self.field_cycles()
    }

    /// A pack row's field beats: `C / lanes` steps, or the input's pace.
    fn field_cycles(&self) -> usize {
        (self.c / self.lanes).max((self.c * self.f).div_ceil(32 * self.wi))
    }
}

fn k<const N: usize>(v: u64) -> Constant<Bits<N>> {
    Constant::new(v.into())
}

#[derive(LogicBlock)]
pub struct PackKvDecoder {
    /// rising-edge clock
    pub clock: Signal<In, Clock>,
    /// synchronous reset, active high: buffer, parser and pipeline empty
    pub reset: Signal<In, Bit>,
    /// a word beat is offered
    pub in_valid: Signal<In, Bit>,
    /// from registers only: high while the input register is empty or drains this cycle
    pub in_ready: Signal<Out, Bit>,
    /// stream words (spec §14.4), word i at [32i+31:32i], the first word in the lowest lanes
    pub in_words: Vec<Signal<In, Bits<32>>>,
    /// words in the beat, 1..={wi}; lanes at and above the count are ignored
    pub in_count: Signal<In, Bits<8>>,
    /// the beat ends a transfer
    pub in_last: Signal<In, Bit>,
    /// an output beat is valid (a register)
    pub out_valid: Signal<Out, Bit>,
    /// the beat transfers when both are high
    pub out_ready: Signal<In, Bit>,
    /// data beat: FP16 values RNE((q + z) step), lane l at [16l+15:16l]
    pub out_x: Vec<Signal<Out, Bits<16>>>,
    /// data beat: stored row of lane 0 (lane l: row + l mod min(pack, lanes))
    pub out_row: Signal<Out, Bits<8>>,
    /// data beat: channel of lane 0 (lane l: channel + l / min(pack, lanes))
    pub out_ch: Signal<Out, Bits<16>>,
    /// the beat is a block's end beat (no data), carrying its status
    pub out_end: Signal<Out, Bit>,
    /// end beat: 0 ok, 1 bad_header, 2 bad_width, 3 bad_code, 4 bad_permutation, 5 bad_length, 6 truncated
    pub out_status: Signal<Out, Bits<3>>,
    /// end beat: the header's nonfinite bit (0 unless ok)
    pub out_nonfinite: Signal<Out, Bit>,
    /// end beat: a permutation was stored and the block is ok
    pub out_has_perm: Signal<Out, Bit>,
    /// end beat: arrival index of stored row i at [lb i + lb - 1 : lb i] (0 unless out_has_perm)
    pub out_perm: Signal<Out, Bits<1024>>,
    // ---- input register, gearbox and parser ----
    /// the input register holds a beat: its words packed from bit 0
    /// (`rw`), their bit count (`rbits`) and its last flag (`rl`); the
    /// input ports then reach only this register, not the bit buffer's
    /// shifts (timing, §14.14.2)
    rv: Reg<Bit>,
    rw: Reg<Bits<512>>,
    rbits: Reg<Bits<16>>,
    rl: Reg<Bit>,
    gbuf: Reg<Bits<512>>,
    nb: Reg<Bits<16>>,
    tend: Reg<Bit>,
    st: Reg<Bits<4>>,
    cnt: Reg<Bits<16>>,
    mb: Reg<Bits<8>>,
    row: Reg<Bits<8>>,
    ch: Reg<Bits<16>>,
    left: Reg<Bits<32>>,
    /// `left >= 2^16`, kept beside `left` so that the parser compares 16 bits
    lbig: Reg<Bit>,
    /// a payload beat's bits, `PL` times the widths at the head of `fld`,
    /// loaded whenever `fld` moves: the data step's compares then start
    /// at a register, not after the widths' sum (timing). 8
    /// bits: the fields are checked (`width <= r`) before the payload, so
    /// a beat takes `lanes r <= 128` bits at most, and the compares with
    /// `left` and `nb` narrow to 8 bits beside a zero test of the rest
    needr: Reg<Bits<8>>,
    toend: Reg<Bit>,
    err: Reg<Bits<4>>,
    wlen: Reg<Bit>,
    hbad: Reg<Bit>,
    hperm: Reg<Bit>,
    hnf: Reg<Bit>,
    meta: Vec<Reg<Bits<32>>>,
    fld: Vec<Reg<Bits<16>>>,
    perm: Vec<Reg<Bits<8>>>,
    seen: Vec<Reg<Bit>>,
    adv: Signal<Local, Bit>,
    acc: Signal<Local, Bit>,
    /// the bits the parser's step takes when it goes: set by the state
    /// alone, so the bit buffer's shift starts early (timing, §14.14.2)
    plan: Signal<Local, Bits<16>>,
    /// the step takes `plan` bits
    go: Signal<Local, Bit>,
    /// the step takes all `nb` bits
    tall: Signal<Local, Bit>,
    /// `nb` plus the registered beat
    nbr: Signal<Local, Bits<16>>,
    nbn: Signal<Local, Bits<16>>,
    inw: Signal<Local, Bits<512>>,
    inbits: Signal<Local, Bits<16>>,
    w32: Signal<Local, Bits<32>>,
    t512: Signal<Local, Bits<512>>,
    h: Signal<Local, Bits<32>>,
    len: Signal<Local, Bits<32>>,
    hb: Signal<Local, Bit>,
    /// the `pk` permutation indices at the bottom of the bit buffer
    idxs: Vec<Signal<Local, Bits<8>>>,
    dup: Signal<Local, Bit>,
    /// the `lanes` fields at the bottom of the bit buffer (a field beat)
    gf: Vec<Signal<Local, Bits<16>>>,
    /// the fields at `fld`'s head after a payload shift by `G` (`hp`) and
    /// after a field beat (`hf`)
    hp: Vec<Signal<Local, Bits<16>>>,
    hf: Vec<Signal<Local, Bits<16>>>,
    /// the input register drains into the bit buffer this cycle if it holds a beat
    drain: Signal<Local, Bit>,
    fv: Signal<Local, Bits<16>>,
    fw: Signal<Local, Bits<16>>,
    wbad: Signal<Local, Bit>,
    part: Signal<Local, Bit>,
    fhave: Signal<Local, Bit>,
    l16: Signal<Local, Bits<16>>,
    hleft: Signal<Local, Bits<32>>,
    wpay: Signal<Local, Bits<16>>,
    wfld: Signal<Local, Bits<16>>,
    need: Signal<Local, Bits<32>>,
    need16: Signal<Local, Bits<16>>,
    nleft: Signal<Local, Bits<32>>,
    emit: Signal<Local, Bit>,
    emit_end: Signal<Local, Bit>,
    lw: Vec<Signal<Local, Bits<8>>>,
    lmin: Vec<Signal<Local, Bits<8>>>,
    cw: Vec<Signal<Local, Bits<32>>>,
    // ---- zero-insert and its side band ----
    zi: ZeroInsert<1>,
    zv: Vec<Reg<Bit>>,
    ze: Vec<Reg<Bit>>,
    zmin: Vec<Reg<Bits<8>>>,
    zmeta: Vec<Reg<Bits<32>>>,
    zrow: Vec<Reg<Bits<8>>>,
    zch: Vec<Reg<Bits<16>>>,
    zst: Vec<Reg<Bits<4>>>,
    zweak: Vec<Reg<Bit>>,
    zhp: Vec<Reg<Bit>>,
    zhnf: Vec<Reg<Bit>>,
    // ---- C: codes ----
    slot: Signal<Local, Bits<16>>,
    code: Signal<Local, Bits<16>>,
    bca: Signal<Local, Bit>,
    bc_blk: Reg<Bit>,
    c_code: Vec<Reg<Bits<16>>>,
    c_meta: Vec<Reg<Bits<32>>>,
    cperm: Reg<Bits<1024>>,
    p8: Signal<Local, Bits<8>>,
    t1024: Signal<Local, Bits<1024>>,
    pk: Signal<Local, Bits<1024>>,
    m8: Signal<Local, Bits<8>>,
    o1: Signal<Local, Bits<1>>,
    c16: Signal<Local, Bits<16>>,
    // ---- D1..D7 ----
    mw: Signal<Local, Bits<32>>,
    zx: Signal<Local, Bits<32>>,
    d1_t: Vec<Reg<Bits<32>>>,
    d1_mw: Vec<Reg<Bits<32>>>,
    d2_mag: Vec<Reg<Bits<16>>>,
    d2_neg: Vec<Reg<Bit>>,
    d2_sig: Vec<Reg<Bits<16>>>,
    d2_e: Vec<Reg<Bits<8>>>,
    ex: Signal<Local, Bits<5>>,
    tt: Signal<Local, Bits<32>>,
    d3_p: Vec<Reg<Bits<32>>>,
    d3_neg: Vec<Reg<Bit>>,
    d3_e: Vec<Reg<Bits<8>>>,
    nib: Signal<Local, Bits<16>>,
    d4_a: Vec<Reg<Bits<32>>>,
    d4_b: Vec<Reg<Bits<32>>>,
    d4_neg: Vec<Reg<Bit>>,
    d4_e: Vec<Reg<Bits<8>>>,
    d5_p: Vec<Reg<Bits<32>>>,
    d5_neg: Vec<Reg<Bit>>,
    d5_e: Vec<Reg<Bits<8>>>,
    d6_sh: Vec<Reg<Bits<64>>>,
    d6_neg: Vec<Reg<Bit>>,
    d7_v: Vec<Reg<Bits<FX>>>,
    d7_neg: Vec<Reg<Bit>>,
    sh64: Signal<Local, Bits<64>>,
    rnd: Vec<UnitsToFp16>,
    // side band from C (index 0) to the output (index DSTAGES)
    sv: Vec<Reg<Bit>>,
    se: Vec<Reg<Bit>>,
    srow: Vec<Reg<Bits<8>>>,
    sch: Vec<Reg<Bits<16>>>,
    sst: Vec<Reg<Bits<4>>>,
    shp: Vec<Reg<Bit>>,
    shnf: Vec<Reg<Bit>>,
    // ---- constants ----
    k_win: Constant<Bits<16>>,
    k_bufmask: Constant<Bits<512>>,
    k_inmask: Constant<Bits<512>>,
    k_w16: Constant<Bits<16>>,
    k_zero16: Constant<Bits<16>>,
    k_one16: Constant<Bits<16>>,
    k_zero32: Constant<Bits<32>>,
    k_w32: Constant<Bits<32>>,
    k_lenmask: Constant<Bits<32>>,
    k_sh26: Constant<Bits<32>>,
    k_sh20: Constant<Bits<32>>,
    k_f4: Constant<Bits<32>>,
    k_r32: Constant<Bits<32>>,
    k_fix0: Constant<Bits<32>>,
    k_fix1: Constant<Bits<32>>,
    k_sh5: Constant<Bits<32>>,
    k_s: Vec<Constant<Bits<4>>>,
    k_e: Vec<Constant<Bits<4>>>,
    k_mw16: Constant<Bits<16>>,
    k_mw32: Constant<Bits<16>>,
    k_mwlast: Constant<Bits<16>>,
    k_bmask: Constant<Bits<8>>,
    k_sh16: Constant<Bits<32>>,
    k_fneed16: Constant<Bits<16>>,
    k_fblast: Constant<Bits<16>>,
    k_fend: Vec<Constant<Bits<16>>>,
    k_foff: Vec<Constant<Bits<16>>>,
    k_fmask: Constant<Bits<16>>,
    k_rmask: Constant<Bits<16>>,
    k_r16: Constant<Bits<16>>,
    k_lpl16: Constant<Bits<16>>,
    k_pblast: Constant<Bits<16>>,
    k_mlast: Constant<Bits<8>>,
    k_rowlast: Constant<Bits<8>>,
    k_g16: Constant<Bits<16>>,
    k_lp: Constant<Bits<8>>,
    k_lpl8: Constant<Bits<8>>,
    k_m: Vec<Constant<Bits<8>>>,
    k_one8: Constant<Bits<8>>,
    k_zero8: Constant<Bits<8>>,
    k_zj: Vec<Constant<Bits<16>>>,
    k_b8: Vec<Constant<Bits<8>>>,
    k_bsh: Vec<Constant<Bits<16>>>,
    k_pidx: Vec<Constant<Bits<8>>>,
    k_pioff: Vec<Constant<Bits<16>>>,
    /// `i < j` at `i pk + j`: the pairs of a step's indices compared
    k_before: Vec<Constant<Bit>>,
    k_pbits16: Constant<Bits<16>>,
    k_pk16: Constant<Bits<16>>,
    k_plast: Constant<Bits<16>>,
    k_poff: Vec<Constant<Bits<16>>>,
    k_j8: Vec<Constant<Bits<8>>>,
    k_woff: Vec<Constant<Bits<16>>>,
    k_n16: Constant<Bits<16>>,
    k_sext: Constant<Bits<32>>,
    k_one32: Constant<Bits<32>>,
    k_imp: Constant<Bits<16>>,
    k_zero5: Constant<Bits<5>>,
    k_one5: Constant<Bits<5>>,
    k_nib: Constant<Bits<16>>,
    k_nsh: Vec<Constant<Bits<16>>>,
    k_sh4: Constant<Bits<32>>,
    k_sh8: Constant<Bits<32>>,
    k_sh40: Constant<Bits<64>>,
    k_zero64: Constant<Bits<64>>,
    k_posmax: Constant<Bits<FX>>,
    k_rne: Constant<Bits<2>>,
    k_zero1024: Constant<Bits<1024>>,
    _lanes: usize,
    _wi: usize,
    _c: usize,
    _b: usize,
    _p: usize,
    _r: usize,
    _pl: usize,
    _g: usize,
    _mpc: usize,
    _zn: usize,
    _lz: usize,
    _lb: usize,
    _mw: usize,
    _pk: usize,
    /// of the `G` head fields after a payload shift, those from above (`fld[k + G]`)
    _pa: usize,
    /// of the `G` head fields after a field beat, those from above
    /// (`fld[k + lanes]`); the rest are the beat's first fields
    _fa: usize,
    /// `C - lanes`: head field `k >= _fa` is the beat's field `k - _cl`
    _cl: usize,
}

impl PackKvDecoder {
    pub fn new(g: &Geometry) -> Self {
        assert!(g.lanes * g.r <= 128 && g.b <= 128 && g.c % g.lanes == 0 && g.b % g.p == 0);
        let (l, r, f) = (g.lanes, g.r, g.f);
        let fixed = |perm: bool| (1 + g.b + if perm { g.b * g.lb / 32 } else { 0 }) as u64;
        let zi = ZeroInsert::<1>::new(g.zn, ZPIPE);
        PackKvDecoder {
            clock: Default::default(),
            reset: Default::default(),
            in_valid: Default::default(),
            in_ready: Default::default(),
            in_words: sigs(g.wi),
            in_count: Default::default(),
            in_last: Default::default(),
            out_valid: Default::default(),
            out_ready: Default::default(),
            out_x: sigs(l),
            out_row: Default::default(),
            out_ch: Default::default(),
            out_end: Default::default(),
            out_status: Default::default(),
            out_nonfinite: Default::default(),
            out_has_perm: Default::default(),
            out_perm: Default::default(),
            rv: Reg::default(),
            rw: Reg::default(),
            rbits: Reg::default(),
            rl: Reg::default(),
            gbuf: Reg::default(),
            nb: Reg::default(),
            tend: Reg::default(),
            st: Reg::default(),
            cnt: Reg::default(),
            mb: Reg::default(),
            row: Reg::default(),
            ch: Reg::default(),
            left: Reg::default(),
            lbig: Reg::default(),
            needr: Reg::default(),
            toend: Reg::default(),
            err: Reg::default(),
            wlen: Reg::default(),
            hbad: Reg::default(),
            hperm: Reg::default(),
            hnf: Reg::default(),
            meta: regs(g.b),
            fld: regs(g.c),
            perm: regs(g.b),
            seen: regs(g.b),
            adv: Default::default(),
            acc: Default::default(),
            plan: Default::default(),
            go: Default::default(),
            tall: Default::default(),
            nbr: Default::default(),
            nbn: Default::default(),
            inw: Default::default(),
            inbits: Default::default(),
            w32: Default::default(),
            t512: Default::default(),
            h: Default::default(),
            len: Default::default(),
            hb: Default::default(),
            idxs: sigs(g.pk),
            dup: Default::default(),
            gf: sigs(l),
            hp: sigs(g.g),
            hf: sigs(g.g),
            drain: Default::default(),
            fv: Default::default(),
            fw: Default::default(),
            wbad: Default::default(),
            part: Default::default(),
            fhave: Default::default(),
            l16: Default::default(),
            hleft: Default::default(),
            wpay: Default::default(),
            wfld: Default::default(),
            need: Default::default(),
            need16: Default::default(),
            nleft: Default::default(),
            emit: Default::default(),
            emit_end: Default::default(),
            lw: sigs(l),
            lmin: sigs(l),
            cw: sigs(g.pl),
            zi,
            zv: regs(g.lz),
            ze: regs(g.lz),
            zmin: regs(g.lz * l),
            zmeta: regs(g.lz * g.pl),
            zrow: regs(g.lz),
            zch: regs(g.lz),
            zst: regs(g.lz),
            zweak: regs(g.lz),
            zhp: regs(g.lz),
            zhnf: regs(g.lz),
            slot: Default::default(),
            code: Default::default(),
            bca: Default::default(),
            bc_blk: Reg::default(),
            c_code: regs(l),
            c_meta: regs(g.pl),
            cperm: Reg::default(),
            p8: Default::default(),
            t1024: Default::default(),
            pk: Default::default(),
            m8: Default::default(),
            o1: Default::default(),
            c16: Default::default(),
            mw: Default::default(),
            zx: Default::default(),
            d1_t: regs(l),
            d1_mw: regs(l),
            d2_mag: regs(l),
            d2_neg: regs(l),
            d2_sig: regs(l),
            d2_e: regs(l),
            ex: Default::default(),
            tt: Default::default(),
            d3_p: regs(4 * l),
            d3_neg: regs(l),
            d3_e: regs(l),
            nib: Default::default(),
            d4_a: regs(l),
            d4_b: regs(l),
            d4_neg: regs(l),
            d4_e: regs(l),
            d5_p: regs(l),
            d5_neg: regs(l),
            d5_e: regs(l),
            d6_sh: regs(l),
            d6_neg: regs(l),
            d7_v: regs(l),
            d7_neg: regs(l),
            sh64: Default::default(),
            rnd: (0..l).map(|_| UnitsToFp16::magnitude()).collect(),
            sv: regs(DSTAGES + 1),
            se: regs(DSTAGES + 1),
            srow: regs(DSTAGES + 1),
            sch: regs(DSTAGES + 1),
            sst: regs(DSTAGES + 1),
            shp: regs(DSTAGES + 1),
            shnf: regs(DSTAGES + 1),
            k_win: k(g.win as u64),
            k_bufmask: Constant::new((0..g.win + 32 * g.wi).fold(Bits::<512>::default(), |m, i| m.replace_bit(i, true))),
            k_inmask: Constant::new((0..32 * g.wi).fold(Bits::<512>::default(), |m, i| m.replace_bit(i, true))),
            k_w16: k(32),
            k_zero16: k(0),
            k_one16: k(1),
            k_zero32: k(0),
            k_w32: k(32),
            k_lenmask: k(0xF_FFFF),
            k_sh26: k(26),
            k_sh20: k(20),
            k_f4: k(0xF),
            k_r32: k(r as u64),
            k_fix0: k(fixed(false)),
            k_fix1: k(fixed(true)),
            k_sh5: k(5),
            k_s: consts(0..7),
            k_e: consts(0..7),
            k_mw16: k(g.mw as u64),
            k_mw32: k(32 * g.mw as u64),
            k_mwlast: k((g.b - g.mw) as u64),
            k_bmask: k((g.b - 1) as u64),
            k_sh16: k(16),
            k_fneed16: k((l * f) as u64),
            k_fblast: k((g.c / l - 1) as u64),
            k_fend: consts((0..l).map(|j| ((j + 1) * f) as u64)),
            k_foff: consts((0..l).map(|j| (j * f) as u64)),
            k_fmask: k((1 << f) - 1),
            k_rmask: k((1 << r) - 1),
            k_r16: k(r as u64),
            k_lpl16: k(g.pl.trailing_zeros() as u64),
            k_pblast: k((g.c / g.g * g.mpc - 1) as u64),
            k_mlast: k((g.mpc - 1) as u64),
            k_rowlast: k((g.b / g.p - 1) as u64),
            k_g16: k(g.g as u64),
            k_lp: k(g.p.trailing_zeros() as u64),
            k_lpl8: k(g.pl.trailing_zeros() as u64),
            k_m: consts(0..g.mpc as u64),
            k_one8: k(1),
            k_zero8: k(0),
            k_zj: consts(0..g.zn as u64),
            k_b8: consts(0..r as u64),
            k_bsh: consts(0..r as u64),
            k_pidx: consts(0..g.b as u64),
            k_pioff: consts((0..g.pk).map(|j| (j * g.lb) as u64)),
            k_before: (0..g.pk * g.pk).map(|x| Constant::new(x / g.pk < x % g.pk)).collect(),
            k_pbits16: k((g.pk * g.lb) as u64),
            k_pk16: k(g.pk as u64),
            k_plast: k((g.b - g.pk) as u64),
            k_poff: consts((0..g.b).map(|j| (j * g.lb) as u64)),
            k_j8: consts(0..g.wi as u64),
            k_woff: consts((0..g.wi).map(|j| 32 * j as u64)),
            k_n16: k(g.levels as u64),
            k_sext: k(0xFFFF_0000),
            k_one32: k(1),
            k_imp: k(1024),
            k_zero5: k(0),
            k_one5: k(1),
            k_nib: k(15),
            k_nsh: consts([0, 4, 8, 12]),
            k_sh4: k(4),
            k_sh8: k(8),
            k_sh40: k(40),
            k_zero64: k(0),
            k_posmax: k(1 << 40),
            k_rne: k(RNE),
            k_zero1024: k(0),
            _lanes: l,
            _wi: g.wi,
            _c: g.c,
            _b: g.b,
            _p: g.p,
            _r: r,
            _pl: g.pl,
            _g: g.g,
            _mpc: g.mpc,
            _zn: g.zn,
            _lz: g.lz,
            _lb: g.lb,
            _mw: g.mw,
            _pk: g.pk,
            _pa: g.g.min(g.c - g.g),
            _fa: g.g.min(g.c - l),
            _cl: g.c - l,
        }
    }
}

reg_logic!(PackKvDecoder;
    regs [rv, rw, rbits, rl, gbuf, nb, tend, st, cnt, mb, row, ch, left, lbig, needr, toend, err, wlen, hbad, hperm, hnf, bc_blk, cperm];
    masks [gbuf & k_bufmask, rw & k_inmask];
    #[hdl_gen]
    fn update(&mut self) {
        // ---------------- register wiring ----------------
        self.adv.next = !(self.sv[10].q.val() | self.se[10].q.val()) | self.out_ready.val();
        for i in 0..self._b {
            self.meta[i].clock.next = self.clock.val();
            self.meta[i].reset.next = self.reset.val();
            self.meta[i].en.next = false;
            self.meta[i].d.next = self.meta[i].q.val();
            self.perm[i].clock.next = self.clock.val();
            self.perm[i].reset.next = self.reset.val();
            self.perm[i].en.next = false;
            self.perm[i].d.next = self.perm[i].q.val();
            self.seen[i].clock.next = self.clock.val();
            self.seen[i].reset.next = self.reset.val();
            self.seen[i].en.next = false;
            self.seen[i].d.next = self.seen[i].q.val();
        }
        for i in 0..self._c {
            self.fld[i].clock.next = self.clock.val();
            self.fld[i].reset.next = self.reset.val();
            self.fld[i].en.next = false;
            self.fld[i].d.next = self.fld[i].q.val();
        }
        for s in 0..self._lz {
            self.zv[s].clock.next = self.clock.val();
            self.zv[s].reset.next = self.reset.val();
            self.zv[s].en.next = self.adv.val();
            self.ze[s].clock.next = self.clock.val();
            self.ze[s].reset.next = self.reset.val();
            self.ze[s].en.next = self.adv.val();
            self.zrow[s].clock.next = self.clock.val();
            self.zrow[s].reset.next = self.reset.val();
            self.zrow[s].en.next = self.adv.val();
            self.zch[s].clock.next = self.clock.val();
            self.zch[s].reset.next = self.reset.val();
            self.zch[s].en.next = self.adv.val();
            self.zst[s].clock.next = self.clock.val();
            self.zst[s].reset.next = self.reset.val();
            self.zst[s].en.next = self.adv.val();
            self.zweak[s].clock.next = self.clock.val();
            self.zweak[s].reset.next = self.reset.val();
            self.zweak[s].en.next = self.adv.val();
            self.zhp[s].clock.next = self.clock.val();
            self.zhp[s].reset.next = self.reset.val();
            self.zhp[s].en.next = self.adv.val();
            self.zhnf[s].clock.next = self.clock.val();
            self.zhnf[s].reset.next = self.reset.val();
            self.zhnf[s].en.next = self.adv.val();
        }
        for i in 0..(self._lz * self._lanes) {
            self.zmin[i].clock.next = self.clock.val();
            self.zmin[i].reset.next = self.reset.val();
            self.zmin[i].en.next = self.adv.val();
        }
        for i in 0..(self._lz * self._pl) {
            self.zmeta[i].clock.next = self.clock.val();
            self.zmeta[i].reset.next = self.reset.val();
            self.zmeta[i].en.next = self.adv.val();
        }
        for i in 0..self._pl {
            self.c_meta[i].clock.next = self.clock.val();
            self.c_meta[i].reset.next = self.reset.val();
            self.c_meta[i].en.next = self.adv.val();
        }
        for l in 0..self._lanes {
            self.c_code[l].clock.next = self.clock.val();
            self.c_code[l].reset.next = self.reset.val();
            self.c_code[l].en.next = self.adv.val();
            self.d1_t[l].clock.next = self.clock.val();
            self.d1_t[l].reset.next = self.reset.val();
            self.d1_t[l].en.next = self.adv.val();
            self.d1_mw[l].clock.next = self.clock.val();
            self.d1_mw[l].reset.next = self.reset.val();
            self.d1_mw[l].en.next = self.adv.val();
            self.d2_mag[l].clock.next = self.clock.val();
            self.d2_mag[l].reset.next = self.reset.val();
            self.d2_mag[l].en.next = self.adv.val();
            self.d2_neg[l].clock.next = self.clock.val();
            self.d2_neg[l].reset.next = self.reset.val();
            self.d2_neg[l].en.next = self.adv.val();
            self.d2_sig[l].clock.next = self.clock.val();
            self.d2_sig[l].reset.next = self.reset.val();
            self.d2_sig[l].en.next = self.adv.val();
            self.d2_e[l].clock.next = self.clock.val();
            self.d2_e[l].reset.next = self.reset.val();
            self.d2_e[l].en.next = self.adv.val();
            self.d3_neg[l].clock.next = self.clock.val();
            self.d3_neg[l].reset.next = self.reset.val();
            self.d3_neg[l].en.next = self.adv.val();
            self.d3_e[l].clock.next = self.clock.val();
            self.d3_e[l].reset.next = self.reset.val();
            self.d3_e[l].en.next = self.adv.val();
            self.d4_a[l].clock.next = self.clock.val();
            self.d4_a[l].reset.next = self.reset.val();
            self.d4_a[l].en.next = self.adv.val();
            self.d4_b[l].clock.next = self.clock.val();
            self.d4_b[l].reset.next = self.reset.val();
            self.d4_b[l].en.next = self.adv.val();
            self.d4_neg[l].clock.next = self.clock.val();
            self.d4_neg[l].reset.next = self.reset.val();
            self.d4_neg[l].en.next = self.adv.val();
            self.d4_e[l].clock.next = self.clock.val();
            self.d4_e[l].reset.next = self.reset.val();
            self.d4_e[l].en.next = self.adv.val();
            self.d5_p[l].clock.next = self.clock.val();
            self.d5_p[l].reset.next = self.reset.val();
            self.d5_p[l].en.next = self.adv.val();
            self.d5_neg[l].clock.next = self.clock.val();
            self.d5_neg[l].reset.next = self.reset.val();
            self.d5_neg[l].en.next = self.adv.val();
            self.d5_e[l].clock.next = self.clock.val();
            self.d5_e[l].reset.next = self.reset.val();
            self.d5_e[l].en.next = self.adv.val();
            self.d6_sh[l].clock.next = self.clock.val();
            self.d6_sh[l].reset.next = self.reset.val();
            self.d6_sh[l].en.next = self.adv.val();
            self.d6_neg[l].clock.next = self.clock.val();
            self.d6_neg[l].reset.next = self.reset.val();
            self.d6_neg[l].en.next = self.adv.val();
            self.d7_v[l].clock.next = self.clock.val();
            self.d7_v[l].reset.next = self.reset.val();
            self.d7_v[l].en.next = self.adv.val();
            self.d7_neg[l].clock.next = self.clock.val();
            self.d7_neg[l].reset.next = self.reset.val();
            self.d7_neg[l].en.next = self.adv.val();
            self.rnd[l].clock.next = self.clock.val();
            self.rnd[l].reset.next = self.reset.val();
            self.rnd[l].en.next = self.adv.val();
            self.rnd[l].mode.next = self.k_rne.val();
        }
        for i in 0..(4 * self._lanes) {
            self.d3_p[i].clock.next = self.clock.val();
            self.d3_p[i].reset.next = self.reset.val();
            self.d3_p[i].en.next = self.adv.val();
        }
        for s in 0..11 {
            self.sv[s].clock.next = self.clock.val();
            self.sv[s].reset.next = self.reset.val();
            self.sv[s].en.next = self.adv.val();
            self.se[s].clock.next = self.clock.val();
            self.se[s].reset.next = self.reset.val();
            self.se[s].en.next = self.adv.val();
            self.srow[s].clock.next = self.clock.val();
            self.srow[s].reset.next = self.reset.val();
            self.srow[s].en.next = self.adv.val();
            self.sch[s].clock.next = self.clock.val();
            self.sch[s].reset.next = self.reset.val();
            self.sch[s].en.next = self.adv.val();
            self.sst[s].clock.next = self.clock.val();
            self.sst[s].reset.next = self.reset.val();
            self.sst[s].en.next = self.adv.val();
            self.shp[s].clock.next = self.clock.val();
            self.shp[s].reset.next = self.reset.val();
            self.shp[s].en.next = self.adv.val();
            self.shnf[s].clock.next = self.clock.val();
            self.shnf[s].reset.next = self.reset.val();
            self.shnf[s].en.next = self.adv.val();
        }

        // ---------------- gearbox input ----------------
        // the register drains into the bit buffer while it holds at most
        // `win` bits and no transfer's end; a beat enters the register when
        // it is empty or drains in the same cycle
        self.drain.next = !self.tend.q.val() & (self.nb.q.val() <= self.k_win.val());
        self.acc.next = self.rv.q.val() & self.drain.val();
        self.in_ready.next = !self.rv.q.val() | self.drain.val();
        self.inw.next = bit_cast::<512, 1>(false.into());
        self.inbits.next = self.k_zero16.val();
        self.w32.next = self.k_zero32.val();
        self.t512.next = self.inw.val();
        for j in 0..self._wi {
            if self.in_count.val() > self.k_j8[j].val() {
                self.w32.next = self.in_words[j].val();
                self.t512.next = bit_cast::<512, 32>(self.w32.val());
                self.inw.next = self.inw.val() | (self.t512.val() << self.k_woff[j].val());
                self.inbits.next = self.inbits.val() + self.k_w16.val();
            }
        }
        self.rv.en.next = true;
        self.rv.d.next = (self.in_valid.val() & self.in_ready.val()) | (self.rv.q.val() & !self.acc.val());
        if self.in_valid.val() & self.in_ready.val() {
            self.rw.en.next = true;
            self.rw.d.next = self.inw.val();
            self.rbits.en.next = true;
            self.rbits.d.next = self.inbits.val();
            self.rl.en.next = true;
            self.rl.d.next = self.in_last.val();
        }

        // ---------------- parser ----------------
        // A step takes `plan` bits (`go`), all `nb` bits (`tall`) or none.
        // `plan` follows from the state alone; the compares decide only
        // `go` and `tall`, which pick among sums already formed (timing at
        // 32 lanes: the choice used to come before the shift and the adds).
        self.go.next = false;
        self.tall.next = false;
        self.plan.next = self.k_zero16.val();
        if self.st.q.val() == self.k_s[0].val() {
            self.plan.next = self.k_w16.val();
        } else if self.st.q.val() == self.k_s[1].val() {
            self.plan.next = self.k_mw32.val();
        } else if self.st.q.val() == self.k_s[2].val() {
            self.plan.next = self.k_pbits16.val();
        } else if self.st.q.val() == self.k_s[3].val() {
            self.plan.next = self.k_fneed16.val();
        } else if self.st.q.val() == self.k_s[4].val() {
            self.plan.next = bit_cast::<16, 8>(self.needr.q.val());
        } else if self.st.q.val() == self.k_s[5].val() {
            self.plan.next = bit_cast::<16, 32>(self.left.q.val());
        }
        self.emit.next = false;
        self.emit_end.next = false;
        self.h.next = bit_cast::<32, 512>(self.gbuf.q.val());
        self.len.next = self.h.val() & self.k_lenmask.val();
        self.hb.next = ((self.h.val() >> self.k_sh26.val()) != self.k_zero32.val())
            | (((self.h.val() >> self.k_sh20.val()) & self.k_f4.val()) != self.k_r32.val());
        if self.h.val().get_bit(24) {
            if self.len.val() < self.k_fix1.val() {
                self.hb.next = true;
            }
        } else if self.len.val() < self.k_fix0.val() {
            self.hb.next = true;
        }
        // a permutation step: `pk` indices, each checked against the rows
        // already seen and against the step's earlier indices
        self.dup.next = false;
        for j in 0..self._pk {
            self.t512.next = self.gbuf.q.val() >> self.k_pioff[j].val();
            self.idxs[j].next = bit_cast::<8, 512>(self.t512.val()) & self.k_bmask.val();
            for i in 0..self._b {
                if self.seen[i].q.val() & (self.idxs[j].val() == self.k_pidx[i].val()) {
                    self.dup.next = true;
                }
            }
        }
        for pk in self._pk..(self._pk + 1) {
            for j in 0..self._pk {
                for i in 0..self._pk {
                    if self.k_before[i * pk + j].val() & (self.idxs[i].val() == self.idxs[j].val()) {
                        self.dup.next = true;
                    }
                }
            }
        }
        // a field beat: `lanes` fields; only those inside the block's length
        // count for a bad width when the beat runs past it
        // `left` in 16 bits: every amount the parser compares it with is
        // below 2^16, so `lbig` stands for the high half (timing, §14.14.2)
        self.l16.next = bit_cast::<16, 32>(self.left.q.val());
        self.part.next = !self.lbig.q.val() & (self.l16.val() < self.k_fneed16.val());
        // `nb >= fneed`, both candidates compared beside `part`
        self.fhave.next = self.nb.q.val() >= self.k_fneed16.val();
        if self.part.val() {
            self.fhave.next = self.nb.q.val() >= self.l16.val();
        }
        self.wbad.next = false;
        for j in 0..self._lanes {
            self.t512.next = self.gbuf.q.val() >> self.k_foff[j].val();
            self.gf[j].next = bit_cast::<16, 512>(self.t512.val()) & self.k_fmask.val();
            self.fw.next = self.gf[j].val() >> self.k_r16.val();
            if (self.fw.val() > self.k_r16.val()) & (!self.part.val() | (self.l16.val() >= self.k_fend[j].val())) {
                self.wbad.next = true;
            }
        }
        // a payload beat: lane l reads the fields of channel l / min(P, lanes)
        // and the metadata word of row l mod min(P, lanes)
        for pl in self._pl..(self._pl + 1) {
            for gg in 0..self._g {
                for j in 0..self._pl {
                    self.fv.next = self.fld[gg].q.val();
                    self.lw[gg * pl + j].next = bit_cast::<8, 16>(self.fv.val() >> self.k_r16.val());
                    self.lmin[gg * pl + j].next = bit_cast::<8, 16>(self.fv.val() & self.k_rmask.val());
                }
            }
            for j in 0..self._pl {
                self.cw[j].next = self.meta[j].q.val();
                for m in 0..self._mpc {
                    if self.mb.q.val() == self.k_m[m].val() {
                        self.cw[j].next = self.meta[m * pl + j].q.val();
                    }
                }
            }
        }
        // `needr` widened for `nb`, `l16` and the 32-bit `left`
        self.need16.next = bit_cast::<16, 8>(self.needr.q.val());
        self.need.next = bit_cast::<32, 8>(self.needr.q.val());
        self.hleft.next = (self.len.val() << self.k_sh5.val()) - self.k_w32.val();

        if self.st.q.val() == self.k_s[0].val() {
            // header
            if self.tend.q.val() & (self.nb.q.val() < self.k_w16.val()) {
                self.tall.next = true;
                self.tend.en.next = true;
                self.tend.d.next = false;
            } else if self.adv.val() & (self.nb.q.val() >= self.k_w16.val()) {
                self.go.next = true;
                self.left.en.next = true;
                self.left.d.next = self.hleft.val();
                self.lbig.en.next = true;
                self.lbig.d.next = (self.hleft.val() >> self.k_sh16.val()) != self.k_zero32.val();
                self.toend.en.next = true;
                self.toend.d.next = self.len.val() == self.k_zero32.val();
                self.hperm.en.next = true;
                self.hperm.d.next = self.h.val().get_bit(24);
                self.hnf.en.next = true;
                self.hnf.d.next = self.h.val().get_bit(25);
                self.hbad.en.next = true;
                self.hbad.d.next = self.hb.val();
                self.wlen.en.next = true;
                self.wlen.d.next = false;
                self.err.en.next = true;
                self.err.d.next = self.k_e[0].val();
                self.st.en.next = true;
                self.st.d.next = self.k_s[1].val();
                if self.hb.val() {
                    self.err.d.next = self.k_e[1].val();
                    self.st.d.next = self.k_s[5].val();
                }
                self.cnt.en.next = true;
                self.cnt.d.next = self.k_zero16.val();
                self.row.en.next = true;
                self.row.d.next = self.k_zero8.val();
                self.mb.en.next = true;
                self.mb.d.next = self.k_zero8.val();
                self.ch.en.next = true;
                self.ch.d.next = self.k_zero16.val();
                for i in 0..self._b {
                    self.seen[i].en.next = true;
                    self.seen[i].d.next = false;
                }
            }
        } else if self.st.q.val() == self.k_s[1].val() {
            // metadata words, `mw` a cycle (the input brings `wi`), shifted
            // in at the top
            if self.adv.val() {
                if self.nb.q.val() >= self.k_mw32.val() {
                    self.go.next = true;
                    for bb in self._b..(self._b + 1) {
                        for mw in self._mw..(self._mw + 1) {
                            for i in 0..self._b {
                                self.meta[i].en.next = true;
                            }
                            for i in self._mw..self._b {
                                self.meta[i - mw].d.next = self.meta[i].q.val();
                            }
                            for j in 0..self._mw {
                                self.t512.next = self.gbuf.q.val() >> self.k_woff[j].val();
                                self.meta[bb - mw + j].d.next = bit_cast::<32, 512>(self.t512.val());
                            }
                        }
                    }
                    self.cnt.en.next = true;
                    self.cnt.d.next = self.cnt.q.val() + self.k_mw16.val();
                    if self.cnt.q.val() == self.k_mwlast.val() {
                        self.cnt.d.next = self.k_zero16.val();
                        self.st.en.next = true;
                        self.st.d.next = self.k_s[3].val();
                        if self.hperm.q.val() {
                            self.st.d.next = self.k_s[2].val();
                        }
                    }
                } else if self.tend.q.val() {
                    self.st.en.next = true;
                    self.st.d.next = self.k_s[5].val();
                }
            }
        } else if self.st.q.val() == self.k_s[2].val() {
            // permutation, `pk` indices a cycle; the step's bits are taken
            // even when one repeats (the block is then skipped to its
            // length, which holds the whole permutation), so `take` does
            // not wait for the checks
            if self.adv.val() {
                if self.nb.q.val() >= self.k_pbits16.val() {
                    self.go.next = true;
                    if self.dup.val() {
                        self.err.en.next = true;
                        self.err.d.next = self.k_e[4].val();
                        self.st.en.next = true;
                        self.st.d.next = self.k_s[5].val();
                    } else {
                        for i in 0..self._b {
                            for j in 0..self._pk {
                                if self.idxs[j].val() == self.k_pidx[i].val() {
                                    self.seen[i].en.next = true;
                                    self.seen[i].d.next = true;
                                }
                            }
                        }
                        for bb in self._b..(self._b + 1) {
                            for pk in self._pk..(self._pk + 1) {
                                for i in 0..self._b {
                                    self.perm[i].en.next = true;
                                }
                                for i in self._pk..self._b {
                                    self.perm[i - pk].d.next = self.perm[i].q.val();
                                }
                                for j in 0..self._pk {
                                    self.perm[bb - pk + j].d.next = self.idxs[j].val();
                                }
                            }
                        }
                        self.cnt.en.next = true;
                        self.cnt.d.next = self.cnt.q.val() + self.k_pk16.val();
                        if self.cnt.q.val() == self.k_plast.val() {
                            self.cnt.d.next = self.k_zero16.val();
                            self.st.en.next = true;
                            self.st.d.next = self.k_s[3].val();
                        }
                    }
                } else if self.tend.q.val() {
                    self.st.en.next = true;
                    self.st.d.next = self.k_s[5].val();
                }
            }
        } else if self.st.q.val() == self.k_s[3].val() {
            // pack fields, `lanes` a cycle, shifted in at the top
            if self.adv.val() {
                if self.fhave.val() {
                    if self.part.val() | self.wbad.val() {
                        self.err.en.next = true;
                        self.err.d.next = self.k_e[5].val();
                        if self.wbad.val() {
                            self.err.d.next = self.k_e[2].val();
                        }
                        self.st.en.next = true;
                        self.st.d.next = self.k_s[5].val();
                    } else {
                        self.go.next = true;
                        for cc in self._c..(self._c + 1) {
                            for ln in self._lanes..(self._lanes + 1) {
                                for i in 0..self._c {
                                    self.fld[i].en.next = true;
                                }
                                for i in self._lanes..self._c {
                                    self.fld[i - ln].d.next = self.fld[i].q.val();
                                }
                                for j in 0..self._lanes {
                                    self.fld[cc - ln + j].d.next = self.gf[j].val();
                                }
                            }
                        }
                        self.cnt.en.next = true;
                        self.cnt.d.next = self.cnt.q.val() + self.k_one16.val();
                        if self.cnt.q.val() == self.k_fblast.val() {
                            self.cnt.d.next = self.k_zero16.val();
                            self.st.en.next = true;
                            self.st.d.next = self.k_s[4].val();
                            self.mb.en.next = true;
                            self.mb.d.next = self.k_zero8.val();
                            self.ch.en.next = true;
                            self.ch.d.next = self.k_zero16.val();
                        }
                    }
                } else if self.tend.q.val() {
                    self.st.en.next = true;
                    self.st.d.next = self.k_s[5].val();
                }
            }
        } else if self.st.q.val() == self.k_s[4].val() {
            // payload beats
            if self.adv.val() {
                if !self.lbig.q.val() & (self.need16.val() > self.l16.val()) {
                    self.err.en.next = true;
                    self.err.d.next = self.k_e[5].val();
                    self.st.en.next = true;
                    self.st.d.next = self.k_s[5].val();
                } else if self.nb.q.val() >= self.need16.val() {
                    self.go.next = true;
                    self.emit.next = true;
                    self.mb.en.next = true;
                    self.mb.d.next = self.mb.q.val() + self.k_one8.val();
                    if self.mb.q.val() == self.k_mlast.val() {
                        // the beat's channels are done: pop their fields
                        self.mb.d.next = self.k_zero8.val();
                        self.ch.en.next = true;
                        self.ch.d.next = self.ch.q.val() + self.k_g16.val();
                        for _cc in self._c..(self._c + 1) {
                            for gg in self._g..(self._g + 1) {
                                for i in 0..self._c {
                                    self.fld[i].en.next = true;
                                }
                                for i in self._g..self._c {
                                    self.fld[i - gg].d.next = self.fld[i].q.val();
                                }
                            }
                        }
                    }
                    self.cnt.en.next = true;
                    self.cnt.d.next = self.cnt.q.val() + self.k_one16.val();
                    if self.cnt.q.val() == self.k_pblast.val() {
                        // the pack row is done: its metadata words leave
                        self.cnt.d.next = self.k_zero16.val();
                        for _bb in self._b..(self._b + 1) {
                            for pp in self._p..(self._p + 1) {
                                for i in 0..self._b {
                                    self.meta[i].en.next = true;
                                }
                                for i in self._p..self._b {
                                    self.meta[i - pp].d.next = self.meta[i].q.val();
                                }
                            }
                        }
                        self.row.en.next = true;
                        self.row.d.next = self.row.q.val() + self.k_one8.val();
                        self.st.en.next = true;
                        self.st.d.next = self.k_s[3].val();
                        if self.row.q.val() == self.k_rowlast.val() {
                            // the last row: what is left must be the padding
                            self.st.d.next = self.k_s[5].val();
                            if (self.left.q.val() - self.need.val()) >= self.k_w32.val() {
                                self.err.en.next = true;
                                self.err.d.next = self.k_e[5].val();
                                self.wlen.en.next = true;
                                self.wlen.d.next = true;
                            }
                        }
                    }
                } else if self.tend.q.val() {
                    self.st.en.next = true;
                    self.st.d.next = self.k_s[5].val();
                }
            }
        } else if self.st.q.val() == self.k_s[5].val() {
            // skip to the block's length, or to the transfer's end
            if self.adv.val() {
                if self.toend.q.val() {
                    self.tall.next = true;
                    if self.tend.q.val() {
                        self.st.en.next = true;
                        self.st.d.next = self.k_s[6].val();
                    }
                } else if !self.lbig.q.val() & (self.l16.val() <= self.nb.q.val()) {
                    // `plan` is `left`, which fits 16 bits here
                    self.go.next = true;
                    self.st.en.next = true;
                    self.st.d.next = self.k_s[6].val();
                } else {
                    self.tall.next = true;
                    if self.tend.q.val() {
                        self.st.en.next = true;
                        self.st.d.next = self.k_s[6].val();
                        self.wlen.en.next = true;
                        self.wlen.d.next = false;
                        self.err.en.next = true;
                        self.err.d.next = self.k_e[6].val();
                        if self.hbad.q.val() {
                            self.err.d.next = self.k_e[1].val();
                        }
                    }
                }
            }
        } else if self.st.q.val() == self.k_s[6].val() {
            if self.adv.val() {
                self.emit_end.next = true;
                self.st.en.next = true;
                self.st.d.next = self.k_s[0].val();
            }
        }
        // `nb` and `left` after the step. Every amount is formed from
        // registers beside the parser's choice, and the beat's acceptance
        // (a compare of `nb`) picks last, after the adds rather than
        // before them.
        self.nbr.next = self.nb.q.val() + self.rbits.q.val();
        self.nbn.next = self.nb.q.val();
        if self.acc.val() {
            self.nbn.next = self.nbr.val();
        }
        if self.go.val() {
            self.nbn.next = self.nb.q.val() - self.plan.val();
            if self.acc.val() {
                self.nbn.next = self.nbr.val() - self.plan.val();
            }
        }
        if self.tall.val() {
            self.nbn.next = self.k_zero16.val();
            if self.acc.val() {
                self.nbn.next = self.rbits.q.val();
            }
        }
        self.nleft.next = self.left.q.val();
        if self.go.val() {
            self.nleft.next = self.left.q.val() - bit_cast::<32, 16>(self.plan.val());
        }
        if self.tall.val() {
            self.nleft.next = self.left.q.val() - bit_cast::<32, 16>(self.nb.q.val());
        }
        if !(self.st.q.val() == self.k_s[0].val()) {
            self.left.en.next = true;
            self.left.d.next = self.nleft.val();
            self.lbig.en.next = true;
            self.lbig.d.next = (self.nleft.val() >> self.k_sh16.val()) != self.k_zero32.val();
        }

        // the next payload beat's bits: `PL` times the widths of the `G`
        // fields at `fld`'s head once it moves. Both ways it can move are
        // summed from registers (a payload shift by `G`; a field beat's
        // shift by `lanes`, its first fields entering at the top), and
        // `fld`'s enable picks one at the end: the widths' adders run beside
        // the parser's choice rather than after it (timing at 32 lanes)
        for gg in self._g..(self._g + 1) {
            for k in 0..self._pa {
                self.hp[k].next = self.fld[k + gg].q.val();
            }
        }
        for k in self._pa..self._g {
            self.hp[k].next = self.fld[k].q.val();
        }
        for ln in self._lanes..(self._lanes + 1) {
            for k in 0..self._fa {
                self.hf[k].next = self.fld[k + ln].q.val();
            }
        }
        for cl in self._cl..(self._cl + 1) {
            for k in self._fa..self._g {
                self.hf[k].next = self.gf[k - cl].val();
            }
        }
        self.wpay.next = self.k_zero16.val();
        self.wfld.next = self.k_zero16.val();
        for k in 0..self._g {
            self.wpay.next = self.wpay.val() + (self.hp[k].val() >> self.k_r16.val());
            self.wfld.next = self.wfld.val() + (self.hf[k].val() >> self.k_r16.val());
        }
        self.needr.en.next = self.fld[0].en.val();
        self.needr.d.next = bit_cast::<8, 16>(self.wpay.val() << self.k_lpl16.val());
        if self.st.q.val() == self.k_s[3].val() {
            self.needr.d.next = bit_cast::<8, 16>(self.wfld.val() << self.k_lpl16.val());
        }

        // ---------------- gearbox update ----------------
        // words go in above the valid bits before the parser's take comes
        // out at the bottom, so the append does not wait for the choice.
        // `plan` is shifted out whatever the choice, and `go` picks after
        // the shift. Taking all `nb` bits leaves the beat alone: bits at
        // and above `nb` are zero (reset, appends above `nb`, right shifts)
        self.t512.next = self.gbuf.q.val();
        self.nb.en.next = true;
        self.nb.d.next = self.nbn.val();
        if self.acc.val() {
            self.t512.next = self.gbuf.q.val() | (self.rw.q.val() << self.nb.q.val());
            if self.rl.q.val() {
                self.tend.en.next = true;
                self.tend.d.next = true;
            }
        }
        self.gbuf.en.next = true;
        self.gbuf.d.next = self.t512.val();
        if self.go.val() {
            self.gbuf.d.next = self.t512.val() >> self.plan.val();
        }
        if self.tall.val() {
            self.gbuf.d.next = bit_cast::<512, 1>(false.into());
            if self.acc.val() {
                self.gbuf.d.next = self.rw.q.val();
            }
        }

        // ---------------- zero-insert, side band ----------------
        self.zi.clock.next = self.clock.val();
        self.zi.reset.next = self.reset.val();
        self.zi.en.next = self.adv.val();
        self.zi.in_valid.next = self.emit.val();
        for j in 0..self._zn {
            self.t512.next = self.gbuf.q.val() >> self.k_zj[j].val();
            self.zi.data[j].next = bit_cast::<1, 512>(self.t512.val());
            self.zi.mask[j].next = false;
        }
        for rr in self._r..(self._r + 1) {
            for l in 0..self._lanes {
                for b in 0..self._r {
                    self.zi.mask[l * rr + b].next = self.lw[l].val() > self.k_b8[b].val();
                }
            }
        }
        self.zv[0].d.next = self.emit.val();
        self.ze[0].d.next = self.emit_end.val();
        self.zrow[0].d.next = (self.row.q.val() << self.k_lp.val()) + (self.mb.q.val() << self.k_lpl8.val());
        self.zch[0].d.next = self.ch.q.val();
        self.zst[0].d.next = self.err.q.val();
        self.zweak[0].d.next = self.wlen.q.val();
        self.zhp[0].d.next = self.hperm.q.val();
        self.zhnf[0].d.next = self.hnf.q.val();
        for l in 0..self._lanes {
            self.zmin[l].d.next = self.lmin[l].val();
        }
        for j in 0..self._pl {
            self.zmeta[j].d.next = self.cw[j].val();
        }
        for s in 1..self._lz {
            self.zv[s].d.next = self.zv[s - 1].q.val();
            self.ze[s].d.next = self.ze[s - 1].q.val();
            self.zrow[s].d.next = self.zrow[s - 1].q.val();
            self.zch[s].d.next = self.zch[s - 1].q.val();
            self.zst[s].d.next = self.zst[s - 1].q.val();
            self.zweak[s].d.next = self.zweak[s - 1].q.val();
            self.zhp[s].d.next = self.zhp[s - 1].q.val();
            self.zhnf[s].d.next = self.zhnf[s - 1].q.val();
        }
        for ln in self._lanes..(self._lanes + 1) {
            for s in 1..self._lz {
                for l in 0..self._lanes {
                    self.zmin[s * ln + l].d.next = self.zmin[(s - 1) * ln + l].q.val();
                }
            }
        }
        for pl in self._pl..(self._pl + 1) {
            for s in 1..self._lz {
                for j in 0..self._pl {
                    self.zmeta[s * pl + j].d.next = self.zmeta[(s - 1) * pl + j].q.val();
                }
            }
        }

        // ---------------- C: codes, checked against N ----------------
        self.bca.next = false;
        for zl in (self._lz - 1)..self._lz {
            for rr in self._r..(self._r + 1) {
                for ln in self._lanes..(self._lanes + 1) {
                    for l in 0..self._lanes {
                        self.slot.next = self.k_zero16.val();
                        for b in 0..self._r {
                            self.o1.next = self.zi.out[l * rr + b].val();
                            self.slot.next = self.slot.val() | (bit_cast::<16, 1>(self.o1.val()) << self.k_bsh[b].val());
                        }
                        self.m8.next = self.zmin[zl * ln + l].q.val();
                        self.code.next = bit_cast::<16, 8>(self.m8.val()) + self.slot.val();
                        if self.code.val() > self.k_n16.val() {
                            self.bca.next = true;
                        }
                        self.c_code[l].d.next = self.code.val();
                    }
                }
            }
            for pl in self._pl..(self._pl + 1) {
                for j in 0..self._pl {
                    self.c_meta[j].d.next = self.zmeta[zl * pl + j].q.val();
                }
            }
            self.sv[0].d.next = self.zv[zl].q.val() & !self.bca.val() & !self.bc_blk.q.val();
            self.se[0].d.next = self.ze[zl].q.val();
            self.srow[0].d.next = self.zrow[zl].q.val();
            self.sch[0].d.next = self.zch[zl].q.val();
            self.shp[0].d.next = self.zhp[zl].q.val();
            self.shnf[0].d.next = self.zhnf[zl].q.val();
            self.sst[0].d.next = self.zst[zl].q.val();
            if ((self.zst[zl].q.val() == self.k_e[0].val()) | self.zweak[zl].q.val()) & self.bc_blk.q.val() {
                self.sst[0].d.next = self.k_e[3].val();
            }
            // a bad code holds until the block's end beat
            self.bc_blk.en.next = self.adv.val();
            if self.ze[zl].q.val() {
                self.bc_blk.d.next = false;
            } else if self.zv[zl].q.val() & self.bca.val() {
                self.bc_blk.d.next = true;
            }
            // the permutation, caught as the end beat passes (the parser
            // writes the next one at least `1 + B / mw` advances after
            // sending it, more than `lz`: asserted in `Geometry::new`)
            self.cperm.en.next = self.adv.val() & self.ze[zl].q.val();
        }
        self.pk.next = self.k_zero1024.val();
        for i in 0..self._b {
            self.p8.next = self.perm[i].q.val();
            self.t1024.next = bit_cast::<1024, 8>(self.p8.val());
            self.pk.next = self.pk.val() | (self.t1024.val() << self.k_poff[i].val());
        }
        self.cperm.d.next = self.pk.val();

        // ---------------- D1: t = q + z ----------------
        for pl in self._pl..(self._pl + 1) {
            for gg in 0..self._g {
                for j in 0..self._pl {
                    self.mw.next = self.c_meta[j].q.val();
                    self.zx.next = self.mw.val() & !self.k_sext.val();
                    if self.mw.val().get_bit(15) {
                        self.zx.next = self.zx.val() | self.k_sext.val();
                    }
                    self.c16.next = self.c_code[gg * pl + j].q.val();
                    self.d1_t[gg * pl + j].d.next = bit_cast::<32, 16>(self.c16.val()) + self.zx.val();
                    self.d1_mw[gg * pl + j].d.next = self.mw.val();
                }
            }
        }
        // ---------------- D2: |t|, the step decoded ----------------
        for l in 0..self._lanes {
            self.tt.next = self.d1_t[l].q.val();
            self.mw.next = self.d1_mw[l].q.val();
            self.d2_mag[l].d.next = bit_cast::<16, 32>(self.tt.val());
            if self.tt.val().get_bit(31) {
                self.d2_mag[l].d.next = bit_cast::<16, 32>(!self.tt.val() + self.k_one32.val());
            }
            self.d2_neg[l].d.next = self.tt.val().get_bit(31) ^ self.mw.val().get_bit(31);
            self.ex.next = self.mw.val().get_bits::<5>(26);
            self.d2_sig[l].d.next = bit_cast::<16, 10>(self.mw.val().get_bits::<10>(16));
            self.d2_e[l].d.next = self.k_zero8.val();
            if self.ex.val() != self.k_zero5.val() {
                self.d2_sig[l].d.next = bit_cast::<16, 10>(self.mw.val().get_bits::<10>(16)) | self.k_imp.val();
                self.d2_e[l].d.next = bit_cast::<8, 5>(self.ex.val() - self.k_one5.val());
            }
        }
        // ---------------- D3: four 4 x 11-bit products ----------------
        for l in 0..self._lanes {
            for k in 0..4 {
                self.nib.next = (self.d2_mag[l].q.val() >> self.k_nsh[k].val()) & self.k_nib.val();
                self.d3_p[4 * l + k].d.next = self.nib.val() * self.d2_sig[l].q.val();
            }
            self.d3_neg[l].d.next = self.d2_neg[l].q.val();
            self.d3_e[l].d.next = self.d2_e[l].q.val();
        }
        // ---------------- D4, D5: |t| * significand ----------------
        for l in 0..self._lanes {
            self.d4_a[l].d.next = self.d3_p[4 * l].q.val() + (self.d3_p[4 * l + 1].q.val() << self.k_sh4.val());
            self.d4_b[l].d.next = self.d3_p[4 * l + 2].q.val() + (self.d3_p[4 * l + 3].q.val() << self.k_sh4.val());
            self.d4_neg[l].d.next = self.d3_neg[l].q.val();
            self.d4_e[l].d.next = self.d3_e[l].q.val();
            self.d5_p[l].d.next = self.d4_a[l].q.val() + (self.d4_b[l].q.val() << self.k_sh8.val());
            self.d5_neg[l].d.next = self.d4_neg[l].q.val();
            self.d5_e[l].d.next = self.d4_e[l].q.val();
        }
        // ---------------- D6: times 2^e; D7: clamped to 2^40 ----------------
        for l in 0..self._lanes {
            self.tt.next = self.d5_p[l].q.val();
            self.d6_sh[l].d.next = bit_cast::<64, 32>(self.tt.val()) << self.d5_e[l].q.val();
            self.d6_neg[l].d.next = self.d5_neg[l].q.val();
            self.sh64.next = self.d6_sh[l].q.val();
            self.d7_v[l].d.next = bit_cast::<FX, 64>(self.sh64.val());
            if (self.sh64.val() >> self.k_sh40.val()) != self.k_zero64.val() {
                self.d7_v[l].d.next = self.k_posmax.val();
            }
            self.d7_neg[l].d.next = self.d6_neg[l].q.val();
            self.rnd[l].v.next = self.d7_v[l].q.val();
            self.rnd[l].neg.next = self.d7_neg[l].q.val();
            self.out_x[l].next = self.rnd[l].y.val();
        }
        for s in 1..11 {
            self.sv[s].d.next = self.sv[s - 1].q.val();
            self.se[s].d.next = self.se[s - 1].q.val();
            self.srow[s].d.next = self.srow[s - 1].q.val();
            self.sch[s].d.next = self.sch[s - 1].q.val();
            self.sst[s].d.next = self.sst[s - 1].q.val();
            self.shp[s].d.next = self.shp[s - 1].q.val();
            self.shnf[s].d.next = self.shnf[s - 1].q.val();
        }

        // ---------------- outputs ----------------
        self.out_valid.next = self.sv[10].q.val() | self.se[10].q.val();
        self.out_end.next = self.se[10].q.val();
        self.out_row.next = self.srow[10].q.val();
        self.out_ch.next = self.sch[10].q.val();
        self.out_status.next = bit_cast::<3, 4>(self.sst[10].q.val());
        self.out_nonfinite.next = self.shnf[10].q.val() & (self.sst[10].q.val() == self.k_e[0].val());
        self.out_has_perm.next = self.shp[10].q.val() & (self.sst[10].q.val() == self.k_e[0].val());
        self.out_perm.next = self.k_zero1024.val();
        if self.shp[10].q.val() & (self.sst[10].q.val() == self.k_e[0].val()) {
            self.out_perm.next = self.cperm.q.val();
        }
    }
);
