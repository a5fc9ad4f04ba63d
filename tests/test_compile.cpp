// Run-time compilation needs no GPU: every family's default configuration compiles for sm_90,
// and a second compile comes from the disk cache.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <thread>
#include <filesystem>
#include <regex>
#include <set>

#include "compile/compile.hpp"
#include "kernels/family.hpp"
#include "library/dispatch.hpp"
#include "tune/tuning.hpp"

using namespace gemmlab;

namespace {
class CompileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("gemmlab-test-cache-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    setenv("GEMMLAB_CACHE_DIR", dir_.c_str(), 1);
  }
  void TearDown() override {
    unsetenv("GEMMLAB_CACHE_DIR");
    std::filesystem::remove_all(dir_);
  }
  std::filesystem::path dir_;
};
}  // namespace

TEST_F(CompileTest, EveryFamilyDefaultCompilesForSm90WithoutSpills) {
  for (auto* f : families()) {
    auto v = parse_params(*f, "");
    // Compiled now, not taken from the library's built-in binaries: the ptxas report is the point.
    auto out = compile_cubin({f->name(), f->source(), f->defines(v), arch_name(9, 0, f->arch_specific())}, false);
    EXPECT_FALSE(out.from_cache);
    ASSERT_GT(out.cubin.size(), 100u) << f->name();
    EXPECT_EQ(out.cubin.substr(1, 3), "ELF") << f->name();
    EXPECT_NE(out.log.find("Used"), std::string::npos) << f->name() << ": no ptxas report in\n" << out.log;
    EXPECT_NE(out.log.find(" 0 bytes spill stores"), std::string::npos) << f->name() << " spills:\n" << out.log;
  }
}

namespace gemmlab::embedded {
extern const char* const averaging_source;
}

// The pipeline compiles in the two block shapes it is launched with (v1 to v4 in the seed's
// 32 × 32, v5's averaging kernel in 8 warps), and none of the entries used from each spills.
TEST_F(CompileTest, AveragingPipelineCompilesWithoutSpills) {
  struct Case {
    std::vector<std::string> defines;
    std::vector<std::string> entries;
  };
  for (auto& c : {Case{{"-DWARPS=32", "-DUNROLL=1"}, {"average_v1", "average_v2", "average_v3", "average_v4"}},
                  Case{{"-DWARPS=8", "-DUNROLL=4"}, {"average_v5"}}}) {
    auto log = compile_cubin({"averaging", embedded::averaging_source, c.defines, "sm_90"}, false).log;
    for (auto& entry : c.entries) {
      auto at = log.find("entry function '" + entry + "'");
      ASSERT_NE(at, std::string::npos) << entry << " missing from\n" << log;
      auto report = log.substr(at, log.find("entry function", at + 1) - at);
      EXPECT_NE(report.find(" 0 bytes spill stores"), std::string::npos) << report;
    }
  }
}

TEST_F(CompileTest, SecondCompileComesFromTheCacheAndKeysDiffer) {
  auto& f = *find_family("naive");
  auto a = compile_cubin({"naive", f.source(), f.defines(parse_params(f, "")), "sm_90"});
  auto b = compile_cubin({"naive", f.source(), f.defines(parse_params(f, "")), "sm_90"});
  EXPECT_TRUE(b.from_cache);
  EXPECT_EQ(a.cubin, b.cubin);
  auto c = compile_cubin({"naive", f.source(), f.defines(parse_params(f, "block=32x8")), "sm_90"});
  EXPECT_NE(a.key, c.key);
  auto d = compile_cubin({"naive", f.source(), f.defines(parse_params(f, "")), "sm_80"});
  EXPECT_NE(a.key, d.key);
}

TEST_F(CompileTest, CompilerErrorsCarryTheLog) {
  try {
    compile_cubin({"broken", "extern \"C\" __global__ void k() { undefined_thing(); }", {}, "sm_90"});
    FAIL() << "compiled";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("undefined_thing"), std::string::npos) << e.what();
  }
}

