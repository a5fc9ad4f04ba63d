#pragma once
// Hardware counters, read in-process with CUPTI's range profiler (one range per kernel, each
// kernel replayed by CUPTI as many times as its metrics need passes), and the named metric
// sets gemmlab reports: seed 000's, in today's Nsight Compute names, and more.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gemmlab {

// Raw metric values by Nsight Compute name ("dram__bytes_read.sum").
using CounterValues = std::map<std::string, double>;

// One figure gemmlab reports: read from one counter or derived from several.
struct MetricDef {
  std::string key;      // gemmlab's name, e.g. "global_load_inst"
  std::string nvprof;   // the old nvprof metric it replaces ("" when there was none)
  std::string unit;     // "inst", "bytes", "%", "sectors", "ms", ...
  std::string help;
  std::vector<std::string> counters;  // the raw metrics it reads; the first is its value unless derived
  // From the raw values (all of `counters` present); nullopt when it cannot be formed (a zero
  // denominator).
  std::function<std::optional<double>(const CounterValues&)> derive = nullptr;
  std::optional<double> value(const CounterValues& raw) const;
};

// The named sets: "seed000" (Table I), "memory", "compute", "stalls", "roofline", "all".
struct MetricSet {
  std::string name, help;
  std::vector<std::string> keys;
};
const std::vector<MetricSet>& metric_sets();
const std::vector<MetricDef>& metric_defs();
const MetricDef* find_metric(const std::string& key);

// "seed000,memory" or "global_load_inst,dram__bytes_read.sum": set names, gemmlab keys and raw
// Nsight Compute names (anything with "__"), in order, without repeats. Throws UsageError for an
// unknown name, with the list of sets.
std::vector<MetricDef> parse_metrics(const std::string& text);
// Every raw counter the definitions read, without repeats.
std::vector<std::string> raw_counters(const std::vector<MetricDef>& defs);

// A kernel's launch record (from CUPTI's activity API, or the loaded module for our own).
struct KernelLaunchInfo {
  std::string name;
  int registers = 0;
  int static_shared = 0, dynamic_shared = 0;
  int grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
  double duration_ms = 0;
};

// The counters of one kernel launch (one range).
struct KernelCounters {
  std::string name;     // the range's name: the kernel's function name
  CounterValues raw;    // every counter read
  std::optional<KernelLaunchInfo> launch;
};

// What one collection gave.
struct ProfileOutcome {
  std::vector<KernelCounters> kernels;  // one per kernel launched by the workload, in order
  std::vector<std::string> unavailable; // requested counters this GPU does not have
  int passes = 0;                       // replays CUPTI needed per kernel
  double seconds = 0;                   // wall time of the collection
};

// Profiles the kernels `workload` enqueues on the current device (it must finish its work before
// returning). The workload runs once per pass (user replay: it must give the same kernels each
// time); `before_pass`, when given, runs before each pass outside the profiled ranges (an L2
// flush, so that no pass sees the write-back of the one before). Throws CountersUnavailable with
// one line saying why when the profiler cannot run.
struct CountersUnavailable : std::runtime_error {
  using std::runtime_error::runtime_error;
};
ProfileOutcome profile_counters(const std::function<void()>& workload, const std::vector<std::string>& counters,
                                const std::function<void()>& before_pass = nullptr);
// The launch records (name, registers, shared memory, grid) of the kernels `workload` runs.
std::vector<KernelLaunchInfo> trace_launches(const std::function<void()>& workload);
// Base metric names this GPU's counters offer (for --list-metrics).
std::vector<std::string> available_metrics();

// The metrics of one kernel as gemmlab reports them: key → value, with the missing ones null
// ("registers" comes from the launch record).
nlohmann::ordered_json evaluate(const std::vector<MetricDef>& defs, const KernelCounters& k);
// The kernel that did the most work of a workload (longest gpu__time_duration, else the first).
const KernelCounters* main_kernel(const ProfileOutcome& o);

}  // namespace gemmlab
