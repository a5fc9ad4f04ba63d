// wgmma: FP32 GEMM on Hopper's warpgroup tensor-core instructions (sm_90a), 3xTF32 or 1xTF32.
//
// TF32 wgmma reads both operands K-major from shared memory, so a pre-pass (pack_tf32) writes
// op(A) (M x K) and op(B)ᵀ (N x K) K-major, already split into their TF32 big and small planes
// (MODE 3) or rounded to TF32 (MODE 1), whatever the caller's layout (1x may read operands that
// are already K-major in place: the host decides). The GEMM kernel then never converts anything:
// warpgroup CONSUMERS (the last) is the producer, one thread of which moves tiles with TMA (rows of
// BK floats swizzled, so the tensor cores read them without bank conflicts) into STAGES slots
// guarded by mbarriers (full: the bytes arrived; empty: every consumer warp of the cluster is done
// with the slot); the consumer warpgroups each own WG_M rows of the BM x BN tile and issue
// m64nFNk8 wgmmas. The grid is persistent: each block (cluster) takes tiles blockIdx.x, +
// gridDim.x, ..., in bands of GROUP tile rows so that blocks running together share operand tiles
// in L2; with CLUSTER = 2 the two blocks of a cluster take vertically adjacent tiles and load
// their common B tile once (multicast).
//
// A_REGS 1 (3x): op(A) is not packed but loaded as it is (FP32; read in place when K-major): each
// consumer thread reads its fragment values with LDS and splits them in registers, and the wgmmas
// take A from registers; only op(B) goes through the pre-pass (it is reused by every tile row).
// With a split tail (gridDim.z > 1, split_tail.cuh) the last wave's tiles have their K split, the
// partial sums meeting in the workspace.
//
// ACCUM 0 ("tile"): the products of FLUSH K tiles go into a fresh fragment (tmp) of FN = BN / SLICES
// columns that FP32 adds to the accumulator: the tensor cores add with round-toward-zero, and
// summing all of K there biases the result (see tf32.cu). ACCUM 2 ("kstep"): a fresh fragment per
// FRAG_STEPS k steps (8 of K each), so that each round-toward-zero sum covers only a few products and
// their corrections; the fragments of COMPENSATE K tiles are summed in FP32 (part) and those sums
// added with compensation (Kahan), since a plain FP32 chain over K / 8 fragments grows the error
// with K more than cuBLAS SGEMM's (perf-log 23). ACCUM 1 ("tc"): everything accumulates in the
// tensor cores (half the registers, at that accuracy cost). ORDER: see issue().
//
// transpose=yes is the launcher's alone (family_problem): the kernel is handed Cᵀ = op(B)ᵀ·op(A)ᵀ
// with C's strides swapped, so a few-row product's large op(B) takes A's place (read in place,
// split in registers) and its few rows become BN, down to the 16-wide wgmma. TRANSPOSED tells the
// kernel only for its epilogue's form (store_tile).
#include "gemm_tile.cuh"
#include "hopper.cuh"
#include "split_tail.cuh"
#include "tf32_split.cuh"

#ifndef GROUP
#define GROUP 8
#endif
#ifndef FLUSH
#define FLUSH 1
#endif
#ifndef CLUSTER
#define CLUSTER 1
#endif
#ifndef SLICES
#define SLICES 1
#endif
#ifndef A_REGS
#define A_REGS 0
#endif
#ifndef INFLIGHT
#define INFLIGHT 1
#endif
#ifndef FRAG_STEPS
#define FRAG_STEPS 1
#endif
#ifndef COMPENSATE
#define COMPENSATE 1
#endif
#ifndef PINGPONG
#define PINGPONG 0
#endif

constexpr int SW = BK * 4;  // a K tile row is one swizzle row: 128, 64 or 32 bytes
constexpr int NT = 128 * (CONSUMERS + 1);
constexpr int WG_M = BM / CONSUMERS;  // rows per consumer warpgroup
constexpr int MW = WG_M / 64;         // m64 wgmmas per consumer, product and k step
constexpr int FN = ACCUM != 1 ? BN / SLICES : BN;  // columns of one wgmma (of the fresh fragment)
constexpr int PARTS = MODE == 3 ? 2 : 1;
constexpr int A_PARTS = A_REGS ? 1 : PARTS;  // A's planes in a stage: as loaded, or packed
constexpr int A_PLANE = BM * BK, B_PLANE = BN * BK;  // floats
constexpr int STAGE = A_PARTS * A_PLANE + PARTS * B_PLANE;
constexpr unsigned STAGE_BYTES = STAGE * 4u;
// setmaxnreg: the producer keeps what its TMA loop needs and two consumers share the rest (kstep's
// fragments need 240: 2 x 128 x 240 + 128 x 24 fits the 64K registers).
constexpr int PRODUCER_REGS = ACCUM == 2 ? 24 : 40, CONSUMER_REGS = ACCUM == 2 ? 240 : 232;
static_assert(WG_M % 64 == 0, "each consumer warpgroup owns whole m64 rows");
static_assert(!A_REGS || MODE == 3, "A is split in registers only for 3xTF32");

