#include "gemmlab/problem.hpp"

#include <cmath>
#include <limits>
#include <sstream>

#include "gemmlab/error.hpp"

namespace gemmlab {

Problem Problem::square(int64_t n) {
  Problem p;
  p.m = p.n = p.k = n;
  return p;
}

Problem Problem::gemv(int64_t rows, int64_t cols, Layout layout, Trans trans) {
  Problem p;
  p.op = Op::gemv;
  p.layout = layout;
  p.trans_a = trans;
  p.m = trans == Trans::no ? rows : cols;
  p.k = trans == Trans::no ? cols : rows;
  p.n = 1;
  return p;
}

StoredMatrix stored_a(const Problem& p) {
  return p.trans_a == Trans::no ? StoredMatrix{p.m, p.k, p.lda, p.layout} : StoredMatrix{p.k, p.m, p.lda, p.layout};
}
StoredMatrix stored_b(const Problem& p) {
  return p.trans_b == Trans::no ? StoredMatrix{p.k, p.n, p.ldb, p.layout} : StoredMatrix{p.n, p.k, p.ldb, p.layout};
}
StoredMatrix stored_c(const Problem& p) { return StoredMatrix{p.m, p.n, p.ldc, p.layout}; }

namespace {

Strides stored_strides(const StoredMatrix& s, Trans t) {
  Strides st = s.layout == Layout::row_major ? Strides{s.ld, 1} : Strides{1, s.ld};
  return t == Trans::no ? st : Strides{st.col, st.row};
}

constexpr int64_t kMaxDim = std::numeric_limits<int32_t>::max();

void check_dim(const char* name, int64_t v) {
  if (v < 1) throw UsageError(std::string(name) + " must be at least 1, got " + std::to_string(v));
  if (v > kMaxDim)
    throw UsageError(std::string(name) + " = " + std::to_string(v) +
                     " exceeds 2^31-1, the largest size cuBLAS and OpenBLAS accept");
}

int64_t checked_bytes(const char* name, const StoredMatrix& s) {
  int64_t elems = 0, bytes = 0;
  if (__builtin_mul_overflow(s.lines() - 1, s.ld, &elems) || __builtin_add_overflow(elems, s.min_ld(), &elems) ||
      __builtin_mul_overflow(elems, int64_t(sizeof(float)), &bytes))
    throw UsageError(std::string("matrix ") + name + " of " + std::to_string(s.rows) + "x" + std::to_string(s.cols) +
                     " with leading dimension " + std::to_string(s.ld) + " overflows a 64-bit byte count");
  return bytes;
}

void check_ld(const char* name, const StoredMatrix& s) {
  if (s.ld < s.min_ld())
    throw UsageError(std::string("leading dimension of ") + name + " is " + std::to_string(s.ld) +
                     " but must be at least " + std::to_string(s.min_ld()) + " (" + to_string(s.layout) + " " +
                     std::to_string(s.rows) + "x" + std::to_string(s.cols) + ")");
  if (s.ld > kMaxDim)
    throw UsageError(std::string("leading dimension of ") + name + " exceeds 2^31-1");
}

}  // namespace

Problem normalized(Problem p) {
  check_dim("M", p.m);
  check_dim("N", p.n);
  check_dim("K", p.k);
  if (!std::isfinite(p.alpha)) throw UsageError("alpha must be finite");
  if (!std::isfinite(p.beta)) throw UsageError("beta must be finite");
  if (p.lda == 0) p.lda = stored_a(p).min_ld();
  if (p.ldb == 0) p.ldb = stored_b(p).min_ld();
  if (p.ldc == 0) p.ldc = stored_c(p).min_ld();
  check_ld("A", stored_a(p));
  check_ld("B", stored_b(p));
  check_ld("C", stored_c(p));
  if (p.op == Op::gemv) {
    // x and y are the one-column B and C: their only stride is the increment.
    if (p.n != 1) throw UsageError("a GEMV problem has N = 1 (y = op(A)·x), got N = " + std::to_string(p.n));
    if (p.trans_b != Trans::no) throw UsageError("a GEMV problem has no transpose of x");
    if (p.layout == Layout::row_major && (p.ldb != 1 || p.ldc != 1))
      throw UsageError("GEMV supports unit increments of x and y only (incx = incy = 1)");
  }
  int64_t total = 0;
  if (__builtin_add_overflow(checked_bytes("A", stored_a(p)), checked_bytes("B", stored_b(p)), &total) ||
      __builtin_add_overflow(total, checked_bytes("C", stored_c(p)), &total))
    throw UsageError("the buffers of " + describe(p) + " overflow a 64-bit byte count");
  return p;
}

Strides op_a_strides(const Problem& p) { return stored_strides(stored_a(p), p.trans_a); }
Strides op_b_strides(const Problem& p) { return stored_strides(stored_b(p), p.trans_b); }
Strides c_strides(const Problem& p) { return stored_strides(stored_c(p), Trans::no); }

double flops(const Problem& p) { return 2.0 * double(p.m) * double(p.n) * double(p.k); }

double min_bytes(const Problem& p) {
  double c_passes = p.beta == 0.0f ? 1.0 : 2.0;
  return sizeof(float) * (double(p.m) * p.k + double(p.k) * p.n + c_passes * double(p.m) * p.n);
}

int64_t buffer_bytes(const Problem& p) {
  return int64_t(sizeof(float)) * (stored_a(p).elements() + stored_b(p).elements() + stored_c(p).elements());
}

std::string to_string(Layout l) { return l == Layout::row_major ? "row" : "col"; }
std::string to_string(Trans t) { return t == Trans::no ? "n" : "t"; }
std::string to_string(Op o) { return o == Op::gemm ? "gemm" : "gemv"; }

Op parse_op(const std::string& s) {
  if (s == "gemm") return Op::gemm;
  if (s == "gemv") return Op::gemv;
  throw UsageError("unknown operation '" + s + "' (expected gemm or gemv)");
}

Layout parse_layout(const std::string& s) {
  if (s == "row" || s == "row-major") return Layout::row_major;
  if (s == "col" || s == "col-major" || s == "column-major") return Layout::col_major;
  throw UsageError("unknown layout '" + s + "' (expected row or col)");
}

Trans parse_trans(const std::string& s) {
  if (s == "n" || s == "N" || s == "no") return Trans::no;
  if (s == "t" || s == "T" || s == "yes") return Trans::yes;
  throw UsageError("unknown transpose '" + s + "' (expected n or t)");
}

std::string describe(const Problem& p) {
  std::ostringstream os;
  if (p.op == Op::gemv) {
    auto a = stored_a(p);
    os << "gemv " << a.rows << "x" << a.cols << " " << to_string(p.layout) << " " << (p.trans_a == Trans::no ? 'N' : 'T');
    return os.str();
  }
  os << p.m << "x" << p.n << "x" << p.k << " " << to_string(p.layout) << " " << (p.trans_a == Trans::no ? 'N' : 'T')
     << (p.trans_b == Trans::no ? 'N' : 'T');
  return os.str();
}

std::vector<int64_t> parse_shape(const std::string& s, Op op) {
  const size_t dims = op == Op::gemm ? 3 : 2;
  std::vector<int64_t> shape;
  std::stringstream ss(s);
  std::string part;
  while (std::getline(ss, part, 'x')) {
    try {
      if (s.back() == 'x') throw std::invalid_argument(s);
      size_t used = 0;
      shape.push_back(std::stoll(part, &used));
      if (used != part.size()) throw std::invalid_argument(part);
    } catch (const std::exception&) {
      throw UsageError("'" + s + "' is not an integer or a list like " + (op == Op::gemm ? "MxNxK" : "RxC"));
    }
  }
  if (shape.size() == 1) shape.assign(dims, shape[0]);
  if (shape.size() != dims)
    throw UsageError("'" + s + "' needs 1 or " + std::to_string(dims) + " dimensions for " + to_string(op));
  return shape;
}

Problem problem_of_shape(Op op, const std::vector<int64_t>& shape, Layout layout, Trans trans_a, Trans trans_b) {
  if (op == Op::gemv) return Problem::gemv(shape.at(0), shape.at(1), layout, trans_a);
  Problem p;
  p.m = shape.at(0), p.n = shape.at(1), p.k = shape.at(2);
  p.layout = layout;
  p.trans_a = trans_a;
  p.trans_b = trans_b;
  return p;
}

}  // namespace gemmlab
