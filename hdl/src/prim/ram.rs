//! Single-port and simple dual-port synchronous RAMs (the swap points for
//! SRAM macros) and a multiply by a generation-time constant.
//!
//! `SpRam` is the swap point for an SRAM macro: its storage is a plain
//! Verilog module of its own (`<module>`, named by the caller), with exactly
//! `clog2(depth)` address bits and `width` data bits, instantiated inside
//! the rust-hdl wrapper that carries the block's fixed-width ports (`A`
//! address bits, `W` data bits; the bits above the module's are unused on
//! the way in and 0 on the way out). Its behaviour is a typical 1RW SRAM's:
//! - `en && we`: `wdata` is written to `addr` at the edge; `rdata` holds;
//! - `en && !we`: `rdata` takes the word at `addr` at the edge (one cycle
//!   of read latency);
//! - `!en`: nothing changes, `rdata` holds.
//!
//! The storage has no reset and starts undefined: a design reads only
//! words it wrote since its own reset (spec §1: registers reset; memories
//! are not registers).

use rust_hdl::prelude::*;
use std::collections::BTreeMap;

/// Least `w` with `2^w >= n`, at least 1 (an address port needs a bit).
pub fn addr_bits(depth: usize) -> usize {
    (usize::BITS - depth.saturating_sub(1).leading_zeros()).max(1) as usize
}

/// What a memory is, for the generator's manifest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemInfo {
    /// The Verilog module of the storage (the SRAM swap point).
    pub module: String,
    /// Role in the unit (manifest and docs).
    pub name: String,
    pub depth: usize,
    pub width: usize,
}

impl MemInfo {
    pub fn bits(&self) -> u64 {
        self.depth as u64 * self.width as u64
    }

    /// A memory behind a wrapper with `a` address and `w` data bits: the
    /// words must fit the ports, and the module name must be an identifier.
    fn checked(module: &str, name: &str, depth: usize, width: usize, a: usize, w: usize) -> MemInfo {
        assert!(depth >= 1 && (1..=w).contains(&width), "{name}: depth {depth}, width {width} (port {w})");
        assert!(addr_bits(depth) <= a, "{name}: {depth} words need more than {a} address bits");
        assert!(module.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'), "module name {module}");
        MemInfo { module: module.into(), name: name.into(), depth, width }
    }
}

/// The wrapper's `W`-bit `rdata` from the storage's `dw`-bit word, zero above.
fn widen_rdata(dw: usize, w: usize) -> String {
    if dw == w {
        "assign rdata = rdata_w;".to_string()
    } else {
        format!("assign rdata = {{{}'d0, rdata_w}};", w - dw)
    }
}

/// The low `width` bits of a `W`-bit word (the storage's own width).
fn width_mask<const W: usize>(width: usize) -> Bits<W> {
    if width >= W {
        !Bits::<W>::default()
    } else {
        (Bits::<W>::from(1u64) << (width as u64)) - Bits::<W>::from(1u64)
    }
}

#[derive(LogicBlock)]
pub struct SpRam<const A: usize, const W: usize> {
    pub clock: Signal<In, Clock>,
    /// Access this cycle.
    pub en: Signal<In, Bit>,
    /// With `en`: write (else read).
    pub we: Signal<In, Bit>,
    pub addr: Signal<In, Bits<A>>,
    pub wdata: Signal<In, Bits<W>>,
    /// The word of the last read (bits above `width` are 0).
    pub rdata: Signal<Out, Bits<W>>,
    _info: MemInfo,
    _sim: BTreeMap<u64, Bits<W>>,
}

impl<const A: usize, const W: usize> SpRam<A, W> {
    /// `depth` words of `width` bits (`width <= W`, `clog2(depth) <= A`),
    /// stored in Verilog module `module`.
    pub fn new(module: &str, name: &str, depth: usize, width: usize) -> Self {
        SpRam {
            clock: Default::default(),
            en: Default::default(),
            we: Default::default(),
            addr: Default::default(),
            wdata: Default::default(),
            rdata: Default::default(),
            _info: MemInfo::checked(module, name, depth, width, A, W),
            _sim: BTreeMap::new(),
        }
    }

    pub fn info(&self) -> &MemInfo {
        &self._info
    }
}

impl<const A: usize, const W: usize> Logic for SpRam<A, W> {
    // rust-hdl's own simulator is not used (Verilator is), but keep it right.
    fn update(&mut self) {
        if self.clock.pos_edge() && self.en.val() {
            let a = self.addr.val().index() as u64;
            if self.we.val() {
                let mask = width_mask::<W>(self._info.width);
                self._sim.insert(a, self.wdata.val() & mask);
            } else {
                self.rdata.next = self._sim.get(&a).copied().unwrap_or_default();
            }
        }
    }

