#!/usr/bin/env python3
"""Refit the library's ozaki time model (src/library/dispatch.cpp, ozaki_time) on a tensor_fp32
corpus run: the K tile's and the modulus's cost, a reduced CRT step's extra, and the pre-passes'
bandwidth shares for a K-contiguous and a strided operand, by relative least squares on a grid over the unpeeled ozaki
calls whose median SM clock stayed above --min-mhz (the power-limited ones run slower than any
per-cycle model). Prints the fit, its error beside the current constants' (read from dispatch.cpp),
and each call. --fix-shares keeps the current pre-pass shares (a kernel change that left the passes
alone) and fits the product's two constants only.
Usage: fit-ozaki-model.py CORPUS.json[.gz] [--dram-gbps 4330] [--sms 132] [--min-mhz 1900] [--fix-shares]"""
import argparse
import gzip
import itertools
import json
import math
import pathlib
import re

DISPATCH = pathlib.Path(__file__).resolve().parent.parent / "src" / "library" / "dispatch.cpp"


def ceil_div(a, b):
    return -(-a // b)


def target(k, m, n):  # ozaki::target
    whole_chain = m * n >= 1 << 22 and m >= 128 and n >= 128
    return 2.0 ** -22 if whole_chain and 64 <= k <= 65536 else 2.0 ** -22 * max(k, 1) ** -0.25


def crt_reduces(moduli, k, m, n, spread=1.89):  # ozaki::crt_reduces with kNormalSpread
    return moduli * k * spread * spread * 2.0 ** -46 > target(k, m, n) / 16


def calls(path):
    records = json.load(gzip.open(path) if path.endswith(".gz") else open(path))["results"]
    for r in records:
        d = r["details"]
        if r["kernel"] == "cublas" or not d.get("params", "").startswith("ozaki") or "peeled" in d["why"]:
            continue
        row = r["layout"] == "row"
        moduli = int(re.search(r"\((\d+) moduli", d["why"]).group(1))
        yield dict(shape=d["shape"], m=r["m"], n=r["n"], k=r["k"], beta=r["beta"], mhz=r["median_sm_mhz"],
                   moduli=moduli, reduces=crt_reduces(moduli, r["k"], r["m"], r["n"]), us=r["median_ms"] * 1e3,
                   a_kcontig=(r["trans_a"] == "n") == row, b_kcontig=(r["trans_b"] == "t") == row)


def model(c, ktile, modulus, kcontig_share, strided_share, reduce, bw, sms):
    kp = ceil_div(c["k"], 128) * 128
    rounds = ceil_div(ceil_div(c["m"], 128) * ceil_div(c["n"], 128), sms)
    t_gemm = rounds * c["moduli"] * (kp / 128 * ktile + modulus + (reduce if c["reduces"] else 0)) * 1e-6
    t_pre = sum((8.0 * rows * c["k"] + c["moduli"] * rows * kp) / ((kcontig_share if kc else strided_share) * bw)
                for rows, kc in ((c["m"], c["a_kcontig"]), (c["n"], c["b_kcontig"])))
    t_store = 4.0 * c["m"] * c["n"] * (2 if c["beta"] else 1) / (0.15 * bw)
    return (max(t_gemm, t_store) + t_pre) * 1e6 + 8


def current_constants():
    text = DISPATCH.read_text()
    names = ("kOzakiKtileUs", "kOzakiModulusUs", "kOzakiKContigShare", "kOzakiStridedShare", "kOzakiReduceUs")
    return tuple(float(re.search(name + r" = ([0-9.]+)", text).group(1)) for name in names)


def rms(cs, f):
    return math.sqrt(sum(math.log(f(c) / c["us"]) ** 2 for c in cs) / len(cs))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus")
    ap.add_argument("--dram-gbps", type=float, default=4814.304 * 3015 / 3352)  # GpuModel::h200()
    ap.add_argument("--sms", type=int, default=132)
    ap.add_argument("--min-mhz", type=float, default=1900)
    ap.add_argument("--fix-shares", action="store_true")
    a = ap.parse_args()
    current = current_constants()
    bw = a.dram_gbps * 1e9
    cs = list(calls(a.corpus))
    fit_on = [c for c in cs if c["mhz"] >= a.min_mhz]
    shares = ([current[2]], [current[3]]) if a.fix_shares else ([x / 20 for x in range(6, 21)],
                                                                 [x / 20 for x in range(3, 13)])
    grid = itertools.product([x / 1000 for x in range(250, 400, 5)], [x / 10 for x in range(0, 40, 1)], *shares,
                             [x / 10 for x in range(0, 21)])
    best = min(grid, key=lambda p: rms(fit_on, lambda c: model(c, *p, bw, a.sms)))
    for name, p in (("current", current), ("fit", best)):
        f = lambda c: model(c, *p, bw, a.sms)
        print(f"{name}: ktile {p[0]} us, modulus {p[1]} us, shares {p[2]} / {p[3]}, reduction {p[4]} us: "
              f"rms {rms(fit_on, f):.3f} on {len(fit_on)} calls over {a.min_mhz:.0f} MHz, {rms(cs, f):.3f} on all {len(cs)}")
    for c in sorted(cs, key=lambda c: c["us"]):
        print(f"  {c['shape']:26s} {'K' if c['a_kcontig'] else 's'}{'K' if c['b_kcontig'] else 's'} {c['moduli']:2d}"
              f"{'r' if c['reduces'] else ' '} {c['us']:9.1f} us "
              f"{c['mhz']:5.0f} MHz  model/measured: current {model(c, *current, bw, a.sms) / c['us']:.2f} "
              f"fit {model(c, *best, bw, a.sms) / c['us']:.2f}")


if __name__ == "__main__":
    main()
