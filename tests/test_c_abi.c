/* The C ABI from C: every argument rule gives its status and one-line message without a GPU;
 * with one, a product checked against a host reference. Prints "N passed, M failed". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "gemmlab/gemmlab.h"

static int passed = 0, failed = 0;

static void expect(int ok, const char* what) {
  if (ok) {
    ++passed;
  } else {
    ++failed;
    printf("FAILED: %s (last error: %s)\n", what, gemmlab_last_error());
  }
}

static void expect_refused(gemmlab_status s, const char* needle, const char* what) {
  expect(s == GEMMLAB_INVALID_ARGUMENT && strstr(gemmlab_last_error(), needle) != NULL, what);
}

int main(void) {
  float buf[64];
  const float* a = buf;
  float* c = buf;
  expect(strlen(gemmlab_version()) > 0, "version");
  expect_refused(gemmlab_sgemm((gemmlab_layout)7, GEMMLAB_NO_TRANS, GEMMLAB_NO_TRANS, 4, 4, 4, 1, a, 4, a, 4, 0, c, 4,
                               NULL, GEMMLAB_STRICT_FP32),
                 "layout 7", "bad layout");
  expect_refused(gemmlab_sgemm(GEMMLAB_ROW_MAJOR, (gemmlab_trans)0, GEMMLAB_NO_TRANS, 4, 4, 4, 1, a, 4, a, 4, 0, c, 4,
                               NULL, GEMMLAB_STRICT_FP32),
                 "trans_a 0", "bad transpose");
  expect_refused(gemmlab_sgemm(GEMMLAB_ROW_MAJOR, GEMMLAB_NO_TRANS, GEMMLAB_NO_TRANS, 4, 4, 4, 1, a, 4, a, 4, 0, c, 4,
                               NULL, (gemmlab_math)9),
                 "math mode 9", "bad math mode");
  expect_refused(gemmlab_sgemm(GEMMLAB_ROW_MAJOR, GEMMLAB_NO_TRANS, GEMMLAB_NO_TRANS, -1, 4, 4, 1, a, 4, a, 4, 0, c, 4,
                               NULL, GEMMLAB_STRICT_FP32),
                 "must not be negative", "negative M");
  expect_refused(gemmlab_sgemm(GEMMLAB_ROW_MAJOR, GEMMLAB_NO_TRANS, GEMMLAB_NO_TRANS, 4, 4, 4, 1, a, 2, a, 4, 0, c, 4,
                               NULL, GEMMLAB_STRICT_FP32),
                 "leading dimension of A is 2", "lda too small");
  expect_refused(gemmlab_sgemm(GEMMLAB_COL_MAJOR, GEMMLAB_TRANS, GEMMLAB_NO_TRANS, 4, 4, 0, 1, a, 4, a, 4, 0, c, 4,
                               NULL, GEMMLAB_TENSOR_FP32),
                 "K must be", "K = 0");
  expect_refused(gemmlab_sgemm(GEMMLAB_ROW_MAJOR, GEMMLAB_NO_TRANS, GEMMLAB_NO_TRANS, 4, 4, 4, 1, NULL, 4, a, 4, 0, c,
                               4, NULL, GEMMLAB_STRICT_FP32),
                 "must not be null", "null A");
  expect(gemmlab_sgemm(GEMMLAB_ROW_MAJOR, GEMMLAB_NO_TRANS, GEMMLAB_NO_TRANS, 0, 4, 4, 1, NULL, 4, NULL, 4, 0, NULL, 4,
                       NULL, GEMMLAB_STRICT_FP32) == GEMMLAB_SUCCESS,
         "M = 0 does nothing");
  expect_refused(gemmlab_sgemv(GEMMLAB_ROW_MAJOR, GEMMLAB_NO_TRANS, 4, 4, 1, a, 4, a, 0, 0, c, 1, NULL),
                 "increments must be at least 1", "incx = 0");
  expect_refused(gemmlab_sgemv(GEMMLAB_COL_MAJOR, GEMMLAB_CONJ_TRANS, 4, 4, 1, a, 3, a, 1, 0, c, 1, NULL),
                 "leading dimension of A is 3", "sgemv lda too small");
  expect_refused(gemmlab_workspace_bytes_held(NULL), "must not be null", "held into NULL");
  expect_refused(gemmlab_workspace_limit(NULL), "must not be null", "limit into NULL");
  {
    size_t limit = 0, held = 1;
    expect(gemmlab_set_workspace_limit(12345) == GEMMLAB_SUCCESS && gemmlab_workspace_limit(&limit) == GEMMLAB_SUCCESS &&
               limit == 12345,
           "the workspace limit set is the limit read");
    expect(gemmlab_release_workspaces() == GEMMLAB_SUCCESS && gemmlab_workspace_bytes_held(&held) == GEMMLAB_SUCCESS &&
               held == 0,
           "nothing held after release");
  }

  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    printf("no CUDA device: the GPU product is not run\n");
  } else {
    /* C (col-major 33 x 17) = Aᵀ·B with A stored 29 x 33, B 29 x 17, every mode. */
    enum { M = 33, N = 17, K = 29 };
    float ha[K * M], hb[K * N], hc[M * N];
    for (int i = 0; i < K * M; ++i) ha[i] = (float)((i * 7919 % 201) - 100) / 100.0f;
    for (int i = 0; i < K * N; ++i) hb[i] = (float)((i * 104729 % 199) - 99) / 99.0f;
    float *da, *db, *dc;
    cudaMalloc((void**)&da, sizeof ha);
    cudaMalloc((void**)&db, sizeof hb);
    cudaMalloc((void**)&dc, sizeof hc);
    cudaMemcpy(da, ha, sizeof ha, cudaMemcpyHostToDevice);
    cudaMemcpy(db, hb, sizeof hb, cudaMemcpyHostToDevice);
    for (int mode = 0; mode < 3; ++mode) {
      gemmlab_status s = gemmlab_sgemm(GEMMLAB_COL_MAJOR, GEMMLAB_TRANS, GEMMLAB_NO_TRANS, M, N, K, 1.0f, da, K, db, K,
                                       0.0f, dc, M, NULL, (gemmlab_math)mode);
      expect(s == GEMMLAB_SUCCESS, "sgemm on the GPU");
      cudaMemcpy(hc, dc, sizeof hc, cudaMemcpyDeviceToHost);
      double worst = 0;
      for (int j = 0; j < N; ++j)
        for (int i = 0; i < M; ++i) {
          double ref = 0;
          for (int p = 0; p < K; ++p) ref += (double)ha[i * K + p] * hb[j * K + p];
          double e = fabs(hc[j * M + i] - ref);
          if (!(e <= worst)) worst = e; /* NaN counts as worst */
        }
      expect(worst < (mode == 2 ? 2e-2 : 1e-4), mode == 2 ? "tf32 product" : "fp32 product");
    }
    cudaFree(da), cudaFree(db), cudaFree(dc);
  }
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