    fn connect(&mut self) {
        self.rdata.connect();
    }

    fn hdl(&self) -> Verilog {
        let i = &self._info;
        let (m, aw, dw) = (&i.module, addr_bits(i.depth), i.width);
        let rdata = widen_rdata(dw, W);
        let code = format!(
            "wire [{dm}:0] rdata_w;\n\
             {m} store(\n    .clock(clock),\n    .en(en),\n    .we(we),\n    .addr(addr[{am}:0]),\n    .wdata(wdata[{dm}:0]),\n    .rdata(rdata_w)\n);\n\
             {rdata}\n",
            am = aw - 1,
            dm = dw - 1,
        );
        let cores = format!(
            "\n// {name}: {depth} x {dw} bits, single port, synchronous read (one cycle), no reset.\n\
             // Replace this module by an SRAM macro of the same behaviour.\n\
             module {m}(clock, en, we, addr, wdata, rdata);\n\
             \x20   input wire clock;\n\
             \x20   input wire en;\n\
             \x20   input wire we;\n\
             \x20   input wire [{am}:0] addr;\n\
             \x20   input wire [{dm}:0] wdata;\n\
             \x20   output reg [{dm}:0] rdata;\n\
             \x20   reg [{dm}:0] mem [0:{last}];\n\
             \x20   always @(posedge clock) begin\n\
             \x20       if (en) begin\n\
             \x20           if (we) mem[addr] <= wdata;\n\
             \x20           else rdata <= mem[addr];\n\
             \x20       end\n\
             \x20   end\n\
             endmodule // {m}\n",
            name = i.name,
            depth = i.depth,
            am = aw - 1,
            dm = dw - 1,
            last = i.depth - 1,
        );
        Verilog::Wrapper(Wrapper { code, cores })
    }

    fn timing(&self) -> Vec<TimingInfo> {
        vec![TimingInfo {
            name: "ram".into(),
            clock: "clock".into(),
            inputs: vec!["en".into(), "we".into(), "addr".into(), "wdata".into()],
            outputs: vec!["rdata".into()],
        }]
    }
}

/// Simple dual-port synchronous RAM: one write port and one read port, both
/// usable every cycle. The same swap point as [`SpRam`]: the storage is a
/// plain Verilog module of its own (exact widths), inside a wrapper with
/// fixed-width ports (`A` address bits, `W` data bits). Behaviour of a
/// typical 1W1R SRAM:
/// - `we`: `wdata` is written to `waddr` at the edge;
/// - `re`: `rdata` takes the word at `raddr` at the edge (one cycle of
///   latency); without `re` it holds;
/// - a read of the address written at the same edge is not used by any
///   design here (its result is the old word in the Verilog, undefined on
///   an SRAM).
///
/// No reset; a design reads only words it wrote since its own reset.
#[derive(LogicBlock)]
pub struct DpRam<const A: usize, const W: usize> {
    pub clock: Signal<In, Clock>,
    /// Write this cycle.
    pub we: Signal<In, Bit>,
    pub waddr: Signal<In, Bits<A>>,
    pub wdata: Signal<In, Bits<W>>,
    /// Read this cycle.
    pub re: Signal<In, Bit>,
    pub raddr: Signal<In, Bits<A>>,
    /// The word of the last read (bits above `width` are 0).
    pub rdata: Signal<Out, Bits<W>>,
    _info: MemInfo,
    _sim: BTreeMap<u64, Bits<W>>,
}

impl<const A: usize, const W: usize> DpRam<A, W> {
    /// `depth` words of `width` bits (`width <= W`, `clog2(depth) <= A`),
    /// stored in Verilog module `module`.
    pub fn new(module: &str, name: &str, depth: usize, width: usize) -> Self {
        DpRam {
            clock: Default::default(),
            we: Default::default(),
            waddr: Default::default(),
            wdata: Default::default(),
            re: Default::default(),
            raddr: Default::default(),
            rdata: Default::default(),
            _info: MemInfo::checked(module, name, depth, width, A, W),
            _sim: BTreeMap::new(),
        }
    }

    pub fn info(&self) -> &MemInfo {
        &self._info
    }
}

impl<const A: usize, const W: usize> Logic for DpRam<A, W> {
    // rust-hdl's own simulator is not used (Verilator is), but keep it right.
    fn update(&mut self) {
        if self.clock.pos_edge() {
            if self.re.val() {
                let a = self.raddr.val().index() as u64;
                self.rdata.next = self._sim.get(&a).copied().unwrap_or_default();
            }
            if self.we.val() {
                let mask = width_mask::<W>(self._info.width);
                self._sim.insert(self.waddr.val().index() as u64, self.wdata.val() & mask);
            }
        }
    }

