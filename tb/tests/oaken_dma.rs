//! The end-to-end Oaken DMA path (docs/spec.md §2, §4, §10; issue: the
//! whole DMA path): token vectors of several interleaved sequences, of
//! different lengths, go quantization engine -> MMU writes -> memory (random
//! latency and backpressure) -> MMU burst reads -> dequantization engine,
//! all three on RTL. Every element read back equals `sim`'s round trip of
//! the token written; every MMU response beat equals the model MMU's. One
//! sequence runs out of pages: its failing write is refused, its data so
//! far reads back intact, it is freed, and a new sequence takes its pages,
//! while the others continue unharmed.

use proptest::prelude::*;
use sim::oaken::mmu::{Mmu, MmuParams};
use sim::oaken::params::OakenParams;
use sim::oaken::thresholds::Kv;
use tb::coverage::Coverage;
use tb::oaken::{expected_table, TableWrite};
use tb::oaken_cases;
use tb::oaken_dma::{self, kv_of, Action, DmaStalls};
use tb::prop::run_property_on;
use tb::stalls::{self, Stall};
use tb::{models, prop, Model};

const POINTS: &[&str] = &[
    "token stored",
    "write out of pages",
    "sequence freed",
    "sequence opened after a free",
    "read",
    "record decoded",
    "token stream split over pages",
    "placement not bus-aligned",
    "read stream over several bursts",
    "sparse beat across two lists",
    "memory write backpressure",
    "memory read gap",
    "quantizer in_ready low",
    "quantizer output held",
    "d_ready low",
    "s_ready low",
    "dequantizer output held",
];

/// Sequences (id, tokens per layer): the first is long enough to run out
/// of pages; `LATE` starts after it is freed.
const SEQS: [(u16, usize); 3] = [(11, 48), (22, 9), (33, 14)];
const LATE: (u16, usize) = (44, 7);

fn models_of() -> (&'static tb::ModelInfo, &'static tb::ModelInfo, &'static tb::ModelInfo) {
    (models::get("oaken_quantizer_l4"), models::get("oaken_mmu_dma"), models::get("oaken_dequantizer_l4"))
}

fn setup() -> (OakenParams, MmuParams, Vec<TableWrite>) {
    let (qi, mi, _) = models_of();
    let qp: OakenParams = serde_json::from_str(qi.params_json).expect("quantizer parameters");
    let mp: MmuParams = serde_json::from_str(mi.params_json).expect("MMU parameters");
    let pool = oaken_cases::pool(&qp, 5);
    let writes =
        pool.writes().into_iter().map(|(l, kv, raw)| TableWrite { layer: l as u8, v: kv == Kv::V, raw }).collect();
    (qp, mp, writes)
}

fn plan_for(seed: u64) -> Vec<Action> {
    let (qp, mp, writes) = setup();
    let (table, _) = expected_table(&qp, &writes);
    let pool = oaken_cases::pool(&qp, 5);
    let mut pick = |seq: u16, k: usize, layer: u8| {
        let i = (seed as usize).wrapping_add(31 * seq as usize + 7 * k);
        pool.token(layer as usize, kv_of(layer), i).to_vec()
    };
    oaken_dma::plan(&qp, &mp, &table, &mut pick, &SEQS, LATE)
}

/// The plan does what the test is for, by the model MMU, at every seed the
/// runs use (0..4): the long sequence, and only it, runs out of pages; the
/// late one reuses freed pages.
#[test]
fn plan_exhausts_the_long_sequence_only() {
    for seed in 0..4 {
        plan_exhausts(seed);
    }
}

