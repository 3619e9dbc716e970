//! The PackKV round trips in co-simulation (spec §14.4, §14.6-§14.8,
//! §14.14): RTL `packkv-encoder` words into two RTL `packkv-decoder`s (its
//! K blocks to one, its V blocks to the other), and RTL `packkv-quantizer`s
//! (K and V) in front of that encoder. Between every two units a bridge
//! queue with stalls on both sides; the encoder's beats of up to `W` words
//! are re-cut into decoder beats of 1 to `wi` words, in transfers of one or
//! more blocks.
//!
//! - Codes: every decoded value equals `sim`'s dequantization of the exact
//!   codes and metadata words given to the encoder (lossless on codes),
//!   every end beat ok.
//! - Chain: from FP16 tokens (the real slice, synthetic, flat, zero,
//!   non-finite, random), every decoded value equals `sim`'s chain
//!   (`quantize_token`, `encode_pair`, `decode_stream`) and lies within the
//!   §14.8 bound of its sanitised input.
//!
//! - Repacked (`repack = median` sets): the K decoder's end beat carries
//!   the block's permutation; it must be one, order the rows by the rule of
//!   spec §14.5 (V lower median descending, ties in arrival order), and,
//!   applied to the decoded rows of K and of V, give back the arrival rows.
//!
//! Sets: every encoder model of tb/models.toml whose K and V halves have a
//! quantizer and a decoder model with the same parameters (at least two in
//! arrival order and one repacked).

use proptest::prelude::*;
use sim::fp16;
use sim::packkv::codec::{decode_stream, encode_pair, median_order, pack_fields, DecodedBlock, TokenBlock};
use sim::packkv::params::{raw_bits, Repack};
use sim::packkv::quantizer::{bound_x2, quantize_token, sanitized_units, TokenGrid};
use tb::coverage::Coverage;
use tb::packkv_decoder::{self as pd, DecParams, OutBeat as DBeat};
use tb::packkv_encoder::{self as pe, EncParams};
use tb::packkv_quantizer::{self as pq, Kind, QuantParams};
use tb::stalls::{self, Stall};
use tb::stim::Xorshift;
use tb::stream::{self, Sink, Source};
use tb::{models, prop, Model, ModelInfo};

