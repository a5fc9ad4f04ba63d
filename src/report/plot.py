#!/usr/bin/env python3
"""gemmlab's plots and report page, drawn from saved results (no GPU needed).

    plot.py --out DIR [--title TITLE] RESULTS.json...

Each results file is what `gemmlab bench --json` or `gemmlab sweep` wrote. A sweep's file carries
its experiment, whose "plots" list says what to draw; a file without one gets the default plots of
its content. Writes DIR/<name>-<plot>.png and DIR/README.md (tables and the plots)."""
import argparse
import json
import math
import os
import re
import sys
from collections import OrderedDict, defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def fail(msg):
    print("gemmlab plot: " + msg, file=sys.stderr)
    sys.exit(2)


def load(path):
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        fail("%s: %s" % (path, e))
    if not isinstance(data, dict) or "results" not in data or "metadata" not in data:
        fail("%s is not a gemmlab results file (no metadata and results)" % path)
    return data


def params_of(r):
    return (r.get("details") or {}).get("params", "") or ""


def label_of(r):
    d = r.get("details") or {}
    label = d.get("label") or r["kernel"]
    return label


def series_name(r, rows):
    """The label, or when one label has several configurations at the same problem, the label and
    the parameters that differ (a tuned kernel whose configuration changes with size is one line)."""
    label = label_of(r)
    same = [x for x in rows if label_of(x) == label]
    per_problem = defaultdict(set)
    for x in same:
        per_problem[size_of(x)].add(params_of(x))
    if max(len(v) for v in per_problem.values()) <= 1 or not params_of(r):
        return label
    configs = [param_dict(x) for x in same if params_of(x)]
    mine = param_dict(r)
    differ = [k for k in mine if any(c.get(k) != mine[k] for c in configs)]
    return label + " " + ",".join("%s=%s" % (k, mine[k]) for k in differ)


def param_dict(r):
    out = {}
    for part in params_of(r).split(","):
        if "=" in part:
            k, v = part.split("=", 1)
            out[k.strip()] = v.strip()
    return out


def size_of(r):
    if r.get("op") == "gemv":
        return "%dx%d %s%s" % (r["m"], r["k"], r["layout"], "T" if r["trans_a"] == "t" else "")
    if r["m"] == r["n"] == r["k"]:
        return str(r["m"])
    return "%dx%dx%d" % (r["m"], r["n"], r["k"])


def product(v):
    p = 1
    for x in re.findall(r"\d+", v):
        p *= int(x)
    return p


def ok(rows):
    return [r for r in rows if r.get("status") == "ok" and r.get("median_ms", 0) > 0]


def metric_label(y):
    return {"gflops": "GFLOP/s", "gbps": "GB/s", "x_cublas": "x cuBLAS (time ratio)", "pct_peak": "% of peak",
            "median_ms": "ms"}.get(y, y)


def x_value(r, x):
    if x in ("n", "m", "k"):
        return r[x]
    if x == "size":
        return max(r["m"], r["n"], r["k"])
    return r.get(x)


