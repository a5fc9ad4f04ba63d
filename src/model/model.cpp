#include "model/model.hpp"

#include <algorithm>
#include <regex>
#include <sstream>

#include "launch/launcher.hpp"

namespace gemmlab {

namespace {

// Allocation rules of sm_80 and sm_90 (CUDA occupancy calculator): registers per warp in units
// of 256, shared memory in units of 128 bytes plus 1 KB the system reserves per block.
constexpr int kRegUnit = 256;
constexpr long long kSmemUnit = 128, kSmemReserved = 1024;

double per(double num, double den) { return den > 0 ? num / den : 0; }

}  // namespace

DeviceLimits DeviceLimits::of(const DeviceInfo& d) {
  return {d.name, d.sms, d.regs_per_sm, d.max_threads_per_sm, d.arch() >= 80 ? 32 : 16, (long long)d.smem_per_sm};
}

DeviceLimits DeviceLimits::h100() { return {"H100 SXM (assumed: no GPU)", 132, 65536, 2048, 32, 233472}; }

Resources resources_from_log(const std::string& log, const std::string& entry) {
  Resources r;
  // ptxas prints "Compiling entry function 'NAME' for 'sm_90'", then "Used N registers, ... M bytes smem".
  std::istringstream in(log);
  std::string line;
  bool ours = false;
  static const std::regex regs(R"(Used (\d+) registers)"), smem(R"((\d+) bytes smem)");
  while (std::getline(in, line)) {
    if (line.find("entry function") != std::string::npos) ours = line.find("'" + entry + "'") != std::string::npos;
    std::smatch m;
    if (ours && std::regex_search(line, m, regs)) {
      r.registers = std::stoi(m[1]);
      if (std::regex_search(line, m, smem)) r.static_smem = std::stoll(m[1]);
      ours = false;
    }
  }
  return r;
}

int resident_blocks(const DeviceLimits& dev, int threads, int registers, long long smem, std::string* limit) {
  const int warps = (threads + 31) / 32;
  std::vector<std::pair<int, std::string>> caps = {{dev.max_blocks_per_sm, "blocks"},
                                                    {dev.max_threads_per_sm / 32 / warps, "threads"}};
  if (registers > 0) {
    const int per_warp = (registers * 32 + kRegUnit - 1) / kRegUnit * kRegUnit;
    caps.push_back({dev.regs_per_sm / per_warp / warps, "registers"});
  }
  const long long per_block = (smem + kSmemReserved + kSmemUnit - 1) / kSmemUnit * kSmemUnit;
  caps.push_back({int(dev.smem_per_sm / per_block), "shared memory"});
  auto best = *std::min_element(caps.begin(), caps.end(), [](auto& a, auto& b) { return a.first < b.first; });
  if (limit) *limit = best.second;
  return best.first;
}

Prediction predict(const KernelFamily& f, const ParamValues& v, const Problem& p, const DeviceLimits& dev,
                   const Resources& res) {
  Prediction out;
  const Problem c = family_problem(f, v, p);
  out.counts = f.model(v, c, aligned_variant(f, v, p));
  out.flops = flops(p);
  out.dram_bytes = min_bytes(p);
  out.geometry = f.geometry(v, c);
  const int splits = f.splits(v, c, 0);
  out.geometry.grid.z = unsigned(splits);
  out.blocks = double(out.geometry.grid.x) * out.geometry.grid.y * out.geometry.grid.z;
  out.threads = int(out.geometry.block.x * out.geometry.block.y * out.geometry.block.z);
  out.registers = res.registers;
  out.shared_per_block = (long long)out.geometry.shared_bytes + res.static_smem;
  out.blocks_per_sm = resident_blocks(dev, out.threads, res.registers, out.shared_per_block, &out.occupancy_limit);
  out.occupancy = double(out.blocks_per_sm * ((out.threads + 31) / 32)) / (dev.max_threads_per_sm / 32.0);
  out.waves = per(out.blocks, double(out.blocks_per_sm) * dev.sms);
  auto& k = out.counts;
  out.intensity_dram = per(out.flops, out.dram_bytes);
  if (k.global_load_bytes >= 0) out.intensity_global = per(out.flops, k.global_load_bytes + std::max(0.0, k.global_store_bytes));
  if (k.shared_load_bytes > 0) out.intensity_shared = per(out.flops, k.shared_load_bytes);
  return out;
}

nlohmann::ordered_json Prediction::to_json() const {
  auto field = [](double x) { return x < 0 ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(x); };
  nlohmann::ordered_json j;
  j["global_load_inst"] = field(counts.global_load_inst);
  j["global_async_inst"] = field(counts.global_async_inst);
  j["tma_load_inst"] = field(counts.tma_load_inst);
  j["global_load_bytes"] = field(counts.global_load_bytes);
  j["global_store_inst"] = field(counts.global_store_inst);
  j["global_store_bytes"] = field(counts.global_store_bytes);
  j["shared_load_inst"] = field(counts.shared_load_inst);
  j["shared_store_inst"] = field(counts.shared_store_inst);
  j["shared_load_bytes"] = field(counts.shared_load_bytes);
  j["flops"] = flops;
  j["dram_bytes"] = dram_bytes;
  j["intensity_dram"] = intensity_dram;
  j["intensity_global"] = intensity_global;
  j["intensity_shared"] = intensity_shared;
  j["blocks"] = blocks;
  j["threads_per_block"] = threads;
  j["registers"] = registers < 0 ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(registers);
  j["shared_per_block"] = shared_per_block;
  j["blocks_per_sm"] = blocks_per_sm;
  j["occupancy_limit"] = occupancy_limit;
  j["theoretical_occupancy"] = occupancy;
  j["waves"] = waves;
  j["assumptions"] = counts.assumptions;
  return j;
}

}  // namespace gemmlab
