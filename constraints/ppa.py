#!/usr/bin/env python3
"""PPA table of the synthesized units, beside the papers' figures.

  constraints/ppa.py --reports DIR --liberty LIB --clock-ns C --rtlgen RTLGEN \
      NAME:MODULE:NETLIST_DIR ...

For each model (a tb/models.toml entry that `make synth` synthesized):
DIR/NAME.area.txt (Yosys `stat -liberty`) and DIR/NAME.timing.txt (OpenSTA),
both written by constraints/synth.sh, and the unit's manifest, re-emitted by
rtl-gen from the parameters in the header of NETLIST_DIR/MODULE.v (the
Verilog that was synthesized; the re-emitted Verilog must be identical, so
the manifest belongs to that netlist). Writes DIR/ppa.md and DIR/ppa.json.

Memories both ways: the netlist maps them to flip-flops (the area counts
them). With --macros, every unit whose manifest lists memories is also
synthesized with those modules left as black boxes (the emitted Yosys
script's KVFORGE_BLACKBOX) and timed: logic area alone, plus the memory
bits a macro would hold (DIR/NAME.macros.{area,timing}.txt). Those runs
are cached in the model cache (`v1/macros` under $KVFORGE_MODEL_CACHE or
~/.cache/kvforge/models), keyed by the emitted files, the library and
Yosys's version, with the netlist and the Verilog it came from, so that
constraints/prove_netlist.sh --blackbox can prove them: --netlists-to FILE
lists every black-box run as `NAME MODULE CACHE_DIR BOX,BOX,...`. With no
models, only the --macros-only runs are made (and FILE written), no table.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

# NAND2-equivalent areas assumed for the papers' nodes, um^2.
# 14 nm: spec §11.14.2 (3 contacted poly pitches of 70 nm x 399 nm cell).
# 28 nm: 0.49 um^2, the value behind the project's own conversion of Oaken's
# 0.074 mm^2 quantization engine to "roughly 150k NAND2-equivalents" (issue
# 10); the 3-pitch construction above (117 nm CPP, 0.9 um cell) would give
# 0.32 um^2 and 1.55 times the NAND2-eq.
# Both are assumptions (neither paper names its library's cell); every
# converted figure scales inversely with them.
NODE_NAND2_UM2 = {
    "14 nm": (0.084, "3 x 70 nm CPP x 399 nm cell height (spec §11.14.2)"),
    "28 nm": (0.49, "0.074 mm^2 ~ 150k NAND2-eq, the project's conversion (a 3 x 117 nm CPP x 0.9 um cell would be 0.32)"),
}

PAPER = [
    # (paper, block, node, clock, area um^2, what it is)
    ("Oaken", "QE (quantization engine)", "28 nm", "1 GHz", 0.074e6, "oaken-quantizer"),
    ("Oaken", "DQE (dequantization engine)", "28 nm", "1 GHz", 0.252e6, "oaken-dequantizer"),
    ("Titanus", "PU (pruning unit, parallelism 16)", "14 nm", "200 MHz", 1408.0, "titanus-pruner"),
    ("Titanus", "QU (quantization unit, parallelism 16)", "14 nm", "200 MHz", 190080.0, "titanus-quantizer"),
    ("Titanus", "DQU (dequantization unit, parallelism 16)", "14 nm", "200 MHz", 4197.0, "titanus-dequantizer"),
]


def elements_per_cycle(unit, params):
    """Sustained elements per cycle and where the figure comes from."""
    lanes = params.get("lanes")
    if unit in ("oaken-quantizer", "oaken-dequantizer"):
        return lanes, "lanes: one beat of `lanes` elements per cycle (spec §8.2)"
    if unit in ("zero-remove-shifter", "zero-insert-shifter"):
        return lanes, "lanes: one vector per cycle (spec §8.2)"
    if unit == "titanus-pruner":
        return 2 * lanes, "2 x lanes: K and V beats (spec §11.14.2)"
    if unit == "titanus-quantizer":
        return lanes, "lanes in the prefill replay, lanes / 2 in decode (spec §11.14.5)"
    if unit == "titanus-dequantizer":
        return lanes, "lanes: one beat per cycle (spec §11.14.3)"
    if unit == "kivi-dequantizer":
        return lanes, "lanes: one beat per cycle (spec §13.14.1)"
    if unit == "kivi-quantizer" and params.get("axis") == "channel":
        return lanes / 2, "lanes / 2: each block is read twice (spec §13.14.3)"
    if unit == "kivi-quantizer":
        return lanes, "lanes: one beat per cycle (spec §13.14.2)"
    if unit == "packkv-encoder":
        b, pk = params.get("block", 64), params.get("pack", 16)
        c = params.get("heads", 1) * params.get("head-dim", 128)
        rk, rv = params.get("k-levels", 10).bit_length(), params.get("v-levels", 5).bit_length()
        bt = c // lanes
        med = params.get("repack", "none") == "median"
        perm = -(-b // (32 // (b.bit_length() - 1))) if med else 0
        rmax = max(rk, rv)
        wb = lambda r: r.bit_length()
        fields = max(lanes * (rk + wb(rk)), lanes * (rv + wb(rv)))
        reader = 2 * b * bt

        def count(pb, merge, tw):
            return 2 * (1 + b // tw + (b // pk) * (bt + pk * bt // pb - merge)) + perm

        def at(pb, merge, grow):
            # (pb, merge, tw, F): the widest item's F / 32, a power of two,
            # token words an item where one a time falls behind
            f = max(32, fields, pb * lanes * rmax, fields + pb * lanes * rmax if merge else 0, grow)
            if med or count(pb, merge, 1) <= reader:
                return pb, merge, 1, f
            return pb, merge, 1 << ((f // 32).bit_length() - 1), f

        it = at(2 if 2 * lanes * rmax <= 128 else 1, 0, 0)
        if not med and 4 * lanes * rmax <= 128 and (pk * bt) % 4 == 0 and count(*it[:3]) > reader:
            it = at(4, 0, 0)
        if not med and count(*it[:3]) > reader and fields + it[0] * lanes * rmax <= 128:
            it = at(it[0], 1, 0)
            for tw in (2, 4):
                h = at(it[0], 1, 32 * tw)
                if count(*it[:3]) > reader and 32 * tw > it[3] and count(*h[:3]) <= reader:
                    it = h
        pb = it[0]
        t = max(reader, count(*it[:3]))
        if med:
            pw = 2 if bt % 2 == 0 and pb == 2 else 1
            t = max(t, (3 * b * bt + b * bt // pw + b + (1 << rv) + 14) / 2)
        else:
            t = max(t, (3 * b * bt + lanes.bit_length() - 1 + 5) / 2)
        return 2 * b * c / t, "2 B C / max(2 B BT, I, T_b / 2): the tile reader's lanes a cycle unless the items or the bank turn are slower (spec §14.14.3, tb full_rate)"
    if unit == "packkv-decoder":
        b, pk = params.get("block", 64), params.get("pack", 16)
        c = params.get("heads", 1) * params.get("head-dim", 128)
        if params.get("burst", 2) == 2:
            return b * c / (b * c / lanes + 1), "B C / (B C / lanes + 1): lanes but for one end beat per block, the core of 2 x lanes ahead behind its queue (spec §14.14.2, tb full_rate)"
        r = params.get("levels", 10).bit_length()
        f = r + r.bit_length()
        wi = -(-lanes * r // 32)
        mw = 1 << (wi.bit_length() - 1)
        t = 3 + b // mw + (b // pk) * (max(c // lanes, -(-c * f // (32 * wi))) + max(c * pk // lanes, -(-pk * r * c // (32 * wi))))
        return b * c / t, "B C / T: the one-step parser's rule at full widths, no permutation (spec §14.14.2, burst = 1, tb full_rate)"
    if unit == "packkv-quantizer":
        return lanes, "lanes: one beat per cycle, tokens back to back (spec §14.14.1, tb full_rate_and_latency)"
    if unit in ("hack-qk-dot", "hack-deq-dot"):
        return params.get("partition", 64), "partition: one K partition of codes per cycle (spec §15.16)"
    if unit == "hack-pv-dot":
        pi, hd = params.get("partition", 64), params.get("head-dim", 128)
        return pi * hd / (hd + 1), "partition x head_dim / (head_dim + 1): V codes per cycle, a P beat per block (spec §15.16.5)"
    if unit == "hack-quantizer" and params.get("axis") == "channel":
        return lanes / 2, "lanes / 2: each block comes in twice, two passes (spec §15.16.6)"
    if unit == "hack-quantizer":
        return lanes, "lanes: one beat per cycle, vectors back to back (spec §15.16.4, tb full_rate_and_latency)"
    if unit in ("div-round", "div-const", "mul-pipe", "fp16-convert", "fold-zero"):
        return 1, "one operation per cycle (pipelined, `en` advances every stage)"
    return None, "not a per-element stream"


def hack_vs_baseline(units):
    """HACK's comparison (spec §15.16.3): `hack-deq-dot` against `hack-qk-dot`
    at their defaults, equal throughput; None unless both rows exist."""
    by = {r["model"]: r for r in units}
    h, b = by.get("hack_qk_dot"), by.get("hack_deq_dot")
    if not (h and b and h["nand2_eq"] and b["nand2_eq"]):
        return None
    return {"hack": h, "baseline": b, "nand2_eq_ratio": b["nand2_eq"] / h["nand2_eq"],
            "flip_flop_ratio": b["flip_flops"] / h["flip_flops"]}


def parse_header(path):
    """(unit, params) from the rtl-gen header line of an emitted .v."""
    with open(path) as f:
        head = f.readline()
    m = re.match(r"// Generated by .*: unit (\S+), parameters (\{.*\})\.\s*$", head)
    if not m:
        sys.exit(f"ppa: {path}: no rtl-gen header")
    return m.group(1), json.loads(m.group(2))


def toml_value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return str(v)
    return json.dumps(str(v))


def emit(rtlgen, unit, params, clock_ns, out):
    cfg = out + ".toml"
    with open(cfg, "w") as f:
        for k, v in params.items():
            f.write(f"{k} = {toml_value(v)}\n")
    subprocess.run([rtlgen, "emit", unit, "--config", cfg, "--clock-ns", str(clock_ns), "-o", out],
                   check=True, stdout=subprocess.DEVNULL)


def tool_version(cmd):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True)
        return (r.stdout + r.stderr).strip()
    except OSError:
        return "absent"


def macros_cache_dir(out, module, env):
    """The cache folder of a black-box run: keyed by everything that shapes
    its result (the emitted Verilog, Yosys and STA scripts and SDC, the
    black-boxed modules, the library, the clock, the tool versions), so a
    second `make synth` on unchanged RTL does not synthesize it again."""
    h = inputs_hash(b"kvforge-macros-v1", out, module, env, ("KVFORGE_BLACKBOX", "LIBERTY", "PERIOD_PS"))
    # the model cache's root, as tb/src/build/store.rs finds it
    root = os.environ.get("KVFORGE_MODEL_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "kvforge", "models")
    return os.path.join(root, "v1", "macros", h.hexdigest())


def inputs_hash(tag, folder, module, env, keys):
    """SHA-256 of an emitted folder's Verilog, Yosys and STA scripts and SDC,
    the `keys` of `env`, the library's content and the Yosys version."""
    import hashlib
    h = hashlib.sha256(tag)
    for ext in ("v", "yosys.tcl", "sta.tcl", "sdc"):
        with open(os.path.join(folder, f"{module}.{ext}"), "rb") as f:
            h.update(f.read())
    for k in keys:
        h.update(f"{k}={env[k]}".encode())
    with open(env["LIBERTY"], "rb") as f:
        h.update(hashlib.sha256(f.read()).digest())
    h.update(tool_version(["yosys", "-V"]).encode())
    return h


