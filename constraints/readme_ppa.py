#!/usr/bin/env python3
"""The README's PPA table, rendered from a ppa.json (constraints/ppa.py).

  constraints/readme_ppa.py [--json docs/ppa.json] [--readme README.md] [--write | --check]

The table sits in the README between the lines `<!-- ppa:begin -->` and
`<!-- ppa:end -->`. With no flag the table is printed; --write replaces
the README's table; --check exits 1, with a diff, when the README's table
is not the one the JSON renders (2 when the markers are missing).
`make readme-ppa` copies build/reports/ppa.json to docs/ppa.json and runs
--write; the tb test `docs` runs --check. --merge FILE first puts FILE's
units (a ppa.json of some models synthesized alone) into --json, replacing
rows of the same model: a unit's rows refreshed without a full `make synth`
(a model named as its module, the unit at its defaults, also replaces the
`<module>_defaults` row of a black-box-only run: `make synth-whole`).
--carry OLD --rtl DIR (`make readme-ppa`, OLD the docs/ppa.json it
replaced) keeps OLD's whole rows of units that --json has only as
black-box `<module>_defaults` rows, while the synthesis inputs they record
(`synthesis_inputs_sha256`) equal those of DIR/<unit>/ now; a row made
from other Verilog, scripts, library or tools is left out, with a line
saying so (`make synth-whole` renews it).
"""

import argparse
import difflib
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "constraints"))
from ppa import hack_vs_baseline, synthesis_inputs  # noqa: E402
BEGIN = "<!-- ppa:begin -->"
END = "<!-- ppa:end -->"


def num(x):
    return f"{round(x):,}"


def params_text(r):
    # ppa.py's convention: a model named as its module (or the
    # --macros-only `<module>_defaults`) is the unit at its defaults
    if r["model"] in (r["module"], r["module"] + "_defaults"):
        return "defaults"
    p = ", ".join(f"{k} {v}" for k, v in r["params"].items())
    return f"`{r['model']}`: {p}" if p else f"`{r['model']}`"


# Leaf cells and shifters are in build/reports/ppa.md, not the README.
PRIMITIVES = {"zero-remove-shifter", "zero-insert-shifter", "div-round", "div-const", "mul-pipe",
              "fp16-convert", "fold-zero"}


# Only each unit's defaults reach the README (its other sets: ppa.md), and
# the channel-axis quantizers (KIVI's K, HACK's V), their units' other axis.
DEFAULT_LIKE = {"kivi_quantizer_ch", "hack_quantizer_ch"}


def row(unit, params, nand2, flops, crit, mhz, meets):
    return (f"| `{unit}` | {params} | {nand2} | {flops} | {crit} | {mhz} | {meets} |")


def render(doc):
    """One row per model; a model synthesized both with its memories as
    flip-flops and as macros gets one row, `flip-flops / macros`."""
    clock_ns = doc["clock_ns"]
    out = [f"| unit | parameters | NAND2-eq | flip-flops | critical path | max clock | "
           f"meets {1000.0 / clock_ns:g} MHz |",
           "|---|---|---:|---:|---:|---:|---|"]
    yes = lambda b: "yes" if b else "no"
    for r in doc["units"]:
        if r["unit"] in PRIMITIVES:
            continue
        p = params_text(r)
        if p != "defaults" and r["model"] not in DEFAULT_LIKE:
            continue
        m = r.get("memories_as_macros")
        if r["nand2_eq"] is None and not m:
            sys.exit(f"readme_ppa: {r['model']}: neither nand2_eq nor memories_as_macros")
        cols = []
        if r["nand2_eq"] is not None:
            cols.append((num(r["nand2_eq"]), num(r["flip_flops"]), r["critical_path_ns"], r["max_clock_mhz"],
                         r["meets_target"]))
        if m:
            n2 = num(m["nand2_eq"]) + (f" + {num(r['memory_bits'])} memory bits" if r.get("memory_bits") else "")
            cols.append((n2, num(m["flip_flops"]), m["critical_path_ns"], m["max_clock_mhz"],
                         m["critical_path_ns"] <= clock_ns))
        if len(cols) == 2:
            p += ", memories as flip-flops / as macros"
        elif m and r.get("memory_bits"):
            p += ", memories as macros"
        j = lambda f: " / ".join(f(c) for c in cols)
        out.append(row(r["unit"], p, j(lambda c: c[0]), j(lambda c: c[1]), j(lambda c: f"{c[2]:.3f}") + " ns",
                       j(lambda c: f"{c[3]:.1f}") + " MHz", j(lambda c: yes(c[4]))))
    hv = hack_vs_baseline(doc["units"])
    if hv:
        out += ["", f"HACK at equal throughput (spec §15.16.3): the dequantize-first `hack-deq-dot` is "
                    f"{hv['nand2_eq_ratio']:.2f}x the NAND2-eq and {hv['flip_flop_ratio']:.2f}x the flip-flops "
                    f"of `hack-qk-dot`; switching activity: `make bench` section 7 (`bench --sections 7`)."]
    return out


