#!/usr/bin/env python3
"""Register-cut miter of two gate-level designs, checked by ABC's `&cec`.

  netlist_miter.py [--fsm-log LOG] [--abc-log LOG] [--boxes "M1 M2"] GOLD.json GATE.json MITER.aig MITER.map

GOLD and GATE are Yosys JSON netlists of one flattened module each, made of
$_AND_, $_NOT_ and $_DFF_P_ cells only (`dffunmap; aigmap`), all flip-flops
on one clock port, except that the gate may gate that clock: flip-flops
whose clock is the AND of the clock and a $_DLATCH_P_ that is open while the
clock is low (constraints/clock_gate.v, after ABC's mapping) are folded into
flip-flops on the clock whose next state is `latch D ? D : Q`, which is what
such a gate does when the latch's D settles while the clock is low (OpenSTA
checks that it does). A flip-flop on any other derived clock ends the run
with exit status 4, a refutation: the netlist is then not the RTL. The miter
is combinational:
  inputs   the primary inputs (shared by port name and bit), one input per
           register pair (its state, shared by both sides), one input of its
           own for every register left unpaired and every undriven bit;
  outputs  one per primary-output bit and one per register pair's next
           state (gold D on the gold side, gate D on the gate side), one per
           relation checked on the next state.
Registers pair when their Q bits carry the same public name (Yosys and ABC
keep register names). A register whose name is a constant on the other side
(the other synthesis proved it stuck) pairs with that constant: its state
input is the constant and its next state must equal it.

Black boxes (--boxes: module names, the memories `make synth` leaves as
macros) are instances kept whole on both sides. They pair by instance name;
each output bit of a pair is one miter input shared by both sides, each
input bit one compared miter output. A box is a synchronous memory: its
outputs are a function of the history of its inputs and of its contents,
equal (but arbitrary) on both sides at the start; so if the inputs agree in
every cycle up to now, so do the outputs, and the induction above carries
the boxes' histories with the registers.

Several gold registers may pair with one gate register (the synthesis
merged them); gold registers whose next-state functions agree on random
patterns share one literal, as a checked guess, even where the synthesis
purged their names (register correspondence, see main; a second try when
the first, without it, fails); re-encoded state registers named in a Yosys `fsm` log
(--fsm-log) are related to the gold state through its table (see main).

The miter is written as two circuits over the same inputs, MITER.aig.gold.aig
and MITER.aig.gate.aig, output for output. If they are equal for every input
(`&cec`), then from any two states that agree on the pairs and relations,
both designs give the same outputs and the same paired next states, and the
relations hold again, whatever the unpaired registers hold; by induction they
agree in every cycle after starting in agreeing states. Unpaired registers
are free, so pairing fewer registers can only make the proof fail, never
pass wrongly. With --abc-log, this script runs `&cec` itself, drops every
guessed relation (pin, merged pair, related register, re-encoding) that a
counterexample refutes, and repeats; LOG keeps the last verdict. Where
&cec stalls, it decides cone by cone, small cones by exhaustive simulation
(see decide). MAP lists
each miter output's meaning, one per line. Exit status 3 with a one-line
message on designs outside these limits.
"""
import json
import os
import random
import re
import signal
import subprocess
import sys
import time


def fail(msg):
    print(f"netlist_miter: {msg}", file=sys.stderr)
    sys.exit(3)


def load(path):
    # (black boxes are modules of their own, port lists only)
    mods = {n: m for n, m in json.load(open(path))["modules"].items() if "blackbox" not in m.get("attributes", {})}
    if len(mods) != 1:
        fail(f"{path}: expected one flattened module, found {len(mods)}")
    return next(iter(mods.values()))


