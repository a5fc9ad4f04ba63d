// GPU tests (ctest label gpu). Each skips with its reason when no CUDA device is present.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <thread>
#include <random>

#include "gemmlab/bench.hpp"
#include "gemmlab/ceilings.hpp"
#include "gemmlab/compile.hpp"
#include "gemmlab/data.hpp"
#include "gemmlab/device.hpp"
#include "gemmlab/files.hpp"
#include "gemmlab/error.hpp"
#include "cli_helpers.hpp"

using namespace gemmlab;

#define REQUIRE_GPU() \
  if (device_count() == 0) GTEST_SKIP() << "no CUDA device: GPU tests need one"

namespace {

struct Stream {
  cudaStream_t s = nullptr;
  Stream() { GEMMLAB_CUDA(cudaStreamCreate(&s)); }
  ~Stream() { cudaStreamDestroy(s); }
};

// Every family at its defaults and the alternative modes worth covering.
std::vector<std::pair<const KernelFamily*, ParamValues>> configurations_under_test() {
  std::vector<std::pair<const KernelFamily*, ParamValues>> c;
  for (auto* f : families()) c.emplace_back(f, parse_params(*f, ""));
  for (auto [family, params] : {std::pair{"naive", "block=32x4"}, {"regblock2d", "placement=lumped"},
                                {"regblock2d", "block=8x8,vpt=4x4,tile=32x32x16"}, {"smem-tiled", "tile=8"},
                                {"vectorized", "conflict=swizzle"}, {"vectorized", "tile=64x64x16,vpt=4x4,conflict=none"},
                                {"pipelined", "mode=regprefetch"}, {"pipelined", "stages=2,conflict=swizzle"},
                                {"warptiled", "tile=128x256x8,warp=64x64,vpt=8x16,stages=4"},
                                {"warptiled", "tile=64x64x16,warp=32x32,vpt=4x8,stages=2,group=1"},
                                {"warptiled", "splitk=3"}, {"warptiled", "tile=64x64x16,warp=32x32,vpt=4x8,splitk=5"}})
    c.emplace_back(find_family(family), parse_params(*find_family(family), params));
  return c;
}

// Random layouts and paddings reach every layout/alignment variant: compile them all up front,
// in parallel, into the disk cache the runners read.
void precompile_variants(const std::vector<std::pair<const KernelFamily*, ParamValues>>& configs) {
  auto dev = query_device(0);
  std::vector<std::vector<std::string>> jobs;
  std::vector<const KernelFamily*> owners;
  for (auto& [f, v] : configs)
    for (int bits = 0; bits < 32 && f->uses_variant(); ++bits) {
      auto d = f->defines(v);
      for (auto& x : Variant{bool(bits & 1), bool(bits & 2), bool(bits & 4), bool(bits & 8), bool(bits & 16)}.defines())
        d.push_back(x);
      jobs.push_back(d);
      owners.push_back(f);
    }
  std::atomic<size_t> next{0};
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < std::max(2u, std::thread::hardware_concurrency()); ++t)
    pool.emplace_back([&] {
      for (size_t i; (i = next++) < jobs.size();)
        compile_cubin({owners[i]->name(), owners[i]->source(), jobs[i], arch_name(dev.cc_major, dev.cc_minor)});
    });
  for (auto& th : pool) th.join();
}

std::vector<std::unique_ptr<GemmRunner>> runners_under_test() {
  auto configs = configurations_under_test();
  precompile_variants(configs);
  std::vector<std::unique_ptr<GemmRunner>> r;
  for (auto& [f, v] : configs) r.push_back(make_family_runner(*f, v));
  r.push_back(make_cublas_runner(Precision::fp32));
  r.push_back(make_cublas_runner(Precision::tf32));
  return r;
}

void expect_all_pass(const Problem& p, uint64_t seed) {
  static auto runners = runners_under_test();  // compiled once, kept across shapes
  Stream stream;
  ProblemSession session(p, Distribution::uniform, seed, stream.s);
  for (auto& r : runners) {
    if (!r->unsupported(p).empty()) continue;
    auto v = session.verify(*r);
    EXPECT_TRUE(v.passed) << r->name() << " " << r->details().value("params", "") << " on " << describe(p) << " alpha " << p.alpha << " beta " << p.beta
                          << " ld " << p.lda << "," << p.ldb << "," << p.ldc << ": " << v.first_failure
                          << " (max_err " << v.max_err << ", tolerance " << v.tolerance << ")";
  }
}

