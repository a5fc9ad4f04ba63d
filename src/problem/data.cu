#include "problem/data.hpp"

#include "gemmlab/error.hpp"
#include "problem/random.hpp"

namespace gemmlab {

namespace {

__global__ void fill_kernel(float* out, int64_t elements, int64_t ld, int64_t line_len, bool row_major, int64_t cols,
                            int dist, uint64_t seed) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < elements; i += int64_t(gridDim.x) * blockDim.x)
    out[i] = detail::stored_value(i, ld, line_len, row_major, cols, dist, seed);
}

int grid_for(int64_t elements) {
  int64_t blocks = (elements + 255) / 256;
  return int(blocks < 65536 ? blocks : 65536);
}

}  // namespace

Distribution parse_distribution(const std::string& s) {
  if (s == "uniform") return Distribution::uniform;
  if (s == "normal") return Distribution::normal;
  if (s == "positive") return Distribution::positive;
  if (s == "wide") return Distribution::wide;
  throw UsageError("unknown distribution '" + s + "' (expected uniform, normal, positive or wide)");
}

std::string to_string(Distribution d) {
  switch (d) {
    case Distribution::normal: return "normal";
    case Distribution::positive: return "positive";
    case Distribution::wide: return "wide";
    default: return "uniform";
  }
}

void fill_random(float* device_ptr, const StoredMatrix& m, Distribution d, uint64_t seed, cudaStream_t stream) {
  int64_t elements = m.elements();
  fill_kernel<<<grid_for(elements), 256, 0, stream>>>(device_ptr, elements, m.ld, m.min_ld(),
                                                     m.layout == Layout::row_major, m.cols, int(d), seed);
  GEMMLAB_CUDA_LAUNCHED();
}

std::vector<float> random_host(const StoredMatrix& m, Distribution d, uint64_t seed) {
  std::vector<float> out(static_cast<size_t>(m.elements()));
  for (int64_t i = 0; i < m.elements(); ++i)
    out[size_t(i)] = detail::stored_value(i, m.ld, m.min_ld(), m.layout == Layout::row_major, m.cols, int(d), seed);
  return out;
}

float random_value(Distribution d, uint64_t seed, uint64_t index) { return detail::random_value(int(d), seed, index); }

float poison_value() { return detail::poison_nan(); }

void poison(float* device_ptr, int64_t elements, cudaStream_t stream) {
  GEMMLAB_CUDA(cudaMemsetAsync(device_ptr, 0xFF, size_t(elements) * sizeof(float), stream));
}

}  // namespace gemmlab
