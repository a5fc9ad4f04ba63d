// The library's dispatcher and shape corpus, without a GPU: routes, the wave model's choices on an
// H100-like and an A100-like description, workspace bounds, and the corpus parser.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <map>
#include <random>

#include "problem/corpus.hpp"
#include "gemmlab/error.hpp"
#include "kernels/family.hpp"
#include "launch/launcher.hpp"
#include "library/dispatch.hpp"
#include "tune/tuning.hpp"
#include "blas/offload.hpp"

using namespace gemmlab;

namespace {

Problem shape(int64_t m, int64_t n, int64_t k, Layout l = Layout::row_major, Trans ta = Trans::no,
              Trans tb = Trans::no) {
  Problem p = problem_of_shape(Op::gemm, {m, n, k}, l, ta, tb);
  return normalized(p);
}

Dispatch pick(const GpuModel& g, const Problem& p, MathMode m) { return dispatch(g, canonical(p), m); }

std::string tile_of(const Dispatch& d) {
  auto& f = *find_family(d.family);
  auto v = parse_params(f, d.params);
  return format_value(f.params()[0], v.at("tile"));
}

const MathMode kModes[] = {MathMode::strict_fp32, MathMode::tensor_fp32, MathMode::tf32};

}  // namespace

TEST(Dispatch, VectorsTakeTheGemvRouteInEveryMode) {
  for (auto& g : {GpuModel::h100(), GpuModel::a100()})
    for (auto m : kModes) {
      EXPECT_EQ(pick(g, shape(1, 4096, 4096), m).route, Route::gemv_m);
      EXPECT_EQ(pick(g, shape(4096, 1, 4096), m).route, Route::gemv_n);
      EXPECT_EQ(pick(g, shape(1, 1, 100000), m).route, Route::gemv_n);
      // A column-major C is the row-major Cᵀ: M = 1 there is N = 1 here.
      EXPECT_EQ(pick(g, shape(1, 4096, 4096, Layout::col_major), m).route, Route::gemv_n);
      EXPECT_EQ(pick(g, shape(2, 4096, 4096), m).route, Route::gemm);
    }
}

// The GEMV problem of a vector route addresses exactly the elements of the GEMM's operands.
TEST(Dispatch, VectorProblemKeepsEveryStride) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    auto d = [&](int hi) { return int64_t(std::uniform_int_distribution<int>(1, hi)(rng)); };
    const bool n_route = trial % 2 == 0;
    Problem p = problem_of_shape(Op::gemm, {n_route ? d(50) : 1, n_route ? 1 : d(50), d(50)},
                                 trial % 4 < 2 ? Layout::row_major : Layout::col_major,
                                 rng() % 2 ? Trans::yes : Trans::no, rng() % 2 ? Trans::yes : Trans::no);
    Problem t = normalized(p);
    p.lda = stored_a(t).min_ld() + d(5) - 1;
    p.ldb = stored_b(t).min_ld() + d(5) - 1;
    p.ldc = stored_c(t).min_ld() + d(5) - 1;
    const Problem c = canonical(normalized(p));
    if (c.m != 1 && c.n != 1) continue;
    const Route r = c.n == 1 ? Route::gemv_n : Route::gemv_m;
    const Problem g = vector_problem(c, r);
    ASSERT_EQ(g.op, Op::gemv);
    ASSERT_EQ(g.k, c.k);
    auto sa = op_a_strides(c), sb = op_b_strides(c), sc = c_strides(c), ga = op_a_strides(g);
    const int64_t rows = r == Route::gemv_n ? c.m : c.n;
    ASSERT_EQ(g.m, rows);
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t k = 0; k < c.k; ++k)
        ASSERT_EQ(ga.at(i, k), r == Route::gemv_n ? sa.at(i, k) : sb.at(k, i)) << describe(p) << " " << i << "," << k;
    // x and y: the increments are the one-column B's and C's row strides.
    auto gb = op_b_strides(g), gc = c_strides(g);
    for (int64_t k = 0; k < c.k; ++k) ASSERT_EQ(gb.at(k, 0), r == Route::gemv_n ? sb.at(k, 0) : sa.at(0, k));
    for (int64_t i = 0; i < rows; ++i) ASSERT_EQ(gc.at(i, 0), r == Route::gemv_n ? sc.at(i, 0) : sc.at(0, i));
  }
}

TEST(Dispatch, HugeKWithFewTilesSplitsK) {
  for (auto& g : {GpuModel::h100(), GpuModel::a100()})
    for (auto m : kModes) {
      auto d = pick(g, shape(64, 64, 1 << 20), m);
      // tensor_fp32 on 9.0: the FP64 tensor cores (dmma), split the same way.
      const bool fp64_tensor = m == MathMode::tensor_fp32 && g.arch >= 90;
      EXPECT_EQ(d.family, fp64_tensor ? "dmma" : "warptiled") << to_string(m);
      EXPECT_GE(d.splits, 16) << d.why;
      EXPECT_GT(d.workspace_bytes, 0u);
      EXPECT_LE(d.workspace_bytes, std::min(kMaxSplitWorkspace, g.memory_bytes / 16));
    }
}

// Few rows, long K (perf-log 57-58): tensor_fp32 on 9.0 takes the 16-row dmma tile (measured 1.18x
// cuBLAS SGEMM on 32x1760x1760 and 1.31x on 32x256x100000, where 64x64 split 8-14 ways ran 0.82x and
// warptiled 0.76x).
TEST(Dispatch, FewRowsLongKTakeTheSixteenRowTensorTile) {
  auto g = GpuModel::h100();
  // 8 rows: 64x64 tiles (mostly padding) ran 4.5-6 us over their estimate where 16x128 did not.
  for (auto p : {shape(32, 1760, 1760), shape(32, 256, 100000), shape(8, 2304, 768), shape(8, 3072, 768)}) {
    auto d = pick(g, p, MathMode::tensor_fp32);
    EXPECT_EQ(d.family, "dmma") << describe(p) << ": " << d.why;
    EXPECT_EQ(tile_of(d), "16x128x32") << describe(p) << ": " << d.why;
  }
}

// Its reads round by round of resident blocks (perf-log 113, on the H200): at 8x32768x8192 NT split
// 2 left a round of 116 blocks after the first 396 and ran 396 us, where split 1 ran 298 and split 3
// 300; at 8x4096x16384 NT split 11 (three blocks on 88 SMs, two on 44) 87.8 against split 8's 82.0.
TEST(Dispatch, SixteenRowTensorTileSplitsIntoEvenRounds) {
  auto g = GpuModel::h200();
  auto up = pick(g, shape(8, 32768, 8192, Layout::row_major, Trans::no, Trans::yes), MathMode::tensor_fp32);
  EXPECT_EQ(tile_of(up), "16x128x32") << up.why;
  EXPECT_TRUE(up.splits == 1 || up.splits == 3) << up.why;
  auto down = pick(g, shape(8, 4096, 16384, Layout::row_major, Trans::no, Trans::yes), MathMode::tensor_fp32);
  EXPECT_EQ(tile_of(down), "16x128x32") << down.why;
  EXPECT_EQ(down.splits, 8) << down.why;
  // A lone block reads at 0.65 of its SM's share, not half: 8x1024x4096 NT split 16 (128 blocks, one
  // an SM) 14.6 us against split 28's 16.4 (perf-log 115).
  auto small = pick(g, shape(8, 1024, 4096, Layout::row_major, Trans::no, Trans::yes), MathMode::tensor_fp32);
  EXPECT_EQ(tile_of(small), "16x128x32") << small.why;
  EXPECT_EQ(small.splits, 16) << small.why;
}

