#!/usr/bin/env bash
# Builds the library as it was before the fix (2126c80: the stress engine, the old per-plan workspaces
# and unlocked launches) with today's tests, and runs the shared-stream regression test against it.
set -uo pipefail
old=/tmp/gemmlab-old
rm -rf "$old"; git worktree add -f "$old" 2126c80 >/dev/null 2>&1 || exit 1
git archive HEAD tests/test_gpu.cpp tests/cli_helpers.hpp include/gemmlab/stress.hpp src/stress | tar -x -C "$old"
cd "$old" && { cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build build --target gemmlab_gpu_tests gemmlab_cli; } > build.log 2>&1 || { tail -20 build.log; exit 1; }
build/tests/gemmlab_gpu_tests --gtest_filter=Library.SharedStreamNewDataEveryCall 2>&1 | grep -E "OK|FAILED|wrong results" | head -5
