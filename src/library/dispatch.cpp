#include "library/dispatch.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <mutex>

#include "gemmlab/error.hpp"
#include "kernels/family.hpp"
#include "kernels/common/ozaki_math.cuh"
#include "kernels/common/split_tail.cuh"
#include "kernels/tma_operands.hpp"
#include "launch/launcher.hpp"

namespace gemmlab {

namespace {

// A kernel after its launch returns: the gap before the next kernel of the stream starts.
constexpr double kLaunchUs = 2.0;
// One round trip of a dependent load chain to L2 (the split-K reduce's, perf-log 57).
constexpr double kL2RoundTripUs = 0.7;
// L2's bandwidth, bytes a second (the H100's measured 6.57 TB/s: results/h100/fp32-accurate.json's ceilings).
constexpr double kL2BytesPerS = 6.5e12;
// A round of resident blocks, where reads bound the kernel: its pipeline's fill (perf-log 72).
constexpr double kRoundFillUs = 3.0;
// The share of the busiest SMs' extra block that shows in a read-bound kernel's time: the others,
// done early, leave it their bandwidth (8x128 tiles: 0.4-0.7 of the ratio's excess; perf-log 72).
constexpr double kUnevenShare = 0.5;
// A tile at least four times the product's rows (or columns) over it, mostly padding: 64x64 and
// 32x128 dmma tiles over 8 rows ran 4.5 us over the estimate unsplit and ~6 us at splits 6-8, where
// 16-row tiles ran within 1-2 us of it (8x2304x768; results/h100/model/splits-6b7d960, perf-log 57).
constexpr double kPaddedTileUs = 5.0;
// 3xTF32 wgmma's packed calls start slower than the tiled kernels beyond what the model counts:
// 9-14.5 us over it at 256³, 513³ and 2048x16x2048, where the tiled families ran 2.5-5 us over
// (results/h100/dmma/96caad5, candidates measured; perf-log 54).
constexpr double kWgmmaStartUs = 6.0;
// The share of the memory bandwidth the wgmma kernel's C stores reach (0.45 of 3.0 TB/s).
constexpr double kWgmmaStoreShare = 0.15;
// The share hopper-simt's C stores reach from its 8x8 fragments, one block per SM, when a tile is one
// K tile and nothing hides them: 1.2-1.7 TB/s of 3.0 at K = 1, 8 and 16 (results/h100/simt/
// issue30-acd8273). From K = BK on, the model's compute time covers them (K = 32: 1.03x cuBLAS).
// (With beta != 0, the tiled kernels' share below.)
constexpr double kSimtPersistentStoreShare = 0.5;
// The share of the memory bandwidth a tiled SIMT kernel's epilogue reaches reading and writing C
// (beta != 0): 1.17-1.2 of 3.0 TB/s.
constexpr double kBetaStoreShare = 0.39;
// The share of the memory bandwidth a tiled SIMT kernel's C stores reach a float at a time (0.59 of
// 3.0 TB/s), and hopper-simt's (8192² x 16 with every leading dimension one over: 445 us, C at 0.60
// TB/s; results/h100/simt/staged-b9cd9e8, perf-log 97).
constexpr double kScalarStoreShare = 0.19;
// outer's C a float at a time (ldc not a multiple of 4): 0.75 TB/s at 4096² x 1, leading dimensions
// one over (89.6 us; same run).
constexpr double kOuterScalarStoreShare = 0.25;

// A candidate configuration and what the model needs of it: its registers per thread (ptxas, on
// the H100) and the fraction of the GPU's FP32 rate it reaches when every SM is busy with it.
struct Candidate {
  const char* family;
  const char* params;
  int regs;
  double rate;  // x the FP32 FFMA rate, at full occupancy on a large problem
  enum Kind { simt, tensor, emulated, store_bound } kind;
  double rate_b_kcontig = 0;  // the rate when op(B) is K-contiguous (canonical trans_b), if different
  // The share of the memory bandwidth its C stores reach where they are the whole kernel (tiny K),
  // where measured below 1.
  double store_share = 1;
  // The share its operand reads reach where they bound it (few rows, long K), where measured below 1.
  double read_share = 1;
  // A 16-wide tile's rate where the product has at most kFewRows rows (a 16-row tile) or columns (a
  // 16-column tile), if different: its rate on squares is not its rate where it is the natural tile.
  double rate_few = 0;
  // Only where the product has at most this many rows, if set: a tile that short reads op(B) once
  // per row of tiles.
  long long rows_max = 0;
  double read_share_b_kcontig = 0;  // the read share when op(B) is K-contiguous, if different
  // The share of its rate an SM reaches with every slot holding one of its blocks, where measured
  // below 1 (a lone block's is 0.75: tiled_time).
  double busy_full = 1;
  // The share a lone block (one on its SM) reaches, where measured below the usual 0.75.
  double busy_lone = 0.75;
  // Where a leading dimension is not a multiple of 4 floats (the unaligned variant, 4-byte copies):
  // what each such copy a thread issues per K tile adds to a block's K step, where measured.
  double unaligned_copy_us = 0;
  // A tile this many times the product's rows (or columns) or more: kPaddedTileUs added.
  double padded_from = 4;
  // Only where K is at most this, if set: a configuration measured at short K alone.
  long long k_max = 0;
  // Only where K is at least this, if set: below it another route measured faster.
  long long k_min = 0;
  // Where beta != 0, the share its epilogue reaches reading and writing C, where measured; else
  // kBetaStoreShare.
  double beta_share = 0;
  // Where a leading dimension is not a multiple of 4 floats, the share its C stores reach through
  // shared memory (warptiled's staged store, perf-log 97), where measured; else kScalarStoreShare.
  double unaligned_store_share = 0;
  // Its reads timed round by round of resident blocks (read_rounds): where reads bound it, a round
  // lasts as long as its busiest SM's blocks take at an even share of the bandwidth, and a round of
  // fewer than two blocks an SM streams at that fraction of it.
  bool read_rounds = false;
};

constexpr long long kFewRows = 32;

// A leading dimension that is not a multiple of 4 floats: the library's plan then takes every
// operand's variant without 16-byte accesses (launcher whole_alignment).
bool unaligned(const Problem& p) { return p.lda % 4 || p.ldb % 4 || p.ldc % 4; }

// bm: the candidate's tile rows (16: a 16-row tile, else its 16 columns are the narrow side).
double rate_of(const Candidate& c, const Problem& p, long long bm = 0) {
  if (c.rate_few > 0 && (bm == 16 ? p.m : p.n) <= kFewRows) return c.rate_few;
  return p.trans_b == Trans::yes && c.rate_b_kcontig > 0 ? c.rate_b_kcontig : c.rate;
}

double read_share_of(const Candidate& c, const Problem& p) {
  return p.trans_b == Trans::yes && c.read_share_b_kcontig > 0 ? c.read_share_b_kcontig : c.read_share;
}

// SIMT: warptiled tiles from wide (large products) to narrow (M or N up to 32, or 16). Rates of
// the first three: their best measurements at 4096 and 8192 in results/h100/sgemm-families.json
// (45.7, 41.3 and 34.4 TFLOP/s of 64.3); 64x128 and 128x64 measured at 0.49-0.58 over the corpus's
// 64-row products (perf-log 17); the narrow tiles' predicted (memory-bound where they are chosen).
// C alone (K = 4-16 at 4096², 8192², 16384²; perf-log 95, results/h100/simt/shortk-lib-*): 128x256
// 1.86-1.98 TB/s, 128x128 1.62-1.70, 64x64 1.70-2.08, 64x128 1.63-1.82, 128x64 1.57-1.72, 32x128
// 1.80-2.14, 128x32 1.76-1.88, of the model's 3.0: their store shares. The narrow tiles' C stores
// were not measured: the lowest share (kNarrowStoreShare), so that no unmeasured rate wins a
// store-bound product.
constexpr double kNarrowStoreShare = 0.56;
const Candidate kSimt[] = {
    {"warptiled", "tile=128x256x16,warp=64x64,vpt=8x16,stages=2", 255, 0.71, Candidate::simt, 0, 0.63},
    // C unaligned, staged through shared memory: 1.07-1.13 TB/s (128x128) and 1.36-1.51 (64x64) at 4096² x 1
    // and 8192² x 16 with every leading dimension one over (results/h100/simt/staged-b9cd9e8, perf-log 97).
    {.family = "warptiled", .params = "tile=128x128x16,warp=32x64,vpt=8x8,stages=3", .regs = 191, .rate = 0.66,
     .kind = Candidate::simt, .store_share = 0.56, .unaligned_store_share = 0.36},
    // Alone on its SM a block of it reaches about 0.65: lt-777x555x333's 117 lone blocks ran 21.9-22.5 us
    // where split 3 (351 blocks, three an SM, and the reduce kernel) ran 20.7-21.3 (results/h200/simt/
    // spread-a82afe5, spread-ilp-a82afe5-dirty, evidence-6c35cb1; perf-log 109).
    {.family = "warptiled", .params = "tile=64x64x16,warp=32x32,vpt=4x8,stages=3", .regs = 147, .rate = 0.53,
     .kind = Candidate::simt, .store_share = 0.62, .busy_lone = 0.65, .unaligned_store_share = 0.45},
    {"warptiled", "tile=64x128x16,warp=32x64,vpt=8x8,stages=3", 168, 0.55, Candidate::simt, 0, 0.58},
    {"warptiled", "tile=128x64x16,warp=64x32,vpt=8x8,stages=3", 168, 0.55, Candidate::simt, 0, 0.56},
    {"warptiled", "tile=32x128x16,warp=32x32,vpt=4x8,stages=4", 96, 0.45, Candidate::simt, 0, 0.67},
    {"warptiled", "tile=128x32x16,warp=32x32,vpt=8x4,stages=4", 96, 0.45, Candidate::simt, 0, 0.6},
    // 33-48 columns pad less than on 64: db-35x8457x2048-NT split 11 ran 71.7 us where 128x64's
    // ran 81.8 and 128x32's split 16 86.2 (results/h200/simt/db35-3723f68). Rate 0.45: at 0.5 it took
    // 4096x48x4096 and 10000x45x1000, where hopper-simt ran 2-11 % faster (w48-6d03113, perf-log 116).
    {"warptiled", "tile=128x48x32,warp=32x48,vpt=4x12,stages=3", 219, 0.45, Candidate::simt, 0, 0.6},
    // Where reads bound it (8 and 16 rows): op(B) read at 2.1 TB/s in NN (rhs-8 and rhs-16 x 4096 x
    // 4096), at 1.6-1.7 K-contiguous (8x12288x4096, 8x16384x4096 NT; results/h100/simt/rows8cal-8bdb406).
    {.family = "warptiled", .params = "tile=16x128x16,warp=16x64,vpt=4x8,stages=4", .regs = 80, .rate = 0.30,
     .kind = Candidate::simt, .store_share = kNarrowStoreShare, .read_share = 0.7, .read_share_b_kcontig = 0.55},
    {"warptiled", "tile=128x16x16,warp=64x16,vpt=8x4,stages=4", 80, 0.30, Candidate::simt, 0, kNarrowStoreShare},
    // Up to 8 rows: no padded rows, op(B) read at 2.2-2.5 TB/s in NN and NT (0.76 of 3.0) from split
    // 2-8 on (8x16384x4096 NT 115.5 us, 1.35x cuBLAS SGEMM where 16x128 ran 0.84x; 8x8192x32768 NT
    // 440.5, 1.38x; rhs-8x4096x4096 NN 29.3); a lone block (2 warps) at 0.15-0.16 of an SM's peak
    // (8x768x3072 and 8x1024x4096 split 1): a rate of 0.42. At 16 rows, two rows of tiles each read
    // op(B) and 16x128 ran 7-27 % faster (results/h100/simt/rows8cal-8bdb406; perf-log 70).
    {.family = "warptiled", .params = "tile=8x128x32,warp=8x64,vpt=4x4,stages=4", .regs = 255, .rate = 0.42,
     .kind = Candidate::simt, .store_share = kNarrowStoreShare, .read_share = 0.76, .rows_max = 8},
    // Short K: 64x64 blocks walking the tiles (persistent), the next tiles' operands in flight while
    // one's C is stored: C at 2.64 TB/s at 16384² x 16 (406 us, 1.15x cuBLAS SGEMM), 2.47 at 8192² x
    // 16, 2.29 at 8192² x 8 (a K tile of 16 read part-empty), where the tiled 64x64 stored at 1.7-2.1
    // (results/h100/simt/persistent-*, perf-log 96). At K = 32 it ran 176 us at 8192², 40 % over its
    // compute-bound model's 126, and 154 at 4096² x 128 where the tiled 128x128 ran 131: short K only.
    // Its C unaligned, staged: 1.22 and 1.41 TB/s at 4096² x 1 and 8192² x 16 (leading dimensions one over).
    {.family = "warptiled", .params = "tile=64x64x16,warp=32x32,vpt=4x8,stages=3,persistent=yes", .regs = 162,
     .rate = 0.53, .kind = Candidate::simt, .store_share = 0.82, .k_max = 16, .unaligned_store_share = 0.41},
};
// tensor_fp32 on the CUDA cores: the same tiles with FP64 accumulators (accum=fp64: exact products
// summed in FP64, 0.07-0.41x cuBLAS SGEMM's error; perf-log 37), at half their FP32 rates (64x64:
// 0.53 measured at 1024³ and 0.56 at 256³, results/h100/fp64-accum/c13c9fd; the others assumed
// alike: DFMA runs at half the FFMA rate). 128x256 needs ~272 registers; 16x128, 64x128 and 128x64
// spill with them (CompileTest.Fp64AccumulatorsCompileWithoutSpills checks those listed).
// C alone (16384² x 16): 1.31, 1.08, 1.14, 1.16 and 1.15 TB/s of 3.0 (results/h100/dmma/96caad5).
const Candidate kSimtFp64[] = {
    {"warptiled", "tile=128x128x16,warp=32x64,vpt=8x8,stages=3,accum=fp64", 252, 0.33, Candidate::simt, 0, 0.44},
    {"warptiled", "tile=64x64x16,warp=32x32,vpt=4x8,stages=3,accum=fp64", 252, 0.27, Candidate::simt, 0, 0.36},
    {"warptiled", "tile=32x128x16,warp=32x32,vpt=4x8,stages=4,accum=fp64", 246, 0.23, Candidate::simt, 0, 0.38},
    {"warptiled", "tile=128x32x16,warp=32x32,vpt=8x4,stages=4,accum=fp64", 254, 0.23, Candidate::simt, 0, 0.39},
    {"warptiled", "tile=128x16x16,warp=64x16,vpt=8x4,stages=4,accum=fp64", 252, 0.15, Candidate::simt, 0, 0.38},
};
// On 9.0, hopper-simt (TMA-fed FFMA, persistent, one block per SM; 168 registers at launch, the
// consumers get more): 47.9 TFLOP/s at 4096³ (results/h100/simt/), against warptiled's 45.3 there.
// With op(B) K-contiguous (row-major NT, column-major TN) its B tile is swizzled (conflict=swizzle):
// 0.98 of NN's speed at 4096³ and 8192³ (results/h100/simt/issue30-a1d00d7; 0.27x cuBLAS before).
// Few rows: 64x256 tiles (no half-empty 128-row tiles), split by the tail to fill the SMs: 45.4
// TFLOP/s on 128 of 132 SMs at 64x8192x32768 row-major NT, split 4 (0.95x cuBLAS SGEMM; dcaf750,
// perf-log 42); on the corpus's 512- and 4096-row NT products 0.98-0.99 of the 128x128 tile's speed
// (066dcec): a rate of 0.71, NN taken as NT.
// Few columns: 256x64 tiles, 45.4 TFLOP/s at 65536x64x1024 row-major TN on 1.94 waves (1.01x cuBLAS
// SGEMM, where warptiled 64x64 ran 0.79x; column-major 64x65536x1024 alike), 46.2 and 46.9 at 4096³
// and 8192³ NN: a rate of 0.72; 45.1 and 45.5 NT: 0.70 (results/h100/simt/sk256-922e8bd,
// skinny-65b5ec9; perf-log 66).
const Candidate kSimtHopper[] = {
    {"hopper-simt", "tile=128x128x32,warp=32x64,vpt=8x8,stages=6", 168, 0.74, Candidate::simt, 0.72},
    {"hopper-simt", "tile=64x256x32,warp=32x64,vpt=8x8,stages=5", 168, 0.71, Candidate::simt, 0.71},
    {"hopper-simt", "tile=256x64x32,warp=32x64,vpt=8x8,stages=5", 168, 0.72, Candidate::simt, 0.70},
};
// hopper-simt's split tail over more than one round of split units: each round after the first
// ran ~10 us over the model for full tiles (its arithmetic and one fix-up charged), in proportion
// to the tiles' share of real outputs: 512x2304x768 NT split 1-6 fit 79.2 us = W + 10.5 and W/s + 10.5
// per round within 2 us, 512x3072x768 and 512x3072x1024 NT within 2 us, 64x12288x4096 NT 2.7; 8-row
// products' rounds (an eighth of a tile real) within the spread (results/h100/simt/tail-1776d40,
// the candidates of results/h100/model/candidates-b58666e and gemv-table/1843e42; perf-log 62).
// wgmma's split tail alike: 128x64 split 3 at 768³ (two rounds) ran 10.7 us over the model without
// it, its one-round points 1-3 us (results/h100/model/lowest-4430b89, round-65b5ec9; perf-log 67).
constexpr double kSplitRoundUs = 10.0;
// A short K (a rank-K update): outer, whose time is C's store (one 16-byte store per row and
// thread, many small blocks). Its rate: one broadcast load of op(A) per 4 FMAs; measured 10.9-11.6
// TFLOP/s at K = 16 to 64 (0.17 of the FFMA rate; results/h100/simt/issue30-acd8273), so it wins
// only where K is a few values.
const Candidate kOuter[] = {{"outer", "threads=128,rows=8,kc=8", 94, 0.17, Candidate::store_bound}};
// Its arithmetic and C's traffic overlap: the longer of the two plus a quarter of the shorter, and
// a fill. Fitted on K = 1-32 at 2048² to 16384², beta 0 and 1, both accumulators: 64 calls within
// -20 % and +25 % (2048² x 8 the lowest; results/h100/outer/shortk-ef88451, perf-log 93); the sum of
// the two, used before, ran 20-56 % over from K = 4 at 4096² to 16384².
constexpr double kOuterOverlap = 0.25, kOuterFillUs = 2.0;
// From K = 32 (kTileSumsMinK): accum=fp64tile, each K tile of 16 products summed in FP32 and the
// tiles' sums in FP64: 0.12-0.73x cuBLAS SGEMM's error from K = 32 (1.2-1.7x at K = 16, one tile:
// plain FP32), at 0.81-0.82 of the FP32 speed (64x64 at 1024³, 32x128 at 8x12288x4096;
// results/h100/fp64-accum/4a3f454, perf-log 40). 128x128 spills with it.
const Candidate kSimtFp64Tile[] = {
    {"warptiled", "tile=64x64x16,warp=32x32,vpt=4x8,stages=3,accum=fp64tile", 245, 0.43, Candidate::simt},
    {"warptiled", "tile=32x128x16,warp=32x32,vpt=4x8,stages=4,accum=fp64tile", 243, 0.37, Candidate::simt},
    {"warptiled", "tile=128x32x16,warp=32x32,vpt=8x4,stages=4,accum=fp64tile", 249, 0.37, Candidate::simt},
    {"warptiled", "tile=128x16x16,warp=64x16,vpt=8x4,stages=4,accum=fp64tile", 255, 0.25, Candidate::simt},
};
// With FP64 accumulators: 0.12 of the FFMA rate in that fit (0.11 beside the sum: 4096x4096x16
// 94.7 against 59.9 us; c13c9fd).
// With FP64 sums 4 rows per thread: 8 take 139 registers (3 blocks per SM) and read C for beta at
// 0.59x cuBLAS SGEMM's speed where 4 rows (72 registers) ran 0.83x (8192x8192x8, perf-log 56).
// From K = 4 a block widens op(A) once (perf-log 136): half the conversions, measured (H100,
// results/h100/outer/widen-b589284) 4096² x 4 31.1 us, 8192² x 8 142.8 and with beta 1 213.6, 4096²
// x 16 beta 1 69.6: a rate of 0.15 fits them within 4 % (16384² x 16, 780 us, 26 % under it).
const Candidate kOuterFp64[] = {
    {.family = "outer", .params = "threads=128,rows=4,kc=8,accum=fp64", .regs = 92, .rate = 0.12,
     .kind = Candidate::store_bound, .k_max = 3},
    {.family = "outer", .params = "threads=128,rows=4,kc=8,accum=fp64", .regs = 92, .rate = 0.15,
     .kind = Candidate::store_bound, .k_min = 4}};
// From 9.0, tensor_fp32 on the FP64 tensor cores (dmma: floats widened, exact products summed in
// FP64, the error bound of the FP64 accumulators above). Measured (results/h100/dmma/96caad5,
// perf-log 54): 64x64 45.1 TFLOP/s at 4096³ and 46.6 at 8192³, 128x128 47.5 at 8192³, 32x128 44.8 at
// 96x12288x12288 (split 11): a rate of 0.7; 128x32 0.6. With outer-major tiles for K-contiguous
// operands 64x64 ran 51.9 and 53.1 TFLOP/s (0.80-0.83; results/h100/dmma/ba402b7), the others not
// re-measured: the rates stay at the first run's, so the tiles compare alike. C alone (16384² x 16):
// 1.68, 1.95, 2.1 and 1.87 TB/s of 3.0.
// With 4-byte copies (a leading dimension not a multiple of 4), 11 ns per copy a thread issues per K
// step: 64x64x16 (16 copies) +0.18 us a step, 32x64x32 (12) +0.10-0.21, 128x16x32 (36) +0.44
// (777x555x333 against 776x556x332, 511³ and 513³ against 512³; results/h100/dmma/coresident-695272f,
// perf-log 90).
constexpr double kDmmaUnalignedCopyUs = 0.0113;
const Candidate kDmma[] = {
    {.family = "dmma", .params = "tile=128x128x16,warp=64x32,mma=m16n8k8,stages=3", .regs = 235, .rate = 0.7,
     .kind = Candidate::simt, .store_share = 0.56, .unaligned_copy_us = kDmmaUnalignedCopyUs},
    // Where reading the operands bounds them, 64x64 reads at 1.30-1.86 TB/s and 32x128 at 1.72-1.81
    // (hk-128x128x256K, hk-64x64x1M, 8x12288x4096 NT, hk-32x256x100K; results/h100/dmma/a34ec55,
    // ba402b7). 32x128 with that read share keeps the 8-row NT products on wgmma (1.4-1.7x) but
    // gives hk-32x256x100K to warptiled (0.76x); without it, the reverse: corpus 1.243x against
    // 1.210x (results/h100/dmma/02166ed, 758db94). 64x64 without one, like warptiled.
    // C staged through shared memory (store=staged, perf-log 127): at 16384² x 16, 64x64 stored at
    // 2.19 TB/s and 32x128 at 2.42 where their direct stores ran 2.01 and 2.06 (the H100's 1.95 and
    // 2.1 within 5 %), each at its own time at 4096³ within 0.5 % (results/h200/dmma/staged-3618e67).
    // The shares: their mean rates over 8192² and 16384² at K = 4, 8 and 16 (2.30 and 2.35 TB/s;
    // results/h200/library/corpus-726458a) over the H100's 3.0 TB/s, as the others'. With beta 1, C
    // read and written in row runs at 1.75-1.86 TB/s (4096² x 16, 8192² x 8 and x 16; persistent
    // alike; results/h200/library/beta-83e3870) where the direct tiles' epilogue reaches 1.2: 0.6.
    {.family = "dmma", .params = "tile=64x64x16,warp=32x32,mma=m16n8k8,stages=3,store=staged", .regs = 168,
     .rate = 0.7, .kind = Candidate::simt, .store_share = 0.77, .unaligned_copy_us = kDmmaUnalignedCopyUs,
     .beta_share = 0.6},
    {.family = "dmma", .params = "tile=32x128x16,warp=32x32,mma=m16n8k8,stages=3,store=staged", .regs = 164,
     .rate = 0.7, .kind = Candidate::simt, .store_share = 0.78, .read_share = 0.57,
     .unaligned_copy_us = kDmmaUnalignedCopyUs, .beta_share = 0.6},
    // Short K: 64x64 blocks walking the tiles, C staged while the next tiles' operands load: 2.83 TB/s
    // at 16384² x 16 (380 us, 1.21x cuBLAS SGEMM), 2.44 and 2.65 at 8192² x 8 and x 16 (1.00x and
    // 1.35x). At K = 32 it ran 558 us where the tile-per-block 32x128 ran 545, and 0.90x at 4096³; at
    // K = 4 outer ran 3-6 % faster (8192² and 16384²; results/h200/dmma/staged-3618e67,
    // results/h200/library/corpus-726458a): K from 8 to 16 alone.
    {.family = "dmma", .params = "tile=64x64x16,warp=32x32,mma=m16n8k8,stages=3,persistent=yes,store=staged",
     .regs = 168, .rate = 0.7, .kind = Candidate::simt, .store_share = 0.94,
     .unaligned_copy_us = kDmmaUnalignedCopyUs, .k_max = 16, .k_min = 8, .beta_share = 0.6},
    {.family = "dmma", .params = "tile=128x32x16,warp=32x32,mma=m16n8k8,stages=3", .regs = 164, .rate = 0.6,
     .kind = Candidate::simt, .store_share = 0.62, .unaligned_copy_us = kDmmaUnalignedCopyUs},
    // Small products: 8 warps of 16x16, two per scheduler, hide the FP64 mmas' dependent waits that
    // stall a lone 4-warp block (perf-log 88): 511³ 16.4 us where 64x64 split 2 ran 21.3, 512³ 14.4
    // against 17.8, 256³ 9.3 unsplit against 11.1 split 4; 48.2 TFLOP/s at 4096³, 0.93 of 64x64's
    // (results/h100/dmma/warps-9cd9122). Two blocks on an SM: 0.44-0.49 us a K step each (640x640x320,
    // 776x556x332, 1024x512x512) against 0.57 alone, 0.9 of the SM's rate where the model's 1 put it
    // ahead at 513³ (results/h100/dmma/coresident-695272f, perf-log 90). Its read share is 32x128's.
    // Over 16 rows, half its work padding, it ran 3.9 us over the model (db-1760x16x1760 split 11:
    // 16.1 us, where 16x128 split 12 ran 14.7, 0.7 over; results/h100/corpus-tensor-fp32.json at a75a378).
    {.family = "dmma", .params = "tile=32x64x32,warp=16x16,mma=m16n8k8,stages=3", .regs = 128, .rate = 0.65,
     .kind = Candidate::simt, .store_share = 0.65, .read_share = 0.57, .busy_full = 0.9,
     .unaligned_copy_us = kDmmaUnalignedCopyUs, .padded_from = 2},
    // Up to 16 rows or columns: 8x12288x4096 row-major NT read at 2.3 TB/s (87 us, 1.38x cuBLAS
    // SGEMM; results/h100/dmma/a34ec55), and so 8x32768x8192 (1.16x, where packed wgmma reads at 2.9:
    // results/h100/dmma/ba402b7); 2048x16x2048 1.47x; C alone at 1.29 and 1.17 TB/s. A rate
    // on small squares (513³: 25.2 and 29.1 us against 64x64's 20.2; sq-256 0.74-0.81x cuBLAS SGEMM where
    // 64x64 ran 0.92x): 0.35.
    // Where the product has at most 32 rows (columns): a lone 16x128 block unsplit ran 0.35-0.44 of
    // an SM's peak (8x2304x768, 32x256x100000), 0.46-0.59 at the model's 0.75 for it (perf-log 57).
    // Their reads round by round (read_rounds): the split that leaves a short last round of blocks
    // ran up to 1.33x the best one (perf-log 113).
    {.family = "dmma", .params = "tile=16x128x32,warp=16x32,mma=m16n8k8,stages=3", .regs = 128, .rate = 0.35,
     .kind = Candidate::simt, .store_share = 0.43, .read_share = 0.77, .rate_few = 0.5,
     .unaligned_copy_us = kDmmaUnalignedCopyUs, .read_rounds = true},
    {.family = "dmma", .params = "tile=128x16x32,warp=32x16,mma=m16n8k8,stages=3", .regs = 128, .rate = 0.35,
     .kind = Candidate::simt, .store_share = 0.39, .rate_few = 0.5, .unaligned_copy_us = kDmmaUnalignedCopyUs,
     .read_rounds = true},
};
// tensor_fp32's tensor-core routes from these K on: the shortest K of the accuracy study (256 x 256
// x K, normal, positive, wide-range and uniform inputs; results/h100/fp64-accum/4541176) from which
// each met the contract on every distribution. kstep: 1.30-1.94x cuBLAS SGEMM's error at K = 16,
// 1.05 and 1.17x (wide) at 32 and 64, at most 0.61x from 128 on. ozaki: 3.4x (wide) at K = 16, at
// most 0.24x from 32 on.
constexpr long long kKstepMinK = 128, kOzakiMinK = 32;
// Before compute capability 8.0 (no cp.async): the vectorized family at its defaults.
const Candidate kSimtOld[] = {{"vectorized", "", 128, 0.45, Candidate::simt}};

// Tensor cores on 9.0 (wgmma: persistent, one block per SM). 3x takes accum=kstep, the accurate
// accumulation (error at or below cuBLAS SGEMM's in the accuracy study but for wide-range inputs at
// K < 1024, up to 1.14x; accum=tile runs 1.5x faster with up to 5x cuBLAS SGEMM's error at long K:
// perf-log 23-24): 78.6 TFLOP/s at 8192³ and 73.0 at 4096³ (a133af2, results/h100/wgmma/issue16/
// run6), a rate of 1.2 of the FFMA rate. 1x about 344 (tf32x3.json, 9ea741a). Both split the tail
// of their last wave (splitk, chosen per shape).
// Few rows or few columns: 128x64 tiles with the large operand in A's place, read in place when
// K-major and split in registers (for few rows, the transposed product Cᵀ = op(B)ᵀ·op(A)ᵀ), only the
// small one packed: 57.8 TFLOP/s at 64x8192x32768 row-major NT (split 2; 1.19x cuBLAS SGEMM, 773c528,
// perf-log 41), a rate of 0.9 on the whole tile; with a second k step in flight (inflight=2, the same
// sums) 2-4 % faster on the T512 and T64 layers (perf-log 73): 0.93. 128x128 with slices=2 has no
// registers for it.
const Candidate kWgmma3x[] = {
    // 128x64 with op(A) packed too and two k steps in flight: as fast as 128x128 slices=2 at 4096³ and
    // 8192³ (77.5 and 81.8 TFLOP/s against 76.5 and 81.9), faster at 2048³ and 1024³ (64.1 and 45.3
    // against 61.6 and 23.9, unsplit; results/h100/wgmma/pingpong-5e3659c), and never slower on the
    // corpus's products (candidates-faff25b): it replaces 128x128 (perf-log 82).
    {"wgmma", "mode=3x,accum=kstep,tile=128x64x32,stages=4,slices=1,inflight=2", 0, 1.2, Candidate::tensor},
    {"wgmma", "mode=3x,accum=kstep,tile=128x64x32,stages=4,slices=1,split_a=registers,inflight=2", 0, 0.93,
     Candidate::tensor},
    {"wgmma", "mode=3x,accum=kstep,tile=128x64x32,stages=4,slices=1,split_a=registers,transpose=yes,inflight=2", 0,
     0.93, Candidate::tensor},
    // 8-32 rows or columns: 32- and 16-wide tiles, 43.0 and 22.1 TFLOP/s of tile work at 8x24576x8192
    // row-major NT (transposed, split 4; 1.48 and 1.53x cuBLAS SGEMM, reading op(B) at 2.7-2.8 TB/s;
    // d298774, perf-log 43); the 16-wide tile with inflight=2 4 % faster at 8x12288x4096 (perf-log 73).
    // The 32-wide one with inflight=2 ran llama-up-T8 5 % slower (perf-log 75): it keeps one.
    {"wgmma", "mode=3x,accum=kstep,tile=128x32x32,stages=6,slices=1,split_a=registers", 0, 0.67, Candidate::tensor},
    {"wgmma", "mode=3x,accum=kstep,tile=128x32x32,stages=6,slices=1,split_a=registers,transpose=yes", 0, 0.67,
     Candidate::tensor},
    {"wgmma", "mode=3x,accum=kstep,tile=128x16x32,stages=8,slices=1,split_a=registers,inflight=2", 0, 0.35,
     Candidate::tensor},
    {"wgmma", "mode=3x,accum=kstep,tile=128x16x32,stages=8,slices=1,split_a=registers,transpose=yes,inflight=2", 0,
     0.35, Candidate::tensor},
};
// Ozaki scheme II on INT8 wgmma (ozaki): FP32-accurate by its moduli choice (on the GPU, from the
// data; the model counts the moduli normal inputs need), timed by ozaki_time. Cluster 1x1: 2x1
// measured 0-4 % slower (perf-log 27).
const Candidate kOzaki[] = {{"ozaki", "tile=128x128,cluster=1x1", 0, 0, Candidate::emulated}};
const Candidate kWgmma1x[] = {{"wgmma", "mode=1x,tile=128x256x32,accum=tc,stages=4", 0, 5.3, Candidate::tensor}};
// On 8.x, the mma.sync family (measured on the H100 only: 43.2 and 94.0 TFLOP/s at 4096³).
const Candidate kTf32_3x[] = {{"tf32", "mode=3x", 128, 0.67, Candidate::simt}};
const Candidate kTf32_1x[] = {{"tf32", "mode=1x", 128, 1.46, Candidate::simt}};

long long ceil_div(long long a, long long b) { return (a + b - 1) / b; }

// Blocks of this kernel an SM holds at once: shared memory, registers, threads.
int blocks_per_sm(const GpuModel& gpu, int threads, int regs, size_t smem) {
  const int regs_per_thread = (std::max(regs, 16) + 7) / 8 * 8;
  using ll = long long;
  ll by_smem = smem ? ll(gpu.smem_per_sm) / ll(smem + 1024) : 32;
  ll by_regs = gpu.regs_per_sm / (ll(threads) * regs_per_thread);
  ll by_threads = gpu.max_threads_per_sm / threads;
  return int(std::max(1ll, std::min({by_smem, by_regs, by_threads, 32ll})));
}

struct Estimate {
  double us = INFINITY;
  int splits = 1;
  bool stream = false;  // the tail streamed (stream-K), not split
  size_t workspace = 0;
  double waves = 0;
};

// A read-bound kernel's time over its reads at the full bandwidth (read_rounds): each round of up to
// `slots` resident blocks takes its busiest SM's blocks at an SM's share of the bandwidth, or the
// round's blocks where each alone on its SM reads at kLoneReadShare of that share. Measured on dmma
// 16x128 at 8x32768x8192 NT: split 2 (512 blocks over 396 slots: a round of 116 after the first) 396
// us, split 1 (256, two an SM) 298, split 3 (768) 300 (factors 1.17, 1.03, 1.03 here, 1.33 measured);
// 8x4096x16384: split 11 (352: three on 88 SMs, two on 44) 87.8 us against split 8's 82.0 (1.125
// against 1.03; results/h200/dmma/splits-84cd37d, perf-log 113).
// A lone block reads at 0.65 of its SM's share: over that sweep's 14 8-row layers, 0.5 (the share two
// blocks an SM reach, as at db9e06d) took 8x1024x4096 NT to split 28 (16.4 us at 7d4c2cd) where 16,
// 128 lone blocks, ran 14.6 (and 8x768x3072 to 24, 13.9 us, where 16 ran 12.7); 0.8 (8x16384x4096 NT
// split 1 against 2, net of ~8 us of fixed costs) takes 8x3072x1024 to split 5 where 8 measured best;
// 0.65 takes the sweep's best on 12 of the 14, and on two an unmeasured split between two measured
// within 10 % of the best (8x3072x768 split 5, 8x768x3072 split 20; perf-log 115).
constexpr double kLoneReadShare = 0.65;
double read_rounds_factor(const GpuModel& gpu, double blocks, double slots) {
  double sum = 0;
  for (double left = blocks; left > 0; left -= slots) {
    const double b = std::min(left, slots);
    sum += std::max({std::ceil(b / gpu.sms) * gpu.sms, b, gpu.sms / kLoneReadShare});
  }
  return sum / blocks;
}

// A tiled kernel of blocks BM x BN x BK, K split `s` ways (partial sums then a reduce kernel):
// the busiest SM runs ceil(blocks / slots) waves of tiles; the memory floor is the inputs read
// once and the outputs (or partial sums) written.
// `planes`: floats per partial sum (2 with FP64 accumulators).
Estimate tiled_time(const GpuModel& gpu, const Problem& p, const Candidate& c, const ParamValues& v,
                    const LaunchGeometry& g, int s, int planes) {
  auto& t = v.at("tile");
  const long long bm = t[0], bn = t[1], bk = t[2];
  const int threads = int(g.block.x * g.block.y * g.block.z);
  const int occ = blocks_per_sm(gpu, threads, c.regs, g.shared_bytes);
  const double tiles = double(ceil_div(p.m, bm) * ceil_div(p.n, bn)), blocks = tiles * s;
  const double kper = double(ceil_div(ceil_div(p.k, s), bk) * bk);
  const double slots = double(gpu.sms) * occ;
  Estimate e;
  e.splits = s;
  e.waves = blocks / slots;
  // FLOP/s of one busy SM, shared by its resident blocks. A register-tiled block keeps its SM
  // busy alone at about 3/4 of its rate (hk-64x64x1M: 132 lone 64x64 blocks, perf-log 17), so a
  // last wave of j < occ blocks per SM takes j blocks' work at 3/4 (j = 1) to 1 (j = occ) of it.
  const double sm_rate = rate_of(c, p, bm) * gpu.fp32_tflops * 1e12 / gpu.sms;
  const double work = 2.0 * bm * bn * kper;
  // Fewer than four warps on the SM (a last wave of 64-thread blocks) cannot keep even that: the
  // lone block's rate scales with its warps (sq-256-m1: 16x128 tiles of two warps, split 4, one
  // block per SM ran 17.4 us where 64x64 blocks of four ran 12.9; perf-log 51).
  const double full = std::floor(blocks / slots), rest = blocks - full * slots;
  const double j = std::ceil(rest / gpu.sms), warps = j * threads / 32.0;
  // A candidate's own lone share (busy_lone) applies to j = 1 alone: two blocks an SM ran as the 3/4
  // to 1 line has them (64x64 split 4 at 512³ beat split 6, three an SM; perf-log 109).
  const double busy_full = c.busy_full, busy_line = std::min(0.75, busy_full);
  const double busy = (j <= 1 ? std::min(c.busy_lone, busy_full)
                              : busy_line + (busy_full - busy_line) * (j - 1) / std::max(1, occ - 1)) *
                      std::min(1.0, warps / 4.0);
  double t_compute = (full * occ / busy_full + (j > 0 ? j / busy : 0)) * work / sm_rate;
  // 4-byte copies (a leading dimension not a multiple of 4): each thread issues its share of the
  // unaligned operands' K tile one float at a time, the blocks resident together side by side.
  if (c.unaligned_copy_us > 0 && (p.lda % 4 || p.ldb % 4)) {
    const double floats = (p.lda % 4 ? double(bm * bk) : 0) + (p.ldb % 4 ? double(bk * bn) : 0);
    t_compute += std::ceil(blocks / slots) * (kper / bk) * floats / threads * c.unaligned_copy_us * 1e-6;
  }
  // Bytes stream at the full bandwidth only with enough blocks loading at once: two per SM
  // (rhs-16 x 4096 x 4096 ran at 1.7 TB/s with 640 blocks and 1.3 TB/s with fewer; perf-log 17).
  const double streams = std::min(1.0, blocks / (2.0 * gpu.sms));
  // Where reads bound a short tile, the SMs holding a block more than others finish last: 8x128
  // tiles over 288 blocks (3 on some SMs, 2 on the rest) ran 1.2-1.3x the time of 256 or 384; and
  // each round of resident blocks a split adds waits for its pipeline to fill: split 16 and 32
  // (4-16 rounds) ran 9-45 us over split 2 (one) at 8x16384x4096 and 8x32768x8192 NT (results/h100/
  // simt/rows8splits-d4761c9, perf-log 72). Measured on that tile only: the other tiles' rates
  // were fitted without these terms, and with them the model moved tensor_fp32 and
  // tk-16384x16384x16 to configurations measured slower.
  const bool balanced = c.rows_max > 0;
  const double uneven =
      balanced && blocks > gpu.sms ? 1 + kUnevenShare * (std::ceil(blocks / gpu.sms) / (blocks / gpu.sms) - 1) : 1;
  const double added_rounds = balanced ? std::ceil(blocks / slots) - std::ceil(tiles / slots) : 0;
  const double bw = gpu.dram_gbps * 1e9, mn = double(p.m) * double(p.n);
  const double beta_reads = p.beta != 0.0f ? 1 : 0;
  const double out_bytes = s > 1 ? 4.0 * planes * mn * s : 4.0 * mn * (1 + beta_reads);
  const double read_bytes = 4.0 * (double(p.m) * p.k + double(p.k) * p.n) / read_share_of(c, p);
  // Read round by round (read_rounds), each round after the first waiting for its pipeline's fill.
  double t_mem = c.read_rounds
                     ? read_bytes * read_rounds_factor(gpu, blocks, slots) / bw + out_bytes / bw +
                           (std::ceil(blocks / slots) - 1) * kRoundFillUs * 1e-6
                     : (read_bytes * uneven + out_bytes) / (bw * streams) + added_rounds * kRoundFillUs * 1e-6;
  // A leading dimension that is not a multiple of 4 floats: the library's plan takes the variant
  // without 16-byte accesses (launcher whole_alignment), C stored a float at a time. Measured on
  // warptiled 128x256 at tk-4096x4096x1 (lda = 1): 0.59 TB/s, against 1.9-2.0 TB/s for the same
  // kernel with 16-byte stores at K = 1, 8 and 16 (results/h100/simt/issue30-acd8273); the tiles
  // that stage it through shared memory at their measured share.
  if (unaligned(p)) {
    const double share = c.unaligned_store_share > 0 ? c.unaligned_store_share : kScalarStoreShare;
    t_mem = std::max(t_mem, out_bytes / (share * bw));
  }
  // beta != 0: each thread reads a row of its C tile, then stores it, row after row (a store may
  // alias the next row's read). Measured on warptiled 128x256: C read and written at 1.17-1.2 TB/s
  // at tk-8192x8192x8 and tk-4096x4096x1 with beta = 1 (results/h100/simt/issue30-1f17440). C
  // staged through shared memory moves in row runs, at the candidate's own share.
  const double beta_share = c.beta_share > 0 ? c.beta_share : kBetaStoreShare;
  if (p.beta != 0.0f) t_mem = std::max(t_mem, out_bytes / (beta_share * bw));
  t_mem = std::max(t_mem, out_bytes / (c.store_share * bw));
  // A split's partial sums are written as each block finishes: those of the last round of blocks
  // after all of its arithmetic, overlapped with nothing. Fitted and measured on dmma's FP64 sums
  // (two planes: db-1760x64x1760 and tf1024-qkv-T64 7-8 % faster, odd-768³ 1 % slower); the FP32
  // tiles' splits were fitted without it, and with it one of them moved to a split measured 7 %
  // slower (db-2560x16x2560 strict, 13 to 23 ways: a tie of the model's estimates; perf-log 140).
  if (s > 1 && planes == 2) t_compute += (rest > 0 ? rest : slots) / blocks * out_bytes / kL2BytesPerS;
  double us = std::max(t_compute, t_mem) * 1e6;
  if (bm >= c.padded_from * p.m || bn >= c.padded_from * p.n) us += kPaddedTileUs;
  if (s > 1) {
    // The reduce kernel, one thread per element of C, adds eight partial planes per round trip to
    // L2: a few outputs split many ways wait on those round trips, not on the bytes (8x2304x768
    // split 32: 7 us over the bytes' time; perf-log 57).
    const double passes = std::ceil(mn / (double(gpu.sms) * 2048));
    const double chain = passes * std::ceil(planes * s / 8.0) * kL2RoundTripUs;
    us += std::max(4.0 * mn * (planes * s + 1 + beta_reads) / bw * 1e6, chain) + kLaunchUs;
    e.workspace = size_t(4.0 * planes * double(p.m) * double(partial_pitch(p)) * s);
  }
  e.us = us;
  return e;
}

// outer: every block resident soon (small blocks, few registers), C written once at the copy
// bandwidth after the arithmetic at the family's rate: a thread computes all its rows before it
// stores them, so the two add (measured at K = 1, 16 and 64 within 10 %; at K = 8 the sum is 30 %
// over: results/h100/simt/issue30-acd8273).
Estimate outer_time(const GpuModel& gpu, const Problem& p, const Candidate& c, const LaunchGeometry& g) {
  const int threads = int(g.block.x * g.block.y * g.block.z);
  const double blocks = double(g.grid.x) * g.grid.y, slots = double(gpu.sms) * blocks_per_sm(gpu, threads, c.regs, 0);
  // Fewer blocks than the GPU holds: only their share of it computes and streams; a block's threads
  // past the last column idle (N = 4: one thread of a block works).
  const double columns = double(g.grid.y) * 4 * threads;
  const double busy = std::min(1.0, blocks / slots) * std::min(1.0, double(p.n) / columns);
  const double mn = double(p.m) * double(p.n), bw = gpu.dram_gbps * 1e9;
  const double t_compute = 2.0 * mn * double(p.k) / (c.rate * gpu.fp32_tflops * 1e12 * busy);
  double t_mem = (4.0 * (double(p.m) * p.k + double(p.k) * p.n) + 4.0 * mn * (p.beta != 0.0f ? 2 : 1)) / (bw * busy);
  // outer tests C's alignment itself (run time): only an unaligned C goes a float at a time.
  if (p.ldc % 4) t_mem = std::max(t_mem, 4.0 * mn / (kOuterScalarStoreShare * bw * busy));
  Estimate e;
  e.us = (std::max(t_compute, t_mem) + kOuterOverlap * std::min(t_compute, t_mem)) * 1e6 + kOuterFillUs + kLaunchUs;
  e.waves = blocks / slots;
  return e;
}

// A family that reads its operands through TMA copies those it cannot read as given (leading
// dimension not a multiple of 4 floats) to a staged workspace first: one launch for both, each
// read and written once. (Operands at unaligned addresses are staged too; the model assumes
// aligned ones.)
void add_staging(const GpuModel& gpu, const Problem& p, const KernelFamily& f, const ParamValues& v, Estimate& e) {
  if (!f.tma_operands(v).used()) return;
  const auto staging = problem_staging(p);
  double bytes = 0;
  for (auto st : {staging.a, staging.b})
    if (st.pitch) {
      bytes += 4.0 * double(st.rows) * double(st.row_floats + st.pitch);
      e.workspace += size_t(st.floats()) * sizeof(float);
    }
  if (bytes > 0) e.us += bytes / (gpu.dram_gbps * 1e9) * 1e6 + kLaunchUs;
}

// A persistent kernel (one block per SM walking BM x BN tiles) with a split tail of s ways
// (split_tail.cuh): whole waves of whole tiles, then rounds of split units, each split's partial
// sums written and read back by the tile's last split at one SM's share of the L2 bandwidth.
// `k_whole` is the K a whole tile runs (its K tiles, rounded as the kernel loads them).
// With `stream`, the tail streamed instead (stream-K, s = 1): whole waves but the last, then each
// block's share of the rest's K tiles, a unit per tile the share touches; the fix-up reads the
// parts of the tile cut into most. The shares start at other K offsets, so the blocks share no
// operand tile in L2: each of the run's K tiles (`ktile_bytes`, both operands) comes from DRAM
// (hk-1024x1024x64K tensor_fp32, 128 wgmma tiles of 2048 K tiles: 12.9 GB, 3.2 ms measured against
// 2.2 predicted without it; perf-log 107).
struct TailCosts {
  double round_us = 0;  // each round of split units after the first, beyond its arithmetic
  double unit_us = 0;   // each unit of a block's stream after its first, beyond its arithmetic
};
struct Persistent {
  double compute_s;  // the busiest SM's compute and fix-up time
  int splits;
  bool stream;
  double waves;
  size_t workspace;  // the partial sums' bytes
};
Persistent persistent_time(const GpuModel& gpu, long long tiles, long long ktiles, long long bm, long long bn,
                           long long bk, double k_whole, int s, double sm_rate, const TailCosts& costs,
                           bool stream = false, double ktile_bytes = 0) {
  const double tile_bytes = 4.0 * bm * bn, l2_per_sm = kL2BytesPerS / gpu.sms;
  if (stream) {
    const long long blocks = std::min<long long>(tiles * ktiles, gpu.sms);
    const int kt = int(std::min<long long>(ktiles, 1ll << 30));
    const auto plan = tail::schedule(tiles, std::max(1ll, blocks), 1, kt, true);
    if (plan.stream) {
      const double share = double(ceil_div(plan.run(), blocks)), least = double(plan.run() / blocks);
      const double parts = std::ceil(double(ktiles) / least) + 1;
      Persistent r;
      const double flop_s = 2.0 * bm * bn * k_whole / sm_rate;  // a whole tile's arithmetic on one SM
      const double t_read = double(plan.run()) * ktile_bytes / (gpu.dram_gbps * 1e9);
      const double t_share = std::max(share / double(ktiles) * flop_s, t_read);
      r.compute_s = double(plan.whole / blocks) * flop_s + t_share + (1 + parts) * tile_bytes / l2_per_sm +
                    (plan.segments - 1) * costs.unit_us * 1e-6;
      r.splits = 1;
      r.stream = true;
      r.waves = double(tiles) / gpu.sms;
      r.workspace = size_t(plan.slots()) * size_t(tile_bytes);
      return r;
    }
  }
  const long long blocks = s > 1 ? std::min<long long>(tiles, gpu.sms / s) * s : std::min<long long>(tiles, gpu.sms);
  const auto plan = tail::schedule(tiles, std::max(1ll, blocks), s, int(std::min<long long>(ktiles, 1ll << 30)));
  const double rounds_whole = double(ceil_div(plan.whole, std::max(1ll, blocks)));
  const double rounds_split = double(ceil_div(plan.units() - plan.whole, std::max(1ll, blocks)));
  const double k_split = double(ceil_div(ktiles, plan.splits) * bk);
  const double t_fix = plan.splits > 1 ? (1 + plan.splits) * tile_bytes / l2_per_sm : 0;
  Persistent r;
  r.compute_s = (rounds_whole * k_whole + rounds_split * k_split) * 2.0 * bm * bn / sm_rate + t_fix +
                std::max(0.0, rounds_split - 1) * costs.round_us * 1e-6;
  r.splits = plan.splits;
  r.stream = false;
  r.waves = double(plan.units()) / gpu.sms;
  r.workspace = plan.splits > 1
                    ? size_t(std::min<long long>(tiles, gpu.sms)) * size_t(tile_bytes) * size_t(plan.splits)
                    : 0;
  return r;
}

// The share of the tiles' outputs that are the product's (the rest is padding of edge tiles).
double real_share(const Problem& p, long long tiles, long long bm, long long bn) {
  return double(p.m) * double(p.n) / (double(tiles) * double(bm * bn));
}

// hopper-simt: the persistent schedule at the family's FFMA rate; the memory floor is the inputs
// read once and C written (and read, with beta).
Estimate hopper_simt_time(const GpuModel& gpu, const Problem& p, const Candidate& c, const ParamValues& v, int s,
                          bool stream = false) {
  auto& t = v.at("tile");
  const long long bm = t[0], bn = t[1], bk = t[2];
  const long long tiles = ceil_div(p.m, bm) * ceil_div(p.n, bn), ktiles = ceil_div(p.k, bk);
  const double sm_rate = rate_of(c, p) * gpu.fp32_tflops * 1e12 / gpu.sms;
  // A stream of more than a wave of tiles pays nothing measurable for a unit past a block's first;
  // under a wave (every share less than a tile) it pays a split round's cost (perf-log 133).
  const double round_us = kSplitRoundUs * real_share(p, tiles, bm, bn);
  const auto run = persistent_time(gpu, tiles, ktiles, bm, bn, bk, double(ktiles * bk), s, sm_rate,
                                   {round_us, tiles < gpu.sms ? round_us : 0}, stream, 4.0 * (bm + bn) * bk);
  const double bw = gpu.dram_gbps * 1e9, mn = double(p.m) * double(p.n);
  const double t_mem = (4.0 * (double(p.m) * p.k + double(p.k) * p.n) + 4.0 * mn * (p.beta != 0.0f ? 2 : 1)) / bw;
  // Its variant follows C's alignment alone (the operands are staged where TMA cannot read them).
  const double store_share = p.ldc % 4 ? kScalarStoreShare : kSimtPersistentStoreShare;
  const double t_store = p.k < bk ? 4.0 * mn * (p.beta != 0.0f ? 2 / kBetaStoreShare : 1 / store_share) / bw : 0;
  Estimate e;
  e.splits = run.splits;
  e.stream = run.stream;
  e.waves = run.waves;
  e.us = std::max({run.compute_s, t_mem, t_store}) * 1e6;
  e.workspace = run.workspace;
  return e;
}

// The persistent wgmma kernel after its pre-pass, which reads op(A) and op(B) and writes their
// K-major TF32 planes (1x reads K-major operands in place, and so does split_a=registers its op(A),
// copied as it is otherwise), with its split tail. `p` is the configuration's own problem
// (family_problem: transposed for transpose=yes).
Estimate wgmma_time(const GpuModel& gpu, const Problem& p, const Candidate& c, const ParamValues& v, int s,
                    bool stream = false) {
  auto& t = v.at("tile");
  const long long bm = t[0], bn = t[1], bk = t[2];
  const bool three = v.at("mode")[0] == 0, raw_a = three && v.at("split_a")[0] == 1;
  const int planes = three ? 2 : 1, planes_a = raw_a ? 1 : planes;
  const double kp = double(ceil_div(p.k, 32) * 32);
  const long long tiles = ceil_div(p.m, bm) * ceil_div(p.n, bn), ktiles = ceil_div(p.k, bk);
  const double sm_rate = rate_of(c, p) * gpu.fp32_tflops * 1e12 / gpu.sms;
  const double round_us = kSplitRoundUs * real_share(p, tiles, bm, bn);
  const auto run = persistent_time(gpu, tiles, ktiles, bm, bn, bk, kp, s, sm_rate, {round_us, round_us}, stream,
                                   4.0 * double(planes_a * bm + planes * bn) * bk);
  // In place: A K-major is trans_a = no, B K-major is trans_b = yes, rows of 16 bytes.
  const bool a_packed = (three && !raw_a) || p.trans_a == Trans::yes || p.lda % 4;
  const bool b_packed = three || p.trans_b == Trans::no || p.ldb % 4;
  const double bw = gpu.dram_gbps * 1e9, mn = double(p.m) * double(p.n);
  const double packed_a = a_packed ? double(p.m) * 4.0 * planes_a * kp : 0;
  const double packed_b = b_packed ? double(p.n) * 4.0 * planes * kp : 0;
  const double rows_packed = double(a_packed ? p.m : 0) + double(b_packed ? p.n : 0);
  const double t_pack = (rows_packed * 4.0 * p.k + packed_a + packed_b) / bw;
  const double t_mem = (4.0 * (planes_a * double(p.m) + planes * double(p.n)) * kp + 4.0 * mn * (p.beta != 0.0f ? 2 : 1)) / bw;
  // The consumers store C from the wgmma fragments, 4 bytes a thread at a time: measured 0.41 to
  // 0.48 TB/s when that is all a tile does (K = 32 and 64; perf-log 17). With a long K it overlaps
  // the next tile's loads; with a tiny K it is the whole kernel.
  const double t_store = 4.0 * mn / (kWgmmaStoreShare * bw);
  Estimate e;
  e.splits = run.splits;
  e.stream = run.stream;
  e.waves = run.waves;
  e.us = (std::max({run.compute_s, t_mem, t_store}) + t_pack) * 1e6 +
         kLaunchUs * ((a_packed ? 1 : 0) + (b_packed ? 1 : 0)) + (three ? kWgmmaStartUs : 0);
  e.workspace = size_t(packed_a + packed_b) + run.workspace;
  return e;
}

// ozaki: the pre-passes read op(A) and op(B) twice (the scan, the residues) and write n int8
// planes, an operand contiguous along K at a larger share of the bandwidth than a strided one
// (16-byte loads of whole rows, perf-log 111b; a strided operand costs the passes ~2x, perf-log
// 114); then each persistent block takes ceil(tiles / SMs) tiles, each a run of n moduli of ktiles
// K tiles, with a fixed cost per modulus (the drain, the CRT step and the epilogue's share).
// Fitted (scripts/fit-ozaki-model.py --fix-shares, perf-log 122) on the 25 unpeeled ozaki calls of
// the H200's corpus at 67e8e30 whose clock stayed above 1.9 GHz (results/h200/library/corpus-67e8e30):
// 0.325 us per 128x128x128 INT8 K tile, 1.7 us per modulus (the CRT step without its reduction,
// perf-log 121); pass shares 0.65 and 0.3 kept from perf-log 119's fit (the passes did not change):
// rms 5.4 %, where 119's constants (0.335 / 2.6) ran 11 % off. A call whose CRT steps reduce
// (ozaki::crt_reduces: small products at long K) pays kOzakiReduceUs more a modulus: the ncu K
// sweep's difference between the two steps (perf-log 121: 0.8 us at the profiler's clock). The
// calls held by the power limit (1.4-1.8 GHz, products of 2 ms and more) run up to 18 % over the
// model; ozaki leads there by 1.5x or more.
constexpr double kOzakiKtileUs = 0.325, kOzakiModulusUs = 1.7, kOzakiKContigShare = 0.65, kOzakiStridedShare = 0.3,
                 kOzakiReduceUs = 0.55;
Estimate ozaki_time(const GpuModel& gpu, const Problem& p, const ParamValues& v) {
  auto& t = v.at("tile");
  const int n = ozaki::choose_moduli(ozaki::kNormalSpread, p.k, p.m, p.n);
  const double kp = double(ceil_div(p.k, 128) * 128), rows = double(p.m + p.n), bw = gpu.dram_gbps * 1e9;
  const long long tiles = ceil_div(p.m, t[0]) * ceil_div(p.n, t[1]);
  const double rounds = double(ceil_div(tiles, gpu.sms));
  // An H100 SM's rate scaled by the GPU's FFMA rate per SM (64.3 TFLOP/s over 132 SMs there).
  const double speed = gpu.fp32_tflops / gpu.sms / (64.3 / 132);
  const double ktile_us = kOzakiKtileUs * double(t[0] * t[1]) / (128.0 * 128.0) / speed;
  const bool reduces = ozaki::crt_reduces(n, ozaki::kNormalSpread, p.k, p.m, p.n);
  const double modulus_us = (kOzakiModulusUs + (reduces ? kOzakiReduceUs : 0.0)) / speed;
  const double t_gemm = rounds * n * (kp / 128 * ktile_us + modulus_us) * 1e-6;
  // Canonical row-major: op(A) is K-contiguous untransposed, op(B)ᵀ transposed.
  auto pass_s = [&](double r, bool k_contig) {
    return (8.0 * r * p.k + double(n) * r * kp) / ((k_contig ? kOzakiKContigShare : kOzakiStridedShare) * bw);
  };
  const double t_pre = pass_s(double(p.m), p.trans_a == Trans::no) + pass_s(double(p.n), p.trans_b == Trans::yes);
  const double t_store = 4.0 * double(p.m) * double(p.n) * (p.beta != 0.0f ? 2 : 1) / (kWgmmaStoreShare * bw);
  Estimate e;
  e.waves = double(tiles) / gpu.sms;
  e.us = (std::max(t_gemm, t_store) + t_pre) * 1e6 + 4 * kLaunchUs;
  // Every plane the call may choose (a line more per row with pitch=odd), and the rows' exponents.
  e.workspace = size_t(ozaki::kMaxModuli * rows * (kp + 128) + 4.0 * (rows + 4));
  return e;
}

struct Parsed {
  const Candidate* c;
  const KernelFamily* f;
  ParamValues v;
};

const std::vector<Parsed>& parsed(const Candidate* first, size_t n) {
  // One parse per candidate list, kept: dispatch runs once per new shape, on the host.
  static std::map<const Candidate*, std::vector<Parsed>> cache;
  static std::mutex mu;
  std::lock_guard lock(mu);
  auto it = cache.find(first);
  if (it != cache.end()) return it->second;
  std::vector<Parsed> out;
  for (size_t i = 0; i < n; ++i) {
    auto* f = find_family(first[i].family);
    out.push_back({&first[i], f, parse_params(*f, first[i].params)});
  }
  return cache.emplace(first, std::move(out)).first->second;
}

template <size_t N>
const std::vector<Parsed>& parsed(const Candidate (&list)[N]) {
  return parsed(list, N);
}

std::string fmt(const char* f, double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, x);
  return buf;
}

}  // namespace

