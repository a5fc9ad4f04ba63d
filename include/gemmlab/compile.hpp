#pragma once
// Run-time compilation with NVRTC, cached on disk.
#include <string>
#include <vector>

namespace gemmlab {

struct CompileRequest {
  std::string program;                // a name for logs, e.g. "naive"
  const char* source = nullptr;
  std::vector<std::string> options;   // -D definitions and the like
  std::string arch;                   // "sm_90", "sm_90a", ...
};

struct CompiledKernel {
  std::string cubin;
  std::string log;       // NVRTC's log, with ptxas's resource report
  std::string key;       // the cache key
  bool from_cache = false;
};

// Compiles to a CUBIN, or returns the cached one. The key covers the source, the headers it may
// include, the options, the architecture and the NVRTC version. Throws RuntimeError with the
// compiler log on failure. Needs no GPU.
CompiledKernel compile_cubin(const CompileRequest& req, bool use_cache = true);

// "sm_90" for compute capability 9.0.
std::string arch_name(int cc_major, int cc_minor);

}  // namespace gemmlab
