// gemmlab.jax's native part: sgemm as an XLA FFI handler, so that jax.jit programs call it on
// XLA's own stream with XLA's buffers (jax.ffi.ffi_call; python/gemmlab/jax.py is the API). Built
// into the module when the Python it is built for has JAX (cmake/python.cmake).
#include <string>
#include <string_view>

#include <cuda_runtime.h>

#include "gemmlab/error.hpp"
#include "gemmlab/gemmlab.hpp"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

// c = op(a) op(b) for row-major XLA arrays (XLA's default layout: compact, last dimension fastest);
// a transposed operand is read as stored, without a copy.
ffi::Error matmul(cudaStream_t stream, ffi::Buffer<ffi::F32> a, ffi::Buffer<ffi::F32> b,
                  ffi::ResultBuffer<ffi::F32> c, std::string_view mode, bool trans_a, bool trans_b) {
  const auto da = a.dimensions(), db = b.dimensions(), dc = c->dimensions();
  if (da.size() != 2 || db.size() != 2 || dc.size() != 2)
    return ffi::Error::InvalidArgument("gemmlab.jax.matmul: a, b and the result must be matrices");
  const int64_t m = trans_a ? da[1] : da[0], k = trans_a ? da[0] : da[1];
  const int64_t kb = trans_b ? db[1] : db[0], n = trans_b ? db[0] : db[1];
  if (k != kb || dc[0] != m || dc[1] != n)
    return ffi::Error::InvalidArgument("gemmlab.jax.matmul: shapes do not match (" + std::to_string(m) + "x" +
                                       std::to_string(k) + " times " + std::to_string(kb) + "x" + std::to_string(n) +
                                       " into " + std::to_string(dc[0]) + "x" + std::to_string(dc[1]) + ")");
  if (m == 0 || n == 0) return ffi::Error::Success();
  if (k == 0) {  // an empty sum: zeros, as jnp.dot gives
    if (cudaError_t e = cudaMemsetAsync(c->typed_data(), 0, size_t(m * n) * sizeof(float), stream); e != cudaSuccess)
      return ffi::Error::Internal(std::string("gemmlab.jax.matmul: ") + cudaGetErrorString(e));
    return ffi::Error::Success();
  }
  try {
    const auto t = [](bool yes) { return yes ? gemmlab::Trans::yes : gemmlab::Trans::no; };
    gemmlab::sgemm(gemmlab::Layout::row_major, t(trans_a), t(trans_b), m, n, k, 1.0f, a.typed_data(), da[1],
                   b.typed_data(), db[1], 0.0f, c->typed_data(), n, stream, gemmlab::parse_math_mode(std::string(mode)));
  } catch (const gemmlab::UsageError& e) {
    return ffi::Error::InvalidArgument(std::string("gemmlab.jax.matmul: ") + e.what());
  } catch (const std::exception& e) {
    return ffi::Error::Internal(std::string("gemmlab.jax.matmul: ") + e.what());
  }
  return ffi::Error::Success();
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(GemmlabJaxMatmul, matmul,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::PlatformStream<cudaStream_t>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Attr<std::string_view>("mode")
                                  .Attr<bool>("trans_a")
                                  .Attr<bool>("trans_b"));

void* gemmlab_jax_matmul_handler() { return reinterpret_cast<void*>(GemmlabJaxMatmul); }
