// Prints the library's choice for the shapes of issue 26 after different preludes (argv[1]).
#include <cstdio>
#include <cstring>
#include <cublas_v2.h>
#include "gemmlab/gemmlab.hpp"
int main(int argc, char** argv) {
  const char* prelude = argc > 1 ? argv[1] : "none";
  void* big = nullptr;
  cublasHandle_t h = nullptr;
  if (!strcmp(prelude, "cublas")) cublasCreate(&h);
  if (!strcmp(prelude, "alloc")) { size_t f, t; cudaMemGetInfo(&f, &t); cudaMalloc(&big, f - (size_t(2) << 30)); }
  if (!strcmp(prelude, "mallocasync")) { cudaStream_t s; cudaStreamCreate(&s); void* p; cudaMallocAsync(&p, 1 << 20, s); cudaFreeAsync(p, s); cudaStreamSynchronize(s); }
  long shapes[][3] = {{700, 320, 20000}, {96, 96, 60000}, {12288, 96, 4096}};
  for (auto& s : shapes) {
    gemmlab::Problem p{gemmlab::Op::gemm, s[0], s[1], s[2]};
    auto c = gemmlab::choose(p);
    std::printf("%s %ldx%ldx%ld: %s %s (%s) %s\n", prelude, s[0], s[1], s[2], c.family.c_str(), c.params.c_str(), c.source.c_str(), c.why.c_str());
  }
}
