#include "results/results.hpp"

#include <cstdio>
#include <sstream>

namespace gemmlab {

nlohmann::ordered_json to_json(const Record& r) {
  const Problem& p = r.problem;
  nlohmann::ordered_json j = {{"kernel", r.kernel},
                      {"precision", r.precision},
                      {"op", to_string(p.op)},
                      {"m", p.m},
                      {"n", p.n},
                      {"k", p.k},
                      {"alpha", p.alpha},
                      {"beta", p.beta},
                      {"layout", to_string(p.layout)},
                      {"trans_a", to_string(p.trans_a)},
                      {"trans_b", to_string(p.trans_b)},
                      {"lda", p.lda},
                      {"ldb", p.ldb},
                      {"ldc", p.ldc},
                      {"status", r.status},
                      {"samples", r.timing.ms.count},
                      {"median_ms", r.timing.ms.median},
                      {"min_ms", r.timing.ms.min},
                      {"max_ms", r.timing.ms.max},
                      {"spread", r.timing.ms.spread},
                      {"gflops", r.gflops},
                      {"gbps", r.gbps},
                      {"pct_peak", r.pct_peak},
                      {"peak", r.peak},
                      {"x_cublas", r.x_cublas},
                      {"throttled_samples", r.timing.throttled},
                      {"median_sm_mhz", r.timing.median_sm_mhz},
                      {"verified", r.verified},
                      {"verify_method", r.verdict.method},
                      {"checked", r.verdict.checked},
                      {"failures", r.verdict.failures},
                      {"max_err", r.verdict.max_err},
                      {"max_abs_err", r.verdict.max_abs_err},
                      {"rel_norm_err", r.verdict.rel_norm_err},
                      {"tolerance", r.verdict.tolerance},
                      {"max_dev_cublas", r.verdict.max_dev_cublas},
                      {"first_failure", r.verdict.first_failure},
                      {"details", r.details}};
  return j;
}

nlohmann::ordered_json results_json(const nlohmann::json& metadata, const std::vector<Record>& records) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (auto& r : records) rows.push_back(to_json(r));
  return {{"metadata", nlohmann::ordered_json(metadata)}, {"results", rows}};
}

namespace {

std::string csv_field(const nlohmann::ordered_json& v) {
  std::string s = v.is_string() ? v.get<std::string>() : v.dump();
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

void flatten(const nlohmann::json& j, const std::string& prefix, std::ostream& os) {
  for (auto& [k, v] : j.items()) {
    if (v.is_object())
      flatten(v, prefix + k + ".", os);
    else
      os << "# " << prefix << k << " = " << (v.is_string() ? v.get<std::string>() : v.dump()) << "\n";
  }
}

}  // namespace

std::string results_csv(const nlohmann::json& metadata, const std::vector<Record>& records) {
  std::vector<nlohmann::ordered_json> rows;
  for (auto& r : records) rows.push_back(to_json(r));
  return results_csv(metadata, rows);
}

std::string results_csv(const nlohmann::json& metadata, const std::vector<nlohmann::ordered_json>& rows) {
  std::ostringstream os;
  flatten(metadata, "", os);
  bool header = false;
  for (auto j : rows) {
    j.erase("details");
    if (!header) {
      bool first = true;
      for (auto& [k, v] : j.items()) os << (first ? "" : ",") << k, first = false;
      os << "\n";
      header = true;
    }
    bool first = true;
    for (auto& [k, v] : j.items()) os << (first ? "" : ",") << csv_field(v), first = false;
    os << "\n";
  }
  return os.str();
}

void print_table_header(std::ostream& os) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%-15s %-4s %6s %6s %6s %5s %11s %10s %8s %7s %8s %9s %s", "kernel", "prec", "M", "N",
                "K", "lay", "median_ms", "GFLOP/s", "GB/s", "%peak", "xcuBLAS", "max_err", "verified");
  os << buf << "\n";
  std::snprintf(buf, sizeof buf, "(%%peak: of the measured FFMA rate for GEMM, of the measured copy bandwidth for GEMV)");
  os << buf << "\n";
}

void print_table_row(std::ostream& os, const Record& r) {
  const Problem& p = r.problem;
  char lay[8];
  std::snprintf(lay, sizeof lay, "%c%c%c", p.layout == Layout::row_major ? 'R' : 'C', p.trans_a == Trans::no ? 'N' : 'T',
                p.trans_b == Trans::no ? 'N' : 'T');
  char buf[512];
  if (r.status != "ok" && r.status != "failed") {
    std::snprintf(buf, sizeof buf, "%-15s %-4s %6lld %6lld %6lld %5s  %s", r.kernel.c_str(), r.precision.c_str(),
                  (long long)p.m, (long long)p.n, (long long)p.k, lay, r.status.c_str());
  } else {
    std::string verified = r.verified ? (r.verdict.passed ? "yes" : "FAILED: " + r.verdict.first_failure) : "no";
    std::snprintf(buf, sizeof buf, "%-15s %-4s %6lld %6lld %6lld %5s %11.4f %10.1f %8.1f %7.1f %8.3f %9.2e %s",
                  r.kernel.c_str(), r.precision.c_str(), (long long)p.m, (long long)p.n, (long long)p.k, lay,
                  r.timing.ms.median, r.gflops, r.gbps, r.pct_peak, r.x_cublas, r.verdict.max_err, verified.c_str());
  }
  os << buf << "\n";
  // A family's configuration and its compiled resources, on a line of its own.
  if (r.details.contains("params")) {
    auto& d = r.details;
    std::string line = "                " + d["params"].get<std::string>();
    if (d.contains("registers"))
      line += " | " + d["registers"].dump() + " regs, " +
              std::to_string((d["static_smem_bytes"].get<long long>() + d["dynamic_smem_bytes"].get<long long>()) / 1024) +
              " KB smem, " + d["local_bytes"].dump() + " B local (spill), occupancy " +
              std::to_string(int(100 * d["occupancy"].get<double>() + 0.5)) + "%";
    os << line << "\n";
  }
}

}  // namespace gemmlab
