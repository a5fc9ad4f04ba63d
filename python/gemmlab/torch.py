"""gemmlab.torch: gemmlab's products as PyTorch operators, and a switch that sends PyTorch's own
float32 products on CUDA to them.

    import gemmlab.torch as gt
    y = gt.mm(a, b)                     # mode="tensor_fp32" by default; differentiable
    y = gt.linear(x, weight, bias)      # as torch.nn.functional.linear
    with gt.use("tensor_fp32"):         # torch.mm, torch.matmul, @, torch.bmm, F.linear, nn.Linear
        loss = model(x).sum()           # on float32 CUDA tensors run in gemmlab
    gt.enable("tensor_fp32") / gt.disable()   # the same, until switched off

The operators are `torch.ops.gemmlab.mm` (PyTorch 2.4 and later: torch.library.custom_op, with a
fake-tensor implementation for torch.compile(fullgraph=True) and an autograd formula whose
gradients are gemmlab products too). Eager calls skip PyTorch's dispatcher: without gradients
they call the library directly, with gradients through a torch.autograd.Function with the same
formula (a lighter node than the operator's). On a PyTorch older than 2.4 there is no operator and
no torch.compile; the rest works.

The switch is a torch function mode, as PyTorch keeps them: per thread (enable() switches the
calling thread; a product's backward runs gemmlab's formula wherever autograd runs it). Anything
but float32 tensors on one CUDA device goes to PyTorch unchanged; batched products run as one
product per matrix; a single matrix times a batch folds the batch into the rows where it can.
"""
import contextlib
import itertools

import torch
from torch import Tensor

from . import _check_mode, _matmul_tensors
from . import matmul as _library_matmul

_HAS_CUSTOM_OP = hasattr(torch.library, "custom_op")  # PyTorch >= 2.4
_is_compiling = getattr(getattr(torch, "compiler", None), "is_compiling", lambda: False)
_PLAIN = (Tensor, torch.nn.Parameter)  # tensors whose fields are their memory's (no subclass wrapper)

__all__ = ["mm", "matmul", "bmm", "linear", "use", "enable", "disable", "enabled_mode"]


def _ours(*tensors):
    """True when gemmlab computes this product: float32 tensors on one CUDA device."""
    first = tensors[0]
    if not isinstance(first, Tensor) or not first.is_cuda:
        return False
    device = first.device
    return all(isinstance(t, Tensor) and t.dtype is torch.float32 and t.device == device for t in tensors)


def _readable(t):
    """A matrix the library reads as stored (row- or column-major with a leading dimension), else a copy."""
    r, c = t.shape
    s0, s1 = t.stride()
    if (s1 == 1 or c <= 1) and (r <= 1 or s0 >= max(1, c)):
        return t
    if (s0 == 1 or r <= 1) and (c <= 1 or s1 >= max(1, r)):
        return t
    return t.contiguous()


def _mm_kernel(a, b, mode):
    """The product itself: a new (m, n) tensor; PyTorch's where gemmlab does not take the inputs."""
    if a.dim() != 2 or b.dim() != 2:
        raise ValueError(f"gemmlab.torch.mm: takes matrices, not {a.dim()}-D and {b.dim()}-D tensors")
    if not _ours(a, b):
        return torch.mm(a, b)
    m, k = a.shape
    if b.shape[0] != k:
        raise ValueError(f"gemmlab.torch.mm: a is {m}x{k} and b is {b.shape[0]}x{b.shape[1]}")
    if m == 0 or b.shape[1] == 0 or k == 0:
        return a.new_zeros((m, b.shape[1]))
    return _library_matmul(_readable(a), _readable(b), mode=mode)


def _setup_context(ctx, inputs, output):
    a, b, mode = inputs
    ctx.save_for_backward(a, b)
    ctx.mode = mode


def _backward(ctx, grad):
    # d(a b)/da = grad bᵀ, d(a b)/db = aᵀ grad: gemmlab products on transposed views (no copies).
    a, b = ctx.saved_tensors
    grad_a = mm(grad, b.t(), mode=ctx.mode) if ctx.needs_input_grad[0] else None
    grad_b = mm(a.t(), grad, mode=ctx.mode) if ctx.needs_input_grad[1] else None
    return grad_a, grad_b, None


class _MM(torch.autograd.Function):
    """Eager calls that need gradients: a lighter autograd node than the custom operator's."""
    @staticmethod
    def forward(ctx, a, b, mode):
        ctx.save_for_backward(a, b)
        ctx.mode = mode
        return _mm_kernel(a, b, mode)

    backward = staticmethod(_backward)


if _HAS_CUSTOM_OP:
    @torch.library.custom_op("gemmlab::mm", mutates_args=())
    def _mm_op(a: Tensor, b: Tensor, mode: str) -> Tensor:
        return _mm_kernel(a, b, mode)

    @_mm_op.register_fake
    def _(a, b, mode):
        torch._check(a.dim() == 2 and b.dim() == 2, lambda: "gemmlab::mm takes matrices")
        torch._check(a.shape[1] == b.shape[0], lambda: f"gemmlab::mm: {tuple(a.shape)} times {tuple(b.shape)}")
        return a.new_empty((a.shape[0], b.shape[1]))

    _mm_op.register_autograd(_backward, setup_context=_setup_context)