def synthesis_inputs(folder, module, liberty, clock_ns):
    """What a `make synth` row of the unit emitted in `folder` was made from
    (as macros_cache_dir, with no black boxes, and the OpenSTA version): a
    row that records it is still exact while this digest is unchanged
    (readme_ppa.py --carry)."""
    env = {"LIBERTY": liberty, "PERIOD_PS": str(int(round(clock_ns * 1000)))}
    h = inputs_hash(b"kvforge-synth-inputs-v1", folder, module, env, ("LIBERTY", "PERIOD_PS"))
    h.update(tool_version(["sta", "-version"]).encode())
    return h.hexdigest()


def macros_synthesis(rtlgen, unit, params, clock_ns, module, mems, liberty, reports, name):
    """Synthesis and timing with the memory modules black-boxed; the
    reports' paths. Results are cached (macros_cache_dir)."""
    import shutil
    area_txt = os.path.join(reports, f"{name}.macros.area.txt")
    timing_txt = os.path.join(reports, f"{name}.macros.timing.txt")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out")
        emit(rtlgen, unit, params, clock_ns, out)
        env = dict(os.environ, LIBERTY=liberty, PERIOD_PS=str(int(round(clock_ns * 1000))),
                   KVFORGE_BLACKBOX=" ".join(m["module"] for m in mems))
        cache = macros_cache_dir(out, module, env)
        # (a run cached before the netlist was kept is made again)
        if os.path.exists(os.path.join(cache, ".complete")) and os.path.exists(os.path.join(cache, f"{module}.osu018.v")):
            print(f"ppa: {name}: black-box synthesis cached in {cache}", file=sys.stderr)
        else:
            print(f"ppa: {name}: black-box synthesis ({unit}, memories {env['KVFORGE_BLACKBOX']})", file=sys.stderr)
            with open(os.path.join(reports, f"{name}.macros.yosys.log"), "w") as log:
                subprocess.run(["yosys", "-q", "-c", f"{module}.yosys.tcl"], cwd=out, env=env, check=True,
                               stdout=log, stderr=subprocess.STDOUT)
            with open(os.path.join(out, "timing.txt"), "w") as t:
                subprocess.run(["sta", "-no_splash", "-exit", f"{module}.sta.tcl"], cwd=out, env=env,
                               check=True, stdout=t, stderr=subprocess.STDOUT)
            tmp_cache = cache + ".tmp"
            shutil.rmtree(tmp_cache, ignore_errors=True)
            os.makedirs(tmp_cache)
            shutil.copy(os.path.join(out, f"{module}.area.txt"), os.path.join(tmp_cache, "area.txt"))
            shutil.copy(os.path.join(out, "timing.txt"), os.path.join(tmp_cache, "timing.txt"))
            for f in (f"{module}.v", f"{module}.osu018.v"):
                shutil.copy(os.path.join(out, f), os.path.join(tmp_cache, f))
            open(os.path.join(tmp_cache, ".complete"), "w").close()
            shutil.rmtree(cache, ignore_errors=True)
            os.rename(tmp_cache, cache)
        shutil.copy(os.path.join(cache, "area.txt"), area_txt)
        shutil.copy(os.path.join(cache, "timing.txt"), timing_txt)
    MACRO_NETLISTS.append((name, module, cache, [m["module"] for m in mems]))
    return area_txt, timing_txt


