// The BLAS drop-in (libgemmlab_blas.so): sgemm_/sgemv_ (Fortran) and cblas_sgemm/cblas_sgemv on
// host memory, NVBLAS-style. A call runs on the GPU when its arguments are valid, it has work
// (alpha != 0, K > 0), its multiply-adds reach the threshold and a GPU is present; every other
// call, and any call whose GPU run fails, goes to OpenBLAS, which also reports bad arguments
// through xerbla exactly as a BLAS must. Under LD_PRELOAD every other BLAS symbol resolves to the
// program's own BLAS; linked directly (-lgemmlab_blas -lopenblas), to OpenBLAS.
//
// NumPy's and SciPy's pip wheels carry their own ILP64 OpenBLAS with renamed symbols
// (scipy_cblas_sgemm64_): those two names are taken too, and fall back to the wheel's library.
#include <dlfcn.h>
#include <link.h>

#include <cblas.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

#include "blas/offload.hpp"

#define GEMMLAB_BLAS_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

using gemmlab::blas::Settings;

const Settings& settings() {
  static const Settings s = [] {
    Settings r = gemmlab::blas::parse_settings([](const char* name) -> const char* { return std::getenv(name); });
    if (!r.warnings.empty()) std::fputs(r.warnings.c_str(), stderr);
    return r;
  }();
  return s;
}

// OpenBLAS's own definition of `name`, not ours: looked up in the OpenBLAS object this library
// was linked against (found from one of its symbols), so an LD_PRELOAD cannot loop back here.
template <class Fn>
Fn openblas(const char* name) {
  static void* handle = [] {
    Dl_info info{};
    if (!dladdr(reinterpret_cast<void*>(&openblas_get_config), &info) || !info.dli_fname) return (void*)nullptr;
    return dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
  }();
  void* f = handle ? dlsym(handle, name) : nullptr;
  if (!f) {
    std::fprintf(stderr, "gemmlab BLAS: OpenBLAS's %s was not found (%s)\n", name, dlerror());
    std::abort();
  }
  return reinterpret_cast<Fn>(f);
}

// Another loaded object's definition of `name` (the wheel's OpenBLAS for the scipy_ names): it is
// in a Python module's local scope, which dlsym(RTLD_NEXT) does not search.
void* other_definition(const char* name, void* ours) {
  struct Search {
    const char* name;
    void* ours;
    void* found;
  } search{name, ours, nullptr};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        auto* s = static_cast<Search*>(data);
        void* h = dlopen(info->dlpi_name && *info->dlpi_name ? info->dlpi_name : nullptr, RTLD_LAZY | RTLD_NOLOAD);
        if (!h) return 0;
        void* f = dlsym(h, s->name);
        dlclose(h);
        if (f && f != s->ours) s->found = f;
        return s->found ? 1 : 0;
      },
      &search);
  if (!search.found) {
    std::fprintf(stderr, "gemmlab BLAS: no other library defines %s\n", name);
    std::abort();
  }
  return search.found;
}

void say(const char* routine, const std::string& shape, const char* where) {
  if (settings().verbose) std::fprintf(stderr, "gemmlab BLAS: %s %s on %s\n", routine, shape.c_str(), where);
}

// Runs `gpu` when the call qualifies and it succeeds; otherwise `cpu`. `work` is the call's
// multiply-adds, 0 when it has none the GPU could do (alpha = 0, K = 0) or it is invalid.
template <class Gpu, class Cpu>
void route(const char* routine, const std::string& shape, int64_t work, int64_t threshold, Gpu gpu, Cpu cpu) {
  const char* why = nullptr;
  if (work == 0) why = "OpenBLAS (nothing for the GPU to do, or bad arguments)";
  else if (work < threshold) why = "OpenBLAS (below the threshold)";
  else if (!gemmlab::blas::gpu_present()) why = "OpenBLAS (no GPU)";
  if (!why) {
    try {
      gpu();
      say(routine, shape, "the GPU");
      return;
    } catch (const std::exception& e) {
      static std::once_flag warned;
      std::call_once(warned, [&] {
        std::fprintf(stderr, "gemmlab BLAS: %s on the GPU failed, OpenBLAS computes it: %s\n", routine, e.what());
      });
      why = "OpenBLAS (the GPU run failed)";
    }
  }
  say(routine, shape, why);
  cpu();
}