GpuModel GpuModel::of(const DeviceInfo& d) {
  GpuModel g;
  g.name = d.name;
  g.arch = d.arch();
  g.sms = d.sms;
  const double peak = d.peak_fp32_tflops();
  g.fp32_tflops = peak > 0 ? peak * (64.3 / 66.9) : 0.5 * d.sms;  // unknown lanes: a guess that keeps ratios
  g.dram_gbps = d.peak_dram_gbps() > 0 ? d.peak_dram_gbps() * (3015.0 / 3352.0) : 1000.0;
  g.memory_bytes = d.global_mem_bytes;
  g.smem_per_sm = d.smem_per_sm;
  g.regs_per_sm = d.regs_per_sm > 0 ? d.regs_per_sm : 65536;
  g.max_threads_per_sm = d.max_threads_per_sm > 0 ? d.max_threads_per_sm : 2048;
  return g;
}

GpuModel GpuModel::h100() {
  return {"NVIDIA H100 80GB HBM3", 90, 132, 64.3, 3015, size_t(79) << 30, 233472, 65536, 2048};
}

GpuModel GpuModel::h200() {
  GpuModel g = h100();
  g.name = "NVIDIA H200";
  g.dram_gbps = 4814.304 * (3015.0 / 3352.0);
  g.memory_bytes = size_t(150109880320);
  return g;
}