    fn connect(&mut self) {
        self.rdata.connect();
    }

    fn hdl(&self) -> Verilog {
        let i = &self._info;
        let (m, aw, dw) = (&i.module, addr_bits(i.depth), i.width);
        let rdata = widen_rdata(dw, W);
        let code = format!(
            "wire [{dm}:0] rdata_w;\n\
             {m} store(\n    .clock(clock),\n    .we(we),\n    .waddr(waddr[{am}:0]),\n    .wdata(wdata[{dm}:0]),\n    \
             .re(re),\n    .raddr(raddr[{am}:0]),\n    .rdata(rdata_w)\n);\n\
             {rdata}\n",
            am = aw - 1,
            dm = dw - 1,
        );
        let cores = format!(
            "\n// {name}: {depth} x {dw} bits, one write and one read port, synchronous read\n\
             // (one cycle), no reset. Replace this module by an SRAM macro of the same behaviour.\n\
             module {m}(clock, we, waddr, wdata, re, raddr, rdata);\n\
             \x20   input wire clock;\n\
             \x20   input wire we;\n\
             \x20   input wire [{am}:0] waddr;\n\
             \x20   input wire [{dm}:0] wdata;\n\
             \x20   input wire re;\n\
             \x20   input wire [{am}:0] raddr;\n\
             \x20   output reg [{dm}:0] rdata;\n\
             \x20   reg [{dm}:0] mem [0:{last}];\n\
             \x20   always @(posedge clock) begin\n\
             \x20       if (we) mem[waddr] <= wdata;\n\
             \x20       if (re) rdata <= mem[raddr];\n\
             \x20   end\n\
             endmodule // {m}\n",
            name = i.name,
            depth = i.depth,
            am = aw - 1,
            dm = dw - 1,
            last = i.depth - 1,
        );
        Verilog::Wrapper(Wrapper { code, cores })
    }

    fn timing(&self) -> Vec<TimingInfo> {
        vec![TimingInfo {
            name: "ram".into(),
            clock: "clock".into(),
            inputs: vec!["we".into(), "waddr".into(), "wdata".into(), "re".into(), "raddr".into()],
            outputs: vec!["rdata".into()],
        }]
    }
}

/// `y = x * K mod 2^N`, combinational, for a constant `K` chosen at
/// generation time. rust-hdl multiplies only 16 x 16 bits (toolchain notes,
/// trap 2); a constant product is plain Verilog that synthesis reduces to
/// shifts and adds of `K`'s set bits.
#[derive(LogicBlock)]
pub struct MulConst<const N: usize> {
    pub x: Signal<In, Bits<N>>,
    pub y: Signal<Out, Bits<N>>,
    _k: u64,
}

impl<const N: usize> MulConst<N> {
    pub fn new(k: u64) -> Self {
        assert!(N <= 64 && (N == 64 || k >> N == 0), "constant {k} does not fit {N} bits");
        MulConst { x: Default::default(), y: Default::default(), _k: k }
    }
}

impl<const N: usize> Logic for MulConst<N> {
    fn update(&mut self) {
        let x = self.x.val().to_u64();
        let v = x.wrapping_mul(self._k);
        let v = if N >= 64 { v } else { v & ((1u64 << N) - 1) };
        self.y.next = Bits::<N>::from(v);
    }

    fn connect(&mut self) {
        self.y.connect();
    }

    fn hdl(&self) -> Verilog {
        Verilog::Custom(format!("always @(*) y = x * {N}'d{};", self._k))
    }

