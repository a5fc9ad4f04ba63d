// The command line: bad input gets one line and exit code 2 before any GPU work; without a GPU
// (hidden with CUDA_VISIBLE_DEVICES=-1, so this runs the same on GPU hosts) GPU commands get one
// line and exit code 3, while --help and info still work.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "cli_helpers.hpp"

namespace {
constexpr const char* kNoGpu = "CUDA_VISIBLE_DEVICES=-1";

void expect_usage_error(const std::string& args, const std::string& fragment) {
  auto r = run_cli(args, kNoGpu);
  EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
  EXPECT_EQ(r.lines(), 1) << args << "\n" << r.out;
  EXPECT_NE(r.out.find(fragment), std::string::npos) << args << "\n" << r.out;
}
}  // namespace

TEST(Cli, HelpWorks) {
  auto r = run_cli("--help", kNoGpu);
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("bench"), std::string::npos);
  EXPECT_NE(r.out.find("info"), std::string::npos);
  r = run_cli("bench --help", kNoGpu);
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("--trans-a"), std::string::npos);
}

TEST(Cli, BadInputGetsOneLineAndExitCode2) {
  expect_usage_error("bench --size 0", "gemmlab: M must be at least 1, got 0");
  expect_usage_error("bench --size -5", "M must be at least 1");
  expect_usage_error("bench --size 12x", "--size: '12x' is not an integer");
  expect_usage_error("bench --size 3000000000", "exceeds 2^31-1");
  expect_usage_error("bench --m 2147483647 --n 2147483647 --k 2147483647", "overflow");
  expect_usage_error("bench --m 5", "give --size, or all of --m, --n and --k");
  expect_usage_error("bench --size 64 --lda 10", "leading dimension of A is 10 but must be at least 64");
  expect_usage_error("bench --kernel naive,fastest", "unknown kernel 'fastest'");
  expect_usage_error("bench --kernel naive --param block=64x64", "over the limit of 1024");
  expect_usage_error("bench --layout diagonal", "unknown layout 'diagonal'");
  expect_usage_error("bench --trans-a x", "unknown transpose 'x'");
  expect_usage_error("bench --dist cauchy", "unknown distribution 'cauchy'");
  expect_usage_error("bench --mode lukewarm", "unknown cache mode 'lukewarm'");
  expect_usage_error("bench --frobnicate", "frobnicate");
  expect_usage_error("bench --alpha nope", "nope");
  expect_usage_error("bench --size 64 --json /nonexistent-gemmlab-dir/out.json", "does not exist");
  expect_usage_error("", "");
  expect_usage_error("bench --op gemv --incx 2", "gemv supports unit increments only");
  expect_usage_error("bench --op gemv --size 3x4x5", "needs 1 or 2 dimensions for gemv");
  expect_usage_error("bench --op gemv --m 5 --n 6 --k 7", "not --k");
  expect_usage_error("bench --size 64 --candidates fast", "unknown mode 'fast'");
  expect_usage_error("bench --op gemv --size 64 --candidates tensor_fp32", "--candidates weighs GEMM configurations");
  expect_usage_error("bench --op gemv --trans-b t", "gemv has no --trans-b");
  expect_usage_error("bench --op gemm --size 4x5", "needs 1 or 3 dimensions for gemm");
  expect_usage_error("bench --op gemx", "unknown operation 'gemx'");
  expect_usage_error("bench --op gemv --kernel gemv-vectorized --param rows=3", "must be a power of two");
  expect_usage_error("bench --average --average-shape 10x10", "must be LxMxN");
  expect_usage_error("bench --average-shape 10x0x10", "must be LxMxN with each from 1 to 2^20");
  expect_usage_error("bench --layout row,diag", "unknown layout 'diag'");
  expect_usage_error("bench --trans-b n,x", "unknown transpose 'x'");
  expect_usage_error("bench --max-time -1", "--max-time: must be positive, got -1");
  expect_usage_error("bench --min-samples 0", "--min-samples: must be positive, got 0");
  expect_usage_error("bench --pad -4", "--pad: must be 0 or more, got -4");
  expect_usage_error("bench --max-time soon", "'soon'");
  expect_usage_error("tune --kernel naive --size 64 --budget -3", "--budget: must be 0 or more, got -3");
}

