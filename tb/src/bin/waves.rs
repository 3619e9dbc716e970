//! A short co-simulation of one rtl-gen unit with its VCD waveform:
//! `cargo run --release -p tb --bin waves -- --unit oaken-quantizer -o build/waves/oaken-quantizer.vcd [--netlist]`.
//!
//! Runs the first model of `tb/models.toml` built from that unit (its
//! gate-level netlist with `--netlist`). Units with a dedicated scenario
//! (see `scenario`) are driven like the real engine and checked against
//! `sim`; any other unit gets pseudo-random inputs every cycle.

use clap::Parser;
use sim::fp16;
use sim::oaken::params::OakenParams;
use sim::testgen;
use std::path::PathBuf;
use std::process::ExitCode;
use tb::oaken::{
    check_quantizer_segment, drive_quantizer, params_of, run_quantizer_segment, QSegRun, QSegment, TableWrite, Token,
};
use tb::oaken_dequantizer::{
    check_dequantizer_segment, drive_dequantizer, records_of, run_dequantizer_segment, DSegRun, DSegment, DStalls,
};
use tb::stalls::Stall;
use tb::oaken_stim::Draw;
use tb::stim::RandomInputs;
use tb::{models, Model, ModelInfo};

#[derive(Parser, Debug)]
#[command(about = "Short co-simulation of one rtl-gen unit, written as a VCD waveform")]
struct Args {
    /// rtl-gen unit name (`rtl-gen list`), e.g. oaken-quantizer, or
    /// `unit:key=value` for a variant, e.g. kivi-quantizer:axis=channel
    #[arg(long)]
    unit: String,
    /// VCD file to write (parent folders are created)
    #[arg(short, long)]
    output: PathBuf,
    /// Simulate the Yosys gate-level netlist instead of the RTL
    #[arg(long)]
    netlist: bool,
    /// Cycles of the generic random-input scenario
    #[arg(long, default_value_t = 200)]
    cycles: u64,
    /// Seed of the generic random-input scenario
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// VCD time (ns) of the rising clock edge of model cycle `c` (see `Model::tick`).
fn edge_ns(c: u64) -> u64 {
    10 * c + 5
}

fn units(gate_level: bool) -> String {
    let mut u: Vec<&str> =
        models::specs().iter().filter(|s| !gate_level || s.netlist).map(|s| s.unit.as_str()).collect();
    u.sort_unstable();
    u.dedup();
    u.join(", ")
}

fn pick(unit: &str, netlist: bool) -> Result<&'static ModelInfo, String> {
    if let Some(s) = models::specs().iter().find(|s| models::selects(s, unit) && (!netlist || s.netlist)) {
        return models::load(&if netlist { format!("{}_net", s.name) } else { s.name.clone() }, false);
    }
    if netlist && models::specs().iter().any(|s| models::selects(s, unit)) {
        return Err(format!(
            "unit '{unit}' has no gate-level model (set netlist = true in tb/models.toml); units with one: {}",
            units(true)
        ));
    }
    Err(format!("no model of unit '{unit}' in tb/models.toml; available units: {}", units(false)))
}

/// Runs the unit's scenario on `m` (tracing, out of reset); returns a
/// description of what the waveform shows, or why the run failed.
fn scenario(m: &mut Model, args: &Args) -> Result<String, String> {
    match m.info().unit {
        "oaken-quantizer" => oaken_quantizer(m),
        "oaken-dequantizer" => oaken_dequantizer(m),
        "oaken-mmu" => oaken_mmu(m),
        "titanus-pruner" => titanus_pruner(m),
        "titanus-dequantizer" => titanus_dequantizer(m),
        "titanus-quantizer" => titanus_quantizer(m),
        "kivi-quantizer" if tb::kivi_quantizer::params_of(m).axis == sim::kivi::params::Axis::Channel => {
            kivi_quantizer_channel(m)
        }
        "kivi-quantizer" => kivi_quantizer(m),
        "kivi-dequantizer" => kivi_dequantizer(m),
        "packkv-quantizer" => packkv_quantizer(m),
        "packkv-encoder" => packkv_encoder(m),
        "packkv-decoder" => packkv_decoder(m),
        "hack-qk-dot" | "hack-deq-dot" => hack_dot(m),
        "hack-pv-dot" => hack_pv_dot(m),
        "hack-quantizer" if tb::hack_quantizer_channel::is_channel(m.info()) => hack_quantizer_channel(m),
        "hack-quantizer" => hack_quantizer(m),
        _ => random(m, args.cycles, args.seed),
    }
}

