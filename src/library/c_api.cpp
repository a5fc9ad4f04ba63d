// The C ABI (include/gemmlab/gemmlab.h) over gemmlab::sgemm / sgemv: enum values checked, the
// arguments checked by the same rules as the C++ calls before any CUDA call, exceptions turned
// into statuses with their message kept per thread.
#include "gemmlab/gemmlab.h"

#include <string>

#include "gemmlab/error.hpp"
#include "gemmlab/gemmlab.hpp"

namespace gemmlab {
const char* build_commit();
}

namespace {

thread_local std::string last_error;

gemmlab::Layout layout_of(gemmlab_layout l) {
  if (l == GEMMLAB_ROW_MAJOR) return gemmlab::Layout::row_major;
  if (l == GEMMLAB_COL_MAJOR) return gemmlab::Layout::col_major;
  throw gemmlab::UsageError("layout " + std::to_string(int(l)) + " is not GEMMLAB_ROW_MAJOR (101) or GEMMLAB_COL_MAJOR (102)");
}

gemmlab::Trans trans_of(gemmlab_trans t, const char* which) {
  if (t == GEMMLAB_NO_TRANS) return gemmlab::Trans::no;
  if (t == GEMMLAB_TRANS || t == GEMMLAB_CONJ_TRANS) return gemmlab::Trans::yes;  // real data
  throw gemmlab::UsageError(std::string(which) + " " + std::to_string(int(t)) + " is not 111, 112 or 113");
}

gemmlab::MathMode math_of(gemmlab_math m) {
  switch (m) {
    case GEMMLAB_STRICT_FP32: return gemmlab::MathMode::strict_fp32;
    case GEMMLAB_TENSOR_FP32: return gemmlab::MathMode::tensor_fp32;
    case GEMMLAB_TF32: return gemmlab::MathMode::tf32;
  }
  throw gemmlab::UsageError("math mode " + std::to_string(int(m)) + " is not 0, 1 or 2");
}

template <class Call>
gemmlab_status guarded(const char* name, Call call) {
  try {
    call();
    return GEMMLAB_SUCCESS;
  } catch (const gemmlab::UsageError& e) {
    last_error = std::string(name) + ": " + e.what();
    return GEMMLAB_INVALID_ARGUMENT;
  } catch (const std::runtime_error& e) {  // RuntimeError, NoDeviceError
    last_error = std::string(name) + ": " + e.what();
    return GEMMLAB_RUNTIME_ERROR;
  } catch (const std::exception& e) {
    last_error = std::string(name) + ": " + e.what();
    return GEMMLAB_INTERNAL_ERROR;
  } catch (...) {
    last_error = std::string(name) + ": an unknown exception";
    return GEMMLAB_INTERNAL_ERROR;
  }
}

}  // namespace

extern "C" gemmlab_status gemmlab_sgemm(gemmlab_layout layout, gemmlab_trans trans_a, gemmlab_trans trans_b,
                                        int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                                        const float* b, int64_t ldb, float beta, float* c, int64_t ldc, void* stream,
                                        gemmlab_math math) {
  return guarded("gemmlab_sgemm", [&] {
    const auto l = layout_of(layout);
    const auto ta = trans_of(trans_a, "trans_a"), tb = trans_of(trans_b, "trans_b");
    const auto mm = math_of(math);
    if (m < 0 || n < 0) throw gemmlab::UsageError("M and N must not be negative");
    if (m == 0 || n == 0) return;
    gemmlab::check_sgemm(l, ta, tb, m, n, k, a, lda, b, ldb, c, ldc);
    gemmlab::sgemm(l, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, static_cast<cudaStream_t>(stream), mm);
  });
}

extern "C" gemmlab_status gemmlab_sgemv(gemmlab_layout layout, gemmlab_trans trans, int64_t m, int64_t n,
                                        float alpha, const float* a, int64_t lda, const float* x, int64_t incx,
                                        float beta, float* y, int64_t incy, void* stream) {
  return guarded("gemmlab_sgemv", [&] {
    const auto l = layout_of(layout);
    const auto t = trans_of(trans, "trans");
    if (m < 0 || n < 0) throw gemmlab::UsageError("M and N must not be negative");
    if (m == 0 || n == 0) return;
    gemmlab::check_sgemv(l, t, m, n, a, lda, x, incx, y, incy);
    gemmlab::sgemv(l, t, m, n, alpha, a, lda, x, incx, beta, y, incy, static_cast<cudaStream_t>(stream));
  });
}

extern "C" gemmlab_status gemmlab_workspace_bytes_held(size_t* bytes) {
  return guarded("gemmlab_workspace_bytes_held", [&] {
    if (!bytes) throw gemmlab::UsageError("bytes must not be null");
    *bytes = gemmlab::workspace_bytes_held();
  });
}

extern "C" gemmlab_status gemmlab_workspace_limit(size_t* bytes) {
  return guarded("gemmlab_workspace_limit", [&] {
    if (!bytes) throw gemmlab::UsageError("bytes must not be null");
    *bytes = gemmlab::workspace_limit();
  });
}

extern "C" gemmlab_status gemmlab_set_workspace_limit(size_t bytes) {
  return guarded("gemmlab_set_workspace_limit", [&] { gemmlab::set_workspace_limit(bytes); });
}

extern "C" gemmlab_status gemmlab_release_workspaces(void) {
  return guarded("gemmlab_release_workspaces", [] { gemmlab::release_workspaces(); });
}

extern "C" const char* gemmlab_last_error(void) { return last_error.c_str(); }

extern "C" const char* gemmlab_version(void) {
  static const std::string v = std::string(GEMMLAB_VERSION_STRING) + " (" + gemmlab::build_commit() + ")";
  return v.c_str();
}
