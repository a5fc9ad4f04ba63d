#include "bench/averaging.hpp"

#include <cmath>
#include <functional>
#include <sstream>

#include "compile/compile.hpp"
#include "device/device.hpp"
#include "gemmlab/error.hpp"
#include "kernels/family.hpp"
#include "launch/module.hpp"
#include "launch/runner.hpp"
#include "verify/verify.hpp"

namespace gemmlab::embedded {
extern const char* const averaging_source;
}

namespace gemmlab {

namespace {

// The kernels' argument, as in averaging.cu.
struct AveragingArgs {
  const float* in;
  const float* w;
  float* out;
  float* means;
  long long L, M, N;
};

// The input is one (N·L) × M row-major matrix: row k·L + j holds element j of the M vectors
// of set k (seed 004's layout), so the generator's element index is the linear index.
StoredMatrix input_matrix(const AveragingShape& s) { return {s.n * s.l, s.m, s.m, Layout::row_major}; }
StoredMatrix w_matrix(const AveragingShape& s) { return {s.l, s.l, s.l, Layout::row_major}; }

// out (L × N row-major) in float64, and the magnitude each element's rounding error scales
// with: Σ_j |W_ij| · mean_i |x| over set k (the averaging's sum, then the dot product).
struct PipelineReference {
  std::vector<double> value, scale;
};

PipelineReference reference(const AveragingShape& s, Distribution d, uint64_t in_seed, const std::vector<float>& w) {
  std::vector<double> mean(size_t(s.n * s.l)), absmean(mean.size());
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < s.n * s.l; ++r) {
    double sum = 0, abs = 0;
    for (int64_t i = 0; i < s.m; ++i) {
      double v = random_value(d, in_seed, uint64_t(r * s.m + i));
      sum += v;
      abs += std::fabs(v);
    }
    mean[size_t(r)] = sum / double(s.m);
    absmean[size_t(r)] = abs / double(s.m);
  }
  PipelineReference ref{std::vector<double>(size_t(s.l * s.n)), std::vector<double>(size_t(s.l * s.n))};
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < s.l; ++i)
    for (int64_t k = 0; k < s.n; ++k) {
      double v = 0, sc = 0;
      for (int64_t j = 0; j < s.l; ++j) {
        double wij = w[size_t(i * s.l + j)];
        v += wij * mean[size_t(k * s.l + j)];
        sc += std::fabs(wij) * absmean[size_t(k * s.l + j)];
      }
      ref.value[size_t(i * s.n + k)] = v;
      ref.scale[size_t(i * s.n + k)] = sc;
    }
  return ref;
}

Verdict check(const PipelineReference& ref, const std::vector<float>& out, const AveragingShape& s) {
  Verdict v;
  v.method = "fp64-full";
  // The averaging adds M terms, the dot product L: the fp32 tolerance for a sum of M + L.
  v.tolerance = tolerance(Precision::fp32, s.m + s.l);
  double diff2 = 0, ref2 = 0;
  for (size_t e = 0; e < out.size(); ++e) {
    double err = std::fabs(double(out[e]) - ref.value[e]) / ref.scale[e];
    diff2 += (double(out[e]) - ref.value[e]) * (double(out[e]) - ref.value[e]);
    ref2 += ref.value[e] * ref.value[e];
    ++v.checked;
    if (!(err <= v.tolerance)) {  // NaN fails too
      if (v.failures++ == 0) {
        std::ostringstream os;
        os << "out(" << e / size_t(s.n) << "," << e % size_t(s.n) << ") = " << out[e] << ", expected "
           << ref.value[e];
        v.first_failure = os.str();
      }
    }
    if (std::isfinite(err)) v.max_err = std::max(v.max_err, err);
  }
  v.rel_norm_err = ref2 > 0 ? std::sqrt(diff2 / ref2) : 0;
  v.passed = v.failures == 0;
  return v;
}

float* device_alloc(size_t floats) {
  float* p = nullptr;
  GEMMLAB_CUDA(cudaMalloc(&p, floats * sizeof(float)));
  return p;
}