GpuModel GpuModel::a100() {
  // 108 SMs, 19.5 TFLOP/s FP32 peak, 1555 GB/s, 164 KB of shared memory per SM.
  return {"NVIDIA A100-SXM4-40GB", 80, 108, 19.5 * (64.3 / 66.9), 1555 * (3015.0 / 3352.0), size_t(40) << 30, 167936,
          65536, 2048};
}

std::optional<GpuModel> GpuModel::named(const std::string& name) {
  if (name == "h100") return h100();
  if (name == "h200") return h200();
  if (name == "a100") return a100();
  return std::nullopt;
}

std::string to_string(Route r) {
  switch (r) {
    case Route::gemm: return "gemm";
    case Route::gemv_n: return "gemv (N = 1)";
    case Route::gemv_m: return "gemv (M = 1)";
  }
  return "?";
}

Problem vector_problem(const Problem& c, Route r) {
  Strides mat;
  int64_t x_inc, y_inc;
  Problem g;
  g.op = Op::gemv;
  g.layout = Layout::row_major;
  g.n = 1;
  g.k = c.k;
  g.alpha = c.alpha, g.beta = c.beta;
  if (r == Route::gemv_n) {
    mat = op_a_strides(c);
    g.m = c.m;
    x_inc = op_b_strides(c).row;
    y_inc = c_strides(c).row;
  } else {
    auto sb = op_b_strides(c);
    mat = {sb.col, sb.row};  // op(B)ᵀ
    g.m = c.n;
    x_inc = op_a_strides(c).col;
    y_inc = c_strides(c).col;
  }
  if (mat.col == 1) {  // rows contiguous: a row-major A
    g.trans_a = Trans::no;
    g.lda = std::max(mat.row, g.k);  // a single row's stride is never used
  } else {  // columns contiguous: the transpose of a row-major K x M matrix
    g.trans_a = Trans::yes;
    g.lda = mat.col;
  }
  g.ldb = x_inc;
  g.ldc = y_inc;
  return g;
}

