#pragma once
// Run-time compilation with NVRTC, cached on disk.
#include <string>
#include <string_view>
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
  bool ahead_of_time = false;  // built with the library (no NVRTC at run time)
};

// Compiles to a CUBIN, or returns the one built with the library, or the cached one; with
// use_cache false it always compiles (and stores nothing). The key covers the source, the headers it may
// include, the options, the architecture and the NVRTC version. Throws RuntimeError with the
// compiler log on failure. Needs no GPU.
CompiledKernel compile_cubin(const CompileRequest& req, bool use_cache = true);

// The key of a binary built with the library: program, architecture and a hash of the source,
// its headers and the options.
std::string aot_key(const CompileRequest& req);
// The binary built with the library under this key; empty when there is none.
std::string_view aot_binary(const std::string& key);

// "sm_90" for compute capability 9.0; "sm_90a" for its architecture-specific target (wgmma,
// setmaxnreg: KernelFamily::arch_specific), whose binaries run on that compute capability alone.
std::string arch_name(int cc_major, int cc_minor, bool specific = false);

}  // namespace gemmlab
