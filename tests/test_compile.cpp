// Run-time compilation needs no GPU: every family's default configuration compiles for sm_90,
// and a second compile comes from the disk cache.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "gemmlab/compile.hpp"
#include "gemmlab/family.hpp"

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
    auto out = compile_cubin({f->name(), f->source(), f->defines(v), "sm_90"});
    EXPECT_FALSE(out.from_cache);
    ASSERT_GT(out.cubin.size(), 100u) << f->name();
    EXPECT_EQ(out.cubin.substr(1, 3), "ELF") << f->name();
    EXPECT_NE(out.log.find("Used"), std::string::npos) << f->name() << ": no ptxas report in\n" << out.log;
    EXPECT_NE(out.log.find(" 0 bytes spill stores"), std::string::npos) << f->name() << " spills:\n" << out.log;
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