class Side:
    """One design: drivers of its bits, its registers, names of its bits."""

    def __init__(self, mod, tag, boxes=()):
        self.tag = tag
        self.ports = mod["ports"]
        self.driver = {}  # bit -> ("and", a, b) | ("not", a) | ("ff",) | ("box", instance)
        self.ffs = []  # (q bit, d bit, clock bit)
        self.latches = {}  # q bit -> (d bit, enable bit)
        self.boxes = {}  # instance name -> (type, {port: (direction, bits)})
        for name, cell in mod["cells"].items():
            t, c = cell["type"], cell["connections"]
            if t == "$_AND_":
                self.driver[c["Y"][0]] = ("and", c["A"][0], c["B"][0])
            elif t == "$_NOT_":
                self.driver[c["Y"][0]] = ("not", c["A"][0])
            elif t == "$_DFF_P_":
                self.driver[c["Q"][0]] = ("ff",)
                self.ffs.append((c["Q"][0], c["D"][0], c["C"][0]))
            elif t == "$_DLATCH_P_" and tag == "gate":
                # (no driver entry: a latch's output read anywhere but a
                # clock gate is a free input, which cannot prove more)
                self.latches[c["Q"][0]] = (c["D"][0], c["E"][0])
            elif t in boxes:
                dirs = cell.get("port_directions", {})
                if set(dirs) != set(c):
                    fail(f"{tag}: black box {name} ({t}) without the directions of its ports")
                if "inout" in dirs.values():
                    fail(f"{tag}: black box {name} ({t}) has inout ports")
                # (yosys's flatten writes gold names as `a.b`, the gate's netlist as `\a.b`)
                key = name.lstrip("\\")
                if key in self.boxes:
                    fail(f"{tag}: two black boxes named {key}")
                self.boxes[key] = (t, {p: (dirs[p], c[p]) for p in c})
            else:
                fail(f"{tag}: cell {name} of type {t} (only $_AND_, $_NOT_, $_DFF_P_, the gate's $_DLATCH_P_"
                     + (f" and the black boxes {' '.join(sorted(boxes))})" if boxes else ")"))
        # (after every cell: a box output must be a bit nothing else drives)
        inputs = {b for bits in self.port_bits("input").values() for b in bits}
        for key, (_, ports) in self.boxes.items():
            for p, (d, bits) in ports.items():
                for b in bits if d == "output" else ():
                    if b in ("0", "1", "x", "z") or b in self.driver or b in inputs:
                        fail(f"{tag}: black box {key} output {p} drives a constant, an input or a driven bit")
                    self.driver[b] = ("box", key)
        # public names of every bit: (wire, index) -> bit
        self.by_name = {}
        self.names_of = {}
        for wname, net in mod["netnames"].items():
            if net.get("hide_name"):
                continue
            bits, off = net["bits"], net.get("offset", 0)
            n = len(bits)
            for i, b in enumerate(bits):
                idx = off + (n - 1 - i if net.get("upto") else i)
                key = (wname, idx)
                self.by_name[key] = b
                self.names_of.setdefault(b, []).append(key)

    def evaluate(self, root, known, and_, not_, leaf=None):
        """The value of bit root through its $_AND_ and $_NOT_ drivers, in
        post-order without recursion (cones run thousands of gates deep).
        known maps bits to values and is extended with every bit evaluated;
        a bit not in it and not driven by a gate takes leaf(bit) (a
        KeyError without leaf)."""
        stack = [root]
        while stack:
            x = stack[-1]
            if x in known:
                stack.pop()
                continue
            drv = self.driver.get(x)
            if drv is None or drv[0] not in ("and", "not"):
                if leaf is None:
                    raise KeyError(x)
                known[x] = leaf(x)
                stack.pop()
                continue
            todo = [a for a in drv[1:] if a not in known]
            if todo:
                stack.extend(todo)
                continue
            stack.pop()
            known[x] = not_(known[drv[1]]) if drv[0] == "not" else and_(known[drv[1]], known[drv[2]])
        return known[root]

    def cone(self, root):
        """The leaves of bit root's cone of $_AND_ and $_NOT_ (at most two:
        a clock cone), and its value as a function of them, or None."""
        leaves, seen, stack = [], set(), [root]
        while stack:
            x = stack.pop()
            if x in seen or x in ("0", "1"):
                continue
            seen.add(x)
            drv = self.driver.get(x)
            if drv and drv[0] in ("and", "not"):
                stack.extend(drv[1:])
            else:
                leaves.append(x)
                if len(leaves) > 2:
                    return None

        def value(assign):
            return self.evaluate(root, {"0": 0, "1": 1, **assign}, lambda a, b: a & b, lambda a: 1 - a)

        return leaves, value

    def fold_clock_gates(self):
        """Folds every flip-flop on a gated clock (see the module's doc)
        into one on the clock with a hold; returns how many."""
        if not self.latches:
            return 0
        inputs = {b for bits in self.port_bits("input").values() for b in bits}
        fresh = iter(range(10**9))

        def new(drv):
            b = f"fold{next(fresh)}"
            self.driver[b] = drv
            return b

        folded, ffs = 0, []
        for q, d, c in self.ffs:
            if c in inputs:
                ffs.append((q, d, c))
                continue
            why = None
            cone = self.cone(c)
            leaves = cone[0] if cone else []
            clk = [x for x in leaves if x in inputs]
            gl = [x for x in leaves if x in self.latches]
            if cone is None or len(clk) != 1 or len(gl) != 1:
                why = "not a function of one clock input and one latch"
            else:
                (k,), (g,) = clk, gl
                if [cone[1]({k: a, g: b}) for a in (0, 1) for b in (0, 1)] != [0, 0, 0, 1]:
                    why = "not the AND of the clock and the latch"
                else:
                    ld, le = self.latches[g]
                    en = self.cone(le)
                    if en is None or en[0] != [k] or [en[1]({k: 0}), en[1]({k: 1})] != [1, 0]:
                        why = "its latch is not open exactly while the clock is low"
            if why:
                print(f"netlist_miter: {self.tag}: the register at bit {q} is on a derived clock that is "
                      f"not a clock gate: {why}", file=sys.stderr)
                sys.exit(4)
            # next = ld ? d : q
            hold = new(("and", new(("not", ld)), q))
            take = new(("and", ld, d))
            either = new(("and", new(("not", take)), new(("not", hold))))
            ffs.append((q, new(("not", either)), k))
            folded += 1
        self.ffs = ffs
        return folded

    def port_bits(self, direction):
        return {p: v["bits"] for p, v in self.ports.items() if v["direction"] == direction}


