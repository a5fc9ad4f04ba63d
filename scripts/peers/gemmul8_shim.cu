// A C interface to GEMMul8's FP32 GEMM (RIKEN-RCCS/GEMMul8, MIT), for gemmlab's
// peer runner (src/baselines/gemmul8.cpp), which opens it with dlopen. Built by
// scripts/peers/gemmul8.sh.
#include <gemmul8.hpp>

extern "C" size_t gemmlab_gemmul8_work_size(size_t m, size_t n, size_t k, unsigned moduli) {
  return gemmul8::workSize(m, n, k, moduli);
}

extern "C" int gemmlab_gemmul8_sgemm(cublasHandle_t handle, cublasOperation_t ta, cublasOperation_t tb, size_t m,
                                     size_t n, size_t k, const float *alpha, const float *a, size_t lda, const float *b,
                                     size_t ldb, const float *beta, float *c, size_t ldc, unsigned moduli, int fast,
                                     void *work) {
  try {
    gemmul8::gemm<float>(handle, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, moduli, fast != 0, work);
    return cudaPeekAtLastError() == cudaSuccess ? 0 : 1;
  } catch (...) {
    return 2;
  }
}
