"""gemmlab from Python: FP32 matrix products on CUDA arrays (PyTorch, CuPy, anything that speaks
DLPack or __cuda_array_interface__), computed by gemmlab's library.

    import torch, gemmlab
    c = gemmlab.matmul(a, b, mode="tensor_fp32")   # a, b: float32 CUDA tensors

Modes: "strict_fp32" (FP32 on the CUDA cores, like cuBLAS SGEMM), "tensor_fp32" (FP32-accurate
3xTF32 on the tensor cores), "tf32" (one TF32 product: about 1e-4 relative error). The call is
enqueued on the caller's current stream (PyTorch's current stream for torch tensors, CuPy's for
CuPy arrays, else the legacy default stream) or on `stream=` (a CUDA stream handle as an int, or
an object with .cuda_stream or .ptr). Transposed views run as transposes, without copies; other
strides are refused. Bad input raises ValueError, CUDA failures RuntimeError.
"""
from . import _gemmlab

__version__ = _gemmlab.__version__
commit = _gemmlab.commit

try:  # PyTorch's tensors take a fast path that reads their fields directly.
    import torch as _torch
    _Tensor, _float32 = _torch.Tensor, _torch.float32
    _PLAIN = (_Tensor, _torch.nn.Parameter)  # tensors whose fields are their memory's
    # The current stream as an int without building a Stream object (a few microseconds a call);
    # the public call where a PyTorch lacks it.
    _raw_stream = getattr(_torch._C, "_cuda_getCurrentRawStream", None) or (
        lambda index: _torch.cuda.current_stream(index).cuda_stream)
    _gemmlab.register_torch(_Tensor, _torch.nn.Parameter, _float32, _raw_stream)
    _matmul_tensors = _gemmlab.matmul_tensors
except ImportError:  # pragma: no cover - torch is optional
    _torch = _Tensor = _float32 = _raw_stream = _matmul_tensors = None
    _PLAIN = ()

_MODES = ("strict_fp32", "tensor_fp32", "tf32")


def version():
    """'0.1.0 (commit)'."""
    return f"{__version__} ({commit})"


def _stream_handle(stream, arrays):
    if stream is not None:
        for attr in ("cuda_stream", "ptr"):
            if hasattr(stream, attr):
                return int(getattr(stream, attr))
        return int(stream)
    first = arrays[0]
    if _torch is not None and isinstance(first, _Tensor) and first.is_cuda:
        return _raw_stream(first.get_device())
    module = type(first).__module__.split(".")[0]
    if module == "cupy":
        import cupy
        return cupy.cuda.get_current_stream().ptr
    return 0


def _view(x):
    """A torch CUDA float32 tensor as a View; anything else as it is (read by the native part)."""
    if type(x) in _PLAIN and x.is_cuda and x.dtype is _float32:
        if x.dim() == 2:
            r, c = x.shape
            s0, s1 = x.stride()
            return _gemmlab.View(x.data_ptr(), r, c, s0, s1, x.get_device())
        if x.dim() == 1:
            return _gemmlab.View.vector(x.data_ptr(), x.shape[0], x.stride(0), x.get_device())
    return x


def _shape(x, name, function):
    shape = getattr(x, "shape", None)
    if shape is None:
        _gemmlab.check_array(x, name, function)  # raises the one-line reason
    return tuple(shape)


def _empty(like, shape, function):
    """A new float32 array of the same kind and device as `like`."""
    if _torch is not None and isinstance(like, _torch.Tensor):
        return _torch.empty(shape, dtype=_torch.float32, device=like.device)
    module = type(like).__module__.split(".")[0]
    if module == "cupy":
        import cupy
        with like.device:
            return cupy.empty(shape, dtype=cupy.float32)
    _gemmlab.check_array(like, "a", function)  # a CPU or non-float32 array gets that reason first
    raise ValueError(f"gemmlab.{function}: cannot allocate a result like a {type(like).__name__}; pass out=")


def _check_mode(mode, function):
    if mode not in _MODES:
        raise ValueError(f"gemmlab.{function}: mode {mode!r} is not one of {', '.join(_MODES)}")


def matmul(a, b, *, mode="strict_fp32", out=None, alpha=1.0, beta=0.0, stream=None):
    """out = alpha * a @ b + beta * out for float32 CUDA matrices a (m x k) and b (k x n).

    Without out= a new m x n array of a's kind is returned (beta must then be 0)."""
    if stream is None and type(a) in _PLAIN:  # PyTorch tensors: read in C, one call
        result = _matmul_tensors(a, b, out, mode, alpha, beta)
        if result is not NotImplemented:
            return result
    _check_mode(mode, "matmul")
    if out is None:
        if beta != 0.0:
            raise ValueError("gemmlab.matmul: beta != 0 reads out; pass out=")
        sa, sb = _shape(a, "a", "matmul"), _shape(b, "b", "matmul")
        for name, shape in (("a", sa), ("b", sb)):
            if len(shape) != 2:
                raise ValueError(f"gemmlab.matmul: {name} is {len(shape)}-D: matmul takes matrices "
                                 "(gemmlab.matvec takes a vector)")
        out = _empty(a, (sa[0], sb[1]), "matmul")
    _gemmlab.matmul(_view(a), _view(b), _view(out), mode, float(alpha), float(beta), _stream_handle(stream, (a, b)))
    return out


def matvec(a, x, *, mode="strict_fp32", out=None, alpha=1.0, beta=0.0, stream=None):
    """out = alpha * a @ x + beta * out for a float32 CUDA matrix a (m x n) and vector x (n,).

    Vectors may have any positive stride; a may be row- or column-major. `mode` takes matmul's
    names; every mode computes in FP32 on the CUDA cores (GEMV is bound by memory: the tensor
    cores would read the same bytes)."""
    _check_mode(mode, "matvec")
    if out is None:
        if beta != 0.0:
            raise ValueError("gemmlab.matvec: beta != 0 reads out; pass out=")
        sa = _shape(a, "a", "matvec")
        if len(sa) != 2:
            raise ValueError(f"gemmlab.matvec: a is {len(sa)}-D: matvec takes a matrix and a vector")
        out = _empty(a, (sa[0],), "matvec")
    _gemmlab.matvec(_view(a), _view(x), _view(out), mode, float(alpha), float(beta), _stream_handle(stream, (a, x)))
    return out


def choose(m, n, k, *, mode="strict_fp32", trans_a=False, trans_b=False):
    """The kernel configuration the library runs for this row-major problem on the current GPU:
    a dict with family, params, source, why, workspace_bytes, predicted_us."""
    _check_mode(mode, "choose")
    return _gemmlab.choose(int(m), int(n), int(k), mode, bool(trans_a), bool(trans_b))


__all__ = ["matmul", "matvec", "choose", "version", "__version__"]
# Submodules, imported on demand: gemmlab.torch (PyTorch operators and the switch for torch.mm and
# nn.Linear), gemmlab.jax (an XLA FFI call for jax.jit).
