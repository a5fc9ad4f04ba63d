#include <filesystem>
#include <sstream>
#include <nvrtc.h>

#include "gemmlab/compile.hpp"
#include "gemmlab/error.hpp"
#include "gemmlab/files.hpp"

namespace gemmlab::embedded {
extern const char* const gemm_args_source;
extern const char* const gemm_tile_source;
extern const char* const gemv_common_source;
extern const char* const tf32_split_source;
extern const char* const hopper_source;
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
                               {"tf32_split.cuh", &embedded::tf32_split_source},
                               {"hopper.cuh", &embedded::hopper_source}};

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

CompiledKernel compile_cubin(const CompileRequest& req, bool use_cache) {
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
  if (use_cache) write_file_atomic(cached, out.cubin);
  return out;
}

}  // namespace gemmlab