// ozaki's pre-passes priced by the operands' layout (perf-log 119): a strided op(B)ᵀ (row-major NN)
// costs more than a K-contiguous one (NT), and the H200's 4096-token layers of K <= 3072 run it
// (tf768-down-T4096: ozaki predicted under kstep's measured 310 us).
TEST(Dispatch, OzakiPricesStridedOperandsAboveKContiguousOnes) {
  auto g = GpuModel::h200();
  auto nn = pick(g, shape(8192, 8192, 8192), MathMode::tensor_fp32);
  auto nt = pick(g, shape(8192, 8192, 8192, Layout::row_major, Trans::no, Trans::yes), MathMode::tensor_fp32);
  ASSERT_EQ(nn.family, "ozaki") << nn.why;
  ASSERT_EQ(nt.family, "ozaki") << nt.why;
  EXPECT_GT(nn.predicted_us, nt.predicted_us * 1.05);
  auto layer = pick(g, shape(4096, 768, 3072, Layout::row_major, Trans::no, Trans::yes), MathMode::tensor_fp32);
  EXPECT_EQ(layer.family, "ozaki") << layer.why;
  EXPECT_LT(layer.predicted_us, 300.0) << layer.why;
}

// The library says when ozaki's CRT steps reduce each product (small products at long K, where
// adding it whole could cost the contract; perf-log 121).
TEST(Dispatch, OzakiSaysWhereItsCrtStepsReduce) {
  auto g = GpuModel::h200();
  auto reduced = pick(g, shape(1024, 1024, 65536, Layout::row_major, Trans::no, Trans::yes), MathMode::tensor_fp32);
  auto whole = pick(g, shape(8192, 8192, 8192, Layout::row_major, Trans::no, Trans::yes), MathMode::tensor_fp32);
  ASSERT_EQ(reduced.family, "ozaki") << reduced.why;
  ASSERT_EQ(whole.family, "ozaki") << whole.why;
  EXPECT_NE(reduced.why.find("reduced before its CRT step"), std::string::npos) << reduced.why;
  EXPECT_EQ(whole.why.find("reduced"), std::string::npos) << whole.why;
}

// strict_fp32 with 33-48 columns: the 48-wide tile pads less than 64 (db-35x8457x2048-NT 71.7 us
// against 128x64's 81.8; perf-log 116). 64 columns keep the 64-wide tiles.
TEST(Dispatch, FortyEightColumnsTakeTheFortyEightWideTile) {
  for (auto g : {GpuModel::h100(), GpuModel::h200()}) {
    auto d = pick(g, shape(35, 8457, 2048, Layout::col_major, Trans::no, Trans::yes), MathMode::strict_fp32);
    EXPECT_EQ(tile_of(d), "128x48x32") << d.why;
    auto wide = pick(g, shape(8192, 64, 4096), MathMode::strict_fp32);
    EXPECT_NE(tile_of(wide), "128x48x32") << wide.why;
  }
}

// strict_fp32 at most 8 rows (perf-log 70): the 8-row warptiled tile, in NT and NN and as the
// transposed product of 8 columns (1.3-1.6x cuBLAS SGEMM at 8x16384x4096 NT and 8x4096x16384 NT,
// where 16x128 ran 0.84-1.06x); at 16 rows 16x128, which reads op(B) once where two rows of 8-row
// tiles read it twice (rhs-16x4096x4096: 32.5 us against 35.6).
TEST(Dispatch, EightRowsTakeTheEightRowTile) {
  auto g = GpuModel::h100();
  for (auto p : {shape(8, 16384, 4096, Layout::row_major, Trans::no, Trans::yes),
                 shape(8, 4096, 16384, Layout::row_major, Trans::no, Trans::yes), shape(4, 4096, 4096),
                 shape(4096, 8, 4096, Layout::col_major)}) {
    auto d = pick(g, p, MathMode::strict_fp32);
    EXPECT_EQ(d.family, "warptiled") << describe(p) << ": " << d.why;
    EXPECT_EQ(tile_of(d), "8x128x32") << describe(p) << ": " << d.why;
  }
  // Its split puts as many blocks on every SM, near enough (perf-log 72: 288 blocks, 3 on some SMs
  // and 2 on the rest, ran 1.27x the time of 384 at 8x4096x16384 NT).
  auto d = pick(g, shape(8, 4096, 16384, Layout::row_major, Trans::no, Trans::yes), MathMode::strict_fp32);
  const double blocks = 32.0 * d.splits, per_sm = blocks / g.sms;
  EXPECT_LT(std::ceil(per_sm) / per_sm, 1.1) << d.splits << " splits: " << d.why;
  auto sixteen = pick(g, shape(16, 4096, 4096), MathMode::strict_fp32);
  EXPECT_EQ(tile_of(sixteen), "16x128x16") << sixteen.why;
}

// hopper-simt's split tail pays ~10 us for each round of split units after the first (perf-log 62):
// 512x2304x768 NT (72 tiles) measured 68.3 us split 3 (two rounds), 74.7 split 5 (three), 87.7 split 6.
// The streamed tail (perf-log 107) gives each SM an equal share of those 72 tiles' K in one pass;
// 700x900x3000 NT (48 tiles of 64x256 with long K) splits 3 ways in two rounds.
TEST(Dispatch, SplitTailCountsItsRoundsAndStreamsAPartialWave) {
  auto d = pick(GpuModel::h100(), shape(512, 2304, 768, Layout::row_major, Trans::no, Trans::yes),
                MathMode::strict_fp32);
  EXPECT_EQ(d.family, "hopper-simt") << d.why;
  EXPECT_EQ(d.splits, 1) << d.why;
  EXPECT_NE(d.params.find("tail=stream"), std::string::npos) << d.params;
  EXPECT_NE(d.why.find("stream-K"), std::string::npos) << d.why;
  auto split = pick(GpuModel::h100(), shape(700, 900, 3000, Layout::row_major, Trans::no, Trans::yes),
                    MathMode::strict_fp32);
  EXPECT_EQ(split.family, "hopper-simt") << split.why;
  EXPECT_EQ(split.splits, 3) << split.why;
  EXPECT_NE(split.params.find("tail=split"), std::string::npos) << split.params;
}

TEST(Dispatch, LargeProductsTakeWideTilesAndTheTensorCoresOnHopper) {
  auto g = GpuModel::h100();
  // Strict FP32: the TMA-fed SIMT family on Hopper, warptiled's widest tile elsewhere.
  auto strict = pick(g, shape(8192, 8192, 8192), MathMode::strict_fp32);
  EXPECT_EQ(strict.family, "hopper-simt");
  // 4096 tiles of 128x128 = 31 waves of 132 and 4 tiles: those 4 and the wave before them are
  // streamed, a slot of partial sums per SM and per tile of them.
  EXPECT_NE(strict.params.find("tail=stream"), std::string::npos) << strict.why;
  EXPECT_EQ(strict.workspace_bytes, size_t(132 + 136) * 128 * 128 * 4);
  auto a100 = pick(GpuModel::a100(), shape(8192, 8192, 8192), MathMode::strict_fp32);
  EXPECT_EQ(a100.family, "warptiled");
  EXPECT_EQ(tile_of(a100), "128x256x16");
  // Leading dimensions TMA cannot read: both operands staged (rows of 4100 floats), in the model's
  // time and workspace.
  auto odd = pick(g, shape(4097, 4097, 4097), MathMode::strict_fp32);
  EXPECT_EQ(odd.family, "hopper-simt") << odd.why;
  EXPECT_GE(odd.workspace_bytes, size_t(2) * 4097 * 4100 * 4);
  // op(B) K-contiguous (row-major NT, column-major TN): swizzled, hopper-simt reads it at 0.98 of
  // its NN speed (measured), and keeps those.
  for (auto [l, ta, tb] : {std::tuple{Layout::row_major, Trans::no, Trans::yes}, {Layout::col_major, Trans::yes, Trans::no}}) {
    auto bt = pick(g, shape(4096, 4096, 4096, l, ta, tb), MathMode::strict_fp32);
    EXPECT_EQ(bt.family, "hopper-simt") << bt.why;
  }
  EXPECT_EQ(pick(g, shape(4096, 4096, 4096, Layout::col_major, Trans::no, Trans::yes), MathMode::strict_fp32).family,
            "hopper-simt");
  // FP32-accurate: Ozaki scheme II on INT8 where its moduli pay (long K, many tiles), saying how
  // many moduli it counts on (7 for normal inputs where cuBLAS sums each element in one chain,
  // perf-log 87) and what came next; 3xTF32 (kstep) below (measured, f3d4db3).
  auto ozaki = pick(g, shape(8192, 8192, 8192), MathMode::tensor_fp32);
  EXPECT_EQ(ozaki.family, "ozaki") << ozaki.why;
  EXPECT_NE(ozaki.why.find("7 moduli"), std::string::npos) << ozaki.why;
  EXPECT_NE(ozaki.why.find("next: wgmma"), std::string::npos) << ozaki.why;
  // Every plane the kernel may choose (16), the rows' exponents.
  EXPECT_GE(ozaki.workspace_bytes, size_t(16) * (8192 + 8192) * 8192);
  EXPECT_EQ(pick(g, shape(4096, 4096, 4096), MathMode::tensor_fp32).family, "ozaki");  // 2.07x against 1.44x
  // Since the pre-passes keep their parameters in place (perf-log 48): 1.35x against kstep's 1.19x.
  EXPECT_EQ(pick(g, shape(2048, 2048, 2048), MathMode::tensor_fp32).family, "ozaki");
  auto tensor = pick(g, shape(1536, 1536, 1536), MathMode::tensor_fp32);
  EXPECT_EQ(tensor.family, "wgmma") << tensor.why;
  EXPECT_NE(tensor.params.find("accum=kstep"), std::string::npos);  // the accurate accumulation
  EXPECT_NE(tensor.params.find("mode=3x"), std::string::npos);
  auto tf32 = pick(g, shape(8192, 8192, 8192), MathMode::tf32);
  EXPECT_EQ(tf32.family, "wgmma");
  EXPECT_NE(tf32.params.find("mode=1x"), std::string::npos);
  // The packed operands: two planes of (M + N) x K floats, and a tile per SM and split of the tail.
  const auto tt = parse_params(*find_family("wgmma"), tensor.params).at("tile");
  EXPECT_EQ(tensor.workspace_bytes, size_t(2) * (1536 + 1536) * 1536 * 4 +
                                        (tensor.splits > 1 ? size_t(132) * tt[0] * tt[1] * 4 * tensor.splits : 0));
}