namespace {

// Every candidate that supports the problem, each at its best split, with its estimate.
struct Evaluated {
  const Parsed* c;
  Estimate e;
};
std::vector<Evaluated> evaluate(const GpuModel& gpu, const Problem& p, MathMode math, size_t max_workspace) {
  const size_t split_cap = std::min({kMaxSplitWorkspace, gpu.memory_bytes / 16, max_workspace});
  const size_t pack_cap = std::min(gpu.memory_bytes / 4, max_workspace);
  // tensor_fp32 takes only routes that meet its contract (error at most cuBLAS SGEMM's): the CUDA
  // cores with FP64 accumulators, Hopper's tensor routes from kKstepMinK / kOzakiMinK on. The mma.sync
  // 3xTF32 family sums in FP32 fragments (like wgmma's accum=tile, up to 5x cuBLAS SGEMM's error)
  // and was never held to the contract: not taken. Before 8.0 it is strict FP32 (the vectorized
  // family has FP32 accumulators only).
  const bool accurate = math == MathMode::tensor_fp32 && gpu.arch >= 80;
  const bool tensor = gpu.arch >= 80 && math != MathMode::strict_fp32 && (!accurate || p.k >= kKstepMinK);
  std::vector<const std::vector<Parsed>*> lists;
  if (accurate) lists = {&parsed(kSimtFp64), &parsed(kOuterFp64)};
  else lists = {gpu.arch >= 80 ? &parsed(kSimt) : &parsed(kSimtOld), &parsed(kOuter)};
  if (accurate && p.k >= kTileSumsMinK) lists.push_back(&parsed(kSimtFp64Tile));
  if (accurate && gpu.arch >= 90) lists.push_back(&parsed(kDmma));
  if (gpu.arch == 90 && !accurate) lists.push_back(&parsed(kSimtHopper));
  if (tensor && gpu.arch == 90) lists.push_back(math == MathMode::tf32 ? &parsed(kWgmma1x) : &parsed(kWgmma3x));
  if (accurate && gpu.arch == 90 && p.k >= kOzakiMinK) lists.push_back(&parsed(kOzaki));
  if (tensor && !accurate && gpu.arch != 90) lists.push_back(math == MathMode::tf32 ? &parsed(kTf32_1x) : &parsed(kTf32_3x));

  std::vector<Evaluated> out;
  for (auto* list : lists)
    for (auto& c : *list) {
      // The problem as this configuration computes it (transposed for transpose=yes).
      const Problem q = family_problem(*c.f, c.v, p);
      if (!c.f->unsupported(c.v, q).empty() || (c.c->rows_max && q.m > c.c->rows_max) ||
          (c.c->k_max && q.k > c.c->k_max) || q.k < c.c->k_min)
        continue;
      Estimate e;
      if (c.c->kind == Candidate::store_bound) {
        e = outer_time(gpu, q, *c.c, c.f->geometry(c.v, q));
      } else if (c.c->kind == Candidate::emulated) {
        e = ozaki_time(gpu, q, c.v);
        if (e.workspace > pack_cap) continue;
      } else if (c.f->persistent(c.v) && (c.f->packing(c.v).planes > 0 || c.f->tma_operands(c.v).used())) {
        // The TMA-fed families' persistent schedule with its split tail (a cp.async family's
        // persistent tiles are priced as its tiles, below).
        // The split tail, where the family offers it: up to 64 ways (a huge K with one tile).
        const bool packed = c.f->packing(c.v).planes > 0;
        const int most = c.v.count("splitk") ? 64 : 1;
        for (int s = 1; s <= most; s = s < 8 ? s + 1 : s * 2) {
          auto x = packed ? wgmma_time(gpu, q, *c.c, c.v, s) : hopper_simt_time(gpu, q, *c.c, c.v, s);
          if (x.workspace <= (packed ? pack_cap : split_cap) && x.us < e.us) e = x;
        }
        // Or the tail streamed, where the family offers it.
        if (c.v.count("tail")) {
          auto x = packed ? wgmma_time(gpu, q, *c.c, c.v, 1, true) : hopper_simt_time(gpu, q, *c.c, c.v, 1, true);
          if (x.stream && x.workspace <= (packed ? pack_cap : split_cap) && x.us < e.us) e = x;
        }
        if (e.us == INFINITY) continue;
        if (!packed) add_staging(gpu, q, *c.f, c.v, e);
        if (e.workspace > max_workspace) continue;
      } else {
        const auto g = c.f->geometry(c.v, q);
        const bool splits = c.v.count("splitk") > 0;
        const long long bk = c.v.count("tile") ? c.v.at("tile")[2] : 1;
        // Up to a few waves of slices (a huge K with one tile wants every SM), as many as the family takes.
        int most = 1;
        for (auto& spec : c.f->params())
          if (splits && spec.name == "splitk") most = std::min(512, int(spec.max));
        for (int s = 1; s <= most; ++s) {
          // Each slice keeps at least four K tiles: shorter ones are mostly prologue.
          if (s > 1 && ceil_div(q.k, s) < 4 * bk) break;
          auto x = tiled_time(gpu, q, *c.c, c.v, g, s, c.f->fp64_accumulators(c.v) ? 2 : 1);
          if (x.workspace > split_cap) break;
          if (x.us < e.us) e = x;
        }
        if (e.us == INFINITY) continue;
        add_staging(gpu, q, *c.f, c.v, e);
        if (e.workspace > max_workspace) continue;
      }
      out.push_back({&c, e});
    }
  return out;
}

// A candidate as the library would run it: its split in its parameters.
Dispatch as_dispatch(const Evaluated& x) {
  Dispatch d;
  ParamValues v = x.c->v;
  if (v.count("splitk")) v["splitk"] = {x.e.splits};
  if (v.count("tail")) v["tail"] = {x.e.stream ? 1 : 0};
  d.family = x.c->f->name();
  d.params = format_params(*x.c->f, v);
  d.splits = x.e.splits;
  d.predicted_us = x.e.us;
  d.workspace_bytes = x.e.workspace;
  return d;
}

}  // namespace

