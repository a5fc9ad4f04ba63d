#include "gemmlab/family.hpp"

namespace gemmlab {

const KernelFamily& naive_family();
const KernelFamily& coalesced_family();
const KernelFamily& smem_tiled_family();
const KernelFamily& regblock1d_family();
const KernelFamily& regblock2d_family();
const KernelFamily& vectorized_family();
const KernelFamily& pipelined_family();
const KernelFamily& warptiled_family();

const std::vector<const KernelFamily*>& families() {
  // Adding a family: its folder under src/kernels/ and one line here.
  static const std::vector<const KernelFamily*> all = {
      &naive_family(),      &coalesced_family(),  &smem_tiled_family(), &regblock1d_family(),
      &regblock2d_family(), &vectorized_family(), &pipelined_family(),  &warptiled_family()};
  return all;
}

const KernelFamily* find_family(const std::string& name) {
  for (auto* f : families())
    if (f->name() == name) return f;
  return nullptr;
}

}  // namespace gemmlab
