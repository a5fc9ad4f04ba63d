// Host-memory products on the GPU for the BLAS drop-in.
#include "blas/offload.hpp"

#include <algorithm>
#include <charconv>
#include <climits>
#include <cstring>
#include <mutex>
#include <vector>

#include <cuda_runtime.h>

#include "gemmlab/error.hpp"

namespace gemmlab::blas {
namespace {

char upper(char c) { return (c >= 'a' && c <= 'z') ? char(c - 'a' + 'A') : c; }
bool is_no_trans(char t) { return upper(t) == 'N'; }

bool parse_count(const char* text, int64_t& out) {
  const char* end = text + std::strlen(text);
  int64_t v = 0;
  auto [p, ec] = std::from_chars(text, end, v);
  if (ec != std::errc() || p != end || v < 0) return false;
  out = v;
  return true;
}

// One device buffer and one stream for the process: BLAS callers are usually one thread, and the
// copies dominate, so calls are serialised rather than given buffers each.
struct Staging {
  std::mutex mutex;
  cudaStream_t stream = nullptr;
  float* buffer = nullptr;
  size_t floats = 0;

  // Three parts of `sizes` floats, each starting 16-byte aligned.
  std::vector<float*> parts(std::initializer_list<size_t> sizes) {
    size_t total = 0;
    for (size_t s : sizes) total += (s + 3) / 4 * 4;
    if (!stream) GEMMLAB_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    if (total > floats) {
      if (buffer) GEMMLAB_CUDA(cudaFree(buffer));
      buffer = nullptr;
      floats = 0;
      GEMMLAB_CUDA(cudaMalloc(&buffer, total * sizeof(float)));
      floats = total;
    }
    std::vector<float*> out;
    float* at = buffer;
    for (size_t s : sizes) {
      out.push_back(at);
      at += (s + 3) / 4 * 4;
    }
    return out;
  }
};

Staging& staging() {
  static Staging* s = new Staging;  // never destroyed: the CUDA runtime may be gone at exit
  return *s;
}

// Copies a rows x cols column-major block between pitches (in floats).
void copy_block(float* dst, int64_t dst_ld, const float* src, int64_t src_ld, int64_t rows, int64_t cols,
                cudaMemcpyKind kind, cudaStream_t stream) {
  GEMMLAB_CUDA(cudaMemcpy2DAsync(dst, size_t(dst_ld) * sizeof(float), src, size_t(src_ld) * sizeof(float),
                                 size_t(rows) * sizeof(float), size_t(cols), kind, stream));
}

// BLAS reads a vector with a negative increment from its end: element i is at (len - 1 - i)·|inc|.
int64_t vector_offset(int64_t i, int64_t len, int64_t inc) { return inc > 0 ? i * inc : (len - 1 - i) * -inc; }

}  // namespace

bool is_trans(char t) { return upper(t) == 'T' || upper(t) == 'C'; }

int sgemm_info(char trans_a, char trans_b, int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb, int64_t ldc) {
  const int64_t rows_a = is_no_trans(trans_a) ? m : k, rows_b = is_no_trans(trans_b) ? k : n;
  if (!is_no_trans(trans_a) && !is_trans(trans_a)) return 1;
  if (!is_no_trans(trans_b) && !is_trans(trans_b)) return 2;
  if (m < 0) return 3;
  if (n < 0) return 4;
  if (k < 0) return 5;
  if (lda < std::max<int64_t>(1, rows_a)) return 8;
  if (ldb < std::max<int64_t>(1, rows_b)) return 10;
  if (ldc < std::max<int64_t>(1, m)) return 13;
  return 0;
}

int sgemv_info(char trans, int64_t m, int64_t n, int64_t lda, int64_t incx, int64_t incy) {
  if (!is_no_trans(trans) && !is_trans(trans)) return 1;
  if (m < 0) return 2;
  if (n < 0) return 3;
  if (lda < std::max<int64_t>(1, m)) return 6;
  if (incx == 0) return 8;
  if (incy == 0) return 11;
  return 0;
}

Settings parse_settings(const char* (*get)(const char*)) {
  Settings s;
  auto count = [&](const char* name, int64_t& out) {
    const char* v = get(name);
    if (!v) return;
    if (!parse_count(v, out))
      s.warnings += std::string("gemmlab BLAS: ignoring ") + name + "=" + v + " (not a count of multiply-adds >= 0)\n";
  };
  int64_t both = -1;
  count("GEMMLAB_BLAS_THRESHOLD", both);
  if (both >= 0) s.sgemm_threshold = s.sgemv_threshold = both;
  count("GEMMLAB_BLAS_SGEMM_THRESHOLD", s.sgemm_threshold);
  count("GEMMLAB_BLAS_SGEMV_THRESHOLD", s.sgemv_threshold);
  if (const char* m = get("GEMMLAB_BLAS_MATH")) {
    const std::string v = m;
    if (v == "strict_fp32") s.math = MathMode::strict_fp32;
    else if (v == "tensor_fp32") s.math = MathMode::tensor_fp32;
    else if (v == "tf32") s.math = MathMode::tf32;
    else s.warnings += "gemmlab BLAS: ignoring GEMMLAB_BLAS_MATH=" + v + " (strict_fp32, tensor_fp32 or tf32)\n";
  }
  if (const char* v = get("GEMMLAB_BLAS_VERBOSE")) s.verbose = std::string(v) != "" && std::string(v) != "0";
  return s;
}

bool gpu_present() {
  static const bool present = [] {
    int count = 0;
    return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
  }();
  return present;
}

void sgemm_on_gpu(char trans_a, char trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                  int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc, MathMode math) {
  const bool ta = is_trans(trans_a), tb = is_trans(trans_b);
  const int64_t rows_a = ta ? k : m, cols_a = ta ? m : k, rows_b = tb ? n : k, cols_b = tb ? k : n;
  Staging& st = staging();
  std::lock_guard lock(st.mutex);
  auto p = st.parts({size_t(rows_a * cols_a), size_t(rows_b * cols_b), size_t(m * n)});
  copy_block(p[0], rows_a, a, lda, rows_a, cols_a, cudaMemcpyHostToDevice, st.stream);
  copy_block(p[1], rows_b, b, ldb, rows_b, cols_b, cudaMemcpyHostToDevice, st.stream);
  // beta = 0 means C is not read (it may hold NaN), as in BLAS.
  if (beta != 0.0f) copy_block(p[2], m, c, ldc, m, n, cudaMemcpyHostToDevice, st.stream);
  sgemm(Layout::col_major, ta ? Trans::yes : Trans::no, tb ? Trans::yes : Trans::no, m, n, k, alpha, p[0], rows_a,
        p[1], rows_b, beta, p[2], m, st.stream, math);
  copy_block(c, ldc, p[2], m, m, n, cudaMemcpyDeviceToHost, st.stream);
  GEMMLAB_CUDA(cudaStreamSynchronize(st.stream));
}

void sgemv_on_gpu(char trans, int64_t m, int64_t n, float alpha, const float* a, int64_t lda, const float* x,
                  int64_t incx, float beta, float* y, int64_t incy) {
  const bool t = is_trans(trans);
  const int64_t len_x = t ? m : n, len_y = t ? n : m;
  // Strided vectors are gathered on the host: the copy is the cost, not the gather.
  std::vector<float> xs(static_cast<size_t>(len_x)), ys(static_cast<size_t>(len_y));
  for (int64_t i = 0; i < len_x; ++i) xs[size_t(i)] = x[vector_offset(i, len_x, incx)];
  if (beta != 0.0f)
    for (int64_t i = 0; i < len_y; ++i) ys[size_t(i)] = y[vector_offset(i, len_y, incy)];
  Staging& st = staging();
  std::lock_guard lock(st.mutex);
  auto p = st.parts({size_t(m * n), size_t(len_x), size_t(len_y)});
  copy_block(p[0], m, a, lda, m, n, cudaMemcpyHostToDevice, st.stream);
  GEMMLAB_CUDA(cudaMemcpyAsync(p[1], xs.data(), xs.size() * sizeof(float), cudaMemcpyHostToDevice, st.stream));
  if (beta != 0.0f)
    GEMMLAB_CUDA(cudaMemcpyAsync(p[2], ys.data(), ys.size() * sizeof(float), cudaMemcpyHostToDevice, st.stream));
  sgemv(Layout::col_major, t ? Trans::yes : Trans::no, m, n, alpha, p[0], m, p[1], 1, beta, p[2], 1, st.stream);
  GEMMLAB_CUDA(cudaMemcpyAsync(ys.data(), p[2], ys.size() * sizeof(float), cudaMemcpyDeviceToHost, st.stream));
  GEMMLAB_CUDA(cudaStreamSynchronize(st.stream));
  for (int64_t i = 0; i < len_y; ++i) y[vector_offset(i, len_y, incy)] = ys[size_t(i)];
}

}  // namespace gemmlab::blas