/// Six tokens (real, grid, flat, non-finite, ...) under random input idles
/// and output backpressure, checked against `sim` (spec §14.14.1).
fn packkv_quantizer(m: &mut Model) -> Result<String, String> {
    use tb::packkv_quantizer::{case_of, params_of, run};
    let p = params_of(m);
    let c = case_of(&p, 6, 0x7175, Stall::Random { p: 48 }, Stall::Random { p: 96 });
    let start = m.cycle();
    let r = run(m, &p, &c)?;
    Ok(format!(
        "{} code beats of 6 tokens ({:?}) from {} ns, in_valid and out_ready random; every beat matched sim; \
         first beat latency {:?} cycles",
        r.beats,
        r.kinds,
        edge_ns(start),
        r.first_latency
    ))
}

/// Two transfers of K/V blocks (one maybe spoiled, spec §14.7) under
/// random input idles and output backpressure, checked against `sim`
/// (spec §14.14.2).
fn packkv_decoder(m: &mut Model) -> Result<String, String> {
    use tb::packkv_decoder::{case_of, params_of, run};
    let p = params_of(m);
    let c = case_of(&p, 2, 0x7176, Stall::Random { p: 48 }, Stall::Random { p: 96 });
    let start = m.cycle();
    let r = run(m, &p, &c)?;
    Ok(format!(
        "{} data beats of {} blocks (spoils {:?}, statuses {:?}) from {} ns, in_valid and out_ready random; \
         every beat matched sim",
        r.data_beats,
        c.facts.blocks,
        c.facts.spoils,
        r.statuses,
        edge_ns(start)
    ))
}

/// Three block pairs (one refused when a code above N is possible) under
/// random stalls on the K, V and word streams, checked against `sim`
/// (spec §14.14.3).
fn packkv_encoder(m: &mut Model) -> Result<String, String> {
    use tb::packkv_encoder::{case_of, params_of, run};
    let p = params_of(m);
    let c = case_of(&p, 3, 0x7e11, Stall::Random { p: 48 }, Stall::Random { p: 64 }, Stall::Random { p: 96 });
    let start = m.cycle();
    let r = run(m, &p, &c)?;
    Ok(format!(
        "{} blocks ({} words) of 3 pairs ({:?}) from {} ns, k_valid, v_valid and out_ready random; every word matched sim",
        r.blocks,
        r.words,
        r.kinds,
        edge_ns(start)
    ))
}

/// Two Q loads, each with a few K tokens, under random stalls on all three
/// streams, checked against `sim` (spec §15.16).
fn hack_dot(m: &mut Model) -> Result<String, String> {
    use tb::hack_qk_dot as hq;
    let p = hq::params_of(m);
    let c = hq::case_of(&p, 2, 4, 0x4ac, [Stall::Random { p: 48 }, Stall::Random { p: 48 }, Stall::Random { p: 96 }]);
    let start = m.cycle();
    let r = hq::run(m, &p, &c)?;
    Ok(format!(
        "2 Q loads and {} K tokens from {} ns, q_valid, k_valid and out_ready random; every score matched sim; \
         first score latency {:?} cycles",
        r.scores,
        edge_ns(start),
        r.first_latency
    ))
}