TEST(Cli, WithoutAGpu) {
  auto out = std::filesystem::temp_directory_path() / "gemmlab-cli-nogpu.json";
  std::filesystem::remove(out);
  auto r = run_cli("bench --size 64 --json " + out.string(), kNoGpu);
  EXPECT_EQ(r.code, 3) << r.out;
  EXPECT_EQ(r.out, "gemmlab: no CUDA device was found\n");
  EXPECT_FALSE(std::filesystem::exists(out));  // nothing half-written
  r = run_cli("overhead --json " + out.string(), kNoGpu);
  EXPECT_EQ(r.code, 3) << r.out;
  EXPECT_EQ(r.out, "gemmlab: no CUDA device was found\n");
  EXPECT_FALSE(std::filesystem::exists(out));
  r = run_cli("info --measure", kNoGpu);
  EXPECT_EQ(r.code, 3) << r.out;
  EXPECT_EQ(r.out, "gemmlab: no CUDA device was found\n");
  r = run_cli("info", kNoGpu);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("no CUDA device was found"), std::string::npos);
  EXPECT_NE(r.out.find("cuBLAS"), std::string::npos);
}

TEST(Cli, SweepTuneReportRefuseInOneLine) {
  namespace fs = std::filesystem;
  auto dir = fs::temp_directory_path() / ("gemmlab-cli-sweep-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "out");
  auto file = dir / "e.json";
  std::ofstream(file) << R"({"sizes": [64], "kernels": ["naive"]})";
  std::ofstream(dir / "out" / "experiment.json") << R"({"sizes": [128], "kernels": ["naive"]})";
  expect_usage_error("sweep " + file.string() + " --out " + (dir / "out").string(), "holds the results of a different");
  expect_usage_error("sweep " + (dir / "missing.json").string(), "cannot read experiment");
  std::ofstream(dir / "bad.json") << "{\"sizes\": [64], ";
  expect_usage_error("sweep " + (dir / "bad.json").string(), "is not valid JSON");
  expect_usage_error("tune --kernel nosuch --size 64", "unknown family 'nosuch'");
  expect_usage_error("tune --kernel naive --size 64 --strategy greedy", "unknown strategy 'greedy'");
  expect_usage_error("tune --kernel naive --size 64x64", "--size: '64x64' needs 1 or 3 dimensions");
  expect_usage_error("tune --kernel gemv-warp --size 64", "is a gemv family; the problem is a gemm");
  expect_usage_error("tune --kernel gemv-block --op gemv --size 64 --param nosuch=1", "no parameter 'nosuch'");
  expect_usage_error("tune --kernel gemv-warp --op gemv --size 64 --param accum=fp64", "no parameter 'accum'");
  // Held values that break every point's constraints: the first point's reason.
  expect_usage_error("tune --kernel gemv-columns --op gemv --size 64 --param vpt=16,block=32x16,accum=fp64",
                     "KB of static shared memory, over 48 KB");
  // Without a GPU: the sweep (its worker finds none) and the report say so in one line, exit 3.
  auto r = run_cli("sweep " + file.string() + " --out " + (dir / "fresh").string(), kNoGpu);
  EXPECT_EQ(r.code, 3) << r.out;
  EXPECT_EQ(r.out, "gemmlab: no CUDA device was found\n");
  r = run_cli("report --out " + (dir / "report").string(), kNoGpu);
  EXPECT_EQ(r.code, 3) << r.out;
  EXPECT_EQ(r.out, "gemmlab: no CUDA device was found\n");
  fs::remove_all(dir);
}