# every black-box run of this invocation: (name, module, cache dir, boxes)
MACRO_NETLISTS = []


def emitted_inputs(a, unit, module, verilog_path):
    """synthesis_inputs of the unit's folder under --rtl when its Verilog is
    the one synthesized (the unit at its defaults), else None."""
    if not a.rtl:
        return None
    folder = os.path.join(a.rtl, unit)
    try:
        with open(os.path.join(folder, f"{module}.v"), "rb") as f, open(verilog_path, "rb") as g:
            if f.read() != g.read():
                return None
    except OSError:
        return None
    return synthesis_inputs(folder, module, a.liberty, a.clock_ns)


def manifest(rtlgen, unit, params, clock_ns, module, verilog_path):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out")
        emit(rtlgen, unit, params, clock_ns, out)
        with open(os.path.join(out, f"{module}.v")) as a, open(verilog_path) as b:
            if a.read() != b.read():
                sys.exit(f"ppa: rtl-gen emits other Verilog for {unit} {params} than {verilog_path}")
        with open(os.path.join(out, f"{module}.json")) as f:
            return json.load(f)


def liberty_area(liberty, cell):
    text = open(liberty).read()
    m = re.search(r"cell\s*\(\s*" + cell + r"\s*\)\s*\{[^}]*?area\s*:\s*([0-9.]+)", text)
    if not m:
        sys.exit(f"ppa: no area for {cell} in {liberty}")
    return float(m.group(1))


