// The analytic model, the metric sets and the analysis commands, without a GPU.
#include <gtest/gtest.h>

#include <filesystem>
#include <tuple>
#include <vector>

#include "cli_helpers.hpp"
#include "counters/counters.hpp"
#include "gemmlab/error.hpp"
#include "common/files.hpp"
#include "model/model.hpp"
#include "bench/profile.hpp"
#include "kernels/tiled.hpp"

using namespace gemmlab;

namespace {
Problem square(int64_t n, float beta = 0) {
  Problem p = problem_of_shape(Op::gemm, {n, n, n}, Layout::row_major, Trans::no, Trans::no);
  p.beta = beta;
  return normalized(p);
}
KernelModel model_of(const char* family, const char* params, const Problem& p) {
  const KernelFamily& f = *find_family(family);
  return predict(f, parse_params(f, params), p, DeviceLimits::h100(), {}).counts;
}
}  // namespace

// Hand-counted: regblock2d 16x16 threads, 8x8 values, 128x128x16 tiles on 1024^3: 64 blocks x 64
// K tiles; per tile each of 8 warps loads (128x16 + 16x128) / 256 = 16 elements, one LDG and one
// STS each; reads 8 rows of A along k (16 floats: 4 LDS.128 each) and 8 scalar B values per k.
TEST(Model, Regblock2dHandCounted) {
  auto m = model_of("regblock2d", "block=16x16,vpt=8x8,tile=128x128x16", square(1024));
  const double steps = 64.0 * 64, warps = 8;
  EXPECT_DOUBLE_EQ(m.global_load_inst, steps * warps * 16);
  EXPECT_DOUBLE_EQ(m.shared_store_inst, steps * warps * 16);
  EXPECT_DOUBLE_EQ(m.shared_load_inst, steps * warps * (8 * 4 + 16 * 8));
  EXPECT_DOUBLE_EQ(m.global_store_inst, 64.0 * warps * 64);
  EXPECT_DOUBLE_EQ(m.global_load_bytes, steps * 4.0 * (128 + 128) * 16);
  // Lumped placement merges a thread's 4 adjacent B values into one 128-bit load per k.
  auto l = model_of("regblock2d", "block=16x8,vpt=4x4,tile=32x64x16,placement=lumped", square(1024));
  EXPECT_DOUBLE_EQ(l.shared_load_inst, 32.0 * 16 * 64 * 4 * (4 * 4 + 16 * 1));
}

// vectorized 128x128x8, 8x8 values: 256 threads; per K tile each thread moves one 16-byte chunk of
// A (LDG.128, then 4 transposing STS) and one of B (LDG.128, one STS.128), then reads
// 8 x (2 + 2) LDS.128; the epilogue writes 8 rows x 2 STG.128.
TEST(Model, VectorizedHandCounted) {
  auto m = model_of("vectorized", "tile=128x128x8,vpt=8x8", square(1024));
  const double steps = 64.0 * 128, warps = 8;
  EXPECT_DOUBLE_EQ(m.global_load_inst, steps * warps * 2);
  EXPECT_DOUBLE_EQ(m.shared_store_inst, steps * warps * 5);
  EXPECT_DOUBLE_EQ(m.shared_load_inst, steps * warps * 8 * 4);
  EXPECT_DOUBLE_EQ(m.global_store_inst, 64.0 * warps * 16);
  EXPECT_DOUBLE_EQ(m.global_async_inst, 0);
  // beta != 0 reads C as often as it writes it.
  auto b = model_of("vectorized", "tile=128x128x8,vpt=8x8", square(1024, 0.5f));
  EXPECT_DOUBLE_EQ(b.global_load_inst, m.global_load_inst + m.global_store_inst);
}

TEST(Model, EveryFamilyPredictsItsDefault) {
  for (auto* f : families()) {
    Problem p = f->op() == Op::gemm ? square(512)
                                    : normalized(problem_of_shape(Op::gemv, {512, 384}, Layout::row_major, Trans::no,
                                                                  Trans::no));
    auto v = parse_params(*f, "");
    if (!f->unsupported(v, p).empty()) p = normalized(problem_of_shape(Op::gemv, {512, 384}, Layout::col_major,
                                                                        Trans::no, Trans::no));
    auto pred = predict(*f, v, p, DeviceLimits::h100(), {64, 0});
    EXPECT_GT(pred.counts.global_load_inst + std::max(0.0, pred.counts.global_async_inst) +
                  std::max(0.0, pred.counts.tma_load_inst),
              0)
        << f->name();
    EXPECT_GT(pred.counts.global_load_bytes, 0) << f->name();
    EXPECT_GE(pred.counts.shared_load_inst, 0) << f->name();
    EXPECT_GT(pred.flops, 0) << f->name();
    EXPECT_GT(pred.occupancy, 0) << f->name();
    EXPECT_GT(pred.waves, 0) << f->name();
  }
}

TEST(Model, HelpersCountLikeTheHardware) {
  EXPECT_EQ(tiled::merged_loads(16, 16), 4);
  EXPECT_EQ(tiled::merged_loads(6, 4), 2);  // one 128-bit, one 64-bit
  EXPECT_EQ(tiled::merged_loads(8, 2), 4);  // only 64-bit aligned
  EXPECT_EQ(tiled::merged_loads(5, 1), 5);
  // 100 elements over 64 threads: warp 0 runs 2 iterations, warp 1 (threads 32..63) runs 2 too
  // (its thread 32 takes 32 and 96); 40 over 64: warp 0 one, warp 1 one (threads 32..39).
  EXPECT_DOUBLE_EQ(tiled::strided_warp_inst(100, 64), 4);
  EXPECT_DOUBLE_EQ(tiled::strided_warp_inst(40, 64), 2);
  EXPECT_DOUBLE_EQ(tiled::strided_warp_inst(20, 64), 1);
}

// The occupancy rules of sm_90: registers in units of 256 per warp, shared memory with 1 KB reserved.
TEST(Model, ResidentBlocks) {
  auto h = DeviceLimits::h100();
  std::string limit;
  EXPECT_EQ(resident_blocks(h, 256, 198, 16384, &limit), 1);  // 198 regs -> 6400 per warp, 8 warps
  EXPECT_EQ(limit, "registers");
  EXPECT_EQ(resident_blocks(h, 256, 32, 0, &limit), 8);
  EXPECT_EQ(limit, "threads");
  EXPECT_EQ(resident_blocks(h, 128, 32, 100 * 1024, &limit), 2);
  EXPECT_EQ(limit, "shared memory");
  EXPECT_EQ(resident_blocks(h, 32, 16, 0, &limit), 32);
  EXPECT_EQ(limit, "blocks");
}

