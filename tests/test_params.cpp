#include <gtest/gtest.h>

#include <regex>

#include "bench/bench.hpp"
#include "gemmlab/error.hpp"
#include "kernels/family.hpp"
#include "launch/runner.hpp"

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
  EXPECT_EQ(format_params(*naive, v), "block=32x8");
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
  auto ks = resolve_kernels({"naive", "cublas", "cublas-tf32", "openblas"}, {});
  ASSERT_EQ(ks.size(), 4u);
  EXPECT_NE(ks[0].family, nullptr);
  EXPECT_EQ(ks[1].family, nullptr);
  EXPECT_NE(error_of([] { resolve_kernels({"fast"}, {}); }).find("unknown kernel 'fast' (known: naive,"),
            std::string::npos);
  EXPECT_EQ(error_of([] { resolve_kernels({"cublas"}, {"block=8x8"}); }), "--param needs a kernel family among the kernels");
}

// The launcher starts every family's kernels as programmatic dependents (grid_dependency.cuh): each
// one must wait for the grid before it ahead of any global access or return, so every __global__
// function of every family opens with follow_previous_grid().
TEST(Kernels, EveryKernelOpensByFollowingThePreviousGrid) {
  const std::regex kernel(R"(__global__[^{;]*\)\s*\{\s*([^;]*;))");
  int kernels = 0;
  for (auto* f : families()) {
    const std::string src = f->source();
    for (std::sregex_iterator it(src.begin(), src.end(), kernel), end; it != end; ++it, ++kernels)
      EXPECT_EQ((*it)[1].str(), "follow_previous_grid();") << f->name() << ": " << (*it)[0].str();
  }
  EXPECT_GE(kernels, int(families().size()));
}

TEST(Kernels, EveryParameterPointBecomesARunner) {
  auto ks = resolve_kernels({"naive", "cublas", "coalesced"}, {"block=8x8", "block=32x4"});
  ASSERT_EQ(ks.size(), 5u);
  EXPECT_EQ(format_params(*ks[1].family, ks[1].params), "block=32x4");
  EXPECT_EQ(ks[2].name, "cublas");
  ks = resolve_kernels({"naive", "coalesced"}, {"coalesced:", "coalesced:block=64x4", "naive:block=8x8"});
  ASSERT_EQ(ks.size(), 3u);
  EXPECT_EQ(format_params(*ks[0].family, ks[0].params), "block=8x8");
  EXPECT_EQ(format_params(*ks[1].family, ks[1].params), "block=32x8");
  EXPECT_EQ(format_params(*ks[2].family, ks[2].params), "block=64x4");
  EXPECT_NE(error_of([] { resolve_kernels({"naive"}, {"warptiled:stages=3"}); }).find("not among the kernels"),
            std::string::npos);
}

