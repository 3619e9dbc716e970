#!/usr/bin/env bash
# SAT proof that the zero-insert shifter inverts the zero-remove shifter
# (spec §3.1, §9), on the emitted RTL at N = 8 lanes of W = 8 bits,
# combinational (pipeline = 0), for every mask k and every data word x:
#   (1) insert(remove(x, k).data, k) == x with the lanes where k is 0 cleared,
#   (2) remove(insert(x, k), k) == x with lanes >= popcount(k) cleared, and
#       out_count == popcount(k).
#   constraints/prove_zero_shifters.sh [RTLGEN]   (default target/release/rtl-gen)
# A mutant check (lane 3 of (1) expected unmasked) must fail first, so a
# vacuous proof (for instance a miter wired to a constant) is caught.
# Exits non-zero if the proof fails or the mutant is not refuted.
set -euo pipefail
rtlgen=${1:-target/release/rtl-gen}
lanes=8 width=8
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for u in zero-remove-shifter zero-insert-shifter; do
  "$rtlgen" emit $u --lanes $lanes --width $width --pipeline 0 -o "$work/$u" > /dev/null
done

# MUTANT = 1 expects lane 3 of (1) to come back even where k[3] is 0.
cat > "$work/miter.v" <<EOF
module zero_shifters_miter #(parameter MUTANT = 0) (
    input  wire [$lanes*$width-1:0] x,
    input  wire [$lanes-1:0] k,
    output wire ok
);
    localparam N = $lanes, W = $width;
    wire [N*W-1:0] packed_x, back_x, spread, packed_s;
    wire [7:0] count_x, count_s;
    // (1) remove then insert
    zero_remove_shifter rx (.clock(1'b0), .reset(1'b0), .in_valid(1'b1), .in_ready(),
        .in_data(x), .in_keep(k), .out_valid(), .out_ready(1'b1), .out_data(packed_x), .out_count(count_x));
    zero_insert_shifter ix (.clock(1'b0), .reset(1'b0), .in_valid(1'b1), .in_ready(),
        .in_data(packed_x), .in_mask(k), .out_valid(), .out_ready(1'b1), .out_data(back_x));
    // (2) insert then remove
    zero_insert_shifter is (.clock(1'b0), .reset(1'b0), .in_valid(1'b1), .in_ready(),
        .in_data(x), .in_mask(k), .out_valid(), .out_ready(1'b1), .out_data(spread));
    zero_remove_shifter rs (.clock(1'b0), .reset(1'b0), .in_valid(1'b1), .in_ready(),
        .in_data(spread), .in_keep(k), .out_valid(), .out_ready(1'b1), .out_data(packed_s), .out_count(count_s));

    reg [N*W-1:0] want1, want2;
    reg [7:0] pop;
    integer i;
    always @* begin
        pop = 0;
        for (i = 0; i < N; i = i + 1) pop = pop + {7'b0, k[i]};
        for (i = 0; i < N; i = i + 1) begin
            want1[i*W +: W] = (k[i] || (MUTANT != 0 && i == 3)) ? x[i*W +: W] : {W{1'b0}};
            want2[i*W +: W] = (i < pop) ? x[i*W +: W] : {W{1'b0}};
        end
    end
    assign ok = back_x == want1 && packed_s == want2 && count_s == pop && count_x == pop;
endmodule
EOF

prove() { # $1 = MUTANT, $2 = log
  yosys -q -l "$2" -p "
    read_verilog -sv $work/zero-remove-shifter/zero_remove_shifter.v
    read_verilog -sv $work/zero-insert-shifter/zero_insert_shifter.v
    read_verilog -sv $work/miter.v
    chparam -set MUTANT $1 zero_shifters_miter
    hierarchy -check -top zero_shifters_miter
    proc; flatten; opt -fast
    sat -prove ok 1 -verify -show-inputs" > /dev/null 2>&1
}

if prove 1 "$work/mutant.log"; then
  echo "prove_zero_shifters: FAILED: the mutant check was not refuted (vacuous miter?)" >&2
  exit 1
fi
grep -q "SAT proof finished - model found: FAIL" "$work/mutant.log" || {
  echo "prove_zero_shifters: FAILED: the mutant run failed for another reason:" >&2
  tail -20 "$work/mutant.log" >&2
  exit 1
}
if ! prove 0 "$work/proof.log"; then
  echo "prove_zero_shifters: FAILED: counterexample or error:" >&2
  grep -A40 "model found" "$work/proof.log" >&2 || tail -40 "$work/proof.log" >&2
  exit 1
fi
grep -q "SAT proof finished - no model found: SUCCESS" "$work/proof.log"
echo "prove_zero_shifters: PROVED at N = $lanes, W = $width (all 2^$lanes masks, all data): insert(remove(x, k), k) = x masked by k; remove(insert(x, k), k) = x below popcount(k); mutant refuted"