/// Two queries (closed blocks, then the open partition) under random
/// stalls on all five streams, checked against `sim` (spec §15.16.5).
fn hack_pv_dot(m: &mut Model) -> Result<String, String> {
    use tb::hack_pv_dot as hp;
    let p = hp::params_of(m);
    let s = || Stall::Random { p: 48 };
    let c = hp::case_of(&p, 2, 0x4ac, [s(), s(), s(), s(), Stall::Random { p: 96 }]);
    let start = m.cycle();
    let r = hp::run(m, &p, &c)?;
    Ok(format!(
        "2 queries (closed blocks {:?}, tail tokens {:?}) from {} ns, every input valid and out_ready random; \
         all {} outputs matched sim; first output {:?} cycles after the first query's last input beat",
        c.queries.iter().map(|q| q.p.len()).collect::<Vec<_>>(),
        r.tail_lens,
        edge_ns(start),
        r.outs,
        r.first_latency
    ))
}

/// Six V tokens under random input idles and output backpressure, checked
/// against `sim` (spec §13.14.2).
fn hack_quantizer(m: &mut Model) -> Result<String, String> {
    use tb::hack_quantizer::{case_of, params_of, run};
    let p = params_of(m);
    let c = case_of(&p, 6, 0x4ac1, Stall::Random { p: 48 }, Stall::Random { p: 96 });
    let start = m.cycle();
    let r = run(m, &p, &c)?;
    Ok(format!(
        "6 vectors ({:?}) from {} ns, {} partition beats, in_valid and out_ready random, {} rounding; every \
         beat (codes, meta, sum) matched sim; first partition latency {:?} cycles",
        r.kinds,
        edge_ns(start),
        r.beats,
        p.rounding,
        r.first_latency
    ))
}

/// Two V blocks, each streamed twice, under random input idles and output
/// backpressure, checked against `sim` with the code sums (spec §15.16.6).
fn hack_quantizer_channel(m: &mut Model) -> Result<String, String> {
    use tb::hack_quantizer_channel::{case_of, run};
    let p = tb::hack_quantizer::params_of(m);
    let c = case_of(&p, 2, 0x4ac1, Stall::Random { p: 48 }, Stall::Random { p: 96 });
    let start = m.cycle();
    let r = run(m, &p, &c)?;
    Ok(format!(
        "2 V blocks (two passes each) from {} ns, {} output beats (metadata rows, then code rows, sums with the \
         last word), in_valid and out_ready random, {} rounding; every beat matched sim",
        edge_ns(start),
        r.beats,
        p.rounding
    ))
}

fn kivi_quantizer(m: &mut Model) -> Result<String, String> {
    use tb::kivi_quantizer::{case_of, params_of, run};
    let p = params_of(m);
    let c = case_of(&p, 6, 0x7175, Stall::Random { p: 48 }, Stall::Random { p: 96 });
    let start = m.cycle();
    let r = run(m, &p, &c)?;
    Ok(format!(
        "6 tokens from {} ns, {} group beats, in_valid and out_ready random; every group beat matched sim; \
         first group latency {:?} cycles",
        edge_ns(start),
        r.beats,
        r.first_latency
    ))
}

/// Two K blocks, each streamed twice, under random input idles and output
/// backpressure, checked against `sim` (spec §13.14.3).
fn kivi_quantizer_channel(m: &mut Model) -> Result<String, String> {
    use tb::kivi_quantizer_channel::{case_of, run};
    let p = tb::kivi_quantizer::params_of(m);
    let c = case_of(&p, 2, 0x7175, Stall::Random { p: 48 }, Stall::Random { p: 96 });
    let start = m.cycle();
    let r = run(m, &p, &c)?;
    Ok(format!(
        "2 blocks (two passes each) from {} ns, {} output beats (metadata rows, then code rows), in_valid and \
         out_ready random; every beat matched sim",
        edge_ns(start),
        r.beats
    ))
}