def plot_line(rows, spec, path, title):
    x, y = spec.get("x", "n"), spec.get("y", "gflops")
    series = OrderedDict()
    for r in ok(rows):
        # A ratio to cuBLAS SGEMM is of FP32 kernels: TF32 is another precision (in the tables).
        if y == "x_cublas" and (r["kernel"] == "cublas" or r.get("precision") == "tf32"):
            continue
        series.setdefault(series_name(r, rows), []).append((x_value(r, x), r.get(y, 0)))
    if not series:
        return False
    fig, ax = plt.subplots(figsize=(10, 5.5))
    xs = sorted({p[0] for pts in series.values() for p in pts})
    # Few sizes (2^k - 1, 2^k, 2^k + 1 side by side) are drawn evenly spaced and labelled, so that
    # the saw-tooth shows; many sizes (a range) on a linear axis.
    categorical = len(xs) <= 24
    position = {v: i for i, v in enumerate(xs)}
    dense = max(len(v) for v in series.values()) > 30
    colors = plt.get_cmap("tab20").colors
    for i, (name, pts) in enumerate(series.items()):
        pts.sort()
        px = [position[p[0]] if categorical else p[0] for p in pts]
        ax.plot(px, [p[1] for p in pts], ["-", "--", ":"][i // 10 % 3] + ("" if dense else "o"),
                color=colors[i * 2 % 20 + i // 10 % 2], label=name, markersize=3, linewidth=1.2)
    if categorical:
        ax.set_xticks(range(len(xs)))
        ax.set_xticklabels([str(v) for v in xs], rotation=45 if len(xs) > 10 else 0)
    if y == "x_cublas":
        ax.axhline(1.0, color="black", linewidth=0.8, linestyle="--")
    ax.set_xlabel(spec.get("xlabel", x))
    ax.set_ylabel(metric_label(y))
    ax.set_title(spec.get("title", title))
    if spec.get("logy"):
        ax.set_yscale("log")
    ax.grid(True, alpha=0.3, which="both")
    ax.legend(fontsize=7, ncol=2 if len(series) > 6 else 1)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def plot_heatmap(rows, spec, path, title):
    x, y, value = spec.get("x", "vpt"), spec.get("y", "block"), spec.get("value", "gflops")
    cells = {}
    for r in ok(rows):
        if r["kernel"] in ("cublas", "cublas-tf32", "openblas") or r["kernel"].startswith("gemmlab"):
            continue
        p = param_dict(r)
        if x not in p or y not in p:
            continue
        key = (p[x], p[y])
        v = r.get(value, (r.get("details") or {}).get(value, 0))
        cells[key] = max(cells.get(key, 0), v)
    if not cells:
        return False
    xs = sorted({k[0] for k in cells}, key=lambda v: (product(v), v))
    ys = sorted({k[1] for k in cells}, key=lambda v: (product(v), v))
    grid = [[cells.get((xv, yv), float("nan")) for xv in xs] for yv in ys]
    fig, ax = plt.subplots(figsize=(1.1 * len(xs) + 3, 0.6 * len(ys) + 2.5))
    im = ax.imshow(grid, cmap="viridis", aspect="auto", origin="lower")
    ax.set_xticks(range(len(xs)))
    ax.set_xticklabels(["%s (%d)" % (v, product(v)) for v in xs], rotation=45, ha="right", fontsize=8)
    ax.set_yticks(range(len(ys)))
    ax.set_yticklabels(["%s (%d)" % (v, product(v)) for v in ys], fontsize=8)
    ax.set_xlabel(spec.get("xlabel", x))
    ax.set_ylabel(spec.get("ylabel", y))
    finite = [v for row in grid for v in row if not math.isnan(v)]
    top = max(finite) if finite else 1
    for i, row in enumerate(grid):
        for j, v in enumerate(row):
            ax.text(j, i, "-" if math.isnan(v) else ("%.0f" % v if top > 10 else "%.2f" % v), ha="center", va="center", fontsize=7,
                    color="white" if not math.isnan(v) and v < 0.6 * top else "black")
    fig.colorbar(im, ax=ax, label=metric_label(value))
    ax.set_title(spec.get("title", title))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def layout_code(r):
    """C's storage order, then op(A) and op(B): RNN, CTN, ..."""
    return ("R" if r["layout"] == "row" else "C") + r["trans_a"].upper() + r["trans_b"].upper()


def plot_bar(rows, spec, path, title, ceilings):
    """Groups of bars, one group per problem (its size, and its layout where the rows have several),
    one bar per label (its best configuration)."""
    y = spec.get("y", "gflops")
    good = ok(rows)
    if not good:
        return False
    several_layouts = len({layout_code(r) for r in good if r.get("op") != "gemv"}) > 1

    def group(r):
        return size_of(r) + (" " + layout_code(r) if several_layouts and r.get("op") != "gemv" else "")

    best = OrderedDict()
    for r in good:
        key = (group(r), label_of(r))
        if key not in best or r.get(y, 0) > best[key].get(y, 0):
            best[key] = r
    sizes = list(OrderedDict.fromkeys(k[0] for k in best))
    names = list(OrderedDict.fromkeys(k[1] for k in best))
    fig, ax = plt.subplots(figsize=(min(24, max(8, 0.35 * len(names) * len(sizes) + 3)), 5.5))
    width = 0.8 / max(1, len(names))
    colors = plt.get_cmap("tab20").colors
    for ni, n in enumerate(names):
        xs = [si + ni * width for si in range(len(sizes))]
        vals = [best[(s, n)].get(y, 0) if (s, n) in best else 0 for s in sizes]
        bars = ax.bar(xs, vals, width, label=n, color=colors[ni * 2 % 20 + ni // 10 % 2])
        for b, v in zip(bars, vals):
            if v:
                ax.text(b.get_x() + b.get_width() / 2, b.get_height(), ("%.2f" if y == "x_cublas" else "%.0f") % v,
                        ha="center", va="bottom", fontsize=6, rotation=90)
    ax.set_xticks([si + width * (len(names) - 1) / 2 for si in range(len(sizes))])
    ax.set_xticklabels(sizes, rotation=20, ha="right", fontsize=8)
    ceiling = spec.get("ceiling")
    if ceiling == "copy" and ceilings.get("copy_gbps"):
        ax.axhline(ceilings["copy_gbps"], color="red", linestyle="--", label="measured copy %.0f GB/s" % ceilings["copy_gbps"])
    if ceiling == "ffma" and ceilings.get("ffma_tflops"):
        ax.axhline(ceilings["ffma_tflops"] * 1e3, color="red", linestyle="--",
                   label="measured FFMA %.1f TFLOP/s" % ceilings["ffma_tflops"])
    if spec.get("logy"):
        ax.set_yscale("log")
    ax.set_ylabel(metric_label(y))
    ax.set_title(spec.get("title", title))
    ax.legend(fontsize=7, ncol=2 if len(names) > 8 else 1)
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


# The levels of the hierarchical roofline: the counters that give their bytes, and the ceiling.
ROOF_LEVELS = [
    ("DRAM", ("dram_read_bytes", "dram_write_bytes"), "copy_gbps", "o"),
    ("L2", ("l2_bytes",), "l2_gbps", "s"),
    ("L1", ("l1_bytes",), None, "^"),
    ("shared", ("shared_bytes",), "smem_gbps", "D"),
]


def plot_roofline(rows, path, title, ceilings):
    """Each kernel at its achieved GFLOP/s, once per memory level at that level's intensity
    (useful FLOPs / bytes the counters saw there), under the measured ceilings."""
    pts = []
    for r in rows:
        m = ((r.get("details") or {}).get("counters") or {}).get("metrics") or {}
        if r.get("status") != "ok" or not m or not r.get("gflops"):
            continue
        flops = r["gflops"] * 1e9 * r["median_ms"] * 1e-3
        for level, keys, _, marker in ROOF_LEVELS:
            if all(isinstance(m.get(k), (int, float)) for k in keys):
                b = sum(m[k] for k in keys)
                if b > 0:
                    pts.append((label_of(r) + " " + size_of(r), level, flops / b, r["gflops"], marker))
    if not pts:
        return False
    fig, ax = plt.subplots(figsize=(9, 6))
    xs = [p[2] for p in pts]
    lo, hi = min(xs) / 4, max(xs) * 4
    peak = ceilings.get("ffma_tflops", 0) * 1e3
    grid = [lo * (hi / lo) ** (i / 200.0) for i in range(201)]
    for level, _, key, _ in ROOF_LEVELS:
        bw = ceilings.get(key or "", 0)
        if bw:
            ys = [min(peak, bw * x) if peak else bw * x for x in grid]
            ax.plot(grid, ys, linestyle="--", linewidth=1, label="%s %.0f GB/s (measured)" % (level, bw))
    if peak:
        ax.axhline(peak, color="red", linewidth=1, label="FFMA %.1f TFLOP/s (measured)" % (peak / 1e3))
    colors = plt.get_cmap("tab10").colors
    names = list(OrderedDict.fromkeys(p[0] for p in pts))
    for name, level, x, y, marker in pts:
        ax.scatter([x], [y], marker=marker, color=colors[names.index(name) % 10], s=30, zorder=3)
    for i, n in enumerate(names):  # legend entries for the kernels
        ax.scatter([], [], color=colors[i % 10], marker="o", label=n)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP/byte at that level; o DRAM, s L2, ^ L1, D shared)")
    ax.set_ylabel("GFLOP/s")
    ax.set_title(title)
    ax.legend(fontsize=7)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def finish(fig, ax, path, title):
    """Title, grid and legend of a log-scaled plot, saved."""
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def problem_key(r):
    return (r["m"], r["n"], r["k"], r.get("layout"), r.get("trans_a"), r.get("trans_b"), r.get("alpha"), r.get("beta"))


def plot_accuracy(rows, spec, path, title):
    """Speed against error, each over cuBLAS SGEMM's on the same problem and inputs: one point per
    route and size, the tensor_fp32 contract (error no larger than cuBLAS's) as the line x = 1."""
    cublas = {problem_key(r): r for r in ok(rows) if r["kernel"] == "cublas" and r.get("max_abs_err", 0) > 0}
    series = OrderedDict()
    for r in ok(rows):
        base = cublas.get(problem_key(r))
        if r["kernel"] == "cublas" or r.get("precision") == "tf32" or not base or "max_abs_err" not in r:
            continue
        # An exact result (error 0) sits at the axis' left end rather than off the log scale.
        err = max(r["max_abs_err"], 1e-3 * base["max_abs_err"]) / base["max_abs_err"]
        series.setdefault(series_name(r, rows), []).append((err, r["x_cublas"], size_of(r)))
    if not series:
        return False
    fig, ax = plt.subplots(figsize=(9, 5.5))
    markers = "osD^v<>ph*"
    for i, (name, pts) in enumerate(series.items()):
        ax.scatter([p[0] for p in pts], [p[1] for p in pts], marker=markers[i % len(markers)], s=36, label=name)
        for e, x, size in pts:
            ax.annotate(str(size), (e, x), textcoords="offset points", xytext=(4, 3), fontsize=7)
    ax.axvline(1.0, color="black", linewidth=1.0, linestyle="--",
               label="contract: cuBLAS SGEMM's error on the same inputs")
    ax.axhline(1.0, color="gray", linewidth=0.8, linestyle=":")
    ax.scatter([1.0], [1.0], marker="x", color="black", s=50, label="cuBLAS SGEMM")
    ax.set_xscale("log")
    ax.set_xlabel("max |C - C64| / (|A||B|)_ij, over cuBLAS SGEMM's (left of the line: the contract holds)")
    ax.set_ylabel("speed, x cuBLAS SGEMM (time ratio, same run)")
    return finish(fig, ax, path, spec.get("title", title))


def corpus_rows(rows):
    """Records of a corpus run (details.shape), by kernel other than cuBLAS, verified and timed."""
    by = OrderedDict()
    for r in rows:
        d = r.get("details") or {}
        if "shape" in d and r["kernel"] != "cublas" and r.get("status") == "ok" and r.get("x_cublas", 0) > 0:
            by.setdefault(r["kernel"], []).append(r)
    return by


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else 0.0


def plot_corpus(rows, path, title):
    """x cuBLAS per corpus shape, each kernel's shapes sorted by it: one line a kernel."""
    by = corpus_rows(rows)
    if not by:
        return False
    fig, ax = plt.subplots(figsize=(9, 4.8))
    for kernel, rs in by.items():
        xs = sorted(r["x_cublas"] for r in rs)
        ax.plot(range(1, len(xs) + 1), xs, marker=".", linewidth=1,
                label="%s (geomean %.2f)" % (label_of(rs[0]), geomean(xs)))
    ax.axhline(1.0, color="black", linewidth=0.8, linestyle="--")
    ax.set_yscale("log")
    ax.set_xlabel("corpus shapes, sorted by the ratio (each line on its own)")
    ax.set_ylabel("x cuBLAS SGEMM (time ratio, same run)")
    return finish(fig, ax, path, title)


def corpus_table(rows):
    """Per kernel: geometric mean, worst shapes; then every shape."""
    by = corpus_rows(rows)
    lines = ["| kernel | shapes | geomean x cuBLAS | min | shapes under 0.8 | under 1.0 | worst |",
             "|---|---|---|---|---|---|---|"]
    for kernel, rs in by.items():
        xs = [r["x_cublas"] for r in rs]
        worst = sorted(rs, key=lambda r: r["x_cublas"])[:3]
        lines.append("| %s | %d | %.3f | %.3f | %d | %d | %s |" % (
            label_of(rs[0]), len(rs), geomean(xs), min(xs), sum(x < 0.8 for x in xs), sum(x < 1.0 for x in xs),
            ", ".join("%s %.2f" % (r["details"]["shape"], r["x_cublas"]) for r in worst)))
    kernels = list(by)
    cell = {(r["details"]["shape"], k): r for k, rs in by.items() for r in rs}
    shapes = list(OrderedDict.fromkeys(r["details"]["shape"] for rs in by.values() for r in rs))
    cub = {(r.get("details") or {}).get("shape"): r for r in rows if r["kernel"] == "cublas"}
    lines += ["", "x cuBLAS per shape (cuBLAS SGEMM's time in µs; the configuration each mode ran is in the "
              "results file)", "", "| shape | M x N x K | cuBLAS µs | " + " | ".join(kernels) + " |",
              "|---" * (len(kernels) + 3) + "|"]
    for s in shapes:
        c = cub.get(s)
        any_r = next(cell[(s, k)] for k in kernels if (s, k) in cell)
        lines.append("| %s | %s %s %s%s | %s | %s |" % (
            s, size_of(any_r), any_r["layout"], any_r["trans_a"].upper(), any_r["trans_b"].upper(),
            "%.1f" % (c["median_ms"] * 1000) if c and c.get("status") == "ok" else "",
            " | ".join("%.2f" % cell[(s, k)]["x_cublas"] if (s, k) in cell else "" for k in kernels)))
    return "\n".join(lines) + "\n"


def default_plots(rows):
    if corpus_rows(rows):
        return [{"kind": "corpus", "name": "corpus", "title": "the library over the shape corpus, x cuBLAS SGEMM"}]
    gemm = [r for r in rows if r.get("op", "gemm") == "gemm"]
    gemv = [r for r in rows if r.get("op") == "gemv"]
    plots = []
    if gemm:
        if len({size_of(r) for r in gemm}) > 1:
            plots.append({"kind": "line", "name": "gflops", "x": "n", "y": "gflops", "title": "GFLOP/s against N"})
            plots.append({"kind": "line", "name": "x-cublas", "x": "n", "y": "x_cublas", "title": "time ratio to cuBLAS"})
        else:
            plots.append({"kind": "bar", "name": "gflops", "y": "gflops", "title": "GFLOP/s", "ceiling": "ffma"})
    if gemv:
        plots.append({"kind": "bar", "name": "gemv-bandwidth", "y": "gbps", "ceiling": "copy",
                      "title": "GEMV bandwidth against the measured copy ceiling"})
    return plots


def fmt(v, digits=1):
    if isinstance(v, float):
        return ("%." + str(digits) + "f") % v
    return str(v)


def not_applicable(r):
    """A point the kernel does not take (a layout or size it does not support, parameters outside its
    constraints): shown as "-", not a failure."""
    return r.get("status", "").startswith(("unsupported", "invalid"))


def status_notes(rows):
    """Markdown lines under a table: each real failure in full, then how many points did not apply."""
    md = []
    fails = [r for r in rows if r.get("status") != "ok" and not not_applicable(r)]
    if fails:
        md += ["**%d run(s) failed:**" % len(fails), ""]
        md += ["- %s %s %s: %s" % (label_of(r), params_of(r), size_of(r), r.get("status", "")) for r in fails]
        md += [""]
    skipped = [r for r in rows if not_applicable(r)]
    if skipped:
        md += ["%d point(s) do not apply (\"-\" in a table by size, the rule in a flat one): a layout or size the "
               "kernel does not take, or parameters outside its constraints." % len(skipped), ""]
    return md


def table(rows, gemv):
    """Markdown rows: a pivot (sizes x kernels) when there are many sizes and few kernels, else flat."""
    metric = "gbps" if gemv else "gflops"
    unit = "GB/s" if gemv else "GFLOP/s"
    sizes = list(OrderedDict.fromkeys(size_of(r) for r in rows))
    names = list(OrderedDict.fromkeys(series_name(r, rows) for r in rows))
    lines = []
    if len(sizes) > 1 and len(names) <= 10:
        lines.append("%s by size; x cuBLAS in brackets (cuBLAS time / this time, same run)\n" % unit)
        lines.append("| size | " + " | ".join(names) + " |")
        lines.append("|---" * (len(names) + 1) + "|")
        cell = {(size_of(r), series_name(r, rows)): r for r in rows}
        for s in sizes:
            out = []
            for n in names:
                r = cell.get((s, n))
                if r is None:
                    out.append("")
                elif not_applicable(r):
                    out.append("-")
                elif r.get("status") != "ok":
                    out.append("**%s**" % r.get("status", "").split(":")[0])
                else:
                    out.append("%.0f (%.2f)" % (r[metric], r.get("x_cublas", 0)))
            lines.append("| %s | %s |" % (s, " | ".join(out)))
        return "\n".join(lines) + "\n"
    ranked = sorted(rows, key=lambda r: (r.get("status") != "ok", -r.get(metric, 0)))
    shown = ranked[:40]
    lines.append("| kernel | configuration | size | ms | %s | %% peak | x cuBLAS | status |" % unit)
    lines.append("|---|---|---|---|---|---|---|---|")
    for r in shown:
        good = r.get("status") == "ok"
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            label_of(r), params_of(r), size_of(r), fmt(r.get("median_ms", 0), 4) if good else "",
            fmt(r.get(metric, 0)) if good else "", fmt(r.get("pct_peak", 0)) if good else "",
            fmt(r.get("x_cublas", 0), 3) if good else "", r.get("status", "")))
    if len(ranked) > len(shown):
        lines.append("\n(%d more rows in the results file)" % (len(ranked) - len(shown)))
    return "\n".join(lines) + "\n"


def describe_run(meta):
    gpu = meta.get("gpu", {})
    c = meta.get("ceilings", {})
    sw = meta.get("software", {})
    return ("%s (%s SMs, cc %s); measured FFMA %.1f TFLOP/s, copy %.0f GB/s; CUDA %s, cuBLAS %s; gemmlab %s, %s" % (
        gpu.get("name", "?"), gpu.get("sms", "?"), gpu.get("compute_capability", "?"), c.get("ffma_tflops", 0),
        c.get("copy_gbps", 0), sw.get("runtime_cuda", "?"), sw.get("cublas", "?"), meta.get("gemmlab_commit", "?"),
        meta.get("date", "?")))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--title", default="gemmlab results")
    ap.add_argument("--intro", default="", help="a markdown file to put after the title")
    ap.add_argument("--roofline", action="store_true", help="draw the hierarchical roofline of records with counters")
    ap.add_argument("results", nargs="+")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    md = ["# " + a.title, ""]
    if a.intro:
        with open(a.intro) as f:
            md += [f.read(), ""]
    drawn = 0
    for path in a.results:
        data = load(path)
        meta, rows = data["metadata"], data["results"]
        exp = meta.get("experiment") or {}
        name = exp.get("name") or os.path.splitext(os.path.basename(path))[0]
        if name == "results":
            name = os.path.basename(os.path.dirname(os.path.abspath(path)))
        md += ["## " + exp.get("title", name), ""]
        if exp.get("description"):
            md += [exp["description"], ""]
        md += ["Run: " + describe_run(meta) + ". Source: `%s`." % os.path.relpath(path, a.out), ""]
        if not rows:
            md += ["(no results)", ""]
            continue
        if a.roofline:
            png = "%s-roofline.png" % name
            if plot_roofline(rows, os.path.join(a.out, png), "roofline: " + name, meta.get("ceilings", {})):
                md += ["![roofline](%s)" % png, ""]
                drawn += 1
            else:
                md += ["(no records with counters: run bench --metrics roofline)", ""]
            continue
        for spec in exp.get("plots") or default_plots(rows):
            kind = spec.get("kind", "line")
            subset = rows
            if "op" in spec:
                subset = [r for r in rows if r.get("op", "gemm") == spec["op"]]
            png = "%s-%s.png" % (name, spec.get("name", kind))
            out = os.path.join(a.out, png)
            title = spec.get("title", name)
            if kind == "line":
                made = plot_line(subset, spec, out, title)
            elif kind == "heatmap":
                made = plot_heatmap(subset, spec, out, title)
            elif kind == "bar":
                made = plot_bar(subset, spec, out, title, meta.get("ceilings", {}))
            elif kind == "corpus":
                made = plot_corpus(subset, out, title)
            elif kind == "accuracy":
                made = plot_accuracy(subset, spec, out, title)
            else:
                fail("%s: unknown plot kind '%s' (line, heatmap, bar, corpus, accuracy)" % (path, kind))
            if made:
                md += ["![%s](%s)" % (title, png), ""]
                drawn += 1
        if corpus_rows(rows):
            md += [corpus_table(rows), ""]
        else:
            for op in ("gemm", "gemv"):
                part = [r for r in rows if r.get("op", "gemm") == op]
                if part:
                    md += [table(part, op == "gemv"), ""]
        md += status_notes(rows)
    with open(os.path.join(a.out, "README.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    print("gemmlab plot: %d plots and README.md in %s" % (drawn, a.out))


if __name__ == "__main__":
    main()