// Wraps a correct kernel and spoils one element of C after it ran.
class Broken final : public GemmRunner {
 public:
  enum Fault { unwritten, wrong };
  Broken(Fault f, int64_t i, int64_t j) : inner_(make_cublas_runner(Precision::fp32)), fault_(f), i_(i), j_(j) {}
  std::string name() const override { return "broken"; }
  void prepare(const Problem& p) override { inner_->prepare(p); }
  void run(const Problem& p, const Operands& o, cudaStream_t s) override {
    inner_->run(p, o, s);
    float* at = o.c + c_strides(p).at(i_, j_);
    float x = poison_value();
    if (fault_ == wrong) {
      GEMMLAB_CUDA(cudaMemcpyAsync(&x, at, sizeof x, cudaMemcpyDeviceToHost, s));
      GEMMLAB_CUDA(cudaStreamSynchronize(s));
      x += 0.1f;  // under 1% of a typical |C| (~sqrt(K)/3), far above rounding
    }
    GEMMLAB_CUDA(cudaMemcpyAsync(at, &x, sizeof x, cudaMemcpyHostToDevice, s));
    GEMMLAB_CUDA(cudaStreamSynchronize(s));
  }

 private:
  std::unique_ptr<GemmRunner> inner_;
  Fault fault_;
  int64_t i_, j_;
};

}  // namespace

TEST(Gpu, EdgeShapesEveryLayout) {
  REQUIRE_GPU();
  struct Shape { int64_t m, n, k; };
  for (Shape s : {Shape{1, 1, 1}, Shape{7, 13, 5}, Shape{1021, 1, 1023}, Shape{1025, 1025, 1025}, Shape{4097, 129, 257},
                  Shape{300, 200, 1}, Shape{7, 7, 7}, Shape{31, 31, 31}, Shape{127, 127, 127}, Shape{1021, 1021, 1021},
                  Shape{2053, 2053, 2053}, Shape{31, 127, 7}})
    for (auto layout : {Layout::row_major, Layout::col_major})
      for (auto ta : {Trans::no, Trans::yes}) {
        Problem p;
        p.m = s.m, p.n = s.n, p.k = s.k, p.layout = layout, p.trans_a = ta, p.trans_b = ta;
        p.alpha = 1.25f, p.beta = ta == Trans::no ? 0.0f : -0.5f;
        expect_all_pass(normalized(p), 11);
      }
}

TEST(Gpu, TallAndSkinny) {
  REQUIRE_GPU();
  Problem p;
  p.m = 8192, p.n = 16, p.k = 8192;
  expect_all_pass(normalized(p), 5);
  p.m = 16, p.n = 8192;
  p.layout = Layout::col_major;
  expect_all_pass(normalized(p), 6);
}

// 200 random shapes up to 2100 with random alpha, beta, layout, transposes and padding.
TEST(Gpu, RandomShapesLayoutsAndPadding) {
  REQUIRE_GPU();
  std::mt19937 rng(2026);
  std::uniform_int_distribution<int> dim(1, 2100), coin(0, 1), pad(0, 5);
  std::uniform_real_distribution<float> scalar(-2, 2);
  for (int t = 0; t < 200; ++t) {
    Problem p;
    p.m = dim(rng), p.n = dim(rng), p.k = dim(rng);
    p.layout = coin(rng) ? Layout::row_major : Layout::col_major;
    p.trans_a = coin(rng) ? Trans::yes : Trans::no;
    p.trans_b = coin(rng) ? Trans::yes : Trans::no;
    p.alpha = scalar(rng);
    p.beta = coin(rng) ? 0.0f : scalar(rng);
    p = normalized(p);
    p.lda += pad(rng), p.ldb += pad(rng), p.ldc += pad(rng);
    expect_all_pass(normalized(p), t);
  }
}

TEST(Gpu, BrokenKernelsAreCaught) {
  REQUIRE_GPU();
  Stream stream;
  // Small (every element against float64) and large (sampled float64 plus every element against cuBLAS).
  for (auto p : {normalized(Problem::square(300)), normalized(Problem::square(2048))}) {
    ProblemSession session(p, Distribution::uniform, 3, stream.s);
    for (auto fault : {Broken::unwritten, Broken::wrong}) {
      Broken bad(fault, p.m / 2 + 1, p.n / 3 + 1);
      auto v = session.verify(bad);
      EXPECT_FALSE(v.passed) << describe(p) << " fault " << int(fault);
      EXPECT_GE(v.failures, 1);
      EXPECT_NE(v.first_failure.find("C(" + std::to_string(p.m / 2 + 1) + "," + std::to_string(p.n / 3 + 1) + ")"),
                std::string::npos)
          << v.first_failure;
    }
    auto good = make_cublas_runner(Precision::fp32);
    EXPECT_TRUE(session.verify(*good).passed);
  }
}

