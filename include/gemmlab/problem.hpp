#pragma once
// A GEMM problem: C = alpha * op(A) * op(B) + beta * C, with op(A) M×K, op(B) K×N, C M×N.
// A GEMV problem y = alpha * op(A) * x + beta * y is the same problem with N = 1 (x is B, y is C)
// and unit increments, marked op = gemv so that it is computed by GEMV kernels and cuBLAS SGEMV.
#include <cstdint>
#include <string>
#include <vector>

namespace gemmlab {

enum class Layout { row_major, col_major };
enum class Trans { no, yes };
enum class Op { gemm, gemv };

struct Problem {
  Op op = Op::gemm;
  int64_t m = 0, n = 0, k = 0;
  float alpha = 1.0f, beta = 0.0f;
  Layout layout = Layout::row_major;
  Trans trans_a = Trans::no, trans_b = Trans::no;
  int64_t lda = 0, ldb = 0, ldc = 0;  // 0: the tight value (the stored row length)

  // A square problem with tight leading dimensions.
  static Problem square(int64_t n);
  // y = op(A)·x with A stored rows × cols (BLAS's M × N) in `layout`, tight leading dimension.
  static Problem gemv(int64_t rows, int64_t cols, Layout layout, Trans trans);
};

// How one stored matrix is shaped: `rows` × `cols` in `layout`, `ld` elements between
// consecutive rows (row-major) or columns (column-major).
struct StoredMatrix {
  int64_t rows, cols, ld;
  Layout layout;
  int64_t min_ld() const { return layout == Layout::row_major ? cols : rows; }
  int64_t lines() const { return layout == Layout::row_major ? rows : cols; }
  // Elements the buffer must hold (the last line is not padded).
  int64_t elements() const { return (lines() - 1) * ld + min_ld(); }
  // Offset of element (r, c) of the stored matrix.
  int64_t at(int64_t r, int64_t c) const { return layout == Layout::row_major ? r * ld + c : c * ld + r; }
};

StoredMatrix stored_a(const Problem& p);
StoredMatrix stored_b(const Problem& p);
StoredMatrix stored_c(const Problem& p);

// Fills zero leading dimensions with their tight values, then checks every field.
// Throws UsageError with one line naming the broken rule.
Problem normalized(Problem p);

// The element strides of op(A)(i, k) and op(B)(k, j) and of C(i, j): every layout and
// transpose reduces to these, so references and simple kernels need no case analysis.
struct Strides {
  int64_t row, col;
  int64_t at(int64_t r, int64_t c) const { return r * row + c * col; }
};
Strides op_a_strides(const Problem& p);
Strides op_b_strides(const Problem& p);
Strides c_strides(const Problem& p);

double flops(const Problem& p);          // 2·M·N·K
double min_bytes(const Problem& p);      // each operand read once, C written once (and read if beta ≠ 0)
int64_t buffer_bytes(const Problem& p);  // A + B + C, as allocated

std::string to_string(Layout l);
std::string to_string(Trans t);
std::string to_string(Op o);
Op parse_op(const std::string& s);
Layout parse_layout(const std::string& s);
Trans parse_trans(const std::string& s);
// "S" (square) or "MxNxK" (gemm), "S" or "RxC" (gemv: the stored A's rows x columns) → the
// dimensions, 3 for gemm and 2 for gemv. Throws UsageError.
std::vector<int64_t> parse_shape(const std::string& text, Op op);
// The problem of such a shape (gemv: trans_b is ignored), tight leading dimensions, alpha 1, beta 0.
Problem problem_of_shape(Op op, const std::vector<int64_t>& shape, Layout layout, Trans trans_a, Trans trans_b);
std::string describe(const Problem& p);  // "M×N×K row NN", "gemv 1000x2000 col T" (A stored rows×cols)

}  // namespace gemmlab