// Writes op(X) (rows x k, element (r, c) at x[r*sr + c*sk]) K-major into out[part][r][kp]: big
// parts in plane 0, small parts in plane 1 (MODE 3); raw: the FP32 values unchanged (op(A) for
// A_REGS, which splits it in registers). Through a 32 x 32 shared tile, so that both
// the read (along whichever dimension of x is contiguous) and the write are coalesced.
extern "C" __global__ void __launch_bounds__(256) pack_tf32(const float* x, long long sr, long long sk,
                                                            long long rows, long long k, long long kp, float* out,
                                                            int raw) {
  follow_previous_grid();
  __shared__ float tile[32][33];  // +1: the transposed read hits 32 different banks
  const long long r0 = (long long)blockIdx.y * 32, c0 = (long long)blockIdx.x * 32;
  const int tx = threadIdx.x % 32, ty = threadIdx.x / 32;
  const bool k_contig = sk == 1;
#pragma unroll
  for (int i = ty; i < 32; i += 8) {
    const int r = k_contig ? i : tx, c = k_contig ? tx : i;
    const long long gr = r0 + r, gc = c0 + c;
    tile[r][c] = gr < rows && gc < k ? x[gr * sr + gc * sk] : 0.0f;
  }
  __syncthreads();
  const long long plane = rows * kp;
#pragma unroll
  for (int i = ty; i < 32; i += 8) {
    const long long gr = r0 + i, gc = c0 + tx;
    if (gr >= rows || gc >= kp) continue;
    if (raw) {
      out[gr * kp + gc] = tile[i][tx];
      continue;
    }
    unsigned big, small;
    tf32::split<MODE, SPLIT>(tile[i][tx], big, small);
    out[gr * kp + gc] = __uint_as_float(big);
    if (MODE == 3) out[plane + gr * kp + gc] = __uint_as_float(small);
  }
}

// op(A) of one K tile as the wgmmas of a consumer warpgroup take it: big(i, k) and small(i, k) are the
// TF32 parts of its m64 slice i at k step k. Packed: descriptors of the big and small planes in
// shared memory.
struct SharedA {
  const float* a;  // this warpgroup's rows of the stage's A tile
  __device__ unsigned long long big(int i, int k) const { return hopper::kmajor_swizzled_desc<SW>(a + i * 64 * BK + k); }
  __device__ unsigned long long small(int i, int k) const {
    return hopper::kmajor_swizzled_desc<SW>(a + A_PLANE + i * 64 * BK + k);
  }
};
// As loaded (FP32): each thread reads the values of its fragments (the layout of wgmma's A in
// registers) and splits them as the pre-pass would. The reads of one warp cover 8 rows x 4 columns:
// with the tile's swizzle (a row's 16-byte chunks permuted by the row's place among 8) those are
// 32 different banks.
struct RegisterA {
  using Fragment = unsigned[4];
  Fragment hi[MW][BK / 8], lo[MW][BK / 8];
  __device__ void load(const float* a, int warp, int lane) {
#pragma unroll
    for (int i = 0; i < MW; ++i)
#pragma unroll
      for (int k = 0; k < BK / 8; ++k)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int r = i * 64 + warp * 16 + lane / 4 + (e & 1) * 8, c = k * 8 + lane % 4 + (e >> 1) * 4;
          tf32::split<3, SPLIT>(hopper::swizzled_at<SW>(a, r, c), hi[i][k][e], lo[i][k][e]);
        }
  }
  __device__ const Fragment& big(int i, int k) const { return hi[i][k / 8]; }
  __device__ const Fragment& small(int i, int k) const { return lo[i][k / 8]; }
};

