#!/usr/bin/env bash
# Formal equivalence of one unit's emitted RTL and its OSU018 netlist (Yosys
# equiv_make / equiv_simple / equiv_induct).
#   constraints/prove_netlist.sh [--mutate] NETLIST_DIR MODULE LIBERTY
# NETLIST_DIR is a model-cache netlist folder (`models netlist NAME` prints
# it): <MODULE>.v is the emitted Verilog that was synthesized, and
# <MODULE>.osu018.v the netlist that `make synth` times and the netlist
# co-simulation runs.
#
# Gold (RTL): proc, flatten, memories mapped to registers (the synthesis
# maps them the same way, so both sides keep the same register names),
# Yosys's own gate lowering (techmap) and its register optimisations. These
# fold registers that hold their reset value forever into constants, as the
# synthesis did (opt_dff -sat: where the next state can be shown to always
# equal the reset value); without that the induction, which starts from any
# state, would see them as free and could not match the netlist's
# constants. Undriven wires become 0 as in the synthesis script. Gate: the
# netlist with the cells' functions read from the Liberty (DFFPOSX1 becomes
# a $_DFF_P_), flattened. What is checked is thus ABC's mapping, dfflibmap,
# the buffering and every pass after techmap; the Verilog front end and
# Yosys's word-level passes are shared by both sides and trusted.
#
# equiv_make pairs outputs and same-named wires (register outputs keep
# their names through ABC); equiv_simple proves what it can from the pairs
# around it, equiv_induct the rest by temporal induction assuming every pair
# equal in the previous steps. So the claim is: started in the same state
# (as after a common reset; memory contents equal but arbitrary), RTL and
# netlist give the same outputs in every cycle for every input sequence.
#
# --mutate proves against a copy of the netlist with one inverter turned
# into a buffer; the proof must then fail (the negative test of `make prove`).
# Prints one line; exits non-zero if the proof fails (or, with --mutate,
# if it does not).
set -euo pipefail
mutate=0
if [ "${1:-}" = --mutate ]; then mutate=1; shift; fi
net=$(realpath "$1") module=$2 liberty=$3
seq=${PROVE_SEQ:-2}
# seconds before the proof is given up (reported as a timeout, exit 2)
limit=${PROVE_TIMEOUT:-600}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# PROVE_KEEP=DIR keeps the Yosys script and log there
keep() { [ -z "${PROVE_KEEP:-}" ] || { mkdir -p "$PROVE_KEEP"; cp "$work"/equiv.* "$PROVE_KEEP/"; }; }

gate=$net/$module.osu018.v
if [ $mutate = 1 ]; then
  # the first inverter instance becomes a buffer: one output bit flips
  awk '!done && /^  INVX1 / {sub(/INVX1/, "BUFX2"); done = 1} {print}' "$gate" > "$work/mutant.v"
  cmp -s "$gate" "$work/mutant.v" && { echo "prove_netlist: $module: no INVX1 to mutate" >&2; exit 1; }
  gate=$work/mutant.v
fi

cat > "$work/equiv.ys" <<EOF
read_verilog -sv $net/$module.v
hierarchy -check -top $module
proc; flatten; opt_clean
memory_map; opt -full
techmap; opt -full
opt_dff -sat; opt -full
setundef -undriven -zero
rename -top gold
design -stash gold
read_liberty -ignore_miss_func $liberty
read_verilog $gate
hierarchy -check -top $module
flatten; opt_clean
rename -top gate
design -stash gate
design -copy-from gold -as gold gold
design -copy-from gate -as gate gate
equiv_make gold gate equiv
hierarchy -top equiv
equiv_simple -seq $seq
equiv_induct -seq $seq
equiv_status
EOF

start=$(date +%s.%N)
status=0
timeout "$limit" yosys -q -l "$work/equiv.log" "$work/equiv.ys" > /dev/null 2>&1 || status=$?
keep
secs=$(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $start}")
cells=$(grep -oE 'Found [0-9]+ \$equiv cells' "$work/equiv.log" | tail -1 | awk '{print $2}' || true)
proven=$(grep -oE 'Of those cells [0-9]+ are proven and [0-9]+ are unproven' "$work/equiv.log" | tail -1 || true)
ok=0
[ $status = 0 ] && grep -q "Equivalence successfully proven!" "$work/equiv.log" && ok=1

if [ $status = 124 ]; then
  echo "prove_netlist: $module: TIMEOUT after $limit s (no result)" >&2
  exit 2
fi
if [ $mutate = 1 ]; then
  if [ $ok = 1 ]; then
    echo "prove_netlist: $module: FAILED: a netlist with one inverter made a buffer was proven equivalent" >&2
    exit 1
  fi
  if [ -z "$proven" ]; then
    echo "prove_netlist: $module: FAILED: the mutant run failed for another reason:" >&2
    tail -20 "$work/equiv.log" >&2
    exit 1
  fi
  echo "$module: mutant (one INVX1 -> BUFX2) refuted: $proven ($secs s)"
  exit 0
fi
# a proof over no pairs (ports not matched) proves nothing
[ "${cells:-0}" -gt 0 ] || ok=0
if [ $ok = 0 ]; then
  echo "prove_netlist: $module: FAILED ($secs s): ${proven:-yosys error}" >&2
  grep -E "Unproven|ERROR" "$work/equiv.log" | head -20 >&2 || tail -20 "$work/equiv.log" >&2
  exit 1
fi
echo "$module: PROVED, $cells equivalence points ($secs s)"
