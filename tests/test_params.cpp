#include <gtest/gtest.h>

#include "gemmlab/bench.hpp"
#include "gemmlab/error.hpp"
#include "gemmlab/family.hpp"

using namespace gemmlab;

namespace {
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "accepted";
}
}  // namespace

TEST(Params, DefaultsAndOverrides) {
  auto* naive = find_family("naive");
  ASSERT_NE(naive, nullptr);
  auto v = parse_params(*naive, "");
  EXPECT_EQ(v.at("block"), (std::vector<int>{16, 16}));
  v = parse_params(*naive, "block=32x8");
  EXPECT_EQ(v.at("block"), (std::vector<int>{32, 8}));
  EXPECT_EQ(format_params(v), "block=32x8");
  EXPECT_EQ(naive->defines(v), (std::vector<std::string>{"-DBLOCK_X=32", "-DBLOCK_Y=8"}));
}

TEST(Params, RejectsWithTheBrokenRule) {
  auto& naive = *find_family("naive");
  EXPECT_EQ(error_of([&] { parse_params(naive, "tile=8"); }), "naive has no parameter 'tile' (it has: block)");
  EXPECT_EQ(error_of([&] { parse_params(naive, "block=16"); }), "naive: parameter block takes 2 value(s), got '16'");
  EXPECT_EQ(error_of([&] { parse_params(naive, "block=16xa"); }),
            "naive: parameter block = '16xa' is not a list of integers like 16x16");
  EXPECT_EQ(error_of([&] { parse_params(naive, "block=0x4"); }), "naive: parameter block = 0x4 is outside 1..1024");
  EXPECT_EQ(error_of([&] { parse_params(naive, "block=64x32"); }),
            "naive block=64x32: block 64x32 has 2048 threads, over the limit of 1024");
  EXPECT_EQ(error_of([&] { parse_params(naive, "block"); }), "naive: parameter 'block' needs the form name=value");
}

TEST(Params, GeometryCoversTheProblem) {
  auto& naive = *find_family("naive");
  auto v = parse_params(naive, "block=32x4");
  auto p = normalized(Problem::square(100));
  p.n = 9;
  auto g = naive.geometry(v, p);
  EXPECT_EQ(g.grid.x, 4u);  // ceil(100 / 32) row blocks
  EXPECT_EQ(g.grid.y, 3u);  // ceil(9 / 4) column blocks
  EXPECT_EQ(g.block.x * g.block.y, 128u);
  p.n = 65535 * 4 + 1;
  EXPECT_NE(naive.unsupported(v, p), "");
}

TEST(Kernels, ResolveNamesWithoutAGpu) {
  auto ks = resolve_kernels({"naive", "cublas", "cublas-tf32", "openblas"}, "");
  ASSERT_EQ(ks.size(), 4u);
  EXPECT_NE(ks[0].family, nullptr);
  EXPECT_EQ(ks[1].family, nullptr);
  EXPECT_NE(error_of([] { resolve_kernels({"fast"}, ""); }).find("unknown kernel 'fast' (known: naive,"),
            std::string::npos);
  EXPECT_EQ(error_of([] { resolve_kernels({"cublas"}, "block=8x8"); }), "--param needs a kernel family among the kernels");
}