class Aig:
    def __init__(self):
        self.n_inputs = 0
        self.names = []  # of the inputs, for counterexamples
        self.ands = []  # (lhs var, rhs0 lit, rhs1 lit), filled after inputs
        self.strash = {}

    def input(self, name):
        assert not self.ands
        self.n_inputs += 1
        self.names.append(name)
        return 2 * self.n_inputs

    def and_(self, a, b):
        if a == 0 or b == 0 or a == (b ^ 1):
            return 0
        if a == 1:
            return b
        if b == 1 or a == b:
            return a
        key = (max(a, b), min(a, b))
        lit = self.strash.get(key)
        if lit is None:
            lit = 2 * (self.n_inputs + len(self.ands) + 1)
            self.ands.append(key)
            self.strash[key] = lit
        return lit

    def xor(self, a, b):
        return self.and_(self.and_(a, b ^ 1) ^ 1, self.and_(a ^ 1, b) ^ 1) ^ 1

    def refuted(self, outs_a, outs_b, width=1024, seed=1, near=None):
        """Indices i where random simulation shows outs_a[i] != outs_b[i]
        (with near, a list of input values: that pattern and patterns that
        differ from it in a few inputs)."""
        rng = random.Random(seed)
        full = (1 << width) - 1

        def word():
            # each input 1 with probability 1/2, 1/16 or 15/16 (a quarter
            # of the patterns each way), so that narrow conditions (a
            # register equal to a constant) occur too
            w = [rng.getrandbits(width) for _ in range(5)]
            lo = w[1] & w[2] & w[3] & w[4]
            hi = w[1] | w[2] | w[3] | w[4]
            quarter = width // 4
            sel_lo = ((1 << quarter) - 1) << quarter
            sel_hi = ((1 << quarter) - 1) << (2 * quarter)
            return (w[0] & ~(sel_lo | sel_hi) | lo & sel_lo | hi & sel_hi) & full

        val = [0] + [word() for _ in range(self.n_inputs)]
        if near is not None:
            # each input flipped in 1/128 of the patterns (a few inputs per
            # pattern, so that the counterexample's condition mostly holds
            # while other data bits vary), none in the first
            def flips():
                r = full
                for _ in range(7):
                    r &= rng.getrandbits(width)
                return r

            val = [0] + [((full if b else 0) ^ flips()) & ~1 & full | b for b in near]

        def v(lit):
            return val[lit >> 1] ^ (full if lit & 1 else 0)

        for r0, r1 in self.ands:
            val.append(v(r0) & v(r1))
        return [i for i, (a, b) in enumerate(zip(outs_a, outs_b)) if v(a) != v(b)]

    def write(self, path, outputs):
        m = self.n_inputs + len(self.ands)
        with open(path, "wb") as f:
            f.write(f"aig {m} {self.n_inputs} 0 {len(outputs)} {len(self.ands)}\n".encode())
            for o in outputs:
                f.write(f"{o}\n".encode())
            buf = bytearray()
            for k, (r0, r1) in enumerate(self.ands):
                lhs = 2 * (self.n_inputs + k + 1)
                for delta in (lhs - r0, r0 - r1):
                    while delta >= 0x80:
                        buf.append((delta & 0x7F) | 0x80)
                        delta >>= 7
                    buf.append(delta)
            f.write(bytes(buf))


def read_fsm_log(path):
    """The re-encodings in a Yosys log of `fsm`: [(state wire, [(old, new)])].

    Codes as Yosys prints them, most significant bit first; a new code's
    '-' bits are don't-cares (a one-hot code shows only its hot bit)."""
    fsms, cur = [], None
    for line in open(path):
        m = re.match(r"Recoding FSM `\$fsm\$\\(.*)\$\d+' from module", line)
        if m:
            cur = (m.group(1), [])
            fsms.append(cur)
            continue
        m = re.match(r"^\s+([01]+) -> ([01-]+)\s*$", line)
        if m and cur is not None:
            cur[1].append((m.group(1), m.group(2)))
        elif cur is not None and cur[1]:
            cur = None
    return fsms


# &cec on the whole miter first; where it does not finish in CEC_SECONDS,
# cone by cone (the outputs of one register word or port), each cone of at
# most EXHAUST_BITS inputs given CONE_SECONDS before exhaustive simulation
# decides it (a 16 x 8 multiplier's 24 inputs: seconds, where SAT stalls).
CEC_SECONDS = float(os.environ.get("PROVE_CEC_SECONDS", 30))
CONE_SECONDS = float(os.environ.get("PROVE_CONE_SECONDS", 5))
EXHAUST_BITS = int(os.environ.get("PROVE_EXHAUST_BITS", 28))
HERE = os.path.dirname(os.path.realpath(__file__))


def cec(a, b, limit):
    """ABC's &cec of AIG files a and b: (verdict, output index, log)."""
    try:
        run = subprocess.run(["yosys-abc", "-c", f"&r {a}; &cec {b}"], capture_output=True, text=True, timeout=limit)
    except subprocess.TimeoutExpired:
        return "undecided", None, f"&cec unfinished after {limit:g} s\n"
    log = run.stdout + run.stderr
    m = re.search(r"(?:Output|zero-based number) (\d+)", run.stdout)
    if "Networks are equivalent" in run.stdout:
        return "equivalent", None, log
    if "NOT EQUIVALENT" in run.stdout and m:
        return "refuted", int(m.group(1)), log
    return "undecided", None, log


def supports(aig, lits):
    """Input support of each literal, as a bit set over input numbers."""
    sup, stack = {}, [lit >> 1 for lit in lits]
    while stack:
        n = stack[-1]
        if n in sup:
            stack.pop()
        elif n <= aig.n_inputs:
            sup[n] = 1 << n if n else 0
            stack.pop()
        else:
            r0, r1 = aig.ands[n - aig.n_inputs - 1]
            todo = [x >> 1 for x in (r0, r1) if x >> 1 not in sup]
            if todo:
                stack.extend(todo)
            else:
                sup[n] = sup[r0 >> 1] | sup[r1 >> 1]
                stack.pop()
    return [sup[lit >> 1] for lit in lits]


def bits_of(x):
    while x:
        low = x & -x
        yield low.bit_length() - 1
        x ^= low


def color(sups):
    """Simulation variable of each input: inputs that never share an output's
    support may share a variable, so every output still sees every
    assignment of its own support. Returns {input: variable}."""
    nb = {}
    for s in sups:
        for i in bits_of(s):
            nb[i] = nb.get(i, 0) | s
    col = {}
    for i in sorted(nb, key=lambda i: (-bin(nb[i]).count("1"), i)):
        used = {col[j] for j in bits_of(nb[i]) if j in col}
        col[i] = next(c for c in range(len(used) + 1) if c not in used)
    for s in sups:  # (each output's inputs on distinct variables)
        assert len({col[i] for i in bits_of(s)}) == bin(s).count("1")
    return col


