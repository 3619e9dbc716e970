#!/usr/bin/env bash
# Formal equivalence of one unit's emitted RTL and its OSU018 netlist.
#   constraints/prove_netlist.sh [--mutate|--mutate-deep|--mutate-box|--mutate-gate] [--engine auto|cut|cut-fsm|induct] [--blackbox "M1 M2"] NETLIST_DIR MODULE LIBERTY
# NETLIST_DIR is a model-cache netlist folder (`models netlist NAME` prints
# it): <MODULE>.v is the emitted Verilog that was synthesized, and
# <MODULE>.osu018.v the netlist that `make synth` times and the netlist
# co-simulation runs.
#
# Gold (RTL): proc, flatten, memories mapped to registers (the synthesis
# maps them the same way, so both sides keep the same register names),
# Yosys's own gate lowering (techmap) and its simple optimisations;
# undriven wires become 0 as in the synthesis script. Gate: the netlist with
# the cells' functions read from the Liberty (DFFPOSX1 becomes a $_DFF_P_),
# flattened. What is checked is thus ABC's mapping, dfflibmap, the clock
# gating (constraints/clock_gate.v; the cut engine folds each gated
# flip-flop into one with a hold, netlist_miter.py), the buffering and every
# pass after techmap; the Verilog front end and Yosys's
# word-level passes are shared by both sides and trusted.
#
# Engines (all prove: started in corresponding states, as after a common
# reset, RTL and netlist give the same outputs in every cycle for every
# input sequence):
#  cut: constraints/netlist_miter.py pairs the registers by name (Yosys and
#    ABC keep them) and cuts them: one combinational miter says that from
#    paired states equal, for every input, the outputs and the paired next
#    states are equal. Registers that do not pair one to one are related
#    by guesses, each checked again on the next state: gold registers the
#    synthesis merged into one gate register, gold registers of equal
#    next-state functions (one literal a class, found by random
#    simulation: the synthesis merges such registers and purges the
#    losers' names; only when the proof fails without them), gold
#    registers whose name is
#    a constant in the gate, gate registers that are a function of the gold
#    state, and state registers the synthesis's `fsm` re-encoded (related
#    through the table that the synthesis's own passes up to `fsm` log
#    here, fsm.log). Guesses that a counterexample refutes are dropped and
#    their registers left free, which can only make the proof fail. ABC's
#    `&cec` proves it (simulation and SAT sweeping of internal
#    equivalences, which multipliers need; where it stalls, cone by cone,
#    and a cone of few inputs it does not finish, such as a 16x8 multiplier,
#    by exhaustive simulation); the claim follows by induction
#    over the cycles. Corresponding states: the paired registers equal, the
#    related ones in their relation, memory contents equal but arbitrary.
#  cut-fsm: cut, with the synthesis's FSM re-encoding (`fsm` after the
#    passes `synth` runs before it) applied to the gold too, so that a state
#    register re-encoded one-hot pairs bit for bit; the re-encoding is then
#    trusted, not checked.
#  induct: Yosys equiv_make pairs same-named wires, equiv_simple and
#    equiv_induct -seq PROVE_SEQ prove them by temporal induction over
#    several cycles (after opt_dff -sat folds registers stuck at their reset
#    value, as the synthesis did). Plain SAT: slow, times out on multipliers.
#  auto (default): cut, then cut-fsm, then induct, until one proves it.
#
# --blackbox: the memory modules M1 M2 were black boxes in the synthesis
# (`make synth`'s run with memories as macros; ppa.py keeps its netlist in
# NETLIST_DIR). They stay black boxes on both sides, and the cut engine
# (the only one that takes them) pairs their instances: their outputs shared,
# their inputs compared in every cycle (netlist_miter.py).
#
# --mutate proves against a copy of the netlist with its first inverter
# turned into a buffer, --mutate-deep with its middle NAND2 turned into an
# AND2 (deep in the logic: a broken way of calling ABC once refuted the
# first kind and proved the second), --mutate-box with the first black
# box's write enable `we` tied to 0, --mutate-gate with the first clock
# gate's latch input tied to 1 (its registers never hold; a gate whose
# enable the fold ignored would prove); the proof must then fail, with every
# engine tried (the negative tests of `make prove`). Prints one line; exits non-zero if the
# proof fails (or, with --mutate, if it does not); exit 2 on a timeout
# (PROVE_TIMEOUT seconds, all engines together). PROVE_KEEP=DIR keeps the
# scripts, logs and the miter there.
set -euo pipefail
mutate=0 engine=${PROVE_ENGINE:-auto} boxes=
while :; do
  case "${1:-}" in
    --blackbox) boxes=$2; shift 2 ;;
    --mutate) mutate=1; shift ;;
    --mutate-deep) mutate=2; shift ;;
    --mutate-box) mutate=3; shift ;;
    --mutate-gate) mutate=4; shift ;;
    --engine) engine=$2; shift 2 ;;
    *) break ;;
  esac
