#!/usr/bin/env bash
# The shared-stream regression test against the library as it was before the fix: today's tree with
# src/library/library.cpp of 2126c80 (per-plan workspaces, a call's launches not kept together).
# The old file is not kept in the tree: here, run `mkdir -p .old && git show 2126c80:src/library/library.cpp
# > .old/library.cpp` (.old/ ignored through .git/info/exclude), and name .old in the device call's carry.
set -uo pipefail
[ -f .old/library.cpp ] || { echo "no .old/library.cpp (see the header)"; exit 2; }
old=/tmp/gemmlab-old
rm -rf "$old"; mkdir -p "$old"
tar --exclude=./build --exclude=./.git -cf - . | tar -xf - -C "$old"
cp .old/library.cpp "$old/src/library/library.cpp"
cd "$old" && { cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build build --target gemmlab_gpu_tests; } > build.log 2>&1 || { tail -20 build.log; exit 1; }
build/tests/gemmlab_gpu_tests --gtest_filter=Library.SharedStreamNewDataEveryCall 2>&1 | grep -E "OK \]|FAILED \]|wrong results" | head -5
