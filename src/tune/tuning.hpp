#pragma once
// The tuning database: the best configuration found for a family on a GPU and a shape class,
// one JSON file written atomically. The library's built-in table has the same format.
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gemmlab/problem.hpp"

namespace gemmlab {

// Problems that are expected to like the same configuration: the operation, for a GEMV whether
// op(A)'s rows are contiguous, and per dimension the nearest power of two, marked "-" or "+" when
// the dimension is not a multiple of 64 and lies below or above it (ragged edge tiles, the seed 001
// saw-tooth). GEMM classes are of the row-major-C form (a column-major problem is its transpose).
// "gemm 2^12 2^12+ 2^12".
std::string shape_class(const Problem& p);

struct TuningEntry {
  std::string gpu;   // device name; empty in the built-in table, which matches any GPU of `arch`
  std::string arch;  // "sm_90"
  std::string family, params;
  std::string shape_class, shape;  // the class, and the shape it was tuned on ("4096x4096x4096")
  double gflops = 0, median_ms = 0;
  std::string strategy;
  int evaluated = 0;
  double search_s = 0;
  std::string date, commit;
};

// Whether the entry's configuration sums in FP64 (accum=fp64: measured in tensor_fp32's arithmetic);
// false for an unknown family or parameters its family refuses.
bool sums_in_fp64(const TuningEntry& e);

class TuningDb {
 public:
  TuningDb() = default;
  // Reads `file`. A missing file is an empty database; a corrupt one, or one of another format,
  // is ignored: `problem()` then says why in one line. Never throws.
  static TuningDb load(const std::filesystem::path& file);
  static TuningDb parse(const std::string& text, const std::string& name);
  const std::string& problem() const { return problem_; }

  const std::vector<TuningEntry>& entries() const { return entries_; }
  // Adds or replaces the entry of the same GPU, arch, family, class and arithmetic (FP64 sums or
  // not: a family tuned in tensor_fp32's arithmetic keeps its FP32 entry beside).
  void put(const TuningEntry& e);
  // The best entry for the problem on this GPU: its class if any, else the nearest class
  // of the same operation (with `exact`, its class only); `family` empty means any family; only
  // entries `accept` takes, where given. Null when nothing matches.
  const TuningEntry* best(const std::string& gpu, const std::string& arch, const std::string& family,
                          const Problem& p, bool exact = false,
                          const std::function<bool(const TuningEntry&)>& accept = nullptr) const;
  std::string dump() const;
  void save(const std::filesystem::path& file) const;  // atomic

 private:
  std::vector<TuningEntry> entries_;
  std::string problem_;
};

// The configuration a family should use for a problem on this GPU: the database's entry for the
// family, else the built-in table's, else the family defaults; `source` says which.
struct Tuned {
  std::string params, source;
};
Tuned tuned_params(const std::string& family, const Problem& p, const std::string& gpu, const std::string& arch,
                   const TuningDb& db);

// $GEMMLAB_TUNING_DB, else <cache dir>/tuning.json.
std::filesystem::path default_tuning_db();
// The table built into the library (src/library/h100_defaults.json).
const TuningDb& builtin_table();

}  // namespace gemmlab