    fn timing(&self) -> Vec<TimingInfo> {
        vec![]
    }
}

/// `rows` valid bits, reset to 0, in groups of `group` consecutive rows:
/// read one bit (combinational), clear one group and set one bit per cycle
/// (a set wins over a clear of the same row). One vector register in
/// plain Verilog (its own module, exact widths), so its size costs no
/// generated code: a row-per-register description grows with every row.
#[derive(LogicBlock)]
pub struct ValidBits {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub rd_row: Signal<In, Bits<16>>,
    /// Bit `rd_row`.
    pub rd_q: Signal<Out, Bit>,
    /// Clear rows `clr_group * group .. clr_group * group + group - 1` at the edge.
    pub clr: Signal<In, Bit>,
    pub clr_group: Signal<In, Bits<16>>,
    /// Set row `set_row` at the edge.
    pub set: Signal<In, Bit>,
    pub set_row: Signal<In, Bits<16>>,
    _module: String,
    _rows: usize,
    _group: usize,
    _sim: Vec<bool>,
}

impl ValidBits {
    pub fn new(module: &str, rows: usize, group: usize) -> Self {
        assert!(rows >= 1 && group >= 1 && rows % group == 0 && addr_bits(rows) <= 16);
        ValidBits {
            clock: Default::default(),
            reset: Default::default(),
            rd_row: Default::default(),
            rd_q: Default::default(),
            clr: Default::default(),
            clr_group: Default::default(),
            set: Default::default(),
            set_row: Default::default(),
            _module: module.into(),
            _rows: rows,
            _group: group,
            _sim: vec![false; rows],
        }
    }
}

impl Logic for ValidBits {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            if self.reset.val() {
                self._sim.iter_mut().for_each(|v| *v = false);
            } else {
                if self.clr.val() {
                    let g = self.clr_group.val().index() * self._group;
                    for r in g..(g + self._group).min(self._rows) {
                        self._sim[r] = false;
                    }
                }
                if self.set.val() && self.set_row.val().index() < self._rows {
                    self._sim[self.set_row.val().index()] = true;
                }
            }
        }
        self.rd_q.next = self._sim.get(self.rd_row.val().index()).copied().unwrap_or(false);
    }

    fn connect(&mut self) {
        self.rd_q.connect();
    }

    fn hdl(&self) -> Verilog {
        let (m, n, g) = (&self._module, self._rows, self._group);
        let (aw, gw) = (addr_bits(n), addr_bits(n / g));
        let code = format!(
            "{m} bits(\n    .clock(clock),\n    .reset(reset),\n    .rd_row(rd_row[{a}:0]),\n    .rd_q(rd_q),\n    \
             .clr(clr),\n    .clr_group(clr_group[{gm}:0]),\n    .set(set),\n    .set_row(set_row[{a}:0])\n);\n",
            a = aw - 1,
            gm = gw - 1,
        );
        // v with the group at clr_group cleared (a single group: all of v)
        let cleared = if n == g {
            format!("v & {{{n}{{clr_group != {gw}'d0}}}}")
        } else {
            format!("v & ~({{{}'d0, {{{g}{{1'b1}}}}}} << ({w}'(clr_group) * {w}'d{g}))", n - g, w = addr_bits(n) + 1)
        };
        let cores = format!(
            "\n// {n} valid bits in groups of {g}, reset to 0.\n\
             module {m}(clock, reset, rd_row, rd_q, clr, clr_group, set, set_row);\n\
             \x20   input wire clock;\n\
             \x20   input wire reset;\n\
             \x20   input wire [{a}:0] rd_row;\n\
             \x20   output wire rd_q;\n\
             \x20   input wire clr;\n\
             \x20   input wire [{gm}:0] clr_group;\n\
             \x20   input wire set;\n\
             \x20   input wire [{a}:0] set_row;\n\
             \x20   reg [{last}:0] v;\n\
             \x20   wire [{last}:0] cleared = {cleared};\n\
             \x20   always @(posedge clock) begin\n\
             \x20       if (reset) v <= {n}'d0;\n\
             \x20       else begin\n\
             \x20           if (clr) v <= cleared;\n\
             \x20           if (set) v[set_row] <= 1'b1;\n\
             \x20       end\n\
             \x20   end\n\
             \x20   assign rd_q = v[rd_row];\n\
             endmodule // {m}\n",
            a = aw - 1,
            gm = gw - 1,
            last = n - 1,
        );
        Verilog::Wrapper(Wrapper { code, cores })
    }

    fn timing(&self) -> Vec<TimingInfo> {
        vec![]
    }
}

/// `rows` rows of `width` flags (a power of two, at most 64), reset to 0:
/// read one row (combinational), set one flag, or clear every row, per
/// cycle (a clear wins). One vector register in plain Verilog, like
/// [`ValidBits`]: for the few bits a memory cannot hold because they need
/// reset or a one-cycle clear.
#[derive(LogicBlock)]
pub struct RowFlags {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub rd_row: Signal<In, Bits<16>>,
    /// Row `rd_row` (bits above `width` are 0; a row past the last reads 0).
    pub rd_q: Signal<Out, Bits<64>>,
    /// Clear every flag at the edge.
    pub clr: Signal<In, Bit>,
    /// Set flag `set_col` of row `set_row` at the edge.
    pub set: Signal<In, Bit>,
    pub set_row: Signal<In, Bits<16>>,
    pub set_col: Signal<In, Bits<8>>,
    _module: String,
    _rows: usize,
    _width: usize,
    _sim: Vec<u64>,
}