/// One parameter set: the encoder and, for K and V, a quantizer and a
/// decoder of the same parameters.
#[derive(Clone, Copy, Debug)]
struct Set {
    enc: &'static ModelInfo,
    quant: [&'static ModelInfo; 2],
    dec: [&'static ModelInfo; 2],
    p: EncParams,
    dp: [DecParams; 2],
    /// `repack = median`
    med: bool,
}

fn sets() -> Vec<Set> {
    let specs = models::specs();
    let mut out = vec![];
    let median = |s: &models::Spec| s.params.get("repack").and_then(|v| v.as_str()) == Some("median");
    for e in specs.iter().filter(|s| s.unit == "packkv-encoder") {
        let p: EncParams = toml::Value::Table(e.params.clone()).try_into().expect("encoder parameters");
        let find = |unit: &str, ok: &dyn Fn(&toml::Table) -> bool| {
            specs.iter().find(|s| s.unit == unit && ok(&s.params)).map(|s| models::get(&s.name))
        };
        let side = |v: bool| {
            let n = p.model(v).levels;
            let q = find("packkv-quantizer", &|t| {
                let q = pq::params_of_spec(t);
                (q.head_dim, q.heads, q.levels, q.lanes) == (p.head_dim, p.heads, n, p.lanes)
            });
            let d = find("packkv-decoder", &|t| {
                let d = pd::params_of_spec(t);
                (d.head_dim, d.heads, d.levels, d.block, d.pack, d.lanes) == (p.head_dim, p.heads, n, p.block, p.pack, p.lanes)
            });
            q.zip(d)
        };
        if let (Some((qk, dk)), Some((qv, dv))) = (side(false), side(true)) {
            let dp = [pd::params_of(&Model::new(dk)), pd::params_of(&Model::new(dv))];
            out.push(Set { enc: models::get(&e.name), quant: [qk, qv], dec: [dk, dv], p, dp, med: median(e) });
        }
    }
    let med = out.iter().filter(|s| s.med).count();
    assert!(out.len() - med >= 2, "{} PackKV round-trip sets in arrival order in tb/models.toml, at least 2 expected", out.len() - med);
    assert!(med >= 1, "no repack = median PackKV round-trip set in tb/models.toml");
    out
}

/// Stalls at each end of each bridge (`w`: the producer's `out_ready`; `r`:
/// the consumer's `in_valid`).
#[derive(Clone, Debug)]
struct Stalls {
    tokens: Stall,
    q_w: Stall,
    e_r: Stall,
    e_w: Stall,
    d_r: Stall,
    d_out: Stall,
}

/// What a block's tokens are made of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Style {
    Mixed,
    /// One flat token repeated: every pack of width 0.
    Flat,
    /// Random FP16 patterns: packs of the widest width.
    Wide,
}

#[derive(Clone, Debug)]
enum Input {
    /// Code blocks given to the encoder (K, V per pair).
    Codes(Vec<[TokenBlock; 2]>),
    /// FP16 tokens given to the quantizers (K, V per pair; `B` each).
    Tokens(Vec<[Vec<Vec<u16>>; 2]>),
}

#[derive(Clone, Debug)]
struct Case {
    input: Input,
    stalls: Stalls,
    seed: u64,
}

fn quant_params(p: &EncParams, v: bool) -> QuantParams {
    QuantParams { head_dim: p.head_dim, heads: p.heads, levels: p.model(v).levels, lanes: p.lanes }
}

/// Tokens of one block.
fn token_block(p: &EncParams, v: bool, style: Style, r: &mut Xorshift) -> Vec<Vec<u16>> {
    let q = quant_params(p, v);
    let flat = pq::token_of(r, &q, Kind::Flat).x;
    (0..p.block)
        .map(|_| match style {
            Style::Flat => flat.clone(),
            Style::Wide => pq::token_of(r, &q, Kind::Random).x,
            Style::Mixed => {
                let k = [Kind::Real, Kind::Real, Kind::Real, Kind::Synthetic, Kind::Synthetic, Kind::Flat, Kind::Zero, Kind::NonFinite]
                    [(r.next_u64() % 8) as usize];
                pq::token_of(r, &q, k).x
            }
        })
        .collect()
}

fn style_of(r: &mut Xorshift) -> Style {
    match r.next_u64() % 5 {
        0 => Style::Flat,
        1 => Style::Wide,
        _ => Style::Mixed,
    }
}

/// Code blocks of the encoder test's kinds (none refused), each token with
/// the metadata word of a real quantized token.
fn code_pair(p: &EncParams, r: &mut Xorshift) -> [TokenBlock; 2] {
    use pe::Kind as E;
    let kind = [E::Uniform, E::Narrow, E::Equal, E::Widest, E::Flat, E::NonFinite][(r.next_u64() % 6) as usize];
    let mut pair = pe::pair_of(r, p, kind);
    for (v, b) in [(false, &mut pair.k), (true, &mut pair.v)] {
        if kind != E::Flat {
            let q = quant_params(p, v);
            for m in b.meta.iter_mut() {
                *m = quantize_token(&p.model(v), &pq::token_of(r, &q, Kind::Real).x).meta;
            }
        }
    }
    [pair.k, pair.v]
}

fn case_of(p: &EncParams, chain: bool, pairs: usize, seed: u64, stalls: Stalls) -> Case {
    let mut r = Xorshift::new(seed);
    let input = if chain {
        Input::Tokens(
            (0..pairs)
                .map(|_| {
                    let s = style_of(&mut r);
                    [token_block(p, false, s, &mut r), token_block(p, true, s, &mut r)]
                })
                .collect(),
        )
    } else {
        Input::Codes((0..pairs).map(|_| code_pair(p, &mut r)).collect())
    };
    Case { input, stalls, seed: r.next_u64() }
}

fn case(p: EncParams, chain: bool) -> impl Strategy<Value = Case> {
    let st = (
        stalls::stall(),
        stalls::stall(),
        stalls::stall(),
        stalls::stall(),
        stalls::stall(),
        prop_oneof![3 => stalls::stall(), 1 => stalls::long_stall()],
    )
        .prop_map(|(tokens, q_w, e_r, e_w, d_r, d_out)| Stalls { tokens, q_w, e_r, e_w, d_r, d_out });
    (1usize..4, any::<u64>(), st).prop_map(move |(n, seed, s)| case_of(&p, chain, n, seed, s))
}

/// The code blocks `sim` makes of the case (K, V per pair).
fn code_blocks(p: &EncParams, c: &Case) -> Vec<[TokenBlock; 2]> {
    match &c.input {
        Input::Codes(b) => b.clone(),
        Input::Tokens(t) => t
            .iter()
            .map(|kv| {
                [false, true].map(|v| {
                    let toks: Vec<_> = kv[v as usize].iter().map(|x| quantize_token(&p.model(v), x)).collect();
                    TokenBlock {
                        meta: toks.iter().map(|t| t.meta).collect(),
                        rows: toks.iter().map(|t| t.codes.clone()).collect(),
                        nonfinite: toks.iter().any(|t| t.nonfinite),
                    }
                })
            })
            .collect(),
    }
}

/// A block's beats out of a decoder: its codes dequantized with stored row
/// `i` arrival row `order[i]`, then an ok end (with `order` if `perm`).
fn block_beats(dp: &DecParams, b: &TokenBlock, order: &[usize], perm: bool) -> Vec<DBeat> {
    let d = DecodedBlock {
        meta: order.iter().map(|&a| b.meta[a]).collect(),
        rows: order.iter().map(|&a| b.rows[a].clone()).collect(),
        perm: None,
        nonfinite: b.nonfinite,
        words: 0,
    };
    let mut v = pd::data_beats(dp, &d);
    v.push(DBeat::End { status: 0, nonfinite: b.nonfinite, perm: perm.then(|| order.iter().map(|&a| a as u32).collect()) });
    v
}

/// The row order spec §14.5 gives each pair: arrival order, or (repacked)
/// `sim`'s median order (a total order, so the one `orders` accepts).
fn rule_orders(s: &Set, blocks: &[[TokenBlock; 2]]) -> Vec<Vec<usize>> {
    blocks.iter().map(|kv| if s.med { median_order(&kv[1].rows) } else { (0..s.p.block).collect() }).collect()
}

/// The beats each decoder must send: every block dequantized in `orders`,
/// each ok (the K decoder's end beats with the permutation if repacked).
fn want_beats(s: &Set, blocks: &[[TokenBlock; 2]], orders: &[Vec<usize>], v: usize) -> Vec<Result<Vec<DBeat>, u8>> {
    blocks.iter().zip(orders).map(|(b, o)| Ok(block_beats(&s.dp[v], &b[v], o, s.med && v == 0))).collect()
}

/// The row order of each pair: arrival order, or (repacked) the
/// permutation on the K decoder's end beat, checked against spec §14.5's
/// rule with the pair's V codes.
fn orders(s: &Set, blocks: &[[TokenBlock; 2]], k_beats: &[DBeat]) -> Result<Vec<Vec<usize>>, String> {
    let b = s.p.block;
    if !s.med {
        return Ok(vec![(0..b).collect(); blocks.len()]);
    }
    let perms: Vec<_> = k_beats.iter().filter_map(|x| if let DBeat::End { perm, .. } = x { Some(perm.clone()) } else { None }).collect();
    if perms.len() != blocks.len() {
        return Err(format!("K decoder: {} end beats for {} blocks", perms.len(), blocks.len()));
    }
    let mut out = vec![];
    for (i, (perm, kv)) in perms.into_iter().zip(blocks).enumerate() {
        let order: Vec<usize> = perm.ok_or(format!("K block {i}: no permutation on a repacked block"))?.iter().map(|&a| a as usize).collect();
        let mut seen = vec![false; b];
        for &a in &order {
            if a >= b || std::mem::replace(&mut seen[a], true) {
                return Err(format!("K block {i}: {order:?} is not a permutation of 0..{b}"));
            }
        }
        if order.len() != b {
            return Err(format!("K block {i}: {} indices, {b} expected", order.len()));
        }
        // spec §14.5's order is total: descending V median, ties by arrival
        let want = median_order(&kv[1].rows);
        if let Some(j) = (0..b).find(|&j| order[j] != want[j]) {
            return Err(format!("K block {i}: stored row {j} is arrival row {}, the median order has {}", order[j], want[j]));
        }
        out.push(order);
    }
    Ok(out)
}

#[derive(Default, Debug)]
struct Run {
    beats: [Vec<DBeat>; 2],
    q_blocked: u64,
    q_held: u64,
    e_blocked: u64,
    e_held: u64,
    d_blocked: u64,
    d_held: u64,
    transfers: u64,
    multi_block_transfers: u64,
    multi_word_beats: u64,
    empty_last: u64,
    cycles: u64,
}

/// A decoder's input side: words from the encoder, cut into beats of 1 to
/// `wi` words that never run past a transfer's end.
struct WordBridge {
    words: Vec<(u32, bool)>,
    src: Source<(Vec<u32>, usize, bool)>,
    wi: usize,
}

impl WordBridge {
    fn cut(&mut self, rng: &mut Xorshift) {
        while !self.words.is_empty() {
            let n = 1 + (rng.next_u64() as usize) % self.wi;
            // the newest word stays until more come or a transfer ends on it:
            // a block's `last` may come on a beat of no words (below)
            let end = self.words.iter().take(n).position(|w| w.1);
            let n = match end {
                Some(e) => e + 1,
                None if self.words.len() <= n => return,
                None => n,
            };
            let mut w: Vec<u32> = self.words.drain(..n).map(|x| x.0).collect();
            let last = end.is_some();
            w.resize(self.wi, 0);
            self.src.queue.push_back((w, n, last));
        }
    }
    fn held(&self) -> usize {
        self.words.len() + self.src.queue.len() * self.wi
    }
}

/// Bridge capacity, in beats (quantizer to encoder) or words (encoder to
/// decoder).
const CAP: usize = 8;

/// Runs the chain: `ms` holds [quantizer K, quantizer V,] encoder, decoder
/// K, decoder V.
fn run_chain(ms: &mut [Model], s: &Set, c: &Case) -> Result<Run, String> {
    let p = &s.p;
    let (qs, rest) = ms.split_at_mut(if matches!(c.input, Input::Tokens(_)) { 2 } else { 0 });
    let (e, ds) = rest.split_first_mut().expect("an encoder");
    let mut rng = Xorshift::new(c.seed ^ 0x7274);
    let st = &c.stalls;
    let blocks = code_blocks(p, c);
    // each end beat is checked as it comes, so that a wrong block fails
    // the case at once rather than at its timeout (check_case repeats the
    // whole comparison at the end)
    let rule = rule_orders(s, &blocks);
    let want = [0, 1].map(|v| want_beats(s, &blocks, &rule, v));
    let r = [raw_bits(p.k_levels) as usize, raw_bits(p.v_levels) as usize];
    // token sources (chain) or code-beat sources (codes) for the encoder
    let mut tok_src: Vec<Source<Vec<u64>>> = vec![];
    let mut q_sink: Vec<Sink<pq::OutBeat>> = vec![];
    let mut e_src: Vec<Source<pq::OutBeat>> = vec![];
    for v in 0..2 {
        let mut code_beats = vec![];
        match &c.input {
            Input::Tokens(t) => {
                let beats: Vec<Vec<u64>> = t
                    .iter()
                    .flat_map(|kv| kv[v].iter().flat_map(|x| x.chunks(p.lanes).map(|ch| ch.iter().map(|&e| e as u64).collect())))
                    .collect();
                tok_src.push(Source::new(beats, &st.tokens, c.seed ^ (11 + v as u64)));
                q_sink.push(Sink::new(&st.q_w, c.seed ^ (21 + v as u64)));
            }
            Input::Codes(_) => {
                for b in &blocks {
                    let b = &b[v];
                    for (t, row) in b.rows.iter().enumerate() {
                        for ch in row.chunks(p.lanes) {
                            code_beats.push(pq::OutBeat {
                                codes: ch.iter().map(|&q| q as u64).collect(),
                                meta: b.meta[t].word(),
                                last: false,
                                nonfinite: b.nonfinite && t == 0,
                            });
                        }
                    }
                }
            }
        }
        e_src.push(Source::new(code_beats, &st.e_r, c.seed ^ (31 + v as u64)));
    }
    let mut e_sink: Sink<pe::OutBeat> = Sink::new(&st.e_w, c.seed ^ 41);
    let mut bridges: Vec<WordBridge> = (0..2)
        .map(|v| WordBridge { words: vec![], src: Source::new([], &st.d_r, c.seed ^ (51 + v as u64)), wi: s.dp[v].wi() })
        .collect();
    let mut d_sink: Vec<Sink<DBeat>> = (0..2).map(|v| Sink::new(&st.d_out, c.seed ^ (61 + v as u64))).collect();
    let nblocks = blocks.len();
    let mut e_blocks = 0usize;
    let mut in_transfer = [0u64; 2];
    let mut run = Run::default();
    let items = 2 * (1 + p.block + (p.block / p.pack) * (p.beats() + p.pack * p.beats()));
    let timeout = 30_000 + 400 * (nblocks * items) as u64;
    let ends = |k: &Sink<DBeat>| k.beats.iter().filter(|b| matches!(b, DBeat::End { .. })).count();
    let mut cyc = 0u64;
    while !(ends(&d_sink[0]) == nblocks && ends(&d_sink[1]) == nblocks) {
        if cyc > timeout {
            return Err(format!(
                "timeout after {cyc} cycles: encoder sent {e_blocks} of {} blocks, decoders ended {} and {}",
                2 * nblocks,
                ends(&d_sink[0]),
                ends(&d_sink[1])
            ));
        }
        // quantizers: tokens in, code beats to the encoder's bridge
        for (v, q) in qs.iter_mut().enumerate() {
            let offer = tok_src[v].offer().cloned();
            let x = offer.clone().unwrap_or_else(|| (0..p.lanes).map(|_| rng.next_u64() & 0xFFFF).collect());
            q.set(q.port("in_valid"), offer.is_some() as u64);
            q.set_lanes(q.port("in_x"), &x);
            let ready = q_sink[v].ready() && e_src[v].queue.len() < CAP;
            let in_ready = stream::settle_ready(q, q.port("in_ready"), q.port("out_ready"), ready)?;
            run.q_blocked += (offer.is_some() && !in_ready) as u64;
            let valid = q.get(q.port("out_valid")) == 1;
            run.q_held += (valid && !ready) as u64;
            if let Some(b) = q_sink[v].sample(q.cycle(), valid, ready, || pq::read_out(q))?.cloned() {
                e_src[v].queue.push_back(b);
            }
            if offer.is_some() && in_ready {
                tok_src[v].take();
            }
        }
        // encoder: code beats in, words to the decoders' bridges by block
        let mut offers = [false; 2];
        for (v, side) in ["k", "v"].iter().enumerate() {
            let o = e_src[v].offer().cloned();
            offers[v] = o.is_some();
            let b = o.unwrap_or_else(|| pq::OutBeat {
                codes: (0..p.lanes).map(|_| rng.next_u64() & ((1 << r[v]) - 1)).collect(),
                meta: rng.next_u64() as u32,
                last: false,
                nonfinite: rng.next_u64() & 1 == 1,
            });
            e.set(e.port(&format!("{side}_valid")), offers[v] as u64);
            e.set_words(e.port(&format!("{side}_codes")), &tb::lanes::pack(&b.codes, r[v]));
            e.set(e.port(&format!("{side}_meta")), b.meta as u64);
            e.set(e.port(&format!("{side}_nonfinite")), b.nonfinite as u64);
        }
        let to = e_blocks % 2;
        let ready = e_sink.ready() && bridges[to].held() < CAP * bridges[to].wi;
        let k_ready = stream::settle_ready(e, e.port("k_ready"), e.port("out_ready"), ready)?;
        let e_ready = [k_ready, e.get(e.port("v_ready")) == 1];
        let valid = e.get(e.port("out_valid")) == 1;
        run.e_held += (valid && !ready) as u64;
        if let Some(b) = e_sink.sample(e.cycle(), valid, ready, || pe::read_out(e))?.cloned() {
            if b.overflow {
                return Err(format!("cycle {}: the encoder refused block {e_blocks}", e.cycle()));
            }
            let n = b.words.len();
            bridges[to].words.extend(b.words.iter().map(|&w| (w, false)));
            if b.last {
                // an encoder ends a block on a word boundary with a beat of no
                // words (spec §14.14.3 allows only a refused block's status beat)
                run.empty_last += (n == 0) as u64;
                // the block ends its transfer at random, and the case's last always
                in_transfer[to] += 1;
                if e_blocks / 2 + 1 == nblocks || rng.next_u64() % 2 == 0 {
                    bridges[to].words.last_mut().expect("the block's last word").1 = true;
                    run.transfers += 1;
                    run.multi_block_transfers += (in_transfer[to] > 1) as u64;
                    in_transfer[to] = 0;
                }
                e_blocks += 1;
            } else if n == 0 {
                return Err(format!("cycle {}: an encoder beat without words or last", e.cycle()));
            }
        }
        for v in 0..2 {
            run.e_blocked += (offers[v] && !e_ready[v]) as u64;
            if offers[v] && e_ready[v] {
                e_src[v].take();
            }
        }
        // decoders
        for (v, d) in ds.iter_mut().enumerate() {
            let wb = &mut bridges[v];
            wb.cut(&mut rng);
            let o = wb.src.offer().cloned();
            let (w, n, last) = o.clone().unwrap_or_else(|| {
                ((0..wb.wi).map(|_| rng.next_u64() as u32).collect(), 1 + (rng.next_u64() as usize) % wb.wi, rng.next_u64() & 1 == 1)
            });
            d.set(d.port("in_valid"), o.is_some() as u64);
            d.set_words(d.port("in_words"), &w);
            d.set(d.port("in_count"), n as u64);
            d.set(d.port("in_last"), last as u64);
            let ready = d_sink[v].ready();
            let in_ready = stream::settle_ready(d, d.port("in_ready"), d.port("out_ready"), ready)?;
            run.d_blocked += (o.is_some() && !in_ready) as u64;
            let valid = d.get(d.port("out_valid")) == 1;
            run.d_held += (valid && !ready) as u64;
            if let Some(DBeat::End { .. }) = d_sink[v].sample(d.cycle(), valid, ready, || pd::read_out(d, &s.dp[v]))? {
                let side = if v == 0 { "K" } else { "V" };
                pd::check(&s.dp[v], &d_sink[v].beats, &want[v], true).map_err(|e| format!("cycle {}: {side} decoder: {e}", d.cycle()))?;
            }
            if o.is_some() && in_ready {
                run.multi_word_beats += (n > 1) as u64;
                wb.src.take();
            }
        }
        for m in qs.iter_mut().chain([&mut *e]).chain(ds.iter_mut()) {
            m.tick();
        }
        cyc += 1;
    }
    run.cycles = cyc;
    run.beats = [std::mem::take(&mut d_sink[0].beats), std::mem::take(&mut d_sink[1].beats)];
    Ok(run)
}

const POINTS: &[&str] = &[
    "blocks (K and V)",
    "pack width 0",
    "pack width r (largest)",
    "token: max = min (codes 0)",
    "block: nonfinite",
    "quantizer input blocked",
    "quantizer output held",
    "encoder input blocked",
    "encoder output held",
    "decoder input blocked",
    "decoder output held",
    "transfer of several blocks",
    "decoder beat of several words",
    "encoder last beat of no words (spec §14.14.3, not required)",
    "repacked pair",
    "repacked pair, rows reordered",
];

/// The points a run must reach (`quantizer`: the chain only).
fn required(chain: bool) -> Vec<&'static str> {
    POINTS.iter().copied().filter(|x| !x.ends_with("(not required)") && (chain || !x.starts_with("quantizer"))).collect()
}