done
case $engine in cut|cut-fsm|induct|auto) ;; *) echo "prove_netlist: unknown engine $engine (cut, cut-fsm, induct or auto)" >&2; exit 1 ;; esac
if [ -n "$boxes" ] && [ "$engine" != cut ]; then
  echo "prove_netlist: --blackbox needs --engine cut" >&2; exit 1
fi
net=$(realpath "$1") module=$2 liberty=$3
here=$(dirname "$(realpath "$0")")
seq=${PROVE_SEQ:-2}
limit=${PROVE_TIMEOUT:-600}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
keep() { [ -z "${PROVE_KEEP:-}" ] || { mkdir -p "$PROVE_KEEP"; cp "$work"/[a-z]* "$PROVE_KEEP/" 2>/dev/null || true; }; }
start=$(date +%s.%N)
elapsed() { awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $start}"; }
left() { awk "BEGIN{l = $limit - ($(date +%s.%N) - $start); print (l > 1 ? int(l) : 1)}"; }

gate=$net/$module.osu018.v
if [ $mutate = 1 ]; then
  # the first inverter instance becomes a buffer: one output bit flips
  awk '!done && /^  INVX1 / {sub(/INVX1/, "BUFX2"); done = 1} {print}' "$gate" > "$work/mutant.v"
  mutation="one INVX1 -> BUFX2"
elif [ $mutate = 2 ]; then
  # the middle NAND2X1 instance becomes an AND2X2, deep in the logic
  n=$(grep -c '^  NAND2X1 ' "$gate" || true)
  awk -v k=$(( (n + 1) / 2 )) '/^  NAND2X1 / && ++c == k {sub(/NAND2X1/, "AND2X2")} {print}' "$gate" > "$work/mutant.v"
  mutation="the middle NAND2X1 -> AND2X2"
elif [ $mutate = 4 ]; then
  # the first clock gate's latch takes 1: its flip-flops never hold
  awk '!done && /^  LATCH / {inl = 1} inl && /^ *\.D\(/ {sub(/\.D\(.*\)/, ".D(1'"'"'b1)"); done = 1; inl = 0} {print}' "$gate" > "$work/mutant.v"
  mutation="the first LATCH's D tied to 1"
