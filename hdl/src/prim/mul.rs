//! Pipelined unsigned W x W -> 2W multiply from 16x8 pieces (spec §5.2).
//! rust-hdl only multiplies Bits<16> by Bits<16>; a zero-extended 8-bit
//! operand makes Yosys build a 16x8 multiplier. On OSU018 a 16x16 multiply
//! does not fit a 4 ns cycle even between registers, and a 16x8 one not
//! behind the input ports' external delay, so the operands are registered
//! first. The sum of the pieces is one stage up to W = 32; from W = 48 it
//! is split in two, carry-save words and then their add (in one stage the
//! 64-bit sum took 4.3 ns, the 48-bit one 3.9 ns).

use super::reg::Reg;
use rust_hdl::prelude::*;

/// Widths from this one up reduce the pieces to two carry-save words in a
/// stage of their own before the final add.
pub const SPLIT_WIDTH: usize = 48;

/// Cycles from operands to product for operand width `width`.
pub fn latency(width: usize) -> usize {
    if width >= SPLIT_WIDTH {
        4
    } else {
        3
    }
}

/// `W` is the operand width (16, 32, 48 or 64), `W2 = 2 * W`.
#[derive(LogicBlock)]
pub struct MulPipe<const W: usize, const W2: usize> {
    /// rising-edge clock
    pub clock: Signal<In, Clock>,
    /// synchronous reset, active high
    pub reset: Signal<In, Bit>,
    /// pipeline advance: every stage loads only when high
    pub en: Signal<In, Bit>,
    /// operand a, valid with in_valid
    pub a: Signal<In, Bits<W>>,
    /// operand b, valid with in_valid
    pub b: Signal<In, Bits<W>>,
    /// operands valid
    pub in_valid: Signal<In, Bit>,
    /// product a*b, {latency} advancing cycles after the operands
    pub p: Signal<Out, Bits<W2>>,
    /// product valid
    pub out_valid: Signal<Out, Bit>,
    /// Stage 1: the operands.
    ra: Reg<Bits<W>>,
    rb: Reg<Bits<W>>,
    /// Stage 2: one register per piece a_x * b_y (a_x = a[16x+15:16x], b_y =
    /// b[8y+7:8y]), index x * kb + y with kb = W / 8. Bits 31:24 are always
    /// 0, and synthesis drops their registers.
    pp: Vec<Reg<Bits<32>>>,
    /// Per piece: the bit offsets 16x and 8y of its operands, and its shift
    /// 16x + 8y in the product.
    offa: Vec<Constant<Bits<32>>>,
    offb: Vec<Constant<Bits<32>>>,
    sh: Vec<Constant<Bits<32>>>,
    /// Summands: row 3x + y % 3 gathers the pieces of a_x with y alike
    /// modulo 3, which lie 24 bits apart and so do not overlap (an OR, no
    /// logic). From SPLIT_WIDTH the carry-save items follow: compressor n
    /// takes items 3n, 3n+1, 3n+2 and appends its sum and carry words, so
    /// the items are consumed in the order they appear (a Wallace tree) and
    /// the last two are the carry-save result.
    t: Vec<Signal<Local, Bits<W2>>>,
    /// Stage 3 from SPLIT_WIDTH: the two carry-save words (empty below it).
    cs: Vec<Reg<Bits<W2>>>,
    total: Signal<Local, Bits<W2>>,
    /// Loop temporaries: casts cannot take an indexed signal directly.
    bpart: Signal<Local, Bits<8>>,
    piece: Signal<Local, Bits<32>>,
    /// Last stage: the product.
    sum: Reg<Bits<W2>>,
    /// `in_valid` through every stage.
    valid: Vec<Reg<Bit>>,
    zero: Constant<Bits<W2>>,
    /// The carry words' shift, 1; one entry from SPLIT_WIDTH, else none
    /// (no unused constant in the Verilog).
    one: Vec<Constant<Bits<32>>>,
    _kb: usize,
    _pieces: usize,
    _rows: usize,
    /// Rows added directly in the last stage: all of them below
    /// SPLIT_WIDTH, none from it.
    _direct: usize,
    /// Number of 3:2 compressors (0 below SPLIT_WIDTH).
    _ops: usize,
    /// 1 from SPLIT_WIDTH, else 0: the loop count of the split's code.
    _split: usize,
    _lat: usize,
}