fn plan_exhausts(seed: u64) {
    let (qp, mp, writes) = setup();
    let (table, _) = expected_table(&qp, &writes);
    let a = plan_for(seed);
    let mut mmu = Mmu::new(mp.clone()).unwrap();
    let mut failed = Vec::new();
    for act in &a {
        if let Action::Write { seq, layer, x, .. } = act {
            let (set, _) = table.lookup(*layer as usize, kv_of(*layer));
            let counts = sim::oaken::quantizer::quantize_token(&qp, &set, x).counts;
            if let Err(e) = mmu.write(*seq, *layer as usize, &counts) {
                failed.push((*seq, e.code()));
            }
        }
        if let Action::Free { seq } = act {
            mmu.free(*seq).unwrap();
        }
    }
    assert_eq!(failed, vec![(SEQS[0].0, 4)], "only the long sequence fails, with OutOfPages");
    let writes = |s: u16| a.iter().filter(|x| matches!(x, Action::Write { seq, .. } if *seq == s)).count();
    assert!(writes(SEQS[0].0) >= 8, "the long sequence stores several tokens first");
    assert_eq!(writes(LATE.0), LATE.1 * mp.layers, "the late sequence is written whole");
    let reads = a.iter().filter(|x| matches!(x, Action::Read { .. })).count();
    assert!(reads >= 1 + mp.layers + 3 * mp.layers * mp.heads);
}

#[derive(Clone, Debug)]
struct Case {
    stalls: DmaStalls,
    seed: u64,
}

fn case() -> impl Strategy<Value = Case> {
    let st = (
        stalls::stall(),
        stalls::stall(),
        stalls::stall(),
        stalls::stall(),
        stalls::stall(),
        1u32..40,
        stalls::stall(),
    );
    (st, 0u64..4).prop_map(|((q_in, q_out, rsp, mem_write, mem_read, read_latency, d_out), seed)| Case {
        stalls: DmaStalls { q_in, q_out, rsp, mem_write, mem_read, read_latency, d_out },
        seed,
    })
}

#[test]
fn dma_round_trip_on_rtl() {
    let (qi, mi, di) = models_of();
    let (qp, mp, writes) = setup();
    // two fixed runs first, one with no stall at all and one with every
    // stream end stalled at random: together, whatever the seed, they reach
    // every point (checked on their own), the random cases add to them
    let fixed = Coverage::new("oaken DMA path, fixed runs (RTL)", POINTS);
    let none = DmaStalls {
        q_in: Stall::Never,
        q_out: Stall::Never,
        rsp: Stall::Never,
        mem_write: Stall::Never,
        mem_read: Stall::Never,
        read_latency: 1,
        d_out: Stall::Never,
    };
    let r = Stall::Random { p: 64 };
    let all = DmaStalls {
        q_in: r.clone(),
        q_out: r.clone(),
        rsp: r.clone(),
        mem_write: r.clone(),
        mem_read: r.clone(),
        read_latency: 8,
        d_out: r,
    };
    for (what, st, seed) in [("no stalls", &none, 0u64), ("every end stalled", &all, 1)] {
        let mut ms: Vec<Model> = [qi, mi, di].iter().map(|i| Model::new(i)).collect();
        for m in ms.iter_mut() {
            m.reset(1);
        }
        let [q, mm, d] = &mut ms[..] else { unreachable!() };
        let actions = plan_for(seed);
        let r = oaken_dma::run(q, mm, d, &qp, &mp, &writes, &actions, st, seed, &fixed).unwrap();
        println!(
            "{what}: {} actions, {} tokens stored, {} records decoded, {} bytes written, {} read, {} cycles",
            actions.len(),
            r.tokens_stored,
            r.records.len(),
            r.bytes_written,
            r.bytes_read,
            r.cycles
        );
    }
    fixed.check();
    let cov = Coverage::new("oaken DMA path (quantizer + MMU + memory + dequantizer, RTL)", POINTS);
    cov.absorb(&fixed);
    run_property_on("oaken_dma_rtl", &[qi, mi, di], case(), prop::cases(4), |ms, c| {
        let [q, mm, d] = ms else { unreachable!() };
        let actions = plan_for(c.seed);
        let r = oaken_dma::run(q, mm, d, &qp, &mp, &writes, &actions, &c.stalls, c.seed, &cov)?;
        // every stored token of every read (sequence, layer, head) came back
        if r.records.is_empty() {
            return Err("no record decoded".into());
        }
        Ok(())
    });
    println!("{}", cov.report());
    cov.check();
}
