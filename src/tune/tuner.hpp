#pragma once
// `gemmlab tune`: searches a family's space for one problem, under a time budget, and records the
// best configuration in the tuning database.
//   exhaustive: every configuration of the search space, in order;
//   random:     configurations in a seeded random order until the budget is spent (the default: on
//               the H100 it met the target in every seed measured, docs/perf-log.md entries 10-11);
//   anneal:     a quarter of the budget on random configurations, then simulated annealing from the
//               best of them over neighbours (configurations that differ in one or two parameters),
//               on log(time), the temperature falling linearly to zero at the end of the budget;
//               no configuration is measured twice.
// Every configuration tried is verified; a wrong one is never chosen.
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gemmlab/problem.hpp"
#include "timing/timing.hpp"

namespace gemmlab {

enum class Strategy { exhaustive, random, anneal };
constexpr double kDefaultBudgetS = 60;
Strategy parse_strategy(const std::string& s);
std::string to_string(Strategy s);

struct TuneOptions {
  std::string family;
  Problem problem;             // normalized
  double budget_s = 0;         // 0: no limit for exhaustive, kDefaultBudgetS for random and anneal
  Strategy strategy = Strategy::random;
  uint64_t seed = 1;
  std::filesystem::path db;    // the tuning database to update; empty: do not write one
  TimingOptions timing;
  std::string command_line;
  int compile_threads = -1;    // CompileAhead's threads: -1 the host's cores less one, 0 none
  std::string fixed;           // parameters held in every point ("accum=fp64": tensor_fp32's arithmetic)
};

struct Trial {
  std::string params;
  std::string status;  // ok | failed | unsupported: ... | error: ...
  double median_ms = 0, gflops = 0;
  double at_s = 0;     // search time when it finished
  double prepare_s = 0;  // the search's wait for its binary (compiling it, or its compile ahead; loading)
  double measure_s = 0;  // verifying and timing it
  double compile_s = 0;  // NVRTC's time for its binary, on whichever thread (0: cached or built in)
  std::string binary;    // where the binary came from: compiled, compiled ahead, disk cache, ahead of time
};

struct TuneResult {
  nlohmann::json metadata;
  std::vector<Trial> trials;
  int space = 0;
  double elapsed_s = 0;
  int compile_threads = 0;
  double compile_s = 0, prepare_s = 0, measure_s = 0;  // sums over the trials
  const Trial* best() const;  // the fastest verified trial; null when none passed
  nlohmann::ordered_json to_json() const;
};

// Throws UsageError for an unknown family, a problem of the other operation, or a tuning database
// that cannot be read (left alone).
TuneResult tune(const TuneOptions& o, std::ostream& log);

}  // namespace gemmlab
