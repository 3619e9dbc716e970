//! zero-remove-shifter (spec §3) against the behavioural model
//! `sim::shifter::zero_remove`, on every `zero-remove-shifter` model of
//! tb/models.toml, RTL and gate level, with the valid/ready pipeline checks
//! of `tb::pipe` (nothing lost, duplicated, invented or reordered, held
//! beats stable, the manifest latency, the drain). The shown beat is the
//! input compacted: `out_count`, kept lanes in order from lane 0, every lane
//! past the count 0.

use sim::shifter::{mask_bits, zero_remove};
use tb::coverage::Coverage;
use tb::pipe::{self, MaskedBeat, Unit};
use tb::stim::Xorshift;
use tb::{prop, Model, PortId};

const UNIT: &str = "zero-remove-shifter";

/// Per model; 64 lanes at -O0 is the slowest.
const CASES: u32 = 300;
const NET_CASES: u32 = 150;

const POINTS: &[&str] = &["keep all lanes", "keep no lane", "keep a single lane", "drop a single lane"];

/// What the outputs show while `out_valid` is high.
#[derive(Clone, PartialEq, Debug)]
struct Shown {
    count: u64,
    data: Vec<u64>,
}

/// The ports past the handshake; a beat's `mask` is `in_keep`.
struct Remove {
    n: usize,
    w: usize,
    in_data: PortId,
    in_keep: PortId,
    out_data: PortId,
    out_count: PortId,
}

impl Remove {
    fn of(m: &Model) -> Remove {
        let (n, w) = pipe::lanes(m.info());
        let [in_data, in_keep, out_data, out_count] =
            ["in_data", "in_keep", "out_data", "out_count"].map(|p| m.port(p));
        Remove { n, w, in_data, in_keep, out_data, out_count }
    }
}

impl Unit for Remove {
    type Beat = MaskedBeat;
    type Out = Shown;

    fn drive(&self, m: &mut Model, b: &MaskedBeat) {
        m.set_lanes(self.in_data, &b.data);
        m.set_u128(self.in_keep, b.mask);
    }

    fn noise(&self, m: &mut Model, rng: &mut Xorshift) {
        m.set_lanes(self.in_data, &pipe::noise_lanes(rng, self.n, self.w));
        m.set_u128(self.in_keep, pipe::noise_mask(rng, self.n));
    }

    fn read(&self, m: &Model) -> Shown {
        Shown { count: m.get(self.out_count), data: m.get_lanes(self.out_data) }
    }

    fn expected(&self, b: &MaskedBeat) -> Shown {
        let (data, count) = zero_remove(&b.data, &mask_bits(b.mask, self.n));
        Shown { count: count as u64, data }
    }

    fn describe(&self, b: &MaskedBeat) -> String {
        format!("keep {:#x}, data {:x?}", b.mask, b.data)
    }

    fn cover(&self, b: &MaskedBeat, cov: &Coverage) {
        let all = pipe::full(self.n);
        cov.hit_if("keep all lanes", b.mask == all);
        cov.hit_if("keep no lane", b.mask == 0);
        cov.hit_if("keep a single lane", b.mask.count_ones() == 1);
        cov.hit_if("drop a single lane", (all & !b.mask).count_ones() == 1);
    }
}

#[test]
fn rtl_matches_model() {
    pipe::sweep(
        "zero_remove",
        UNIT,
        false,
        prop::cases(CASES),
        POINTS,
        Remove::of,
        pipe::masked_cases,
        pipe::directed_masked_cases,
    );
}

#[test]
fn netlist_matches_model() {
    pipe::sweep(
        "zero_remove",
        UNIT,
        true,
        prop::cases(NET_CASES),
        POINTS,
        Remove::of,
        pipe::masked_cases,
        pipe::directed_masked_cases,
    );
}

/// Every keep mask of the models up to 16 lanes, back to back at full rate.
#[test]
fn every_mask_at_full_rate() {
    pipe::every_mask_at_full_rate("zero_remove_full_rate", UNIT, Remove::of);
}

/// A beat held under backpressure for many cycles, while the source keeps
/// offering the next one, comes out unchanged and is followed by the next.
#[test]
fn long_backpressure_holds_and_resumes() {
    pipe::long_backpressure("zero_remove_backpressure", UNIT, Remove::of);
}
