//! Wrapping 32-bit event counter for status ports (spec §5.5): adds an 8-bit
//! amount per cycle. Four 8-bit chunks, each incremented from its own
//! register; a chunk above the lowest loads when the low chunk's add carries
//! and every chunk between is all ones, so no carry ripples more than 8 bits
//! in one cycle (a 32-bit adder missed 250 MHz on OSU018). The count is exact
//! every cycle (nothing deferred).

use super::reg::Reg;
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct StatCounter {
    /// Rising-edge clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset to 0.
    pub reset: Signal<In, Bit>,
    /// Add `n` at this edge.
    pub en: Signal<In, Bit>,
    /// Amount added when `en` (0..=255).
    pub n: Signal<In, Bits<8>>,
    /// Sum of the amounts since reset, modulo 2^32.
    pub count: Signal<Out, Bits<32>>,
    c0: Reg<Bits<8>>,
    c1: Reg<Bits<8>>,
    c2: Reg<Bits<8>>,
    c3: Reg<Bits<8>>,
    s9: Signal<Local, Bits<9>>,
    cy: Signal<Local, Bit>,
    one8: Constant<Bits<8>>,
    ff8: Constant<Bits<8>>,
    sh8: Constant<Bits<32>>,
    sh16: Constant<Bits<32>>,
    sh24: Constant<Bits<32>>,
}

impl Default for StatCounter {
    fn default() -> Self {
        StatCounter {
            clock: Default::default(),
            reset: Default::default(),
            en: Default::default(),
            n: Default::default(),
            count: Default::default(),
            c0: Reg::default(),
            c1: Reg::default(),
            c2: Reg::default(),
            c3: Reg::default(),
            s9: Default::default(),
            cy: Default::default(),
            one8: Constant::new(1u64.into()),
            ff8: Constant::new(0xFFu64.into()),
            sh8: Constant::new(8u64.into()),
            sh16: Constant::new(16u64.into()),
            sh24: Constant::new(24u64.into()),
        }
    }
}

impl Logic for StatCounter {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, c0, c1, c2, c3);
        self.c0.reset.next = self.reset.val();
        self.c1.reset.next = self.reset.val();
        self.c2.reset.next = self.reset.val();
        self.c3.reset.next = self.reset.val();
        self.s9.next = bit_cast::<9, 8>(self.c0.q.val()) + bit_cast::<9, 8>(self.n.val());
        self.cy.next = self.en.val() & self.s9.val().get_bit(8);
        self.c0.en.next = self.en.val();
        self.c0.d.next = self.s9.val().get_bits::<8>(0);
        self.c1.en.next = self.cy.val();
        self.c1.d.next = self.c1.q.val() + self.one8.val();
        self.c2.en.next = self.cy.val() & (self.c1.q.val() == self.ff8.val());
        self.c2.d.next = self.c2.q.val() + self.one8.val();
        self.c3.en.next = self.cy.val() & (self.c1.q.val() == self.ff8.val()) & (self.c2.q.val() == self.ff8.val());
        self.c3.d.next = self.c3.q.val() + self.one8.val();
        self.count.next = (bit_cast::<32, 8>(self.c3.q.val()) << self.sh24.val())
            | (bit_cast::<32, 8>(self.c2.q.val()) << self.sh16.val())
            | (bit_cast::<32, 8>(self.c1.q.val()) << self.sh8.val())
            | bit_cast::<32, 8>(self.c0.q.val());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One clock edge with `en`/`n` applied, as the netlist sees it.
    fn edge(c: &mut StatCounter, reset: bool, en: bool, n: u8) {
        c.reset.next = reset;
        c.en.next = en;
        c.n.next = (n as u64).into();
        c.clock.next = Clock { clk: false };
        assert!(simulate(c, 100));
        c.clock.next = Clock { clk: true };
        assert!(simulate(c, 100));
    }

    fn count(c: &StatCounter) -> u32 {
        c.count.val().index() as u32
    }

    /// Sets the four chunk registers to `v` between edges (white box:
    /// reaching the top bits through the port takes 2^32 / 255 edges).
    fn load(c: &mut StatCounter, v: u32) {
        c.c0.q.next = ((v & 0xFF) as u64).into();
        c.c1.q.next = ((v >> 8 & 0xFF) as u64).into();
        c.c2.q.next = ((v >> 16 & 0xFF) as u64).into();
        c.c3.q.next = ((v >> 24) as u64).into();
        assert!(simulate(c, 100));
        assert_eq!(count(c), v);
    }

    /// The block equals `u32::wrapping_add` of the amounts, every cycle,
    /// through each chunk's carry and the wrap at 2^32.
    #[test]
    fn equals_wrapping_sum() {
        let mut c = StatCounter::default();
        c.connect_all();
        edge(&mut c, true, false, 0);
        assert_eq!(count(&c), 0);
        let mut model = 0u32;
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut carries = [0u64; 4];
        let mut wraps = 0;
        // realistic first (from reset: mostly small amounts, idle cycles
        // between); then runs from loaded states just below each chunk's
        // carry and the wrap, mostly 255s
        // (and with one middle chunk all ones but not the other)
        let starts = [0x0000_FF00u32, 0x00FF_FF00, 0xFFFF_FF00, 0xFFFF_FFF0, 0x7FFF_FFC0, 0xFEFF_FF80, 0x00FF_00C0, 0x34FF_80C0, 0x0012_FFC0];
        for (run, len) in std::iter::once((None, 200_000u64)).chain(starts.iter().map(|&v| (Some(v), 3_000))) {
            if let Some(v) = run {
                load(&mut c, v);
                model = v;
            }
            for _ in 0..len {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let en = x % 4 != 0;
                let n = match (x >> 8) % 16 {
                    0 => 255,
                    1 => 0,
                    _ if run.is_some() && (x >> 12) % 8 != 0 => 255,
                    _ => ((x >> 16) % 17) as u8,
                };
                let before = model;
                edge(&mut c, false, en, n);
                if en {
                    model = model.wrapping_add(n as u32);
                }
                wraps += (model < before) as u32;
                for (k, cnt) in carries.iter_mut().enumerate() {
                    *cnt += (before >> (8 * k) != model >> (8 * k)) as u64;
                }
                assert_eq!(count(&c), model, "from {run:x?}: en {en} n {n}, before {before:#x}");
            }
        }
        assert!(carries.iter().all(|&n| n > 0) && wraps >= 2, "carries {carries:?}, wraps {wraps}");
        // a reset from a high count
        edge(&mut c, true, true, 255);
        assert_eq!(count(&c), 0);
    }
}
