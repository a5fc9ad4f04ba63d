#!/usr/bin/env python3
"""numpy.dot of float32 matrices with and without the BLAS drop-in preloaded.

    blas_numpy.py LIBGEMMLAB_BLAS N [--expect cpu|gpu] [--json FILE] [--reps R]

Runs the same product in two child processes (the second with LD_PRELOAD), checks that the
drop-in took the call (its log), that both results agree with a float64 reference on sampled
elements within the FP32 tolerance and with each other, and prints both times (median of R
after one warm-up). --expect gpu: the call must have run on the GPU (exit 77 without one).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time


def child(n, reps, out):
    import numpy as np
    rng = np.random.default_rng(7)
    a = rng.uniform(-1, 1, (n, n)).astype(np.float32)
    b = rng.uniform(-1, 1, (n, n)).astype(np.float32)
    c = np.dot(a, b)  # warm-up: the drop-in plans its GPU work on a shape's first call
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        c = np.dot(a, b)
        times.append(time.perf_counter() - t)
    np.save(out, c)
    # A small product stays below the threshold: the drop-in hands it to the BLAS numpy came with.
    small_a, small_b = a[:100, :90], b[:90, :80]
    small = np.dot(small_a, small_b)
    small_err = float(np.max(np.abs(small - small_a.astype(np.float64) @ small_b.astype(np.float64))))
    print(json.dumps({"seconds": sorted(times)[len(times) // 2], "numpy": np.__version__, "small_error": small_err}))


def gpu_present():
    import ctypes
    try:
        return ctypes.CDLL("libcuda.so.1").cuInit(0) == 0
    except OSError:
        return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("lib")
    ap.add_argument("n", type=int)
    ap.add_argument("--expect", choices=["cpu", "gpu"], default="cpu")
    ap.add_argument("--json")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--child")
    args = ap.parse_args()
    if args.child:
        return child(args.n, args.reps, args.child)

    if args.expect == "gpu" and not gpu_present():
        print("SKIP: no GPU (cuInit failed)")
        sys.exit(77)
    import numpy as np
    runs = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, preload in (("openblas", None), ("gemmlab", os.path.realpath(args.lib))):
            env = dict(os.environ, GEMMLAB_BLAS_VERBOSE="1")
            if preload:
                env["LD_PRELOAD"] = preload
            out = os.path.join(tmp, name + ".npy")
            p = subprocess.run([sys.executable, __file__, args.lib, str(args.n), "--reps", str(args.reps),
                                "--child", out], env=env, capture_output=True, text=True)
            if p.returncode != 0:
                sys.exit(f"{name} run failed: {p.stderr.strip()[-500:]}")
            runs[name] = dict(json.loads(p.stdout.strip().splitlines()[-1]), log=p.stderr, c=np.load(out))

    log = runs["gemmlab"]["log"]
    took = [l for l in log.splitlines() if l.startswith("gemmlab BLAS:") and "sgemm" in l]
    if not took:
        sys.exit("the drop-in did not take numpy's sgemm call (LD_PRELOAD not honoured?):\n" + log[-500:])
    if not any("sgemm 80x100x90" in l and "below the threshold" in l for l in took):  # row-major: n x m
        sys.exit("the small product did not go through the drop-in to the program's BLAS:\n" + log[-500:])
    if runs["gemmlab"]["small_error"] > 1e-4:
        sys.exit(f"the small product is wrong under the drop-in: error {runs['gemmlab']['small_error']}")
    if args.expect == "gpu" and not any("on the GPU" in l for l in took):
        if any("(no GPU)" in l for l in took):
            print("SKIP: no GPU")
            sys.exit(77)
        sys.exit("expected the GPU: " + took[-1])

    rng = np.random.default_rng(7)
    a = rng.uniform(-1, 1, (args.n, args.n)).astype(np.float32).astype(np.float64)
    b = rng.uniform(-1, 1, (args.n, args.n)).astype(np.float32).astype(np.float64)
    rows = np.random.default_rng(1).integers(0, args.n, 64)
    ref = a[rows] @ b
    scale = np.linalg.norm(a[rows], axis=1)[:, None] * np.linalg.norm(b, axis=0)[None, :]
    tol = 2.0 ** -23 * (4 + 2 * np.sqrt(args.n))
    errors = {k: float(np.max(np.abs(r["c"][rows] - ref) / scale)) for k, r in runs.items()}
    between = float(np.max(np.abs(runs["gemmlab"]["c"] - runs["openblas"]["c"])
                           / (np.linalg.norm(a, axis=1)[:, None] * np.linalg.norm(b, axis=0)[None, :])))
    result = {
        "n": args.n, "numpy": runs["openblas"]["numpy"], "route": took[-1],
        "openblas_seconds": runs["openblas"]["seconds"], "gemmlab_seconds": runs["gemmlab"]["seconds"],
        "speedup": runs["openblas"]["seconds"] / runs["gemmlab"]["seconds"],
        "max_scaled_error": errors, "max_scaled_difference": between, "tolerance": tol,
    }
    print(json.dumps(result, indent=1))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    if max(errors.values()) > tol or between > 2 * tol:
        sys.exit(f"results differ beyond the FP32 tolerance {tol:.3g}: {errors}, between {between:.3g}")


if __name__ == "__main__":
    main()
