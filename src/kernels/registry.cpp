#include "kernels/family.hpp"

namespace gemmlab {

const KernelFamily& naive_family();
const KernelFamily& coalesced_family();
const KernelFamily& smem_tiled_family();
const KernelFamily& regblock1d_family();
const KernelFamily& regblock2d_family();
const KernelFamily& vectorized_family();
const KernelFamily& pipelined_family();
const KernelFamily& warptiled_family();
const KernelFamily& tf32_family();
const KernelFamily& dmma_family();
const KernelFamily& wgmma_family();
const KernelFamily& hopper_simt_family();
const KernelFamily& ozaki_family();
const KernelFamily& outer_family();
const KernelFamily& gemv_naive_family();
const KernelFamily& gemv_smem_family();
const KernelFamily& gemv_unrolled_family();
const KernelFamily& gemv_warp_family();
const KernelFamily& gemv_vectorized_family();
const KernelFamily& gemv_block_family();
const KernelFamily& gemv_columns_family();

const std::vector<const KernelFamily*>& families() {
  // Adding a family: its folder under src/kernels/ and one line here.
  static const std::vector<const KernelFamily*> all = {
      &naive_family(),      &coalesced_family(),  &smem_tiled_family(), &regblock1d_family(),
      &regblock2d_family(), &vectorized_family(), &pipelined_family(),  &warptiled_family(), &tf32_family(), &dmma_family(), &wgmma_family(), &hopper_simt_family(), &ozaki_family(), &outer_family(),
      &gemv_naive_family(), &gemv_smem_family(),  &gemv_unrolled_family(), &gemv_warp_family(),
      &gemv_vectorized_family(), &gemv_block_family(), &gemv_columns_family()};
  return all;
}

const KernelFamily* find_family(const std::string& name) {
  for (auto* f : families())
    if (f->name() == name) return f;
  return nullptr;
}

}  // namespace gemmlab
