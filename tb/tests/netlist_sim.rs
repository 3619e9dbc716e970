//! The netlist simulator (`tb::netsim`) against Verilator on the same OSU018
//! netlists: identical pseudo-random inputs every cycle (handshakes and
//! data alike, as `tb::stim::RandomInputs` draws them) from reset, every
//! output compared every cycle. Verilator reads the netlist with Yosys's
//! Verilog rendering of the Liberty cell functions, so the two share only
//! the netlist and the Liberty file.

use tb::stim::RandomInputs;
use tb::{models, Dir, Model};

const CYCLES: u64 = 3000;

fn lockstep(name: &str, cycles: u64) {
    let ns = models::get(name);
    let vl = models::load_verilated_netlist(name, false).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((ns.simulator, vl.simulator), ("netsim", "verilator"));
    let (mut a, mut b) = (Model::with_seed(ns, 11), Model::with_seed(vl, 11));
    a.reset(1);
    b.reset(1);
    let mut inputs = RandomInputs::new(&a, 0x5eed ^ name.len() as u64);
    let outs: Vec<_> = ns.ports.iter().filter(|p| p.dir == Dir::Out).map(|p| a.port(p.name)).collect();
    let mut buf = Vec::new();
    for cyc in 0..cycles {
        buf.clear();
        inputs.draw_into(&mut buf);
        inputs.set(&mut a, &buf);
        inputs.set(&mut b, &buf);
        a.eval();
        b.eval();
        for &o in &outs {
            let (x, y) = (a.get_words(o), b.get_words(o));
            assert_eq!(x, y, "{name}: cycle {cyc}: {} netsim {x:x?}, verilator {y:x?}", a.port_info(o).name);
        }
        a.tick();
        b.tick();
    }
    println!("{name}: {} cells, {cycles} cycles: netsim and Verilator agree on every output", ns.ports.len());
}

#[test]
fn netsim_matches_verilator_on_shifter_netlists() {
    for n in ["zr_l8_w8_p1_net", "zi_l8_w8_p0_net", "zr_l16_w8_p2_net", "zi_l16_w8_p2_net"] {
        lockstep(n, CYCLES);
    }
}

#[test]
fn netsim_matches_verilator_on_arithmetic_netlists() {
    for n in ["mul_pipe16_net", "div_round_q5_net", "div_const_k15_s6_net", "fp16_convert_net"] {
        lockstep(n, CYCLES);
    }
}

/// The activity counters (`make bench`'s energy proxy) against the
/// flip-flop outputs compared cycle by cycle: equal under random inputs,
/// and nothing toggles while the inputs hold with `en` low.
#[test]
fn activity_counts_every_flop_change() {
    let ns = models::get("mul_pipe16_net");
    let mut m = Model::with_seed(ns, 5);
    m.reset(1);
    let mut inputs = RandomInputs::new(&m, 0xac7);
    let mut buf = Vec::new();
    m.netsim_mut().unwrap().clear_activity();
    let mut prev = m.netsim().unwrap().flop_bits();
    let mut changes = 0u64;
    for _ in 0..500 {
        buf.clear();
        inputs.draw_into(&mut buf);
        inputs.set(&mut m, &buf);
        m.tick();
        let now = m.netsim().unwrap().flop_bits();
        changes += prev.iter().zip(&now).filter(|(a, b)| a != b).count() as u64;
        prev = now;
    }
    let a = m.netsim().unwrap().activity();
    println!("mul_pipe16_net: 500 random cycles, {} flops: {a:?}", prev.len());
    assert!(changes > 0 && a.gate_toggles > 0, "random inputs moved nothing: {a:?}");
    assert_eq!(a.flop_toggles, changes, "counted toggles against compared states");
    let en = m.port("en");
    m.set(en, 0);
    m.tick();
    m.netsim_mut().unwrap().clear_activity();
    for _ in 0..100 {
        m.tick();
    }
    let a = m.netsim().unwrap().activity();
    assert_eq!(a.flop_toggles, 0, "held pipeline toggled: {a:?}");
}