/// Checks one case's decoded beats and counts its coverage.
fn check_case(s: &Set, c: &Case, run: &Run, cov: &Coverage) -> Result<(), String> {
    let p = &s.p;
    let blocks = code_blocks(p, c);
    let orders = orders(s, &blocks, &run.beats[0])?;
    for v in 0..2 {
        let dp = &s.dp[v];
        // lossless on codes: the exact codes and words given, dequantized,
        // in the decoded permutation's order
        let want = want_beats(s, &blocks, &orders, v);
        let side = if v == 0 { "K" } else { "V" };
        let seen = pd::check(dp, &run.beats[v], &want, false).map_err(|e| format!("{side} decoder: {e}"))?;
        if seen.iter().any(|&x| x != 0) {
            return Err(format!("{side} decoder: statuses {seen:?}, every block ok expected"));
        }
        for b in &blocks {
            let b = &b[v];
            for row in pack_fields(&p.model(v == 1), &b.rows) {
                cov.add("pack width 0", row.iter().filter(|x| x.1 == 0).count() as u64);
                cov.add("pack width r (largest)", row.iter().filter(|x| x.1 as usize == dp.r()).count() as u64);
            }
            cov.add("token: max = min (codes 0)", b.rows.iter().filter(|t| t.iter().all(|&q| q == 0)).count() as u64);
            cov.add("block: nonfinite", b.nonfinite as u64);
        }
    }
    if let Input::Tokens(t) = &c.input {
        check_chain(s, t, &blocks, &orders, run)?;
    }
    cov.add("blocks (K and V)", 2 * blocks.len() as u64);
    if s.med {
        cov.add("repacked pair", blocks.len() as u64);
        cov.add("repacked pair, rows reordered", orders.iter().filter(|o| o.windows(2).any(|w| w[0] > w[1])).count() as u64);
    }
    cov.add("quantizer input blocked", run.q_blocked);
    cov.add("quantizer output held", run.q_held);
    cov.add("encoder input blocked", run.e_blocked);
    cov.add("encoder output held", run.e_held);
    cov.add("decoder input blocked", run.d_blocked);
    cov.add("decoder output held", run.d_held);
    cov.add("transfer of several blocks", run.multi_block_transfers);
    cov.add("decoder beat of several words", run.multi_word_beats);
    cov.add("encoder last beat of no words (spec §14.14.3, not required)", run.empty_last);
    Ok(())
}