// A partial last wave on hopper-simt: 2049³ is 289 tiles of 128x128, 2 waves of 132 and 25 more;
// the model streams the last whole wave and the 25 instead of running a third wave of whole tiles
// (412 us against the split tail's best, 4 ways, 417 on the H100), and says so. 768³ (36 tiles,
// under a wave) keeps its split: 34.5 us against the stream's 35.4 (perf-log 133).
TEST(Dispatch, PartialLastWaveIsStreamedOrSplit) {
  auto d = pick(GpuModel::h100(), shape(2049, 2049, 2049), MathMode::strict_fp32);
  EXPECT_EQ(d.family, "hopper-simt") << d.why;
  EXPECT_NE(d.why.find("tail streamed"), std::string::npos) << d.why;
  auto few = pick(GpuModel::h100(), shape(768, 768, 768), MathMode::strict_fp32);
  EXPECT_EQ(few.family, "hopper-simt") << few.why;
  EXPECT_GE(few.splits, 2) << few.why;
  EXPECT_NE(few.why.find("K split"), std::string::npos) << few.why;
  // warptiled (the A100) has no split tail: split-K over 19 waves only adds its reduce pass.
  auto a100 = pick(GpuModel::a100(), shape(8192, 8192, 8192), MathMode::strict_fp32);
  EXPECT_EQ(a100.splits, 1) << a100.why;
}

TEST(Dispatch, FewTilesTakeSmallerTilesOrSplits) {
  auto g = GpuModel::h100();
  // 768²: 18 tiles of 128x256 would leave 114 of 132 SMs idle.
  auto d = pick(g, shape(768, 768, 768), MathMode::strict_fp32);
  EXPECT_TRUE(tile_of(d) != "128x256x16" || d.splits > 1) << d.why;
  // Few rows: a narrow tile, not 128 rows of which 120 are empty.
  auto s = pick(g, shape(8, 4096, 4096), MathMode::strict_fp32);
  EXPECT_LE(parse_params(*find_family(s.family), s.params).at("tile")[0], 32) << s.why;
  auto t = pick(g, shape(4096, 16, 4096), MathMode::strict_fp32);
  EXPECT_LE(parse_params(*find_family(t.family), t.params).at("tile")[1], 32) << t.why;
  // 255³: 64-thread blocks (16x128) one per SM leave two warps to an SM; four-warp blocks win
  // (12.9 against 17.4 us on the H100, perf-log 51).
  for (long long n : {255, 256}) {
    auto q = pick(g, shape(n, n, n), MathMode::strict_fp32);
    const auto& f = *find_family(q.family);
    const auto v = parse_params(f, q.params);
    if (q.family == "warptiled")
      EXPECT_GE((v.at("tile")[0] / v.at("warp")[0]) * (v.at("tile")[1] / v.at("warp")[1]), 4) << q.why;
  }
}

// A split's last partial sums are written after its arithmetic (perf-log 140, FP64 sums): fewer,
// smaller slices where 64x64 split 8-14 ways measured 7 % slower (db-1760x64x1760 20.7 against 22.3
// us, tf1024-qkv-T64 19.9 against 21.5); the FP32 tiles keep their split (db-2560x16x2560 strict: 13
// ways 18.0 us, 23 ways 19.3).
TEST(Dispatch, Fp64SplitsPayForTheirLastPartialSums) {
  auto g = GpuModel::h100();
  for (auto p : {shape(1760, 64, 1760, Layout::col_major),
                 shape(64, 3072, 1024, Layout::row_major, Trans::no, Trans::yes)}) {
    auto d = pick(g, p, MathMode::tensor_fp32);
    EXPECT_EQ(d.family + " " + tile_of(d), "dmma 32x64x32") << describe(p) << ": " << d.why;
    EXPECT_LE(d.splits, 7) << describe(p) << ": " << d.why;
  }
  auto d = pick(g, shape(2560, 16, 2560, Layout::col_major), MathMode::strict_fp32);
  EXPECT_EQ(d.family, "warptiled") << d.why;
  EXPECT_EQ(d.splits, 13) << d.why;
}

// tensor_fp32's small products: the 8-warp dmma tile where it measured faster than 64x64 (perf-log
// 88 and 90): alone on its SMs (512³: 14.4 us against 64x64 split 2's 17.8) and two to an SM
// (777x555x333: 17.0 against 19.9; 640x640x320: 13.8 against 15.0), but not at 513³, where a few
// SMs hold two (153 blocks; 22.7 against 64x64 split 3's 20.4), nor at scale.
TEST(Dispatch, EightWarpFp64TilesWhereTheyMeasuredFaster) {
  auto g = GpuModel::h100();
  for (auto p : {shape(256, 256, 256), shape(511, 511, 511), shape(512, 512, 512), shape(777, 555, 333),
                 shape(640, 640, 320)}) {
    auto d = pick(g, p, MathMode::tensor_fp32);
    EXPECT_EQ(d.family + " " + tile_of(d), "dmma 32x64x32") << describe(p) << ": " << d.why;
  }
  for (auto p : {shape(513, 513, 513), shape(4096, 4096, 4096)}) {
    auto d = pick(g, p, MathMode::tensor_fp32);
    EXPECT_FALSE(d.family == "dmma" && tile_of(d) == "32x64x32") << describe(p) << ": " << d.why;
  }
  // Leading dimensions not a multiple of 4 floats: 4-byte copies, priced per K step (64x64x16:
  // 16 a thread, 21 K steps, ~3.8 us; 777x555x333 ran 19.9 us against 16.2 at 776x556x332).
  auto dmma_64x64 = [&](const Problem& p) {
    for (auto& c : dispatch_candidates(g, canonical(p), MathMode::tensor_fp32))
      if (c.family == "dmma" && tile_of(c) == "64x64x16" && c.splits == 1) return c.predicted_us;
    return 0.0;
  };
  const double unaligned = dmma_64x64(shape(777, 555, 333)), aligned = dmma_64x64(shape(776, 556, 332));
  EXPECT_GT(aligned, 0);
  EXPECT_NEAR(unaligned - aligned, 3.8, 0.5);
}