elif [ $mutate = 3 ]; then
  [ -n "$boxes" ] || { echo "prove_netlist: --mutate-box needs --blackbox" >&2; exit 1; }
  # the first instance of a black box: its `we` connection becomes 0
  awk -v boxes=" $boxes " '!done && NF && index(boxes, " " $1 " ") {inbox = 1}
    inbox && /^ *\.we\(/ {sub(/\.we\(.*\)/, ".we(1'"'"'b0)"); done = 1}
    /^ *\);/ {inbox = 0} {print}' "$gate" > "$work/mutant.v"
  mutation="the first black box's we tied to 0"
fi
if [ $mutate != 0 ]; then
  cmp -s "$gate" "$work/mutant.v" && { echo "prove_netlist: $module: no cell to mutate ($mutation)" >&2; exit 1; }
  gate=$work/mutant.v
fi

# Result cache. A proof is a function of its inputs alone: the RTL, the
# netlist (the mutant's, for a mutant run), the Liberty, this prover (its
# three files), Yosys (and its ABC), the Python and C compiler it runs on,
# and every setting that steers it. With all of them unchanged a PROVED
# line, or a refuted mutant, is printed again from the cache with
# "[cached]" added, as the model cache reuses a build; a
# failure or a timeout is never stored. PROVE_CACHE=off proves afresh
# (`make prove-all` does, for its times; so does PROVE_KEEP); default folder
# ~/.cache/kvforge/proofs.
cache=${PROVE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kvforge/proofs}
# a run asked to keep its work files does the work
[ -z "${PROVE_KEEP:-}" ] || cache=off
if [ "$cache" != off ]; then
  key=$( {
    sha256sum "$net/$module.v" "$gate" "$liberty" "$here/prove_netlist.sh" "$here/netlist_miter.py" "$here/aig_exhaust.c" | cut -d' ' -f1
    yosys -V; python3 --version; cc --version | head -n 1
    echo "module=$module mutate=$mutate engine=$engine boxes=$boxes seq=$seq"
    env | grep -E '^PROVE_(CEC_SECONDS|CONE_SECONDS|EXHAUST_BITS)=' | sort || true
  } | sha256sum | cut -c1-32)
  if [ -f "$cache/$key" ]; then
    echo "$(cat "$cache/$key") [cached]"
    exit 0
  fi
fi
# $1: the result line, stored for the next run with the same inputs
remember() {
  if [ "$cache" != off ]; then
    mkdir -p "$cache" && echo "$1" > "$cache/$key.tmp$$" && mv "$cache/$key.tmp$$" "$cache/$key"
  fi
  echo "$1"
}

# With fsm=1 the gold also gets the synthesis's FSM re-encoding (the passes
# that `synth` runs before it, then `fsm`), which is then trusted.
gold_read="read_verilog -sv $net/$module.v
${boxes:+blackbox $boxes}
hierarchy -check -top $module
proc; flatten"
gold_prep() {
  echo "$gold_read"
  gold_rest "$1"
}
gold_rest() {
  echo "opt_clean"
  [ "$1" = 0 ] || echo "opt_expr; opt_clean; opt -nodffe -nosdff; fsm; opt"
  echo "memory_map; opt -full
techmap; opt -full
setundef -undriven -zero"
}
# the black boxes' port lists come from the RTL: its other modules deleted
gate_prep="${boxes:+read_verilog -sv $net/$module.v
blackbox $boxes
delete =A:blackbox %n
}read_liberty -ignore_miss_func $liberty
read_verilog $gate
hierarchy -check -top $module
flatten; opt_clean"

# Each engine sets result (proved | refuted | error | timeout) and detail.
run_cut() {
  # the synthesis's own steps up to its `fsm` (synth's begin and coarse
  # script), only to log the re-encodings: the miter relates them, checked
  cat > "$work/cut.ys" <<EOF
$gold_read
design -save rtl
opt_expr; opt_clean; check; opt -nodffe -nosdff
tee -q -o $work/fsm.log fsm
design -load rtl
$(gold_rest "$1")
dffunmap; aigmap; opt_clean
write_json $work/gold.json
design -reset
$gate_prep
setundef -undriven -zero
dffunmap; aigmap; opt_clean
write_json $work/gate.json
EOF
  local status=0
  timeout "$(left)" yosys -q -l "$work/cut.log" "$work/cut.ys" > /dev/null 2>&1 || status=$?
  if [ $status = 124 ]; then result=timeout; return; fi
  if [ $status != 0 ]; then result=error detail="yosys: $(grep -m1 ERROR "$work/cut.log")"; return; fi
  status=0
  # the miter script runs ABC's &cec on the two circuits, output for
  # output (not one XOR miter: `&cec -m` on a many-output miter proved
  # wrong mutants equivalent in a test), until no relation it guessed is
  # refuted; abc.log is the last &cec's verdict
  timeout "$(left)" python3 "$here/netlist_miter.py" --fsm-log "$work/fsm.log" --abc-log "$work/abc.log" --boxes "$boxes" \
    "$work/gold.json" "$work/gate.json" "$work/miter.aig" "$work/miter.map" > "$work/miter.txt" 2>&1 || status=$?
  if [ $status = 124 ]; then result=timeout; return; fi
  # 4: a register on a derived clock that is not a clock gate
  if [ $status = 4 ]; then result=refuted detail=$(tail -1 "$work/miter.txt"); return; fi
  if [ $status != 0 ]; then result=error detail=$(tail -1 "$work/miter.txt"); return; fi
  if grep -q "Networks are equivalent" "$work/abc.log"; then
    result=proved detail="$(cat "$work/miter.txt")"
  elif grep -q "NOT EQUIVALENT" "$work/abc.log"; then
    local out
    out=$(grep -m1 -oE 'Output [0-9]+|zero-based number [0-9]+' "$work/abc.log" | awk 'NR == 1 {print $NF}')
    local how
    # (a cone's refutation says how: &cec, or the pattern exhaustive simulation found)
    how=$(grep -m1 -oE '\((cone|exhaustive simulation).*\)$' "$work/abc.log" || true)
    result=refuted detail="differs at $(sed -n "$((${out:-0} + 1))p" "$work/miter.map") ${how:+$how }($(cat "$work/miter.txt"))"
  else
    result=error detail="ABC: $(grep -vE '^ABC command line|^Assuming' "$work/abc.log" | tail -1)"
  fi
}