std::vector<Dispatch> dispatch_candidates(const GpuModel& gpu, const Problem& p, MathMode math, size_t max_workspace) {
  std::vector<Dispatch> out;
  for (auto& x : evaluate(gpu, p, math, max_workspace)) out.push_back(as_dispatch(x));
  std::stable_sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.predicted_us < b.predicted_us; });
  return out;
}

namespace {

// The model's time of a call: its dispatch's estimate, or for a vector route the matrix read once.
double modelled_us(const GpuModel& gpu, const Problem& p, MathMode math) {
  const Problem c = canonical(p);
  const auto d = dispatch(gpu, c, math);
  if (d.route != Route::gemm)
    return 4.0 * double(c.m + c.n - 1) * double(c.k) / (gpu.dram_gbps * 1e9) * 1e6 + kLaunchUs;
  return d.predicted_us;
}

}  // namespace

std::vector<PeelPart> peel_parts(const Problem& p, const Peel& peel) {
  const long long m0 = p.m - peel.rows, n0 = p.n - peel.cols;
  auto part = [&](long long m, long long n, long long a_at, long long b_at, long long c_at) {
    PeelPart x{p, a_at, b_at, c_at};
    x.problem.m = m, x.problem.n = n;
    return x;
  };
  std::vector<PeelPart> out = {part(m0, n0, 0, 0, 0)};
  if (peel.rows) out.push_back(part(peel.rows, p.n, m0 * op_a_strides(p).row, 0, m0 * c_strides(p).row));
  if (peel.cols) out.push_back(part(m0, peel.cols, 0, n0 * op_b_strides(p).col, n0 * c_strides(p).col));
  return out;
}