TEST(Dispatch, ShortKIsAStoreOfC) {
  auto g = GpuModel::h100();
  // K = 1 or 2 (lda not a multiple of 4: the tiled kernels store C a float at a time): outer streams
  // C with 16-byte stores, checked at run time.
  for (int64_t k : {1, 2}) EXPECT_EQ(pick(g, shape(4096, 4096, k), MathMode::strict_fp32).family, "outer") << k;
  // beta = 1: the tiled epilogues read and write C row by row (tk-8192x8192x8: 0.50x on warptiled).
  auto beta = shape(8192, 8192, 8);
  beta.beta = 1.0f;
  EXPECT_EQ(pick(g, beta, MathMode::strict_fp32).family, "outer") << pick(g, beta, MathMode::strict_fp32).why;
  // Few rows: outer's handful of blocks would leave the GPU idle.
  EXPECT_NE(pick(g, shape(8, 4096, 4096), MathMode::strict_fp32).family, "outer");
  // Few columns: a block's threads past them idle (rhs-16384x4x16384-TT ran at 0.023x on outer).
  EXPECT_NE(pick(g, shape(16384, 4, 16384, Layout::row_major, Trans::yes, Trans::yes), MathMode::strict_fp32).family,
            "outer");
  EXPECT_NE(pick(g, shape(4096, 4096, 256), MathMode::strict_fp32).family, "outer");
}

// tensor_fp32 takes a GEMV entry of the built-in table in FP64 (with_math) where its class has no
// FP64 entry. An FP32 entry whose FP64 form breaks a constraint (gemv-columns 8x128 with 8 outputs a
// thread: 64 KB of FP64 partial sums) must have an FP64 entry beside it, and is never converted.
TEST(Dispatch, GemvTableEntriesServeTensorFp32) {
  for (auto& e : builtin_table().entries()) {
    auto* f = find_family(e.family);
    ASSERT_TRUE(f) << e.family;
    if (f->op() != Op::gemv || e.params.find("accum=fp64") != std::string::npos) continue;
    if (fits_math(e.family, e.params, MathMode::tensor_fp32)) continue;
    const bool fp64_beside =
        std::any_of(builtin_table().entries().begin(), builtin_table().entries().end(), [&](auto& o) {
          return o.family == e.family && o.shape_class == e.shape_class &&
                 o.params.find("accum=fp64") != std::string::npos;
        });
    EXPECT_TRUE(fp64_beside) << e.family << " " << e.params << " (" << e.shape_class << ")";
  }
}

// outer's arithmetic overlaps C's traffic (perf-log 93): where it measured faster than the tiled
// kernels it is taken, and not where it measured slower (H100, results/h100/outer/shortk-ef88451).
TEST(Dispatch, OuterWhereShortKMeasuredFaster) {
  auto g = GpuModel::h100();
  auto with_beta = [](Problem p, float beta) {
    p.beta = beta;
    return p;
  };
  // tensor_fp32, beta 0: 8192² x 4 outer 109.7 us against dmma's 134.7; 16384² x 4 423.6 against
  // 521.9 (H200: 103 and 402 against dmma's persistent staged 110 and 414). Beta 1, K = 8 (H200):
  // 218.7 against dmma staged's 294.1 (results/h200/library/beta-83e3870).
  // With op(A) widened once per block (perf-log 136, H100): 4096² x 16 beta 1 69.6 us against dmma
  // 64x64's 79.1; but 8192² x 8 beta 0 142.8 against the persistent dmma's 110.6
  // (results/h100/outer/widen-b589284).
  for (auto p : {shape(8192, 8192, 4), shape(16384, 16384, 4), with_beta(shape(8192, 8192, 8), 1),
                 with_beta(shape(4096, 4096, 16), 1)}) {
    auto d = pick(g, p, MathMode::tensor_fp32);
    EXPECT_EQ(d.family, "outer") << describe(p) << ": " << d.why;
  }
  EXPECT_EQ(pick(g, shape(8192, 8192, 8), MathMode::tensor_fp32).family, "dmma");
  // strict_fp32, beta 1, K = 24: 313.2 against hopper-simt's 446.4; beta 0, K = 4 (the SIMT tiles'
  // C stores priced at what they reach, perf-log 95): 8192² 94.0 against warptiled's 139.4, 16384²
  // 367.2 against 527.1.
  for (auto p : {with_beta(shape(8192, 8192, 24), 1), shape(8192, 8192, 4), shape(16384, 16384, 4)}) {
    auto s = pick(g, p, MathMode::strict_fp32);
    EXPECT_EQ(s.family, "outer") << describe(p) << ": " << s.why;
  }
  // Beta 0, K = 8 and 16: warptiled's persistent 64x64 tiles store C at 2.3-2.6 TB/s (perf-log 96):
  // 16384² x 16 406.2 us against the tiled 32x128's 500.9, 8192² x 8 117.3 against outer's 123.8,
  // 8192² x 16 108.6 against 132.5. Measured at short K only: not at K = 32 (176.0 against
  // hopper-simt's 168.7).
  for (auto p : {shape(16384, 16384, 16), shape(8192, 8192, 8), shape(8192, 8192, 16)}) {
    auto s = pick(g, p, MathMode::strict_fp32);
    EXPECT_EQ(s.family + " " + tile_of(s), "warptiled 64x64x16") << describe(p) << ": " << s.why;
    EXPECT_NE(s.params.find("persistent=yes"), std::string::npos) << describe(p) << ": " << s.why;
  }
  EXPECT_EQ(pick(g, shape(8192, 8192, 32), MathMode::strict_fp32).params.find("persistent=yes"), std::string::npos);
  // Slower there: tensor_fp32 8192² x 8 (169.0 against dmma's 140.7) and x 16 (277.9 against 138.6).
  for (auto p : {shape(8192, 8192, 8), shape(8192, 8192, 16)}) {
    auto d = pick(g, p, MathMode::tensor_fp32);
    EXPECT_NE(d.family, "outer") << describe(p) << ": " << d.why;
  }
}

// tensor_fp32 at short K: dmma's persistent 64x64 blocks with C staged through shared memory (H200,
// results/h200/dmma/staged-3618e67): 16384² x 16 380 us against the tiled 32x128's 442 and cuBLAS
// SGEMM's 462; 8192² x 8 110 against 116-118; not at K = 32 (558 against 545) nor 4 (outer 3-6 %
// faster); at 4096³ the tiles, C staged or not, within 0.5 %.
TEST(Dispatch, ShortKTensorFp32StagesItsC) {
  for (auto& g : {GpuModel::h100(), GpuModel::h200()}) {
    for (auto p : {shape(16384, 16384, 16), shape(8192, 8192, 8), shape(8192, 8192, 16)}) {
      auto d = pick(g, p, MathMode::tensor_fp32);
      EXPECT_EQ(d.family + " " + tile_of(d), "dmma 64x64x16") << g.name << " " << describe(p) << ": " << d.why;
      EXPECT_NE(d.params.find("persistent=yes,store=staged"), std::string::npos) << g.name << " " << describe(p);
    }
    for (auto p : {shape(16384, 16384, 32), shape(16384, 16384, 4), shape(4096, 4096, 4096)})
      EXPECT_EQ(pick(g, p, MathMode::tensor_fp32).params.find("persistent=yes"), std::string::npos)
          << g.name << " " << describe(p);
    EXPECT_NE(pick(g, shape(16384, 16384, 32), MathMode::tensor_fp32).params.find("store=staged"), std::string::npos)
        << g.name;
  }
}