// The products of one k step and m64 slice: big·big, or the two corrections (small·big, big·small);
// the first writes d when !accumulate.
template <int R, class A>
__device__ inline void big_product(float (&d)[R], const A& a, int i, int k, const float* b, int accumulate) {
  hopper::wgmma_tf32(d, a.big(i, k), hopper::kmajor_swizzled_desc<SW>(b + k), accumulate);
}
template <int R, class A>
__device__ inline void corrections(float (&d)[R], const A& a, int i, int k, const float* b, int accumulate) {
  using namespace hopper;
  wgmma_tf32(d, a.small(i, k), kmajor_swizzled_desc<SW>(b + k), accumulate);
  wgmma_tf32(d, a.big(i, k), kmajor_swizzled_desc<SW>(b + B_PLANE + k), 1);
}

// The compiler does not know that wgmma writes its registers after the instruction issues: an empty
// asm that "modifies" each one keeps reads from moving above the wait and writes below the issue.
template <int R>
__device__ inline void fence_operands(float (&d)[MW][R]) {
#pragma unroll
  for (int i = 0; i < MW; ++i)
#pragma unroll
    for (int j = 0; j < R; ++j) asm volatile("" : "+f"(d[i][j])::"memory");
}

// Adds a fragment of FN columns to the accumulator's columns from slice·FN on (the fragment layout
// keeps each group of 8 columns in 4 consecutive registers).
__device__ inline void add(float (&acc)[MW][BN / 2], const float (&d)[MW][FN / 2], int slice) {
#pragma unroll
  for (int i = 0; i < MW; ++i)
#pragma unroll
    for (int j = 0; j < FN / 2; ++j) acc[i][slice * FN / 2 + j] += d[i][j];
}

// The same with compensation (Kahan): comp holds what the rounding of acc lost, to be taken back
// from the next addend and, once the tile is done, from acc (finish).
__device__ inline void add_compensated(float (&acc)[MW][BN / 2], float (&comp)[MW][BN / 2], const float (&d)[MW][FN / 2],
                                       int slice) {
#pragma unroll
  for (int i = 0; i < MW; ++i)
#pragma unroll
    for (int j = 0; j < FN / 2; ++j) {
      float& s = acc[i][slice * FN / 2 + j];
      float& c = comp[i][slice * FN / 2 + j];
      const float y = d[i][j] - c, t = s + y;
      c = (t - s) - y;
      s = t;
    }
}

// The products of k step k for FN columns of B starting at b: ORDER 1 big·big first, else the
// corrections first; the first overwrites d when fresh.
template <int R, class A>
__device__ inline void step(float (&d)[MW][R], const A& a, const float* b, int k, bool fresh) {
#pragma unroll
  for (int i = 0; i < MW; ++i) {
    if (MODE == 1) {
      big_product(d[i], a, i, k, b, !fresh);
    } else if (ORDER == 1) {
      big_product(d[i], a, i, k, b, !fresh);
      corrections(d[i], a, i, k, b, 1);
    } else {
      corrections(d[i], a, i, k, b, !fresh);
      big_product(d[i], a, i, k, b, 1);
    }
  }
}

// The products of `steps` k steps from k0: step by step, or (ORDER 2) every correction, then every
// big·big. The tensor cores truncate each sum to the running partial's precision, so a tiny
// correction added to a large partial still costs up to one unit of it: ORDER 2 adds the
// corrections while the partial is small, leaving one large-partial addition per k step instead of 3.
template <int R, class A>
__device__ inline void issue(float (&d)[MW][R], const A& a, const float* b, int k0, int steps, bool fresh) {
  if (MODE == 3 && ORDER == 2) {
#pragma unroll
    for (int k = k0; k < k0 + 8 * steps; k += 8)
#pragma unroll
      for (int i = 0; i < MW; ++i) corrections(d[i], a, i, k, b, !(fresh && k == k0));
#pragma unroll
    for (int k = k0; k < k0 + 8 * steps; k += 8)
#pragma unroll
      for (int i = 0; i < MW; ++i) big_product(d[i], a, i, k, b, 1);
  } else {
#pragma unroll
    for (int k = k0; k < k0 + 8 * steps; k += 8) step(d, a, b, k, fresh && k == k0);
  }
}

