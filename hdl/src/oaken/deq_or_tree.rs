//! A balanced OR tree over the dequantizer aligner's L + 1 one-hot leaves
//! (spec §4.3): the aligner selects a value by a one-hot count (the count
//! taken, the count dropped) or tests a thermometer at the count, and the
//! tree keeps that select log2(L) levels deep; written as a chain of ifs,
//! a wide one-hot select maps to a serial chain. The aligner instantiates
//! one per select.
//! Paper: Oaken (ISCA 2025) §5.2 (buffers aligning the dense and sparse
//! paths). Spec: docs/spec.md §4.3.

use crate::prim::vecs::sigs;
use rust_hdl::prelude::*;

/// `N`: the leaves' width (16 for values, 1 for bits).
#[derive(LogicBlock)]
pub struct DeqOrTree<const N: usize> {
    /// the leaves, at most one of them non-zero for a one-hot select
    pub leaf: Vec<Signal<In, Bits<N>>>,
    /// the OR of every leaf
    pub y: Signal<Out, Bits<N>>,
    // the tree's levels after the leaves (7 levels reach one node for up
    // to 128 leaves)
    t1: Vec<Signal<Local, Bits<N>>>,
    t2: Vec<Signal<Local, Bits<N>>>,
    t3: Vec<Signal<Local, Bits<N>>>,
    t4: Vec<Signal<Local, Bits<N>>>,
    t5: Vec<Signal<Local, Bits<N>>>,
    t6: Vec<Signal<Local, Bits<N>>>,
    t7: Vec<Signal<Local, Bits<N>>>,
    // pairs and pass-through nodes per level
    _tp1: usize,
    _tr1: usize,
    _tp2: usize,
    _tr2: usize,
    _tp3: usize,
    _tr3: usize,
    _tp4: usize,
    _tr4: usize,
    _tp5: usize,
    _tr5: usize,
    _tp6: usize,
    _tr6: usize,
    _tp7: usize,
    _tr7: usize,
}

/// The shape of a balanced OR tree over `leaves` leaves (1 to 128): nodes
/// per level (`tn[0]` the leaves, `tn[7]` the root), and per level after
/// the leaves the pairs ORed (`tp`) and the node passed through (`tr`).
pub fn levels(leaves: usize) -> ([usize; 8], [usize; 7], [usize; 7]) {
    let mut tn = [0usize; 8];
    let (mut tp, mut tr) = ([0usize; 7], [0usize; 7]);
    tn[0] = leaves;
    for k in 0..7 {
        tp[k] = tn[k] / 2;
        tr[k] = tn[k] % 2;
        tn[k + 1] = tp[k] + tr[k];
    }
    assert_eq!(tn[7], 1, "OR tree too shallow");
    (tn, tp, tr)
}

impl<const N: usize> DeqOrTree<N> {
    /// A tree over `leaves` leaves (1 to 128).
    pub fn new(leaves: usize) -> Self {
        let (tn, tp, tr) = levels(leaves);
        DeqOrTree {
            leaf: sigs(tn[0]),
            y: Default::default(),
            t1: sigs(tn[1]),
            t2: sigs(tn[2]),
            t3: sigs(tn[3]),
            t4: sigs(tn[4]),
            t5: sigs(tn[5]),
            t6: sigs(tn[6]),
            t7: sigs(tn[7]),
            _tp1: tp[0],
            _tr1: tr[0],
            _tp2: tp[1],
            _tr2: tr[1],
            _tp3: tp[2],
            _tr3: tr[2],
            _tp4: tp[3],
            _tr4: tr[3],
            _tp5: tp[4],
            _tr5: tr[4],
            _tp6: tp[5],
            _tr6: tr[5],
            _tp7: tp[6],
            _tr7: tr[6],
        }
    }
}

impl<const N: usize> Logic for DeqOrTree<N> {
    #[hdl_gen]
    fn update(&mut self) {
        for i in 0..self._tp1 {
            self.t1[i].next = self.leaf[2 * i].val() | self.leaf[2 * i + 1].val();
        }
        for g in self._tp1..(self._tp1 + self._tr1) {
            self.t1[g].next = self.leaf[2 * g].val();
        }
        for i in 0..self._tp2 {
            self.t2[i].next = self.t1[2 * i].val() | self.t1[2 * i + 1].val();
        }
        for g in self._tp2..(self._tp2 + self._tr2) {
            self.t2[g].next = self.t1[2 * g].val();
        }
        for i in 0..self._tp3 {
            self.t3[i].next = self.t2[2 * i].val() | self.t2[2 * i + 1].val();
        }
        for g in self._tp3..(self._tp3 + self._tr3) {
            self.t3[g].next = self.t2[2 * g].val();
        }
        for i in 0..self._tp4 {
            self.t4[i].next = self.t3[2 * i].val() | self.t3[2 * i + 1].val();
        }
        for g in self._tp4..(self._tp4 + self._tr4) {
            self.t4[g].next = self.t3[2 * g].val();
        }
        for i in 0..self._tp5 {
            self.t5[i].next = self.t4[2 * i].val() | self.t4[2 * i + 1].val();
        }
        for g in self._tp5..(self._tp5 + self._tr5) {
            self.t5[g].next = self.t4[2 * g].val();
        }
        for i in 0..self._tp6 {
            self.t6[i].next = self.t5[2 * i].val() | self.t5[2 * i + 1].val();
        }
        for g in self._tp6..(self._tp6 + self._tr6) {
            self.t6[g].next = self.t5[2 * g].val();
        }
        for i in 0..self._tp7 {
            self.t7[i].next = self.t6[2 * i].val() | self.t6[2 * i + 1].val();
        }
        for g in self._tp7..(self._tp7 + self._tr7) {
            self.t7[g].next = self.t6[2 * g].val();
        }
        self.y.next = self.t7[0].val();
    }
}
