//! Per-beat class extremes for the quantization engine's first pass: for
//! each class (a subgroup, or both middle subgroups as one when the middle
//! group is plain, spec §2.4) whether any lane holds one, and its least and
//! greatest order key (spec §2.2.2); plus the beat's count of outliers.
//! Paper: Oaken §5.2, "online per-token min and max". Spec: §2.14.
//!
//! A lane is in one class only, so the first level needs no per-class
//! compare: one compare orders each pair of lanes, and the pair is stored
//! as (lower key, its class, upper key, its class) instead of a node per
//! class. The next stage expands each pair into per-class nodes without a
//! compare (the lower key is a class's min, the upper its max) and merges
//! nodes pairwise, two levels per stage; the last level's nodes leave the
//! tree unregistered, for the engine's accumulator to merge as its own
//! last level. Stages: B (classify outside, order the pairs), then one
//! register after every second merge.

use crate::prim::reg::Reg;
use rust_hdl::prelude::*;

/// Node value: bit 32 present, [31:16] max key, [15:0] min key. An absent
/// node is [`ABSENT`].
pub const NODE: usize = 33;
/// The absent node: not present, max key 0 and min key 0xFFFF, the
/// identities of max and min, so a merge needs no present test.
pub const ABSENT: u64 = 0xFFFF;
/// Subgroups (spec §2.4), in value order: 0 outer-lower, 1 middle-lower,
/// 2 inner, 3 middle-upper, 4 outer-upper.
pub const SUBGROUPS: usize = 5;
/// Classes of one engine: 4 (plain middle: OL, M, I, OU) or 5 (shifted
/// middle: OL, ML, I, MU, OU).
pub const MAX_CLASSES: usize = 5;
/// A pair member's register: key [15:0], class one-hot [20:16].
pub const PAIRW: usize = 16 + MAX_CLASSES;
/// Merge levels after the pairs: up to 32 pairs (64 lanes).
pub const MAX_LEVELS: usize = 5;
/// Width of the per-beat tag carried alongside the tree.
pub const TAG: usize = 96;

/// Merges two nodes: present if either is, min and max over both. An absent
/// node holds the identities, so no compare waits for a present bit.
#[derive(LogicBlock)]
pub struct MinMax2 {
    pub a: Signal<In, Bits<NODE>>,
    pub b: Signal<In, Bits<NODE>>,
    pub y: Signal<Out, Bits<NODE>>,
    lo: Signal<Local, Bits<16>>,
    hi: Signal<Local, Bits<16>>,
    pmask: Constant<Bits<NODE>>,
    max_off: Constant<Bits<32>>,
    sh_hi: Constant<Bits<NODE>>,
}

impl Default for MinMax2 {
    fn default() -> Self {
        MinMax2 {
            a: Default::default(),
            b: Default::default(),
            y: Default::default(),
            lo: Default::default(),
            hi: Default::default(),
            pmask: Constant::new((1u64 << 32).into()),
            max_off: Constant::new(16u64.into()),
            sh_hi: Constant::new(16u64.into()),
        }
    }
}

impl Logic for MinMax2 {
    #[hdl_gen]
    fn update(&mut self) {
        self.lo.next = self.a.val().get_bits::<16>(0);
        if self.b.val().get_bits::<16>(0) < self.a.val().get_bits::<16>(0) {
            self.lo.next = self.b.val().get_bits::<16>(0);
        }
        self.hi.next = self.a.val().get_bits::<16>(self.max_off.val().index());
        if self.b.val().get_bits::<16>(self.max_off.val().index()) > self.a.val().get_bits::<16>(self.max_off.val().index())
        {
            self.hi.next = self.b.val().get_bits::<16>(self.max_off.val().index());
        }
        self.y.next = ((self.a.val() | self.b.val()) & self.pmask.val())
            | (bit_cast::<NODE, 16>(self.hi.val()) << self.sh_hi.val())
            | bit_cast::<NODE, 16>(self.lo.val());
    }
}

