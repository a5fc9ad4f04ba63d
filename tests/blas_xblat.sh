#!/usr/bin/env bash
# The netlib BLAS test programs (Debian's libblas-test: xblat2s, xblat3s) under the drop-in:
#   blas_xblat.sh LIBGEMMLAB_BLAS XBLAT_DIR cpu|gpu [MATH]
# cpu: the default thresholds, so every call goes through the drop-in to OpenBLAS (no GPU needed);
# gpu: threshold 0, every valid call with work on the GPU in math mode MATH (exit 77, skipped,
# when there is no GPU). Every routine's error exits and computational tests must pass, and the
# drop-in's own log must show that it took the sgemm and sgemv calls.
set -euo pipefail
lib=$(realpath "$1") dir=$2 where=$3 math=${4:-strict_fp32}
if [ ! -x "$dir/xblat3s" ]; then
  echo "SKIP: the netlib BLAS test programs are not installed (Debian: libblas-test)"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
export GEMMLAB_BLAS_VERBOSE=1 GEMMLAB_BLAS_MATH=$math
[ "$where" = gpu ] && export GEMMLAB_BLAS_THRESHOLD=0
status=0
for level in 2 3; do
  LD_PRELOAD=$lib "$dir/xblat${level}s" <"$dir/sblat${level}.in" >"out$level" 2>"log$level" || {
    echo "xblat${level}s exited with $?"; tail -5 "log$level"; status=1; }
  summary=sblat${level}.out
  routines=$(grep -c " T PUT F FOR NO TEST" "$dir/sblat${level}.in")
  passed=$(grep -c "PASSED" "$summary" || true)
  bad=$(grep -E "FAIL|SUSPECT|NOT CALLED|\*\*\*\*\*" "$summary" || true)
  echo "xblat${level}s: $passed of $((2 * routines)) lines PASSED"
  [ "$passed" -eq $((2 * routines)) ] && [ -z "$bad" ] || { echo "$bad"; grep -v PASSED "$summary" | head -20; status=1; }
done
routine_calls() { grep -c "^gemmlab BLAS: $1 .* on $2" log2 log3 | awk -F: '{s += $2} END {print s}'; }
if [ "$where" = gpu ]; then
  if grep -q "(no GPU)" log2 log3; then echo "SKIP: no GPU"; exit 77; fi
  for r in sgemm sgemv; do
    n=$(routine_calls $r "the GPU")
    echo "$r calls on the GPU ($math): $n"
    [ "$n" -gt 0 ] || status=1
  done
  if grep -q "the GPU run failed" log2 log3; then grep -m3 "failed" log2 log3; status=1; fi
else
  for r in sgemm sgemv; do
    n=$(routine_calls $r "OpenBLAS")
    echo "$r calls through the drop-in to OpenBLAS: $n"
    [ "$n" -gt 0 ] || status=1
  done
fi
exit $status
