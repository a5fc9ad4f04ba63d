#include <cmath>

#include "verify/verify.hpp"

namespace gemmlab {

namespace {

// Copies op(X) (rows × cols, element (r, c) at x[s.at(r, c)]) into a contiguous row-major array.
std::vector<float> gather(const float* x, Strides s, int64_t rows, int64_t cols) {
  std::vector<float> out(static_cast<size_t>(rows * cols));
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) out[size_t(r * cols + c)] = x[s.at(r, c)];
  return out;
}

std::vector<double> row_norms(const std::vector<float>& x, int64_t rows, int64_t cols) {
  std::vector<double> out(static_cast<size_t>(rows));
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    double s = 0;
    for (int64_t c = 0; c < cols; ++c) s += double(x[size_t(r * cols + c)]) * x[size_t(r * cols + c)];
    out[size_t(r)] = std::sqrt(s);
  }
  return out;
}

}  // namespace

Reference::Reference(const Problem& p, const float* a, const float* b, const float* c0)
    : p_(p),
      a_rows_(gather(a, op_a_strides(p), p.m, p.k)),
      // op(B)ᵀ(j, k) = op(B)(k, j): swap the strides.
      b_cols_(gather(b, Strides{op_b_strides(p).col, op_b_strides(p).row}, p.n, p.k)),
      a_norm_(row_norms(a_rows_, p.m, p.k)),
      b_norm_(row_norms(b_cols_, p.n, p.k)),
      c0_(p.beta != 0.0f ? c0 : nullptr),
      c_(c_strides(p)) {}

Reference::Element Reference::element(int64_t i, int64_t j) const {
  const float* a = a_rows_.data() + i * p_.k;
  const float* b = b_cols_.data() + j * p_.k;
  double acc = 0, mag = 0;
  for (int64_t k = 0; k < p_.k; ++k) {
    const double t = double(a[k]) * double(b[k]);
    acc += t;
    mag += std::fabs(t);
  }
  Element e{double(p_.alpha) * acc, std::fabs(double(p_.alpha)) * mag};
  if (c0_) {
    const double c = double(c0_[c_.at(i, j)]);
    e.value += double(p_.beta) * c;
    e.magnitude += std::fabs(double(p_.beta)) * std::fabs(c);
  }
  return e;
}

double Reference::scale(int64_t i, int64_t j) const {
  double s = std::fabs(double(p_.alpha)) * a_norm_[size_t(i)] * b_norm_[size_t(j)];
  if (c0_) s += std::fabs(double(p_.beta)) * std::fabs(double(c0_[c_.at(i, j)]));
  return s;
}

std::vector<double> reference_gemm(const Problem& p, const float* a, const float* b, const float* c0) {
  Reference ref(p, a, b, c0);
  std::vector<double> out(static_cast<size_t>(p.m * p.n));
#pragma omp parallel for schedule(dynamic, 16)
  for (int64_t i = 0; i < p.m; ++i)
    for (int64_t j = 0; j < p.n; ++j) out[size_t(i * p.n + j)] = ref.value(i, j);
  return out;
}

}  // namespace gemmlab
