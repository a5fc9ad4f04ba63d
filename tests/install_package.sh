#!/usr/bin/env bash
# Installs the built library into a scratch prefix and builds examples/ against it with
# find_package(gemmlab): the package works for a user. Runs the example when a GPU is present.
set -euo pipefail
build=$1 src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
# Exactly the public headers: the contract, none of the lab's internals.
shipped=$(cd "$work/prefix/include" && find . -type f | sort | tr '\n' ' ')
want="./gemmlab/error.hpp ./gemmlab/gemmlab.h ./gemmlab/gemmlab.hpp ./gemmlab/problem.hpp "
[ "$shipped" = "$want" ] || { echo "the install ships headers: $shipped; expected: $want"; exit 1; }
cmake -S "$src/examples" -B "$work/example" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/example" >/dev/null
test -x "$work/example/sgemm_example"
if nvidia-smi -L >/dev/null 2>&1; then
  "$work/example/sgemm_example"
else
  echo "built $work/example/sgemm_example against the installed package (no GPU: not run)"
fi