def exhaust(aig, pairs, col, work):
    """Simulates every assignment of the variables of col: None if each pair
    of literals is equal, else (pair index, input values)."""
    prog = os.path.join(work, "aig_exhaust")
    if not os.path.exists(prog):
        cc = subprocess.run(["cc", "-O3", "-march=native", "-o", prog, os.path.join(HERE, "aig_exhaust.c")], capture_output=True, text=True)
        if cc.returncode:
            fail(f"cannot build aig_exhaust: {cc.stderr.strip()}")
    # the cone of the pairs, renumbered: inputs first, then its AND nodes
    need, stack = set(), [lit >> 1 for p in pairs for lit in p]
    while stack:
        n = stack.pop()
        if n in need or n <= aig.n_inputs:
            continue
        need.add(n)
        stack.extend(x >> 1 for x in aig.ands[n - aig.n_inputs - 1])
    ins = sorted(col)
    new = {0: 0}
    for k, i in enumerate(ins):
        new[i] = k + 1
    ands = sorted(need)
    for k, n in enumerate(ands):
        new[n] = len(ins) + 1 + k

    def lit(x):
        return 2 * new[x >> 1] | x & 1

    path = os.path.join(work, "exhaust.txt")
    with open(path, "w") as f:
        f.write(f"{max(col.values(), default=-1) + 1} {len(ins)} {len(ands)} {len(pairs)}\n")
        f.write("".join(f"{col[i]}\n" for i in ins))
        f.write("".join(f"{lit(r0)} {lit(r1)}\n" for r0, r1 in (aig.ands[n - aig.n_inputs - 1] for n in ands)))
        f.write("".join(f"{lit(a)} {lit(b)}\n" for a, b in pairs))
    run = subprocess.run([prog, path], capture_output=True, text=True)
    words = run.stdout.split()
    if run.returncode == 0 and words[:1] == ["equal"] and int(words[1]) >= 1 << (max(col.values(), default=-1) + 1):
        return None
    if run.returncode == 1 and words[:1] == ["differ"]:
        pattern = int(words[2])
        values = [0] * aig.n_inputs
        for i in ins:
            values[i - 1] = pattern >> col[i] & 1
        return int(words[1]), values
    fail(f"aig_exhaust: {run.stdout.strip()} {run.stderr.strip()}")


def decide(aig, outputs, out_n, meaning, base):
    """Whether gold outputs equal gate outputs for every input:
    (verdict, refuted output, its input values if known, the AIG files it was
    refuted on, log for the shell, summary of the cones). The cones' own
    logs go to BASE.cones.log: the shell reads only the final verdict."""
    a, b = base + ".gold.aig", base + ".gate.aig"
    verdict, out, log = cec(a, b, CEC_SECONDS)
    if verdict != "undecided":
        return verdict, out, None, (a, b), log, ""
    cones = {}
    for i, what in enumerate(meaning):
        cones.setdefault(re.sub(r"\[\d+\]", "", what), []).append(i)
    work = os.path.dirname(os.path.abspath(base))
    done, logs = [], [f"whole miter: {log.strip()}\n"]

    def verdict_log(line):
        with open(base + ".cones.log", "w") as f:
            f.write("".join(logs))
        return line + "\n"

    for k, (name, idx) in enumerate(cones.items()):
        sups = [x | y for x, y in zip(supports(aig, [outputs[i] for i in idx]), supports(aig, [out_n[i] for i in idx]))]
        small = max(bin(x).count("1") for x in sups) <= EXHAUST_BITS
        ca, cb = f"{base}.cone{k}.gold.aig", f"{base}.cone{k}.gate.aig"
        aig.write(ca, [outputs[i] for i in idx])
        aig.write(cb, [out_n[i] for i in idx])
        verdict, out, log = cec(ca, cb, CONE_SECONDS if small else None)
        logs.append(f"cone {name}: {log.strip()}\n")
        if verdict == "refuted":
            return "refuted", idx[out], None, (ca, cb), verdict_log(f"NOT EQUIVALENT: Output {idx[out]} (cone {name}, &cec)"), ""
        if verdict == "equivalent":
            done.append(("&cec", name, None))
            continue
        if not small:
            return "undecided", None, None, (ca, cb), verdict_log(f"UNDECIDED: &cec did not finish cone {name}, of more than {EXHAUST_BITS} inputs"), ""
        # packs of outputs whose shared variables stay within the bound
        packs, cur = [], []
        for j in sorted(range(len(idx)), key=lambda j: -bin(sups[j]).count("1")):
            if cur and max(color([sups[x] for x in cur + [j]]).values(), default=-1) + 1 > EXHAUST_BITS:
                packs.append(cur)
                cur = []
            cur.append(j)
        packs.append(cur)
        for pack in packs:
            col = color([sups[j] for j in pack])
            t = time.time()
            res = exhaust(aig, [(outputs[idx[j]], out_n[idx[j]]) for j in pack], col, work)
            nvar = max(col.values(), default=-1) + 1
            if res is not None:
                o = idx[pack[res[0]]]
                # (the pattern, checked again by the Python simulator)
                if o not in aig.refuted(outputs, out_n, width=1, near=res[1]):
                    fail(f"aig_exhaust's counterexample for {meaning[o]} does not differ in the Python simulation")
                shown = ", ".join(f"{aig.names[i]}={v}" for i, v in enumerate(res[1]) if sups[pack[res[0]]] >> (i + 1) & 1)
                logs.append(f"exhaustive simulation of {len(pack)} outputs of {name}: {meaning[o]} differs at {shown}\n")
                return "refuted", o, res[1], (ca, cb), verdict_log(f"NOT EQUIVALENT: Output {o} (exhaustive simulation: {shown})"), ""
            done.append(("exhaustive", name, f"{len(pack)} outputs, 2^{nvar} patterns, {time.time() - t:.1f} s"))
            logs.append(f"exhaustive simulation of {len(pack)} outputs of {name}: equal on all 2^{nvar} patterns\n")
    by_sim = [f"{n} ({d})" for e, n, d in done if e == "exhaustive"]
    summary = (f"; &cec unfinished on the whole miter after {CEC_SECONDS:g} s, so cone by cone: {len(cones)} cones, "
               f"{sum(e == '&cec' for e, _, _ in done)} by &cec, {len({n for e, n, _ in done if e == 'exhaustive'})} by exhaustive simulation: {'; '.join(by_sim)}")
    return "equivalent", None, None, (a, b), verdict_log("Networks are equivalent (cone by cone)"), summary


