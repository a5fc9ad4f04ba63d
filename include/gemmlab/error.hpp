#pragma once
// Errors and the process exit codes they map to (documented in README.md).
#include <cuda_runtime.h>
#include <stdexcept>
#include <string>

namespace gemmlab {

enum ExitCode : int {
  kExitOk = 0,
  kExitVerifyFailed = 1,  // a kernel produced a wrong result
  kExitUsage = 2,         // bad arguments or an impossible problem
  kExitNoDevice = 3,      // no CUDA device was found
  kExitRuntime = 4,       // a CUDA, cuBLAS, NVRTC or I/O failure
};

// Bad input from the user: one line, exit code 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// No usable CUDA device: one line, exit code 3.
struct NoDeviceError : std::runtime_error {
  NoDeviceError() : std::runtime_error("no CUDA device was found") {}
};

// Anything the library or driver reports as failed: exit code 4.
struct RuntimeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void throw_cuda_error(cudaError_t err, const char* what, const char* file, int line);

}  // namespace gemmlab

// Every CUDA runtime call goes through this; a failure carries the call and its place.
#define GEMMLAB_CUDA(call)                                                        \
  do {                                                                            \
    cudaError_t gemmlab_err_ = (call);                                            \
    if (gemmlab_err_ != cudaSuccess)                                              \
      ::gemmlab::throw_cuda_error(gemmlab_err_, #call, __FILE__, __LINE__);       \
  } while (0)

// After every kernel launch: launch-configuration errors surface here.
#define GEMMLAB_CUDA_LAUNCHED() GEMMLAB_CUDA(cudaGetLastError())
