#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <map>
#include <memory>
#include <sstream>
#include <nvrtc.h>

#include "compile/compile.hpp"
#include "gemmlab/error.hpp"
#include "common/files.hpp"

namespace gemmlab::embedded {
extern const char* const gemm_args_source;
extern const char* const gemm_tile_source;
extern const char* const gemv_common_source;
extern const char* const accumulate_source;
extern const char* const tf32_split_source;
extern const char* const split_tail_source;
extern const char* const hopper_source;
extern const char* const ozaki_math_source;
extern const char* const tma_swizzle_source;
extern const char* const quad_columns_source;
extern const char* const grid_dependency_source;
}

namespace gemmlab {

namespace {

// Headers the family sources may include, handed to NVRTC by name.
struct Header {
  const char* name;
  const char* const* source;
};
constexpr Header kHeaders[] = {{"gemm_args.h", &embedded::gemm_args_source},
                               {"gemm_tile.cuh", &embedded::gemm_tile_source},
                               {"gemv_common.cuh", &embedded::gemv_common_source},
                               {"accumulate.cuh", &embedded::accumulate_source},
                               {"tf32_split.cuh", &embedded::tf32_split_source},
                               {"split_tail.cuh", &embedded::split_tail_source},
                               {"hopper.cuh", &embedded::hopper_source},
                               {"ozaki_math.cuh", &embedded::ozaki_math_source},
                               {"tma_swizzle.cuh", &embedded::tma_swizzle_source},
                               {"quad_columns.cuh", &embedded::quad_columns_source},
                               {"grid_dependency.cuh", &embedded::grid_dependency_source}};

void check(nvrtcResult r, const char* what) {
  if (r != NVRTC_SUCCESS) throw RuntimeError(std::string("NVRTC: ") + what + ": " + nvrtcGetErrorString(r));
}

std::vector<std::string> full_options(const CompileRequest& req) {
  std::vector<std::string> opts = {"--gpu-architecture=" + req.arch, "-std=c++17", "-lineinfo",
                                   "--ptxas-options=-v"};
  std::stringstream dirs(GEMMLAB_CUDA_INCLUDE_PATH);
  std::string dir;
  std::error_code ec;
  while (std::getline(dirs, dir, ':'))
    if (!dir.empty() && std::filesystem::is_directory(dir, ec)) opts.push_back("-I" + dir);
  opts.insert(opts.end(), req.options.begin(), req.options.end());
  return opts;
}

std::string cache_key(const CompileRequest& req, const std::vector<std::string>& opts) {
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor);
  std::string text = std::string(req.source) + '\0';
  for (auto& h : kHeaders) text += std::string(h.name) + '\0' + *h.source + '\0';
  for (auto& o : opts) text += o + '\0';
  text += req.arch + '\0' + std::to_string(major) + "." + std::to_string(minor);
  return req.program + "-" + req.arch + "-" + stable_hash(text);
}

}  // namespace

std::string aot_key(const CompileRequest& req) {
  // The toolkit's include folders and NVRTC's version are left out: a binary built with the
  // library stays valid wherever the library runs, as long as the source and options are the same.
  std::string text = std::string(req.source) + '\0';
  for (auto& h : kHeaders) text += std::string(h.name) + '\0' + *h.source + '\0';
  for (auto& o : req.options) text += o + '\0';
  return req.program + "-" + req.arch + "-" + stable_hash(text + req.arch);
}

std::string arch_name(int cc_major, int cc_minor, bool specific) {
  return "sm_" + std::to_string(cc_major * 10 + cc_minor) + (specific ? "a" : "");
}