/// Twenty groups under random input idles and output backpressure,
/// checked against `sim` (spec §13.14.1).
fn kivi_dequantizer(m: &mut Model) -> Result<String, String> {
    use tb::kivi_dequantizer::{case_of, params_of, run};
    let p = params_of(m);
    let c = case_of(&p, 20, 0x7175, Stall::Random { p: 48 }, Stall::Random { p: 96 });
    let start = m.cycle();
    let r = run(m, &p, &c)?;
    Ok(format!(
        "20 groups from {} ns, {} output beats, in_valid and out_ready random; every beat matched sim; \
         first beat latency {:?} cycles",
        edge_ns(start),
        r.beats,
        r.first_latency
    ))
}

/// Table writes (one rejected), then six tokens under random input idles
/// and output backpressure, checked against `sim`.
fn titanus_pruner(m: &mut Model) -> Result<String, String> {
    use tb::titanus_pruner::{case_of, params_of, run};
    let p = params_of(m);
    let c = case_of(&p, 6, 0x7175, Stall::Random { p: 48 }, Stall::Random { p: 96 });
    let start = m.cycle();
    let r = run(m, &p, &c)?;
    Ok(format!(
        "{} table writes (tw_error {:?}), then {} beats of 6 tokens from {} ns, in_valid and out_ready random; \
         every output beat matched sim; first beat latency {:?} cycles",
        r.tw_codes.len(),
        r.tw_codes,
        r.beats,
        edge_ns(start),
        r.first_latency
    ))
}

/// Scale-zero loads (some rejected, one clear), then tokens under random
/// input idles and output backpressure, checked against `sim`.
fn titanus_dequantizer(m: &mut Model) -> Result<String, String> {
    use tb::titanus_dequantizer::{case_of, params_of, run};
    let p = params_of(m);
    let c = case_of(&p, 6, 0x7175, Stall::Random { p: 48 }, Stall::Random { p: 96 });
    let start = m.cycle();
    let r = run(m, &p, &c)?;
    Ok(format!(
        "{} loads (sz_error {:?}), {} record beats from {} ns, in_valid and out_ready random; \
         every output beat and the skip counters {:?} matched sim; first beat latency {:?} cycles",
        r.sz_codes.len(),
        r.sz_codes,
        r.beats,
        edge_ns(start),
        r.counters,
        r.first_latency
    ))
}

/// Table writes, then two sequences (prefill, flush or decode, drifting
/// decode tokens) under random input idles and backpressure on both
/// outputs, checked against `sim`.
fn titanus_quantizer(m: &mut Model) -> Result<String, String> {
    use tb::titanus_quantizer::{case_of, params_of, run, DEFAULT_STYLE};
    let p = params_of(m);
    let st = [Stall::Random { p: 48 }, Stall::Random { p: 96 }, Stall::Random { p: 96 }];
    let c = case_of(&p, 2, 0x7175, DEFAULT_STYLE, st);
    let start = m.cycle();
    let r = run(m, &p, &c)?;
    Ok(format!(
        "{} table writes (tw_error {:?}), {} input beats from {} ns, {} record beats, {} sz words, \
         in_valid, rec_ready and sz_ready random; every output, response and the status matched sim",
        r.tw_codes.len(),
        r.tw_codes,
        r.in_beats,
        edge_ns(start),
        r.rec.len(),
        r.sz.len()
    ))
}

fn random(m: &mut Model, cycles: u64, seed: u64) -> Result<String, String> {
    let mut inputs = RandomInputs::new(m, seed);
    let names: Vec<&str> = inputs.ports.iter().map(|p| p.name).collect();
    for _ in 0..cycles {
        inputs.apply(m);
        m.tick();
    }
    Ok(format!(
        "{cycles} cycles of pseudo-random values on every input ({}), seed {seed}, after 1 reset cycle",
        names.join(", ")
    ))
}