// Leading dimensions that are not multiples of 4 floats (the library's plan then takes the variants
// without 16-byte accesses): warptiled's 64x64 tile stages C through shared memory and was measured
// fastest (perf-log 97, results/h100/simt/staged-b9cd9e8): each one over, 8192² x 16 178 us against
// hopper-simt's 445 (C a float at a time), 4096² x 1 49.4 against outer's 89.6; 1000x777x13 tight
// (lda 13, ldc 777) 7.0-7.2 against 128x128's 11.0-11.3, 1000x1000x13 (lda 13 alone) 6.7 against
// hopper-simt's 20.3. outer tests C's own alignment: with lda = 1 alone it keeps 4096² x 1 (23.2 us).
TEST(Dispatch, UnalignedLeadingDimensionsTakeTheStagedStore) {
  auto g = GpuModel::h100();
  auto padded = [](Problem p) {
    p.lda += 1, p.ldb += 1, p.ldc += 1;
    return p;
  };
  for (auto p : {padded(shape(8192, 8192, 16)), padded(shape(4096, 4096, 1)), shape(1000, 777, 13),
                 shape(1000, 1000, 13)}) {
    auto s = pick(g, p, MathMode::strict_fp32);
    EXPECT_EQ(s.family + " " + tile_of(s), "warptiled 64x64x16") << describe(p) << ": " << s.why;
  }
  EXPECT_EQ(pick(g, shape(4096, 4096, 1), MathMode::strict_fp32).family, "outer");
}

TEST(Dispatch, TensorModesFallBackToSimtWhereTheTensorPathLoses) {
  auto g = GpuModel::h100();
  // Huge K with one tile: split K many ways, on the CUDA cores or in wgmma's split tail.
  auto huge_k = pick(g, shape(128, 128, 262144), MathMode::tensor_fp32);
  EXPECT_GT(huge_k.splits, 16) << huge_k.why;
  // Fewer 128x128 tiles than SMs: the tensor path takes smaller tiles or splits their K (half the
  // SMs busy otherwise).
  auto small = pick(g, shape(1024, 1024, 1024), MathMode::tensor_fp32);
  EXPECT_EQ(small.family, "wgmma") << small.why;
  auto tile = parse_params(*find_family("wgmma"), small.params).at("tile");
  EXPECT_GE((1024 / tile[0]) * (1024 / tile[1]) * small.splits, 100) << small.why;
  // On the A100 the mma.sync 3xTF32 family sums in FP32 fragments (never held to the contract):
  // FP32 accuracy on SIMT with FP64 accumulators.
  auto a100 = pick(GpuModel::a100(), shape(4096, 4096, 4096), MathMode::tensor_fp32);
  EXPECT_EQ(a100.family, "warptiled");
  EXPECT_NE(a100.params.find("accum=fp64"), std::string::npos) << a100.params;
  EXPECT_EQ(pick(GpuModel::a100(), shape(4096, 4096, 4096), MathMode::tf32).family, "tf32");
}

// The configuration sums in FP64: FP64 accumulators on the CUDA cores, or the FP64 tensor cores.
bool sums_in_fp64(const Dispatch& d) {
  auto& f = *find_family(d.family);
  return f.fp64_accumulators(parse_params(f, d.params));
}

// tensor_fp32's contract (error at most cuBLAS SGEMM's, perf-log 37-38): SIMT only with FP64
// accumulators or the FP64 tensor cores (dmma), kstep only from K = 128 (1.05-1.94x cuBLAS SGEMM's error at K = 16 to 64), ozaki
// from K = 32 (3.4x at K = 16), hopper-simt never (FP32 accumulators only). Every corpus shape, both GPUs.
TEST(Dispatch, TensorFp32TakesOnlyRoutesThatMeetItsContract) {
  auto corpus = load_corpus("builtin");
  for (auto& g : {GpuModel::h100(), GpuModel::a100()})
    for (auto& s : corpus) {
      auto d = pick(g, s.problem, MathMode::tensor_fp32);
      if (d.route != Route::gemm) continue;
      if (d.family == "wgmma" || d.family == "ozaki") {
        EXPECT_GE(s.problem.k, d.family == "wgmma" ? 128 : 32) << s.name << ": " << d.why;
        EXPECT_EQ(d.family == "wgmma", d.params.find("accum=kstep") != std::string::npos) << s.name;
      } else {
        EXPECT_TRUE(sums_in_fp64(d)) << s.name << ": " << d.family << " " << d.params;
        // FP32 sums of each K tile: as FP32 at K = 16 (one tile), within the contract from 32.
        if (d.params.find("accum=fp64tile") != std::string::npos) EXPECT_GE(s.problem.k, 32) << s.name;
        EXPECT_NE(d.why.find("FP64 accumulators"), std::string::npos) << d.why;
      }
    }
  auto g = GpuModel::h100();
  for (int64_t k : {1, 16, 31}) {
    auto d = pick(g, shape(4096, 4096, k), MathMode::tensor_fp32);
    EXPECT_TRUE(sums_in_fp64(d)) << k << ": " << d.family << " " << d.params;
    EXPECT_EQ(d.params.find("accum=fp64tile"), std::string::npos) << k << ": " << d.params;
  }
  // Few rows: FP32 sums per K tile on 8.0; the FP64 tensor cores, twice DFMA's rate, on 9.0.
  EXPECT_NE(pick(GpuModel::a100(), shape(8, 12288, 4096), MathMode::tensor_fp32).params.find("accum=fp64tile"),
            std::string::npos);
  EXPECT_EQ(pick(g, shape(8, 12288, 4096), MathMode::tensor_fp32).family, "dmma");
  for (int64_t k : {32, 64, 127}) EXPECT_NE(pick(g, shape(4096, 4096, k), MathMode::tensor_fp32).family, "wgmma") << k;
  EXPECT_EQ(pick(g, shape(4096, 4096, 256), MathMode::tensor_fp32).family, "wgmma");
  // Strict FP32 keeps cuBLAS SGEMM's arithmetic.
  EXPECT_EQ(pick(g, shape(4096, 4096, 16), MathMode::strict_fp32).params.find("accum=fp64"), std::string::npos);
}

// A few-row product computed transposed, Cᵀ = op(B)ᵀ·op(A)ᵀ: the large op(B) read in place and split
// in registers (perf-log 41); few columns take the same tile as given; a square takes the 128x64 tile
// with both operands packed (perf-log 80), as given.
TEST(Dispatch, FewRowsTakeTheTransposedProduct) {
  auto g = GpuModel::h100();
  auto& w = *find_family("wgmma");
  auto few_rows = pick(g, shape(64, 8192, 32768, Layout::row_major, Trans::no, Trans::yes), MathMode::tensor_fp32);
  ASSERT_EQ(few_rows.family, "wgmma") << few_rows.why;
  EXPECT_TRUE(w.transposes(parse_params(w, few_rows.params))) << few_rows.params;
  EXPECT_NE(few_rows.why.find("transposed product"), std::string::npos) << few_rows.why;
  auto few_columns = pick(g, shape(12288, 96, 12288), MathMode::tensor_fp32);
  ASSERT_EQ(few_columns.family, "wgmma") << few_columns.why;
  EXPECT_FALSE(w.transposes(parse_params(w, few_columns.params))) << few_columns.params;
  EXPECT_EQ(parse_params(w, few_columns.params).at("tile")[1], 64) << few_columns.params;
  auto square = pick(g, shape(1536, 1536, 1536), MathMode::tensor_fp32);
  ASSERT_EQ(square.family, "wgmma") << square.why;
  const auto sq = parse_params(w, square.params);
  EXPECT_EQ(sq.at("tile")[1], 64) << square.params;
  EXPECT_EQ(sq.at("split_a")[0], 0) << square.params;
  EXPECT_FALSE(w.transposes(sq));
}

// The transposed product reads the same elements: op(A) of it is op(B)ᵀ and op(B) is op(A)ᵀ, in
// every layout and transpose, with padded leading dimensions; only a configuration that transposes
// is handed it.
// C = op(A)·op(B) from the stored arrays, each element once, counted in `writes` (independent of
// the library's stride helpers).
void stored_product(const Problem& p, const float* a, const float* b, double* c, int* writes) {
  auto stored = [&](const float* x, int64_t ld, int64_t r, int64_t col) {
    return double(p.layout == Layout::row_major ? x[r * ld + col] : x[col * ld + r]);
  };
  for (int64_t i = 0; i < p.m; ++i)
    for (int64_t j = 0; j < p.n; ++j) {
      double sum = 0;
      for (int64_t k = 0; k < p.k; ++k)
        sum += (p.trans_a == Trans::no ? stored(a, p.lda, i, k) : stored(a, p.lda, k, i)) *
               (p.trans_b == Trans::no ? stored(b, p.ldb, k, j) : stored(b, p.ldb, j, k));
      const int64_t at = p.layout == Layout::row_major ? i * p.ldc + j : j * p.ldc + i;
      c[at] = sum, ++writes[at];
    }
}

