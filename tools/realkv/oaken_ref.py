#!/usr/bin/env python3
"""The Oaken authors' group-shift quantizer, re-expressed in numpy, and the
steps from it to kvforge's `paper` mode, measured on one KV file.

The reference is the algorithm of casys-kaist/oaken src/oaken/quantize.py
(MultiThresholdTokenwiseQuantizer.downsample, quantize_outlier and
use_group_shift on, three groups), read and re-written here; none of its
code is copied. What it does, and how each variant departs from it, is in
docs/spec.md §2.15. Every variant uses the thresholds kvsim uses (a
kvforge thresholds file) and the same elements, so the SQNR figures line up
with `kvsim metrics` on the same file.

    oaken_ref.py --input SET/01-canal.kv.npy --thresholds TH.json [--md OUT]

Exit status: 0 done; 2 bad use or bad input.
"""
import argparse
import json
import sys

import numpy as np


def die(msg):
    print(f"oaken_ref: {msg}", file=sys.stderr)
    sys.exit(2)


def grid(t, bits, lo, hi):
    """Uniform code of t over [lo, hi] with 2^bits levels, rounded half to
    even, and its value; lo and hi broadcast (a range of 0 gives code 2^bits - 1,
    as the reference's NaN replacement does)."""
    levels = 2**bits - 1
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = levels / (hi - lo)
        q = np.round(scale * t - lo * scale)
        q = np.where(np.isfinite(q), q, levels)
        return q, np.where(np.isfinite(scale), q / scale + lo, lo)


def reference(x, th, obits, ibits, per_token, keep_side, zeros_in_range):
    """One (layer, K/V) matrix x (tokens x elements), float64. per_token:
    the outer and middle ranges per token instead of over the whole call;
    keep_side: a code is moved one step when its value lies on the other
    side of zero than the element (kvforge's rule, spec §2.7), and the side
    is then read from the decoded value; zeros_in_range: min and max taken
    over the masked matrix, zeros of other groups included, as the reference
    does."""
    lo_o, lo_i, hi_i, hi_o = th
    outer = (x <= lo_o) | (x >= hi_o)
    middle = ((lo_o < x) & (x <= lo_i)) | ((hi_i <= x) & (x < hi_o))
    inner = ~outer & ~middle
    y = np.zeros_like(x)
    axis = 1 if per_token else None

    def rng(v, mask, axis):
        if zeros_in_range:
            v = np.where(mask, v, 0.0)
            return v.min(axis=axis, keepdims=True), v.max(axis=axis, keepdims=True)
        big = np.where(mask, v, np.inf).min(axis=axis, keepdims=True)
        small = np.where(mask, v, -np.inf).max(axis=axis, keepdims=True)
        # an empty group: any finite range; nothing is coded with it
        big = np.where(np.isfinite(big), big, 0.0)
        small = np.where(np.isfinite(small), small, 0.0)
        return big, small

    # inner group: per token in every variant, not shifted
    lo, hi = rng(x, inner, 1)
    _, dq = grid(x, obits, lo, hi)
    y = np.where(inner, dq, y)
    for mask, t_lo, t_hi, bits in ((outer, lo_o, hi_o, obits), (middle, lo_i, hi_i, ibits)):
        up = mask & (x > 0)
        v = np.where(up, x - t_hi, x - t_lo)
        lo, hi = rng(v, mask, axis)
        q, dq = grid(v, bits, lo, hi)
        if keep_side:
            step = (hi - lo) / (2**bits - 1)
            wrong_up = up & (dq < 0)
            wrong_lo = mask & ~up & (dq >= 0)
            q = q + wrong_up - wrong_lo
            dq = np.where(np.isfinite(step), lo + q * step, lo)
            side_up = dq >= 0
        else:
            side_up = up
        y = np.where(mask, dq + np.where(side_up, t_hi, t_lo), y)
    return y


VARIANTS = [
    ("authors' reference as published: outer and middle ranges over the whole call (here the passage), "
     "side from the sign of x", dict(per_token=False, keep_side=False, zeros_in_range=True)),
    ("per-token ranges, side from the sign of x", dict(per_token=True, keep_side=False, zeros_in_range=True)),
    ("per-token ranges over the group's own elements, side from the sign of x",
     dict(per_token=True, keep_side=False, zeros_in_range=False)),
    ("per-token ranges over the group's own elements, side kept by the code (kvforge `paper`, "
     "in double precision)", dict(per_token=True, keep_side=True, zeros_in_range=False)),
]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--input", required=True)
    ap.add_argument("--thresholds", required=True)
    ap.add_argument("--inlier-bits", type=int, default=4)
    ap.add_argument("--md")
    a = ap.parse_args()
    try:
        kv = np.load(a.input, mmap_mode="r")
        with open(a.thresholds) as f:
            th = json.load(f)
    except (OSError, ValueError) as e:
        die(f"cannot read input: {e}")
    if kv.ndim != 5 or kv.shape[2] != 2:
        die(f"{a.input}: expected (runs, layers, 2, tokens, dim), got {kv.shape}")
    sets = {(e["layer"], e["kv"]): e["values"] for e in th["entries"]}
    runs, layers = kv.shape[0], kv.shape[1]
    if th["layers"] < layers:
        die(f"thresholds cover {th['layers']} layers, the input has {layers}")
    ib = a.inlier_bits
    rows = []
    for name, kw in VARIANTS:
        sig, noise = [0.0, 0.0], [0.0, 0.0]
        for r in range(runs):
            for layer in range(layers):
                for k, tag in enumerate("kv"):
                    x = np.asarray(kv[r, layer, k], dtype=np.float64)
                    y = reference(x, sets[(layer, tag)], ib + 1, ib, **kw)
                    sig[k] += float((x * x).sum())
                    noise[k] += float(((y - x) ** 2).sum())
        db = lambda s, n: 10 * np.log10(s / n)
        rows.append((name, db(sum(sig), sum(noise)), db(sig[0], noise[0]), db(sig[1], noise[1])))
    out = [f"Oaken authors' reference and its variants on `{a.input}` (thresholds `{a.thresholds}`, "
           f"inlier {ib} bits, outlier {ib + 1} bits); SQNR in dB.", "",
           "| variant | SQNR | K | V |", "|---|---|---|---|"]
    out += [f"| {n} | {s:.2f} | {k:.2f} | {v:.2f} |" for n, s, k, v in rows]
    text = "\n".join(out) + "\n"
    print(text, end="")
    if a.md:
        with open(a.md, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