TEST(Gpu, DeviceGeneratorMatchesHost) {
  REQUIRE_GPU();
  Stream stream;
  for (auto layout : {Layout::row_major, Layout::col_major}) {
    StoredMatrix m{37, 21, 40, layout};
    float* d = nullptr;
    GEMMLAB_CUDA(cudaMalloc(&d, m.elements() * sizeof(float)));
    for (auto dist : {Distribution::uniform, Distribution::positive}) {
      fill_random(d, m, dist, 99, stream.s);
      std::vector<float> h(static_cast<size_t>(m.elements()));
      GEMMLAB_CUDA(cudaMemcpyAsync(h.data(), d, h.size() * 4, cudaMemcpyDeviceToHost, stream.s));
      GEMMLAB_CUDA(cudaStreamSynchronize(stream.s));
      auto want = random_host(m, dist, 99);
      EXPECT_EQ(0, std::memcmp(h.data(), want.data(), h.size() * 4)) << to_string(dist);
    }
    cudaFree(d);
  }
}

TEST(Gpu, HarnessTimesAKnownDelayAndReadsTheClock) {
  REQUIRE_GPU();
  auto dev = query_device(0);
  TimingOptions o;
  o.mode = CacheMode::warm;
  DeviceTimer timer(dev, o);
  const long long cycles = 4'000'000;
  auto t = timer.time([&](cudaStream_t s) { launch_spin(s, cycles); });
  ASSERT_GE(t.ms.count, o.min_samples);
  ASSERT_EQ(t.sm_mhz.size(), t.samples_ms.size());
  // The spin's time is its cycles at the probed clock, within 5%.
  double expected_ms = cycles / (t.median_sm_mhz * 1e3);
  EXPECT_NEAR(t.ms.median, expected_ms, 0.05 * expected_ms) << "probed " << t.median_sm_mhz << " MHz";
  EXPECT_GT(t.median_sm_mhz, 0.2 * dev.sm_clock_khz / 1e3);
  EXPECT_LT(t.median_sm_mhz, 1.1 * dev.sm_clock_khz / 1e3);
}

TEST(Gpu, CeilingsArePlausible) {
  REQUIRE_GPU();
  auto dev = query_device(0);
  auto c = measure_ceilings(dev);
  EXPECT_GT(c.ffma_tflops, 0.5 * dev.peak_fp32_tflops());
  EXPECT_LT(c.ffma_tflops, 1.05 * dev.peak_fp32_tflops());
  EXPECT_GT(c.copy_gbps, 0.4 * dev.peak_dram_gbps());
  EXPECT_LT(c.copy_gbps, 1.05 * dev.peak_dram_gbps());
}

TEST(Gpu, CliBenchWritesVerifiedResults) {
  REQUIRE_GPU();
  auto dir = std::filesystem::temp_directory_path() / "gemmlab-gpu-cli";
  std::filesystem::create_directories(dir);
  auto json = dir / "r.json", csv = dir / "r.csv";
  auto r = run_cli("bench --size 100,67 --kernel naive,openblas,cublas-tf32 --beta 0.5 --layout col --trans-b t --pad 3 "
                   "--json " + json.string() + " --csv " + csv.string());
  ASSERT_EQ(r.code, 0) << r.out;
  auto j = nlohmann::json::parse(read_file(json).value());
  ASSERT_EQ(j["results"].size(), 8u);  // cuBLAS is always measured too
  for (auto& rec : j["results"]) {
    EXPECT_EQ(rec["status"], "ok") << rec.dump();
    EXPECT_TRUE(rec["verified"].get<bool>());
    EXPECT_GT(rec["gflops"].get<double>(), 0);
    EXPECT_EQ(rec["ldc"].get<int>(), rec["m"].get<int>() + 3);
  }
  EXPECT_FALSE(j["metadata"]["gpu"]["name"].get<std::string>().empty());
  EXPECT_TRUE(read_file(csv).has_value());
}

TEST(Gpu, CliRefusesProblemsLargerThanMemory) {
  REQUIRE_GPU();
  auto r = run_cli("bench --size 200000 --kernel naive");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_EQ(r.lines(), 1) << r.out;
  EXPECT_NE(r.out.find("MiB of GPU memory"), std::string::npos) << r.out;
  // 30000² fits (3 × 3.4 GiB), but not beside a 64-slice split-K workspace (230 GiB).
  r = run_cli("bench --size 30000 --kernel warptiled --param splitk=64");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_EQ(r.lines(), 1) << r.out;
}
