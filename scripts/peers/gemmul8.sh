#!/usr/bin/env bash
# On a GPU host: build GEMMul8's library (its own Makefile, sources in .peers/GEMMul8, an ignored
# folder holding `git archive` of RIKEN-RCCS/GEMMul8) and gemmlab's shim over it. Prints the line
#   export GEMMLAB_GEMMUL8=<path of the shim>
# after which `gemmlab bench --kernel gemmul8-7,...` measures it. Usage: scripts/peers/gemmul8.sh [arch]
set -euo pipefail
cd "$(dirname "$0")/../.."
src=.peers/GEMMul8/GEMMul8
[ -d "$src" ] || { echo "no $src: put GEMMul8's source there (git archive of RIKEN-RCCS/GEMMul8)" >&2; exit 1; }
arch=${1:-90}
export PATH="/usr/local/cuda/bin:$PATH"
make -C "$src" -j"$(nproc)" BACKEND=cuda GPU_ARCH="$arch" lib/libgemmul8.a >&2
out=build/peers
mkdir -p "$out"
nvcc -std=c++20 -O3 -shared -Xcompiler -fPIC -gencode "arch=compute_$arch,code=sm_$arch" -I "$src/include" \
  scripts/peers/gemmul8_shim.cu "$src/lib/libgemmul8.a" -lcublas -lcublasLt -lcudart -lcuda -lnvidia-ml -ldl \
  -o "$out/libgemmlab_gemmul8.so" >&2
echo "export GEMMLAB_GEMMUL8=$PWD/$out/libgemmlab_gemmul8.so"