// A peeled product's parts, computed from where they start in the caller's arrays, give every
// element of C once and the whole product's values, in all eight storage orders with padding.
TEST(Peel, PartsCoverTheProductOnce) {
  std::mt19937 rng(104);
  std::uniform_real_distribution<float> u(-1, 1);
  for (auto l : {Layout::row_major, Layout::col_major})
    for (auto ta : {Trans::no, Trans::yes})
      for (auto tb : {Trans::no, Trans::yes})
        for (Peel peel : {Peel{3, 2}, Peel{1, 0}, Peel{0, 4}}) {
          Problem p = shape(13, 11, 5, l, ta, tb);
          p.lda += 3, p.ldb += 1, p.ldc += 2;
          std::vector<float> a(size_t(p.lda) * 16), b(size_t(p.ldb) * 16);
          for (auto& x : a) x = u(rng);
          for (auto& x : b) x = u(rng);
          const size_t cn = size_t(p.ldc) * 16;
          std::vector<double> whole(cn, 0), parts(cn, 0);
          std::vector<int> once(cn, 0), writes(cn, 0);
          stored_product(p, a.data(), b.data(), whole.data(), once.data());
          const auto blocks = peel_parts(p, peel);
          EXPECT_EQ(blocks.size(), size_t(1 + (peel.rows > 0) + (peel.cols > 0)));
          for (const auto& x : blocks)
            stored_product(x.problem, a.data() + x.a_at, b.data() + x.b_at, parts.data() + x.c_at,
                           writes.data() + x.c_at);
          EXPECT_EQ(writes, once) << describe(p);
          EXPECT_EQ(parts, whole) << describe(p);
        }
}

// The model peels a product one past a multiple of 128 and leaves a multiple, an odd size far from
// one, and where the edges cost more than the main block saves (as measured) alone.
TEST(Peel, ModelPeelsJustPastATileMultiple) {
  const auto h100 = GpuModel::h100();
  for (auto l : {Layout::row_major, Layout::col_major}) {
    const Peel x = peel(h100, shape(1025, 1025, 1025, l), MathMode::strict_fp32);
    EXPECT_EQ(x.rows, 1);
    EXPECT_EQ(x.cols, 1);
    EXPECT_LT(x.parts_us, x.whole_us);
  }
  // Eight rows past 1024: the thin products' edges cost more than the main block saves (measured).
  EXPECT_FALSE(peel(h100, shape(1032, 1032, 1032), MathMode::strict_fp32).any());
  EXPECT_FALSE(peel(h100, shape(1025, 1025, 1025), MathMode::tensor_fp32).any());
  EXPECT_FALSE(peel(h100, shape(1024, 1024, 1024), MathMode::strict_fp32).any());
  EXPECT_FALSE(peel(h100, shape(1000, 1000, 1000), MathMode::strict_fp32).any());
  EXPECT_FALSE(peel(h100, shape(257, 257, 257), MathMode::strict_fp32).any());
  EXPECT_TRUE(peel(h100, shape(2049, 2049, 2049), MathMode::tensor_fp32).any());
}

// GEMMLAB_MODEL names the model the library plans with; an unknown name is none.
TEST(Model, NamedGpuModels) {
  EXPECT_EQ(GpuModel::named("h100")->dram_gbps, GpuModel::h100().dram_gbps);
  EXPECT_EQ(GpuModel::named("a100")->sms, 108);
  EXPECT_GT(GpuModel::named("h200")->dram_gbps, 1.4 * GpuModel::h100().dram_gbps);
  EXPECT_EQ(GpuModel::named("h200")->sms, 132);
  EXPECT_FALSE(GpuModel::named("b200").has_value());
  EXPECT_FALSE(GpuModel::named("").has_value());
}

// A peeled call's edges run beside its main block, except after an ozaki main block of many waves
// (perf-log 105c: tensor_fp32 8193³ 8.62 ms beside, 7.25 after; the edges alone 0.17).
TEST(Peel, EdgesAfterALongOzakiMainBlock) {
  const auto h100 = GpuModel::h100();
  auto main = [](long long m) { return shape(m, m, m + 1); };
  EXPECT_TRUE(edges_beside(h100, main(2048), "ozaki"));  // 1.94 waves
  EXPECT_FALSE(edges_beside(h100, main(4096), "ozaki"));  // 7.76
  EXPECT_FALSE(edges_beside(h100, main(8192), "ozaki"));
  EXPECT_TRUE(edges_beside(h100, main(8192), "hopper-simt"));
  EXPECT_TRUE(edges_beside(h100, main(8192), "wgmma"));
}

// A strided x is gathered before a GEMV that reads it once per row, when the matrix is large enough
// to pay for the copy: a row-major product's column edge (B's last column) and sgemv with incx >= 8,
// not a column-contiguous GEMV (it reads x once per block), close elements or a small matrix.
TEST(Gather, StridedVectorsOfRowContiguousGemvs) {
  auto gemv = [](int64_t m, int64_t k, Trans t, int64_t incx) {
    Problem g = normalized(Problem::gemv(m, k, Layout::row_major, t));
    g.ldb = incx;
    return g;
  };
  EXPECT_TRUE(gathers_x(gemv(4096, 4097, Trans::no, 4097)));
  EXPECT_TRUE(gathers_x(gemv(2048, 2049, Trans::no, 8)));
  EXPECT_FALSE(gathers_x(gemv(2048, 2049, Trans::no, 7)));  // two elements share some sectors
  EXPECT_FALSE(gathers_x(gemv(4096, 4097, Trans::no, 1)));
  EXPECT_FALSE(gathers_x(gemv(4096, 4097, Trans::yes, 4097)));
  EXPECT_FALSE(gathers_x(gemv(1024, 1025, Trans::no, 1025)));  // 1M elements: the copy costs what it saves
  EXPECT_FALSE(gathers_x(gemv(32, 1 << 20, Trans::no, 3)));    // few rows read x few times
  // The column edge of a peeled row-major 4097³ is such a GEMV; col-major's is contiguous.
  for (auto [layout, gathers] : {std::pair{Layout::row_major, true}, {Layout::col_major, false}}) {
    const Problem p = shape(4097, 4097, 4097, layout);
    const auto parts = peel_parts(p, Peel{1, 1});
    const Problem edge = canonical(parts[2].problem);
    const Route r = edge.n == 1 ? Route::gemv_n : Route::gemv_m;
    EXPECT_EQ(gathers_x(vector_problem(edge, r)), gathers) << to_string(layout);
  }
}

// hopper-simt stages operands TMA cannot read, so an odd lda or ldb leaves its C stores 16 bytes
// wide; a family that reads operands itself takes the all-unaligned variant (built ahead of time).
TEST(Launch, VariantOfATmaFamilyFollowsC) {
  auto& h = *find_family("hopper-simt");
  auto& w = *find_family("warptiled");
  const auto hv = parse_params(h, ""), wv = parse_params(w, "");
  Problem p = shape(2047, 2047, 2047, Layout::row_major, Trans::no, Trans::no);
  p.ldc = 2048;
  const Variant given{true, true, /*a_vec=*/false, /*b_vec=*/false, /*c_vec=*/true};
  for (bool whole : {false, true}) {
    const Variant v = call_variant(h, hv, p, given, whole);
    EXPECT_TRUE(v.a_vec && v.b_vec && v.c_vec) << "whole alignment " << whole;
  }
  const Variant wt = call_variant(w, wv, p, given, true);
  EXPECT_FALSE(wt.a_vec || wt.b_vec || wt.c_vec);
  const Variant wp = call_variant(w, wv, p, given, false);  // the lab's own mix
  EXPECT_TRUE(!wp.a_vec && !wp.b_vec && wp.c_vec);
  // C unaligned: nothing 16 bytes wide, whatever the operands.
  const Variant odd_c = call_variant(h, hv, p, Variant{true, true, true, true, false}, true);
  EXPECT_FALSE(odd_c.a_vec || odd_c.b_vec || odd_c.c_vec);
  // A transposed product writes the caller's columns: never C's rows.
  const Variant t = call_variant(h, parse_params(h, "transpose=yes"), p, Variant{true, true, true, true, true}, true);
  EXPECT_FALSE(t.c_vec);
}