bool gathers_x(const Problem& g) {
  return g.op == Op::gemv && g.trans_a == Trans::no && g.ldb >= kGatherIncrement && g.m >= kGatherRows &&
         g.m * g.k >= kGatherElements;
}

Peel peel(const GpuModel& gpu, const Problem& p, MathMode math) {
  if (p.op != Op::gemm || p.m < 2 * kPeelTile || p.n < 2 * kPeelTile) return {};
  Peel x;
  if (p.m % kPeelTile <= kPeelMax) x.rows = p.m % kPeelTile;
  if (p.n % kPeelTile <= kPeelMax) x.cols = p.n % kPeelTile;
  if (!x.any()) return {};
  x.whole_us = modelled_us(gpu, p, math);
  for (auto& part : peel_parts(p, x)) x.parts_us += modelled_us(gpu, part.problem, math);
  x.parts_us += kPeelPartUs * double((x.rows > 0) + (x.cols > 0));
  return x.parts_us < x.whole_us ? x : Peel{};
}

bool edges_beside(const GpuModel& gpu, const Problem& main, const std::string& main_family) {
  const double waves = double(main.m / kPeelTile) * double(main.n / kPeelTile) / gpu.sms;
  return main_family != "ozaki" || waves <= kBesideWaves;
}

Dispatch dispatch(const GpuModel& gpu, const Problem& p, MathMode math, size_t max_workspace) {
  Dispatch d;
  if (p.n == 1 || p.m == 1) {
    d.route = p.n == 1 ? Route::gemv_n : Route::gemv_m;
    d.why = to_string(d.route) + ": a matrix-vector product, bound by reading the matrix once";
    return d;
  }
  const auto all = evaluate(gpu, p, math, max_workspace);
  if (all.empty()) throw UsageError("no kernel of the library takes " + describe(p));
  // The first of the least time; the runner-up is the best of another family, for the reason.
  const Evaluated* best = &all[0];
  for (auto& x : all)
    if (x.e.us < best->e.us) best = &x;
  const Evaluated* runner_up = nullptr;
  for (auto& x : all)
    if (x.c->f != best->c->f && (!runner_up || x.e.us < runner_up->e.us)) runner_up = &x;
  d = as_dispatch(*best);
  const auto& v = best->c->v;
  const std::string tiles =
      v.count("tile") ? std::to_string(v.at("tile")[0]) + "x" + std::to_string(v.at("tile")[1]) + " tiles" : "C's store";
  const std::string form = best->c->f->transposes(v) ? " of the transposed product Cᵀ = op(B)ᵀ·op(A)ᵀ" : "";
  d.why = "model: " + d.family + " " + tiles + form +
          (d.splits > 1 ? ", K split " + std::to_string(d.splits) + " ways" : "") +
          (best->e.stream ? ", the tail streamed (stream-K)" : "") + ", " +
          fmt("%.2f", best->e.waves) + " waves of " + std::to_string(gpu.sms) + " SMs, " +
          fmt("%.1f", best->e.us) + " us predicted";
  const bool accurate = math == MathMode::tensor_fp32 && gpu.arch >= 80;
  if (d.family == "ozaki") {
    const int n = ozaki::choose_moduli(ozaki::kNormalSpread, p.k, p.m, p.n);
    d.why += " (" + std::to_string(n) + " moduli for normal inputs at this K and M x N" +
             (ozaki::crt_reduces(n, ozaki::kNormalSpread, p.k, p.m, p.n) ? ", each product reduced before its CRT step"
                                                                          : "") +
             "; the kernel counts them from the data)";
  }
  if (accurate && best->c->c->kind != Candidate::tensor && best->c->c->kind != Candidate::emulated)
    d.why += std::string(" (FP64 accumulators: tensor_fp32's error bound") +
             (p.k < kOzakiMinK ? "; the tensor cores miss it at K < " + std::to_string(kOzakiMinK) : "") + ")";
  if (runner_up) d.why += "; next: " + runner_up->c->f->name() + " " + fmt("%.1f", runner_up->e.us) + " us";
  return d;
}