def main():
    # a timeout's SIGTERM ends ABC too (subprocess.run kills its child
    # when an exception leaves it)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(124))
    args = sys.argv[1:]
    fsm_log = abc_log = None
    boxes = set()
    while len(args) > 4 and args[0] in ("--fsm-log", "--abc-log", "--boxes"):
        if args[0] == "--fsm-log":
            fsm_log = args[1]
        elif args[0] == "--abc-log":
            abc_log = args[1]
        else:
            boxes = set(args[1].split())
        args = args[2:]
    if len(args) != 4:
        fail("usage: netlist_miter.py [--fsm-log LOG] [--abc-log LOG] [--boxes \"M1 M2\"] GOLD.json GATE.json MITER.aig MITER.map")
    gold = Side(load(args[0]), "gold", boxes)
    gate = Side(load(args[1]), "gate", boxes)
    gated = gate.fold_clock_gates()
    # black boxes pair by instance name: same type, same ports and widths
    if set(gold.boxes) != set(gate.boxes):
        fail(f"black boxes differ: gold only {sorted(set(gold.boxes) - set(gate.boxes))}, gate only {sorted(set(gate.boxes) - set(gold.boxes))}")
    for name, (t, ports) in gold.boxes.items():
        t2, ports2 = gate.boxes[name]
        if t != t2 or {p: (d, len(b)) for p, (d, b) in ports.items()} != {p: (d, len(b)) for p, (d, b) in ports2.items()}:
            fail(f"black box {name}: gold {t} and gate {t2} differ in type or ports")
    if boxes and not gold.boxes:
        fail(f"no instance of the black boxes {' '.join(sorted(boxes))}")

    ins_g, ins_n = gold.port_bits("input"), gate.port_bits("input")
    outs_g, outs_n = gold.port_bits("output"), gate.port_bits("output")
    for what, a, b in (("input", ins_g, ins_n), ("output", outs_g, outs_n)):
        if {p: len(v) for p, v in a.items()} != {p: len(v) for p, v in b.items()}:
            fail(f"the {what} ports differ: gold {sorted(a)}, gate {sorted(b)}")
    if not outs_g:
        fail("no output ports: nothing to compare")
    if "inout" in {v["direction"] for s in (gold, gate) for v in s.ports.values()}:
        fail("inout ports are not supported")

    # one clock: the same input port bit on both sides
    for s, ins in ((gold, ins_g), (gate, ins_n)):
        clocks = {c for _, _, c in s.ffs}
        names = {(p, i) for p, bits in ins.items() for i, b in enumerate(bits) if b in clocks}
        if len(clocks) > 1 or len(names) != len(clocks):
            fail(f"{s.tag}: registers must share one clock input port (found {len(clocks)} clocks)")
        s.clock = next(iter(names), None)
    if gold.clock and gate.clock and gold.clock != gate.clock:
        fail(f"clocks differ: gold {gold.clock}, gate {gate.clock}")

    # each gold bit's value while `reset` is high: 0 or 1 where that is a
    # constant, None where it depends on other inputs or on registers
    reset_bits = ins_g.get("reset", [])
    in_reset = {"0": 0, "1": 1}
    if len(reset_bits) == 1:
        in_reset[reset_bits[0]] = 1

    def reset_value(root):
        # three-valued: None where a register, a box or a free input decides
        return gold.evaluate(
            root,
            in_reset,
            lambda a, b: 0 if 0 in (a, b) else 1 if (a, b) == (1, 1) else None,
            lambda a: None if a is None else 1 - a,
            leaf=lambda _: None,
        )

    def build(drop):
        aig = Aig()
        lit = {"gold": {"0": 0, "1": 1}, "gate": {"0": 0, "1": 1}}
        outputs, meaning = [], []
        for p in sorted(ins_g):
            for i, (gb, nb) in enumerate(zip(ins_g[p], ins_n[p])):
                v = aig.input(f"{p}[{i}]")
                for s, b in (("gold", gb), ("gate", nb)):
                    if b in lit[s] and lit[s][b] != v:
                        fail(f"{s}: input bit of {p} is also another input")
                    lit[s][b] = v
        # a black box pair's outputs: one input each, shared
        box_ins = []
        for name in sorted(gold.boxes):
            for p, (d, gbits) in sorted(gold.boxes[name][1].items()):
                nbits = gate.boxes[name][1][p][1]
                if d == "output":
                    for i, (gb, nb) in enumerate(zip(gbits, nbits)):
                        v = aig.input(f"black box {name} output {p}[{i}]")
                        lit["gold"][gb] = lit["gate"][nb] = v
                else:
                    box_ins += [(f"black box {name} input {p}[{i}]", gb, nb, None) for i, (gb, nb) in enumerate(zip(gbits, nbits))]

        # Pair registers by name. A gold register left over whose name is a
        # constant in the gate is pinned to it. A gate register left over whose
        # name is, in the gold, a constant or a function of the gold registers
        # alone (a register the gold merged into another, an alias) is related
        # to it: its state is that function of the gold state, its next state
        # must be the function of the gold next state.
        q_of_n = {q: (q, d) for q, d, _ in gate.ffs}
        gold_ffq = {q for q, _, _ in gold.ffs}
        # Re-encoded state registers (the synthesis's `fsm`): gold wire W of
        # width w holds the RTL's codes, the gate's register of the same name
        # the new ones. Both stay out of the pairing; each gate bit is related
        # to the gold state (bit j = the gold state is one whose new code has
        # j set), and the gold state is assumed to be one of the listed codes.
        # Both are checked again on the next state, so a wrong or incomplete
        # table can only make the proof fail.
        fsms = []
        for wire, table in read_fsm_log(fsm_log) if fsm_log else []:
            wo, wn = len(table[0][0]), len(table[0][1])
            gq = [gold.by_name.get((wire, i)) for i in range(wo)]
            nq = nq_all = [gate.by_name.get((wire, j)) for j in range(wn)]
            if (wire, wo) in gold.by_name or (wire, wn) in gate.by_name:
                continue  # not the whole wire: left to the pairing
            # a new-code bit the synthesis made constant 0 (the reset state's
            # one-hot bit: Yosys codes that state as all zeros) leaves the
            # relation; the gate then uses the constant
            nq = [b for b in nq if b != "0"]
            if ("fsm", wire) in drop:
                continue
            if table and all(b in gold_ffq for b in gq) and all(b in q_of_n for b in nq):
                if len(set(gq)) == wo and len(set(nq)) == len(nq):
                    fsms.append((wire, table, gq, {j: b for j, b in enumerate(nq_all) if b != "0"}))
        fsm_gold = {b for _, _, gq, _ in fsms for b in gq}
        fsm_gate = {b for _, _, _, nq in fsms for b in nq.values()}
        paired_n = set(fsm_gate)
        pairs, pinned, related = [], [], []
        merged_gold = {}  # gold register -> its guess's key
        stuck = 0
        for q, d, _ in gold.ffs:
            match = None
            if q in fsm_gold:
                continue
            for key in gold.names_of.get(q, []):
                b = gate.by_name.get(key)
                if b in q_of_n and b not in paired_n:
                    match = ("ff", b, key)
                    break
                if b in ("0", "1") and match is None:
                    match = ("const", b, key)
            if match is None:
                # a gate register already paired: the synthesis merged several
                # gold registers into it (equal next-state functions after its
                # word-level passes); each pair is checked like any other
                for key in gold.names_of.get(q, []):
                    b = gate.by_name.get(key)
                    if b in q_of_n and b not in fsm_gate:
                        match = ("ff", b, key)
                        merged_gold[q] = ("pair", q)
                        break
            # a member of a class of equal next-state functions (below)
            # takes its anchor's gate register instead of its own
            t = gold_class.get(q, q)
            if t != q and ("class", q) not in drop:
                tb = next(b for k in gold.names_of[t] if (b := gate.by_name.get(k)) in q_of_n)
                if tb not in fsm_gate:
                    key = next(k for k in gold.names_of[t] if gate.by_name.get(k) == tb)
                    match = ("ff", tb, key)
                    merged_gold[q] = ("class", q)
            if match is None and q in stuck_at:
                match = ("stuck", str(stuck_at[q]), gold.names_of.get(q, [("?", 0)])[0])
            if match and match[0] == "const" and q not in live:
                continue
            if match and (merged_gold.get(q) if match[0] == "ff" else ("pin", q)) in drop:
                continue  # refuted before: left free
            if match and match[0] == "ff":
                paired_n.add(match[1])
                pairs.append(((q, d), q_of_n[match[1]], match[2]))
            elif match:
                pinned.append(((q, d), int(match[1]), match[2]))
                stuck += match[0] == "stuck"

        state_only = {}

        def of_state(b):
            """Whether gold bit b is a function of the gold registers alone."""
            stack = [b]
            while stack:
                x = stack[-1]
                if x in state_only or x in ("0", "1") or x in gold_ffq:
                    stack.pop()
                    continue
                drv = gold.driver.get(x)
                if drv is None or drv[0] in ("ff", "box"):
                    state_only[x] = False
                    stack.pop()
                    continue
                todo = [a for a in drv[1:] if a not in state_only and a not in ("0", "1") and a not in gold_ffq]
                if todo:
                    stack.extend(todo)
                    continue
                stack.pop()
                state_only[x] = all(state_only.get(a, True) for a in drv[1:])
            return b in ("0", "1") or b in gold_ffq or state_only[b]

        for q, d, _ in gate.ffs:
            if q in paired_n:
                continue
            for key in gate.names_of.get(q, []):
                b = gold.by_name.get(key)
                if b is not None and of_state(b) and ("rel", q) not in drop:
                    related.append(((q, d), b, key))
                    break
        for (gq, _), (nq, _), key in pairs:
            if nq not in lit["gate"]:
                lit["gate"][nq] = aig.input(f"register {key[0]}[{key[1]}]")
            lit["gold"][gq] = lit["gate"][nq]
        for (q, _), c, _ in pinned:
            lit["gold"][q] = c
        related_q = {q for (q, _), _, _ in related}
        free = {"gold": 0, "gate": 0}
        for s in (gold, gate):
            for q, _, _ in s.ffs:
                if q not in lit[s.tag] and not (s is gate and (q in related_q or q in fsm_gate)):
                    lit[s.tag][q] = aig.input(f"free {s.tag} register {s.names_of.get(q, [('?', 0)])[0]}")
                    free[s.tag] += 1

        undriven = {"gold": 0, "gate": 0}
        roots = []
        for p in sorted(outs_g):
            for i, (gb, nb) in enumerate(zip(outs_g[p], outs_n[p])):
                roots.append((f"output {p}[{i}]", gb, nb, None))
        roots += box_ins
        for (gq, gd), (nq, nd), key in pairs:
            # (only a merged pair is a guess that may be dropped)
            h = merged_gold.get(gq)
            roots.append((f"next state of register {key[0]}[{key[1]}]", gd, nd, h))
        for (q, d), c, key in pinned:
            roots.append((f"next state of gold register {key[0]}[{key[1]}] (gate constant {c})", d, str(c), ("pin", q)))
        # find undriven bits reachable from the roots before numbering gates
        extra = {"gold": [], "gate": []}
        for s in (gold, gate):
            table = lit[s.tag]
            seen = set(table) | (related_q | fsm_gate if s is gate else set())
            stack = [b for _, gb, nb, _ in roots for b in ((gb,) if s is gold else (nb,))]
            if s is gate:
                stack += [d for (_, d), _, _ in related] + [q_of_n[q][1] for q in fsm_gate]
            while stack:
                b = stack.pop()
                if b in seen:
                    continue
                seen.add(b)
                drv = s.driver.get(b)
                if drv is None or drv[0] in ("ff", "box"):
                    if drv is None:
                        extra[s.tag].append(b)
                    continue
                stack.extend(drv[1:])
        for s in ("gold", "gate"):
            for b in extra[s]:
                if b in ("x", "z"):
                    fail(f"{s}: an undefined constant (x) feeds the logic; map it first (setundef)")
                lit[s][b] = aig.input(f"undriven {s} bit {b}")
                undriven[s] += 1

        def lit_of(s, root, table):
            return s.evaluate(root, table, aig.and_, lambda a: a ^ 1)

        # related gate registers: their state, then the gold function of the
        # gold next state
        for (q, _), b, _ in related:
            lit["gate"][q] = lit_of(gold, b, lit["gold"])
        nxt = {"0": 0, "1": 1}
        for q, d, _ in gold.ffs:
            nxt[q] = lit_of(gold, d, lit["gold"])
        for (q, d), b, key in related:
            roots.append((f"next state of gate register {key[0]}[{key[1]}] (a function of the gold state)", ("next", b), d, ("rel", q)))

        # re-encoded state registers: gate bit j is the OR of (gold state ==
        # old code) over the states whose new code has j set; valid says that
        # every gold state register holds one of its codes
        def any_of(xs):
            r = 0
            for x in xs:
                r = aig.and_(r ^ 1, x ^ 1) ^ 1
            return r

        def code_is(qs, table, code):
            r = 1
            for i, c in enumerate(reversed(code)):
                r = aig.and_(r, table[qs[i]] ^ (c == "0"))
            return r

        valid, valid_next = 1, []
        for wire, codes, gq, nq in fsms:
            for table, tag in ((lit["gold"], "now"), (nxt, "next")):
                hit = [code_is(gq, table, old) for old, _ in codes]
                ok = any_of(hit)
                if tag == "now":
                    valid = aig.and_(valid, ok)
                    for j, q in nq.items():
                        lit["gate"][q] = any_of(h for h, (_, new) in zip(hit, codes) if new[len(new) - 1 - j] == "1")
                else:
                    valid_next.append((wire, ok))
                    for j, q in nq.items():
                        f = any_of(h for h, (_, new) in zip(hit, codes) if new[len(new) - 1 - j] == "1")
                        roots.append((f"next state of re-encoded gate register {wire}[{j}] (a function of the gold state)", ("lit", f), q_of_n[q][1], ("fsm", wire)))
        for wire, ok in valid_next:
            roots.append((f"gold state register {wire} holds one of its codes in the next state", ("lit", aig.and_(valid, ok)), ("lit", valid), ("fsm", wire)))

        out_n, hyp = [], []
        for what, gb, nb, h in roots:
            if isinstance(gb, tuple):
                g = gb[1] if gb[0] == "lit" else lit_of(gold, gb[1], nxt)
            else:
                g = lit_of(gold, gb, lit["gold"])
            n = nb[1] if isinstance(nb, tuple) else lit_of(gate, nb, lit["gate"])
            # compared only in states where the FSM codes are valid
            outputs.append(aig.and_(valid, g))
            out_n.append(aig.and_(valid, n))
            meaning.append(what)
            hyp.append(h)
        stats = (
            (f"{gated} gate registers on gated clocks folded, " if gated else "")
            + f"{len(pairs)} register pairs ({len(pairs) - len({nq for _, (nq, _), _ in pairs})} gold registers merged in the gate, {sum(merged_gold.get(gq, ('',))[0] == 'class' for (gq, _), _, _ in pairs)} of them tied to a register of equal next state), {len(pinned) - stuck} gold registers pinned to gate constants, {stuck} stuck at their reset value, "
            f"{len(related)} gate registers related to gold functions, "
            + (f"{len(gold.boxes)} black boxes ({len(box_ins)} input bits compared), " if gold.boxes else "")
            + f"{len(fsms)} re-encoded state registers ({len(fsm_gate)} gate bits) related to the gold state, "
            f"unpaired registers gold {free['gold']} gate {free['gate']}, "
            f"undriven bits gold {undriven['gold']} gate {undriven['gate']}, "
            f"{len(outputs)} miter outputs, {len(aig.ands)} AND nodes"
        )
        return aig, outputs, out_n, meaning, hyp, stats

    # Every relation above (pair, pin, related register, re-encoding) is a
    # guess that the miter checks. Guesses that random simulation of the
    # miter already refutes (e.g. a gate wire that is 0 because the
    # synthesis removed a dead register, not a stuck one) are dropped, and
    # their registers left free, before ABC sees it: dropping can only make
    # the proof harder, never wrong.
    # gold registers that can reach an output (through logic and other
    # registers): only those need a pin, the others stay free
    d_of = {q: d for q, d, _ in gold.ffs}
    live, stack = set(), [b for bits in outs_g.values() for b in bits]
    while stack:
        b = stack.pop()
        if b in live:
            continue
        live.add(b)
        drv = gold.driver.get(b)
        if drv is None:
            continue
        if drv[0] == "ff":
            stack.append(d_of[b])
        elif drv[0] == "box":
            stack.extend(b for d, bits in gold.boxes[drv[1]][1].values() if d == "input" for b in bits)
        else:
            stack.extend(drv[1:])
    # A live gold register absent from the gate (perhaps the synthesis found
    # it stuck at its reset value and removed it: a layer index at one layer)
    # is pinned to its reset value where that is a constant: a guess checked
    # on the next state like the gate constants' pins, dropped if refuted.
    # Without a single `reset` input there is no reset value to take.
    stuck_at = {}
    for q, d, _ in gold.ffs if len(reset_bits) == 1 else []:
        if q in live and not any(k in gate.by_name for k in gold.names_of.get(q, [])):
            c = reset_value(d)
            if c is not None:
                stuck_at[q] = c
    # Register correspondence (van Eijk): gold registers whose next-state
    # functions agree, with the registers of each class in their current
    # state sharing one value, are equal in every reachable state (equal
    # after reset, they stay equal). The synthesis merges such registers
    # where their logic became structurally equal, purges the losers'
    # names, and then reads either: with one free input each the miter
    # would tell them apart. The classes are found by simulation: all live
    # registers of one reset value start as one class; each round gives
    # every class one random word and splits the classes by next-state
    # value, until a round splits none (a pipeline's merged stages are
    # found together: a stage's members agree only once the stage before
    # shares a word). Every member shares the literal of the class's
    # anchor (its first member with a gate register by name): a guess, the
    # member paired with the anchor's gate register and its own gate
    # register related to it by name, each checked on the next state and
    # dropped if refuted.
    def classes():
        """Each live gold register of a class -> the class's anchor."""
        rng = random.Random(3)
        full = (1 << 256) - 1
        d_of_live = {q: d for q, d, _ in gold.ffs if q in live}
        cls, n = {}, {}
        for q, d in d_of_live.items():
            cls[q] = n.setdefault(reset_value(d), len(n))
        n = len(n)
        for _ in range(100):
            word = [rng.getrandbits(256) for _ in range(n)]
            sample = {}

            def leaf(x):
                if x in cls:
                    return word[cls[x]]
                return sample.setdefault(x, rng.getrandbits(256))

            known = {"0": 0, "1": full}
            split = {}
            for q, d in d_of_live.items():
                v = gold.evaluate(d, known, lambda a, b: a & b, lambda a: ~a & full, leaf=leaf)
                split.setdefault((cls[q], v), []).append(q)
            if len(split) == n:
                break
            cls = {q: i for i, m in enumerate(split.values()) for q in m}
            n = len(split)
        gate_ffq = {q for q, _, _ in gate.ffs}
        members = {}
        for q, c in cls.items():
            members.setdefault(c, []).append(q)
        anchor = {}
        for m in members.values():
            named = [t for t in m if any(gate.by_name.get(k) in gate_ffq for k in gold.names_of.get(t, []))]
            if len(m) > 1 and named:
                anchor.update({q: named[0] for q in m})
        return anchor

    def attempt():
        """The refinement loop: (verdict, stats, dropped guesses, ABC
        counterexamples, cone summary)."""
        verdict = None
        drop = set()
        by_abc = 0
        cones = ""
        for _ in range(1000):
            aig, outputs, out_n, meaning, hyp, stats = build(drop)
            bad = {hyp[i] for i in aig.refuted(outputs, out_n) if hyp[i]}
            if bad:
                drop |= bad
                continue
            # the two sides as two AIGs over the same inputs, output for output
            aig.write(args[2] + ".gold.aig", outputs)
            aig.write(args[2] + ".gate.aig", out_n)
            with open(args[3], "w") as f:
                f.write("\n".join(meaning) + "\n")
            if abc_log is None:
                break
            # ABC's &cec (two circuits, output for output) decides, cone by
            # cone where it stalls, with exhaustive simulation for small cones
            # (see decide); when it refutes a relation, a counterexample
            # (exhaustive simulation's pattern, else one from ABC's iprove on
            # the OR miter, used only to find counterexamples, never as the
            # proof) and patterns near it drop every relation they refute, and
            # the check runs again
            verdict, out, pattern, (a, b), log, cones = decide(aig, outputs, out_n, meaning, args[2])
            with open(abc_log, "w") as f:
                f.write(log)
            if verdict != "refuted" or not hyp[out]:
                break
            if pattern is not None:
                drop |= {hyp[i] for i in aig.refuted(outputs, out_n, near=pattern) if hyp[i]} | {hyp[out]}
                by_abc += 1
                continue
            cex = args[2] + ".cex"
            subprocess.run(["yosys-abc", "-c", f"miter -c {a} {b}; iprove; write_cex {cex}"], capture_output=True, text=True)
            try:
                text = [int(c) for c in re.match(r"[01]*", open(cex).read()).group(0)]
            except OSError:
                text = []
            found = set()
            # (the file's layout is not documented: take the alignment whose
            # first pattern shows a difference)
            for off in range(len(text) - aig.n_inputs + 1):
                bits = text[off : off + aig.n_inputs]
                hits = aig.refuted(outputs, out_n, width=1, near=bits)
                if hits:
                    found = {hyp[i] for i in aig.refuted(outputs, out_n, near=bits) if hyp[i]}
                    break
            # at least the relation &cec refuted
            found.add(hyp[out])
            drop |= found
            by_abc += 1
        return verdict, stats, drop, by_abc, cones

    # The classes are tried only where the proof fails without them: a
    # wrong class that simulation does not refute can make another
    # register's check fail, which drops no guess and ends the proof.
    # (found only then: the simulation of every next-state function is
    # wasted on a proof that needs no classes)
    gold_class = {}
    verdict, stats, drop, by_abc, cones = attempt()
    if abc_log is not None and verdict != "equivalent":
        gold_class = classes()
    if gold_class:
        verdict, stats, drop, by_abc, cones = attempt()
        cones += " (registers classed after a proof without classes failed)"
    print(f"{stats}, {len(drop)} relations refuted (by simulation, {by_abc} ABC counterexamples) and dropped{cones}")

main()
