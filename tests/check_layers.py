#!/usr/bin/env python3
"""The include graph follows the layers: a folder of src/ includes only itself and the folders below
it (LAYERS, bottom first; docs/architecture.md draws the same order). The public headers
(include/gemmlab/) include only each other and system headers. Every folder of src/ has a layer and
a line in docs/architecture.md. Prints each violation in one line; exit 1 if any."""
import os
import re
import sys

# Bottom first. "public" is include/gemmlab/, the library's contract.
LAYERS = [
    "public", "common", "device", "problem", "kernels", "compile", "launch",  # describe and launch a kernel
    "tune",  # the tuning database (and the tuner, which also uses bench: see below)
    "library",  # gemmlab::sgemm: check, dispatch, plan, launch
    "blas", "python",  # the library's other doors
    "verify", "timing", "counters", "results", "baselines", "model", "bench",  # the lab
    "experiment", "sweep", "report", "stress", "cli",
]
# A folder may hold files of two layers. The tuner (tune/tuner.*) runs benchmarks; the tuning
# database beside it (tune/tuning*) is what the library reads.
FILE_LAYERS = {"tune/tuner.hpp": "experiment", "tune/tuner.cpp": "experiment"}
SOURCE = (".cpp", ".hpp", ".cu", ".cuh", ".h")


def layer_of(path):
    return FILE_LAYERS.get(path, path.split("/")[0] if "/" in path else None)


def main(root):
    rank = {name: i for i, name in enumerate(LAYERS)}
    problems = []
    src = os.path.join(root, "src")
    folders = sorted(d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d)))
    arch_doc = open(os.path.join(root, "docs", "architecture.md")).read()
    for d in folders:
        if d not in rank:
            problems.append(f"src/{d}/ has no layer in tests/check_layers.py")
        if f"src/{d}/" not in arch_doc:
            problems.append(f"src/{d}/ is not described in docs/architecture.md")
    for base, sub in ((src, ""), (os.path.join(root, "include"), "")):
        for dirpath, _, files in os.walk(base):
            for f in files:
                if not f.endswith(SOURCE):
                    continue
                full = os.path.join(dirpath, f)
                rel = os.path.relpath(full, base)
                here = "public" if base.endswith("include") else layer_of(rel)
                for target in re.findall(r'^\s*#\s*include\s+"([^"]+)"', open(full, errors="replace").read(), re.M):
                    if "/" not in target:
                        continue  # beside the file
                    there = "public" if target.startswith("gemmlab/") else layer_of(target)
                    if there not in rank or here not in rank:
                        continue
                    if here == "public" and there != "public":
                        problems.append(f"include/{rel} includes {target}: a public header reaches into the lab")
                    elif rank[there] > rank[here]:
                        problems.append(f"src/{rel} ({here}) includes {target} ({there}): an upward arrow")
    for p in problems:
        print(p)
    print(f"{len(problems)} layering problem(s) in {len(folders)} folders")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")))