/// The per-beat tree. Inputs are one beat's lanes (order key, class,
/// outlier bit), combinational in the stage before B; outputs, `latency`
/// registers later and unregistered after them, each class's node, the
/// beat's outlier count and its tag. No stalls: the first pass never waits.
#[derive(LogicBlock)]
pub struct ExtremeTree {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub in_valid: Signal<In, Bit>,
    /// Per-beat information carried to the output unchanged.
    pub in_tag: Signal<In, Bits<TAG>>,
    /// Lane p's order key, class and whether it is an outlier (outer or
    /// inner group).
    pub key: Vec<Signal<In, Bits<16>>>,
    pub cls: Vec<Signal<In, Bits<3>>>,
    pub outl: Vec<Signal<In, Bit>>,
    pub out_valid: Signal<Out, Bit>,
    pub out_tag: Signal<Out, Bits<TAG>>,
    /// Class c's node.
    pub node: Vec<Signal<Out, Bits<NODE>>>,
    /// Outliers in the beat.
    pub outliers: Signal<Out, Bits<8>>,
    // B: the pairs, ordered, with their classes
    lt: Signal<Local, Bit>,
    ka: Signal<Local, Bits<16>>,
    kb: Signal<Local, Bits<16>>,
    ca: Signal<Local, Bits<PAIRW>>,
    cb: Signal<Local, Bits<PAIRW>>,
    /// A pair's lower and upper member after B, each {class one-hot at
    /// 16 + c, key} (one-hot: the membership is a bit; beside the key: a
    /// class register read only by compares is an FSM to Yosys 0.23, whose
    /// extraction asserts on the one-lane engine's).
    b_lo: Vec<Reg<Bits<PAIRW>>>,
    b_hi: Vec<Reg<Bits<PAIRW>>>,
    /// The lanes' outlier bits, lane p at bit p.
    b_ob: Reg<Bits<64>>,
    cnt: Signal<Local, Bits<8>>,
    ob: Signal<Local, Bit>,
    obv: Signal<Local, Bits<64>>,
    /// Count tree: the lanes' bits at 0.._pcw (padded to a power of two,
    /// at least 2), node i's children at 2i and 2i + 1, root last.
    pc: Vec<Signal<Local, Bits<8>>>,
    // level l (0 = the pairs expanded): class c node i at c * size[l] + i
    lv0: Vec<Signal<Local, Bits<NODE>>>,
    lv1: Vec<Signal<Local, Bits<NODE>>>,
    lv2: Vec<Signal<Local, Bits<NODE>>>,
    lv3: Vec<Signal<Local, Bits<NODE>>>,
    lv4: Vec<Signal<Local, Bits<NODE>>>,
    lv5: Vec<Signal<Local, Bits<NODE>>>,
    m1: Vec<MinMax2>,
    m2: Vec<MinMax2>,
    m3: Vec<MinMax2>,
    m4: Vec<MinMax2>,
    m5: Vec<MinMax2>,
    /// Registers after levels 2 and 4 (where the tree is deep enough);
    /// the other levels' are empty.
    r1: Vec<Reg<Bits<NODE>>>,
    r2: Vec<Reg<Bits<NODE>>>,
    r3: Vec<Reg<Bits<NODE>>>,
    r4: Vec<Reg<Bits<NODE>>>,
    r5: Vec<Reg<Bits<NODE>>>,
    // count, valid and tag after B, and after each level register
    cnt_r: Vec<Reg<Bits<8>>>,
    vld: Vec<Reg<Bit>>,
    tag: Vec<Reg<Bits<TAG>>>,
    inlo: Signal<Local, Bit>,
    inhi: Signal<Local, Bit>,
    lo: Signal<Local, Bits<16>>,
    hi: Signal<Local, Bits<16>>,
    pr: Signal<Local, Bit>,
    zero64: Constant<Bits<64>>,
    lane_at: Vec<Constant<Bits<64>>>,
    lane_ix: Vec<Constant<Bits<6>>>,
    ffff: Constant<Bits<16>>,
    idx: Vec<Constant<Bits<3>>>,
    cbit: Vec<Constant<Bits<PAIRW>>>,
    zero16: Constant<Bits<16>>,
    sh_hi: Constant<Bits<NODE>>,
    pbit: Constant<Bits<NODE>>,
    _lanes: usize,
    _pcw: usize,
    _pairs: usize,
    /// Two lanes or more: every pair is two real lanes.
    _full: usize,
    _classes: usize,
    /// Nodes per class at level l, and whether level l exists.
    _size: [usize; MAX_LEVELS + 1],
    _on: [usize; MAX_LEVELS + 1],
    /// A register after level l, and which level is the output.
    _reg: [usize; MAX_LEVELS + 1],
    _last: [usize; MAX_LEVELS + 1],
    /// Where the count, valid and tag are read (index into the vectors).
    _tap: usize,
}

