#pragma once
// BLAS products on host memory, run on the GPU: the operands are copied in, gemmlab::sgemm /
// sgemv runs, the result is copied back. Column-major (Fortran BLAS) arguments, checked first by
// sgemm_info / sgemv_info. The drop-in (dropin.cpp) decides per call whether the GPU pays.
#include <cstdint>
#include <string>

#include "gemmlab/gemmlab.hpp"

namespace gemmlab::blas {

// Read once per process from the environment (README, "BLAS drop-in"):
//   GEMMLAB_BLAS_THRESHOLD        sets both thresholds below (0: every call on the GPU)
//   GEMMLAB_BLAS_SGEMM_THRESHOLD  least M·N·K multiply-adds an sgemm needs to run on the GPU
//   GEMMLAB_BLAS_SGEMV_THRESHOLD  least M·N multiply-adds an sgemv needs to run on the GPU
//   GEMMLAB_BLAS_MATH             strict_fp32 (default) | tensor_fp32 | tf32
//   GEMMLAB_BLAS_VERBOSE          1: one line on stderr per call (where it ran and why)
struct Settings {
  // From a measurement on the H100 host (16 cores; results/h100/python.json, "blas_offload"): with its
  // copies an sgemm on the GPU is within 25 % of OpenBLAS either way at 128³ and 256³ (it varies
  // from run to run), wins from 384³ on (1.25x; 1.9x at 1024³, 4.3x at 4096³); an sgemv never pays
  // (0.05-0.08x: it reads each element once, and the host reads memory faster than PCIe carries it).
  int64_t sgemm_threshold = int64_t(1) << 25;
  int64_t sgemv_threshold = INT64_MAX;
  MathMode math = MathMode::strict_fp32;
  bool verbose = false;
  std::string warnings;  // one line per ignored variable ("" when all were valid)
};
// `get` returns a variable's value or nullptr (getenv, or a map in tests).
Settings parse_settings(const char* (*get)(const char*));

// The transposes as BLAS passes them: 'N', 'T', 'C' in either case.
bool is_trans(char t);
// Reference BLAS's INFO for these arguments: 0 when valid, else the position of the first bad
// argument in the Fortran call (sgemm: TRANSA 1, TRANSB 2, M 3, N 4, K 5, LDA 8, LDB 10, LDC 13;
// sgemv: TRANS 1, M 2, N 3, LDA 6, INCX 8, INCY 11).
int sgemm_info(char trans_a, char trans_b, int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb, int64_t ldc);
int sgemv_info(char trans, int64_t m, int64_t n, int64_t lda, int64_t incx, int64_t incy);

// C (m x n, ldc) = alpha · op(A) · op(B) + beta · C on the current GPU; the caller's C outside
// its m x n part is never written. Throws gemmlab::RuntimeError / NoDeviceError.
void sgemm_on_gpu(char trans_a, char trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                  int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc, MathMode math);
// y = alpha · op(A) · x + beta · y, A m x n; increments may be negative (BLAS: the vector is then
// read from its end).
void sgemv_on_gpu(char trans, int64_t m, int64_t n, float alpha, const float* a, int64_t lda, const float* x,
                  int64_t incx, float beta, float* y, int64_t incy);

// Whether a CUDA device can be used (checked once).
bool gpu_present();

}  // namespace gemmlab::blas
