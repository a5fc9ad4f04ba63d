#include "launch/tma.hpp"

#include <cstdint>
#include <string>

#include <cuda.h>
#include <cuda_runtime.h>

#include "gemmlab/error.hpp"
#include "kernels/gemm_args.h"

namespace gemmlab {

static_assert(sizeof(CUtensorMap) == sizeof(TensorMaps::a) && alignof(TensorMaps) >= alignof(CUtensorMap),
              "TensorMaps must hold CUtensorMaps as the driver lays them out");

namespace {

using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                 const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                 CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

EncodeTiled encoder() {
  static EncodeTiled fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &found) !=
            cudaSuccess ||
        found != cudaDriverEntryPointSuccess || !p)
      throw RuntimeError("the CUDA driver does not offer cuTensorMapEncodeTiled (TMA needs CUDA 12 or newer)");
    return reinterpret_cast<EncodeTiled>(p);
  }();
  return fn;
}

// The swizzle whose span is a row of `bytes` (32, 64 or 128; otherwise none).
CUtensorMapSwizzle swizzle_of_row(long long bytes) {
  return bytes == 128 ? CU_TENSOR_MAP_SWIZZLE_128B
         : bytes == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
         : bytes == 32 ? CU_TENSOR_MAP_SWIZZLE_32B
                       : CU_TENSOR_MAP_SWIZZLE_NONE;
}

}  // namespace

void encode_kmajor_map(void* map, const float* base, long long rows, long long k, long long kp, int planes,
                       int box_rows, int box_k) {
  const cuuint64_t dims[3] = {cuuint64_t(k), cuuint64_t(rows), cuuint64_t(planes)};
  const cuuint64_t strides[2] = {cuuint64_t(kp) * 4, cuuint64_t(kp) * cuuint64_t(rows) * 4};  // bytes, dims 1 and 2
  const cuuint32_t box[3] = {cuuint32_t(box_k), cuuint32_t(box_rows), 1};
  const cuuint32_t step[3] = {1, 1, 1};
  // A box row is one swizzle row, so that wgmma reads the tile with the matching swizzle mode.
  const auto swizzle = swizzle_of_row(box_k * 4);
  CUresult r = encoder()(static_cast<CUtensorMap*>(map), CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 3, const_cast<float*>(base),
                         dims, strides, box, step, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                         CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw RuntimeError("cuTensorMapEncodeTiled refused a " + std::to_string(rows) + " x " + std::to_string(k) +
                       " operand (error " + std::to_string(int(r)) + ")");
}

void encode_int8_planes_map(void* map, const void* base, long long rows, long long kp, int planes, int box_rows) {
  const cuuint64_t dims[3] = {cuuint64_t(kp), cuuint64_t(rows), cuuint64_t(planes)};
  const cuuint64_t strides[2] = {cuuint64_t(kp), cuuint64_t(kp) * cuuint64_t(rows)};
  const cuuint32_t box[3] = {128, cuuint32_t(box_rows), 1};
  const cuuint32_t step[3] = {1, 1, 1};
  CUresult r = encoder()(static_cast<CUtensorMap*>(map), CU_TENSOR_MAP_DATA_TYPE_UINT8, 3, const_cast<void*>(base), dims,
                         strides, box, step, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                         CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw RuntimeError("cuTensorMapEncodeTiled refused " + std::to_string(planes) + " int8 planes of " +
                       std::to_string(rows) + " x " + std::to_string(kp) + " (error " + std::to_string(int(r)) + ")");
}

void encode_operand_map(void* map, const float* base, const OperandMap& d) {
  if (reinterpret_cast<std::uintptr_t>(base) % 16) throw UsageError("TMA needs operands that start 16-byte aligned");
  const cuuint64_t dims[2] = {d.dims[0], d.dims[1]};
  const cuuint64_t strides[1] = {d.row_bytes};
  const cuuint32_t box[2] = {d.box[0], d.box[1]};
  const cuuint32_t step[2] = {1, 1};
  const auto swizzle = swizzle_of_row(d.swizzle_bytes);
  CUresult r = encoder()(static_cast<CUtensorMap*>(map), CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, const_cast<float*>(base),
                         dims, strides, box, step, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                         CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw RuntimeError("cuTensorMapEncodeTiled refused a " + std::to_string(d.dims[1]) + " x " +
                       std::to_string(d.dims[0]) + " operand (error " + std::to_string(int(r)) + ")");
}

}  // namespace gemmlab