/// The chain from FP16: `sim`'s own round trip gives the same beats, and
/// every decoded value is within spec §14.8's bound of its input.
fn check_chain(s: &Set, tokens: &[[Vec<Vec<u16>>; 2]], blocks: &[[TokenBlock; 2]], orders: &[Vec<usize>], run: &Run) -> Result<(), String> {
    let p = &s.p;
    for v in 0..2 {
        let dp = &s.dp[v];
        let mut words = vec![];
        for b in blocks {
            let [(kw, _), (vw, _)] = encode_pair(&p.model(false), &p.model(true), &b[0], &b[1]).map_err(|e| format!("encode_pair: {e:?}"))?;
            words.extend(if v == 0 { kw } else { vw });
        }
        let mut sim_beats = vec![];
        for d in decode_stream(&dp.packkv(Repack::None), &words) {
            let d = d.map_err(|e| format!("sim decode_stream: {e:?}"))?;
            sim_beats.extend(pd::data_beats(dp, &d));
            let perm = d.perm.as_ref().map(|q| q.iter().map(|&i| i as u32).collect());
            sim_beats.push(DBeat::End { status: 0, nonfinite: d.nonfinite, perm });
        }
        stream::compare(&run.beats[v], &sim_beats, false, |i| format!("beat {i} against sim's chain"))?;
        // the bound, element by element, each stored row at its arrival row
        let mut bi = 0;
        let mut units: Vec<Vec<i64>> = tokens[0][v].iter().map(|x| sanitized_units(x).0).collect();
        for beat in &run.beats[v] {
            let DBeat::Data { x, row, ch } = beat else {
                bi += 1;
                if bi < tokens.len() {
                    units = tokens[bi][v].iter().map(|x| sanitized_units(x).0).collect();
                }
                continue;
            };
            for (l, &o) in x.iter().enumerate() {
                let (ch, row) = (*ch as usize + l / dp.pl(), orders[bi][*row as usize + l % dp.pl()]);
                let step = TokenGrid::from_meta(blocks[bi][v].meta[row]).step_units;
                let (xu, ou) = (units[row][ch], fp16::to_units(o));
                if 2 * (ou - xu).abs() > bound_x2(step, ou) {
                    let x0 = tokens[bi][v][row][ch];
                    return Err(format!("block {bi} row {row} channel {ch}: x {x0:#06x} decoded {o:#06x}, step {step} units"));
                }
            }
        }
    }
    Ok(())
}

