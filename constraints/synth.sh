#!/usr/bin/env bash
# Synthesis and timing of one emitted unit on the OSU 0.18um cells.
#   constraints/synth.sh RTL_DIR MODULE LIBERTY CLOCK_NS REPORT_DIR
# Runs the unit's emitted Yosys script (area, OSU018 netlist) and OpenSTA
# script (critical path), writes REPORT_DIR/MODULE.{area,timing}.txt and
# appends one row to REPORT_DIR/synth-summary.md.
set -euo pipefail
rtl=$1 module=$2 liberty=$3 clock_ns=$4 reports=$(realpath -m "$5")
mkdir -p "$reports"
period_ps=$(awk "BEGIN{printf \"%d\", $clock_ns * 1000}")
start=$(date +%s)
(cd "$rtl" && LIBERTY=$liberty PERIOD_PS=$period_ps yosys -q -l "$reports/$module.yosys.log" -c "$module.yosys.tcl" > /dev/null)
(cd "$rtl" && LIBERTY=$liberty sta -no_splash -exit "$module.sta.tcl") > "$reports/$module.timing.txt" 2>&1
cp "$rtl/$module.area.txt" "$reports/$module.area.txt"
secs=$(( $(date +%s) - start ))

area=$(awk '/Chip area for module/ {print $NF}' "$reports/$module.area.txt" | tail -1)
cells=$(awk '/Number of cells:/ {print $NF}' "$reports/$module.area.txt" | tail -1)
flops=$(awk '$1 ~ /^DFF/ {n += $2} END {print n + 0}' "$reports/$module.area.txt")
wns=$(awk '$1 == "wns" {print $2}' "$reports/$module.timing.txt" | tail -1)
# the worst path's slack from report_checks, positive when the target is met
# (report_wns clips at 0, which would hide the margin)
ws=$(awk '/slack \((MET|VIOLATED)\)/ {print $1; exit}' "$reports/$module.timing.txt")
# critical path = period - worst slack;
# maximum clock = 1 / critical path
crit=$(awk "BEGIN{printf \"%.3f\", $clock_ns - (${ws:-$wns})}")
fmax=$(awk "BEGIN{printf \"%.1f\", 1000 / $crit}")
met=$(awk "BEGIN{print ($wns >= 0) ? \"yes\" : \"no\"}")

summary="$reports/synth-summary.md"
if [ ! -f "$summary" ]; then
  {
    echo "| unit | cells | flip-flops | area (um^2) | critical path (ns) | max clock (MHz) | meets ${clock_ns} ns |"
    echo "|---|---|---|---|---|---|---|"
  } > "$summary"
fi
grep -v "^| $module |" "$summary" > "$summary.tmp" || true
mv "$summary.tmp" "$summary"
echo "| $module | $cells | $flops | $area | $crit | $fmax | $met |" >> "$summary"
echo "$module: area $area um^2, critical path $crit ns, max clock $fmax MHz (${secs} s)"