impl RowFlags {
    pub fn new(module: &str, rows: usize, width: usize) -> Self {
        assert!(rows >= 1 && addr_bits(rows) <= 16 && width.is_power_of_two() && width <= 64);
        RowFlags {
            clock: Default::default(),
            reset: Default::default(),
            rd_row: Default::default(),
            rd_q: Default::default(),
            clr: Default::default(),
            set: Default::default(),
            set_row: Default::default(),
            set_col: Default::default(),
            _module: module.into(),
            _rows: rows,
            _width: width,
            _sim: vec![0; rows],
        }
    }
}

impl Logic for RowFlags {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            if self.reset.val() || self.clr.val() {
                self._sim.iter_mut().for_each(|v| *v = 0);
            } else if self.set.val() {
                let (r, c) = (self.set_row.val().index(), self.set_col.val().index());
                if r < self._rows && c < self._width {
                    self._sim[r] |= 1 << c;
                }
            }
        }
        self.rd_q.next = self._sim.get(self.rd_row.val().index()).copied().unwrap_or(0).into();
    }

    fn connect(&mut self) {
        self.rd_q.connect();
    }

    fn hdl(&self) -> Verilog {
        let (m, rows, w) = (&self._module, self._rows, self._width);
        let n = rows * w;
        let aw = addr_bits(rows);
        let cb = w.trailing_zeros() as usize;
        // flag (row, col) is bit row * w + col of v; a single row needs no row bits
        let ra = if rows == 1 { 0 } else { aw };
        let iw = (ra + cb).max(1);
        let (set_idx, rd_base) = match (ra > 0, cb > 0) {
            (true, true) => ("{set_row, set_col}".to_string(), format!("{{rd_row, {cb}'d0}}")),
            (true, false) => ("set_row".to_string(), "rd_row".to_string()),
            (false, true) => ("set_col".to_string(), format!("{iw}'d0")),
            (false, false) => ("1'b0".to_string(), "1'b0".to_string()),
        };
        let (col_port, col_decl) = if cb == 0 {
            (String::new(), String::new())
        } else {
            (
                format!(",\n    .set_col(set_col[{}:0])", cb - 1),
                format!("\x20   input wire [{}:0] set_col;\n", cb - 1),
            )
        };
        let rd = if w == 64 {
            "assign rd_q = q_w;".to_string()
        } else {
            format!("assign rd_q = {{{}'d0, q_w}};", 64 - w)
        };
        let code = format!(
            "wire [{wm}:0] q_w;\n\
             {m} flags(\n    .clock(clock),\n    .reset(reset),\n    .rd_row(rd_row[{am}:0]),\n    .rd_q(q_w),\n    \
             .clr(clr),\n    .set(set),\n    .set_row(set_row[{am}:0]){col_port}\n);\n{rd}\n",
            wm = w - 1,
            am = aw - 1,
        );
        let ports = if cb == 0 { "" } else { ", set_col" };
        // rows past the last: reads give 0, sets are ignored
        let full = rows == 1 << aw;
        let rd_q = if full {
            format!("v[rd_i +: {w}]")
        } else {
            format!("(rd_row < {aw}'d{rows}) ? v[rd_i +: {w}] : {w}'d0")
        };
        let set_ok = if full { "set".to_string() } else { format!("set && set_row < {aw}'d{rows}") };
        let cores = format!(
            "\n// {rows} rows of {w} flags, reset to 0; a row past the last reads 0.\n\
             module {m}(clock, reset, rd_row, rd_q, clr, set, set_row{ports});\n\
             \x20   input wire clock;\n\
             \x20   input wire reset;\n\
             \x20   input wire [{am}:0] rd_row;\n\
             \x20   output wire [{wm}:0] rd_q;\n\
             \x20   input wire clr;\n\
             \x20   input wire set;\n\
             \x20   input wire [{am}:0] set_row;\n\
             {col_decl}\
             \x20   reg [{nm}:0] v;\n\
             \x20   wire [{im}:0] set_i = {set_idx};\n\
             \x20   wire [{im}:0] rd_i = {rd_base};\n\
             \x20   always @(posedge clock) begin\n\
             \x20       if (reset || clr) v <= {n}'d0;\n\
             \x20       else if ({set_ok}) v[set_i] <= 1'b1;\n\
             \x20   end\n\
             \x20   assign rd_q = {rd_q};\n\
             endmodule // {m}\n",
            am = aw - 1,
            wm = w - 1,
            nm = n - 1,
            im = iw - 1,
        );
        Verilog::Wrapper(Wrapper { code, cores })
    }

    fn timing(&self) -> Vec<TimingInfo> {
        vec![]
    }
}
