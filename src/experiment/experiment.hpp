#pragma once
// An experiment file: kernel families with parameter grids, problem sizes, timing and the figures
// to draw; expanded into the points a sweep runs (docs/experiments.md describes the format).
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/averaging.hpp"
#include "problem/data.hpp"
#include "kernels/family.hpp"
#include "gemmlab/problem.hpp"
#include "timing/timing.hpp"

namespace gemmlab {

// Integer arithmetic (+ - * / % and parentheses), comparisons (< <= > >= == !=), && || and !,
// over named integers: the grid's "where" rules and the "{...}" holes of a parameter template.
// Throws UsageError naming the expression on a syntax error, an unknown name or a division by 0.
long long eval_expression(const std::string& text, const std::map<std::string, long long>& vars);

// A grid variable holds an integer or a word; words fill templates only.
using GridValue = std::variant<long long, std::string>;
using GridPoint = std::map<std::string, GridValue>;
// "block={bx}x{by}" with {expr} holes evaluated over the point ({name} of a word inserts it).
std::string fill_template(const std::string& templ, const GridPoint& point);

// One kernel at one parameter point. `params` is canonical for a family, empty for a baseline,
// "tuned" for the best known configuration, resolved per problem when the sweep runs.
struct ExperimentKernel {
  std::string kernel;
  const KernelFamily* family = nullptr;
  std::string params;
  std::string label;      // how tables and plots name it; the kernel name when the file gives none
  std::string invalid;    // the family's reasons for refusing the point; empty when valid
  int64_t max_size = 0;   // problems with a dimension above this are left out (0: no limit)
};

struct Experiment {
  std::string name, title, description;
  nlohmann::json spec;  // the file as read, kept in the results for plots and for resuming
  Op op = Op::gemm;
  std::vector<Problem> problems;  // normalized
  std::vector<ExperimentKernel> kernels;
  std::optional<AveragingShape> averaging;  // seed 004's pipeline, run once as a point of its own
  Distribution dist = Distribution::uniform;
  uint64_t seed = 1;
  TimingOptions timing;
};

// The file's rules are checked in full: an error names the field and the rule, in one line
// (UsageError). A family point that breaks the family's constraints is not an error: it is kept
// with its reasons, so a sweep records it.
Experiment parse_experiment(const nlohmann::json& spec, const std::string& name);
Experiment load_experiment(const std::filesystem::path& file);

// One measurement of a sweep: kernel `kernel` of the experiment on problem `problem`
// (problem = -1: the averaging pipeline). Problem-major order; cuBLAS first in each problem.
struct SweepPoint {
  int problem = -1;
  int kernel = -1;
  std::string key;  // stable across runs: what a resumed sweep matches
};
std::vector<SweepPoint> sweep_points(const Experiment& e);

}  // namespace gemmlab
