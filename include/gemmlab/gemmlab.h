/* gemmlab's C ABI: the library's products for C, ctypes, Julia's ccall and Fortran's iso_c_binding.
 *
 *   gemmlab_status s = gemmlab_sgemm(GEMMLAB_ROW_MAJOR, GEMMLAB_NO_TRANS, GEMMLAB_NO_TRANS, m, n, k,
 *                                    1.0f, a, lda, b, ldb, 0.0f, c, ldc, stream, GEMMLAB_STRICT_FP32);
 *   if (s != GEMMLAB_SUCCESS) fprintf(stderr, "%s\n", gemmlab_last_error());
 *
 * The same operations, rules and math modes as gemmlab::sgemm / gemmlab::sgemv (gemmlab.hpp):
 * pointers are device memory, the call enqueues on `stream` (a cudaStream_t; NULL is the legacy
 * default stream) and returns. Layout and transpose values are CBLAS's (101/102, 111/112/113;
 * conjugate transpose is transpose for real data). No exception crosses this interface: every
 * call returns a status, and gemmlab_last_error() gives the failed call's one-line message (kept
 * per thread until its next failing call). Arguments are checked before any CUDA call. */
#ifndef GEMMLAB_H
#define GEMMLAB_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  GEMMLAB_SUCCESS = 0,
  GEMMLAB_INVALID_ARGUMENT = 1, /* sizes, leading dimensions, increments, null pointers, enum values */
  GEMMLAB_RUNTIME_ERROR = 2,    /* CUDA, compiler or memory failure, no GPU */
  GEMMLAB_INTERNAL_ERROR = 3    /* anything else (a bug: please report the message) */
} gemmlab_status;

typedef enum { GEMMLAB_ROW_MAJOR = 101, GEMMLAB_COL_MAJOR = 102 } gemmlab_layout;
typedef enum { GEMMLAB_NO_TRANS = 111, GEMMLAB_TRANS = 112, GEMMLAB_CONJ_TRANS = 113 } gemmlab_trans;
/* strict FP32 on the CUDA cores; FP32-accurate 3xTF32 on the tensor cores; one TF32 product. */
typedef enum { GEMMLAB_STRICT_FP32 = 0, GEMMLAB_TENSOR_FP32 = 1, GEMMLAB_TF32 = 2 } gemmlab_math;

/* C = alpha * op(A) * op(B) + beta * C; op(A) m x k, op(B) k x n. */
gemmlab_status gemmlab_sgemm(gemmlab_layout layout, gemmlab_trans trans_a, gemmlab_trans trans_b, int64_t m,
                             int64_t n, int64_t k, float alpha, const float* a, int64_t lda, const float* b,
                             int64_t ldb, float beta, float* c, int64_t ldc, void* stream, gemmlab_math math);

/* y = alpha * op(A) * x + beta * y, A stored m x n; increments of 1 or more. */
gemmlab_status gemmlab_sgemv(gemmlab_layout layout, gemmlab_trans trans, int64_t m, int64_t n, float alpha,
                             const float* a, int64_t lda, const float* x, int64_t incx, float beta, float* y,
                             int64_t incy, void* stream);

/* The library's device memory (gemmlab::workspace_bytes_held and the rest in gemmlab.hpp): each stream
 * the library has seen keeps one workspace, and a captured graph keeps its own until it is destroyed;
 * all of it stays under a limit (default: an eighth of the device's memory), and a call whose plan
 * would pass it runs a plan that needs none. A limit of 0 means no workspace at all. */
gemmlab_status gemmlab_workspace_bytes_held(size_t* bytes);
gemmlab_status gemmlab_workspace_limit(size_t* bytes);
gemmlab_status gemmlab_set_workspace_limit(size_t bytes);
/* Waits for each stream's last call, then frees its workspace. */
gemmlab_status gemmlab_release_workspaces(void);
/* The message of this thread's last failed call ("" before any). */
const char* gemmlab_last_error(void);
/* "0.1.0 (commit)". */
const char* gemmlab_version(void);

#ifdef __cplusplus
}
#endif

#endif /* GEMMLAB_H */
