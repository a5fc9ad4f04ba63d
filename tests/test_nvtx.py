#!/usr/bin/env python3
"""The library's NVTX ranges as a profiler records them: every call is a range in the domain
"gemmlab" named by operation, shape, mode and kernel configuration, around the call's kernels.
Recorded by Nsight Systems where it is installed, else by Nsight Compute (--nvtx: each profiled
kernel with the ranges open around it). Exit 77 (skipped) without either, or without a GPU.
PYTHONPATH must hold the package."""
import os
import shutil
import subprocess
import sys
import tempfile

PROGRAM = """
import torch, gemmlab
a, b = torch.rand(300, 100, device="cuda"), torch.rand(100, 200, device="cuda")
for mode in ("strict_fp32", "tensor_fp32"):
    gemmlab.matmul(a, b, mode=mode)
gemmlab.matvec(a, torch.rand(100, device="cuda"))
torch.cuda.synchronize()
"""
EXPECTED = ["sgemm 300x200x100 row NN strict-fp32: ", "sgemm 300x200x100 row NN tensor-fp32: ", "sgemv 300x100 row N"]

if subprocess.run([sys.executable, "-c", "import torch; assert torch.cuda.is_available()"]).returncode:
    print("SKIP: no CUDA device")
    sys.exit(77)
nsys, ncu = shutil.which("nsys"), shutil.which("ncu")
with tempfile.TemporaryDirectory() as tmp:
    if nsys:
        report = os.path.join(tmp, "ranges")
        subprocess.run([nsys, "profile", "--trace=cuda,nvtx", "-o", report, sys.executable, "-c", PROGRAM],
                       check=True, capture_output=True)
        recorded = subprocess.run([nsys, "stats", "--report", "nvtx_sum", "--format", "csv", report + ".nsys-rep"],
                                  check=True, capture_output=True, text=True).stdout
    elif ncu:
        p = subprocess.run([ncu, "--nvtx", "--metrics", "gpu__time_duration.sum",
                            sys.executable, "-c", PROGRAM], capture_output=True, text=True)
        recorded = p.stdout + p.stderr
        if p.returncode:
            print(recorded[-3000:])
            print(f"FAIL: ncu exited {p.returncode}")
            sys.exit(1)
    else:
        print("SKIP: neither nsys (Nsight Systems) nor ncu (Nsight Compute) is on PATH")
        sys.exit(77)
print(recorded[-6000:])
missing = [e for e in EXPECTED if e not in recorded]
if missing:
    print(f"FAIL: ranges not recorded: {missing}")
    sys.exit(1)
print(f"ranges recorded by {'nsys' if nsys else 'ncu'}:", ", ".join(EXPECTED))
