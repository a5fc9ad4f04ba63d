#pragma once
// What several subcommands parse alike: sizes, comma-separated lists, and one
// configuration on one problem (profile, explain), with the helpers those two
// share.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "bench/bench.hpp"

namespace gemmlab::cli {

// A --size value (S, MxNxK; gemv S or RxC), its error prefixed with the option.
std::vector<int64_t> size_option(const std::string& text, Op op);
// Checks of a number's sign that say the rule in words (CLI11's PositiveNumber
// names its range, 0 to DBL_MAX written out in full).
const CLI::Validator& positive();
const CLI::Validator& non_negative();
// Items of comma-separated values, repeated options flattened, empty items
// dropped.
std::vector<std::string> split_list(const std::vector<std::string>& in);

// One kernel configuration on one problem, as typed.
struct Target {
  KernelSpec kernel;
  Problem problem;  // normalized
  Distribution dist = Distribution::uniform;
  uint64_t seed = 1;
  std::string command_line;
};

// Its options (--kernel, --param, --size, --op, --layout, --trans-a, --trans-b,
// --dist, --seed,
// --alpha, --beta) and their values as typed.
struct TargetArgs {
  std::string kernel, size, layout = "row", trans_a = "n", trans_b = "n", dist = "uniform", op = "gemm";
  std::vector<std::string> params;
  uint64_t seed = 1;
  float alpha = 1, beta = 0;
};
void add_target(CLI::App* cmd, TargetArgs& t);
Target target_of(const TargetArgs& a, const std::string& command_line);

// Ceilings for the metadata: the cached ones, never a fresh measurement (it
// would take seconds).
Ceilings known_ceilings(const DeviceInfo& dev);
// Writes the JSON when a path was given.
void write_json(const std::string& path, const nlohmann::ordered_json& j);
// Verifies the runner on the session; prints and returns false when it fails.
bool verified(GemmRunner& r, ProblemSession& s);
// "family params" (or the baseline's name).
std::string runner_label(const KernelSpec& k);

}  // namespace gemmlab::cli