// PINGPONG (kstep, two consumers): the warpgroups take turns issuing their wgmma groups (named
// barriers 2 and 3; FlashAttention-3's warp-scheduler barriers), so that one adds its fragment while
// the other's wgmmas hold the tensor cores, where issuing together they would finish together and
// add together, the tensor cores idle meanwhile. Warpgroup 1 hands the first turn to 0 and 0 takes
// the last hand-over back at the end: the barriers' counts match however many units a block runs.
struct Turns {
  int wg;
  __device__ void begin() const {
    if (PINGPONG && wg == 1) hopper::named_arrive(2, 256);
  }
  __device__ void take() const {
    if (PINGPONG) hopper::named_sync(2 + wg, 256);
  }
  __device__ void pass() const {
    if (PINGPONG) hopper::named_arrive(3 - wg, 256);
  }
  __device__ void end() const {
    if (PINGPONG && wg == 0) hopper::named_sync(2, 256);
  }
};

// A consumer warp is done with a slot. A read with LDS (A_REGS) is a generic-proxy access: only this
// fence orders it before the producer's next TMA write into the slot (hopper-simt's race, perf-log 21).
__device__ inline void retire(int slot, int lane, unsigned long long* empty) {
  if (A_REGS) hopper::fence_proxy_async_shared();
  hopper::release_slot<CLUSTER>(slot, lane, empty);
}