fn check(s: &Set, chain: bool, cases: u32, cov: &Coverage) {
    let mut infos = vec![];
    if chain {
        infos.extend(s.quant);
    }
    infos.push(s.enc);
    infos.extend(s.dec);
    let what = if chain { "chain" } else { "codes" };
    let test = format!("{}_roundtrip_{what}", s.enc.name);
    tb::prop::run_property_on(&test, &infos, case(s.p, chain), cases, |ms, c| {
        let run = run_chain(ms, s, c)?;
        check_case(s, c, &run, cov)
    });
}

/// Every set's round trip (`chain`: from FP16 through the quantizer),
/// its coverage closed and checked.
fn round_trip(title: &str, chain: bool) {
    let cov = Coverage::new(title, POINTS);
    let run = || {
        for s in sets() {
            check(&s, chain, prop::cases(16), &cov);
        }
    };
    run();
    cov.close(&required(chain), run);
    cov.check_points(&required(chain));
}

/// Encoder -> decoder, lossless on codes.
#[test]
fn encoder_to_decoder_is_lossless_on_codes() {
    round_trip("packkv round trip, codes (RTL)", false);
}

/// Quantizer -> encoder -> decoder from FP16 tokens: `sim`'s chain bit for
/// bit, within the §14.8 bound.
#[test]
fn quantizer_to_decoder_within_bound() {
    round_trip("packkv round trip, chain (RTL)", true);
}