std::string gemm_shape(char ta, char tb, int64_t m, int64_t n, int64_t k) {
  return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + " " + ta + tb;
}

// Column-major sgemm; `cpu` is the OpenBLAS call with the caller's original arguments.
template <class Cpu>
void sgemm_col(char ta, char tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
               const float* b, int64_t ldb, float beta, float* c, int64_t ldc, Cpu cpu) {
  const bool valid = gemmlab::blas::sgemm_info(ta, tb, m, n, k, lda, ldb, ldc) == 0;
  if (valid && (m == 0 || n == 0)) return;
  const int64_t work = valid && alpha != 0.0f ? m * n * k : 0;
  route("sgemm", gemm_shape(ta, tb, m, n, k), work, settings().sgemm_threshold,
        [&] { gemmlab::blas::sgemm_on_gpu(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, settings().math); },
        cpu);
}

template <class Cpu>
void sgemv_col(char t, int64_t m, int64_t n, float alpha, const float* a, int64_t lda, const float* x, int64_t incx,
               float beta, float* y, int64_t incy, Cpu cpu) {
  const bool valid = gemmlab::blas::sgemv_info(t, m, n, lda, incx, incy) == 0;
  if (valid && (m == 0 || n == 0)) return;
  const int64_t work = valid && alpha != 0.0f ? m * n : 0;
  route("sgemv", std::to_string(m) + "x" + std::to_string(n) + " " + t, work, settings().sgemv_threshold,
        [&] { gemmlab::blas::sgemv_on_gpu(t, m, n, alpha, a, lda, x, incx, beta, y, incy); }, cpu);
}

// CBLAS's enums as BLAS's characters; '?' for a value that is not one (OpenBLAS reports it).
char trans_char(CBLAS_TRANSPOSE t) {
  return t == CblasNoTrans ? 'N' : t == CblasTrans ? 'T' : t == CblasConjTrans ? 'C' : '?';
}
char flipped(char t) { return t == 'N' ? 'T' : t == '?' ? '?' : 'N'; }

// Row-major C = op(A)·op(B) is column-major Cᵀ = op(B)ᵀ·op(A)ᵀ: the same memory, operands swapped.
template <class Int, class Cpu>
void cblas_sgemm_any(CBLAS_ORDER order, CBLAS_TRANSPOSE trans_a, CBLAS_TRANSPOSE trans_b, Int m, Int n, Int k,
                     float alpha, const float* a, Int lda, const float* b, Int ldb, float beta, float* c, Int ldc,
                     Cpu cpu) {
  const char ta = trans_char(trans_a), tb = trans_char(trans_b);
  if (order == CblasColMajor) sgemm_col(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, cpu);
  else if (order == CblasRowMajor) sgemm_col(tb, ta, n, m, k, alpha, b, ldb, a, lda, beta, c, ldc, cpu);
  else cpu();
}

// Row-major A (m x n) is column-major Aᵀ (n x m): the transpose flips.
template <class Int, class Cpu>
void cblas_sgemv_any(CBLAS_ORDER order, CBLAS_TRANSPOSE trans, Int m, Int n, float alpha, const float* a, Int lda,
                     const float* x, Int incx, float beta, float* y, Int incy, Cpu cpu) {
  const char t = trans_char(trans);
  if (order == CblasColMajor) sgemv_col(t, m, n, alpha, a, lda, x, incx, beta, y, incy, cpu);
  else if (order == CblasRowMajor) sgemv_col(flipped(t), n, m, alpha, a, lda, x, incx, beta, y, incy, cpu);
  else cpu();
}

}  // namespace

using sgemm_fn = void (*)(const char*, const char*, const int*, const int*, const int*, const float*, const float*,
                          const int*, const float*, const int*, const float*, float*, const int*, size_t, size_t);
