//! Co-simulation of one half of the Titanus quantization unit
//! (hdl/src/titanus/quantizer.rs) against `sim::titanus::quantizer`, at
//! every `titanus-quantizer` model of tb/models.toml, on RTL and on the
//! OSU018 netlists: every record beat, `sz` word and response code in
//! order, every table-write answer, the status port at the end. Spec:
//! docs/spec.md §11.5-§11.7, §11.9, §11.13.
//!
//! Cases: sequences of KV-like INT8 tokens (offsets, scales, outlier
//! channels, decode drift that opens levels up to the limit), pruned as the
//! PU would; as a minority empty prefills, decodes before any prefill,
//! starts during a prefill, tokens before any start, prefill after decode,
//! prefill overflow, layers out of range, all-pruned and constant channels,
//! 2-bit sequences at the INT8 extremes; legal and rejected table writes
//! between and within sequences; random, bursty and blocking stalls on the
//! input and on both outputs. One 65,536-token sequence (SequenceFull) on
//! the one-beat-per-token set. Every coverage point must be reached.

use tb::coverage::Coverage;
use tb::stim::Xorshift;
use tb::titanus_quantizer::{self as tq, case, cover, params_of, run, POINTS};
use tb::{models, prop, run_property, Model, ModelInfo};

const UNIT: &str = "titanus-quantizer";

fn check(info: &'static ModelInfo, cases: u32, cov: &Coverage) {
    let p = params_of(&Model::new(info));
    let name = if info.gate_level { info.name.to_string() } else { format!("{}_rtl", info.name) };
    run_property(&name, info, case(p, 1..5), cases, |m, c| {
        let r = run(m, &p, c)?;
        cover(cov, &r);
        Ok(())
    });
}

/// The directed case (every coverage point but SequenceFull, whatever the
/// seed: few random cases may miss the rare ones).
fn directed(info: &'static ModelInfo, cov: &Coverage) {
    let p = params_of(&Model::new(info));
    let name = format!("{}_directed", info.name);
    run_property(&name, info, proptest::prelude::Just(tq::directed_case(&p, 23)), 1, |m, c| {
        let r = run(m, &p, c)?;
        cover(cov, &r);
        Ok(())
    });
}

