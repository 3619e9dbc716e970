//! Per-beat subgroup extremes for the quantization engine's first pass:
//! for each of the five subgroups (spec §2.4) whether any lane holds one, and
//! the smallest and largest order key (spec §2.2.2); plus the beat's count
//! of outliers (outer and inner lanes). Paper: Oaken §5.2, "online per-token
//! min and max". A tree of 4-input cells with one register per tree stage.

use crate::prim::reg::Reg;
use rust_hdl::prelude::*;

/// Node value: bit 32 present, [31:16] max key, [15:0] min key. An absent
/// node is [`ABSENT`].
pub const NODE: usize = 33;
/// The absent node: not present, max key 0 and min key 0xFFFF, the
/// identities of max and min.
pub const ABSENT: u64 = 0xFFFF;
/// Subgroup codes, in value order: 0 outer-lower, 1 middle-lower, 2 inner,
/// 3 middle-upper, 4 outer-upper.
pub const SUBGROUPS: usize = 5;
/// Tree stages: 4-way each, so up to 64 lanes.
pub const MAX_STAGES: usize = 3;
/// Width of the per-beat tag carried alongside the tree.
pub const TAG: usize = 96;

/// Combines four nodes: present if any is, min and max over all four.
/// Pairwise ((a,b), (c,d)), so two compare levels deep. An absent node
/// holds the identities (min field 0xFFFF, max field 0), so no compare
/// waits for a present bit.
#[derive(LogicBlock)]
pub struct MinMax4 {
    pub a: Signal<In, Bits<NODE>>,
    pub b: Signal<In, Bits<NODE>>,
    pub c: Signal<In, Bits<NODE>>,
    pub d: Signal<In, Bits<NODE>>,
    pub y: Signal<Out, Bits<NODE>>,
    ab: Signal<Local, Bits<NODE>>,
    cd: Signal<Local, Bits<NODE>>,
    x0: Signal<Local, Bits<NODE>>,
    x1: Signal<Local, Bits<NODE>>,
    lo: Signal<Local, Bits<16>>,
    hi: Signal<Local, Bits<16>>,
    pmask: Constant<Bits<NODE>>,
    max_off: Constant<Bits<32>>,
    sh_hi: Constant<Bits<NODE>>,
}

impl Default for MinMax4 {
    fn default() -> Self {
        MinMax4 {
            a: Default::default(),
            b: Default::default(),
            c: Default::default(),
            d: Default::default(),
            y: Default::default(),
            ab: Default::default(),
            cd: Default::default(),
            x0: Default::default(),
            x1: Default::default(),
            lo: Default::default(),
            hi: Default::default(),
            pmask: Constant::new((1u64 << 32).into()),
            max_off: Constant::new(16u64.into()),
            sh_hi: Constant::new(16u64.into()),
        }
    }
}

impl Logic for MinMax4 {
    // The pairwise step is written out three times (x0, x1 -> node): a
    // rust-hdl kernel cannot call a helper.
    #[hdl_gen]
    fn update(&mut self) {
        self.x0.next = self.a.val();
        self.x1.next = self.b.val();
        self.lo.next = self.x0.val().get_bits::<16>(0);
        if self.x1.val().get_bits::<16>(0) < self.x0.val().get_bits::<16>(0) {
            self.lo.next = self.x1.val().get_bits::<16>(0);
        }
        self.hi.next = self.x0.val().get_bits::<16>(self.max_off.val().index());
        if self.x1.val().get_bits::<16>(self.max_off.val().index())
            > self.x0.val().get_bits::<16>(self.max_off.val().index())
        {
            self.hi.next = self.x1.val().get_bits::<16>(self.max_off.val().index());
        }
        self.ab.next = ((self.x0.val() | self.x1.val()) & self.pmask.val())
            | (bit_cast::<NODE, 16>(self.hi.val()) << self.sh_hi.val())
            | bit_cast::<NODE, 16>(self.lo.val());

        self.x0.next = self.c.val();
        self.x1.next = self.d.val();
        self.lo.next = self.x0.val().get_bits::<16>(0);
        if self.x1.val().get_bits::<16>(0) < self.x0.val().get_bits::<16>(0) {
            self.lo.next = self.x1.val().get_bits::<16>(0);
        }
        self.hi.next = self.x0.val().get_bits::<16>(self.max_off.val().index());
        if self.x1.val().get_bits::<16>(self.max_off.val().index())
            > self.x0.val().get_bits::<16>(self.max_off.val().index())
        {
            self.hi.next = self.x1.val().get_bits::<16>(self.max_off.val().index());
        }
        self.cd.next = ((self.x0.val() | self.x1.val()) & self.pmask.val())
            | (bit_cast::<NODE, 16>(self.hi.val()) << self.sh_hi.val())
            | bit_cast::<NODE, 16>(self.lo.val());

        self.x0.next = self.ab.val();
        self.x1.next = self.cd.val();
        self.lo.next = self.x0.val().get_bits::<16>(0);
        if self.x1.val().get_bits::<16>(0) < self.x0.val().get_bits::<16>(0) {
            self.lo.next = self.x1.val().get_bits::<16>(0);
        }
        self.hi.next = self.x0.val().get_bits::<16>(self.max_off.val().index());
        if self.x1.val().get_bits::<16>(self.max_off.val().index())
            > self.x0.val().get_bits::<16>(self.max_off.val().index())
        {
            self.hi.next = self.x1.val().get_bits::<16>(self.max_off.val().index());
        }
        self.y.next = ((self.x0.val() | self.x1.val()) & self.pmask.val())
            | (bit_cast::<NODE, 16>(self.hi.val()) << self.sh_hi.val())
            | bit_cast::<NODE, 16>(self.lo.val());
    }
}