// Every configuration of every family's default search space, for sm_90, in the row-major aligned
// variant; the defaults also in every layout variant. Compiled in parallel: NVRTC is thread-safe.
TEST_F(CompileTest, EverySearchSpaceConfigurationCompiles) {
  struct Job {
    const KernelFamily* f;
    std::vector<std::string> defines;
    std::string label;
    bool must_not_spill = false;  // the defaults, in every variant
  };
  std::vector<Job> jobs;
  std::set<std::string> seen;  // points that differ only in launch geometry compile to one binary
  for (auto* f : families()) {
    auto space = f->search_space();
    EXPECT_FALSE(space.empty()) << f->name();
    for (auto& point : space) {
      auto v = parse_params(*f, point);
      auto d = f->defines(v);
      if (f->uses_variant())
        for (auto& x : Variant{true, true, true, true, true}.defines()) d.push_back(x);
      std::string key = f->name();
      for (auto& x : d) key += " " + x;
      if (seen.insert(key).second) jobs.push_back({f, d, f->name() + " " + point});
    }
    if (f->uses_variant())
      for (int bits = 0; bits < 32; ++bits) {
        Variant var{bool(bits & 1), bool(bits & 2), bool(bits & 4), bool(bits & 8), bool(bits & 16)};
        auto d = f->defines(parse_params(*f, ""));
        for (auto& x : var.defines()) d.push_back(x);
        jobs.push_back({f, d, f->name() + " default, variant " + std::to_string(bits), true});
      }
  }
  // hopper-simt's fragments a step ahead, at the defaults, in every operand layout: no spills.
  const auto& simt = *find_family("hopper-simt");
  for (const char* point : {"fragments=double", "fragments=double-b"})
    for (int bits = 0; bits < 4; ++bits) {
      auto d = simt.defines(parse_params(simt, point));
      for (auto& x : Variant{bool(bits & 1), bool(bits & 2), true, true, true}.defines()) d.push_back(x);
      jobs.push_back({&simt, d, std::string("hopper-simt ") + point + ", variant " + std::to_string(bits), true});
    }
  // dmma's C through shared memory, tile per block and persistent, C's rows on 16 bytes or not.
  const auto& dmma = *find_family("dmma");
  for (const char* point : {"store=staged", "store=staged,persistent=yes", "store=staged,tile=32x128x16"})
    for (bool c_vec : {false, true}) {
      auto d = dmma.defines(parse_params(dmma, point));
      for (auto& x : Variant{true, true, true, true, c_vec}.defines()) d.push_back(x);
      jobs.push_back({&dmma, d, std::string("dmma ") + point + (c_vec ? ", C on 16 bytes" : ", C not"), true});
    }
  // wgmma's accurate accumulation holds four fragments: it must fit without spilling.
  const auto& wgmma = *find_family("wgmma");
  jobs.push_back({&wgmma, wgmma.defines(parse_params(wgmma, "accum=kstep,tile=128x128x32,stages=3,slices=2")),
                  "wgmma accum=kstep", true});
  std::atomic<size_t> next{0};
  std::vector<std::string> failures(jobs.size());
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < std::max(2u, std::thread::hardware_concurrency()); ++t)
    pool.emplace_back([&] {
      for (size_t i; (i = next++) < jobs.size();) try {
          auto out = compile_cubin(
              {jobs[i].f->name(), jobs[i].f->source(), jobs[i].defines, arch_name(9, 0, jobs[i].f->arch_specific())}, false);
          // ptxas reports every entry function; each must say 0 bytes of spill stores.
          if (jobs[i].must_not_spill && std::regex_search(out.log, std::regex("[1-9][0-9]* bytes spill stores")))
            failures[i] = "spills:\n" + out.log;
        } catch (const std::exception& e) {
          failures[i] = e.what();
        }
    });
  for (auto& th : pool) th.join();
  for (size_t i = 0; i < jobs.size(); ++i) EXPECT_EQ(failures[i], "") << jobs[i].label;
  std::printf("compiled %zu configurations\n", jobs.size());
}

