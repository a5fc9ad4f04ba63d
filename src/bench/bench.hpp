#pragma once
// The benchmark driver: problems × kernels, each run verified, then timed with the harness,
// cuBLAS SGEMM always timed in the same run for the ratio.
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "bench/averaging.hpp"
#include "timing/ceilings.hpp"
#include "counters/counters.hpp"
#include "problem/data.hpp"
#include "kernels/family.hpp"
#include "gemmlab/problem.hpp"
#include "results/results.hpp"
#include "launch/runner.hpp"
#include "timing/timing.hpp"

namespace gemmlab {

// A kernel named on the command line, resolved without touching the GPU.
struct KernelSpec {
  std::string name;
  const KernelFamily* family = nullptr;  // null for cublas, cublas-tf32, openblas
  ParamValues params;
  Ablation ablation = Ablation::none;
};

// Names: the family names, "cublas", "cublas-tf32", "openblas". Each family named runs at every
// parameter point of `params` that applies to it: "point" applies to all families, "family:point"
// to that one ("family:" is its defaults); with none, at its defaults. Throws UsageError for unknown names or
// invalid parameters.
std::vector<KernelSpec> resolve_kernels(const std::vector<std::string>& names, const std::vector<std::string>& params);
std::vector<std::string> kernel_names();

struct BenchOptions {
  std::vector<KernelSpec> kernels;
  std::vector<Problem> problems;  // normalized
  std::vector<std::string> labels;  // empty, or a name per problem (a corpus's): each record's details.shape
  Distribution dist = Distribution::uniform;
  uint64_t seed = 1;
  TimingOptions timing;
  bool remeasure_ceilings = false;
  std::optional<AveragingShape> averaging;  // also run seed 004's pipeline, before the problems
  std::vector<MetricDef> metrics;           // hardware counters per record (--metrics); none when empty
  // Also the configurations the library's model weighs for each problem in this math mode, fastest
  // predicted first, at most candidates_max (--candidates): the model's calibration.
  std::optional<MathMode> candidates;
  int candidates_max = 8;
  std::string command_line;
};

struct BenchResult {
  nlohmann::json metadata;
  std::vector<Record> records;
  bool all_passed = true;
};

// The default suite of `gemmlab bench` with no sizes named.
std::vector<int64_t> default_sizes();
// GEMM: naive and the baselines. GEMV: cuBLAS SGEMV and every GEMV family.
std::vector<std::string> default_kernels(Op op);

BenchResult run_bench(const BenchOptions& o, std::ostream& table);

// One problem on the device: its inputs (random, seeded), their host copies and the verifier.
// For a large problem the verifier needs cuBLAS SGEMM's result, computed on construction.
class ProblemSession {
 public:
  ProblemSession(const Problem& p, Distribution d, uint64_t seed, cudaStream_t stream);
  ~ProblemSession();
  ProblemSession(const ProblemSession&) = delete;
  ProblemSession& operator=(const ProblemSession&) = delete;

  // Runs once on freshly reset C (NaN when beta = 0, C0 otherwise) and checks the result.
  Verdict verify(GemmRunner& r);
  const Problem& problem() const;
  Timing time(GemmRunner& r, DeviceTimer& timer, const TimingOptions& host_opts);
  // For profilers and tracers: `around` gets the runner's run (enqueued and finished, C reset
  // before), which it may call several times, and an L2 flush to call before each.
  using RunAlone = std::function<void(const std::function<void()>& run, const std::function<void()>& flush)>;
  void run_alone(GemmRunner& r, const RunAlone& around);

 private:
  struct Buffers;
  std::unique_ptr<Buffers> b_;
};

std::unique_ptr<GemmRunner> make_runner(const KernelSpec& k);

// Verifies, then times one runner on the session's problem: a record without x_cublas (the caller
// knows cuBLAS's time). An unsupported problem gives a record saying why.
Record measure(GemmRunner& r, ProblemSession& session, DeviceTimer& timer, const TimingOptions& host_opts,
               const Ceilings& ceil);

// What every results file carries: device, software, ceilings, commit, date, measurement, inputs.
nlohmann::json run_metadata(const DeviceInfo& dev, const Ceilings& c, const TimingOptions& t, Distribution dist,
                            uint64_t seed, const std::string& command);

}  // namespace gemmlab
