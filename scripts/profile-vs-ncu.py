#!/usr/bin/env python3
"""gemmlab's in-process counters against Nsight Compute's, for one kernel configuration.

    scripts/profile-vs-ncu.py GEMMLAB OUT.json --kernel K --param P --size S [--metrics SETS]

Runs `gemmlab profile` (CUPTI range profiler, in-process) and then `ncu` on `gemmlab bench` of
the same configuration, asking ncu for exactly the raw counters gemmlab read, and writes each
counter's two values and their relative difference. ncu runs with --clock-control none, as
gemmlab does (it never locks clocks), so throughput and time counters may differ by run-to-run
variation; instruction, request, sector and byte counts should agree exactly. DRAM writes are kept
apart ("writeback"): gemmlab's include the end-of-range L2 write-back, ncu's do not."""
import argparse
import csv
import io
import json
import subprocess
import sys
import tempfile

# DRAM writes: CUPTI's range includes the end-of-range L2 write-back, ncu's does not (perf-log 13).
WRITEBACK = ("dram__bytes_write",)
# Counters whose values depend on clocks and timing rather than on the work done.
TIMING = ("gpu__time_duration", "pct_of_peak", "per_second", "sm__warps_active", "stalled", "issue_active",
          "cycles_active", "hit_rate")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gemmlab")
    ap.add_argument("out")
    ap.add_argument("--kernel", required=True)
    ap.add_argument("--param", default="")
    ap.add_argument("--size", required=True)
    ap.add_argument("--metrics", default="memory,compute,seed000")
    ap.add_argument("--ncu", default="ncu")
    a = ap.parse_args()
    with tempfile.NamedTemporaryFile(suffix=".json") as tmp:
        cmd = [a.gemmlab, "profile", "--kernel", a.kernel, "--size", a.size, "--baseline", "none", "--metrics",
               a.metrics, "--json", tmp.name] + (["--param", a.param] if a.param else [])
        subprocess.run(cmd, check=True)
        ours = json.load(open(tmp.name))
    if "ours" not in ours:
        sys.exit("gemmlab read no counters: " + ours.get("counters_unavailable", "?"))
    raw = ours["ours"]["raw"]
    entry = ours["ours"]["kernel"]
    bench = [a.gemmlab, "bench", "--kernel", a.kernel, "--size", a.size, "--min-samples", "1", "--max-time", "0.01"] + \
            (["--param", a.param] if a.param else [])
    ncu = [a.ncu, "--clock-control", "none", "--metrics", ",".join(sorted(raw)), "-k", "regex:^" + entry + "$", "-c",
           "1", "--csv", "--print-units", "base"] + bench
    res = subprocess.run(ncu, capture_output=True, text=True)
    if res.returncode != 0:
        sys.exit("ncu failed:\n" + res.stdout[-2000:] + res.stderr[-2000:])
    lines = [l for l in res.stdout.splitlines() if l.startswith('"')]
    theirs = {}
    for row in csv.DictReader(io.StringIO("\n".join(lines))):
        try:
            theirs[row["Metric Name"]] = float(row["Metric Value"].replace(",", ""))
        except (KeyError, ValueError):
            pass
    if not theirs:
        sys.exit("ncu reported no values for %s:\n%s" % (entry, res.stdout[-2000:]))
    rows, worst_count, worst_timing = [], 0.0, 0.0
    for name in sorted(raw):
        g, n = raw[name], theirs.get(name)
        diff = None if n is None else (0.0 if g == n else abs(g - n) / max(abs(n), 1e-30))
        kind = "timing" if any(t in name for t in TIMING) else "count"
        if any(w in name for w in WRITEBACK):
            kind = "writeback"
        if diff is not None:
            if kind == "count":
                worst_count = max(worst_count, diff)
            elif kind == "timing":
                worst_timing = max(worst_timing, diff)
        rows.append({"counter": name, "kind": kind, "gemmlab": g, "ncu": n, "rel_diff": diff})
    ver = subprocess.run([a.ncu, "--version"], capture_output=True, text=True).stdout.strip().splitlines()
    out = {"metadata": ours["metadata"], "kernel": ours["kernel"], "function": entry, "problem": ours["problem"],
           "ncu": {"version": ver[-1] if ver else "?", "command": " ".join(ncu)},
           "gemmlab_collection_s": ours["ours"]["collection_s"], "gemmlab_command_s": ours.get("seconds"),
           "max_rel_diff_counts": worst_count, "max_rel_diff_timing": worst_timing, "counters": rows}
    with open(a.out, "w") as f:
        json.dump(out, f, indent=1)
    print("%s: %d counters; largest difference %.4f%% (counts), %.2f%% (timing-dependent) -> %s" %
          (a.kernel, len(rows), 100 * worst_count, 100 * worst_timing, a.out))


if __name__ == "__main__":
    main()
