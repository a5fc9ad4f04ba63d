#pragma once
// gemmlab, the library: CBLAS-style single-precision products on the current CUDA device.
//
//   gemmlab::sgemm(Layout::row_major, Trans::no, Trans::no, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream);
//   gemmlab::sgemv(Layout::row_major, Trans::no, M, N, alpha, A, lda, x, 1, beta, y, 1, stream);
//
// Pointers are device memory; the call enqueues the work on `stream` and returns. The choice is
// by shape (src/library/dispatch.hpp in the sources): M = 1 or N = 1 runs a GEMV kernel; other
// shapes the tile, split of K and (in the tensor modes) SIMT or tensor-core kernel whose modelled
// time is least on this GPU. In strict_fp32 a measured entry for the exact shape class comes
// first: the tuning database (`gemmlab tune`, at $GEMMLAB_TUNING_DB or
// ~/.cache/gemmlab/tuning.json), then the table built into the library (measured on an H100).
// Every kernel the dispatcher can pick is compiled when the library is built, so a first call on
// sm_90 needs no run-time compiler (elsewhere NVRTC compiles it once). The first call of a shape
// plans the launch; later calls of the same shape, pointers' 16-byte alignment and stream only
// launch. A first call may be inside a CUDA graph capture: its allocations use relaxed capture
// mode and touch no stream. Each stream keeps one workspace (split-K partial sums, packed and
// staged operands), shared by its calls, whose launches are enqueued together under the stream's
// lock: threads may share a stream. A call inside a capture uses a workspace the graph owns (freed
// when the graph is destroyed; two executable instances of one graph must not run at once, as with
// a cuBLAS handle's workspace). All of it stays under a limit (below).
//
// Bad arguments throw gemmlab::UsageError (one line naming the rule: sizes, leading dimensions,
// increments below 1); CUDA or compiler failures throw gemmlab::RuntimeError. M = 0 or N = 0
// returns at once; K must be at least 1. Calls on different streams may run concurrently: each
// stream has its own workspace. Inf and NaN inputs give the non-finite outputs cuBLAS SGEMM gives
// in every mode.
#include <cstddef>
#include <cstdint>
#include <string>

#include <cuda_runtime.h>

#include "gemmlab/error.hpp"
#include "gemmlab/problem.hpp"

namespace gemmlab {

// How sgemm may compute (gemmlab never lowers precision unless asked):
// - strict_fp32: FP32 fused multiply-adds on the CUDA cores (SIMT), like cuBLAS SGEMM.
// - tensor_fp32: FP32-level accuracy on the tensor cores, 3xTF32 (each operand split into a TF32
//   big part and a TF32 remainder, three products): the wgmma family on compute capability 9.0,
//   the mma.sync tf32 family on 8.x; strict_fp32 elsewhere. Accuracy and its measured domain:
//   README, "gemmlab accuracy". Uses a workspace of 2·(M + N)·K floats per plan on 9.0.
// - tf32: one TF32 product (10-bit mantissas, about 1e-4 relative error, like cuBLAS's TF32 mode),
//   on the same families; strict_fp32 below compute capability 8.0.
enum class MathMode { strict_fp32, tensor_fp32, tf32 };
std::string to_string(MathMode m);
// "strict_fp32", "tensor_fp32", "tf32" (or with '-' for '_'); UsageError otherwise.
MathMode parse_math_mode(const std::string& s);

void sgemm(Layout layout, Trans trans_a, Trans trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
           int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc, cudaStream_t stream = nullptr,
           MathMode math = MathMode::strict_fp32);

// y = alpha * op(A) * x + beta * y, A stored m × n in `layout` (BLAS's M and N); increments of 1
// or more.
void sgemv(Layout layout, Trans trans, int64_t m, int64_t n, float alpha, const float* a, int64_t lda, const float* x,
           int64_t incx, float beta, float* y, int64_t incy, cudaStream_t stream = nullptr);

// The argument checks of sgemm and sgemv, without a GPU (UsageError with the same one line the
// call would throw); sgemm and sgemv themselves check a shape's arguments on its first call only.
void check_sgemm(Layout layout, Trans trans_a, Trans trans_b, int64_t m, int64_t n, int64_t k, const float* a,
                 int64_t lda, const float* b, int64_t ldb, const float* c, int64_t ldc);
void check_sgemv(Layout layout, Trans trans, int64_t m, int64_t n, const float* a, int64_t lda, const float* x,
                 int64_t incx, const float* y, int64_t incy);

// The configuration a call of this problem uses on the current device, and where it came from
// ("model", "tuning database", "built-in table", "defaults"); `why` is the route and the reason in
// one line, `workspace_bytes` the device memory the plan allocates (split-K partial sums, packed
// operands), `predicted_us` the dispatcher's model time (0 where a table decided).
struct Choice {
  std::string family, params, source;
  std::string why;
  size_t workspace_bytes = 0;
  double predicted_us = 0;
};
Choice choose(const Problem& p, MathMode math = MathMode::strict_fp32);

// Device memory the library holds for workspaces (split-K partial sums, packed and staged
// operands, arrival counters): the streams' and the live graphs', all devices together.
size_t workspace_bytes_held();
// The most it may hold: by default an eighth of the current device's memory when first asked.
// A call whose plan would pass it takes other streams' idle workspaces, least recently used first,
// then, if that is not enough, a plan that needs no workspace (slower, never wrong). 0: none at all.
size_t workspace_limit();
void set_workspace_limit(size_t bytes);
// Waits for the library's work on every stream it has seen, then frees the streams' workspaces
// (the plans stay; a graph's workspace stays until the graph is destroyed).
void release_workspaces();

}  // namespace gemmlab