std::string unsplit_gemv(const std::string& family, const std::string& params) {
  auto& f = *find_family(family);
  auto v = parse_params(f, params);
  if (v.count("splits")) v["splits"] = {1};
  return format_params(f, v);
}

std::string with_math(const std::string& family, const std::string& params, MathMode math, long long k,
                      long long rows) {
  auto& f = *find_family(family);
  auto v = parse_params(f, params);
  if (math != MathMode::tensor_fp32 || !v.count("accum")) return params;
  v["accum"] = {2};
  // fp64tile where a GEMV's K allows it and the configuration takes it (gemv-block's 1024 threads do not).
  if (f.op() != Op::gemv || k < kTileSumsMinK || rows >= kTileSumsMaxRows || !accepts(f, format_params(f, v)))
    v["accum"] = {1};
  return f.fp64_accumulators(v) ? format_params(f, v) : params;
}

bool fits_math(const std::string& family, const std::string& params, MathMode math, long long k) {
  return accepts(*find_family(family), with_math(family, params, math, k));
}

std::string default_params(const std::string& family, MathMode math, long long k) {
  auto& f = *find_family(family);
  // warptiled's default 8x16 thread tile has no register room for FP64 accumulators.
  if (family == "warptiled" && math == MathMode::tensor_fp32) return format_params(f, parsed(kSimtFp64)[0].v);
  return with_math(family, format_params(f, parse_params(f, "")), math, k);
}

