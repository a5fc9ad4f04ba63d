/* The drop-in's CBLAS entries against OpenBLAS's own: both orders, all transposes, padded leading
 * dimensions, negative increments, alpha/beta; the result must match within the FP32 tolerance and
 * nothing outside C (or y) may change. Run with GEMMLAB_BLAS_THRESHOLD=0 it checks the GPU path. */
#include <cblas.h>
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef void (*sgemm_fn)(enum CBLAS_ORDER, enum CBLAS_TRANSPOSE, enum CBLAS_TRANSPOSE, blasint, blasint, blasint,
                         float, const float*, blasint, const float*, blasint, float, float*, blasint);
typedef void (*sgemv_fn)(enum CBLAS_ORDER, enum CBLAS_TRANSPOSE, blasint, blasint, float, const float*, blasint,
                         const float*, blasint, float, float*, blasint);

static float* random_buffer(size_t n) {
  float* p = malloc(n * sizeof(float));
  for (size_t i = 0; i < n; ++i) p[i] = (float)rand() / RAND_MAX * 2.0f - 1.0f;
  return p;
}

static int failures = 0, checks = 0;

/* Every element, padding included: within tol·(k+1) of OpenBLAS's (inputs in [-1, 1]). */
static void compare(const char* what, const float* ours, const float* theirs, size_t n, int k) {
  const double tol = 1.2e-7 * (4 + 2 * sqrt((double)k)) * (k + 2);
  ++checks;
  for (size_t i = 0; i < n; ++i)
    if (!(fabs((double)ours[i] - theirs[i]) <= tol)) {
      printf("FAIL %s: element %zu is %g, OpenBLAS %g\n", what, i, ours[i], theirs[i]);
      ++failures;
      return;
    }
}

int main(void) {
  void* openblas = dlopen("libopenblas.so.0", RTLD_LAZY);
  if (!openblas) {
    printf("cannot open libopenblas.so.0: %s\n", dlerror());
    return 1;
  }
  sgemm_fn ref_gemm = (sgemm_fn)dlsym(openblas, "cblas_sgemm");
  sgemv_fn ref_gemv = (sgemv_fn)dlsym(openblas, "cblas_sgemv");
  const enum CBLAS_ORDER orders[] = {CblasRowMajor, CblasColMajor};
  const enum CBLAS_TRANSPOSE trans[] = {CblasNoTrans, CblasTrans, CblasConjTrans};
  const int shapes[][3] = {{7, 5, 3}, {33, 17, 65}, {1, 40, 9}, {40, 1, 9}, {300, 200, 150}};
  char what[128];
  for (int o = 0; o < 2; ++o)
    for (int s = 0; s < 5; ++s)
      for (int ta = 0; ta < 3; ++ta)
        for (int tb = 0; tb < 2; ++tb) {
          const int m = shapes[s][0], n = shapes[s][1], k = shapes[s][2], pad = 3;
          const int row = orders[o] == CblasRowMajor;
          const int a_rows = (ta == 0) == row ? m : k, a_cols = (ta == 0) == row ? k : m;  /* stored lines x length */
          const int b_rows = (tb == 0) == row ? k : n, b_cols = (tb == 0) == row ? n : k;
          const int c_rows = row ? m : n, c_cols = row ? n : m;
          const int lda = a_cols + pad, ldb = b_cols + pad, ldc = c_cols + pad;
          float* a = random_buffer((size_t)a_rows * lda);
          float* b = random_buffer((size_t)b_rows * ldb);
          float* c = random_buffer((size_t)c_rows * ldc);
          float* c_ref = malloc((size_t)c_rows * ldc * sizeof(float));
          for (size_t i = 0; i < (size_t)c_rows * ldc; ++i) c_ref[i] = c[i];
          const float alpha = 0.75f, beta = s % 2 ? 0.0f : -1.25f;
          cblas_sgemm(orders[o], trans[ta], trans[tb], m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
          ref_gemm(orders[o], trans[ta], trans[tb], m, n, k, alpha, a, lda, b, ldb, beta, c_ref, ldc);
          snprintf(what, sizeof what, "cblas_sgemm %s %dx%dx%d trans %d%d", row ? "row" : "col", m, n, k, ta, tb);
          compare(what, c, c_ref, (size_t)c_rows * ldc, k);
          free(a), free(b), free(c), free(c_ref);
        }
  const int incs[] = {1, 2, -1, -3};
  for (int o = 0; o < 2; ++o)
    for (int t = 0; t < 2; ++t)
      for (int i = 0; i < 4; ++i) {
        const int m = 301, n = 123, lda = (orders[o] == CblasRowMajor ? n : m) + 5;
        const int len_x = t ? m : n, len_y = t ? n : m, incx = incs[i], incy = incs[3 - i];
        float* a = random_buffer((size_t)lda * (orders[o] == CblasRowMajor ? m : n));
        float* x = random_buffer((size_t)len_x * abs(incx));
        float* y = random_buffer((size_t)len_y * abs(incy));
        float* y_ref = malloc((size_t)len_y * abs(incy) * sizeof(float));
        for (size_t j = 0; j < (size_t)len_y * abs(incy); ++j) y_ref[j] = y[j];
        cblas_sgemv(orders[o], trans[t], m, n, 1.5f, a, lda, x, incx, 0.5f, y, incy);
        ref_gemv(orders[o], trans[t], m, n, 1.5f, a, lda, x, incx, 0.5f, y_ref, incy);
        snprintf(what, sizeof what, "cblas_sgemv %s trans %d incx %d incy %d", o ? "col" : "row", t, incx, incy);
        compare(what, y, y_ref, (size_t)len_y * abs(incy), len_x);
        free(a), free(x), free(y), free(y_ref);
      }
  printf("%d of %d comparisons with OpenBLAS passed\n", checks - failures, checks);
  return failures ? 1 : 0;
}
