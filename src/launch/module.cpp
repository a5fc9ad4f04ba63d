#include "launch/module.hpp"

#include "compile/compile.hpp"
#include "gemmlab/error.hpp"

namespace gemmlab {

Module::Module(const std::string& program, const char* source, const std::vector<std::string>& options,
               const std::string& arch) {
  auto compiled = compile_cubin({program, source, options, arch});
  origin_ = compiled.ahead_of_time    ? "ahead of time"
            : compiled.from_cache     ? "disk cache"
            : compiled.compiled_ahead ? "compiled ahead"
                                      : "compiled";
  log_ = compiled.log;
  compile_s_ = compiled.compile_s;
  GEMMLAB_CUDA(cudaLibraryLoadData(&library_, compiled.cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
}

Module::~Module() {
  if (library_) cudaLibraryUnload(library_);
}

Module::Module(Module&& o) noexcept
    : library_(o.library_), origin_(o.origin_), log_(std::move(o.log_)), compile_s_(o.compile_s_) {
  o.library_ = nullptr;
}

cudaKernel_t Module::kernel(const std::string& entry) const {
  cudaKernel_t k = nullptr;
  GEMMLAB_CUDA(cudaLibraryGetKernel(&k, library_, entry.c_str()));
  return k;
}

}  // namespace gemmlab