TEST(Launch, TransposedProductIsTheSameProduct) {
  std::mt19937 rng(41);
  auto& w = *find_family("wgmma");
  for (auto l : {Layout::row_major, Layout::col_major})
    for (auto ta : {Trans::no, Trans::yes})
      for (auto tb : {Trans::no, Trans::yes}) {
        Problem p = shape(37, 53, 29, l, ta, tb);
        p.lda += 3, p.ldb += 5, p.ldc += 7;
        const Problem c = canonical(p), q = transposed_product(c);
        EXPECT_EQ(q.m, c.n);
        EXPECT_EQ(q.n, c.m);
        EXPECT_EQ(q.k, c.k);
        for (int t = 0; t < 50; ++t) {
          const int64_t i = rng() % c.m, j = rng() % c.n, k = rng() % c.k;
          EXPECT_EQ(op_a_strides(q).at(j, k), op_b_strides(c).at(k, j)) << describe(p);
          EXPECT_EQ(op_b_strides(q).at(k, i), op_a_strides(c).at(i, k)) << describe(p);
        }
        const Problem yes = family_problem(w, parse_params(w, "transpose=yes"), p);
        const Problem no = family_problem(w, parse_params(w, ""), p);
        EXPECT_EQ(yes.m, q.m);
        EXPECT_EQ(yes.trans_a, q.trans_a);
        EXPECT_EQ(yes.lda, q.lda);
        EXPECT_EQ(no.m, c.m);
        EXPECT_EQ(no.trans_b, c.trans_b);
      }
}

// The library's other tensor_fp32 configurations (the GEMV routes, the defaults without workspace)
// in the same arithmetic; strict and tf32 unchanged.
TEST(Dispatch, ConfigurationsInTheModesArithmetic) {
  for (const char* gemv : {"gemv-block", "gemv-columns", "gemv-vectorized"}) {
    auto& f = *find_family(gemv);
    auto accurate = default_params(gemv, MathMode::tensor_fp32);
    EXPECT_EQ(parse_params(f, accurate).at("accum")[0], 1) << accurate;
    EXPECT_EQ(parse_params(f, default_params(gemv, MathMode::strict_fp32)).at("accum")[0], 0);
    EXPECT_EQ(with_math(gemv, "unroll=2", MathMode::tensor_fp32).find("accum=fp64") != std::string::npos, true);
    EXPECT_EQ(with_math(gemv, "unroll=2", MathMode::tf32), "unroll=2");
    // From K = kTileSumsMinK, FP32 runs added in FP64 (fp64tile); below it every product in FP64.
    EXPECT_EQ(parse_params(f, default_params(gemv, MathMode::tensor_fp32, kTileSumsMinK)).at("accum")[0], 2);
    EXPECT_EQ(parse_params(f, with_math(gemv, "unroll=2", MathMode::tensor_fp32, kTileSumsMinK - 1)).at("accum")[0], 1);
    EXPECT_EQ(with_math(gemv, "unroll=2", MathMode::strict_fp32, 4096), "unroll=2");
    // ... and up to kTileSumsMaxRows outputs (measured slower from there).
    auto accum = [&](long long rows) {
      return parse_params(f, with_math(gemv, "unroll=2", MathMode::tensor_fp32, 4096, rows)).at("accum")[0];
    };
    EXPECT_EQ(accum(kTileSumsMaxRows - 1), 2);
    EXPECT_EQ(accum(kTileSumsMaxRows), 1);
  }
  auto& w = *find_family("warptiled");
  const auto fallback = default_params("warptiled", MathMode::tensor_fp32);
  EXPECT_TRUE(accepts(w, fallback)) << fallback;
  EXPECT_EQ(parse_params(w, fallback).at("accum")[0], 1) << fallback;
  EXPECT_EQ(default_params("warptiled", MathMode::strict_fp32), format_params(w, parse_params(w, "")));
  // Families without FP64 accumulators are returned as given.
  EXPECT_EQ(with_math("wgmma", "mode=3x", MathMode::tensor_fp32), "mode=3x");
  // Every tensor_fp32 configuration is built ahead of time.
  auto built = dispatch_configurations(90);
  for (const char* gemv : {"gemv-block", "gemv-columns"})
    for (long long k : {0ll, kTileSumsMinK})
      EXPECT_NE(std::find(built.begin(), built.end(),
                          std::make_pair(std::string(gemv), default_params(gemv, MathMode::tensor_fp32, k))),
                built.end())
          << gemv << " K " << k;
}

// Every corpus shape, every mode, both GPUs: a valid configuration that takes the problem, built
// ahead of time, within the workspace bounds.
TEST(Dispatch, EveryCorpusShapeGetsABuiltKernel) {
  auto corpus = load_corpus("builtin");
  EXPECT_GE(corpus.size(), 100u);
  for (auto& g : {GpuModel::h100(), GpuModel::a100()}) {
    auto built = dispatch_configurations(g.arch);
    for (auto& s : corpus)
      for (auto m : kModes) {
        auto d = pick(g, s.problem, m);
        if (d.route != Route::gemm) continue;
        auto* f = find_family(d.family);
        ASSERT_TRUE(f) << d.family;
        auto v = parse_params(*f, d.params);
        EXPECT_EQ(f->unsupported(v, canonical(s.problem)), "") << s.name;
        if (v.count("splitk")) v["splitk"] = {1};
        auto key = std::make_pair(d.family, format_params(*f, v));
        EXPECT_NE(std::find(built.begin(), built.end(), key), built.end()) << s.name << ": " << d.params;
        EXPECT_GT(d.predicted_us, 0) << s.name;
        EXPECT_LE(d.workspace_bytes, g.memory_bytes / 4) << s.name;
        EXPECT_FALSE(d.why.empty());
      }
  }
}

TEST(Dispatch, ConfigurationsAreValidAndArchAware) {
  for (int arch : {75, 80, 86, 90}) {
    auto c = dispatch_configurations(arch);
    EXPECT_FALSE(c.empty());
    for (auto& [family, params] : c) {
      auto* f = find_family(family);
      ASSERT_TRUE(f) << family;
      EXPECT_TRUE(accepts(*f, params)) << family << " " << params;
      EXPECT_LE(f->min_arch(), arch) << family;
      if (f->arch_specific()) EXPECT_EQ(f->min_arch(), arch) << family;
    }
  }
}

TEST(Corpus, ParsesShapesOptionsAndGroups) {
  auto c = parse_corpus(
      "# a comment\n"
      "group: tests\n"
      "a  10x20x30\n"
      "b  64  layout=col trans=TN pad=3 alpha=0.5 beta=1  # square\n",
      "t.txt");
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].name, "a");
  EXPECT_EQ(c[0].group, "tests");
  EXPECT_EQ(c[0].problem.m, 10);
  EXPECT_EQ(c[0].problem.n, 20);
  EXPECT_EQ(c[0].problem.k, 30);
  EXPECT_EQ(c[0].problem.lda, 30);
  auto& b = c[1].problem;
  EXPECT_EQ(b.layout, Layout::col_major);
  EXPECT_EQ(b.trans_a, Trans::yes);
  EXPECT_EQ(b.trans_b, Trans::no);
  EXPECT_EQ(b.lda, 67);
  EXPECT_EQ(b.ldc, 67);
  EXPECT_FLOAT_EQ(b.alpha, 0.5f);
  EXPECT_FLOAT_EQ(b.beta, 1.0f);
  EXPECT_EQ(select_corpus(c, "b").size(), 1u);
  EXPECT_EQ(select_corpus(c, "tests").size(), 2u);
}

