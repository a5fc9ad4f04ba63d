#pragma once
// `gemmlab plot` and `gemmlab report`: plots and the report page, drawn by src/report/plot.py
// (python3 with matplotlib), which is built into the binary.
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gemmlab {

// Draws DIR/*.png and DIR/README.md from results files; with roofline, the hierarchical roofline
// of the records that carry counters instead. Throws RuntimeError when no python3 with
// matplotlib is found, UsageError for a file that is not gemmlab results.
void plot_results(const std::vector<std::filesystem::path>& results, const std::filesystem::path& out,
                  const std::string& title, const std::string& intro_markdown = "", bool roofline = false);

struct ReportOptions {
  std::filesystem::path out = "gemmlab-report";
  bool quick = false;
  std::string executable;  // this program, for the sweep workers
  std::string command_line;
};

// The report's experiments (experiments/report/*.json, built in), by name.
std::vector<std::pair<std::string, nlohmann::json>> report_experiments(bool quick);

// Runs the report's experiments as sweeps in OUT/<name>/ (resumable), measures the library's host
// overhead per call, and writes OUT/README.md with tables and OUT/*.png. Returns false when a
// kernel failed verification.
bool run_report(const ReportOptions& o, std::ostream& progress);

// The library's host time per call against the same kernel launches made directly (the plan the
// library would take, launched without it), after the first call: a small problem (one launch)
// and one whose plan needs a workspace (split-K: the kernel and its reduce), cublasSgemm beside
// them. Per shape: median and interquartile range of 30 batches of 100 calls (µs per call), the
// launches a call makes, gemmlab's own time (the difference) and whether it is within the noise;
// and both again with a stream made and destroyed around each call (stream_per_call). With the
// run's metadata (command_line among it).
nlohmann::json measure_call_overhead(const std::string& command_line);
// The report's line about it: the library's own time is never negative; a difference within the
// noise says so.
std::string describe_call_overhead(const nlohmann::json& overhead);

}  // namespace gemmlab
