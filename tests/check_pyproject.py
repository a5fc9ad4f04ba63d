#!/usr/bin/env python3
"""What `pip install .` builds, built the way scikit-build-core would (CI has no scikit-build-core:
Debian does not package it): pyproject.toml's CMake options, a Release build, `cmake --install`
into a folder that stands for the wheel's site-packages, then the installed package imported from
outside the source tree, with only that folder on its path, and its CPU tests run there.

    check_pyproject.py SOURCE_DIR WORK_DIR PYTHON
"""
import os
import re
import shutil
import subprocess
import sys
try:
    import tomllib
except ImportError:  # Python < 3.11
    print("SKIP: this Python has no tomllib (3.11 and later)")
    sys.exit(77)

source, work, python = (os.path.abspath(p) for p in sys.argv[1:4])
with open(os.path.join(source, "pyproject.toml"), "rb") as f:
    project = tomllib.load(f)
sk = project["tool"]["scikit-build"]


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


# The version scikit-build-core reads is CMake's.
meta = sk["metadata"]["version"]
with open(os.path.join(source, meta["input"])) as f:
    match = re.search(meta["regex"], f.read())
if not match:
    fail(f"the version regex {meta['regex']!r} matches nothing in {meta['input']}")
version = match.group("value")
if sk.get("wheel", {}).get("packages") != []:
    fail("wheel.packages must be [] (CMake installs the package; discovery would add python/gemmlab twice)")

build, wheel = os.path.join(work, "pyproject-build"), os.path.join(work, "pyproject-wheel")
shutil.rmtree(wheel, ignore_errors=True)
defines = [f"-D{k}={v}" for k, v in sk["cmake"].get("define", {}).items()]
configure = ["cmake", "-S", source, "-B", build, "-G", "Ninja", f"-DCMAKE_BUILD_TYPE={sk['cmake']['build-type']}",
             f"-DPython_EXECUTABLE={python}", f"-DCMAKE_INSTALL_PREFIX={wheel}", *defines]
print(" ".join(configure), flush=True)
for step in (configure, ["cmake", "--build", build], ["cmake", "--install", build]):
    if subprocess.run(step).returncode:
        fail(f"{' '.join(step[:2])} failed")

# The wheel's contents: one package, plain files, the library inside it.
files = []
for root, dirs, names in os.walk(wheel):
    for n in names + dirs:
        path = os.path.join(root, n)
        if os.path.islink(path):
            fail(f"{os.path.relpath(path, wheel)} is a link: a wheel holds files")
    files += [os.path.relpath(os.path.join(root, n), wheel) for n in names]
outside = [f for f in files if not f.startswith("gemmlab/")]
if outside:
    fail(f"installed outside the package: {outside}")
for needed in ("gemmlab/__init__.py", "gemmlab/torch.py", "gemmlab/jax.py", "gemmlab/libgemmlab.so"):
    if needed not in files:
        fail(f"{needed} is not installed ({files})")
if not any(re.fullmatch(r"gemmlab/_gemmlab\..*\.so", f) for f in files):
    fail(f"no native module installed ({files})")

# Imported from elsewhere, with the build folder nowhere on any path.
env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "LD_LIBRARY_PATH")}
env["PYTHONPATH"] = wheel
probe = ("import gemmlab, gemmlab.torch; print(gemmlab.__file__); print(gemmlab.version())")
p = subprocess.run([python, "-c", probe], cwd="/", env=env, capture_output=True, text=True)
if p.returncode:
    fail(f"import from the installed package failed:\n{p.stderr}")
where, reported = p.stdout.split("\n")[:2]
if not where.startswith(wheel):
    fail(f"imported {where}, not the installed package")
if not reported.startswith(version + " "):
    fail(f"the package reports {reported}, pyproject's version is {version}")
for test in ("test_python.py", "test_torch.py"):
    if subprocess.run([python, os.path.join(source, "tests", test), "cpu"], cwd="/", env=env).returncode:
        fail(f"{test} cpu failed against the installed package")
print(f"pyproject build: gemmlab {reported} installed as {sorted(files)}")