/// The per-beat tree. Inputs are one beat's lanes (order key, subgroup);
/// outputs, `latency` cycles later, the five subgroup nodes, the outlier
/// count and the beat's tag, which rides along unchanged. No stalls: the
/// first pass never waits.
#[derive(LogicBlock)]
pub struct ExtremeTree {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub in_valid: Signal<In, Bit>,
    /// Per-beat information carried to the output unchanged.
    pub in_tag: Signal<In, Bits<TAG>>,
    /// Lane p's order key and subgroup code.
    pub key: Vec<Signal<In, Bits<16>>>,
    pub sg: Vec<Signal<In, Bits<3>>>,
    pub out_valid: Signal<Out, Bit>,
    pub out_tag: Signal<Out, Bits<TAG>>,
    /// Subgroup g's node.
    pub node: Vec<Signal<Out, Bits<NODE>>>,
    /// Outer and inner lanes in the beat.
    pub outliers: Signal<Out, Bits<8>>,
    // level l (0 = leaves): subgroup g node p at g*size[l] + p
    lv0: Vec<Signal<Local, Bits<NODE>>>,
    lv1: Vec<Signal<Local, Bits<NODE>>>,
    lv2: Vec<Signal<Local, Bits<NODE>>>,
    lv3: Vec<Signal<Local, Bits<NODE>>>,
    c0: Vec<Signal<Local, Bits<8>>>,
    c1: Vec<Signal<Local, Bits<8>>>,
    c2: Vec<Signal<Local, Bits<8>>>,
    c3: Vec<Signal<Local, Bits<8>>>,
    cell1: Vec<MinMax4>,
    cell2: Vec<MinMax4>,
    cell3: Vec<MinMax4>,
    reg1: Vec<Reg<Bits<NODE>>>,
    reg2: Vec<Reg<Bits<NODE>>>,
    reg3: Vec<Reg<Bits<NODE>>>,
    cnt1: Vec<Reg<Bits<8>>>,
    cnt2: Vec<Reg<Bits<8>>>,
    cnt3: Vec<Reg<Bits<8>>>,
    // beat valid and tag after stage s at index s-1
    vld: Vec<Reg<Bit>>,
    tag: Vec<Reg<Bits<TAG>>>,
    // ... and at level l as locals
    vl: Vec<Signal<Local, Bit>>,
    tl: Vec<Signal<Local, Bits<TAG>>>,
    idx: Vec<Constant<Bits<3>>>,
    absent: Constant<Bits<NODE>>,
    zero8: Constant<Bits<8>>,
    one8: Constant<Bits<8>>,
    sg_inner: Constant<Bits<3>>,
    sg_olo: Constant<Bits<3>>,
    sg_ohi: Constant<Bits<3>>,
    leaf_hi: Constant<Bits<NODE>>,
    leaf_present: Constant<Bits<NODE>>,
    tmp_key: Signal<Local, Bits<16>>,
    _n: usize,
    /// Nodes per subgroup at level l.
    _size: [usize; MAX_STAGES + 1],
    /// Stage s exists; it combines 4 children (`_full`) or 2 (`_half`).
    _on: [usize; MAX_STAGES + 1],
    _full: [usize; MAX_STAGES + 1],
    _half: [usize; MAX_STAGES + 1],
    /// One lane: stage 1 only registers it, so the tree is never
    /// combinational.
    _single: [usize; MAX_STAGES + 1],
    /// Level l is the output.
    _last: [usize; MAX_STAGES + 1],
    _stages: usize,
}