run_induct() {
  cat > "$work/equiv.ys" <<EOF
$(gold_prep 0)
opt_dff -sat; opt -full; setundef -undriven -zero
rename -top gold
design -stash gold
$gate_prep
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
  local status=0
  timeout "$(left)" yosys -q -l "$work/equiv.log" "$work/equiv.ys" > /dev/null 2>&1 || status=$?
  if [ $status = 124 ]; then result=timeout; return; fi
  local cells proven
  cells=$(grep -oE 'Found [0-9]+ \$equiv cells' "$work/equiv.log" | tail -1 | awk '{print $2}' || true)
  proven=$(grep -oE 'Of those cells [0-9]+ are proven and [0-9]+ are unproven' "$work/equiv.log" | tail -1 || true)
  if [ $status = 0 ] && grep -q "Equivalence successfully proven!" "$work/equiv.log" && [ "${cells:-0}" -gt 0 ]; then
    # (a proof over no pairs, ports not matched, would prove nothing)
    result=proved detail="$cells equivalence points (Yosys equiv_induct)"
  elif [ -n "$proven" ]; then
    result=refuted detail="$proven: $(grep -m3 -E 'Unproven' "$work/equiv.log" | tr -s ' \n' ' ')"
  else
    result=error detail="yosys: $(grep -m1 ERROR "$work/equiv.log")"
  fi
}

result=error detail=
tried=
case $engine in
  cut) steps="cut" ;;
  cut-fsm) steps="cut-fsm" ;;
  induct) steps="induct" ;;
  # auto stops at the first proof
  auto) steps="cut cut-fsm induct" ;;
esac
for e in $steps; do
  [ "$result" = proved ] && break
  tried="$tried $e"
  case $e in
    cut) run_cut 0 ;;
    cut-fsm) run_cut 1 ;;
    induct) run_induct ;;
  esac
  [ "$result" = timeout ] && break
done
keep
secs=$(elapsed)

if [ "$result" = timeout ]; then
  echo "prove_netlist: $module: TIMEOUT after $limit s (no result;$tried)" >&2
  exit 2
fi
if [ $mutate != 0 ]; then
  case $result in
    proved)
      echo "prove_netlist: $module: FAILED: a netlist with $mutation was proven equivalent ($detail)" >&2
      exit 1 ;;
    refuted)
      remember "$module: mutant ($mutation) refuted by$tried: $detail ($secs s)"
      exit 0 ;;
    *)
      echo "prove_netlist: $module: FAILED: the mutant run failed for another reason: $detail" >&2
      exit 1 ;;
  esac
fi
if [ "$result" != proved ]; then
  echo "prove_netlist: $module: FAILED ($secs s;$tried): $detail" >&2
  exit 1
fi
remember "$module: PROVED by ${tried##* } ($secs s): $detail"
