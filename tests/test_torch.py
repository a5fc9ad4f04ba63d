#!/usr/bin/env python3
"""gemmlab.torch: `test_torch.py cpu` (no GPU: import, the switch leaving CPU tensors and other
dtypes to PyTorch, refusals, operator registration and fake-tensor shapes where this PyTorch has
torch.library.custom_op) or `gpu` (values and gradients against float64, the switch, torch.compile,
CUDA graphs, a short training run; exit 77 without a GPU). PYTHONPATH must hold the package."""
import sys
import unittest

import torch

import gemmlab.torch as gt

MODES = ("strict_fp32", "tensor_fp32", "tf32")
HAS_CUSTOM_OP = hasattr(torch.library, "custom_op")
NO_CUSTOM_OP = f"PyTorch {torch.__version__} has no torch.library.custom_op (2.4 and later)"


def tolerance(mode, k):
    fp32 = 2.0 ** -23 * (4 + 2 * k ** 0.5)  # docs/verification.md
    return fp32 + (2.0 ** -9 if mode == "tf32" else 0.0)


def scaled_error(c, a, b):
    """max |C - A B| / (||a_i|| ||b_j||) over the last two dimensions, float64 reference."""
    a64, b64 = a.double(), b.double()
    ref = torch.matmul(a64, b64)
    if a64.dim() == 1:
        a64 = a64.unsqueeze(0)
    if b64.dim() == 1:
        b64 = b64.unsqueeze(-1)
    scale = a64.norm(dim=-1).unsqueeze(-1) * b64.norm(dim=-2).unsqueeze(-2)
    scale = scale.reshape(ref.shape) if scale.numel() == ref.numel() else scale
    assert torch.isfinite(c).all(), "non-finite output"
    if ref.numel() == 0:
        return 0.0
    return float(((c.double() - ref).abs() / scale.clamp_min(1e-300)).max())


class Counting:
    """Counts the products that gemmlab computes inside the block: gemmlab.torch's two ways into
    the library (the native call for plain tensors, gemmlab.matmul for the rest)."""

    def __enter__(self):
        self.calls = 0
        self.saved = {name: getattr(gt, name) for name in ("_matmul_tensors", "_library_matmul")}

        def counting(call):
            def counted(*args, **kwargs):
                result = call(*args, **kwargs)
                if result is not NotImplemented:
                    self.calls += 1
                return result
            return counted

        for name, call in self.saved.items():
            setattr(gt, name, counting(call))
        return self

    def __exit__(self, *exc):
        for name, call in self.saved.items():
            setattr(gt, name, call)


class CpuTests(unittest.TestCase):
    def test_switch_leaves_cpu_tensors_to_pytorch(self):
        a, b = torch.randn(5, 3), torch.randn(3, 4)
        lin = torch.nn.Linear(3, 2)
        with Counting() as n, gt.use("tensor_fp32"):
            self.assertTrue(torch.equal(torch.mm(a, b), a.mm(b)))
            self.assertTrue(torch.equal(a @ b, torch.matmul(a, b)))
            self.assertEqual(lin(a).shape, (5, 2))
            self.assertEqual(torch.mm(a.double(), b.double()).dtype, torch.float64)
            self.assertEqual(torch.bmm(a[None], b[None]).shape, (1, 5, 4))
        self.assertEqual(n.calls, 0)

    def test_functions_fall_through_off_the_gpu(self):
        a = torch.randn(5, 3, requires_grad=True)
        b = torch.randn(3, 4)
        c = gt.mm(a, b)
        self.assertTrue(torch.allclose(c, a @ b))
        c.sum().backward()
        self.assertTrue(torch.allclose(a.grad, torch.ones(5, 4) @ b.t()))
        self.assertEqual(gt.linear(torch.randn(2, 7, 3), torch.randn(6, 3), torch.randn(6)).shape, (2, 7, 6))
        self.assertEqual(gt.matmul(torch.randn(2, 1, 5, 3), torch.randn(4, 3, 2)).shape, (2, 4, 5, 2))

    def test_enable_and_disable(self):
        self.assertIsNone(gt.enabled_mode())
        gt.enable("strict_fp32")
        try:
            self.assertEqual(gt.enabled_mode(), "strict_fp32")
            gt.enable("tf32")  # replaces, never stacks
            self.assertEqual(gt.enabled_mode(), "tf32")
        finally:
            gt.disable()
        self.assertIsNone(gt.enabled_mode())

    def test_bad_modes(self):
        with self.assertRaisesRegex(ValueError, r"gemmlab.torch.use: mode 'fp16' is not one of"):
            with gt.use("fp16"):
                pass
        with self.assertRaisesRegex(ValueError, r"gemmlab.torch.enable: mode 'bf16'"):
            gt.enable("bf16")
        with self.assertRaisesRegex(ValueError, r"gemmlab.torch.mm: mode 'x'"):
            gt.mm(torch.ones(2, 2), torch.ones(2, 2), mode="x")
        with self.assertRaisesRegex(ValueError, r"takes matrices"):
            gt.mm(torch.ones(2, 2, 2), torch.ones(2, 2))

    @unittest.skipUnless(HAS_CUSTOM_OP, NO_CUSTOM_OP)
    def test_operator_is_registered(self):
        self.assertTrue(hasattr(torch.ops.gemmlab, "mm"))
        schema = str(torch.ops.gemmlab.mm.default._schema)
        self.assertIn("gemmlab::mm(Tensor a, Tensor b, str mode) -> Tensor", schema)

    @unittest.skipUnless(HAS_CUSTOM_OP, NO_CUSTOM_OP)
    def test_fake_tensor_shapes(self):
        from torch._subclasses.fake_tensor import FakeTensorMode
        with FakeTensorMode():
            a = torch.empty(7, 5, device="meta")
            b = torch.empty(5, 3, device="meta")
            self.assertEqual(torch.ops.gemmlab.mm(a, b, "tensor_fp32").shape, (7, 3))
            with self.assertRaises(Exception):
                torch.ops.gemmlab.mm(a, a, "tensor_fp32")