impl ExtremeTree {
    pub fn new(lanes: usize) -> Self {
        assert!(lanes.is_power_of_two() && (1..=64).contains(&lanes));
        let mut size = [0; MAX_STAGES + 1];
        let mut on = [0; MAX_STAGES + 1];
        let mut full = [0; MAX_STAGES + 1];
        let mut half = [0; MAX_STAGES + 1];
        let mut last = [0; MAX_STAGES + 1];
        let mut single = [0; MAX_STAGES + 1];
        size[0] = lanes;
        let mut stages = 0;
        if lanes == 1 {
            on[1] = 1;
            single[1] = 1;
            size[1] = 1;
            stages = 1;
        }
        for s in 1..=MAX_STAGES {
            let a = size[s - 1];
            if a > 1 {
                on[s] = 1;
                full[s] = (a >= 4) as usize;
                half[s] = (a == 2) as usize;
                size[s] = a.div_ceil(4);
                stages = s;
            }
        }
        last[stages] = 1;
        let nodes = |l: usize| (0..SUBGROUPS * size[l]).map(|_| Default::default()).collect::<Vec<_>>();
        let counts = |l: usize| (0..size[l]).map(|_| Default::default()).collect::<Vec<_>>();
        let cells = |l: usize| (0..SUBGROUPS * size[l]).map(|_| MinMax4::default()).collect::<Vec<_>>();
        let regs = |l: usize| (0..SUBGROUPS * size[l]).map(|_| Reg::default()).collect::<Vec<_>>();
        let cnts = |l: usize| (0..size[l]).map(|_| Reg::default()).collect::<Vec<_>>();
        ExtremeTree {
            clock: Default::default(),
            reset: Default::default(),
            in_valid: Default::default(),
            in_tag: Default::default(),
            key: (0..lanes).map(|_| Default::default()).collect(),
            sg: (0..lanes).map(|_| Default::default()).collect(),
            out_valid: Default::default(),
            out_tag: Default::default(),
            node: (0..SUBGROUPS).map(|_| Default::default()).collect(),
            outliers: Default::default(),
            lv0: nodes(0),
            lv1: nodes(1),
            lv2: nodes(2),
            lv3: nodes(3),
            c0: counts(0),
            c1: counts(1),
            c2: counts(2),
            c3: counts(3),
            cell1: cells(1),
            cell2: cells(2),
            cell3: cells(3),
            reg1: regs(1),
            reg2: regs(2),
            reg3: regs(3),
            cnt1: cnts(1),
            cnt2: cnts(2),
            cnt3: cnts(3),
            vld: (0..stages).map(|_| Reg::default()).collect(),
            tag: (0..stages).map(|_| Reg::default()).collect(),
            vl: (0..=stages).map(|_| Default::default()).collect(),
            tl: (0..=stages).map(|_| Default::default()).collect(),
            idx: (0..SUBGROUPS).map(|g| Constant::new((g as u64).into())).collect(),
            absent: Constant::new(ABSENT.into()),
            zero8: Constant::new(0u64.into()),
            one8: Constant::new(1u64.into()),
            sg_inner: Constant::new(2u64.into()),
            sg_olo: Constant::new(0u64.into()),
            sg_ohi: Constant::new(4u64.into()),
            leaf_hi: Constant::new(16u64.into()),
            leaf_present: Constant::new((1u64 << 32).into()),
            tmp_key: Default::default(),
            _n: lanes,
            _size: size,
            _on: on,
            _full: full,
            _half: half,
            _single: single,
            _last: last,
            _stages: stages,
        }
    }

    /// Register stages between input and output.
    pub fn latency(lanes: usize) -> usize {
        let mut a = lanes;
        let mut s = 0;
        while a > 1 {
            a = a.div_ceil(4);
            s += 1;
        }
        s.max(1)
    }
}

