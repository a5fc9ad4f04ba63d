#pragma once
// gemmlab stress: the library called the way programs call it, many times, from many host threads,
// every result checked. Each call draws a case (shape, layout, transposes, leading dimensions,
// pointer offsets, alpha, beta, mode, API), allocates its buffers stream-ordered, fills them with
// new random data, calls gemmlab (sometimes inside a graph capture), computes cuBLAS's result on
// the same data and stream, compares the two on the GPU and frees the buffers. A mismatch is
// judged against float64 at the worst elements, to say which side is wrong.
#include <cstdint>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gemmlab/gemmlab.hpp"
#include "gemmlab/problem.hpp"

namespace gemmlab {

struct GpuModel;

// What a case exercises: the kind it was drawn as decides the shape class; the route is what the
// library's dispatcher makes of it on a GPU (stress_route).
enum class StressKind { gemv, vector, split_k, large, staged, tiny_k, skinny };
std::string to_string(StressKind k);

struct StressCase {
  StressKind kind = StressKind::large;
  Problem problem;           // normalized; op = gemv for the sgemv API
  MathMode mode = MathMode::strict_fp32;
  int offset_a = 0, offset_b = 0, offset_c = 0;  // floats past cudaMalloc's alignment
  bool in_graph = false;     // called inside a stream capture, then replayed once
  bool first_seen = false;   // drawn fresh (else a shape seen before, with new data)
  std::string describe() const;
};

// Draws cases: `fresh_percent` of them new shapes, the rest from the shapes drawn so far;
// `graph_percent` inside graph captures. Thread-safe: the stress's threads share one generator, so
// that a shape one thread drew comes back in others (calls of one plan from several threads). Every shape's M·N stays at most `max_mn` and M·N·K at most
// `max_mnk` (verification costs a cuBLAS product of the same size).
class StressGenerator {
 public:
  explicit StressGenerator(uint64_t seed, int fresh_percent = 30, int graph_percent = 5, int64_t max_mn = 1 << 21,
                           double max_mnk = 4e9, std::vector<MathMode> modes = {});
  StressCase next();

 private:
  StressCase fresh();
  std::mutex mu_;
  std::mt19937_64 rng_;
  int fresh_percent_, graph_percent_;
  int64_t max_mn_;
  double max_mnk_;
  std::vector<MathMode> modes_;
  std::vector<StressCase> seen_;
};

// The route a case takes on a GPU the dispatcher's model describes, as the report names it:
// "gemv", "gemv-route" (a GEMM call with M or N = 1), "hopper-simt", "hopper-simt split-tail",
// "hopper-simt staged", "warptiled", "warptiled split-k", "wgmma", "wgmma split-tail", "tf32-mma",
// "vectorized"; " unaligned" is appended when
// a pointer is off 16-byte alignment. The built-in table can pick differently for its exact squares.
std::string stress_route(const StressCase& c, const GpuModel& gpu);

struct StressOptions {
  int threads = 8;
  int streams = 4;          // stream 0 is shared by threads - streams + 1 threads, the others have one each
  double seconds = 60;      // stop after this long (0: no limit) ...
  int64_t calls = 0;        // ... or after this many calls (0: no limit); at least one must be set
  uint64_t seed = 1;
  int fresh_percent = 30;
  int graph_percent = 5;
  std::vector<MathMode> modes;   // empty: all three
  std::vector<Problem> shapes;   // non-empty: only these shapes (mode from `modes`), no graphs
  double max_mnk = 4e9;          // the largest M·N·K drawn (sanitizers want small ones)
  // Inputs made on the host and copied from pageable memory (as many programs do), instead of
  // generated on the GPU: slower, and it spaces the threads' calls differently.
  bool host_inputs = false;
  // Each call on a stream of its own, made for it and destroyed after it (as programs that make a
  // stream per request do): the library meets a stream it has not seen on every call.
  bool stream_per_call = false;
  std::string command_line;
};

struct StressMismatch {
  StressCase call;
  std::string plan;   // family and parameters the library chose
  int thread = 0, stream = 0;
  int64_t index = 0;  // the call's number in its thread
  double rel_err = 0;       // ||gemmlab - cuBLAS|| / ||cuBLAS||
  double max_diff = 0;      // max |gemmlab - cuBLAS| / max |cuBLAS|
  int64_t non_finite = 0;   // elements NaN or Inf in gemmlab's result and not in cuBLAS's
  std::string verdict;      // float64 at the worst elements: which side is wrong
};

struct StressResult {
  int64_t calls = 0, verified = 0, exceptions = 0;
  double seconds = 0;
  std::vector<StressMismatch> mismatches;
  std::vector<std::string> errors;  // exceptions, with their call
  nlohmann::ordered_json by_route;  // route -> calls
  nlohmann::ordered_json by_mode;
  size_t workspace_peak_bytes = 0;  // the most device memory the library held, sampled after calls
  bool ok() const { return mismatches.empty() && exceptions == 0 && verified == calls; }
};

// Checks the options (UsageError naming the rule), without a GPU.
void check_stress_options(const StressOptions& o);

// Runs the stress on the current device; `progress` gets a line every few seconds (may be null).
StressResult run_stress(const StressOptions& o, std::ostream* progress);

nlohmann::ordered_json stress_json(const StressOptions& o, const StressResult& r);

}  // namespace gemmlab
