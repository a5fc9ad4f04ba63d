#include <filesystem>
#include <string>

#include "gemmlab/error.hpp"

namespace gemmlab {

void throw_cuda_error(cudaError_t err, const char* what, const char* file, int line) {
  if (err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver) {
    cudaGetLastError();
    throw NoDeviceError();
  }
  std::string where = std::filesystem::path(file).filename().string() + ":" + std::to_string(line);
  throw RuntimeError(std::string("CUDA error ") + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ") in " +
                     what + " at " + where);
}

}  // namespace gemmlab