TEST(Constraints, EachFamilyNamesTheBrokenRule) {
  struct Case {
    const char* family;
    const char* params;
    const char* message;  // empty: accepted
  };
  const Case cases[] = {
      {"regblock2d", "block=16x16,vpt=8x8,tile=128x128x16", ""},
      {"warptiled", "accum=fp64", "tile needs with FP64 accumulators"},
      {"warptiled", "tile=128x128x16,warp=32x64,vpt=8x8,accum=fp64", ""},
      {"gemv-columns", "block=32x16,vpt=16,accum=fp64", "KB of static shared memory, over 48 KB"},
      {"gemv-columns", "block=32x16,vpt=8,accum=fp64", ""},
      {"outer", "rows=16,kc=16,accum=fp64", "registers per thread, over 255"},
      {"outer", "threads=100", "threads per block is not a whole number of warps"},
      {"regblock2d", "block=16x16,vpt=6x8,tile=128x128x16", "tile.x 128 is not block.x x vpt.x = 96"},
      {"regblock2d", "block=32x32,vpt=12x12,tile=384x384x8", "registers per block, over the 65536 of an SM"},
      {"regblock2d", "block=16x16,vpt=8x8,tile=128x128x64", "KB of static shared memory, over 48 KB"},
      {"regblock2d", "placement=lumped", ""},
      {"regblock2d", "placement=diagonal", "is not one of interleaved, lumped"},
      {"smem-tiled", "tile=40", "outside 8..32"},
      {"regblock1d", "tile=64x64x8,tm=6", "tile.m 64 is not a multiple of tm = 6"},
      {"vectorized", "tile=128x128x8,vpt=8x8,conflict=swizzle", ""},
      {"vectorized", "tile=128x128x8,vpt=6x8", "tile 128x128 is not a multiple of vpt 6x8"},
      {"vectorized", "tile=16x64x16,vpt=4x4,conflict=swizzle", "swizzle needs tile.m and tile.n multiples of 32"},
      {"vectorized", "tile=256x256x8,vpt=16x16", "registers per thread, over 255"},
      {"vectorized", "tile=64x64x4,vpt=4x4", "do not split into 4-element chunks evenly among 256 threads"},
      {"pipelined", "mode=regprefetch", ""},
      {"pipelined", "tile=128x128x64,stages=8", "KB of shared memory, over the 227 KB a block can have"},
      {"warptiled", "", ""},
      {"warptiled", "tile=128x128x16,warp=64x64,vpt=8x8", "warp / vpt = 8x8 lanes, not the 32 of a warp"},
      {"warptiled", "tile=128x128x16,warp=48x64", "tile 128x128 is not a multiple of warp 48x64"},
      {"warptiled", "tile=128x128x16,stages=9", "outside 2..8"},
      {"gemv-naive", "threads=455,blocks=22", ""},
      {"gemv-smem", "stage=tile,tile=65536", "tile needs 256 KB of shared memory, over the 227 KB"},
      {"gemv-smem", "stage=half", "is not one of whole, tile"},
      {"gemv-unrolled", "unroll=8,maxreg=8", "maxreg = 8 is below 16"},
      {"gemv-unrolled", "unroll=8,maxreg=32", ""},
      {"gemv-vectorized", "rows=3", "rows = 3 must be a power of two"},
      {"gemv-block", "threads=48", "48 threads per block is not a whole number of warps"},
      {"gemv-block", "threads=1024,accum=fp64tile", "accum=fp64tile needs fewer than 1024 threads"},
      {"gemv-block", "threads=512,accum=fp64tile", ""},
      {"gemv-columns", "block=64x16,vpt=8,accum=fp64tile", "need 64 KB of static shared memory"},
      {"gemv-columns", "vpt=6", "vpt = 6 above 4 must be a multiple of 4"},
      {"gemv-columns", "block=64x16", ""},
      {"gemv-columns", "block=64x32", "2048 threads per block, over the limit of 1024"},
      {"gemv-columns", "block=128x8,vpt=16", "KB of static shared memory, over 48 KB"},
      {"dmma", "store=staged", ""},
      {"dmma", "tile=64x64x16,warp=16x32,stages=2,store=staged", "store=staged needs 20480 bytes of shared memory"},
      {"dmma", "tile=64x64x16,warp=16x32,stages=2,store=staged,persistent=yes", ""},
      {"dmma", "store=stacked", "is not one of direct, staged"},
  };
  for (auto& c : cases) {
    auto* f = find_family(c.family);
    ASSERT_NE(f, nullptr) << c.family;
    auto got = error_of([&] { parse_params(*f, c.params); });
    if (*c.message == 0)
      EXPECT_EQ(got, "accepted") << c.family << " " << c.params;
    else
      EXPECT_NE(got.find(c.message), std::string::npos) << c.family << " " << c.params << ": " << got;
  }
}

// dmma store=staged: a tile-per-block kernel stages C in its operand ring (no more shared memory);
// a persistent one, whose ring holds the next tiles, beyond it: every warp's 16 rows of WN + 8 floats.
TEST(Params, DmmaStagedPersistentBlocksHoldTheirRowBlocksBeyondTheRing) {
  auto& dmma = *find_family("dmma");
  const auto p = normalized(Problem::square(1000));
  auto smem = [&](const char* params) { return dmma.geometry(parse_params(dmma, params), p).shared_bytes; };
  EXPECT_EQ(smem("tile=32x128x16,warp=32x32,store=staged"), smem("tile=32x128x16,warp=32x32"));
  EXPECT_EQ(smem("tile=32x128x16,warp=32x32,persistent=yes,store=staged"),
            smem("tile=32x128x16,warp=32x32,persistent=yes") + 4 * 16 * (32 + 8) * 4);
}