/// Where one `drive_quantizer` call put its beats, as VCD times.
fn phase_summary(name: &str, run: &QSegRun, stream_start: u64, tokens: usize) -> String {
    let t = |c: &Vec<u64>, i: usize| edge_ns(stream_start + c[i]);
    let (ni, no) = (run.in_cycles.len(), run.out_cycles.len());
    let in_span = run.in_cycles[ni - 1] - run.in_cycles[0] + 1;
    let out_span = run.out_cycles[no - 1] - run.out_cycles[0] + 1;
    format!(
        "{name}: {tokens} tokens, {ni} input beats accepted {} ns .. {} ns ({} idle/stalled cycles), \
         {no} output beats {} ns .. {} ns ({} stalled cycles)",
        t(&run.in_cycles, 0),
        t(&run.in_cycles, ni - 1),
        in_span - ni as u64,
        t(&run.out_cycles, 0),
        t(&run.out_cycles, no - 1),
        out_span - no as u64,
    )
}

/// Table writes, three tokens back to back, then three more under random
/// input and output stalls; every beat checked against `sim`.
fn oaken_quantizer(m: &mut Model) -> Result<String, String> {
    let p: OakenParams = params_of(m);
    let layer = |l: usize| (l % p.layers) as u8;
    let sets = [1.0f32, 0.5, 2.0, 0.25].map(testgen::realistic_thresholds);
    let mut writes = vec![
        TableWrite::of(layer(0), false, sets[0]),
        TableWrite::of(layer(0), true, sets[1]),
        TableWrite::of(layer(1), false, sets[2]),
        TableWrite::of(layer(1), true, sets[3]),
    ];
    // rejected: thresholds out of order (tw_err = 2), the table keeps its set
    let mut bad = TableWrite::of(layer(2), false, sets[0]);
    bad.raw.swap(0, 3);
    writes.push(bad);

    let hd = p.head_dim;
    let mut draw = Draw::new(0x0a4e);
    let t0 = Token { layer: layer(0), v: false, x: draw.varied_token(hd, sets[0]) };
    let t1 = Token { layer: layer(0), v: true, x: draw.varied_token(hd, sets[1]) };
    // specials: NaN, +-Inf, -0, a subnormal, the largest FP16 (status nonfinite)
    let mut x2 = draw.varied_token(hd, sets[2]);
    for (i, v) in [(3, 0x7E00), (17, fp16::MAX_POS), (40, 0xFC00), (64, 0x8000), (90, 0x0001), (hd - 1, 0x7C00)] {
        x2[i % hd] = v;
    }
    let t2 = Token { layer: layer(1), v: false, x: x2 };
    // every element an outlier, beyond +-hi_outer
    let big = fp16::from_f32(3.0 * 0.25);
    let t3 =
        Token { layer: layer(1), v: true, x: (0..hd).map(|i| if i % 2 == 0 { big } else { big | 0x8000 }).collect() };
    // a constant token
    let t4 = Token { layer: layer(0), v: false, x: vec![fp16::from_f32(0.5); hd] };
    // a layer past the table (status out of range, thresholds of layer 0)
    let t5 = Token { layer: p.layers.min(255) as u8, v: false, x: draw.varied_token(hd, sets[0]) };

    let phase1 = [t0, t1, t2];
    let phase2 = [t3, t4, t5];
    let start1 = m.cycle() + writes.len() as u64 + 1;
    let run1 = drive_quantizer(m, &writes, &phase1, &Stall::Never, &Stall::Never, 0x5747)
        .map_err(|e| format!("back-to-back tokens: {e}"))?;

    // the table keeps phase 1's writes
    let start2 = m.cycle() + 1;
    let seg2 = QSegment {
        prior: writes.clone(),
        ..QSegment::plain(vec![], phase2.to_vec(), Stall::Random { p: 64 }, Stall::Random { p: 96 }, 0x5747)
    };
    let run2 = run_quantizer_segment(m, &seg2, 20_000)?;
    check_quantizer_segment(&p, &seg2, &run2).map_err(|e| format!("stalled tokens: {e}"))?;

    Ok([
        format!(
            "parameters: head-dim {}, lanes {}, {} beats per token, {} layers, latency {} cycles",
            p.head_dim,
            p.lanes,
            p.beats(),
            p.layers,
            m.info().latency().map_or("?".into(), |l| l.to_string())
        ),
        format!(
            "table writes ({} ns .. {} ns): layers {}/{} K and V, then an out-of-order set (tw_err {:?})",
            edge_ns(1),
            edge_ns(writes.len() as u64),
            layer(0),
            layer(1),
            run1.write_status
        ),
        phase_summary("back to back (no stalls)", &run1, start1, phase1.len()),
        "  tokens: realistic K, realistic V, one with NaN/Inf/-0/subnormal/max values (out_status nonfinite)".into(),
        phase_summary("random stalls (25% input idle, 37% output not ready)", &run2, start2, phase2.len()),
        "  tokens: all outliers, constant, layer past the table (out_status out of range)".into(),
        "every output beat matches the sim golden model bit for bit".into(),
    ]
    .join("\n"))
}