using sgemv_fn = void (*)(const char*, const int*, const int*, const float*, const float*, const int*, const float*,
                          const int*, const float*, float*, const int*, size_t);

GEMMLAB_BLAS_EXPORT void sgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k,
                                const float* alpha, const float* a, const int* lda, const float* b, const int* ldb,
                                const float* beta, float* c, const int* ldc, size_t len_a, size_t len_b) {
  sgemm_col(*transa, *transb, *m, *n, *k, *alpha, a, *lda, b, *ldb, *beta, c, *ldc, [&] {
    static const auto f = openblas<sgemm_fn>("sgemm_");
    f(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, len_a, len_b);
  });
}

GEMMLAB_BLAS_EXPORT void sgemv_(const char* trans, const int* m, const int* n, const float* alpha, const float* a,
                                const int* lda, const float* x, const int* incx, const float* beta, float* y,
                                const int* incy, size_t len) {
  sgemv_col(*trans, *m, *n, *alpha, a, *lda, x, *incx, *beta, y, *incy, [&] {
    static const auto f = openblas<sgemv_fn>("sgemv_");
    f(trans, m, n, alpha, a, lda, x, incx, beta, y, incy, len);
  });
}

GEMMLAB_BLAS_EXPORT void cblas_sgemm(const enum CBLAS_ORDER order, const enum CBLAS_TRANSPOSE trans_a,
                                     const enum CBLAS_TRANSPOSE trans_b, const blasint m, const blasint n,
                                     const blasint k, const float alpha, const float* a, const blasint lda,
                                     const float* b, const blasint ldb, const float beta, float* c, const blasint ldc) {
  cblas_sgemm_any(order, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, [&] {
    static const auto f = openblas<decltype(&cblas_sgemm)>("cblas_sgemm");
    f(order, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  });
}

GEMMLAB_BLAS_EXPORT void cblas_sgemv(const enum CBLAS_ORDER order, const enum CBLAS_TRANSPOSE trans, const blasint m,
                                     const blasint n, const float alpha, const float* a, const blasint lda,
                                     const float* x, const blasint incx, const float beta, float* y,
                                     const blasint incy) {
  cblas_sgemv_any(order, trans, m, n, alpha, a, lda, x, incx, beta, y, incy, [&] {
    static const auto f = openblas<decltype(&cblas_sgemv)>("cblas_sgemv");
    f(order, trans, m, n, alpha, a, lda, x, incx, beta, y, incy);
  });
}

// The ILP64 names of NumPy's and SciPy's wheels.
GEMMLAB_BLAS_EXPORT void scipy_cblas_sgemm64_(CBLAS_ORDER order, CBLAS_TRANSPOSE trans_a, CBLAS_TRANSPOSE trans_b,
                                              int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                                              int64_t lda, const float* b, int64_t ldb, float beta, float* c,
                                              int64_t ldc) {
  cblas_sgemm_any(order, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, [&] {
    static const auto f = reinterpret_cast<decltype(&scipy_cblas_sgemm64_)>(
        other_definition("scipy_cblas_sgemm64_", reinterpret_cast<void*>(&scipy_cblas_sgemm64_)));
    f(order, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  });
}

GEMMLAB_BLAS_EXPORT void scipy_cblas_sgemv64_(CBLAS_ORDER order, CBLAS_TRANSPOSE trans, int64_t m, int64_t n,
                                              float alpha, const float* a, int64_t lda, const float* x, int64_t incx,
                                              float beta, float* y, int64_t incy) {
  cblas_sgemv_any(order, trans, m, n, alpha, a, lda, x, incx, beta, y, incy, [&] {
    static const auto f = reinterpret_cast<decltype(&scipy_cblas_sgemv64_)>(
        other_definition("scipy_cblas_sgemv64_", reinterpret_cast<void*>(&scipy_cblas_sgemv64_)));
    f(order, trans, m, n, alpha, a, lda, x, incx, beta, y, incy);
  });
}