extern "C" __global__ void __launch_bounds__(NT, 1)
    gemm_wgmma(const __grid_constant__ GemmArgs g, const __grid_constant__ TensorMaps maps) {
  follow_previous_grid();
  using namespace hopper;
  extern __shared__ unsigned char smem_raw[];
  __shared__ bool last_split;
  float* smem = reinterpret_cast<float*>(align_1024(smem_raw));
  unsigned long long* full = reinterpret_cast<unsigned long long*>(smem + STAGES * STAGE);
  unsigned long long* empty = full + STAGES;
  const int wg = threadIdx.x / 128, warp = threadIdx.x / 32 % 4, lane = threadIdx.x % 32;

  if (threadIdx.x == 0) init_pipeline(full, empty, STAGES, 4 * CONSUMERS * CLUSTER);
  // With clusters, no block may signal another's barriers before that block initialised them.
  if (CLUSTER > 1) cluster_sync();
  else __syncthreads();

  // The blocks of a cluster take vertically adjacent tiles (tile row CLUSTER·u + rank), which share
  // their B tile: each block loads 1/CLUSTER of it and multicasts that part to all of them. The
  // grid's z dimension is the split tail's ways (no clusters then), or TAIL_STREAM streams the tail
  // (split_tail.cuh): every block of the grid is one worker of the schedule.
  const long long tiles_m = (g.m + BM - 1) / BM, tiles_n = (g.n + BN - 1) / BN;
  const long long units_m = (tiles_m + CLUSTER - 1) / CLUSTER;
  const long long workers = (long long)gridDim.x / CLUSTER * gridDim.z;
  const long long worker = (long long)blockIdx.z * (gridDim.x / CLUSTER) + blockIdx.x / CLUSTER;
  const tail::Schedule plan =
      tail::schedule(units_m * tiles_n, workers, gridDim.z, int((g.k + BK - 1) / BK), TAIL_STREAM);
  const int rank = CLUSTER > 1 ? int(cluster_rank()) : 0;
  auto coords = [&](long long u, long long& tm, long long& tn) {
    long long um;
    tail::banded_tile(u, units_m, tiles_n, GROUP, um, tn);
    tm = um * CLUSTER + rank;
  };

  if (wg == CONSUMERS) {  // producer
    if (CONSUMERS == 2) regs_dealloc<PRODUCER_REGS>();
    if (threadIdx.x % 128 == 0) {
      int round_slot = 0;  // k tiles issued so far, over all of this block's tiles
      for (long long u = worker; u < plan.units(); u += workers) {
        const tail::Unit w = plan.unit(u);
        if (w.tile < 0) continue;  // past the end of this block's share of the stream
        long long tm, tn;
        coords(w.tile, tm, tn);
        for (int kt = w.k0; kt < w.k1; ++kt, ++round_slot) {
          const int s = round_slot % STAGES;
          mbar_wait(&empty[s], ((round_slot / STAGES) & 1) ^ 1);
          mbar_expect_bytes(&full[s], STAGE_BYTES);
          float* a = smem + s * STAGE;
          float* b = a + A_PARTS * A_PLANE;
          for (int p = 0; p < A_PARTS; ++p) tma_load_3d(a + p * A_PLANE, &maps.a, kt * BK, int(tm * BM), p, &full[s]);
          for (int p = 0; p < PARTS; ++p) {
            if (CLUSTER == 1)
              tma_load_3d(b + p * B_PLANE, &maps.b, kt * BK, int(tn * BN), p, &full[s]);
            else
              tma_load_3d_multicast(b + p * B_PLANE + rank * (BN / CLUSTER) * BK, &maps.b, kt * BK,
                                    int(tn * BN + rank * (BN / CLUSTER)), p, &full[s], (1u << CLUSTER) - 1);
          }
        }
      }
    }
  } else {

    // Consumers. One wgmma group (a K tile's products) stays in flight while the previous one is
    // retired and its slot goes back to the producer.
    if (CONSUMERS == 2) regs_alloc<CONSUMER_REGS>();
    float acc[MW][BN / 2];
#if ACCUM == 0
    float tmp[MW][FN / 2];
#elif ACCUM == 2
    float frag[INFLIGHT][MW][FN / 2], comp[MW][BN / 2];
#if COMPENSATE
    float part[MW][FN / 2];
#endif
#endif
    int round_slot = 0;
    const Turns turns{wg};
    turns.begin();
    for (long long u = worker; u < plan.units(); u += workers) {
      const tail::Unit w = plan.unit(u);
      if (w.tile < 0) continue;
      long long tm, tn;
      coords(w.tile, tm, tn);
#pragma unroll
      for (int i = 0; i < MW; ++i)
#pragma unroll
        for (int j = 0; j < BN / 2; ++j) {
          acc[i][j] = 0.0f;
#if ACCUM == 2
          comp[i][j] = 0.0f;
#endif
        }
      int held = -1;  // the slot the group in flight reads
      for (int kt = w.k0; kt < w.k1; ++kt, ++round_slot) {
        const int s = round_slot % STAGES;
        mbar_wait(&full[s], (round_slot / STAGES) & 1);
        const float* b = smem + s * STAGE + A_PARTS * A_PLANE;
#if A_REGS
        RegisterA a;
        a.load(smem + s * STAGE + wg * WG_M * BK, warp, lane);
#else
        const SharedA a{smem + s * STAGE + wg * WG_M * BK};
#endif
#if ACCUM == 0
        // The fragment restarts every FLUSH K tiles and is added to the accumulator then. That read
        // waits for every wgmma (wait<0>): ptxas serialises all wgmmas of a kernel that reads one's
        // registers while another runs (C7514); the other consumer warpgroup keeps the tensor cores
        // busy. With SLICES > 1 the fragment covers BN / SLICES columns, one slice after the other.
        const int done = kt - w.k0;
        const bool fresh = done % FLUSH == 0, flush = (done + 1) % FLUSH == 0 || kt + 1 == w.k1;
#pragma unroll
        for (int h = 0; h < SLICES; ++h) {
          fence_operands(tmp);
          wgmma_fence();
          issue(tmp, a, b + h * FN * BK, 0, BK / 8, fresh);
          wgmma_commit();
          if (flush) {
            wgmma_wait<0>();
            fence_operands(tmp);
            add(acc, tmp, h);
          }
        }
#elif ACCUM == 2
        // A fresh fragment per FRAG_STEPS k steps; a slice's fragments summed in order in FP32 (part) over
        // COMPENSATE K tiles, then part added to acc with compensation (with COMPENSATE > 1, SLICES is
        // 1 and part spans the tile's width); COMPENSATE 0: every fragment added to acc with
        // compensation, no part (its registers let 128x128 run m64n128 wgmmas, slices=1).
        // Reading a fragment waits for its wgmmas: with INFLIGHT > 1
        // fragment j's wgmmas are issued before fragment j - INFLIGHT + 1 is added (wait<INFLIGHT - 1>),
        // so that the addition runs beside the tensor cores instead of between their groups; the sums,
        // and so the result, are the same bit for bit.
        const bool flush = true;
        constexpr int FRAGS = BK / 8 / FRAG_STEPS, GROUPS = SLICES * FRAGS;  // per slice, per K tile
#if COMPENSATE
        const int into = kt - w.k0;
        const bool opens = into % COMPENSATE == 0, closes = (into + 1) % COMPENSATE == 0 || kt + 1 == w.k1;
#endif
#pragma unroll
        for (int j = 0; j < GROUPS + INFLIGHT - 1; ++j) {
          if (j < GROUPS) {
            turns.take();
            fence_operands(frag[j % INFLIGHT]);
            wgmma_fence();
            issue(frag[j % INFLIGHT], a, b + j / FRAGS * FN * BK, j % FRAGS * 8 * FRAG_STEPS, FRAG_STEPS, true);
            wgmma_commit();
            turns.pass();
          }
          const int done = j - (INFLIGHT - 1);  // the fragment added now
          if (done < 0) continue;
          if (j < GROUPS) wgmma_wait<INFLIGHT - 1>();
          else wgmma_wait<0>();
          const auto& f = frag[done % INFLIGHT];
          fence_operands(frag[done % INFLIGHT]);
#if COMPENSATE
          const bool first = done % FRAGS == 0 && opens;
#pragma unroll
          for (int i = 0; i < MW; ++i)
#pragma unroll
            for (int c = 0; c < FN / 2; ++c) part[i][c] = first ? f[i][c] : part[i][c] + f[i][c];
          if (done % FRAGS == FRAGS - 1 && closes) add_compensated(acc, comp, part, done / FRAGS);
#else
          add_compensated(acc, comp, f, done / FRAGS);
#endif
        }
#else
        const bool flush = false;
        fence_operands(acc);
        wgmma_fence();
        issue(acc, a, b, 0, BK / 8, false);
        wgmma_commit();
#endif
        if (flush) {  // every group is done
          if (held >= 0) retire(held, lane, empty);
          retire(s, lane, empty);
          held = -1;
        } else {
          wgmma_wait<1>();  // the previous K tile's group is done: its slot goes back
          if (held >= 0) retire(held, lane, empty);
          held = s;
        }
      }
#if ACCUM == 1
      wgmma_wait<0>();
      if (held >= 0) retire(held, lane, empty);  // a split of no K tiles issued nothing
      fence_operands(acc);
#elif ACCUM == 2
#pragma unroll
      for (int i = 0; i < MW; ++i)
#pragma unroll
        for (int j = 0; j < BN / 2; ++j) acc[i][j] -= comp[i][j];
#endif
      const long long r0 = tm * BM + wg * WG_M, c0 = tn * BN;
      // With beta, a quad's four old values of C are read before any is written, so that no load
      // waits for a store that may alias it (perf-log 65); not in the transposed product, whose
      // binary with the beta branch ran 5 % slower at beta = 0. The branches' order moves ptxas's
      // schedule of split tiles: with beta = 0's branch first pad-1000 (beta 0.25, split 2) ran 22 %
      // faster, but 1023³ and 1025³ (beta 0, split 2 and 6) 20-25 % slower; in this order neither
      // moved. Measured over the whole corpus this order is the better (perf-log 68).
      auto store_tile = [&] {
#if !TRANSPOSED
        if (g.beta != 0.0f) {
          each_quad(acc, r0, c0, warp, lane, [&](long long r, long long c, const float* v) {
            const float old[4] = {gl::old_c(g, r, c), gl::old_c(g, r, c + 1), gl::old_c(g, r + 8, c),
                                  gl::old_c(g, r + 8, c + 1)};
            gl::store_c_split_old<MODE>(g, r, c, v[0], old[0]);
            gl::store_c_split_old<MODE>(g, r, c + 1, v[1], old[1]);
            gl::store_c_split_old<MODE>(g, r + 8, c, v[2], old[2]);
            gl::store_c_split_old<MODE>(g, r + 8, c + 1, v[3], old[3]);
          });
          return;
        }
#endif
        each_element(acc, r0, c0, warp, lane,
                     [&](long long r, long long c, float v) { gl::store_c_split<MODE>(g, r, c, v); });
      };
      if (w.split < 0) {
        store_tile();
        continue;
      }
      // A split of the tail: its partial sums go to the workspace; the tile's last split to arrive
      // adds them and stores the tile.
      tail::store_partial(g.workspace, w.first + w.split, threadIdx.x, 128 * CONSUMERS, acc);
      if (!tail::last_arrival(g.counters + w.tile, w.parts, 128 * CONSUMERS, &last_split)) continue;
      tail::add_partials(g.workspace, w.first, w.parts, threadIdx.x, 128 * CONSUMERS, acc);
      store_tile();
      if (threadIdx.x == 0) g.counters[w.tile] = 0;
    }
    turns.end();
  }  // consumers
  // No block leaves while another may still write into its shared memory or arrive on its barriers.
  if (CLUSTER > 1) cluster_sync();
}