TEST(Corpus, RefusesBadEntriesWithFileAndLine) {
  auto refused = [](const std::string& text, const std::string& needle) {
    try {
      parse_corpus(text, "c.txt");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  refused("a 10x20x30\nb 10x0x3\n", "c.txt:2:");
  refused("a 10x20x30 trans=NX\n", "c.txt:1:");
  refused("a 10x20x30 colour=red\n", "unknown option 'colour'");
  refused("a 10x20x30\na 5x5x5\n", "used twice");
  refused("a\n", "expected 'name MxNxK");
  refused("a 10x20x30 pad=-1\n", "pad=");
  refused("# nothing\n", "no shapes");
}

TEST(Corpus, BuiltinCoversTheIssueClasses) {
  auto c = load_corpus("builtin");
  auto any = [&](auto pred) { return std::any_of(c.begin(), c.end(), [&](auto& s) { return pred(s.problem); }); };
  EXPECT_TRUE(any([](const Problem& p) { return p.m == 1; }));
  EXPECT_TRUE(any([](const Problem& p) { return p.n == 1; }));
  EXPECT_TRUE(any([](const Problem& p) { return p.k >= 262144 && p.m * p.n <= 128 * 128; }));
  EXPECT_TRUE(any([](const Problem& p) { return p.k <= 32 && p.m >= 16384; }));
  EXPECT_TRUE(any([](const Problem& p) { return p.m >= 2 && p.m <= 16 && p.n > 1; }));
  EXPECT_TRUE(any([](const Problem& p) { return p.layout == Layout::col_major && p.trans_a == Trans::yes && p.trans_b == Trans::yes; }));
  EXPECT_TRUE(any([](const Problem& p) { return p.lda > stored_a(p).min_ld(); }));
  for (int64_t n : {255, 256, 257, 16383, 16384, 16385})
    EXPECT_TRUE(any([&](const Problem& p) { return p.m == n && p.n == n && p.k == n; })) << n;
}

// The BLAS drop-in's settings and argument checks (src/blas/offload.hpp).
namespace {
std::map<std::string, std::string> blas_env;
const char* blas_getenv(const char* name) {
  auto it = blas_env.find(name);
  return it == blas_env.end() ? nullptr : it->second.c_str();
}
}  // namespace

TEST(BlasDropin, SettingsFromTheEnvironment) {
  blas_env = {};
  auto d = gemmlab::blas::parse_settings(blas_getenv);
  EXPECT_EQ(d.sgemm_threshold, int64_t(1) << 25);
  EXPECT_EQ(d.sgemv_threshold, INT64_MAX);
  EXPECT_EQ(d.math, gemmlab::MathMode::strict_fp32);
  EXPECT_TRUE(d.warnings.empty());
  blas_env = {{"GEMMLAB_BLAS_THRESHOLD", "0"}, {"GEMMLAB_BLAS_SGEMV_THRESHOLD", "1000"},
              {"GEMMLAB_BLAS_MATH", "tensor_fp32"}, {"GEMMLAB_BLAS_VERBOSE", "1"}};
  auto s = gemmlab::blas::parse_settings(blas_getenv);
  EXPECT_EQ(s.sgemm_threshold, 0);
  EXPECT_EQ(s.sgemv_threshold, 1000);  // the specific variable wins over the shared one
  EXPECT_EQ(s.math, gemmlab::MathMode::tensor_fp32);
  EXPECT_TRUE(s.verbose);
  blas_env = {{"GEMMLAB_BLAS_SGEMM_THRESHOLD", "-5"}, {"GEMMLAB_BLAS_MATH", "fp16"}, {"GEMMLAB_BLAS_THRESHOLD", "1e6"}};
  auto bad = gemmlab::blas::parse_settings(blas_getenv);
  EXPECT_EQ(bad.sgemm_threshold, d.sgemm_threshold);
  EXPECT_EQ(bad.math, gemmlab::MathMode::strict_fp32);
  EXPECT_NE(bad.warnings.find("ignoring GEMMLAB_BLAS_SGEMM_THRESHOLD=-5"), std::string::npos);
  EXPECT_NE(bad.warnings.find("ignoring GEMMLAB_BLAS_MATH=fp16"), std::string::npos);
  EXPECT_NE(bad.warnings.find("ignoring GEMMLAB_BLAS_THRESHOLD=1e6"), std::string::npos);
}

TEST(BlasDropin, ArgumentChecksFollowReferenceBlas) {
  using gemmlab::blas::sgemm_info;
  using gemmlab::blas::sgemv_info;
  EXPECT_EQ(sgemm_info('N', 'n', 3, 4, 5, 3, 5, 3), 0);
  EXPECT_EQ(sgemm_info('t', 'C', 3, 4, 5, 5, 4, 3), 0);
  EXPECT_EQ(sgemm_info('X', 'N', -1, 4, 5, 3, 5, 3), 1);  // the first bad argument wins
  EXPECT_EQ(sgemm_info('N', 'Y', 3, 4, 5, 3, 5, 3), 2);
  EXPECT_EQ(sgemm_info('N', 'N', -1, 4, 5, 3, 5, 3), 3);
  EXPECT_EQ(sgemm_info('N', 'N', 3, -1, 5, 3, 5, 3), 4);
  EXPECT_EQ(sgemm_info('N', 'N', 3, 4, -1, 3, 5, 3), 5);
  EXPECT_EQ(sgemm_info('N', 'N', 3, 4, 5, 2, 5, 3), 8);
  EXPECT_EQ(sgemm_info('T', 'N', 3, 4, 5, 4, 5, 3), 8);   // op(A) = Aᵀ: A is K x M, lda >= K
  EXPECT_EQ(sgemm_info('N', 'T', 3, 4, 5, 3, 3, 3), 10);  // B is N x K, ldb >= N
  EXPECT_EQ(sgemm_info('N', 'N', 3, 4, 5, 3, 5, 2), 13);
  EXPECT_EQ(sgemm_info('N', 'N', 0, 0, 0, 1, 1, 1), 0);   // empty products are valid with ld 1
  EXPECT_EQ(sgemv_info('N', 3, 4, 3, 1, -2), 0);
  EXPECT_EQ(sgemv_info('Q', 3, 4, 3, 1, 1), 1);
  EXPECT_EQ(sgemv_info('N', -3, 4, 3, 1, 1), 2);
  EXPECT_EQ(sgemv_info('N', 3, -4, 3, 1, 1), 3);
  EXPECT_EQ(sgemv_info('T', 3, 4, 2, 1, 1), 6);
  EXPECT_EQ(sgemv_info('N', 3, 4, 3, 0, 1), 8);
  EXPECT_EQ(sgemv_info('N', 3, 4, 3, 1, 0), 11);
}

// The candidates `choose --candidates` lists: the dispatcher's choice first, each with its split in
// its parameters, sorted by prediction, every one valid for the problem.
TEST(Dispatch, CandidatesStartWithTheChoice) {
  const GpuModel g = GpuModel::h100();
  for (auto m : kModes)
    for (auto p : {shape(255, 255, 255), shape(513, 513, 513), shape(8, 4096, 4096, Layout::row_major, Trans::no, Trans::yes),
                   shape(4096, 4096, 4096), shape(128, 128, 262144), shape(16384, 16384, 16)}) {
      const auto all = dispatch_candidates(g, canonical(p), m);
      const auto d = pick(g, p, m);
      ASSERT_GE(all.size(), 2u) << describe(p);
      EXPECT_EQ(all[0].family + " " + all[0].params, d.family + " " + d.params) << describe(p) << " " << to_string(m);
      EXPECT_DOUBLE_EQ(all[0].predicted_us, d.predicted_us);
      for (size_t i = 0; i < all.size(); ++i) {
        if (i) EXPECT_LE(all[i - 1].predicted_us, all[i].predicted_us);
        const auto& f = *find_family(all[i].family);
        const auto v = parse_params(f, all[i].params);
        EXPECT_EQ(FamilyLauncher(f, v).unsupported(canonical(p)), "") << all[i].family << " " << all[i].params;
        if (v.count("splitk")) EXPECT_EQ(v.at("splitk")[0], all[i].splits);
      }
    }
}