std::vector<std::pair<std::string, std::string>> dispatch_configurations(int arch) {
  std::vector<std::pair<std::string, std::string>> out;
  auto add = [&](const std::vector<Parsed>& list) {
    for (auto& c : list) {
      // Split-K is gridDim.z: one binary serves every split; the streamed tail is a binary of its own.
      ParamValues v = c.v;
      if (v.count("splitk")) v["splitk"] = {1};
      out.emplace_back(c.f->name(), format_params(*c.f, v));
      if (v.count("tail")) v["tail"] = {1}, out.emplace_back(c.f->name(), format_params(*c.f, v));
    }
  };
  add(arch >= 80 ? parsed(kSimt) : parsed(kSimtOld));
  add(parsed(kOuter));
  if (arch >= 80) add(parsed(kSimtFp64)), add(parsed(kOuterFp64)), add(parsed(kSimtFp64Tile));
  if (arch >= 90) add(parsed(kDmma));
  if (arch == 90) add(parsed(kSimtHopper)), add(parsed(kWgmma3x)), add(parsed(kWgmma1x)), add(parsed(kOzaki));
  if (arch >= 80 && arch != 90) add(parsed(kTf32_3x)), add(parsed(kTf32_1x));
  for (const char* gemv : {"gemv-block", "gemv-columns"}) {
    out.emplace_back(gemv, default_params(gemv, MathMode::strict_fp32));
    for (long long k : {0ll, kTileSumsMinK}) out.emplace_back(gemv, default_params(gemv, MathMode::tensor_fp32, k));
  }
  return out;
}

}  // namespace gemmlab