impl ExtremeTree {
    pub fn new(lanes: usize, classes: usize) -> Self {
        assert!(lanes.is_power_of_two() && (1..=64).contains(&lanes));
        assert!(classes == 4 || classes == 5);
        let pairs = lanes.div_ceil(2);
        let levels = pairs.trailing_zeros() as usize;
        let mut size = [0; MAX_LEVELS + 1];
        let mut on = [0; MAX_LEVELS + 1];
        let mut last = [0; MAX_LEVELS + 1];
        for l in 0..=levels {
            size[l] = pairs >> l;
            on[l] = 1;
        }
        last[levels] = 1;
        let (reg2, reg4) = (Self::reg_after(levels, 2) as usize, Self::reg_after(levels, 4) as usize);
        let taps = 1 + reg2 + reg4;
        let nodes = |l: usize| (0..classes * size[l]).map(|_| Default::default()).collect::<Vec<_>>();
        let cells = |l: usize| (0..classes * size[l]).map(|_| MinMax2::default()).collect::<Vec<_>>();
        fn regs<T: Synth>(n: usize) -> Vec<Reg<T>> {
            (0..n).map(|_| Reg::default()).collect()
        }
        ExtremeTree {
            clock: Default::default(),
            reset: Default::default(),
            in_valid: Default::default(),
            in_tag: Default::default(),
            key: (0..lanes).map(|_| Default::default()).collect(),
            cls: (0..lanes).map(|_| Default::default()).collect(),
            outl: (0..lanes).map(|_| Default::default()).collect(),
            out_valid: Default::default(),
            out_tag: Default::default(),
            node: (0..classes).map(|_| Default::default()).collect(),
            outliers: Default::default(),
            lt: Default::default(),
            ka: Default::default(),
            kb: Default::default(),
            ca: Default::default(),
            cb: Default::default(),
            b_lo: regs(pairs),
            b_hi: regs(pairs * (lanes >= 2) as usize),
            b_ob: Reg::default(),
            cnt: Default::default(),
            ob: Default::default(),
            obv: Default::default(),
            pc: (0..2 * lanes.max(2) - 1).map(|_| Default::default()).collect(),
            lv0: nodes(0),
            lv1: nodes(1),
            lv2: nodes(2),
            lv3: nodes(3),
            lv4: nodes(4),
            lv5: nodes(5),
            m1: cells(1),
            m2: cells(2),
            m3: cells(3),
            m4: cells(4),
            m5: cells(5),
            r1: regs(0),
            r2: regs(reg2 * classes * size[2]),
            r3: regs(0),
            r4: regs(reg4 * classes * size[4]),
            r5: regs(0),
            cnt_r: regs(taps - 1),
            vld: regs(taps),
            tag: regs(taps),
            inlo: Default::default(),
            inhi: Default::default(),
            lo: Default::default(),
            hi: Default::default(),
            pr: Default::default(),
            zero64: Constant::new(0u64.into()),
            lane_at: (0..lanes).map(|p| Constant::new((p as u64).into())).collect(),
            lane_ix: (0..lanes).map(|p| Constant::new((p as u64).into())).collect(),
            ffff: Constant::new(0xFFFFu64.into()),
            idx: (0..classes).map(|c| Constant::new((c as u64).into())).collect(),
            cbit: (0..classes).map(|c| Constant::new((1u64 << (16 + c)).into())).collect(),
            zero16: Constant::new(0u64.into()),
            sh_hi: Constant::new(16u64.into()),
            pbit: Constant::new((1u64 << 32).into()),
            _lanes: lanes,
            _pcw: lanes.max(2),
            _pairs: pairs,
            _full: (lanes >= 2) as usize,
            _classes: classes,
            _size: size,
            _on: on,
            _reg: [0, 0, reg2, 0, reg4, 0],
            _last: last,
            _tap: taps - 1,
        }
    }

