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

    /// The block equals `u32::wrapping_add` of the amounts, every cycle,
    /// through each chunk's carry and the wrap at 2^32 (reached by a run of
    /// 255s from a start near the top, loaded through the port itself).
    #[test]
    fn equals_wrapping_sum() {
        let mut c = StatCounter::default();
        c.connect_all();
        edge(&mut c, true, false, 0);
        assert_eq!(count(&c), 0);
        let mut model = 0u32;
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut carries = [0u64; 4];
        // realistic first: mostly small amounts, idle cycles between
        for i in 0..300_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let en = x % 4 != 0;
            let n = match (x >> 8) % 16 {
                0 => 255,
                1 => 0,
                _ => ((x >> 16) % 17) as u8,
            };
            // after 200k cycles, jump with 255s toward the top bits
            let n = if i > 200_000 { 255 } else { n };
            let before = model;
            edge(&mut c, false, en, n);
            if en {
                model = model.wrapping_add(n as u32);
            }
            for (k, cnt) in carries.iter_mut().enumerate() {
                *cnt += (before >> (8 * k) != model >> (8 * k)) as u64;
            }
            assert_eq!(count(&c), model, "cycle {i}: en {en} n {n}");
        }
        // chunks 1 and 2 both changed; chunk 3 needs 2^24: covered below
        assert!(carries[1] > 0 && carries[2] > 0, "carries {carries:?}");
        // 2^32 / 255 ~ 16.8M edges: from reset, add 255 until the wrap
        let mut wraps = 0;
        edge(&mut c, true, false, 0);
        model = 0;
        for _ in 0..(1u64 << 32) / 255 + 2 {
            let next = model.wrapping_add(255);
            wraps += (next < model) as u32;
            model = next;
            edge(&mut c, false, true, 255);
            assert_eq!(count(&c), model);
        }
        assert_eq!(wraps, 1);
    }
}
