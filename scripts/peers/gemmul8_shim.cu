// A C interface to GEMMul8's FP32 GEMM on INT8 tensor cores (RIKEN-RCCS/GEMMul8, MIT), for gemmlab's
// peer runner (src/baselines/gemmul8.cpp), which opens it with dlopen. Built by
// scripts/peers/gemmul8.sh from GEMMul8's own headers, instantiating its float INT8 path alone (its
// library builds every type and backend: far longer).
#include <dlfcn.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <cuComplex.h>
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

// GEMMul8's sources, in the order its gemmul8.cu includes them.
#include "../include/gemmul8.hpp"
#include "self_hipify.hpp"
#include "template_type.hpp"
#include "common.hpp"
#include "template_math.hpp"
#include "table.hpp"
#include "find_max.hpp"
#include "mod.hpp"
#include "matmult.hpp"
#include "scaling.hpp"
#include "scaling_fast_real.hpp"
#include "scaling_accu_real.hpp"
#include "conv_hi2mid_real.hpp"
#include "inverse_scaling_real.hpp"
#include "gemmul8_real.hpp"

using gemmul8::Backend;

extern "C" size_t gemmlab_gemmul8_work_size(size_t m, size_t n, size_t k, unsigned moduli) {
  return real::workSize<Backend::INT8>(m, n, k, moduli, false, false, nullptr, nullptr);
}

extern "C" int gemmlab_gemmul8_sgemm(cublasHandle_t handle, cublasOperation_t ta, cublasOperation_t tb, size_t m,
                                     size_t n, size_t k, const float* alpha, const float* a, size_t lda, const float* b,
                                     size_t ldb, const float* beta, float* c, size_t ldc, unsigned moduli, int fast,
                                     void* work) {
  try {
    cudaStream_t stream;
    cublasGetStream(handle, &stream);
    real::gemm<float, Backend::INT8>(Handle_t(CublasTag{}, handle), ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c,
                                     ldc, moduli, fast != 0, work, nullptr, nullptr, false, false, false, false,
                                     stream);
    return cudaPeekAtLastError() == cudaSuccess ? 0 : 1;
  } catch (...) {
    return 2;
  }
}
