#!/usr/bin/env python3
"""Summarise `gemmlab bench --candidates` results (scripts/gpu-model candidates): per shape, the
library's choice, the fastest measured candidate and the model's predictions beside the times;
then the geometric means of the ratios to cuBLAS SGEMM (library, best candidate) and how far the
model's prediction falls from the measured time, per family.
Usage: candidates-summary.py RESULTS.json [--all]"""
import json
import math
import sys
from collections import defaultdict


def main(path, show_all):
    records = json.load(open(path))["results"]
    shapes = defaultdict(list)
    for r in records:
        shapes[r["details"].get("shape", f"{r['m']}x{r['n']}x{r['k']}")].append(r)
    lib_x, best_x, misses = [], [], defaultdict(list)
    print(f"{'shape':28s} {'cublas_us':>9s} {'lib_x':>6s} {'best_x':>6s}  best candidate (pred / meas us)")
    for name, rs in shapes.items():
        cublas = next(r for r in rs if r["kernel"] == "cublas")
        lib = next((r for r in rs if r["kernel"].startswith("gemmlab")), None)
        cands = [r for r in rs if "candidate" in r["details"] and r["status"] == "ok"]
        if not cands or lib is None:
            continue
        for c in cands:
            misses[c["kernel"]].append(c["median_ms"] * 1e3 - c["details"]["predicted_us"])
        best = min(cands, key=lambda r: r["median_ms"])
        lib_x.append(lib["x_cublas"])
        best_x.append(max(best["x_cublas"], lib["x_cublas"]))
        gain = best["x_cublas"] / lib["x_cublas"]
        if show_all or gain > 1.05:
            print(f"{name:28s} {cublas['median_ms'] * 1e3:9.1f} {lib['x_cublas']:6.2f} {best['x_cublas']:6.2f}  "
                  f"#{best['details']['candidate']} {best['kernel']} {best['details']['params'][:90]} "
                  f"({best['details']['predicted_us']:.1f} / {best['median_ms'] * 1e3:.1f})")
            if show_all:
                for c in sorted(cands, key=lambda r: r["details"]["candidate"]):
                    print(f"{'':30s}#{c['details']['candidate']} {c['kernel']:11s} {c['details']['params'][:80]:80s} "
                          f"pred {c['details']['predicted_us']:8.1f} meas {c['median_ms'] * 1e3:8.1f}")
    g = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs))
    print(f"\n{len(lib_x)} shapes: library {g(lib_x):.3f}x cuBLAS SGEMM, best candidate per shape {g(best_x):.3f}x")
    for fam, m in sorted(misses.items()):
        m.sort()
        print(f"measured - predicted, {fam}: median {m[len(m) // 2]:.1f} us over {len(m)} runs "
              f"(quartiles {m[len(m) // 4]:.1f} .. {m[3 * len(m) // 4]:.1f})")


if __name__ == "__main__":
    main(sys.argv[1], "--all" in sys.argv[2:])