    /// A register after merge level `l` (2 or 4) of a tree with `levels`
    /// levels: two merges per stage, the accumulator's counting as the
    /// last, so after level 2 when there is a level 2, after 4 likewise.
    fn reg_after(levels: usize, l: usize) -> bool {
        levels >= l
    }

    /// Registers from the inputs to the outputs (B, then the level
    /// registers); the accumulator's merge follows in the next stage.
    pub fn latency(lanes: usize) -> usize {
        let levels = lanes.div_ceil(2).trailing_zeros() as usize;
        1 + Self::reg_after(levels, 2) as usize + Self::reg_after(levels, 4) as usize
    }
}

/// Per merge level: number, the level below, this level, its cells.
macro_rules! extreme_tree_logic {
    ($([$l:tt, $prev:ident, $cur:ident, $cell:ident, $reg:ident]),*) => {
        impl Logic for ExtremeTree {
            #[hdl_gen]
            fn update(&mut self) {
                // ---- B: order each pair of lanes by key (one compare for all
                // classes) and count the beat's outliers ----
                // the count, from the outlier bits registered in B, as a
                // balanced tree of adds (counted in B behind the classes, a
                // chain of adds was the critical path)
                self.b_ob.clock.next = self.clock.val();
                self.b_ob.reset.next = self.reset.val();
                self.b_ob.en.next = true;
                self.obv.next = self.zero64.val();
                for p in 0..self._lanes {
                    self.ob.next = self.outl[p].val();
                    self.obv.next = self.obv.val() | (bit_cast::<64, 1>(self.ob.val().into()) << self.lane_at[p].val());
                }
                self.b_ob.d.next = self.obv.val();
                for p in 0..self._lanes {
                    self.ob.next = self.b_ob.q.val().get_bit(self.lane_ix[p].val().index());
                    self.pc[p].next = bit_cast::<8, 1>(self.ob.val().into());
                }
                for p in self._lanes..self._pcw {
                    // (padding lanes of a non-power-of-two engine)
                    self.pc[p].next = self.zero64.val().get_bits::<8>(0);
                }
                for z in self._pcw..(self._pcw + 1) {
                    for i in 0..(self._pcw - 1) {
                        self.pc[z + i].next = self.pc[2 * i].val() + self.pc[2 * i + 1].val();
                    }
                    self.cnt.next = self.pc[2 * z - 2].val();
                }
                for i in 0..self._pairs {
                    self.b_lo[i].clock.next = self.clock.val();
                    self.b_lo[i].reset.next = self.reset.val();
                    self.b_lo[i].en.next = true;
                    for _f in 0..self._full {
                        self.b_hi[i].clock.next = self.clock.val();
                        self.b_hi[i].reset.next = self.reset.val();
                        self.b_hi[i].en.next = true;
                    }
                }
                self.ka.next = self.key[0].val();
                self.kb.next = self.key[0].val();
                self.ca.next = bit_cast::<PAIRW, 16>(self.ka.val());
                for c in 0..self._classes {
                    if self.cls[0].val() == self.idx[c].val() {
                        self.ca.next = self.ca.val() | self.cbit[c].val();
                    }
                }
                self.cb.next = self.ca.val();
                for i in 0..self._pairs {
                    // (one lane: its pair is the lane alone, with no upper
                    // member)
                    for _f in 0..self._full {
                        self.ka.next = self.key[2 * i].val();
                        self.kb.next = self.key[2 * i + 1].val();
                        self.ca.next = bit_cast::<PAIRW, 16>(self.ka.val());
                        self.cb.next = bit_cast::<PAIRW, 16>(self.kb.val());
                        for c in 0..self._classes {
                            if self.cls[2 * i].val() == self.idx[c].val() {
                                self.ca.next = self.ca.val() | self.cbit[c].val();
                            }
                            if self.cls[2 * i + 1].val() == self.idx[c].val() {
                                self.cb.next = self.cb.val() | self.cbit[c].val();
                            }
                        }
                        self.lt.next = self.ka.val() <= self.kb.val();
                        self.b_hi[i].d.next = self.ca.val();
                        if self.lt.val() {
                            self.b_hi[i].d.next = self.cb.val();
                        }
                    }
                    // (one lane: ka = kb and ca = cb, so lt's value is moot)
                    self.lt.next = self.ka.val() <= self.kb.val();
                    self.b_lo[i].d.next = self.cb.val();
                    if self.lt.val() {
                        self.b_lo[i].d.next = self.ca.val();
                    }
                }
                for t in 0..self._tap {
                    self.cnt_r[t].clock.next = self.clock.val();
                    self.cnt_r[t].reset.next = self.reset.val();
                    self.cnt_r[t].en.next = true;
                }
                for t in 0..(self._tap + 1) {
                    self.vld[t].clock.next = self.clock.val();
                    self.vld[t].reset.next = self.reset.val();
                    self.vld[t].en.next = true;
                    self.tag[t].clock.next = self.clock.val();
                    self.tag[t].reset.next = self.reset.val();
                    self.tag[t].en.next = true;
                }
                // the count exists from B's output on: cnt_r[t - 1] beside
                // the level register t
                self.vld[0].d.next = self.in_valid.val();
                self.tag[0].d.next = self.in_tag.val();
                for t in 1..(self._tap + 1) {
                    self.vld[t].d.next = self.vld[t - 1].q.val();
                    self.tag[t].d.next = self.tag[t - 1].q.val();
                }
                for _t in 1..(self._tap + 1) {
                    self.cnt_r[0].d.next = self.cnt.val();
                }
                for t in 2..(self._tap + 1) {
                    self.cnt_r[t - 1].d.next = self.cnt_r[t - 2].q.val();
                }
                self.outliers.next = self.cnt.val();
                for t in 1..(self._tap + 1) {
                    self.outliers.next = self.cnt_r[t - 1].q.val();
                }
                for t in self._tap..(self._tap + 1) {
                    self.out_valid.next = self.vld[t].q.val();
                    self.out_tag.next = self.tag[t].q.val();
                }

                // ---- level 0: each pair as a node per class, no compare:
                // the lower key is the class's min, the upper its max ----
                for z in self._pairs..(self._pairs + 1) {
                    for c in 0..self._classes {
                        for i in 0..self._pairs {
                            self.inlo.next = self.b_lo[i].q.val().get_bit(16 + c);
                            self.inhi.next = false;
                            self.lo.next = self.ffff.val();
                            self.hi.next = self.zero16.val();
                            for _f in 0..self._full {
                                self.inhi.next = self.b_hi[i].q.val().get_bit(16 + c);
                                if self.inhi.val() {
                                    self.lo.next = self.b_hi[i].q.val().get_bits::<16>(0);
                                    self.hi.next = self.b_hi[i].q.val().get_bits::<16>(0);
                                }
                            }
                            if self.inlo.val() {
                                self.lo.next = self.b_lo[i].q.val().get_bits::<16>(0);
                            }
                            if self.inlo.val() & !self.inhi.val() {
                                self.hi.next = self.b_lo[i].q.val().get_bits::<16>(0);
                            }
                            self.pr.next = self.inlo.val() | self.inhi.val();
                            self.lv0[c * z + i].next = (bit_cast::<NODE, 16>(self.hi.val()) << self.sh_hi.val())
                                | bit_cast::<NODE, 16>(self.lo.val());
                            if self.pr.val() {
                                self.lv0[c * z + i].next = self.lv0[c * z + i].val() | self.pbit.val();
                            }
                        }
                    }
                }
                // ---- merge levels ----
                $(
                for _on in 0..self._on[$l] {
                    for z in self._size[$l]..(self._size[$l] + 1) {
                        for y in self._size[$l - 1]..(self._size[$l - 1] + 1) {
                            for c in 0..self._classes {
                                for i in 0..self._size[$l] {
                                    self.$cell[c * z + i].a.next = self.$prev[c * y + 2 * i].val();
                                    self.$cell[c * z + i].b.next = self.$prev[c * y + 2 * i + 1].val();
                                    self.$cur[c * z + i].next = self.$cell[c * z + i].y.val();
                                }
                            }
                        }
                        // a register after this level replaces its values
                        for _r in 0..self._reg[$l] {
                            for c in 0..self._classes {
                                for i in 0..self._size[$l] {
                                    self.$reg[c * z + i].clock.next = self.clock.val();
                                    self.$reg[c * z + i].reset.next = self.reset.val();
                                    self.$reg[c * z + i].en.next = true;
                                    self.$reg[c * z + i].d.next = self.$cell[c * z + i].y.val();
                                    self.$cur[c * z + i].next = self.$reg[c * z + i].q.val();
                                }
                            }
                        }
                    }
                }
                )*
                // the output: the last level's single node per class
                for _l in 0..self._last[0] {
                    for c in 0..self._classes {
                        self.node[c].next = self.lv0[c].val();
                    }
                }
                for _l in 0..self._last[1] {
                    for c in 0..self._classes {
                        self.node[c].next = self.lv1[c].val();
                    }
                }
                for _l in 0..self._last[2] {
                    for c in 0..self._classes {
                        self.node[c].next = self.lv2[c].val();
                    }
                }
                for _l in 0..self._last[3] {
                    for c in 0..self._classes {
                        self.node[c].next = self.lv3[c].val();
                    }
                }
                for _l in 0..self._last[4] {
                    for c in 0..self._classes {
                        self.node[c].next = self.lv4[c].val();
                    }
                }
                for _l in 0..self._last[5] {
                    for c in 0..self._classes {
                        self.node[c].next = self.lv5[c].val();
                    }
                }
            }
        }
    };
}

