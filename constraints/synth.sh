#!/usr/bin/env bash
# Timing and area of one unit's OSU018 netlist.
#   constraints/synth.sh NETLIST_DIR RTL_DIR MODULE LIBERTY CLOCK_NS REPORT_DIR [NAME]
# NETLIST_DIR holds <MODULE>.osu018.v and <MODULE>.area.txt, made by the
# unit's emitted Yosys script (`target/release/models netlist` makes them in
# the model cache, so the netlist timed here is the one the co-simulation
# runs). RTL_DIR is the unit's emitted folder (SDC and OpenSTA script); the
# netlist is copied next to them. Writes REPORT_DIR/NAME.{area,timing}.txt
# (NAME: the tb/models.toml entry, default MODULE, so that two parameter
# sets of one unit keep apart) and appends one row to
# REPORT_DIR/synth-summary.md.
set -euo pipefail
net=$1 rtl=$2 module=$3 liberty=$4 clock_ns=$5 reports=$(realpath -m "$6") name=${7:-$3}
mkdir -p "$reports"
cp "$net/$module.osu018.v" "$net/$module.area.txt" "$rtl/"
(cd "$rtl" && LIBERTY=$liberty sta -no_splash -exit "$module.sta.tcl") > "$reports/$name.timing.txt" 2>&1
cp "$rtl/$module.area.txt" "$reports/$name.area.txt"

area=$(awk '/Chip area for module/ {print $NF}' "$reports/$name.area.txt" | tail -1)
cells=$(awk '/Number of cells:/ {print $NF}' "$reports/$name.area.txt" | tail -1)
flops=$(awk '$1 ~ /^DFF/ {n += $2} END {print n + 0}' "$reports/$name.area.txt")
nand2=$(awk '/^cell \(NAND2X1\)/ {c = 1} c && /area/ {gsub(/[;]/, "", $3); print $3; exit}' "$liberty")
wns=$(awk '$1 == "wns" {print $2}' "$reports/$name.timing.txt" | tail -1)
# the worst slack of report_checks's paths (into flip-flops and outputs,
# and the clock gates'), positive when the target is met (report_wns clips
# at 0, which would hide the margin)
ws=$(awk '/slack \((MET|VIOLATED)\)/ {print $1}' "$reports/$name.timing.txt" | sort -g | head -n 1)
# critical path = period - worst slack; maximum clock = 1 / critical path
crit=$(awk "BEGIN{printf \"%.3f\", $clock_ns - (${ws:-$wns})}")
fmax=$(awk "BEGIN{printf \"%.1f\", 1000 / $crit}")
met=$(awk "BEGIN{print ($wns >= 0) ? \"yes\" : \"no\"}")
eq=$(awk "BEGIN{printf \"%.0f\", $area / $nand2}")

summary="$reports/synth-summary.md"
if [ ! -f "$summary" ]; then
  {
    echo "| unit | cells | flip-flops | area (um^2) | NAND2-eq (NAND2X1 = $nand2 um^2) | critical path (ns) | max clock (MHz) | meets ${clock_ns} ns |"
    echo "|---|---|---|---|---|---|---|---|"
  } > "$summary"
fi
echo "| $name | $cells | $flops | $area | $eq | $crit | $fmax | $met |" >> "$summary"
echo "$name: area $area um^2 ($eq NAND2-eq), critical path $crit ns, max clock $fmax MHz"