def area_report(path):
    text = open(path).read()
    area = float(re.findall(r"Chip area for module .*: ([0-9.]+)", text)[-1])
    cells = int(re.findall(r"Number of cells:\s+([0-9]+)", text)[-1])
    flops = sum(int(n) for n in re.findall(r"^\s+DFF\S*\s+([0-9]+)", text, re.M))
    return area, cells, flops


def critical_path(path, clock_ns):
    """Period minus the worst slack of report_checks's paths (into
    flip-flops and outputs, and the clock gates'; report_wns clips at 0)."""
    text = open(path).read()
    m = re.findall(r"^\s*(-?[0-9.]+)\s+slack \((MET|VIOLATED)\)", text, re.M)
    if not m:
        w = re.findall(r"^wns\s+(-?[0-9.]+)", text, re.M)
        if not w:
            sys.exit(f"ppa: no slack in {path}")
        return clock_ns - float(w[-1])
    return clock_ns - min(float(x) for x, _ in m)


def fmt(x, nd=0):
    if x is None:
        return "-"
    return f"{x:,.{nd}f}"


def macros_only_entry(entry):
    """(row name, unit, parameters) of a --macros-only entry: a unit at its
    defaults (row `<module>_defaults`), or a model `NAME:UNIT:K=V,...` as
    `models list --make synth-macros-only` prints it (values typed back:
    integers, true/false, else strings)."""
    if ":" not in entry:
        return entry.replace("-", "_") + "_defaults", entry, {}
    name, unit, kvs = entry.split(":", 2)
    params = {}
    for kv in filter(None, kvs.split(",")):
        k, v = kv.split("=", 1)
        params[k] = int(v) if re.fullmatch(r"-?[0-9]+", v) else {"true": True, "false": False}.get(v, v)
    return name, unit, params


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reports", required=True)
    ap.add_argument("--liberty", required=True)
    ap.add_argument("--clock-ns", type=float, required=True)
    ap.add_argument("--rtlgen", required=True)
    ap.add_argument("--macros", action="store_true",
                    help="also synthesize units with memories as black boxes (logic area + memory bits)")
    ap.add_argument("--macros-only", action="append", default=[], metavar="UNIT|NAME:UNIT:K=V,...",
                    help="a unit at its defaults, or a model at its parameters, whose memories cannot be "
                         "flip-flops: only the black-box run")
    ap.add_argument("--netlists-to", metavar="FILE",
                    help="list the black-box netlists (NAME MODULE DIR BOX,BOX...) in FILE")
    ap.add_argument("--rtl", metavar="DIR",
                    help="the emitted units (make rtl's build/rtl): a row whose Verilog is DIR/<unit>/<module>.v "
                         "records the digest of its synthesis inputs (synthesis_inputs)")
    ap.add_argument("models", nargs="*", help="NAME:MODULE:NETLIST_DIR")
    a = ap.parse_args()
    nand2 = liberty_area(a.liberty, "NAND2X1")
    rows = []
    for spec in a.models:
        name, module, net = spec.split(":", 2)
        unit, params = parse_header(os.path.join(net, f"{module}.v"))
        man = manifest(a.rtlgen, unit, params, a.clock_ns, module, os.path.join(net, f"{module}.v"))
        area, cells, flops = area_report(os.path.join(a.reports, f"{name}.area.txt"))
        crit = critical_path(os.path.join(a.reports, f"{name}.timing.txt"), a.clock_ns)
        epc, epc_src = elements_per_cycle(unit, params)
        lanes = params.get("lanes")
        mems = man.get("memories", [])
        macros = None
        if a.macros and mems:
            at, tt = macros_synthesis(a.rtlgen, unit, params, a.clock_ns, module, mems, a.liberty, a.reports, name)
            m_area, m_cells, m_flops = area_report(at)
            m_crit = critical_path(tt, a.clock_ns)
            macros = {"area_um2": m_area, "nand2_eq": m_area / nand2, "cells": m_cells, "flip_flops": m_flops,
                      "critical_path_ns": round(m_crit, 3), "max_clock_mhz": round(1000.0 / m_crit, 1),
                      "memory_modules": [m["module"] for m in mems]}
        rows.append({
            "model": name,
            "unit": unit,
            "module": module,
            "params": params,
            "cells": cells,
            "flip_flops": flops,
            "area_um2": area,
            "nand2_eq": area / nand2,
            "memory_bits": sum(m["bits"] for m in mems),
            "memories": [{k: m[k] for k in ("name", "depth", "width", "bits")} for m in mems],
            "critical_path_ns": round(crit, 3),
            "max_clock_mhz": round(1000.0 / crit, 1),
            "target_clock_ns": a.clock_ns,
            "meets_target": crit <= a.clock_ns,
            "elements_per_cycle": epc,
            "elements_per_cycle_source": epc_src,
            "latency_cycles": man.get("latency"),
            "lanes": lanes,
            "area_per_lane_um2": area / lanes if lanes else None,
            "nand2_eq_per_lane": area / nand2 / lanes if lanes else None,
            "memories_as_macros": macros,
            "synthesis_inputs_sha256": emitted_inputs(a, unit, module, os.path.join(net, f"{module}.v")),
        })
    for entry in a.macros_only:
        name, unit, given = macros_only_entry(entry)
        module = unit.replace("-", "_")
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "out")
            emit(a.rtlgen, unit, given, a.clock_ns, out)
            with open(os.path.join(out, f"{module}.json")) as f:
                man = json.load(f)
        mems = man.get("memories", [])
        if not mems:
            sys.exit(f"ppa: --macros-only {entry}: its manifest lists no memories")
        at, tt = macros_synthesis(a.rtlgen, unit, given, a.clock_ns, module, mems, a.liberty, a.reports, name)
        m_area, m_cells, m_flops = area_report(at)
        m_crit = critical_path(tt, a.clock_ns)
        epc, epc_src = elements_per_cycle(unit, man.get("params", {}))
        rows.append({
            "model": name, "unit": unit, "module": module, "params": man.get("params", {}),
            "cells": None, "flip_flops": None, "area_um2": None, "nand2_eq": None,
            "memory_bits": sum(m["bits"] for m in mems),
            "memories": [{k: m[k] for k in ("name", "depth", "width", "bits")} for m in mems],
            "critical_path_ns": round(m_crit, 3), "max_clock_mhz": round(1000.0 / m_crit, 1),
            "target_clock_ns": a.clock_ns, "meets_target": m_crit <= a.clock_ns,
            "elements_per_cycle": epc, "elements_per_cycle_source": epc_src,
            "latency_cycles": man.get("latency"), "lanes": None,
            "area_per_lane_um2": None, "nand2_eq_per_lane": None,
            "memories_as_macros": {"area_um2": m_area, "nand2_eq": m_area / nand2, "cells": m_cells,
                                   "flip_flops": m_flops, "critical_path_ns": round(m_crit, 3),
                                   "max_clock_mhz": round(1000.0 / m_crit, 1),
                                   "memory_modules": [m["module"] for m in mems]},
        })
    if a.netlists_to:
        with open(a.netlists_to, "w") as f:
            f.write("".join(f"{n} {m} {d} {','.join(bx)}\n" for n, m, d, bx in MACRO_NETLISTS))
    if not a.models:
        return
    papers = []
    for paper, block, node, clock, um2, ours in PAPER:
        n2, how = NODE_NAND2_UM2[node]
        # our figure beside it: the unit at its defaults (the model named as
        # the module, or the --macros-only row), else its first row; memories
        # as flip-flops where that was synthesized, else logic only
        own = [r for r in rows if r["unit"] == ours]
        mine = next((r for r in own if r["model"] in (r["module"], r["module"] + "_defaults")), None)
        mine = mine or (own[0] if own else None)
        our = None
        if mine:
            if mine["nand2_eq"] is not None:
                our = {"model": mine["model"], "nand2_eq": mine["nand2_eq"],
                       "memories": "as flip-flops" if mine["memory_bits"] else "none",
                       "max_clock_mhz": mine["max_clock_mhz"]}
            else:
                m = mine["memories_as_macros"]
                our = {"model": mine["model"], "nand2_eq": m["nand2_eq"], "memories": "as macros (logic only)",
                       "max_clock_mhz": m["max_clock_mhz"]}
        papers.append({"paper": paper, "block": block, "node": node, "clock": clock, "area_um2": um2,
                       "nand2_um2_assumed": n2, "nand2_eq": um2 / n2, "our_unit": ours, "ours": our})
    doc = {
        "liberty": a.liberty,
        "nand2x1_um2": nand2,
        "clock_ns": a.clock_ns,
        "units": rows,
        "papers": papers,
        "node_nand2_um2": {k: {"um2": v[0], "assumption": v[1]} for k, v in NODE_NAND2_UM2.items()},
        "sources": {
            "area, cells, flip-flops": "Yosys stat -liberty on the netlist (NAME.area.txt); the clock gates' "
                                       "LATCH cells at their LEF area, 56 um^2 (the Liberty gives 0)",
            "critical path": "OpenSTA report_checks: period - worst slack of the paths into flip-flops and "
                             "outputs and of the clock-gating checks (NAME.timing.txt)",
            "memory bits": "rtl-gen manifest `memories` (Yosys maps them to flip-flops, counted in the area)",
            "memories_as_macros": "the same unit synthesized with its memory modules black-boxed "
                                  "(KVFORGE_BLACKBOX): logic only; paths into and out of the memories untimed",
            "latency": "rtl-gen manifest `latency` (cycles from an input beat's acceptance to its first output)",
            "synthesis_inputs_sha256": "of a row whose Verilog is the unit's emitted one (--rtl): its Verilog, "
                                       "Yosys and STA scripts, SDC, library, clock and tool versions "
                                       "(synthesis_inputs); make readme-ppa keeps a whole row while it holds",
        },
    }
    with open(os.path.join(a.reports, "ppa.json"), "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")

    md = []
    md.append("# PPA on OSU018 (Yosys 0.23, OpenSTA), beside the papers\n")
    md.append(f"Liberty `{a.liberty}`; NAND2-eq = area / NAND2X1 area from the Liberty ({nand2:g} um^2); "
              f"target clock {a.clock_ns:g} ns. Memories are mapped to flip-flops and counted in the area. "
              "Every register with an enable is on a gated clock (a LATCH and an AND per enable net, "
              "`constraints/clock_gate.v`), each LATCH counted at its LEF area, 56 um^2.\n")
    md.append("| model | unit (parameters) | cells | flip-flops | memory bits | area (um^2) | NAND2-eq | "
              "critical path (ns) | max clock (MHz) | elements/cycle | latency (cycles) | NAND2-eq per lane |")
    md.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        p = ", ".join(f"{k} {v}" for k, v in r["params"].items()) or "no parameters"
        md.append(f"| {r['model']} | `{r['unit']}` ({p}) | {fmt(r['cells'])} | {fmt(r['flip_flops'])} | "
                  f"{fmt(r['memory_bits'])} | {fmt(r['area_um2'])} | {fmt(r['nand2_eq'])} | "
                  f"{r['critical_path_ns']:.2f} | {r['max_clock_mhz']:.1f}{'' if r['meets_target'] else ' (misses target)'} | "
                  f"{fmt(r['elements_per_cycle'])} | {fmt(r['latency_cycles'])} | {fmt(r['nand2_eq_per_lane'])} |")
    md.append("")
    md.append("Elements per cycle: " + "; ".join(sorted({f"`{r['unit']}`: {r['elements_per_cycle_source']}"
                                                          for r in rows})) + ".")
    md.append("Latency: the rtl-gen manifest (`latency`, cycles from an input beat's acceptance to its first "
              "output; `-` where it is not fixed). Memory bits: the manifest's `memories`.\n")
    mrows = [r for r in rows if r["memories_as_macros"]]
    if mrows:
        md.append("## Memories as macros\n")
        md.append("The units with memories, synthesized again with the memory modules as black boxes "
                  "(`KVFORGE_BLACKBOX`): the logic a design with memory macros would keep, and the bits the "
                  "macros would hold. Paths into and out of the black boxes are untimed.\n")
        md.append("| model | flip-flops as memory: NAND2-eq | logic only: cells | flip-flops | area (um^2) | "
                  "NAND2-eq | + memory bits | critical path (ns) | max clock (MHz) |")
        md.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for r in mrows:
            m = r["memories_as_macros"]
            md.append(f"| {r['model']} | {fmt(r['nand2_eq'])} | {fmt(m['cells'])} | {fmt(m['flip_flops'])} | "
                      f"{fmt(m['area_um2'])} | {fmt(m['nand2_eq'])} | {fmt(r['memory_bits'])} | "
                      f"{m['critical_path_ns']:.2f} | {m['max_clock_mhz']:.1f} |")
        md.append("")
    hv = hack_vs_baseline(rows)
    if hv:
        h, b = hv["hack"], hv["baseline"]
        md.append("## HACK against its dequantize-first baseline\n")
        md.append(f"At the defaults both take one K partition of {fmt(h['elements_per_cycle'])} codes per cycle "
                  "(spec §15.10, §15.16.3). Switching activity on the same stimulus: `make bench` "
                  "(`bench.md`, HACK).\n")
        md.append("| model | NAND2-eq | flip-flops | NAND2-eq per K code per cycle | critical path (ns) | "
                  "max clock (MHz) |")
        md.append("|---|---:|---:|---:|---:|---:|")
        for r in (h, b):
            md.append(f"| {r['model']} | {fmt(r['nand2_eq'])} | {fmt(r['flip_flops'])} | "
                      f"{fmt(r['nand2_eq'] / r['elements_per_cycle'])} | {r['critical_path_ns']:.2f} | "
                      f"{r['max_clock_mhz']:.1f} |")
        md.append(f"| baseline / HACK | {hv['nand2_eq_ratio']:.2f}x | {hv['flip_flop_ratio']:.2f}x | | | |")
        md.append("")
    md.append("## The papers' figures, converted to NAND2-eq\n")
    md.append("| paper | block | node, clock | area (um^2) | NAND2 assumed (um^2) | NAND2-eq | ours | "
              "our NAND2-eq (OSU018) | our max clock (MHz) |")
    md.append("|---|---|---|---:|---:|---:|---|---:|---:|")
    for p in papers:
        o = p["ours"]
        ours_eq = f"{fmt(o['nand2_eq'])} ({o['model']}; memories: {o['memories']})" if o else "-"
        ours_clk = f"{o['max_clock_mhz']:.1f}" if o else "-"
        md.append(f"| {p['paper']} | {p['block']} | {p['node']}, {p['clock']} | {fmt(p['area_um2'])} | "
                  f"{p['nand2_um2_assumed']:g} | {fmt(p['nand2_eq'])} | `{p['our_unit']}` | {ours_eq} | {ours_clk} |")
    md.append("")
    for node, (n2, how) in NODE_NAND2_UM2.items():
        md.append(f"- {node} NAND2 = {n2:g} um^2: {how}.")
    md.append("- The papers synthesized at other nodes, clocks and parallelism; compare NAND2-eq only as an "
              "order of magnitude, and per lane where the lanes differ.")
    with open(os.path.join(a.reports, "ppa.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    print(f"wrote {os.path.join(a.reports, 'ppa.md')} and ppa.json ({len(rows)} units)")


if __name__ == "__main__":
    main()