/// Table writes, then records the quantizer wrote for four tokens (no
/// outliers, realistic, all outliers, realistic), the third token's COO list
/// damaged (two entries swapped: out_err on its last beat), streamed back to
/// back, then again under random stalls on all three ports; every beat
/// checked against `sim`.
/// Two sequences written token by token, read back, an error, a free and
/// a reuse, first with the response always ready, then under backpressure;
/// every beat checked against `sim` (spec §10.11).
fn oaken_mmu(m: &mut Model) -> Result<String, String> {
    use tb::oaken_mmu::{params_of, run_segment, Cmd, Segment};
    let p = params_of(m);
    let seg = p.segments();
    let few: Vec<u8> = (0..p.heads * seg).map(|i| (p.segment_len(i % seg) / 10) as u8).collect();
    let full: Vec<u8> = (0..p.heads * seg).map(|i| p.segment_len(i % seg) as u8).collect();
    let w = |seq: u16, c: &Vec<u8>| Cmd::Write { seq, layer: 0, counts: c.clone() };
    let cmds = vec![
        w(1, &few),
        w(2, &full),
        w(1, &full),
        w(1, &few),
        Cmd::Read { seq: 1, layer: 0, head: 0 },
        Cmd::Read { seq: 3, layer: 0, head: 0 },
        Cmd::Free { seq: 1 },
        w(3, &few),
        Cmd::Read { seq: 2, layer: 0, head: 0 },
    ];
    let mut mmu = sim::oaken::mmu::Mmu::new(p.clone()).map_err(|e| e.to_string())?;
    let mut spans = Vec::new();
    for (stall, what) in [(Stall::Never, "response always ready"), (Stall::Random { p: 96 }, "rsp_ready random")] {
        let start = m.cycle();
        let s = Segment { cmds: cmds.clone(), idle: Stall::Never, stall, reset_at: None, seed: 0x33 };
        let run = run_segment(m, &mut mmu, &s, 100_000)?;
        spans.push(format!("{what}: {} ns .. {} ns, {} beats", edge_ns(start), edge_ns(m.cycle()), run.beats));
        mmu.reset();
        m.reset(1);
    }
    Ok(format!(
        "{} on {}: writes of sequences 1 and 2, reads, a read of an unknown id, a free, a reuse; \
         every beat checked against sim. {}",
        m.info().name,
        m.info().params_json,
        spans.join("; ")
    ))
}