TEST(Model, ReadsThePtxasReport) {
  std::string log =
      "ptxas info    : Compiling entry function 'gemm_splitk_reduce' for 'sm_90'\n"
      "ptxas info    : Used 20 registers, used 0 barriers, 380 bytes cmem[0]\n"
      "ptxas info    : Compiling entry function 'gemm_warptiled' for 'sm_90'\n"
      "ptxas info    : Function properties for gemm_warptiled\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 255 registers, used 1 barriers, 16384 bytes smem, 380 bytes cmem[0]\n";
  auto r = resources_from_log(log, "gemm_warptiled");
  EXPECT_EQ(r.registers, 255);
  EXPECT_EQ(r.static_smem, 16384);
  EXPECT_EQ(resources_from_log(log, "gemm_splitk_reduce").registers, 20);
  EXPECT_EQ(resources_from_log(log, "absent").registers, -1);
}

TEST(Metrics, SetsKeysAndRawNames) {
  auto d = parse_metrics("seed000");
  ASSERT_GE(d.size(), 7u);
  EXPECT_EQ(d.front().key, "time");
  auto mixed = parse_metrics("global_load_inst, dram__bytes_read.sum,global_load_inst");
  ASSERT_EQ(mixed.size(), 2u);  // no repeats
  EXPECT_EQ(mixed[1].counters, std::vector<std::string>{"dram__bytes_read.sum"});
  EXPECT_THROW(parse_metrics("bogus"), UsageError);
  EXPECT_THROW(parse_metrics(""), UsageError);
  EXPECT_THROW(parse_metrics("a__b;rm"), UsageError);
  // Every set names defined metrics, and "all" holds every one.
  for (auto& s : metric_sets())
    for (auto& k : s.keys) EXPECT_NE(find_metric(k), nullptr) << s.name << ": " << k;
  EXPECT_EQ(parse_metrics("all").size(), metric_defs().size());
  auto raw = raw_counters(parse_metrics("shared_efficiency,shared_load_wavefronts"));
  EXPECT_EQ(raw.size(), 4u);
}

