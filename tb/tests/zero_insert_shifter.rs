//! zero-insert-shifter (spec §3.1) against the behavioural model
//! `sim::shifter::zero_insert`, on every `zero-insert-shifter` model of
//! tb/models.toml, RTL and gate level, with the valid/ready pipeline checks
//! of `tb::pipe` (nothing lost, duplicated, invented or reordered, held
//! beats stable, the manifest latency, the drain). The shown beat is the
//! input expanded: element j in the lane of the j-th set mask bit, every
//! clear lane 0. Input lanes past popcount(mask) are ignored by the spec,
//! so beats carry random data there.

use sim::shifter::{mask_bits, zero_insert};
use tb::coverage::Coverage;
use tb::pipe::{self, MaskedBeat, Unit};
use tb::stim::Xorshift;
use tb::{prop, Model, PortId};

const UNIT: &str = "zero-insert-shifter";

/// Per model; 64 lanes at -O0 is the slowest.
const CASES: u32 = 300;
const NET_CASES: u32 = 150;

const POINTS: &[&str] = &["mask all set", "mask none set", "mask single lane", "noise in lanes past popcount(mask)"];

/// The ports past the handshake; a beat's data are compacted elements,
/// lanes past popcount(mask) don't-care.
struct Insert {
    n: usize,
    w: usize,
    in_data: PortId,
    in_mask: PortId,
    out_data: PortId,
}

impl Insert {
    fn of(m: &Model) -> Insert {
        let (n, w) = pipe::lanes(m.info());
        let [in_data, in_mask, out_data] = ["in_data", "in_mask", "out_data"].map(|p| m.port(p));
        Insert { n, w, in_data, in_mask, out_data }
    }
}

impl Unit for Insert {
    type Beat = MaskedBeat;
    /// `out_data`.
    type Out = Vec<u64>;

    fn drive(&self, m: &mut Model, b: &MaskedBeat) {
        m.set_lanes(self.in_data, &b.data);
        m.set_u128(self.in_mask, b.mask);
    }

    fn noise(&self, m: &mut Model, rng: &mut Xorshift) {
        m.set_lanes(self.in_data, &pipe::noise_lanes(rng, self.n, self.w));
        m.set_u128(self.in_mask, pipe::noise_mask(rng, self.n));
    }

    fn read(&self, m: &Model) -> Vec<u64> {
        m.get_lanes(self.out_data)
    }

    fn expected(&self, b: &MaskedBeat) -> Vec<u64> {
        zero_insert(&b.data, &mask_bits(b.mask, self.n))
    }

    fn describe(&self, b: &MaskedBeat) -> String {
        format!("mask {:#x}, data {:x?}", b.mask, b.data)
    }

    fn cover(&self, b: &MaskedBeat, cov: &Coverage) {
        let count = b.mask.count_ones() as usize;
        cov.hit_if("mask all set", b.mask == pipe::full(self.n));
        cov.hit_if("mask none set", b.mask == 0);
        cov.hit_if("mask single lane", count == 1);
        cov.hit_if("noise in lanes past popcount(mask)", b.data[count..].iter().any(|&v| v != 0));
    }
}

#[test]
fn rtl_matches_model() {
    pipe::sweep(
        "zero_insert",
        UNIT,
        false,
        prop::cases(CASES),
        POINTS,
        Insert::of,
        pipe::masked_cases,
        pipe::directed_masked_cases,
    );
}

#[test]
fn netlist_matches_model() {
    pipe::sweep(
        "zero_insert",
        UNIT,
        true,
        prop::cases(NET_CASES),
        POINTS,
        Insert::of,
        pipe::masked_cases,
        pipe::directed_masked_cases,
    );
}

/// Every mask of the models up to 16 lanes, back to back at full rate.
#[test]
fn every_mask_at_full_rate() {
    pipe::every_mask_at_full_rate("zero_insert_full_rate", UNIT, Insert::of);
}

/// A beat held under backpressure for many cycles, while the source keeps
/// offering the next one, comes out unchanged and is followed by the next.
#[test]
fn long_backpressure_holds_and_resumes() {
    pipe::long_backpressure("zero_insert_backpressure", UNIT, Insert::of);
}