namespace {

CompiledKernel compile_here(const CompileRequest& req, bool use_cache) {
  auto opts = full_options(req);
  CompiledKernel out;
  if (auto aot = use_cache ? aot_binary(aot_key(req)) : std::string_view(); !aot.empty()) {
    out.cubin.assign(aot.data(), aot.size());
    out.key = aot_key(req);
    out.ahead_of_time = true;
    return out;
  }
  out.key = cache_key(req, opts);
  std::filesystem::path cached;
  if (use_cache) {
    cached = cache_dir() / "kernels" / (out.key + ".cubin");
    if (auto bin = read_file(cached); bin && !bin->empty()) {
      out.cubin = std::move(*bin);
      out.from_cache = true;
      return out;
    }
  }

  std::vector<const char*> names, sources, cargs;
  for (auto& h : kHeaders) {
    names.push_back(h.name);
    sources.push_back(*h.source);
  }
  for (auto& o : opts) cargs.push_back(o.c_str());

  const auto start = std::chrono::steady_clock::now();
  nvrtcProgram prog;
  check(nvrtcCreateProgram(&prog, req.source, (req.program + ".cu").c_str(), int(names.size()), sources.data(),
                           names.data()),
        "create program");
  nvrtcResult built = nvrtcCompileProgram(prog, int(cargs.size()), cargs.data());
  size_t log_size = 0;
  nvrtcGetProgramLogSize(prog, &log_size);
  out.log.resize(log_size);
  if (log_size) nvrtcGetProgramLog(prog, out.log.data());
  while (!out.log.empty() && (out.log.back() == '\0' || out.log.back() == '\n')) out.log.pop_back();
  if (built != NVRTC_SUCCESS) {
    nvrtcDestroyProgram(&prog);
    throw RuntimeError("NVRTC could not compile " + req.program + " for " + req.arch + ":\n" + out.log);
  }
  size_t size = 0;
  check(nvrtcGetCUBINSize(prog, &size), "CUBIN size");
  out.cubin.resize(size);
  check(nvrtcGetCUBIN(prog, out.cubin.data()), "CUBIN");
  nvrtcDestroyProgram(&prog);
  out.compile_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (use_cache) write_file_atomic(cached, out.cubin);
  return out;
}

// Compiles started by CompileAhead threads, by cache key, until compile_cubin takes them.
struct Ahead {
  bool done = false;
  CompiledKernel result;
  std::exception_ptr error;
};
std::mutex ahead_mutex;
std::condition_variable ahead_done;
std::map<std::string, std::shared_ptr<Ahead>> ahead;

std::string request_id(const CompileRequest& r) {
  std::string id = r.program + '\0' + r.arch;
  for (auto& o : r.options) id += '\0' + o;
  return id;
}

}  // namespace

CompiledKernel compile_cubin(const CompileRequest& req, bool use_cache) {
  if (use_cache) {
    std::unique_lock lock(ahead_mutex);
    // Hashing the source costs time: only while something compiles ahead.
    if (ahead.empty()) {
      lock.unlock();
      return compile_here(req, use_cache);
    }
    const auto key = cache_key(req, full_options(req));
    if (auto it = ahead.find(key); it != ahead.end()) {
      auto entry = it->second;
      ahead_done.wait(lock, [&] { return entry->done; });
      ahead.erase(key);
      if (entry->error) std::rethrow_exception(entry->error);
      entry->result.compiled_ahead = !entry->result.from_cache && !entry->result.ahead_of_time;
      return std::move(entry->result);
    }
  }
  return compile_here(req, use_cache);
}

CompileAhead::CompileAhead(int threads) {
  if (threads < 0) {
    const char* env = std::getenv("GEMMLAB_COMPILE_THREADS");
    threads = env && *env ? std::atoi(env) : int(std::thread::hardware_concurrency()) - 1;
  }
  for (int t = 0; t < std::max(0, threads); ++t) pool_.emplace_back([this] { work(); });
}

CompileAhead::~CompileAhead() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
    queue_.clear();
  }
  wake_.notify_all();
  for (auto& t : pool_) t.join();
  // Results nobody took stay on disk only.
  std::lock_guard lock(ahead_mutex);
  for (auto& key : started_) ahead.erase(key);
}

void CompileAhead::submit(const CompileRequest& r) {
  if (pool_.empty()) return;
  {
    std::lock_guard lock(mutex_);
    if (!queued_.insert(request_id(r)).second) return;
    queue_.push_back(r);
  }
  wake_.notify_one();
}

void CompileAhead::prefer(const CompileRequest& r) {
  if (pool_.empty()) return;
  {
    std::lock_guard lock(mutex_);
    const auto id = request_id(r);
    if (!queued_.insert(id).second) {
      auto it = std::find_if(queue_.begin(), queue_.end(), [&](auto& q) { return request_id(q) == id; });
      if (it == queue_.end()) return;  // already taken by a thread
      queue_.erase(it);
    }
    queue_.push_front(r);
  }
  wake_.notify_one();
}

double CompileAhead::compile_s() const {
  std::lock_guard lock(mutex_);
  return compile_s_;
}

int CompileAhead::compiled() const {
  std::lock_guard lock(mutex_);
  return compiled_;
}

void CompileAhead::work() {
  for (;;) {
    CompileRequest req;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (stop_) return;
      req = std::move(queue_.front());
      queue_.pop_front();
    }
    const auto key = cache_key(req, full_options(req));
    // Skipped when built in, cached on disk, or already started elsewhere.
    if (!aot_binary(aot_key(req)).empty() || std::filesystem::exists(cache_dir() / "kernels" / (key + ".cubin")))
      continue;
    auto entry = std::make_shared<Ahead>();
    {
      std::lock_guard lock(ahead_mutex);
      if (!ahead.emplace(key, entry).second) continue;
    }
    {
      std::lock_guard lock(mutex_);
      started_.insert(key);
    }
    try {
      entry->result = compile_here(req, true);
    } catch (...) {
      entry->error = std::current_exception();
    }
    {
      std::lock_guard lock(ahead_mutex);
      entry->done = true;
    }
    ahead_done.notify_all();
    std::lock_guard lock(mutex_);
    compile_s_ += entry->result.compile_s;
    compiled_ += entry->error ? 0 : 1;
  }
}

}  // namespace gemmlab