// Which layouts each GEMV family takes, and the split of gemv-columns' reduction.
TEST(Gemv, FamiliesTakeTheirLayoutsAndSayWhyNot) {
  auto runner_for = [](const char* name, const char* params = "") {
    return make_family_runner(*find_family(name), parse_params(*find_family(name), params));
  };
  Problem rows = normalized(Problem::gemv(100, 200, Layout::row_major, Trans::no));
  Problem cols = normalized(Problem::gemv(100, 200, Layout::col_major, Trans::no));
  Problem rows_t = normalized(Problem::gemv(100, 200, Layout::row_major, Trans::yes));
  Problem cols_t = normalized(Problem::gemv(100, 200, Layout::col_major, Trans::yes));
  for (auto* name : {"gemv-vectorized", "gemv-block"}) {
    EXPECT_EQ(runner_for(name)->unsupported(rows), "") << name;
    EXPECT_EQ(runner_for(name)->unsupported(cols_t), "") << name;
    EXPECT_NE(runner_for(name)->unsupported(cols).find("gemv-columns computes this layout"), std::string::npos);
    EXPECT_NE(runner_for(name)->unsupported(rows_t).find("gemv-columns computes this layout"), std::string::npos);
  }
  EXPECT_EQ(runner_for("gemv-columns")->unsupported(cols), "");
  EXPECT_EQ(runner_for("gemv-columns")->unsupported(rows_t), "");
  EXPECT_NE(runner_for("gemv-columns")->unsupported(rows).find("gemv-vectorized computes"), std::string::npos);
  for (auto* name : {"gemv-naive", "gemv-smem", "gemv-unrolled", "gemv-warp"})
    for (auto& p : {rows, cols, rows_t, cols_t}) EXPECT_EQ(runner_for(name)->unsupported(p), "") << name;
  // A GEMV family on a GEMM problem and the reverse are refused, not miscomputed.
  EXPECT_NE(runner_for("gemv-warp")->unsupported(normalized(Problem::square(64))).find("gemv family"), std::string::npos);
  EXPECT_NE(runner_for("warptiled")->unsupported(rows).find("gemm family"), std::string::npos);
  // x of 100000 floats does not fit in shared memory whole; in tiles it does.
  Problem wide = normalized(Problem::gemv(4, 100000, Layout::row_major, Trans::no));
  EXPECT_NE(runner_for("gemv-smem")->unsupported(wide).find("use stage=tile"), std::string::npos);
  EXPECT_EQ(runner_for("gemv-smem", "stage=tile")->unsupported(wide), "");
}

TEST(Gemv, ColumnsSplitTheReductionOfShortWideProblems) {
  auto& f = *find_family("gemv-columns");
  auto v = parse_params(f, "");  // 32x8 threads, 4 outputs each: 128 outputs per block
  Problem wide = normalized(Problem::gemv(1024, 65536, Layout::col_major, Trans::no));
  Problem tall = normalized(Problem::gemv(65536, 1024, Layout::col_major, Trans::no));
  // One wave: 660 resident blocks (5 per SM on 132 SMs) over 8 output blocks: 82 splits.
  EXPECT_EQ(f.splits(v, wide, 660), 82);
  EXPECT_EQ(f.splits(v, wide, 0), 128);  // without a GPU, 1024 blocks stand in for the wave
  EXPECT_EQ(f.geometry(v, wide).grid.x, 8u);
  EXPECT_EQ(f.splits(v, tall, 660), 1);  // 512 output blocks already fill most of the wave
  Problem shallow = normalized(Problem::gemv(128, 100, Layout::col_major, Trans::no));
  EXPECT_EQ(f.splits(v, shallow, 660), 1);  // 100 / (16 · 8) < 1: each split keeps 16 steps per thread row
  EXPECT_EQ(f.splits(parse_params(f, "splits=7"), wide, 660), 7);
  auto r = make_family_runner(f, v);
  EXPECT_EQ(r->workspace_bytes(wide), 128u * 1024 * 4 + 8 * 4);  // partial sums, one counter per output block
}

TEST(Constraints, SearchSpacesAreValidAndDefaultsAreInRange) {
  for (auto* f : families()) {
    EXPECT_TRUE(accepts(*f, "")) << f->name() << " rejects its own defaults";
    for (auto& p : f->search_space()) EXPECT_TRUE(accepts(*f, p)) << f->name() << " " << p;
  }
}

// The accuracy table names a point by what differs from the defaults, in the schema's order.
TEST(Params, FormatsOnlyWhatDiffersFromTheDefaults) {
  const auto& f = *find_family("wgmma");
  EXPECT_EQ(format_changed_params(f, parse_params(f, "")), "");
  EXPECT_EQ(format_changed_params(f, parse_params(f, "slices=2,accum=kstep,tile=128x128x32,stages=3")),
            "tile=128x128x32,stages=3,accum=kstep");
}