// Every ablation a family offers compiles (at its defaults, and for pipelined in both modes).
TEST_F(CompileTest, EveryAblationCompiles) {
  for (auto* f : families()) {
    std::vector<ParamValues> points = {parse_params(*f, "")};
    if (f->name() == "pipelined") points.push_back(parse_params(*f, "mode=regprefetch"));
    for (auto& v : points)
      for (auto a : f->ablations(v)) {
        auto defines = f->defines(v);
        for (auto& d : compile_defines(a)) defines.push_back(d);
        auto out = compile_cubin({f->name(), f->source(), defines, arch_name(9, 0, f->arch_specific())}, false);
        EXPECT_EQ(out.cubin.substr(1, 3), "ELF") << f->name() << " " << to_string(a);
      }
  }
}

// A request compiled ahead on a background thread is handed to compile_cubin (waited for while it
// compiles), then found on disk; the pool stops with requests still queued.
TEST_F(CompileTest, CompileAheadHandsOverItsResult) {
  auto& f = *find_family("naive");
  CompileRequest req{"naive", f.source(), f.defines(parse_params(f, "block=16x8")), "sm_90"};
  {
    CompileAhead ahead(2);
    EXPECT_EQ(ahead.threads(), 2);
    ahead.submit(req);
    ahead.submit(req);  // once is enough
    for (int i = 0; i < 600 && ahead.compiled() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ASSERT_EQ(ahead.compiled(), 1);
    EXPECT_GT(ahead.compile_s(), 0);
    auto taken = compile_cubin(req);
    EXPECT_TRUE(taken.compiled_ahead);
    EXPECT_FALSE(taken.from_cache);
    EXPECT_GT(taken.compile_s, 0);
    EXPECT_EQ(taken.cubin, compile_cubin(req, false).cubin);
    auto again = compile_cubin(req);
    EXPECT_TRUE(again.from_cache);
    EXPECT_FALSE(again.compiled_ahead);
    for (const char* block : {"block=8x8", "block=32x4", "block=4x4", "block=16x16"})
      ahead.submit({"naive", f.source(), f.defines(parse_params(f, block)), "sm_90"});
  }  // drops the queue, waits for the compiles running
  CompileAhead none(0);
  EXPECT_EQ(none.threads(), 0);
  none.submit(req);  // ignored
  EXPECT_EQ(none.compiled(), 0);
}

// FP64 accumulators (accum=fp64: exact products summed in FP64, the FP32-accurate SIMT arithmetic)
// compile without spills in the configurations a fallback would take: square warp tiles, outer, the
// two GEMV families. (The narrow 16x128 tile of 2 warps spills 76 bytes with them: not listed.)
TEST_F(CompileTest, Fp64AccumulatorsCompileWithoutSpills) {
  // Every FP64 configuration the library's tensor_fp32 may take.
  std::vector<std::pair<std::string, std::string>> points;
  auto configs = dispatch_configurations(90);
  for (auto& e : builtin_table().entries())  // the GEMV routes' measured entries, in the mode's arithmetic
    if (find_family(e.family)->op() == Op::gemv)
      for (long long k : {0ll, kTileSumsMinK})
        if (fits_math(e.family, e.params, MathMode::tensor_fp32, k))
          configs.emplace_back(e.family, with_math(e.family, e.params, MathMode::tensor_fp32, k));
  for (auto& c : configs)
    if (c.second.find("accum=fp64") != std::string::npos) points.push_back(c);
  EXPECT_GE(points.size(), 7u);
  for (auto& [name, params] : points) {
    auto& f = *find_family(name);
    auto v = parse_params(f, params);
    auto out = compile_cubin({f.name(), f.source(), f.defines(v), "sm_90"}, false);
    const std::regex spills("([0-9]+) bytes spill stores");
    int entries = 0;
    for (std::sregex_iterator it(out.log.begin(), out.log.end(), spills), end; it != end; ++it, ++entries)
      EXPECT_EQ((*it)[1], "0") << name << " " << params << " spills:\n" << out.log;
    EXPECT_GT(entries, 0) << name << ": no ptxas report in\n" << out.log;
  }
}
