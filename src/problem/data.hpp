#pragma once
// Seeded random inputs, generated on the GPU; the same values are reproducible on the host.
#include <cstdint>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "gemmlab/problem.hpp"

namespace gemmlab {

// uniform: (-1, 1), the default; normal: N(0, 1); positive: (0, 1];
// wide: ±(1..2)·2^e with e uniform in [-20, 20]. No distribution ever yields 0.
enum class Distribution { uniform, normal, positive, wide };

Distribution parse_distribution(const std::string& s);
std::string to_string(Distribution d);

// Element (r, c) of the stored matrix gets random_value(d, seed, r·cols + c), so the values do not
// depend on the leading dimension. Padding between rows (columns) is filled with NaN: a kernel
// that reads it poisons its result.
void fill_random(float* device_ptr, const StoredMatrix& m, Distribution d, uint64_t seed, cudaStream_t stream);

// The host twin of fill_random: the same buffer, computed on the CPU.
std::vector<float> random_host(const StoredMatrix& m, Distribution d, uint64_t seed);

// The host twin of the device generator (bit-identical for uniform and positive).
float random_value(Distribution d, uint64_t seed, uint64_t index);

// The poison value: a NaN with all bits set.
float poison_value();

// Sets every float of the buffer to a quiet NaN (all bits set), so an unwritten output fails.
void poison(float* device_ptr, int64_t elements, cudaStream_t stream);

}  // namespace gemmlab