extreme_tree_logic!(
    [1, lv0, lv1, m1, r1],
    [2, lv1, lv2, m2, r2],
    [3, lv2, lv3, m3, r3],
    [4, lv3, lv4, m4, r4],
    [5, lv4, lv5, m5, r5]
);

#[cfg(test)]
mod tests {
    use super::*;

    fn edge(b: &mut ExtremeTree) {
        b.clock.next = Clock { clk: false };
        assert!(simulate(b, 1000));
        b.clock.next = Clock { clk: true };
        assert!(simulate(b, 1000));
    }

    /// Every class node and the outlier count against a direct reduction,
    /// one beat per cycle, at every lane count and both class counts; keys
    /// drawn from a few values so that ties and single-member classes are
    /// common.
    #[test]
    fn matches_direct_reduction() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut rnd = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for classes in [4usize, 5] {
            for lanes in [1usize, 2, 4, 8, 16, 32, 64] {
                let mut b = ExtremeTree::new(lanes, classes);
                b.connect_all();
                b.reset.next = true;
                edge(&mut b);
                b.reset.next = false;
                let lat = ExtremeTree::latency(lanes);
                let mut want = std::collections::VecDeque::new();
                let mut checked = 0;
                for n in 0..300u64 {
                    let narrow = n % 3 == 0;
                    let mut nodes = vec![ABSENT; classes];
                    let mut cnt = 0u64;
                    for p in 0..lanes {
                        let k = if narrow { rnd() % 4 * 0x1111 } else { rnd() & 0xFFFF };
                        let c = (rnd() % classes as u64) as usize;
                        let o = rnd() & 1 == 1;
                        b.key[p].next = k.into();
                        b.cls[p].next = (c as u64).into();
                        b.outl[p].next = o;
                        cnt += o as u64;
                        let nd = nodes[c];
                        let (lo, hi) = (nd & 0xFFFF, nd >> 16 & 0xFFFF);
                        nodes[c] = 1 << 32 | hi.max(k) << 16 | lo.min(k);
                    }
                    b.in_valid.next = true;
                    b.in_tag.next = n.into();
                    want.push_back((n, nodes, cnt));
                    edge(&mut b);
                    if want.len() >= lat {
                        let (k, nodes, cnt) = want.pop_front().unwrap();
                        assert!(b.out_valid.val());
                        assert_eq!(b.out_tag.val().get_bits::<32>(0).index() as u64, k);
                        for c in 0..classes {
                            assert_eq!(b.node[c].val().to_u64(), nodes[c], "lanes {lanes} classes {classes} beat {k} class {c}");
                        }
                        assert_eq!(b.outliers.val().index() as u64, cnt);
                        checked += 1;
                    }
                }
                assert!(checked + lat >= 300);
            }
        }
    }
}
