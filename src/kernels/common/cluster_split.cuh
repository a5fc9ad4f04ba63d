// Split-K summed inside a thread-block cluster (Hopper, sm_90): the gridDim.z slices of one tile
// are one cluster (dimensions 1 x 1 x splits, at most 8 blocks, resident together by the
// hardware's guarantee). Each block leaves its partial sums in its own shared memory; after a
// cluster barrier each block adds a 1/splits share of the tile's elements from every block's
// shared memory, in split order, and stores them to C. The split's second kernel (gl::splitk_reduce),
// its launch and the partial sums' round trip through global memory are gone: on products of a few
// tiles split a few ways, those were a third of a 10-30 us call (perf-log 57, 138).
#pragma once
#include "gemm_tile.cuh"
#include "hopper.cuh"

namespace gl {

// The cluster's tile of partial sums in each block's shared memory: TILE_M rows of TILE_N + 2
// doubles (the 16 bytes over a row put a warp's eight fragment rows on different banks).
template <int TILE_M, int TILE_N>
struct ClusterSplitTile {
  static constexpr int kPitch = TILE_N + 2;
  static constexpr int kBytes = TILE_M * kPitch * 8;
};

// After the block's last K tile: C's tile (m0, n0) from the gridDim.z blocks of the cluster. Tile
// writes its sums with store_shared(double* tile, int pitch, int row0, int col0). `smem` holds
// ClusterSplitTile's bytes and is free once every warp is done with the operand ring.
template <int TILE_M, int TILE_N, int NT, class Tile>
__device__ inline void cluster_split_store(const GemmArgs& g, const Tile& t, float* smem, long long m0, long long n0,
                                           int row0, int col0) {
  using Layout = ClusterSplitTile<TILE_M, TILE_N>;
  double* tile = reinterpret_cast<double*>(smem);
  __syncthreads();  // every warp is done reading the operand ring
  t.store_shared(tile, Layout::kPitch, row0, col0);
  hopper::cluster_sync();  // every block's partial sums are written and visible to the cluster
  // Block z (its cluster rank) takes every splits-th run of NT elements: consecutive threads,
  // consecutive columns of C.
  const int splits = gridDim.z;
  for (int e = blockIdx.z * NT + threadIdx.x; e < TILE_M * TILE_N; e += splits * NT) {
    const int r = e / TILE_N, c = e % TILE_N;
    double sum = 0;
    for (int z = 0; z < splits; ++z) sum += hopper::ld_cluster_f64(tile + r * Layout::kPitch + c, z);
    store_c(g, m0 + r, n0 + c, partial_plane(sum, 0));
  }
  hopper::cluster_sync();  // no block leaves while another still reads its shared memory
}

}  // namespace gl
