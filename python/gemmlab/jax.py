"""gemmlab.jax: gemmlab's matrix product as a JAX function that works under jax.jit, jax.grad and
jax.vmap, through the XLA FFI (jax.ffi): XLA calls the library on its own stream with its own
buffers, no copies and no DLPack.

    import jax, jax.numpy as jnp, gemmlab.jax as gj
    c = jax.jit(lambda a, b: gj.matmul(a, b, mode="tensor_fp32"))(a, b)   # float32 (m, k) @ (k, n)

On the GPU only (the handler is registered for the CUDA platform). Needs a gemmlab built for a
Python with JAX (cmake/python.cmake finds its FFI headers).
"""
import functools

import jax
import jax.numpy as jnp

from . import _check_mode, _gemmlab

_TARGET = "gemmlab_matmul"
if not hasattr(_gemmlab, "jax_matmul_handler"):
    raise ImportError("gemmlab.jax: this gemmlab was built without JAX's FFI headers "
                      "(build it for a Python that has JAX)")
jax.ffi.register_ffi_target(_TARGET, _gemmlab.jax_matmul_handler, platform="CUDA")

__all__ = ["matmul"]


def _call(a, b, mode, trans_a, trans_b):
    m = a.shape[1] if trans_a else a.shape[0]
    n = b.shape[0] if trans_b else b.shape[1]
    out = jax.ShapeDtypeStruct((m, n), jnp.float32)
    return jax.ffi.ffi_call(_TARGET, out, vmap_method="sequential")(
        a, b, mode=mode, trans_a=bool(trans_a), trans_b=bool(trans_b))


@functools.partial(jax.custom_vjp, nondiff_argnums=(2,))
def _matmul(a, b, mode):
    return _call(a, b, mode, False, False)


def _forward(a, b, mode):
    return _call(a, b, mode, False, False), (a, b)


def _backward(mode, saved, grad):
    # grad bᵀ and aᵀ grad, with the transposes read as stored (flags, not copies).
    a, b = saved
    return _call(grad, b, mode, False, True), _call(a, grad, mode, True, False)


_matmul.defvjp(_forward, _backward)


def matmul(a, b, *, mode="strict_fp32"):
    """a @ b for float32 matrices a (m, k) and b (k, n) on the GPU, computed by gemmlab in `mode`
    ("strict_fp32", "tensor_fp32" or "tf32", as gemmlab.matmul)."""
    _check_mode(mode, "jax.matmul")
    a, b = jnp.asarray(a), jnp.asarray(b)
    if a.ndim != 2 or b.ndim != 2:
        raise ValueError(f"gemmlab.jax.matmul: takes matrices, not {a.ndim}-D and {b.ndim}-D arrays")
    if a.dtype != jnp.float32 or b.dtype != jnp.float32:
        raise ValueError(f"gemmlab.jax.matmul: takes float32, not {a.dtype} and {b.dtype}")
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"gemmlab.jax.matmul: a is {a.shape[0]}x{a.shape[1]} and b is {b.shape[0]}x{b.shape[1]}")
    return _matmul(a, b, mode)