impl<const W: usize, const W2: usize> Default for MulPipe<W, W2> {
    fn default() -> Self {
        assert!(W % 16 == 0 && W >= 16 && W2 == 2 * W, "MulPipe needs W a multiple of 16 and W2 = 2W");
        let (ka, kb) = (W / 16, W / 8);
        let pieces = ka * kb;
        let rows = ka * kb.min(3);
        let split = W >= SPLIT_WIDTH;
        let ops = if split { rows - 2 } else { 0 };
        let c = |v: usize| Constant::new((v as u64).into());
        MulPipe {
            clock: Default::default(),
            reset: Default::default(),
            en: Default::default(),
            a: Default::default(),
            b: Default::default(),
            in_valid: Default::default(),
            p: Default::default(),
            out_valid: Default::default(),
            ra: Reg::default(),
            rb: Reg::default(),
            pp: (0..pieces).map(|_| Reg::default()).collect(),
            offa: (0..pieces).map(|n| c(16 * (n / kb))).collect(),
            offb: (0..pieces).map(|n| c(8 * (n % kb))).collect(),
            sh: (0..pieces).map(|n| c(16 * (n / kb) + 8 * (n % kb))).collect(),
            t: (0..rows + 2 * ops).map(|_| Default::default()).collect(),
            cs: (0..if split { 2 } else { 0 }).map(|_| Reg::default()).collect(),
            total: Default::default(),
            bpart: Default::default(),
            piece: Default::default(),
            sum: Reg::default(),
            valid: (0..latency(W)).map(|_| Reg::default()).collect(),
            zero: Constant::new(0u64.into()),
            one: (0..split as usize).map(|_| c(1)).collect(),
            _kb: kb,
            _pieces: pieces,
            _rows: rows,
            _direct: if split { 0 } else { rows },
            _ops: ops,
            _split: split as usize,
            _lat: latency(W),
        }
    }
}

impl<const W: usize, const W2: usize> Logic for MulPipe<W, W2> {
    #[hdl_gen]
    fn update(&mut self) {
        // rust-hdl evaluates Vec indices from loop variables and literals
        // only: the one-pass loops over `kb`, `r` and `lat` bring those
        // numbers into the index arithmetic.
        clock!(self, clock, ra, rb, sum);
        self.ra.reset.next = self.reset.val();
        self.rb.reset.next = self.reset.val();
        self.sum.reset.next = self.reset.val();
        self.ra.en.next = self.en.val();
        self.rb.en.next = self.en.val();
        self.sum.en.next = self.en.val();
        self.ra.d.next = self.a.val();
        self.rb.d.next = self.b.val();
        for i in 0..self._lat {
            self.valid[i].clock.next = self.clock.val();
            self.valid[i].reset.next = self.reset.val();
            self.valid[i].en.next = self.en.val();
        }
        self.valid[0].d.next = self.in_valid.val();
        for i in 1..self._lat {
            self.valid[i].d.next = self.valid[i - 1].q.val();
        }
        for i in 0..self._rows {
            self.t[i].next = self.zero.val();
        }
        for kb in self._kb..(self._kb + 1) {
            for n in 0..self._pieces {
                self.pp[n].clock.next = self.clock.val();
                self.pp[n].reset.next = self.reset.val();
                self.pp[n].en.next = self.en.val();
                self.bpart.next = self.rb.q.val().get_bits::<8>(self.offb[n].val().index());
                self.pp[n].d.next =
                    self.ra.q.val().get_bits::<16>(self.offa[n].val().index()) * bit_cast::<16, 8>(self.bpart.val());
                self.piece.next = self.pp[n].q.val();
                self.t[(n / kb) * 3 + (n % kb) % 3].next = self.t[(n / kb) * 3 + (n % kb) % 3].val()
                    | (bit_cast::<W2, 32>(self.piece.val()) << self.sh[n].val());
            }
        }
        self.total.next = self.zero.val();
        for i in 0..self._direct {
            self.total.next = self.total.val() + self.t[i].val();
        }
        for r in self._rows..(self._rows + 1) {
            for n in 0..self._ops {
                self.t[r + 2 * n].next = self.t[3 * n].val() ^ self.t[3 * n + 1].val() ^ self.t[3 * n + 2].val();
                self.t[r + 2 * n + 1].next = ((self.t[3 * n].val() & self.t[3 * n + 1].val())
                    | (self.t[3 * n].val() & self.t[3 * n + 2].val())
                    | (self.t[3 * n + 1].val() & self.t[3 * n + 2].val()))
                    << self.one[0].val();
            }
            for _i in 0..self._split {
                self.cs[0].d.next = self.t[3 * r - 6].val();
                self.cs[1].d.next = self.t[3 * r - 5].val();
                self.total.next = self.cs[0].q.val() + self.cs[1].q.val();
            }
        }
        for i in 0..(self._split * 2) {
            self.cs[i].clock.next = self.clock.val();
            self.cs[i].reset.next = self.reset.val();
            self.cs[i].en.next = self.en.val();
        }
        self.sum.d.next = self.total.val();
        self.p.next = self.sum.q.val();
        for lat in self._lat..(self._lat + 1) {
            self.out_valid.next = self.valid[lat - 1].q.val();
        }
    }
}