void launch(cudaKernel_t k, dim3 grid, dim3 block, size_t smem, AveragingArgs args, cudaStream_t stream) {
  void* params[] = {&args};
  GEMMLAB_CUDA(cudaLaunchKernel(reinterpret_cast<const void*>(k), grid, block, params, smem, stream));
}

}  // namespace

AveragingShape parse_averaging_shape(const std::string& text) {
  AveragingShape s;
  int64_t* dims[] = {&s.l, &s.m, &s.n};
  std::stringstream ss(text);
  std::string part;
  int n = 0;
  while (std::getline(ss, part, 'x')) {
    size_t used = 0;
    int64_t v = 0;
    try {
      v = std::stoll(part, &used);
    } catch (...) {
      used = 0;
    }
    if (n == 3 || used == 0 || used != part.size() || v < 1 || v > (1 << 20))
      throw UsageError("--average-shape '" + text + "' must be LxMxN with each from 1 to 2^20");
    *dims[n++] = v;
  }
  if (n != 3) throw UsageError("--average-shape '" + text + "' must be LxMxN");
  return s;
}

double averaging_input_bytes(const AveragingShape& s) { return 4.0 * double(s.n) * double(s.l) * double(s.m); }

bool run_averaging(const AveragingShape& s, Distribution d, uint64_t seed, const Ceilings& ceil, DeviceTimer& timer,
                   std::ostream& table, std::vector<Record>& records) {
  auto dev = query_device(0);
  const size_t in_floats = size_t(input_matrix(s).elements()), out_floats = size_t(s.l * s.n);
  size_t free = 0, total = 0;
  GEMMLAB_CUDA(cudaMemGetInfo(&free, &total));
  size_t need = 4 * (in_floats + size_t(s.l * s.l) + 2 * out_floats) + (size_t(512) << 20);
  if (need > free)
    throw UsageError("the averaging pipeline needs " + std::to_string(need >> 20) + " MiB of GPU memory, " +
                     std::to_string(free >> 20) + " MiB are free");
  if (size_t(s.l) * 4 > dev.smem_per_block_optin)
    throw UsageError("the averaging pipeline keeps L floats in shared memory: L = " + std::to_string(s.l) +
                     " is too large for this GPU");

  cudaStream_t stream = timer.stream();
  float* in = device_alloc(in_floats);
  float* w = device_alloc(size_t(s.l * s.l));
  float* out = device_alloc(out_floats);
  float* means = device_alloc(out_floats);
  struct Free {
    std::vector<float*> p;
    ~Free() {
      for (float* x : p) cudaFree(x);
    }
  } guard{{in, w, out, means}};
  const uint64_t in_seed = seed * 7 + 1, w_seed = seed * 7 + 2;
  fill_random(in, input_matrix(s), d, in_seed, stream);
  fill_random(w, w_matrix(s), d, w_seed, stream);
  GEMMLAB_CUDA(cudaStreamSynchronize(stream));
  PipelineReference ref = reference(s, d, in_seed, random_host(w_matrix(s), d, w_seed));

  const std::string arch = arch_name(dev.cc_major, dev.cc_minor);
  // v2 to v4 use the seed's 32 × 32 block; the averaging kernel of v5 a smaller one with
  // 16-byte loads, several in flight per lane.
  Module seed_blocks("averaging", embedded::averaging_source, {"-DWARPS=32", "-DUNROLL=1"}, arch);
  Module streaming("averaging", embedded::averaging_source, {"-DWARPS=8", "-DUNROLL=4"}, arch);
  const size_t mean_smem = size_t(s.l) * 4;
  for (const char* v : {"average_v2", "average_v3", "average_v4"})
    if (mean_smem > size_t(kStaticSharedLimit))
      GEMMLAB_CUDA(cudaKernelSetAttributeForDevice(seed_blocks.kernel(v), cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                   int(mean_smem), dev.ordinal));
  const AveragingArgs args{in, w, out, means, s.l, s.m, s.n};
  auto average_kernel = [&](cudaStream_t st) {
    launch(streaming.kernel("average_v5"), dim3(unsigned((s.n * s.l + 7) / 8)), dim3(256), 0, args, st);
  };
  // v5's GEMM: out (L × N) = W (L × L) · means (L × N), all row-major.
  Problem gemm = Problem::square(1);
  gemm.m = s.l;
  gemm.n = s.n;
  gemm.k = s.l;
  gemm = normalized(gemm);
  auto cublas = make_cublas_runner(Precision::fp32);
  auto warptiled = make_family_runner(*find_family("warptiled"), parse_params(*find_family("warptiled"), ""));
  auto with_gemm = [&](GemmRunner& r) {
    r.prepare(gemm);
    return [&, rp = &r](cudaStream_t st) {
      average_kernel(st);
      rp->run(gemm, {w, means, out}, st);
    };
  };

  struct Version {
    std::string name;
    std::function<void(cudaStream_t)> work;
    bool averaging_only = false;
  };
  std::vector<Version> versions = {
      {"average-v1",
       [&](cudaStream_t st) {
         launch(seed_blocks.kernel("average_v1"), dim3(unsigned((s.n + 127) / 128)), dim3(128), 0, args, st);
       }},
      {"average-v2", [&](cudaStream_t st) { launch(seed_blocks.kernel("average_v2"), dim3(unsigned(s.n)), dim3(1024), mean_smem, args, st); }},
      {"average-v3", [&](cudaStream_t st) { launch(seed_blocks.kernel("average_v3"), dim3(unsigned(s.n)), dim3(1024), mean_smem, args, st); }},
      {"average-v4", [&](cudaStream_t st) { launch(seed_blocks.kernel("average_v4"), dim3(unsigned(s.n)), dim3(1024), mean_smem, args, st); }},
      {"average-v5-kernel", average_kernel, true},
      {"average-v5+cublas", with_gemm(*cublas)},
      {"average-v5+warptiled", with_gemm(*warptiled)}};

  bool all_passed = true;
  double final_ms = 0;  // v5 with cuBLAS, the seed's last version: the ratio's denominator
  std::vector<Record> mine;
  for (auto& v : versions) {
    Record rec;
    rec.kernel = v.name;
    rec.precision = "fp32";
    rec.problem = gemm;
    rec.peak = "copy_gbps";
    rec.details = {{"pipeline", {{"L", s.l}, {"M", s.m}, {"N", s.n}}},
                   {"input_bytes", averaging_input_bytes(s)},
                   {"part", v.averaging_only ? "averaging kernel alone (writes the means)" : "whole pipeline"}};
    if (!v.averaging_only) {
      poison(out, int64_t(out_floats), stream);
      v.work(stream);
      GEMMLAB_CUDA_LAUNCHED();
      std::vector<float> host(out_floats);
      GEMMLAB_CUDA(cudaMemcpyAsync(host.data(), out, out_floats * 4, cudaMemcpyDeviceToHost, stream));
      GEMMLAB_CUDA(cudaStreamSynchronize(stream));
      rec.verdict = check(ref, host, s);
      rec.verified = true;
      rec.status = rec.verdict.passed ? "ok" : "failed";
      all_passed = all_passed && rec.verdict.passed;
    }
    rec.timing = timer.time(v.work);
    double sec = rec.timing.ms.median * 1e-3;
    // Work of the whole pipeline: N·L·M additions and 2·L·L·N flops of the products.
    rec.gflops = v.averaging_only ? double(s.n) * s.l * s.m / sec / 1e9
                                  : (double(s.n) * s.l * s.m + 2.0 * s.l * s.l * s.n) / sec / 1e9;
    rec.gbps = averaging_input_bytes(s) / sec / 1e9;
    rec.pct_peak = 100.0 * rec.gbps / ceil.copy_gbps;
    if (v.name == "average-v5+cublas") final_ms = rec.timing.ms.median;
    mine.push_back(std::move(rec));
  }
  for (auto& r : mine) {
    r.x_cublas = final_ms > 0 ? final_ms / r.timing.ms.median : 0;
    print_table_row(table, r);
    records.push_back(r);
  }
  return all_passed;
}

}  // namespace gemmlab