TEST(Metrics, DerivedValues) {
  KernelCounters k;
  k.raw = {{"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", 900},
           {"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", 100},
           {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", 0},
           {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", 50},
           {"gpu__time_duration.sum", 2e6},
           {"dram__bytes_read.sum", 3e9},
           {"dram__bytes_write.sum", 1e9}};
  KernelLaunchInfo launch;
  launch.registers = 128;
  k.launch = launch;
  auto j = evaluate(parse_metrics("shared_efficiency,time,dram_bandwidth,registers,l2_hit_rate"), k);
  EXPECT_DOUBLE_EQ(j["shared_efficiency"].get<double>(), 95.0);
  EXPECT_DOUBLE_EQ(j["time"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(j["dram_bandwidth"].get<double>(), 2000.0);  // 4 GB in 2 ms
  EXPECT_EQ(j["registers"].get<int>(), 128);
  EXPECT_TRUE(j["l2_hit_rate"].is_null());  // not read: missing, not zero
}

TEST(Metrics, ComparisonTable) {
  KernelProfile a, b;
  a.metrics = {{"time", 2.0}, {"registers", 128}};
  b.metrics = {{"time", 1.0}, {"registers", nullptr}};
  auto rows = comparison_json(parse_metrics("time,registers"), a, &b);
  EXPECT_DOUBLE_EQ(rows[0]["ratio"].get<double>(), 2.0);
  EXPECT_TRUE(rows[1]["ratio"].is_null());
  EXPECT_EQ(rows[1]["nvprof"], "Regs");
}

// explain needs no GPU for the prediction; profile and its flags refuse bad input in one line.
TEST(AnalysisCli, ExplainPredictsWithoutAGpuAndRefusesBadInput) {
  auto r = run_cli("explain --kernel vectorized --param tile=128x128x8,vpt=8x8 --size 1024");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("shared load inst"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("registers per thread"), std::string::npos) << r.out;
  EXPECT_EQ(run_cli("explain --kernel cublas --size 64").code, kExitUsage);
  EXPECT_EQ(run_cli("explain --kernel regblock2d").code, kExitUsage);
  EXPECT_EQ(run_cli("explain --kernel gemv-warp --size 64").code, kExitUsage);  // a gemv family on a gemm problem
  EXPECT_EQ(run_cli("profile --kernel regblock2d --size 64 --metrics nope").code, kExitUsage);
  EXPECT_EQ(run_cli("bench --kernel naive --size 64 --ablate nostore").code, kExitUsage);  // naive has none
  EXPECT_EQ(run_cli("bench --kernel vectorized --size 64 --ablate sideways").code, kExitUsage);
  EXPECT_EQ(run_cli("accuracy --k 0").code, kExitUsage);
  EXPECT_EQ(run_cli("accuracy --dist sideways").code, kExitUsage);
}

// The committed H100 counters draw a roofline without a GPU.
TEST(AnalysisCli, RooflineFromSavedResults) {
  auto dir = std::filesystem::temp_directory_path() / "gemmlab-roofline-test";
  std::filesystem::remove_all(dir);
  auto r = run_cli("roofline " + std::string(GEMMLAB_SOURCE_DIR) + "/results/h100/counters/roofline.json --out " +
                   dir.string());
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(std::filesystem::exists(dir / "roofline-roofline.png"));
  EXPECT_EQ(run_cli("roofline /nonexistent.json --out " + dir.string()).code, kExitUsage);
}

// The host emulation of the TF32 helpers (tf32_split.cuh) against hand-made reference values; the
// device side uses cvt.rna.tf32.f32 itself.
#include <cmath>
#include <random>

#include "kernels/common/tf32_split.cuh"

TEST(Tf32, RoundsToNearestTiesAwayAndTruncates) {
  auto f = [](unsigned u) { return tf32::value(u); };
  // TF32 keeps 10 mantissa bits: near 1 its unit is 2^-10 (0x2000 in FP32 bits), half of it 0x1000.
  EXPECT_EQ(tf32::round_rna(1.0f), 0x3f800000u);
  EXPECT_EQ(tf32::round_rna(f(0x3f800fffu)), 0x3f800000u);  // just under half a unit: down
  EXPECT_EQ(tf32::round_rna(f(0x3f801000u)), 0x3f802000u);  // exactly half: away from zero
  EXPECT_EQ(tf32::round_rna(f(0xbf801000u)), 0xbf802000u);  // the same for negatives
  EXPECT_EQ(tf32::round_rna(f(0x3f803000u)), 0x3f804000u);  // half above an odd unit: away, not to even
  EXPECT_EQ(tf32::round_rna(f(0x3fffffffu)), 0x40000000u);  // the carry steps the exponent
  EXPECT_EQ(tf32::round_rna(f(0x7f7fffffu)), 0x7f800000u);  // FLT_MAX rounds to infinity
  EXPECT_EQ(tf32::round_rna(f(0x7f800000u)), 0x7f800000u);  // infinity stays
  EXPECT_TRUE(std::isnan(f(tf32::round_rna(std::nanf("")))));
  EXPECT_EQ(tf32::truncate(f(0x3f801fffu)), 0x3f800000u);
  EXPECT_EQ(tf32::truncate(f(0xbf803fffu)), 0xbf802000u);
}

// big + small carries x to about 2^-21 (the small part's own rounding); 1xTF32 has no small part.
TEST(Tf32, SplitCarriesTwentyOneBits) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::uniform_int_distribution<int> e(-20, 20);
  double worst_rn = 0, worst_tr = 0;
  for (int i = 0; i < 100000; ++i) {
    float x = std::ldexp(u(rng), e(rng));
    if (x == 0) continue;
    unsigned big, small;
    tf32::split<3, 0>(x, big, small);
    EXPECT_EQ(big & ~tf32::kMask, 0u);
    EXPECT_EQ(small & ~tf32::kMask, 0u);
    worst_rn = std::max(worst_rn, std::abs(double(x) - tf32::value(big) - tf32::value(small)) / std::abs(x));
    tf32::split<3, 1>(x, big, small);
    EXPECT_EQ(big, tf32::truncate(x));
    worst_tr = std::max(worst_tr, std::abs(double(x) - tf32::value(big) - tf32::value(small)) / std::abs(x));
    tf32::split<1, 0>(x, big, small);
    EXPECT_EQ(big, tf32::round_rna(x));
    EXPECT_EQ(small, 0u);
  }
  EXPECT_LE(worst_rn, std::ldexp(1.0, -21));
  EXPECT_LE(worst_tr, std::ldexp(1.0, -20));
  EXPECT_GT(worst_rn, 0);  // the small part does round
}

// ---- the wgmma family's description (its kernels compile for sm_90a in test_compile) ----
#include "compile/compile.hpp"

// Why parse_params refuses a configuration of f (empty when it accepts it).
std::string rejection(const KernelFamily& f, const std::string& text) {
  try {
    parse_params(f, text);
    return {};
  } catch (const UsageError& e) {
    return e.what();
  }
}

TEST(Wgmma, NamesEachBrokenRule) {
  const auto& f = *find_family("wgmma");
  EXPECT_TRUE(f.arch_specific());
  EXPECT_EQ(arch_name(9, 0, f.arch_specific()), "sm_90a");
  EXPECT_EQ(arch_name(9, 0), "sm_90");
  auto why = [&](const std::string& text) { return rejection(f, text); };
  EXPECT_EQ(why(""), "");
  EXPECT_NE(why("tile=128x128x24,slices=1").find("tile.k 24 is not 32, 16 or 8"), std::string::npos) << why("tile=128x128x24");
  EXPECT_NE(why("tile=128x96x32,slices=1").find("tile.n 96 is not one of the wgmma widths"), std::string::npos);
  EXPECT_NE(why("tile=64x128x32,consumers=2").find("multiple of 64 rows"), std::string::npos);
  EXPECT_NE(why("tile=128x256x16,accum=tile,slices=1").find("registers per consumer thread"), std::string::npos);
  EXPECT_EQ(why("tile=128x256x16,accum=tile,slices=2"), "");  // the fragment covers 128 columns
  EXPECT_NE(why("tile=128x192x16,slices=2").find("192 / slices 2 is not one of the wgmma widths"), std::string::npos);
  EXPECT_NE(why("tile=128x256x16,slices=2,flush=2").find("needs flush=1"), std::string::npos);
  EXPECT_EQ(why("tile=128x256x16,accum=tc"), "");
  EXPECT_NE(why("tile=128x256x32,stages=3").find("KB of shared memory"), std::string::npos);
  EXPECT_EQ(why("tile=128x256x32,stages=2"), "");  // the defaults' tile
}

TEST(Wgmma, PacksTwoPlanesFor3xAndOneFor1x) {
  const auto& f = *find_family("wgmma");
  auto three = f.packing(parse_params(f, "tile=256x128x16,accum=tc"));
  EXPECT_EQ(three.entry, "pack_tf32");
  EXPECT_EQ(three.planes, 2);
  EXPECT_EQ(three.box_m, 256);
  EXPECT_EQ(three.box_n, 128);
  EXPECT_EQ(three.box_k, 16);
  auto one = parse_params(f, "mode=1x");
  EXPECT_EQ(f.packing(one).planes, 1);
  // 1x reads K-major operands in place unless told to round them all; 3x always splits.
  EXPECT_TRUE(f.packing(one).in_place);
  EXPECT_FALSE(f.packing(parse_params(f, "mode=1x,prepass=always")).in_place);
  EXPECT_FALSE(three.in_place);
  EXPECT_TRUE(f.lower_precision(one));
  EXPECT_TRUE(f.lower_precision(parse_params(f, "split=truncate")));
  EXPECT_TRUE(f.lower_precision(parse_params(f, "accum=tc")));
  EXPECT_FALSE(f.lower_precision(parse_params(f, "")));
  EXPECT_TRUE(f.persistent(parse_params(f, "")));
  // A block per tile before the launcher caps the grid at the resident blocks.
  EXPECT_EQ(f.geometry(parse_params(f, "tile=128x128x32,slices=1,stages=3"), Problem::square(1000)).grid.x, 64u);
  EXPECT_EQ(f.geometry(parse_params(f, "consumers=1,tile=64x128x32"), Problem::square(1000)).block.x, 256u);
  // Clusters of two take pairs of tile rows (an odd count leaves one block of a pair idle) and
  // each loads half of the shared B tile.
  auto two = parse_params(f, "cluster=2,tile=128x128x32,slices=1,stages=3");
  EXPECT_EQ(f.cluster(two), 2);
  EXPECT_EQ(f.geometry(two, Problem::square(300)).grid.x, 12u);  // 3 tile rows → 2 pairs, 3 columns
  EXPECT_EQ(f.packing(two).box_n, 64);
  EXPECT_EQ(f.packing(two).box_m, 128);
}

// op(A) split in registers: only B is packed; A is one FP32 plane (in place when K-major).
TEST(Wgmma, SplitsAInRegistersAndSplitsTheTail) {
  const auto& f = *find_family("wgmma");
  auto why = [&](const std::string& text) { return rejection(f, text); };
  EXPECT_NE(why("split_a=registers,mode=1x,accum=tc").find("needs mode=3x"), std::string::npos);
  // A K tile's fragments live until the wgmma wait: 128x256x32 fits with slices=4, not 2 (ptxas spills).
  EXPECT_NE(why("split_a=registers").find("registers per consumer thread"), std::string::npos);
  EXPECT_EQ(why("split_a=registers,slices=4"), "");
  EXPECT_EQ(why("split_a=registers,tile=128x256x16,stages=5"), "");  // one plane of A: 40 KB a stage
  EXPECT_NE(why("splitk=4,cluster=2,tile=128x128x32,slices=1,stages=3").find("needs cluster=1"), std::string::npos);
  auto regs = f.packing(parse_params(f, "split_a=registers,slices=4"));
  EXPECT_TRUE(regs.a_raw);
  EXPECT_EQ(regs.planes, 2);
  EXPECT_EQ(regs.planes_a(), 1);
  EXPECT_FALSE(f.packing(parse_params(f, "")).a_raw);
  EXPECT_FALSE(f.lower_precision(parse_params(f, "split_a=registers,slices=4")));
  // The model reads one plane of A and two of B per K tile, and counts A's LDS.
  auto p = Problem::square(4096);
  auto packed = f.model(parse_params(f, "slices=4"), p, Variant{});
  auto in_regs = f.model(parse_params(f, "split_a=registers,slices=4"), p, Variant{});
  EXPECT_DOUBLE_EQ(in_regs.global_load_bytes / packed.global_load_bytes, (128.0 + 2 * 256) / (2 * 128 + 2 * 256));
  EXPECT_GT(in_regs.shared_load_inst, 0);
  // The split tail is gridDim.z, counted per tile; no reduce kernel.
  auto tail = parse_params(f, "splitk=6");
  EXPECT_EQ(f.splits(tail, p, 132), 6);
  EXPECT_EQ(f.workspace_counters(tail, Problem::square(2049)), 17 * 9);
  EXPECT_EQ(f.workspace_counters(parse_params(f, ""), p), 0);
  EXPECT_EQ(f.reduce_entry(), "");
}

// accum=kstep: a fresh fragment per k step, a K tile's sum and a compensation beside the
// accumulator: it fits 128x128 tiles with slices=2 (240 registers, the producer keeping 24).
TEST(Wgmma, KstepHoldsFourFragmentsAndStaysFp32) {
  const auto& f = *find_family("wgmma");
  auto why = [&](const std::string& text) { return rejection(f, text); };
  EXPECT_EQ(why("accum=kstep,tile=128x128x32,stages=3,slices=2"), "");
  EXPECT_NE(why("accum=kstep").find("registers per consumer thread"), std::string::npos);  // 128x256
  EXPECT_NE(why("accum=kstep,tile=128x128x32,stages=3,slices=1").find("registers per consumer thread"),
            std::string::npos);
  EXPECT_NE(why("accum=kstep,tile=128x128x32,stages=3,slices=2,flush=2").find("applies to accum=tile"),
            std::string::npos);
  EXPECT_NE(why("accum=kstep,tile=128x128x32,stages=3,slices=3").find("not one of the wgmma widths"), std::string::npos);
  EXPECT_NE(why("tile=128x96x32,slices=1").find("not one of the wgmma widths"), std::string::npos);
  EXPECT_FALSE(f.lower_precision(parse_params(f, "accum=kstep,tile=128x128x32,stages=3,slices=2")));
  const auto d = f.defines(parse_params(f, "accum=kstep,tile=128x128x32,stages=3,slices=2"));
  EXPECT_NE(std::find(d.begin(), d.end(), "-DACCUM=2"), d.end());
}

// kstep's schedule (perf-log 73-74): fragments in flight, k steps per fragment and K tiles per
// compensated addition, each only where it means something, with a register count that keeps
// 128x128 slices=2 (which spills with a second fragment in flight) out of inflight=2.
TEST(Wgmma, KstepScheduleConstraints) {
  const auto& f = *find_family("wgmma");
  auto why = [&](const std::string& text) { return rejection(f, text); };
  const std::string narrow = "accum=kstep,tile=128x64x32,stages=4,slices=1,";
  EXPECT_EQ(why(narrow + "inflight=2,steps=2,compensate=4"), "");
  EXPECT_EQ(why(narrow + "steps=4"), "");
  EXPECT_NE(why("tile=128x128x32,stages=3,slices=1,inflight=2").find("applies to accum=kstep"), std::string::npos);
  EXPECT_NE(why("tile=128x128x32,stages=3,slices=1,compensate=2").find("applies to accum=kstep"), std::string::npos);
  EXPECT_NE(why(narrow + "steps=3").find("does not divide the 4 k steps"), std::string::npos);
  EXPECT_NE(why("accum=kstep,tile=128x64x16,stages=4,slices=1,steps=4").find("does not divide the 2 k steps"),
            std::string::npos);
  EXPECT_NE(why("accum=kstep,tile=128x128x32,stages=3,slices=2,compensate=2").find("needs slices=1"), std::string::npos);
  EXPECT_NE(why("accum=kstep,tile=128x128x32,stages=3,slices=2,inflight=2").find("registers per consumer thread"),
            std::string::npos);
  // compensate=0 holds no K tile sum: 128x128 fits with one 128-wide fragment.
  EXPECT_EQ(why("accum=kstep,tile=128x128x32,stages=3,slices=1,compensate=0"), "");
  EXPECT_NE(why("accum=kstep,tile=128x128x32,stages=3,slices=1,compensate=0,inflight=2").find("registers"),
            std::string::npos);
  EXPECT_EQ(why(narrow + "pingpong=yes"), "");
  // Three k steps in flight: a third fragment fits the packed 128x64 tile, not the one splitting A in registers.
  EXPECT_EQ(why(narrow + "inflight=3"), "");
  EXPECT_NE(why(narrow + "inflight=3,split_a=registers").find("registers per consumer thread"), std::string::npos);
  EXPECT_NE(why("tile=128x128x32,stages=3,slices=1,pingpong=yes").find("needs accum=kstep and consumers=2"),
            std::string::npos);
  EXPECT_NE(why("accum=kstep,tile=64x64x32,consumers=1,slices=1,pingpong=yes").find("consumers=2"), std::string::npos);
  const auto d = f.defines(parse_params(f, narrow + "inflight=2,steps=2,compensate=4,pingpong=yes"));
  for (const char* x : {"-DINFLIGHT=2", "-DFRAG_STEPS=2", "-DCOMPENSATE=4", "-DPINGPONG=1"})
    EXPECT_NE(std::find(d.begin(), d.end(), x), d.end()) << x;
}

#include <algorithm>
#include <set>

#include "kernels/common/split_tail.cuh"

// Every tile's K is computed exactly once: whole, or as the union of its splits' disjoint ranges;
// whole tiles fill whole waves; the split units of the tail fill at most one more.
TEST(SplitTail, CoversEveryTileOnceAndSplitsOnlyTheLastWave) {
  for (auto [tiles, blocks, splits, ktiles] : {std::tuple{153ll, 132ll, 6, 65}, {32ll, 128ll, 4, 32}, {264ll, 132ll, 3, 7},
                                               {1ll, 64ll, 64, 8}, {5ll, 132ll, 26, 3}, {300ll, 132ll, 1, 10}}) {
    const auto s = tail::schedule(tiles, blocks, splits, ktiles);
    if (splits > 1) EXPECT_EQ(s.whole % blocks, 0) << tiles << " tiles";
    std::vector<std::vector<int>> covered(size_t(tiles), std::vector<int>(size_t(ktiles), 0));
    std::vector<std::vector<int>> seen_splits(static_cast<size_t>(tiles));
    for (long long u = 0; u < s.units(); ++u) {
      const auto w = s.unit(u);
      ASSERT_GE(w.tile, 0);
      ASSERT_LT(w.tile, tiles);
      EXPECT_EQ(w.split < 0, w.tile < s.whole);
      if (w.split >= 0) seen_splits[size_t(w.tile)].push_back(w.split);
      for (int k = w.k0; k < w.k1; ++k) ++covered[size_t(w.tile)][size_t(k)];
    }
    for (long long t = 0; t < tiles; ++t) {
      for (int k = 0; k < ktiles; ++k) EXPECT_EQ(covered[size_t(t)][size_t(k)], 1) << "tile " << t << " k " << k;
      if (t >= s.whole) EXPECT_EQ(int(seen_splits[size_t(t)].size()), splits) << "tile " << t;
    }
    const long long tail_tiles = splits > 1 ? tiles % blocks : 0;
    EXPECT_EQ(s.units(), tiles - tail_tiles + tail_tiles * (tail_tiles ? splits : 1));
  }
  // Whole waves only: nothing to split.
  EXPECT_EQ(tail::schedule(264, 132, 4, 10).units(), 264);
}

// The persistent cp.async tiles' walk (gl::cp_async_tile_loop): each block's steps from blockIdx.x by
// gridDim.x give banded_tile's tiles, and the blocks together take every tile once, for random grids
// and products whose last band is short of rows.
template <int GROUP>
void expect_walks_cover_the_bands(std::mt19937& rng) {
  for (int trial = 0; trial < 40; ++trial) {
    const unsigned tiles_m = 1 + rng() % 70, tiles_n = 1 + rng() % 70, blocks = 1 + rng() % 400;
    const long long tiles = (long long)tiles_m * tiles_n;
    std::vector<int> taken(size_t(tiles), 0);
    for (unsigned b = 0; b < blocks && b < tiles; ++b) {
      tail::BandedWalk<GROUP> walk(tiles_m, tiles_n, b, blocks);
      for (long long t = b; t < tiles; t += blocks, walk.next()) {
        long long tm, tn, want_m, want_n;
        walk.origin(tm, tn);
        tail::banded_tile(t, tiles_m, tiles_n, GROUP, want_m, want_n);
        ASSERT_EQ(tm, want_m) << tiles_m << "x" << tiles_n << " tiles, group " << GROUP << ", block " << b << ", tile "
                              << t;
        ASSERT_EQ(tn, want_n) << tiles_m << "x" << tiles_n << " tiles, group " << GROUP << ", block " << b << ", tile "
                              << t;
        ASSERT_LT(tm, tiles_m);
        ASSERT_LT(tn, tiles_n);
        ++taken[size_t(tm * tiles_n + tn)];
      }
    }
    for (long long t = 0; t < tiles; ++t)
      ASSERT_EQ(taken[size_t(t)], 1) << "tile " << t << " of " << tiles_m << "x" << tiles_n;
  }
}
TEST(SplitTail, PersistentWalksTakeEveryTileOnceInBandedOrder) {
  std::mt19937 rng(96);
  expect_walks_cover_the_bands<1>(rng);
  expect_walks_cover_the_bands<3>(rng);
  expect_walks_cover_the_bands<8>(rng);
  expect_walks_cover_the_bands<64>(rng);
}

// Split-K's partial sums (warptiled, reduce kernel): rows padded to four floats, so each group of
// four columns is one 16-byte store whatever N is; two planes with FP64 accumulators; a GEMV's
// partial sums stay one column.
TEST(SplitK, PartialSumRowsArePaddedToFourFloats) {
  const auto& f = *find_family("warptiled");
  auto four = parse_params(f, "tile=64x64x16,warp=32x32,vpt=4x8,splitk=4");
  auto fp64 = parse_params(f, "tile=64x64x16,warp=32x32,vpt=4x8,splitk=4,accum=fp64");
  Problem odd = Problem::square(511), even = Problem::square(512), thin{};
  thin.m = 7, thin.n = 1, thin.k = 100;
  EXPECT_EQ(partial_pitch(odd), 512);
  EXPECT_EQ(partial_pitch(even), 512);
  EXPECT_EQ(f.split_workspace_floats(four, odd, 4, 0), 4ll * 511 * 512);
  EXPECT_EQ(f.split_workspace_floats(fp64, odd, 4, 0), 2 * 4ll * 511 * 512);
  EXPECT_EQ(f.split_workspace_floats(four, even, 4, 0), 4ll * 512 * 512);
  EXPECT_EQ(f.split_workspace_floats(four, thin, 1, 0), 0);
  Problem gemv = thin;
  gemv.op = Op::gemv;
  EXPECT_EQ(partial_pitch(gemv), 1);
}

// Random shapes and grids as the launcher sizes them (gridDim.x = min(tiles, resident / splits),
// gridDim.z = splits): every K tile of every tile done once by some worker, and each split's partial
// sums in a slot of its own inside the workspace the families ask for (tiled::tail_workspace_floats).
TEST(SplitTail, RandomShapesAndGridsFitTheWorkspace) {
  std::mt19937 rng(30);
  for (int trial = 0; trial < 60; ++trial) {
    const int bm = 128, bn = 128;
    Problem p = Problem::square(1);
    p.m = 1 + rng() % 3000, p.n = 1 + rng() % 3000, p.k = 1 + rng() % 3000;
    const int splits = 1 + int(rng() % 12), resident = 1 + int(rng() % 264), ktiles = int((p.k + 31) / 32);
    const long long tiles = ((p.m + bm - 1) / bm) * ((p.n + bn - 1) / bn);
    const long long grid_x = std::max(1ll, std::min<long long>(tiles, resident / splits)), workers = grid_x * splits;
    if (resident / splits == 0) continue;  // the dispatcher never asks for more ways than SMs
    const auto s = tail::schedule(tiles, workers, splits, ktiles);
    const long long slots = tiled::tail_workspace_floats(p, bm, bn, splits, resident) / (bm * bn);
    std::vector<int> done(size_t(tiles * ktiles), 0);
    std::set<long long> used;
    for (long long w = 0; w < workers; ++w)
      for (long long u = w; u < s.units(); u += workers) {
        const auto x = s.unit(u);
        for (int k = x.k0; k < x.k1; ++k) ++done[size_t(x.tile * ktiles + k)];
        if (x.split < 0) continue;
        const long long slot = x.first + x.split;
        EXPECT_TRUE(used.insert(slot).second) << "slot " << slot << " twice";
        EXPECT_LT(slot, slots) << p.m << "x" << p.n << " splits " << splits << " resident " << resident;
      }
    EXPECT_EQ(std::count(done.begin(), done.end(), 1), tiles * ktiles) << p.m << "x" << p.n << "x" << p.k;
    EXPECT_EQ(tiled::tail_counters(p, bm, bn, splits), splits > 1 ? tiles : 0);
  }
}

// The streamed tail (stream-K) for random shapes and grids: every K tile of every tile done once;
// the whole tiles fill whole waves; a tile's parts are numbered 0, 1, ... in K order, each in a slot
// of its own inside the workspace the families ask for, the tile's units agreeing on its parts; a
// block has at most `segments` units of the stream; and its shares differ by at most one K tile.
TEST(SplitTail, StreamSharesTheLastWavesKTilesEqually) {
  std::mt19937 rng(31);
  int streamed = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const int bm = 128, bn = 128;
    Problem p = Problem::square(1);
    p.m = 1 + rng() % 4000, p.n = 1 + rng() % 4000, p.k = 1 + rng() % 5000;
    const long long tiles = ((p.m + bm - 1) / bm) * ((p.n + bn - 1) / bn);
    const int ktiles = int((p.k + 31) / 32), resident = 1 + int(rng() % 264);
    const long long workers = std::min<long long>(tiles * ktiles, resident);  // the launcher's grid
    const auto s = tail::schedule(tiles, workers, 1, ktiles, true);
    const std::string what = std::to_string(tiles) + " tiles of " + std::to_string(ktiles) + " K tiles, " +
                             std::to_string(workers) + " blocks";
    EXPECT_EQ(s.whole % workers, 0) << what;
    if (!s.stream) {
      const long long streamable = tiles % workers + (tiles > workers ? workers : 0);
      EXPECT_TRUE(tiles % workers == 0 || streamable * ktiles < workers) << what;
      EXPECT_EQ(s.units(), tiles) << what;
      continue;
    }
    ++streamed;
    const long long slots = tiled::tail_workspace_floats(p, bm, bn, 1, resident, true) / (bm * bn);
    EXPECT_LE(s.slots(), slots) << what;
    EXPECT_EQ(tiled::tail_counters(p, bm, bn, 1, true), tiles);
    std::vector<int> done(size_t(tiles * ktiles), 0);
    std::vector<int> parts(size_t(tiles), 0);
    std::vector<std::vector<std::pair<int, int>>> ranges{size_t(tiles)};  // (split, k0) per part
    std::set<long long> used;
    long long least = 1ll << 40, most = 0;
    for (long long w = 0; w < workers; ++w) {
      int units = 0;
      long long share = 0;
      for (long long u = w; u < s.units(); u += workers) {
        const auto x = s.unit(u);
        if (x.tile < 0) continue;
        EXPECT_LT(x.k0, x.k1) << what;
        ASSERT_LT(x.tile, tiles);
        for (int k = x.k0; k < x.k1; ++k) ++done[size_t(x.tile * ktiles + k)];
        if (x.tile < s.whole) {
          EXPECT_EQ(x.split, -1);
          continue;
        }
        ++units, share += x.k1 - x.k0;
        if (x.split < 0) {
          EXPECT_EQ(x.k1 - x.k0, ktiles) << what;
          continue;
        }
        EXPECT_TRUE(parts[size_t(x.tile)] == 0 || parts[size_t(x.tile)] == x.parts) << what;
        parts[size_t(x.tile)] = x.parts;
        ranges[size_t(x.tile)].push_back({x.split, x.k0});
        EXPECT_TRUE(used.insert(x.first + x.split).second) << "slot " << x.first + x.split << " twice, " << what;
        EXPECT_LT(x.first + x.split, s.slots()) << what;
      }
      EXPECT_LE(units, s.segments) << what;
      least = std::min(least, share), most = std::max(most, share);
    }
    EXPECT_LE(most - least, 1) << what;
    EXPECT_EQ(std::count(done.begin(), done.end(), 1), tiles * ktiles) << what;
    for (long long t = s.whole; t < tiles; ++t) {
      auto& r = ranges[size_t(t)];
      if (r.empty()) continue;
      ASSERT_EQ(int(r.size()), parts[size_t(t)]) << "tile " << t << ", " << what;
      std::sort(r.begin(), r.end());
      for (size_t i = 0; i < r.size(); ++i) {
        EXPECT_EQ(r[i].first, int(i)) << "tile " << t << ", " << what;
        if (i) EXPECT_GT(r[i].second, r[i - 1].second) << "parts out of K order in tile " << t << ", " << what;
      }
    }
  }
  EXPECT_GT(streamed, 150);
}

// ---- hopper-simt: TMA-fed FFMA kernels (they compile in test_compile's search-space test) ----
#include <map>

#include "kernels/common/tma_swizzle.cuh"
#include "kernels/tma_operands.hpp"

TEST(HopperSimt, NamesEachBrokenRule) {
  const auto& f = *find_family("hopper-simt");
  EXPECT_TRUE(f.arch_specific());  // setmaxnreg is sm_90a
  EXPECT_EQ(f.min_arch(), 90);
  auto why = [&](const std::string& text) { return rejection(f, text); };
  EXPECT_EQ(why(""), "");
  EXPECT_NE(why("tile=128x256x18").find("tile.k 18 is not a multiple of 4"), std::string::npos);
  EXPECT_NE(why("tile=128x256x128").find("tile.k 128 is over 64"), std::string::npos);
  EXPECT_NE(why("tile=96x256x16,warp=64x64,vpt=8x16").find("is not a multiple of warp 64x64"), std::string::npos);
  EXPECT_NE(why("vpt=6x16,warp=48x64,tile=96x256x16").find("multiples of 4"), std::string::npos);
  EXPECT_NE(why("tile=128x256x16,warp=64x64,vpt=8x8").find("lanes, not the 32 of a warp"), std::string::npos);
  EXPECT_NE(why("tile=256x256x32,warp=64x64,vpt=8x16,stages=4").find("KB of shared memory"), std::string::npos);
  EXPECT_NE(why("vpt=16x16,warp=64x128,tile=128x256x16").find("registers per thread"), std::string::npos);
  // Fragments a step ahead: two sets of B at 8x16 fit the consumers' 224 registers, two of A too do not.
  EXPECT_EQ(why("tile=128x256x16,warp=64x64,vpt=8x16,fragments=double-b"), "");
  EXPECT_NE(why("tile=128x256x16,warp=64x64,vpt=8x16,fragments=double").find("needs about 248 registers"),
            std::string::npos);
  EXPECT_NE(why("tile=256x512x16").find("outside 4..256"), std::string::npos);  // one TMA box a side
  EXPECT_NE(why("tile=64x96x16,warp=32x32,vpt=4x8").find("6 consumer warps do not fill whole warpgroups"),
            std::string::npos);
  EXPECT_NE(why("tile=64x64x64,warp=32x32,vpt=4x8").find("conflict=swizzle or all needs tile.k 8, 16 or 32"),
            std::string::npos);
  EXPECT_EQ(why("tile=64x64x64,warp=32x32,vpt=4x8,conflict=none"), "");
  // 8 consumer warps and the producer warpgroup; a block per tile until the launcher caps the grid.
  auto v = parse_params(f, "tile=128x256x16,warp=64x64,vpt=8x16");
  auto g = f.geometry(v, Problem::square(4096));
  EXPECT_EQ(g.block.x, 384u);
  EXPECT_EQ(g.grid.x, 512u);
  EXPECT_TRUE(f.persistent(v));
  auto t = f.tma_operands(v);
  EXPECT_EQ(t.box_m, 128);
  EXPECT_EQ(t.box_n, 256);
  EXPECT_EQ(t.box_k, 16);
  EXPECT_EQ(f.splits(parse_params(f, "splitk=3"), Problem::square(64), 0), 3);
  // The split tail: an arrival counter per tile, a tile of partial sums per split of the tail.
  auto split = parse_params(f, "splitk=3");
  EXPECT_EQ(f.workspace_counters(split, Problem::square(4096)), 1024);
  EXPECT_EQ(f.split_workspace_floats(split, Problem::square(4096), 3, 132), 132ll * 128 * 128 * 3);
  EXPECT_EQ(f.workspace_counters(v, Problem::square(4096)), 0);
  EXPECT_TRUE(f.reduce_entry().empty());
}

// A bank model of the consumers' 16-byte loads from a K-contiguous tile (rows of BK floats): the 8
// lanes of a quarter-warp (one wavefront) read the same 4 k of the rows the kernel gives them (op(A):
// lane / LANES_N, op(B)ᵀ: lane % LANES_N, plus i · the lanes across the warp tile). Wavefronts =
// the most distinct 16-byte addresses that fall in one bank group (a 16-byte column of the 128-byte
// bank line). The family swizzles the operands whose reads would conflict, and those read in one.
TEST(HopperSimt, SwizzledTilesReadInOneWavefront) {
  const auto& f = *find_family("hopper-simt");
  auto wavefronts = [](int bk, bool swizzled, int lanes_n, bool b_side, int i_stride, int i, int k) {
    std::map<unsigned, std::set<unsigned>> groups;
    for (int lane = 0; lane < 8; ++lane) {
      const int row = (b_side ? lane % lanes_n : lane / lanes_n) + i * i_stride;
      const unsigned offset = unsigned(row * bk + k) * 4;
      const unsigned at = swizzled ? tma::swizzled(offset, unsigned(bk * 4)) : offset;
      groups[(at / 16) % 8].insert(at / 16);
    }
    size_t most = 0;
    for (auto& [g, addresses] : groups) most = std::max(most, addresses.size());
    return int(most);
  };
  int checked = 0;
  for (const char* params : {"", "tile=128x128x16,warp=64x32,vpt=8x8", "tile=128x256x16,warp=64x64,vpt=8x16",
                             "tile=128x128x8,warp=32x64,vpt=4x16", "tile=64x64x8,warp=32x32,vpt=4x8",
                             "tile=128x128x32,warp=64x32,vpt=8x8"}) {
    for (const char* conflict : {"swizzle", "all", "none"}) {
      auto v = parse_params(f, std::string(params) + (*params ? "," : "") + "conflict=" + conflict);
      ASSERT_EQ(rejection(f, format_params(f, v)), "") << params;
      const int bk = v.at("tile")[2], wm = v.at("warp")[0], wn = v.at("warp")[1];
      const int lanes_n = wn / v.at("vpt")[1], lanes_m = wm / v.at("vpt")[0];
      const auto t = f.tma_operands(v);
      int worst_a = 0, worst_b = 0;
      for (int i = 0; i < 4; ++i)
        for (int k = 0; k < bk; k += 4) {
          worst_a = std::max(worst_a, wavefronts(bk, t.swizzle_a, lanes_n, false, lanes_m, i, k));
          worst_b = std::max(worst_b, wavefronts(bk, t.swizzle_b, lanes_n, true, lanes_n, i, k));
        }
      if (std::string(conflict) != "none") {
        EXPECT_EQ(worst_a, 1) << params << ": op(A) K-contiguous";
        EXPECT_EQ(worst_b, 1) << params << ": op(B) K-contiguous";
        EXPECT_TRUE(std::string(conflict) == "swizzle" || (t.swizzle_a && t.swizzle_b)) << params;
        ++checked;
      } else if (bk == 32 && lanes_n == 8) {
        EXPECT_EQ(worst_b, 8) << params << ": unswizzled rows of 128 bytes meet one bank group";
      }
    }
  }
  EXPECT_EQ(checked, 12);
}

// The kernel finds rows a whole swizzle period apart from one row's swizzled start (one XOR for all
// of them, perf-log 135): the same bytes TMA's swizzle gives those rows, for every row span; rows
// half a period apart are swizzled differently, so the kernel keeps one XOR per load there.
TEST(HopperSimt, RowsWholePeriodsApartSwizzleAlike) {
  int differ = 0;
  for (unsigned row_bytes : {32u, 64u, 128u})
    for (unsigned base : {0u, 3072u})
      for (unsigned row = 0; row < 16; ++row)
        for (unsigned byte = 0; byte < row_bytes; byte += 16)
          for (unsigned apart : {4u, 8u, 16u, 24u}) {
            const unsigned start = tma::swizzled(base + row * row_bytes, row_bytes);
            const unsigned want = tma::swizzled(base + (row + apart) * row_bytes + byte, row_bytes);
            const unsigned got = tma::swizzled_rows_on(start, byte, apart, row_bytes);
            if (apart % tma::kPeriodRows == 0) EXPECT_EQ(got, want) << row_bytes << " " << row << " " << apart;
            else differ += got != want;
          }
  EXPECT_GT(differ, 0);
}

// Every layout of op(A) and op(B)ᵀ: the contiguous dimension goes first, the box follows it, and
// what TMA cannot read is refused with its reason.
TEST(HopperSimt, DescribesEachLayoutToTma) {
  auto expect_map = [](const OperandMap& d, unsigned long long inner, unsigned long long outer,
                       unsigned long long row_bytes, unsigned box_inner, unsigned box_outer) {
    EXPECT_EQ(d.dims[0], inner);
    EXPECT_EQ(d.dims[1], outer);
    EXPECT_EQ(d.row_bytes, row_bytes);
    EXPECT_EQ(d.box[0], box_inner);
    EXPECT_EQ(d.box[1], box_outer);
  };
  // op(A) M x K row-major (K contiguous, lda 1028), and transposed (M contiguous): rows of K.
  expect_map(describe_operand_map(1000, 1024, 1028, 1, true, 128, 16), 1024, 1000, 1028 * 4, 16, 128);
  expect_map(describe_operand_map(1000, 1024, 1, 1000, false, 128, 16), 1000, 1024, 1000 * 4, 128, 16);
  // op(B)ᵀ N x K with B row-major K x N (N contiguous), and B transposed (K contiguous).
  expect_map(describe_operand_map(2048, 512, 1, 2048, false, 256, 16), 2048, 512, 2048 * 4, 256, 16);
  expect_map(describe_operand_map(2048, 512, 512, 1, true, 256, 16), 512, 2048, 512 * 4, 16, 256);
  static const float buffer[8] = {};
  EXPECT_NE(operand_map_problem(2049, 2049, 2049, 1, true, buffer).find("multiples of 4 floats"), std::string::npos);
  EXPECT_NE(operand_map_problem(64, 64, 64, 1, true, buffer + 1).find("16-byte aligned"), std::string::npos);
  EXPECT_NE(operand_map_problem(64, 64, 64, 1, false, buffer).find("stride 1"), std::string::npos);
  EXPECT_NE(operand_map_problem(1ll << 31, 64, 64, 1, true, buffer).find("2^31"), std::string::npos);
  EXPECT_EQ(operand_map_problem(64, 64, 64, 1, true, buffer), "");
  // What a staged copy fixes (leading dimension, address) and what it cannot (sizes, strides).
  EXPECT_EQ(operand_layout_problem(2049, 2049, 2049, 1, true), "");
  EXPECT_NE(operand_layout_problem(64, 64, 64, 1, false).find("stride 1"), std::string::npos);
  EXPECT_NE(operand_layout_problem(64, 1ll << 31, 1, 64, false).find("2^31"), std::string::npos);
  auto st = operand_staging(2049, 1000, 1003, 1, true, buffer);  // op(A) 2049 x 1000, K-contiguous
  EXPECT_EQ(st.rows, 2049);
  EXPECT_EQ(st.row_floats, 1000);
  EXPECT_EQ(st.stride, 1003);
  EXPECT_EQ(st.pitch, 1000);
  st = operand_staging(999, 64, 1, 1001, false, buffer);  // op(B)ᵀ 999 x 64, N-contiguous
  EXPECT_EQ(st.rows, 64);
  EXPECT_EQ(st.row_floats, 999);
  EXPECT_EQ(st.stride, 1001);
  EXPECT_EQ(st.pitch, 1000);
  EXPECT_EQ(operand_staging(64, 64, 64, 1, true, buffer + 1).pitch, 64);  // unaligned start
  EXPECT_EQ(operand_staging(64, 64, 64, 1, true, buffer).pitch, 0);       // read in place
  EXPECT_THROW(describe_operand_map(64, 64, 64, 1, true, 128, 6), UsageError);  // 24-byte rows
  // Swizzled: a K-contiguous box of 32, 64 or 128-byte rows gets the swizzle of its row; an
  // outer-contiguous one is never swizzled; other row lengths are refused.
  EXPECT_EQ(describe_operand_map(1000, 1024, 1028, 1, true, 128, 32, true).swizzle_bytes, 128u);
  EXPECT_EQ(describe_operand_map(1000, 1024, 1028, 1, true, 128, 16, true).swizzle_bytes, 64u);
  EXPECT_EQ(describe_operand_map(1000, 1024, 1028, 1, true, 128, 8, true).swizzle_bytes, 32u);
  EXPECT_EQ(describe_operand_map(1000, 1024, 1028, 1, true, 128, 32, false).swizzle_bytes, 0u);
  EXPECT_EQ(describe_operand_map(1000, 1024, 1, 1000, false, 128, 32, true).swizzle_bytes, 0u);
  EXPECT_THROW(describe_operand_map(64, 64, 64, 1, true, 64, 64, true), UsageError);
  EXPECT_THROW(describe_operand_map(64, 64, 64, 1, true, 512, 16), UsageError);
  // The family takes odd leading dimensions (staged); it refuses only what no copy fixes.
  const auto& f = *find_family("hopper-simt");
  auto v = parse_params(f, "");
  EXPECT_EQ(f.unsupported(v, normalized(Problem::square(4096))), "");
  EXPECT_EQ(f.unsupported(v, normalized(Problem::square(2049))), "");
  Problem p = Problem::square(2048);
  p.trans_b = Trans::yes;
  p = normalized(p);
  p.ldb = 2050;
  EXPECT_EQ(f.unsupported(v, p), "");
  p.k = 1ll << 31;
  EXPECT_NE(f.unsupported(v, p).find("A: TMA coordinates"), std::string::npos);
}

// outer with FP64 sums widens op(A) once per block into shared memory from K = 4 (perf-log 136):
// per warp, op(B)'s loads and one staged load in place of a row's loads per 4 k, and two rows'
// doubles per shared load and k. Below K = 4, and with FP32 sums, op(A) comes from the cache.
TEST(Outer, ModelCountsOpAWidenedOncePerBlock) {
  const auto& f = *find_family("outer");
  Problem p;
  p.m = p.n = 8192, p.k = 8;
  p = normalized(p);
  const Variant var{true, true, true, true, true};
  const double warps = 8192.0 / 4 * (8192 / 512) * 4;  // rows 4, 128 threads of 4 columns
  auto fp32 = f.model(parse_params(f, "rows=4"), p, var), fp64 = f.model(parse_params(f, "rows=4,accum=fp64"), p, var);
  EXPECT_DOUBLE_EQ(fp32.global_load_inst, warps * 2 * (4 + 4));  // two runs of 4 k: op(B)'s 4, then 4 rows
  EXPECT_DOUBLE_EQ(fp32.shared_load_inst, 0);
  EXPECT_DOUBLE_EQ(fp64.global_load_inst, warps * (2 * 4 + 1));  // op(B), and one span of op(A) staged
  EXPECT_DOUBLE_EQ(fp64.shared_store_inst, warps);
  EXPECT_DOUBLE_EQ(fp64.shared_load_inst, warps * 8 * 4 / 2);
  p.k = 3;
  auto short_k = f.model(parse_params(f, "rows=4,accum=fp64"), p, var);
  EXPECT_DOUBLE_EQ(short_k.shared_load_inst, 0);
  EXPECT_DOUBLE_EQ(short_k.global_load_inst, f.model(parse_params(f, "rows=4"), p, var).global_load_inst);
}

// Per K tile two TMA loads per block; per consumer warp and 4 k, TM + TN 16-byte shared loads.
TEST(HopperSimt, ModelCountsTmaAndSharedLoads) {
  const auto& f = *find_family("hopper-simt");
  auto v = parse_params(f, "tile=128x256x16,warp=64x64,vpt=8x16");
  auto p = normalized(Problem::square(4096));
  Variant var{true, true, true, true, true};
  auto m = f.model(v, p, var);
  const double blocks = 32.0 * 16, ktiles = 256;
  EXPECT_DOUBLE_EQ(m.tma_load_inst, blocks * ktiles * 2);
  EXPECT_DOUBLE_EQ(m.global_load_inst, 0);
  EXPECT_DOUBLE_EQ(m.global_load_bytes, blocks * ktiles * 4.0 * (128 + 256) * 16);
  EXPECT_DOUBLE_EQ(m.shared_load_inst, blocks * ktiles * 8 * 4 * (8 + 16));
  EXPECT_DOUBLE_EQ(m.shared_store_inst, 0);
  EXPECT_DOUBLE_EQ(m.global_store_inst, blocks * 8 * 8 * 16 / 4);  // 16-byte stores
  var.b_n_contig = false;  // columns interleaved: one float per store
  EXPECT_DOUBLE_EQ(f.model(v, p, var).global_store_inst, blocks * 8 * 8 * 16);
  auto split = f.model(parse_params(f, "splitk=4"), p, Variant{true, true, true, true, true});
  EXPECT_DOUBLE_EQ(split.global_store_bytes, 4 * 4.0 * 4096 * 4096);  // every tile counted as split: a bound
}
