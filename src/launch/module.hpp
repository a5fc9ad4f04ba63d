#pragma once
// A run-time compiled CUDA source loaded on the current device: compile (NVRTC, disk cache),
// load as a library, look kernels up by their extern "C" names. Unloaded on destruction.
#include <string>
#include <vector>

#include <cuda_runtime.h>

namespace gemmlab {

class Module {
 public:
  // `arch` as arch_name() gives it ("sm_90").
  Module(const std::string& program, const char* source, const std::vector<std::string>& options,
         const std::string& arch);
  ~Module();
  Module(Module&& o) noexcept;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  Module& operator=(Module&&) = delete;

  cudaKernel_t kernel(const std::string& entry) const;
  // Where the binary came from: "compiled" (NVRTC now), "compiled ahead" (by a CompileAhead
  // thread), "disk cache", "ahead of time" (built with the library).
  const char* origin() const { return origin_; }
  double compile_s() const { return compile_s_; }  // NVRTC's time, wherever it ran (0: none)
  const std::string& log() const { return log_; }

 private:
  cudaLibrary_t library_ = nullptr;
  const char* origin_ = "compiled";
  std::string log_;
  double compile_s_ = 0;
};

}  // namespace gemmlab
