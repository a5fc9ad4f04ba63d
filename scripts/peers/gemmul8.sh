#!/usr/bin/env bash
# On a GPU host: build gemmlab's shim over GEMMul8 (sources in .peers/GEMMul8, an ignored folder
# holding `git archive` of RIKEN-RCCS/GEMMul8; its headers compiled for the float INT8 path only).
# Prints the line
#   export GEMMLAB_GEMMUL8=<path of the shim>
# after which `gemmlab bench --kernel gemmul8-7,...` measures it. Usage: scripts/peers/gemmul8.sh [arch]
set -euo pipefail
cd "$(dirname "$0")/../.."
src=.peers/GEMMul8/GEMMul8
[ -d "$src" ] || { echo "no $src: put GEMMul8's source there (git archive of RIKEN-RCCS/GEMMul8)" >&2; exit 1; }
arch=${1:-90}
export PATH="/usr/local/cuda/bin:$PATH"
out=build/peers
mkdir -p "$out"
nvcc -std=c++20 -O3 -diag-suppress 177 -shared -Xcompiler -fPIC -gencode "arch=compute_$arch,code=sm_$arch" \
  -I "$src/include" -I "$src/src" -L /usr/local/cuda/lib64/stubs scripts/peers/gemmul8_shim.cu -lcublas -lcublasLt -lcudart -lcuda -ldl \
  -o "$out/libgemmlab_gemmul8.so" >&2
echo "export GEMMLAB_GEMMUL8=$PWD/$out/libgemmlab_gemmul8.so"
