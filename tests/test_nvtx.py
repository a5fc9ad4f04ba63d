#!/usr/bin/env python3
"""The library's NVTX ranges, recorded by Nsight Systems: every call is a range in the domain
"gemmlab" named by operation, shape, mode and kernel configuration. Exit 77 (skipped) without nsys
or without a GPU. PYTHONPATH must hold the package."""
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

nsys = shutil.which("nsys")
if not nsys:
    print("SKIP: nsys (Nsight Systems) is not on PATH")
    sys.exit(77)
if subprocess.run([sys.executable, "-c", "import torch; assert torch.cuda.is_available()"]).returncode:
    print("SKIP: no CUDA device")
    sys.exit(77)
with tempfile.TemporaryDirectory() as tmp:
    report = os.path.join(tmp, "ranges")
    subprocess.run([nsys, "profile", "--trace=cuda,nvtx", "--force-overwrite=true", "-o", report, sys.executable,
                    "-c", PROGRAM], check=True, capture_output=True)
    stats = subprocess.run([nsys, "stats", "--report", "nvtx_sum", "--format", "csv", report + ".nsys-rep"],
                           check=True, capture_output=True, text=True).stdout
print(stats)
expected = ["sgemm 300x200x100 row NN strict-fp32: ", "sgemm 300x200x100 row NN tensor-fp32: ", "sgemv 300x100"]
missing = [e for e in expected if e not in stats]
if missing:
    print(f"FAIL: ranges not recorded: {missing}")
    sys.exit(1)
print("ranges recorded:", ", ".join(expected))
