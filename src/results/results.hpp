#pragma once
// Result records and their writers: an aligned table, tidy CSV and JSON, each file carrying
// the run's metadata (device, software, commit, date, measurement mode).
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gemmlab/problem.hpp"
#include "timing/timing.hpp"
#include "verify/verify.hpp"

namespace gemmlab {

struct Record {
  std::string kernel;
  std::string precision;  // "fp32" or "tf32"
  Problem problem;
  std::string status = "ok";  // ok | failed | unsupported: ... | error: ...
  Timing timing;
  double gflops = 0, gbps = 0, pct_peak = 0;
  std::string peak = "ffma_tflops";  // the ceiling pct_peak is a percentage of: ffma_tflops or copy_gbps
  double x_cublas = 0;  // cuBLAS SGEMM time / this time, same run; 0 when unknown
  bool verified = false;
  Verdict verdict;
  nlohmann::json details = nlohmann::json::object();
};

const char* build_commit();  // generated at build time

// Ordered: fields keep the order of the table (identity, problem, timing, verification).
nlohmann::ordered_json to_json(const Record& r);
nlohmann::ordered_json results_json(const nlohmann::json& metadata, const std::vector<Record>& records);
std::string results_csv(const nlohmann::json& metadata, const std::vector<Record>& records);
// The same from records already in their JSON form (a sweep's journal); `details` is left out.
std::string results_csv(const nlohmann::json& metadata, const std::vector<nlohmann::ordered_json>& rows);

// Table header and one line per record, columns aligned.
void print_table_header(std::ostream& os);
void print_table_row(std::ostream& os, const Record& r);

}  // namespace gemmlab
