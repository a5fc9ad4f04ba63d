// gemmlab's metrics: what each reads from the hardware counters (Nsight Compute names, Hopper and
// earlier since Volta), and the nvprof metric each replaces. docs/counters.md has the table.
#include <algorithm>
#include <set>
#include <sstream>

#include "counters/counters.hpp"
#include "gemmlab/error.hpp"

namespace gemmlab {

namespace {

std::optional<double> ratio(double num, double den, double scale = 1) {
  if (den == 0) return std::nullopt;
  return scale * num / den;
}

MetricDef counter(std::string key, std::string nvprof, std::string unit, std::string help, std::string name) {
  return {std::move(key), std::move(nvprof), std::move(unit), std::move(help), {std::move(name)}};
}

// Warp-state reasons since Volta, with the nvprof stall metric each (roughly) replaces.
const std::vector<std::pair<std::string, std::string>> kStallReasons = {
    {"long_scoreboard", "stall_memory_dependency"}, {"barrier", "stall_sync"},
    {"short_scoreboard", ""},                       {"mio_throttle", "stall_memory_throttle"},
    {"lg_throttle", "stall_memory_throttle"},        {"math_pipe_throttle", "stall_pipe_busy"},
    {"wait", "stall_exec_dependency"},               {"not_selected", "stall_not_selected"},
    {"selected", ""},                                {"no_instruction", "stall_inst_fetch"},
    {"dispatch_stall", "stall_other"},               {"drain", ""},
    {"membar", ""},                                  {"branch_resolving", ""},
    {"imc_miss", "stall_constant_memory_dependency"}, {"tex_throttle", "stall_texture"},
    {"sleeping", ""},                                {"misc", "stall_other"}};

std::string stall_counter(const std::string& reason) {
  return "smsp__warp_issue_stalled_" + reason + "_per_warp_active.pct";
}

std::vector<MetricDef> build_defs() {
  std::vector<MetricDef> d;
  d.push_back({"time", "", "ms", "kernel duration under the profiler", {"gpu__time_duration.sum"},
               [](const CounterValues& r) -> std::optional<double> { return r.at("gpu__time_duration.sum") * 1e-6; }});
  // Registers are no counter: they come from the launch record.
  d.push_back({"registers", "Regs", "regs", "registers per thread (launch record)", {}});
  d.push_back(counter("global_load_inst", "global_load (inst_executed_global_loads)", "inst",
                      "global load instructions executed, per warp", "smsp__inst_executed_op_global_ld.sum"));
  d.push_back(counter("global_load_requests", "gld_requests", "requests", "global load requests to L1",
                      "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"));
  d.push_back(counter("global_load_sectors", "gld_transactions", "sectors", "32-byte sectors global loads touched",
                      "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"));
  d.push_back(counter("global_async_inst", "", "inst", "cp.async (LDGSTS) instructions executed, per warp",
                      "smsp__inst_executed_op_ldgsts.sum"));
  // cuBLAS on Hopper loads its tiles with cp.async (LDGSTS), not LDG: Table I compares both kinds.
  d.push_back({"global_load_all_inst", "", "inst", "global loads of both kinds (LDG + LDGSTS), per warp",
               {"smsp__inst_executed_op_global_ld.sum", "smsp__inst_executed_op_ldgsts.sum"},
               [](const CounterValues& r) -> std::optional<double> {
                 return r.at("smsp__inst_executed_op_global_ld.sum") + r.at("smsp__inst_executed_op_ldgsts.sum");
               }});
  d.push_back(counter("global_store_inst", "inst_executed_global_stores", "inst",
                      "global store instructions executed, per warp", "smsp__inst_executed_op_global_st.sum"));
  d.push_back(counter("shared_load_inst", "shared_load (inst_executed_shared_loads)", "inst",
                      "shared load instructions executed, per warp", "smsp__inst_executed_op_shared_ld.sum"));
  d.push_back(counter("shared_store_inst", "inst_executed_shared_stores", "inst",
                      "shared store instructions executed, per warp", "smsp__inst_executed_op_shared_st.sum"));
  d.push_back(counter("shared_load_wavefronts", "shared_load_transactions", "wavefronts",
                      "shared-memory data-path passes of the loads", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"));
  d.push_back(counter("shared_store_wavefronts", "shared_store_transactions", "wavefronts",
                      "shared-memory data-path passes of the stores",
                      "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"));
  d.push_back(counter("shared_load_bank_conflicts", "shared_ld_bank_conflict", "wavefronts",
                      "extra load wavefronts caused by bank conflicts",
                      "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"));
  d.push_back(counter("shared_store_bank_conflicts", "shared_st_bank_conflict", "wavefronts",
                      "extra store wavefronts caused by bank conflicts",
                      "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"));
  // nvprof's ratio of requested to required shared throughput; without SASS metrics, the share of
  // wavefronts that were not bank-conflict replays.
  d.push_back({"shared_efficiency", "shared_efficiency", "%",
               "wavefronts that were not bank-conflict replays (loads and stores)",
               {"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
                "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
                "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
                "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"},
               [](const CounterValues& r) {
                 double w = r.at("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum") +
                            r.at("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum");
                 double c = r.at("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum") +
                            r.at("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum");
                 return ratio(std::max(0.0, w - c), w, 100);
               }});
  d.push_back(counter("achieved_occupancy", "achieved_occupancy (x100)", "%",
                      "active warps per active cycle, % of the SM's maximum",
                      "sm__warps_active.avg.pct_of_peak_sustained_active"));
  for (auto& [reason, nvprof] : kStallReasons)
    d.push_back(counter("stall_" + reason, nvprof, "%", "cycles warps were stalled on " + reason + ", % of active warp cycles",
                        stall_counter(reason)));
  d.push_back(counter("dram_read_bytes", "dram_read_bytes", "bytes", "bytes read from DRAM", "dram__bytes_read.sum"));
  d.push_back(counter("dram_write_bytes", "dram_write_bytes", "bytes", "bytes written to DRAM", "dram__bytes_write.sum"));
  d.push_back({"dram_bandwidth", "dram_read_throughput + dram_write_throughput", "GB/s",
               "DRAM bytes read and written per second of the kernel",
               {"dram__bytes_read.sum", "dram__bytes_write.sum", "gpu__time_duration.sum"},
               [](const CounterValues& r) {
                 return ratio(r.at("dram__bytes_read.sum") + r.at("dram__bytes_write.sum"),
                              r.at("gpu__time_duration.sum"));  // bytes per ns = GB/s
               }});
  d.push_back(counter("dram_throughput_pct", "dram_utilization", "%", "DRAM throughput, % of its peak",
                      "dram__throughput.avg.pct_of_peak_sustained_elapsed"));
  d.push_back(counter("l1_hit_rate", "global_hit_rate", "%", "L1 sector hit rate", "l1tex__t_sector_hit_rate.pct"));
  d.push_back(counter("l2_hit_rate", "l2_tex_hit_rate", "%", "L2 sector hit rate", "lts__t_sector_hit_rate.pct"));
  d.push_back(counter("l1_bytes", "", "bytes", "bytes through L1's tag stage (global and local)", "l1tex__t_bytes.sum"));
  d.push_back(counter("l2_bytes", "", "bytes", "bytes through L2's tag stage", "lts__t_bytes.sum"));
  d.push_back({"shared_bytes", "", "bytes", "shared-memory wavefronts x 128 bytes",
               {"l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"},
               [](const CounterValues& r) -> std::optional<double> {
                 return 128 * r.at("l1tex__data_pipe_lsu_wavefronts_mem_shared.sum");
               }});
  d.push_back(counter("ffma", "flop_count_sp_fma", "thread inst", "FFMA executed by threads (SASS metric)",
                      "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"));
  d.push_back(counter("fadd", "flop_count_sp_add", "thread inst", "FADD executed by threads (SASS metric)",
                      "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum"));
  d.push_back(counter("fmul", "flop_count_sp_mul", "thread inst", "FMUL executed by threads (SASS metric)",
                      "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum"));
  d.push_back({"fp32_flops", "flop_count_sp", "flop", "2 x FFMA + FADD + FMUL",
               {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
                "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum",
                "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum"},
               [](const CounterValues& r) -> std::optional<double> {
                 return 2 * r.at("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum") +
                        r.at("smsp__sass_thread_inst_executed_op_fadd_pred_on.sum") +
                        r.at("smsp__sass_thread_inst_executed_op_fmul_pred_on.sum");
               }});
  d.push_back(counter("fma_pipe_pct", "single_precision_fu_utilization", "%",
                      "FMA pipe (FFMA, FMUL, FADD, IMAD) busy, % of peak", "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active"));
  d.push_back(counter("issue_slot_pct", "issue_slot_utilization", "%", "cycles an instruction issued, % of active cycles",
                      "smsp__issue_active.avg.pct_of_peak_sustained_active"));
  d.push_back(counter("inst_executed", "inst_executed", "inst", "warp instructions executed", "smsp__inst_executed.sum"));
  return d;
}

std::vector<std::string> keys_with_prefix(const std::vector<MetricDef>& defs, const std::string& prefix) {
  std::vector<std::string> out;
  for (auto& d : defs)
    if (d.key.rfind(prefix, 0) == 0) out.push_back(d.key);
  return out;
}

std::vector<MetricSet> build_sets(const std::vector<MetricDef>& defs) {
  std::vector<MetricSet> s;
  s.push_back({"seed000", "seed 000's Table I: registers, global and shared loads, shared efficiency, occupancy, memory stalls",
               {"time", "registers", "global_load_inst", "global_async_inst", "global_load_all_inst", "shared_load_inst",
                "shared_efficiency", "achieved_occupancy", "stall_long_scoreboard"}});
  s.push_back({"memory", "global, shared, L1, L2 and DRAM traffic",
               {"global_load_inst", "global_load_requests", "global_load_sectors", "global_async_inst", "global_store_inst",
                "shared_load_inst", "shared_store_inst", "shared_load_wavefronts", "shared_store_wavefronts",
                "shared_load_bank_conflicts", "shared_store_bank_conflicts", "shared_efficiency", "l1_hit_rate",
                "l2_hit_rate", "dram_read_bytes", "dram_write_bytes", "dram_bandwidth", "dram_throughput_pct"}});
  s.push_back({"compute", "FP32 instructions, pipe and issue-slot use, occupancy",
               {"time", "ffma", "fadd", "fmul", "fp32_flops", "fma_pipe_pct", "issue_slot_pct", "inst_executed",
                "achieved_occupancy"}});
  s.push_back({"stalls", "the warp-stall breakdown, % of active warp cycles", keys_with_prefix(defs, "stall_")});
  s.push_back({"roofline", "bytes at each level and FLOPs, for the hierarchical roofline",
               {"time", "fp32_flops", "dram_read_bytes", "dram_write_bytes", "l2_bytes", "l1_bytes", "shared_bytes"}});
  MetricSet all{"all", "every metric gemmlab defines", {}};
  for (auto& d : defs) all.keys.push_back(d.key);
  s.push_back(all);
  return s;
}

}  // namespace

std::optional<double> MetricDef::value(const CounterValues& raw) const {
  if (counters.empty()) return std::nullopt;
  for (auto& c : counters)
    if (!raw.count(c)) return std::nullopt;
  if (derive) return derive(raw);
  return raw.at(counters.front());
}

const std::vector<MetricDef>& metric_defs() {
  static const std::vector<MetricDef> d = build_defs();
  return d;
}

const std::vector<MetricSet>& metric_sets() {
  static const std::vector<MetricSet> s = build_sets(metric_defs());
  return s;
}

const MetricDef* find_metric(const std::string& key) {
  for (auto& d : metric_defs())
    if (d.key == key) return &d;
  return nullptr;
}

std::vector<MetricDef> parse_metrics(const std::string& text) {
  std::vector<MetricDef> out;
  std::set<std::string> seen;
  auto add = [&](const MetricDef& d) {
    if (seen.insert(d.key).second) out.push_back(d);
  };
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (item.empty()) continue;
    auto set = std::find_if(metric_sets().begin(), metric_sets().end(), [&](auto& s) { return s.name == item; });
    if (set != metric_sets().end()) {
      for (auto& k : set->keys) add(*find_metric(k));
    } else if (auto* d = find_metric(item)) {
      add(*d);
    } else if (item.find("__") != std::string::npos && item.find_first_of(" ;\"'") == std::string::npos) {
      add(counter(item, "", "", "raw counter", item));
    } else {
      std::string names;
      for (auto& s : metric_sets()) names += (names.empty() ? "" : ", ") + s.name;
      throw UsageError("unknown metric or metric set '" + item + "' (sets: " + names +
                       "; or a gemmlab metric, or an Nsight Compute name such as dram__bytes_read.sum)");
    }
  }
  if (out.empty()) throw UsageError("no metrics named");
  return out;
}

std::vector<std::string> raw_counters(const std::vector<MetricDef>& defs) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (auto& d : defs)
    for (auto& c : d.counters)
      if (seen.insert(c).second) out.push_back(c);
  return out;
}

nlohmann::ordered_json evaluate(const std::vector<MetricDef>& defs, const KernelCounters& k) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (auto& d : defs) {
    std::optional<double> v = d.key == "registers" && k.launch ? std::optional<double>(k.launch->registers)
                                                               : d.value(k.raw);
    j[d.key] = v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
  }
  return j;
}

const KernelCounters* main_kernel(const ProfileOutcome& o) {
  const KernelCounters* best = nullptr;
  double longest = -1;
  for (auto& k : o.kernels) {
    auto it = k.raw.find("gpu__time_duration.sum");
    double t = it == k.raw.end() ? 0 : it->second;
    if (t > longest) longest = t, best = &k;
  }
  return best;
}

}  // namespace gemmlab