class GpuTests(unittest.TestCase):
    def setUp(self):
        torch.manual_seed(0)
        torch.backends.cuda.matmul.allow_tf32 = False

    def rand(self, *shape, **kw):
        return (torch.rand(*shape, device="cuda") * 2 - 1).requires_grad_(kw.get("grad", False))

    def check(self, c, a, b, mode):
        self.assertEqual(c.dtype, torch.float32)
        self.assertEqual(c.shape, torch.matmul(a.double(), b.double()).shape)
        err = scaled_error(c.detach(), a.detach(), b.detach())
        self.assertLessEqual(err, tolerance(mode, a.shape[-1]), f"{mode} {tuple(a.shape)} @ {tuple(b.shape)}")

    def test_products_of_every_shape_kind(self):
        cases = [((64, 96), (96, 80)), ((257, 33), (33, 129)), ((1, 300), (300, 7)), ((300,), (300, 5)),
                 ((20, 300), (300,)), ((3, 50, 40), (40, 30)), ((2, 3, 17, 40), (40,)), ((4, 17, 9), (4, 9, 13)),
                 ((2, 1, 5, 8), (3, 8, 6)), ((7,), (2, 7, 3)), ((9, 8), (5, 8, 4))]
        for mode in MODES:
            for sa, sb in cases:
                # Fresh inputs for every product: a stale result cannot pass.
                a, b = self.rand(*sa), self.rand(*sb)
                with Counting() as n:
                    c = gt.matmul(a, b, mode)
                torch.cuda.synchronize()
                self.assertGreater(n.calls, 0, f"{sa} @ {sb} did not reach gemmlab")
                self.check(c, a, b, mode)

    def test_transposed_and_strided_operands(self):
        base = self.rand(300, 200)
        for a in (base.t(), base[::2, :], base[:, 10:110]):
            b = self.rand(a.shape[1], 70)
            for bb in (b, b.t().contiguous().t(), self.rand(70, 2 * a.shape[1])[:, ::2].t()):
                c = gt.mm(a, bb, "tensor_fp32")
                torch.cuda.synchronize()
                self.check(c, a, bb, "tensor_fp32")

    def test_empty_and_zero_k(self):
        self.assertEqual(gt.mm(self.rand(0, 5), self.rand(5, 3)).shape, (0, 3))
        z = gt.mm(self.rand(4, 0), self.rand(0, 3))
        self.assertTrue(torch.equal(z, torch.zeros(4, 3, device="cuda")))

    def test_gradients_against_float64(self):
        for mode in ("strict_fp32", "tensor_fp32"):
            for sa, sb in [((65, 33), (33, 47)), ((3, 20, 16), (16, 24)), ((2, 9, 16), (2, 16, 5))]:
                a, b = self.rand(*sa, grad=True), self.rand(*sb, grad=True)
                w = self.rand(*torch.matmul(a, b).shape)
                (gt.matmul(a, b, mode) * w).sum().backward()
                a64, b64 = a.detach().double().requires_grad_(), b.detach().double().requires_grad_()
                (torch.matmul(a64, b64) * w.double()).sum().backward()
                for got, ref in ((a.grad, a64.grad), (b.grad, b64.grad)):
                    err = float((got.double() - ref).abs().max() / ref.abs().max())
                    self.assertLess(err, 1e-5, f"{mode} {sa} {sb}")
        x, w, bias = self.rand(8, 5, 32, grad=True), self.rand(16, 32, grad=True), self.rand(16, grad=True)
        gt.linear(x, w, bias).square().sum().backward()
        x64, w64, b64 = (t.detach().double().requires_grad_() for t in (x, w, bias))
        torch.nn.functional.linear(x64, w64, b64).square().sum().backward()
        for got, ref in ((x.grad, x64.grad), (w.grad, w64.grad), (bias.grad, b64.grad)):
            self.assertLess(float((got.double() - ref).abs().max() / ref.abs().max()), 1e-5)

    def test_switch_routes_torch_products(self):
        lin = torch.nn.Linear(64, 32).cuda()
        x = self.rand(10, 64)
        a, b = self.rand(40, 64), self.rand(64, 24)
        with Counting() as n, gt.use("tensor_fp32"):
            outs = [torch.mm(a, b), a @ b, torch.matmul(a, b), a.mm(b), torch.bmm(a[None], b[None])[0]]
            y = lin(x)
            self.assertEqual(n.calls, 6)
            # Not gemmlab's: float64, an out= argument.
            torch.mm(a.double(), b.double())
            torch.mm(a, b, out=torch.empty(40, 24, device="cuda"))
            self.assertEqual(n.calls, 6)
            y.sum().backward()  # the weight's and the input's gradients: 1 (x needs none)
            self.assertEqual(n.calls, 7)
        torch.cuda.synchronize()
        for c in outs:
            self.check(c, a, b, "tensor_fp32")
        ref = x.double() @ lin.weight.double().t() + lin.bias.double()
        self.assertLess(float((y.double() - ref).abs().max()), 1e-5)
        with Counting() as n:
            torch.mm(a, b)
        self.assertEqual(n.calls, 0, "the switch must end with its block")

    @unittest.skipUnless(HAS_CUSTOM_OP, NO_CUSTOM_OP)
    def test_compile_fullgraph(self):
        torch._dynamo.reset()
        model = torch.nn.Sequential(torch.nn.Linear(96, 128), torch.nn.ReLU(), torch.nn.Linear(128, 16)).cuda()

        def direct(a, b):
            return gt.mm(a, b, "tensor_fp32").relu()

        def switched(x):
            with gt.use("tensor_fp32"):
                return model(x)

        a, b, x = self.rand(50, 70), self.rand(70, 30), self.rand(33, 96)
        compiled = torch.compile(direct, fullgraph=True)
        self.assertLess(float((compiled(a, b) - direct(a, b)).abs().max()), 1e-5)
        compiled_switch = torch.compile(switched, fullgraph=True)
        with Counting() as n:
            y = compiled_switch(x)
            y.sum().backward()
        self.assertGreater(n.calls, 0)
        with torch.no_grad():
            ref = model(x)
        self.assertLess(float((y.detach() - ref).abs().max()), 1e-4)
        # The switch entered outside the compiled function.
        gt.enable("tensor_fp32")
        try:
            with Counting() as n:
                y2 = torch.compile(model, fullgraph=True)(x)
            self.assertGreater(n.calls, 0)
        finally:
            gt.disable()
        self.assertLess(float((y2.detach() - ref).abs().max()), 1e-4)

    def test_cuda_graph(self):
        a, b = self.rand(96, 64), self.rand(64, 80)
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            gt.mm(a, b)  # plans the shape outside the capture
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            c = gt.mm(a, b, "tensor_fp32")
        for _ in range(2):
            a.copy_(self.rand(96, 64))
            b.copy_(self.rand(64, 80))
            g.replay()
            torch.cuda.synchronize()
            self.check(c, a, b, "tensor_fp32")

    def test_short_training_follows_fp32(self):
        def run(switch):
            torch.manual_seed(1)
            model = torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.Tanh(), torch.nn.Linear(256, 256),
                                        torch.nn.Tanh(), torch.nn.Linear(256, 10)).cuda()
            opt = torch.optim.SGD(model.parameters(), lr=0.05)
            x, y = torch.randn(512, 256, device="cuda"), torch.randint(0, 10, (512,), device="cuda")
            losses = []
            for _ in range(20):
                with switch():
                    loss = torch.nn.functional.cross_entropy(model(x), y)
                    opt.zero_grad()
                    loss.backward()
                opt.step()
                losses.append(loss.item())
            return losses

        import contextlib
        ref = run(contextlib.nullcontext)
        ours = run(lambda: gt.use("tensor_fp32"))
        for i, (r, o) in enumerate(zip(ref, ours)):
            self.assertLess(abs(o - r) / abs(r), 1e-3, f"step {i}: {o} vs {r}")
        self.assertLess(ref[-1], ref[0])


if __name__ == "__main__":
    which = sys.argv[1] if len(sys.argv) > 1 else "cpu"
    if which == "gpu" and not torch.cuda.is_available():
        print("SKIP: no CUDA device (torch.cuda.is_available() is False)")
        sys.exit(77)
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(CpuTests if which == "cpu" else GpuTests)
    sys.exit(0 if unittest.TextTestRunner(verbosity=2).run(suite).wasSuccessful() else 1)
