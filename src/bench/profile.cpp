#include "bench/profile.hpp"

#include <cstdio>

namespace gemmlab {

namespace {

std::optional<double> number(const nlohmann::ordered_json& j, const std::string& key) {
  if (!j.contains(key) || !j[key].is_number()) return std::nullopt;
  return j[key].get<double>();
}

std::string format(std::optional<double> v) {
  if (!v) return "n/a";
  char buf[32];
  double a = std::abs(*v);
  if (a != 0 && (a >= 1e6 || a < 1e-2)) std::snprintf(buf, sizeof buf, "%.4g", *v);
  else std::snprintf(buf, sizeof buf, "%.2f", *v);
  return buf;
}

}  // namespace

nlohmann::ordered_json KernelProfile::to_json() const {
  nlohmann::ordered_json j;
  j["runner"] = runner;
  j["kernel"] = kernel;
  j["kernels_per_call"] = kernels;
  if (launch) {
    j["launch"] = {{"registers", launch->registers},
                   {"static_shared_bytes", launch->static_shared},
                   {"dynamic_shared_bytes", launch->dynamic_shared},
                   {"grid", {launch->grid[0], launch->grid[1], launch->grid[2]}},
                   {"block", {launch->block[0], launch->block[1], launch->block[2]}}};
  }
  j["metrics"] = metrics;
  j["raw"] = raw;
  j["passes"] = passes;
  j["collection_s"] = seconds;
  j["unavailable"] = unavailable;
  return j;
}

KernelProfile profile_runner(GemmRunner& r, ProblemSession& s, const std::vector<MetricDef>& defs) {
  KernelProfile kp;
  kp.runner = r.name();
  std::vector<KernelLaunchInfo> launches;
  s.run_alone(r, [&](auto& run, auto&) { launches = trace_launches(run); });
  ProfileOutcome out;
  s.run_alone(r, [&](auto& run, auto& flush) { out = profile_counters(run, raw_counters(defs), flush); });
  const KernelCounters* main = main_kernel(out);
  if (!main) throw CountersUnavailable("counters unavailable: " + r.name() + " launched no kernel");
  KernelCounters k = *main;
  size_t index = size_t(main - out.kernels.data());
  // Auto ranges are named by their index; the launch records, in the same order, name the kernel.
  if (launches.size() == out.kernels.size()) {
    k.launch = launches[index];
    k.name = launches[index].name;
  }
  kp.kernel = k.name;
  kp.launch = k.launch;
  kp.raw = k.raw;
  kp.metrics = evaluate(defs, k);
  kp.kernels = int(out.kernels.size());
  kp.passes = out.passes;
  kp.seconds = out.seconds;
  kp.unavailable = out.unavailable;
  return kp;
}

std::string attach_counters(Record& rec, GemmRunner& r, ProblemSession& s, const std::vector<MetricDef>& defs) {
  if (rec.status != "ok" || r.where() != Where::device) return {};
  try {
    auto kp = profile_runner(r, s, defs);
    rec.details["counters"] = {{"kernel", kp.kernel}, {"metrics", kp.metrics}, {"passes", kp.passes}};
    return {};
  } catch (const CountersUnavailable& e) {
    rec.details["counters_unavailable"] = e.what();
    return e.what();
  }
}

nlohmann::ordered_json comparison_json(const std::vector<MetricDef>& defs, const KernelProfile& ours,
                                       const KernelProfile* baseline) {
  auto rows = nlohmann::ordered_json::array();
  for (auto& d : defs) {
    nlohmann::ordered_json row;
    row["metric"] = d.key;
    row["nvprof"] = d.nvprof;
    row["unit"] = d.unit;
    auto a = number(ours.metrics, d.key);
    row["ours"] = a ? nlohmann::ordered_json(*a) : nlohmann::ordered_json(nullptr);
    if (baseline) {
      auto b = number(baseline->metrics, d.key);
      row["baseline"] = b ? nlohmann::ordered_json(*b) : nlohmann::ordered_json(nullptr);
      row["ratio"] = a && b && *b != 0 ? nlohmann::ordered_json(*a / *b) : nlohmann::ordered_json(nullptr);
    }
    rows.push_back(row);
  }
  return rows;
}

void print_comparison(std::ostream& os, const std::vector<MetricDef>& defs, const KernelProfile& ours,
                      const KernelProfile* baseline) {
  char line[256];
  std::snprintf(line, sizeof line, "%-28s %-10s %14s %14s %8s\n", "metric", "unit", "ours",
                baseline ? "baseline" : "", baseline ? "ratio" : "");
  os << line;
  for (auto& row : comparison_json(defs, ours, baseline)) {
    auto get = [&](const char* k) { return row.contains(k) && row[k].is_number() ? std::optional<double>(row[k].get<double>()) : std::nullopt; };
    std::snprintf(line, sizeof line, "%-28s %-10s %14s %14s %8s\n", row["metric"].get<std::string>().c_str(),
                  row["unit"].get<std::string>().c_str(), format(get("ours")).c_str(),
                  baseline ? format(get("baseline")).c_str() : "", baseline ? format(get("ratio")).c_str() : "");
    os << line;
  }
}

}  // namespace gemmlab
