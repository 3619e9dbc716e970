//! Register with synchronous, active-high reset and enable (spec §5.1).
//! rust-hdl's own DFF initialises through an `initial` block, which ASIC
//! synthesis ignores, so every kvforge register is this one instead.

use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct Reg<T: Synth> {
    /// Rising-edge clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: q takes the reset value at the next edge.
    pub reset: Signal<In, Bit>,
    /// Load enable: q takes d at the next edge (reset wins).
    pub en: Signal<In, Bit>,
    /// Next value.
    pub d: Signal<In, T>,
    /// Registered value.
    pub q: Signal<Out, T>,
    _init: T,
}

impl<T: Synth> Reg<T> {
    pub fn new(init: T) -> Self {
        Reg {
            clock: Default::default(),
            reset: Default::default(),
            en: Default::default(),
            d: Default::default(),
            q: Default::default(),
            _init: init,
        }
    }
}

impl<T: Synth> Default for Reg<T> {
    fn default() -> Self {
        Self::new(T::default())
    }
}

impl<T: Synth> Logic for Reg<T> {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            if self.reset.val() {
                self.q.next = self._init;
            } else if self.en.val() {
                self.q.next = self.d.val();
            }
        }
    }
    fn connect(&mut self) {
        self.q.connect();
    }
    fn hdl(&self) -> Verilog {
        Verilog::Custom(format!(
            "always @(posedge clock) begin\n  if (reset) q <= {};\n  else if (en) q <= d;\nend",
            self._init.verilog()
        ))
    }
    fn timing(&self) -> Vec<TimingInfo> {
        vec![TimingInfo {
            name: "reg".into(),
            clock: "clock".into(),
            inputs: vec!["d".into(), "en".into(), "reset".into()],
            outputs: vec!["q".into()],
        }]
    }
}

/// `impl Logic` for a block whose registers are `Reg` fields, with their
/// wiring written once: every listed register gets the block's clock and
/// reset, holds (`en` low, `d = q`) unless the body loads it, and, after
/// the body, `d` of each `reg & mask` pair is ANDed with its value mask (a
/// constant whose bits above the register's largest value are 0, so
/// synthesis drops those bits). The body is the `#[hdl_gen]` update itself:
/// a rust-hdl kernel cannot call helpers, so this is a macro. The caller
/// writes `#[hdl_gen]` and `self` (the code `hdl_gen` adds must see the same
/// `self` as the body, which macro hygiene keeps apart otherwise).
///
/// ```text
/// reg_logic!(Block; regs [a, b]; masks [a & k_m_a];
///     #[hdl_gen] fn update(&mut self) { /* loads of a and b */ });
/// ```
macro_rules! reg_logic {
    ($ty:ty; regs [$($r:ident),* $(,)?]; masks [$($m:ident & $k:ident),* $(,)?];
     $hp:tt $hdl:tt fn update(&mut $s:ident) { $($body:tt)* }) => {
        impl Logic for $ty {
            $hp $hdl
            fn update(&mut $s) {
                clock!($s, clock, $($r),*);
                $(
                    $s.$r.reset.next = $s.reset.val();
                    $s.$r.en.next = false;
                    $s.$r.d.next = $s.$r.q.val();
                )*
                $($body)*
                $(
                    $s.$m.d.next = $s.$m.d.val() & $s.$k.val();
                )*
            }
        }
    };
}
pub(crate) use reg_logic;
