#pragma once
// A kernel family: one technique, its CUDA source (compiled at run time), its parameter schema
// with defaults and ranges, its validity constraints and its launch geometry.
#include <map>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "gemmlab/problem.hpp"

namespace gemmlab {

// A parameter is 1 to 3 integers, written "16" or "16x16" or "128x128x16".
struct ParamSpec {
  std::string name;
  std::vector<int> defaults;  // its size is the parameter's arity
  int min, max;               // for every component
  std::string help;
};

using ParamValues = std::map<std::string, std::vector<int>>;

struct LaunchGeometry {
  dim3 grid, block;
  size_t shared_bytes = 0;
};

class KernelFamily {
 public:
  virtual ~KernelFamily() = default;
  virtual std::string name() const = 0;
  virtual std::string description() const = 0;
  virtual int min_arch() const { return 50; }  // compute capability × 10
  virtual std::vector<ParamSpec> params() const = 0;
  virtual const char* source() const = 0;      // CUDA C++ for NVRTC; may include "gemm_args.h"
  virtual std::string entry() const = 0;       // extern "C" kernel name
  // Broken rules, one message each; empty when the configuration is valid.
  virtual std::vector<std::string> violations(const ParamValues& v) const = 0;
  // -D definitions that specialise the source for a configuration.
  virtual std::vector<std::string> defines(const ParamValues& v) const = 0;
  virtual LaunchGeometry geometry(const ParamValues& v, const Problem& p) const = 0;
  // Why this configuration cannot run this problem; empty when it can.
  virtual std::string unsupported(const ParamValues&, const Problem&) const { return {}; }
};

// "block=16x16,tile=64x64x8" → values, completed with defaults; throws UsageError on unknown
// names, wrong arity, out-of-range values or broken constraints.
ParamValues parse_params(const KernelFamily& f, const std::string& text);
std::string format_params(const ParamValues& v);  // canonical "block=16x16,tile=..."

const std::vector<const KernelFamily*>& families();
const KernelFamily* find_family(const std::string& name);  // nullptr when unknown

}  // namespace gemmlab
