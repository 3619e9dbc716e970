// Clock gating for the OSU018 flow (constraints/synth.tcl.in), a Yosys
// techmap over the fine-grained flip-flops that `synth` leaves.
//
// OSU018 has no flip-flop with an enable and no clock-gating cell, so
// without this every register that holds its value pays a MUX2X1 per bit
// for the hold. Here each enabled flip-flop instead gets a plain DFF on a
// gated clock, made by the textbook latch-based gate: a latch that is
// transparent while the clock is low samples the enable, and an AND of the
// clock with the latch's output is the gated clock. The latch holds through
// the high phase, so the gated clock has no glitch, and the enable has the
// whole cycle to settle (OpenSTA times it into the latch and checks the AND
// as a clock-gating check). Each flip-flop gets its own gate here; the
// synthesis script's `opt_merge` then merges every gate whose enable is the
// same net into one, so a register of 256 bits ends up with one latch and
// one AND. Two maps in one file: `-D KVF_GATES` the gates, then, after the
// merge, `-D KVF_LATCH` the latch onto the library's cell (one pass would
// map the latches before they could merge).
//
// A sync reset moves into the data path as a gate before D: with `$_SDFFE_`
// (reset over enable) the clock gate opens on enable OR reset, with
// `$_SDFFCE_` (enable over reset) on the enable alone. Only positive-edge
// clocks: the script asserts that no enabled flip-flop is left after it.

`ifdef KVF_GATES
// Every positive-edge flip-flop with an enable; the polarities and the
// reset value are read from the cell type's name, whose last characters
// are `..._<clock><reset><value><enable>_` (or `<clock><enable>_`).
(* techmap_celltype = "$_DFFE_PP_ $_DFFE_PN_ $_SDFFE_PP0P_ $_SDFFE_PP0N_ $_SDFFE_PP1P_ $_SDFFE_PP1N_ $_SDFFE_PN0P_ $_SDFFE_PN0N_ $_SDFFE_PN1P_ $_SDFFE_PN1N_ $_SDFFCE_PP0P_ $_SDFFCE_PP0N_ $_SDFFCE_PP1P_ $_SDFFCE_PP1N_ $_SDFFCE_PN0P_ $_SDFFCE_PN0N_ $_SDFFCE_PN1P_ $_SDFFCE_PN1N_" *)
module kvf_gate_ff (C, D, E, R, Q);
  input C, D, E, R;
  output Q;
  parameter _TECHMAP_CELLTYPE_ = "";
  localparam [8*16-1:0] T = _TECHMAP_CELLTYPE_;
  localparam SYNC = T[23:16] == "0" || T[23:16] == "1";  // a sync reset
  localparam CE = T[63:56] == "C";                        // enable over reset
  wire e, r, g, gl, gc, d;
  generate
    if (T[15:8] == "P") assign e = E;
    else \$_NOT_ ne (.A(E), .Y(e));
    if (!SYNC) begin
      assign g = e;
      assign d = D;
    end else begin
      if (T[39:32] == "P") assign r = R;
      else \$_NOT_ nr (.A(R), .Y(r));
      // reset over enable: the gate also opens for the reset
      if (CE) assign g = e;
      else \$_OR_ og (.A(e), .B(r), .Y(g));
      if (T[23:16] == "1") \$_OR_ od (.A(D), .B(r), .Y(d));
      else \$_ANDNOT_ ad (.A(D), .B(r), .Y(d));
    end
  endgenerate
  \$_DLATCH_N_ l (.E(C), .D(g), .Q(gl));
  \$_AND_ a (.A(C), .B(gl), .Y(gc));
  \$_DFF_P_ f (.C(gc), .D(d), .Q(Q));
endmodule
`endif

`ifdef KVF_LATCH
// The gate's latch onto the library's LATCH (transparent while its CLK is
// high), behind an inverter of the clock that `opt_merge` shares.
module \$_DLATCH_N_ (input E, D, output Q);
  wire ne;
  \$_NOT_ n (.A(E), .Y(ne));
  LATCH l (.CLK(ne), .D(D), .Q(Q));
endmodule
`endif

`ifdef KVF_DBUF
// A buffer in front of a plain flip-flop's D (synth.tcl.in selects the
// flip-flops of nets that drive more than 64), so that a net feeding many
// flip-flops reaches ABC as one output per flip-flop: ABC then sees the
// fan-out and buffers it. (Behind a hold multiplexer each flip-flop's
// D was a gate of its own; without it, Yosys hands ABC one output for a
// net that drives, say, 512 words of a memory, and nothing buffers it.
// Run with -max_iter 1: the map's own flip-flop is not mapped again.)
module \$_DFF_P_ (input C, D, output Q);
  wire d;
  \$_BUF_ b (.A(D), .Y(d));
  \$_DFF_P_ _TECHMAP_REPLACE_ (.C(C), .D(d), .Q(Q));
endmodule
`endif