fn oaken_dequantizer(m: &mut Model) -> Result<String, String> {
    let p: OakenParams = params_of(m);
    let set = testgen::realistic_thresholds(1.0);
    let writes = vec![TableWrite::of(0, false, set), TableWrite::of(0, true, set)];
    let hd = p.head_dim;
    let mut draw = Draw::new(0x0dec);
    let big = fp16::from_f32(fp16::to_f32(set.hi_outer) * 2.0 + 1.0);
    let tokens = vec![
        Token { layer: 0, v: false, x: vec![fp16::from_f32(0.5); hd] },
        Token { layer: 0, v: true, x: draw.varied_token(hd, set) },
        Token { layer: 0, v: false, x: (0..hd).map(|i| if i % 2 == 0 { big } else { big | 0x8000 }).collect() },
        Token { layer: 0, v: true, x: draw.varied_token(hd, set) },
    ];
    let mut recs = records_of(&p, &writes, &tokens);
    // swap the first two entries of record 2's list (heads = 1: token 2)
    let r2 = recs.cuts(p.lanes)[2 * p.heads].clone();
    let mut coo: Vec<u8> = recs.entries(p.lanes).iter().map(|e| e.0).collect();
    if r2.len() >= 2 {
        coo.swap(r2.start, r2.start + 1);
        recs.sparse = sim::oaken::dequantizer::pack_sparse(&coo, p.lanes);
    }
    let start1 = m.cycle() + writes.len() as u64 + 1;
    let run1 = drive_dequantizer(m, &writes, &recs, &DStalls::none(), 0x5747).map_err(|e| format!("back to back: {e}"))?;
    let start2 = m.cycle() + 1;
    let stalls =
        DStalls { d: Stall::Random { p: 64 }, s: Stall::Random { p: 64 }, out: Stall::Random { p: 96 } };
    let seg2 = DSegment { prior: writes.clone(), ..DSegment::plain(vec![], recs.clone(), stalls, 0x5747) };
    let run2 = run_dequantizer_segment(m, &seg2, 20_000)?;
    check_dequantizer_segment(&p, &seg2, &run2).map_err(|e| format!("stalled: {e}"))?;
    let span = |r: &DSegRun, s: u64| {
        format!("{} ns .. {} ns", edge_ns(s + r.out_cycles[0]), edge_ns(s + r.out_cycles[r.out_cycles.len() - 1]))
    };
    Ok([
        format!("parameters: head-dim {}, lanes {}, latency {} cycles", p.head_dim, p.lanes, m.info().latency().unwrap_or(0)),
        format!("back to back: 4 tokens, output beats {}", span(&run1, start1)),
        format!("random stalls on d, s and out: the same 4 tokens, output beats {}", span(&run2, start2)),
        "tokens: no outliers, realistic V, all outliers with two COO entries swapped (out_err on its last beat), realistic V".into(),
        "every output beat matches the sim model bit for bit".into(),
    ]
    .join("\n"))
}

fn main() -> ExitCode {
    let args = Args::parse();
    let info = match pick(&args.unit, args.netlist) {
        Ok(i) => i,
        Err(e) => {
            eprintln!("waves: {e}");
            return ExitCode::FAILURE;
        }
    };
    let info = match info.with_trace() {
        Ok(i) => i,
        Err(e) => {
            eprintln!("waves: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut m = Model::new(info);
    if let Err(e) = m.trace_to(&args.output) {
        eprintln!("waves: {e}");
        return ExitCode::FAILURE;
    }
    m.reset(1);
    let result = scenario(&mut m, &args);
    let cycles = m.cycle();
    m.trace_close();
    drop(m);
    let kind = if info.gate_level { "gate-level netlist" } else { "RTL" };
    match result {
        Ok(what) => {
            println!("model {} ({} {}, {}), {cycles} cycles", info.name, info.unit, kind, info.params_json);
            println!("{what}");
            println!("wrote {}", args.output.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("waves: model {} ({kind}): {e}", info.name);
            eprintln!("waveform of the run so far: {}", args.output.display());
            ExitCode::FAILURE
        }
    }
}
