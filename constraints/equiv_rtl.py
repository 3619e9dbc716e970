#!/usr/bin/env python3
"""Prove two emissions of one unit's RTL equivalent (Yosys equiv_*).

Used when an hdl refactor (a block split into sub-blocks, say) changes the
emitted Verilog text: the old and the new RTL are flattened, registers are
paired by name (a new register `stage.x` pairs with an old `x` when that
suffix names exactly one old register; exact names first; a register of
one block of a Vec, `lane$2.x`, also pairs with an old `x$2`), and Yosys proves
every output and every paired register equal by `equiv_simple` then
`equiv_induct`. Unpaired registers are left to the induction. Memories are
mapped to flip-flops first, so keep the parameter sets small.

usage: equiv_rtl.py OLD.v NEW.v MODULE [--seq N] [--pair NEW_REG=OLD_REG ...]

--pair names a pairing the rules cannot find: an old register that held
the last lane's value of a per-lane temporary (`ent`, written in a lane
loop) is the new `lane$<last>.ent`.
exit 0: proved (prints "EQUIVALENT"); 1: not proved; 2: bad use.
"""
import json
import os
import re
import subprocess
import sys
import tempfile


def yosys(script, log):
    r = subprocess.run(["yosys", "-q", "-l", log, "-p", script], capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def prep(path, module, tag):
    # flattened, processes lowered, memories as flip-flops; the top renamed
    # to gold/gate so both designs can sit side by side
    return (
        f"read_verilog -sv {path}; hierarchy -check -top {module}; proc; flatten; "
        f"memory -nomap; memory_map; opt_clean; rename {module} {tag}; "
    )


def regs(path, module, tmp):
    """Names of the nets that a flip-flop's Q drives whole."""
    js = os.path.join(tmp, os.path.basename(path) + ".json")
    rc, out = yosys(prep(path, module, "m") + f"write_json {js}", js + ".log")
    if rc != 0:
        sys.exit(f"equiv_rtl: yosys could not read {path}:\n{out[-2000:]}")
    with open(js) as f:
        m = json.load(f)["modules"]["m"]
    qbits = set()
    for c in m["cells"].values():
        if "dff" in c["type"] and "Q" in c["connections"]:
            qbits.update(b for b in c["connections"]["Q"] if isinstance(b, int))
    names = set()
    for n, w in m["netnames"].items():
        bits = w["bits"]
        if bits and all(isinstance(b, int) and b in qbits for b in bits):
            names.add(n)
    return names


def q(name):
    # Yosys escaped identifiers: a leading backslash, ended by a space
    return name if name.startswith("\\") or name.startswith("$") else "\\" + name


def main():
    args = sys.argv[1:]
    seq = 5
    if "--seq" in args:
        i = args.index("--seq")
        seq = int(args[i + 1])
        del args[i : i + 2]
    forced = []
    while "--pair" in args:
        i = args.index("--pair")
        a, _, b = args[i + 1].partition("=")
        forced.append((a, b))
        del args[i : i + 2]
    if len(args) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    old, new, module = args
    with tempfile.TemporaryDirectory() as tmp:
        gold_regs = regs(old, module, tmp)
        gate_regs = regs(new, module, tmp)
        renames = []
        # suffix pairing: a gate register pairs with the gold one whose whole
        # name, or name after its top instance (`core.x$q` -> `x$q`), equals
        # the text after one of the gate name's separators (`core.sub.x$q`),
        # when that names exactly one gold register
        def tails(n):
            n = n.lstrip("\\")
            return [n[m.start() + 1 :] for m in re.finditer(r"[.$]", n)]
        index = {}
        for o in gold_regs - gate_regs:
            index.setdefault(o.lstrip("\\"), []).append(o)
            t = tails(o)
            if t:
                index.setdefault(t[0], []).append(o)
        # a register of a Vec of blocks, one per lane, pairs with the Vec of
        # registers it replaced: `core.lane$2.s3_sel$q` -> `core.s3_sel$2$q`
        def hoists(n):
            n = n.lstrip("\\")
            out = []
            for m in re.finditer(r"(?:^|(?<=[.$]))(\w+)\$(\d+)\.(\w+)", n):
                h = n[: m.start()] + m.group(3) + "$" + m.group(2) + n[m.end() :]
                out += [h] + tails(h)
            return out
        # a suffix never drops a block's Vec index: `core.lane$0.ent` must not
        # pair with an old `core.ent` (a local whose last value was lane 3's)
        def kept(n):
            n = n.lstrip("\\")
            return [t for t in tails(n) if not re.search(r"\$\d+\.", n[: len(n) - len(t)])]
        used = set()
        def find(name, regs):
            hit = [r for r in regs if r.lstrip("\\") == name]
            if len(hit) != 1:
                sys.exit(f"equiv_rtl: --pair: no register {name}")
            return hit[0]
        forced = [(find(a, gate_regs), find(b, gold_regs)) for a, b in forced]
        for g, o in forced:
            renames.append((g, o))
            used.add(o)
        for g in sorted(gate_regs - gold_regs):
            if any(g == f for f, _ in forced):
                continue
            for t in kept(g) + hoists(g):
                hits = index.get(t, [])
                if len(hits) == 1 and hits[0] not in used:
                    renames.append((g, hits[0]))
                    used.add(hits[0])
                    break
        paired = len(gold_regs & gate_regs) + len(renames)
        ren = "".join(f"rename {q(a)} {q(b)}; " for a, b in renames)
        script = (
            prep(old, module, "gold") + "design -stash gold; "
            + prep(new, module, "gate")
            + ("cd gate; " + ren + "cd ..; " if renames else "")
            + "design -stash gate; "
            + "design -copy-from gold -as gold gold; design -copy-from gate -as gate gate; "
            + f"equiv_make gold gate equiv; hierarchy -top equiv; async2sync; "
            + f"equiv_simple -seq {seq}; equiv_induct -seq {seq}; equiv_status -assert"
        )
        log = os.path.join(tmp, "equiv.log")
        rc, out = yosys(script, log)
        status = ""
        if os.path.exists(log):
            with open(log) as f:
                text = f.read()
            m = re.findall(r"Found (\d+) \$equiv cells.*?\n(?:.*\n)*?.*?Of those cells (\d+) are proven and (\d+) are unproven", text)
            status = m[-1] if m else ""
        print(f"registers: {len(gold_regs)} old, {len(gate_regs)} new, {paired} paired ({len(renames)} by suffix)")
        if rc == 0:
            print(f"EQUIVALENT {module}: {old} == {new} {status}")
            return 0
        print(f"NOT PROVED {module}: {old} vs {new} {status}\n{out[-3000:]}")
        return 1


if __name__ == "__main__":
    sys.exit(main())