/// The 65,536-token sequence, on a model with one beat per token (nothing
/// run on any other).
fn sequence_full(info: &'static ModelInfo, cov: &Coverage) {
    let p = params_of(&Model::new(info));
    if p.beats() != 1 {
        return;
    }
    let name = format!("{}_seqfull", info.name);
    let t = std::time::Instant::now();
    let cycles = std::sync::atomic::AtomicU64::new(0);
    run_property(&name, info, proptest::prelude::Just(tq::sequence_full_case(&p, 17)), 1, |m, c| {
        let r = run(m, &p, c)?;
        cover(cov, &r);
        cycles.store(r.cycles, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    });
    println!(
        "{name}: 65,536 + 6 tokens, {} cycles (input and record stalls 20/256), {:.1} s",
        cycles.into_inner(),
        t.elapsed().as_secs_f64()
    );
}

#[test]
fn rtl_matches_model() {
    let one_beat = models::specs().iter().any(|s| s.unit == UNIT && tq::params_of_spec(&s.params).beats() == 1);
    assert!(one_beat, "no quantizer model with one beat per token");
    models::sweep_closed(UNIT, false, 4, POINTS, POINTS, |info, cov| {
        check(info, prop::cases(60), cov);
        directed(info, cov);
        sequence_full(info, cov);
    });
}

/// Points of `reset_with_traffic_in_flight`: what a reset found in flight.
const RESET_POINTS: &[&str] = &[
    "reset with a token partly taken",
    "reset with record beats owed",
    "reset with sz words owed",
    "reset during a prefill",
];

/// Spec §11.13: a reset at a random cycle of a random case (tokens taken
/// in part, records and `sz` words owed, a prefill buffered), on every RTL
/// model: what came out before it is the model's, and afterwards the unit
/// behaves as fresh out of reset: a case that starts with tokens before
/// any start and a sequence on the reset table matches a fresh model, its
/// status counters included.
#[test]
fn reset_with_traffic_in_flight() {
    models::sweep_as_closed(UNIT, Some("reset in flight"), false, 4, RESET_POINTS, RESET_POINTS, |info, cov| {
        let p = params_of(&Model::new(info));
        let strategy = (case(p, 1..3), proptest::prelude::any::<u64>(), 0u64..1000);
        run_property(&format!("{}_reset", info.name), info, strategy, prop::cases(16), |m, (c, seed, at)| {
            // a reset somewhere in the case's first two cycles per input beat
            let beats = (c.ops.len() * p.beats()) as u64;
            let r = tq::run_until(m, &p, c, 2 + at * (2 * beats + 20) / 1000)?;
            match r.cut {
                Some(f) => {
                    cov.hit_if("reset with a token partly taken", f.partial_token);
                    cov.hit_if("reset with record beats owed", f.rec_owed > 0);
                    cov.hit_if("reset with sz words owed", f.sz_owed > 0);
                    cov.hit_if("reset during a prefill", f.prefill);
                }
                None => m.reset(1),
            }
            let after = tq::after_reset_case(&p, *seed, [c.in_stall.clone(), c.rec_stall.clone(), c.sz_stall.clone()]);
            run(m, &p, &after).map(|_| ()).map_err(|e| format!("after the reset: {e}"))
        });
    });
}

#[test]
fn netlists_match_model() {
    // the 65,536-token sequence runs on RTL only (no one-beat netlist set)
    let required: Vec<&str> = POINTS.iter().copied().filter(|&p| p != "rsp SequenceFull").collect();
    models::sweep_closed(UNIT, true, 1, POINTS, &required, |info, cov| {
        check(info, prop::cases(15), cov);
        directed(info, cov);
    });
}

/// The stimulus alone, on `sim` (no hardware needed): over the parameter
/// sets of tb/models.toml, the cases the property tests draw reach every
/// event the coverage points count, and the long case reaches SequenceFull.
#[test]
fn stimulus_reaches_every_event_on_the_model() {
    let specs: Vec<_> = models::specs().iter().filter(|s| s.unit == UNIT).collect();
    assert!(specs.len() >= 4, "tb/models.toml has {} quantizer entries", specs.len());
    let cov = Coverage::new("titanus_quantizer stimulus (model only)", POINTS);
    let mut r = Xorshift::new(0x71a7);
    let stalls = || [tb::stalls::Stall::Never, tb::stalls::Stall::Never, tb::stalls::Stall::Never];
    for s in &specs {
        let p = tq::params_of_spec(&s.params);
        p.titanus().validate().unwrap_or_else(|e| panic!("{}: {e}", s.name));
        for _ in 0..prop::cases(60) {
            let seqs = 1 + (r.next_u64() % 4) as usize;
            let c = tq::case_of(&p, seqs, r.next_u64(), tq::DEFAULT_STYLE, stalls());
            let ev = tq::model_events(&p, &c).unwrap();
            // the writes' codes, as the port would answer them
            let mut t = sim::titanus::params::ConfigTable::new(p.layers);
            let codes: Vec<u64> = c
                .ops
                .iter()
                .filter_map(|o| match o {
                    tq::Op::Write(w) => Some(tb::titanus_table::apply(&mut t, w)),
                    _ => None,
                })
                .collect();
            cover(&cov, &tq::Run { ev, tw_codes: codes, ..Default::default() });
        }
        if p.beats() == 1 {
            let c = tq::sequence_full_case(&p, 17);
            cover(&cov, &tq::Run { ev: tq::model_events(&p, &c).unwrap(), ..Default::default() });
        }
    }
    let hw = ["rec output held (backpressure)", "sz output held (backpressure)", "input blocked"];
    let required: Vec<&str> = POINTS.iter().copied().filter(|p| !hw.contains(p)).collect();
    cov.check_points(&required);
}

/// The directed case alone, on `sim`, reaches every point the stimulus
/// controls except SequenceFull at every parameter set, so that the
/// netlist runs' coverage does not hang on the random seed.
#[test]
fn directed_case_reaches_every_event_on_the_model() {
    let specs: Vec<_> = models::specs().iter().filter(|s| s.unit == UNIT).collect();
    assert!(specs.len() >= 4, "tb/models.toml has {} quantizer entries", specs.len());
    let hw = ["rec output held (backpressure)", "sz output held (backpressure)", "input blocked", "rsp SequenceFull"];
    // with 256 layers no 8-bit layer number is out of range
    let oob = ["tw rejected: layer out of range", "layer_oob"];
    for s in &specs {
        let p = tq::params_of_spec(&s.params);
        let required: Vec<&str> =
            POINTS.iter().copied().filter(|q| !hw.contains(q) && (p.layers < 256 || !oob.contains(q))).collect();
        let c = tq::directed_case(&p, 23);
        let mut t = sim::titanus::params::ConfigTable::new(p.layers);
        let codes: Vec<u64> = c
            .ops
            .iter()
            .filter_map(|o| match o {
                tq::Op::Write(w) => Some(tb::titanus_table::apply(&mut t, w)),
                _ => None,
            })
            .collect();
        let cov = Coverage::new(&format!("titanus_quantizer directed case ({})", s.name), POINTS);
        cover(&cov, &tq::Run { ev: tq::model_events(&p, &c).unwrap(), tw_codes: codes, ..Default::default() });
        cov.check_points(&required);
    }
}
