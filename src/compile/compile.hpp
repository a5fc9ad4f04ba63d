#pragma once
// Run-time compilation with NVRTC, cached on disk.
#include <condition_variable>
#include <deque>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <thread>
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
  bool compiled_ahead = false;  // by a CompileAhead thread, while the caller did something else
  double compile_s = 0;         // NVRTC's wall time (0 when nothing was compiled)
};

// Compiles to a CUBIN, or returns the one built with the library, or the cached one; with
// use_cache false it always compiles (and stores nothing). A request a CompileAhead thread is
// compiling (or has compiled, not yet taken) is waited for and taken instead. The key covers the source, the headers it may
// include, the options, the architecture and the NVRTC version. Throws RuntimeError with the
// compiler log on failure. Needs no GPU.
CompiledKernel compile_cubin(const CompileRequest& req, bool use_cache = true);

// The key of a binary built with the library: program, architecture and a hash of the source,
// its headers and the options.
std::string aot_key(const CompileRequest& req);
// The binary built with the library under this key; empty when there is none.
std::string_view aot_binary(const std::string& key);

// Compiles requests on background threads before they are needed, so that a search measures one
// configuration on the GPU while the next ones compile (NVRTC is thread-safe; one compile uses one
// core). compile_cubin of a request in flight waits for it; one still queued is compiled by the
// caller at once (and skipped later). Results go to the disk cache as well.
class CompileAhead {
 public:
  // threads < 0: the host's hardware threads minus the caller's, or $GEMMLAB_COMPILE_THREADS when
  // set; 0: nothing runs ahead (each request compiles when it is used).
  explicit CompileAhead(int threads = -1);
  ~CompileAhead();  // drops what is still queued, waits for the compiles running
  CompileAhead(const CompileAhead&) = delete;
  CompileAhead& operator=(const CompileAhead&) = delete;
  int threads() const { return int(pool_.size()); }
  void submit(const CompileRequest& r);  // after everything queued
  void prefer(const CompileRequest& r);  // before everything queued
  // NVRTC seconds spent by the background threads, and how many they compiled.
  double compile_s() const;
  int compiled() const;

 private:
  void work();
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<CompileRequest> queue_;
  std::set<std::string> queued_;   // program + options of the requests submitted (no duplicates)
  std::set<std::string> started_;  // cache keys of the compiles this object started
  bool stop_ = false;
  double compile_s_ = 0;
  int compiled_ = 0;
  std::vector<std::thread> pool_;
};

// "sm_90" for compute capability 9.0; "sm_90a" for its architecture-specific target (wgmma,
// setmaxnreg: KernelFamily::arch_specific), whose binaries run on that compute capability alone.
std::string arch_name(int cc_major, int cc_minor, bool specific = false);

}  // namespace gemmlab