/// Per stage: number s, index s-1, the level before and after (node and count
/// locals), and the stage's cells and registers.
macro_rules! extreme_tree_logic {
    ($([$s:tt, $r:tt, $prev:ident, $prevc:ident, $cur:ident, $curc:ident, $cell:ident, $reg:ident, $cnt:ident]),*) => {
        impl Logic for ExtremeTree {
            #[hdl_gen]
            fn update(&mut self) {
                // leaves: a lane is its subgroup's node, present, min = max = key.
                // Not gated by in_valid (its fan-out to every leaf was a
                // critical path): a consumer takes the nodes only with
                // out_valid.
                for n in self._n..(self._n + 1) {
                    for p in 0..self._n {
                        self.tmp_key.next = self.key[p].val();
                        self.c0[p].next = self.zero8.val();
                        if (self.sg[p].val() == self.sg_olo.val())
                            | (self.sg[p].val() == self.sg_inner.val())
                            | (self.sg[p].val() == self.sg_ohi.val())
                        {
                            self.c0[p].next = self.one8.val();
                        }
                        for g in 0..5 {
                            self.lv0[g * n + p].next = self.absent.val();
                            if self.sg[p].val() == self.idx[g].val() {
                                self.lv0[g * n + p].next = self.leaf_present.val()
                                    | (bit_cast::<NODE, 16>(self.tmp_key.val()) << self.leaf_hi.val())
                                    | bit_cast::<NODE, 16>(self.tmp_key.val());
                            }
                        }
                    }
                }
                self.vl[0].next = self.in_valid.val();
                self.tl[0].next = self.in_tag.val();
                $(
                for _on in 0..self._on[$s] {
                    self.vld[$r].clock.next = self.clock.val();
                    self.vld[$r].reset.next = self.reset.val();
                    self.vld[$r].en.next = true;
                    self.vld[$r].d.next = self.vl[$r].val();
                    self.vl[$s].next = self.vld[$r].q.val();
                    self.tag[$r].clock.next = self.clock.val();
                    self.tag[$r].reset.next = self.reset.val();
                    self.tag[$r].en.next = true;
                    self.tag[$r].d.next = self.tl[$r].val();
                    self.tl[$s].next = self.tag[$r].q.val();
                    for z in self._size[$s]..(self._size[$s] + 1) {
                        for y in self._size[$r]..(self._size[$r] + 1) {
                            for p in 0..self._size[$s] {
                                self.$cnt[p].clock.next = self.clock.val();
                                self.$cnt[p].reset.next = self.reset.val();
                                self.$cnt[p].en.next = true;
                                self.$curc[p].next = self.$cnt[p].q.val();
                                for g in 0..5 {
                                    self.$reg[g * z + p].clock.next = self.clock.val();
                                    self.$reg[g * z + p].reset.next = self.reset.val();
                                    self.$reg[g * z + p].en.next = true;
                                    self.$reg[g * z + p].d.next = self.$cell[g * z + p].y.val();
                                    self.$cur[g * z + p].next = self.$reg[g * z + p].q.val();
                                    self.$cell[g * z + p].a.next = self.$prev[g * y + 4 * p].val();
                                }
                            }
                            for _two in 0..(self._full[$s] + self._half[$s]) {
                                for p in 0..self._size[$s] {
                                    for g in 0..5 {
                                        self.$cell[g * z + p].b.next = self.$prev[g * y + 4 * p + 1].val();
                                    }
                                }
                            }
                            for _one in 0..self._single[$s] {
                                for g in 0..5 {
                                    self.$cell[g * z].b.next = self.absent.val();
                                    self.$cell[g * z].c.next = self.absent.val();
                                    self.$cell[g * z].d.next = self.absent.val();
                                }
                                self.$cnt[0].d.next = self.$prevc[0].val();
                            }
                            for _f in 0..self._full[$s] {
                                for p in 0..self._size[$s] {
                                    for g in 0..5 {
                                        self.$cell[g * z + p].c.next = self.$prev[g * y + 4 * p + 2].val();
                                        self.$cell[g * z + p].d.next = self.$prev[g * y + 4 * p + 3].val();
                                    }
                                    self.$cnt[p].d.next = self.$prevc[4 * p].val()
                                        + self.$prevc[4 * p + 1].val()
                                        + self.$prevc[4 * p + 2].val()
                                        + self.$prevc[4 * p + 3].val();
                                }
                            }
                            for _h in 0..self._half[$s] {
                                for p in 0..self._size[$s] {
                                    for g in 0..5 {
                                        self.$cell[g * z + p].c.next = self.absent.val();
                                        self.$cell[g * z + p].d.next = self.absent.val();
                                    }
                                    self.$cnt[p].d.next = self.$prevc[2 * p].val() + self.$prevc[2 * p + 1].val();
                                }
                            }
                        }
                    }
                }
                )*
                // the output is the last level's single node per subgroup
                for _l in 0..self._last[0] {
                    for g in 0..5 {
                        self.node[g].next = self.lv0[g].val();
                    }
                    self.outliers.next = self.c0[0].val();
                    self.out_valid.next = self.vl[0].val();
                    self.out_tag.next = self.tl[0].val();
                }
                $(
                for _l in 0..self._last[$s] {
                    for g in 0..5 {
                        self.node[g].next = self.$cur[g].val();
                    }
                    self.outliers.next = self.$curc[0].val();
                    self.out_valid.next = self.vl[$s].val();
                    self.out_tag.next = self.tl[$s].val();
                }
                )*
            }
        }
    };
}

extreme_tree_logic!(
    [1, 0, lv0, c0, lv1, c1, cell1, reg1, cnt1],
    [2, 1, lv1, c1, lv2, c2, cell2, reg2, cnt2],
    [3, 2, lv2, c2, lv3, c3, cell3, reg3, cnt3]
);