def load(path):
    with open(path) as f:
        return json.load(f)


def save(doc, path):
    with open(path, "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")


def merge(src, dst):
    new, doc = load(src), load(dst)
    for k in ("liberty", "nand2x1_um2", "clock_ns"):
        if new[k] != doc[k]:
            sys.exit(f"readme_ppa: {src}: {k} {new[k]} differs from {dst}'s {doc[k]}")
    at = {r["model"]: i for i, r in enumerate(doc["units"])}
    for r in new["units"]:
        # the unit's defaults may stand as a black-box-only `<module>_defaults` row
        names = [r["model"]] + ([r["module"] + "_defaults"] if r["model"] == r["module"] else [])
        hit = next((at[m] for m in names if m in at), None)
        if hit is not None:
            doc["units"][hit] = r
        else:
            doc["units"].append(r)
    save(doc, dst)
    print(f"readme_ppa: merged {len(new['units'])} units of {src} into {dst}")


def carry(old_path, dst, rtl):
    """Whole rows of OLD put back in place of DST's black-box-only
    `<module>_defaults` rows when their synthesis inputs are unchanged."""
    old, doc = load(old_path), load(dst)
    at = {r["model"]: i for i, r in enumerate(doc["units"])}
    for r in old["units"]:
        hit = at.get(r["module"] + "_defaults")
        if r["model"] != r["module"] or r["nand2_eq"] is None or hit is None:
            continue
        if doc["units"][hit]["nand2_eq"] is not None:
            continue
        recorded = r.get("synthesis_inputs_sha256")
        folder = os.path.join(rtl, r["unit"])
        now = None
        if recorded is not None:
            try:
                now = synthesis_inputs(folder, r["module"], doc["liberty"], doc["clock_ns"])
            except OSError as e:
                print(f"readme_ppa: {r['model']}: {e}", file=sys.stderr)
        if recorded is None or recorded != now:
            print(f"readme_ppa: {r['model']}: its row with memories as flip-flops is of other synthesis "
                  f"inputs than {folder} now: left out (make synth-whole renews it)")
            continue
        doc["units"][hit] = r
        print(f"readme_ppa: {r['model']}: row with memories as flip-flops kept (same synthesis inputs)")
    save(doc, dst)


def split(readme_lines, path):
    try:
        b = readme_lines.index(BEGIN)
        e = readme_lines.index(END, b)
    except ValueError:
        print(f"readme_ppa: {path}: no `{BEGIN}` ... `{END}` lines", file=sys.stderr)
        sys.exit(2)
    return b, e


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", default=os.path.join(ROOT, "docs", "ppa.json"))
    ap.add_argument("--readme", default=os.path.join(ROOT, "README.md"))
    ap.add_argument("--merge", metavar="FILE", help="merge FILE's units into --json first")
    ap.add_argument("--carry", metavar="OLD", help="keep OLD's still exact whole rows (needs --rtl)")
    ap.add_argument("--rtl", metavar="DIR", help="the emitted units, as make rtl writes them")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--write", action="store_true", help="replace the README's table")
    g.add_argument("--check", action="store_true", help="exit 1 if the README's table differs")
    a = ap.parse_args()
    if a.carry:
        if not a.rtl:
            ap.error("--carry needs --rtl")
        carry(a.carry, a.json, a.rtl)
    if a.merge:
        merge(a.merge, a.json)
    table = render(load(a.json))
    if not (a.write or a.check):
        print("\n".join(table))
        return
    with open(a.readme) as f:
        lines = f.read().split("\n")
    b, e = split(lines, a.readme)
    current = lines[b + 1:e]
    if a.check:
        if current != table:
            sys.stdout.writelines(difflib.unified_diff(
                [l + "\n" for l in current], [l + "\n" for l in table],
                f"{a.readme} (PPA table)", f"rendered from {a.json}"))
            print(f"readme_ppa: the README's PPA table and {a.json} disagree; "
                  "run constraints/readme_ppa.py --write", file=sys.stderr)
            sys.exit(1)
        print(f"readme_ppa: README's PPA table matches {a.json} ({len(table) - 2} rows)")
        return
    with open(a.readme, "w") as f:
        f.write("\n".join(lines[:b + 1] + table + lines[e:]))
    print(f"readme_ppa: wrote {len(table) - 2} rows into {a.readme}")


if __name__ == "__main__":
    main()