def mm(a, b, mode="tensor_fp32"):
    """a @ b for matrices, as torch.mm, computed by gemmlab in `mode` (see gemmlab.matmul)."""
    plain = type(a) in _PLAIN and type(b) in _PLAIN
    if _HAS_CUSTOM_OP and (_is_compiling() or not plain):
        # Traced (Dynamo; AOTAutograd tracing the backward with fake or functional tensors): the
        # operator, which the trace keeps opaque.
        _check_mode(mode, "torch.mm")
        return torch.ops.gemmlab.mm(a, b, mode)
    if torch.is_grad_enabled() and (a.requires_grad or b.requires_grad):
        _check_mode(mode, "torch.mm")
        return _MM.apply(a, b, mode)
    if _matmul_tensors is not None and plain:
        # The library's own checks first, in one native call; whatever it declines or refuses
        # (CPU tensors, K = 0, strides it cannot read, a bad mode) takes the general path.
        try:
            result = _matmul_tensors(a, b, None, mode, 1.0, 0.0)
            if result is not NotImplemented:
                return result
        except ValueError:
            pass
    _check_mode(mode, "torch.mm")
    return _mm_kernel(a, b, mode)


def _batched(a, b, mode):
    """(..., m, k) @ (..., k, n) with broadcast batch dimensions: one product per matrix."""
    batch = torch.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = a.expand(*batch, *a.shape[-2:])
    b = b.expand(*batch, *b.shape[-2:])
    if a.shape[-1] != b.shape[-2]:
        raise RuntimeError(f"gemmlab.torch.matmul: {tuple(a.shape)} and {tuple(b.shape)} cannot be multiplied")
    out = [mm(a[i], b[i], mode) for i in itertools.product(*(range(s) for s in batch))]
    if not out:
        return a.new_zeros((*batch, a.shape[-2], b.shape[-1]))
    return torch.stack(out).reshape(*batch, a.shape[-2], b.shape[-1])


def matmul(a, b, mode="tensor_fp32"):
    """torch.matmul's semantics (vectors, matrices, broadcast batches), computed by gemmlab."""
    if a.dim() == 0 or b.dim() == 0:
        raise RuntimeError("gemmlab.torch.matmul: both arguments need at least 1 dimension")
    if a.dim() == 1 and b.dim() == 1:
        return torch.dot(a, b)  # a dot product is no matrix product
    if b.dim() == 1:
        return matmul(a, b.unsqueeze(-1), mode).squeeze(-1)
    if a.dim() == 1:
        return matmul(a.unsqueeze(0), b, mode).squeeze(-2)
    if b.dim() == 2:
        # A batch times one matrix: the batch's rows are one product's rows.
        lead = a.shape[:-1]
        return mm(a.reshape(-1, a.shape[-1]), b, mode).reshape(*lead, b.shape[-1])
    return _batched(a, b, mode)


def bmm(a, b, mode="tensor_fp32"):
    """torch.bmm: (B, m, k) @ (B, k, n), one product per matrix."""
    if a.dim() != 3 or b.dim() != 3 or a.shape[0] != b.shape[0]:
        raise RuntimeError(f"gemmlab.torch.bmm: {tuple(a.shape)} and {tuple(b.shape)} are not two batches of one size")
    return _batched(a, b, mode)


def linear(x, weight, bias=None, mode="tensor_fp32"):
    """torch.nn.functional.linear: x @ weightᵀ + bias, computed by gemmlab (weightᵀ is read as stored)."""
    lead = x.shape[:-1]
    y = mm(x.reshape(-1, x.shape[-1]), weight.t(), mode)
    if bias is not None:
        y = y + bias
    return y.reshape(*lead, weight.shape[0])


# The switch: which PyTorch functions it takes, and how each maps to gemmlab's.
def _route_mm(mode, a, b, *, out=None):
    if out is not None or not _ours(a, b):
        return NotImplemented
    return mm(a, b, mode)


def _route_matmul(mode, a, b, *, out=None):
    if out is not None or not _ours(a, b):
        return NotImplemented
    return matmul(a, b, mode)


def _route_rmatmul(mode, b, a):  # a @ b dispatched to b.__rmatmul__(a)
    return _route_matmul(mode, a, b)


def _route_bmm(mode, a, b, *, out=None):
    if out is not None or not _ours(a, b):
        return NotImplemented
    return bmm(a, b, mode)


def _route_linear(mode, x, weight, bias=None):
    if not _ours(x, weight) or (bias is not None and not _ours(x, bias)):
        return NotImplemented
    return linear(x, weight, bias, mode)


_ROUTES = {
    torch.mm: _route_mm, Tensor.mm: _route_mm,
    torch.matmul: _route_matmul, Tensor.matmul: _route_matmul, Tensor.__matmul__: _route_matmul,
    Tensor.__rmatmul__: _route_rmatmul,
    torch.bmm: _route_bmm, Tensor.bmm: _route_bmm,
    torch.nn.functional.linear: _route_linear,
}


class _Switch(torch.overrides.TorchFunctionMode):
    def __init__(self, mode):
        super().__init__()
        self.mode = mode

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        route = _ROUTES.get(func)
        if route is not None:
            result = route(self.mode, *args, **kwargs)
            if result is not NotImplemented:
                return result
        return func(*args, **kwargs)


@contextlib.contextmanager
def use(mode="tensor_fp32"):
    """Within the block, this thread's float32 CUDA torch.mm, torch.matmul, @, torch.bmm,
    F.linear and nn.Linear run in gemmlab in `mode`."""
    _check_mode(mode, "torch.use")
    with _Switch(mode):
        yield


_enabled = []  # the switch enable() entered, at most one


def enable(mode="tensor_fp32"):
    """Switches this thread's float32 CUDA products to gemmlab in `mode` until disable()."""
    _check_mode(mode, "torch.enable")
    disable()
    switch = _Switch(mode)
    switch.__enter__()
    _enabled.append(switch)


def disable():
    """Ends enable(); products go to PyTorch again."""
    while _enabled:
        _enabled.pop().__exit__(None, None, None)


def enabled_mode():
    """The mode enable() set, or None."""
    return _enabled[-1].mode if _enabled else None

