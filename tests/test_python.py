#!/usr/bin/env python3
"""The Python module: `test_python.py cpu` (no GPU: import, version, refusals) or `gpu`
(PyTorch CUDA tensors against torch.mm in float64; exit 77 without a GPU). PYTHONPATH must hold
the build's python/ folder."""
import sys
import unittest

import torch

import gemmlab

MODES = ("strict_fp32", "tensor_fp32", "tf32")


def tolerance(mode, k):
    fp32 = 2.0 ** -23 * (4 + 2 * k ** 0.5)  # docs/verification.md
    return fp32 + (2.0 ** -9 if mode == "tf32" else 0.0)


def scaled_error(c, a, b, alpha=1.0, beta=0.0, c0=None):
    """max |C - ref| / (|alpha| ||a_i|| ||b_j|| + |beta| |C0_ij|), float64 reference."""
    a64, b64 = a.double(), b.double()
    ref = alpha * (a64 @ b64)
    scale = abs(alpha) * a64.norm(dim=1)[:, None] * b64.norm(dim=0)[None, :]
    if c0 is not None and beta != 0.0:
        ref = ref + beta * c0.double()
        scale = scale + abs(beta) * c0.double().abs()
    err = (c.double() - ref).abs() / scale.clamp_min(1e-300)
    assert torch.isfinite(c).all(), "non-finite output"
    return float(err.max())


class CpuTests(unittest.TestCase):
    def test_version(self):
        self.assertRegex(gemmlab.version(), r"^\d+\.\d+\.\d+ \(.+\)$")
        self.assertEqual(gemmlab.__version__, gemmlab.version().split()[0])

    def test_cpu_tensors_are_refused(self):
        a = torch.ones(8, 8)
        with self.assertRaisesRegex(ValueError, r"gemmlab.matmul: a is on the CPU"):
            gemmlab.matmul(a, a)
        with self.assertRaisesRegex(ValueError, r"gemmlab.matvec: a is on the CPU"):
            gemmlab.matvec(a, torch.ones(8))

    def test_bad_mode(self):
        a = torch.ones(2, 2)
        with self.assertRaisesRegex(ValueError, r"mode 'fp16' is not one of strict_fp32, tensor_fp32, tf32"):
            gemmlab.matmul(a, a, mode="fp16")

    def test_not_an_array(self):
        with self.assertRaisesRegex(ValueError, r"a is a list: gemmlab takes CUDA arrays"):
            gemmlab.matmul([[1.0]], [[1.0]])

    def test_matvec_takes_the_modes(self):
        a = torch.ones(8, 8)
        with self.assertRaisesRegex(ValueError, r"gemmlab.matvec: mode 'fp16' is not one of strict_fp32, tensor_fp32, tf32"):
            gemmlab.matvec(a, torch.ones(8), mode="fp16")
        for mode in MODES:  # accepted, then refused for the CPU tensor
            with self.assertRaisesRegex(ValueError, r"gemmlab.matvec: a is on the CPU"):
                gemmlab.matvec(a, torch.ones(8), mode=mode)

    def test_beta_needs_out(self):
        a = torch.ones(2, 2)
        with self.assertRaisesRegex(ValueError, r"beta != 0 reads out"):
            gemmlab.matmul(a, a, beta=1.0)

    def test_cpu_view_objects_are_refused(self):
        # An object that speaks only DLPack takes the generic path.
        class DLPackOnly:
            def __init__(self, t):
                self.t, self.shape = t, t.shape

            def __dlpack__(self, stream=None):
                return self.t.__dlpack__()

            def __dlpack_device__(self):
                return self.t.__dlpack_device__()

        with self.assertRaisesRegex(ValueError, r"a is on the CPU"):
            gemmlab.matmul(DLPackOnly(torch.ones(2, 2)), DLPackOnly(torch.ones(2, 2)))


class GpuTests(unittest.TestCase):
    def setUp(self):
        torch.manual_seed(0)
        torch.backends.cuda.matmul.allow_tf32 = False

    def rand(self, *shape):
        return torch.rand(*shape, device="cuda") * 2 - 1

    def check(self, c, a, b, mode, **kw):
        err = scaled_error(c, a, b, **kw)
        self.assertLessEqual(err, tolerance(mode, a.shape[1]), f"{mode} {tuple(a.shape)}x{tuple(b.shape)}")

    def test_contiguous_all_modes(self):
        for m, n, k in [(64, 64, 64), (257, 129, 511), (1, 300, 77), (300, 1, 77), (1000, 17, 4096), (5, 3, 1)]:
            a, b = self.rand(m, k), self.rand(k, n)
            for mode in MODES:
                c = gemmlab.matmul(a, b, mode=mode)
                self.assertIs(type(c), torch.Tensor)
                self.assertEqual(c.shape, (m, n))
                self.assertEqual(c.device, a.device)
                torch.cuda.synchronize()
                self.check(c, a, b, mode)

    def test_transposed_views_and_strided_out(self):
        m, n, k = 123, 77, 301
        at = self.rand(k, m)  # a = at.t(): column-major, a transpose flag and no copy
        bt = self.rand(n, k)
        big = self.rand(m, k + 40)[:, 5:5 + k]  # a row-major view with a padded leading dimension
        for mode in MODES:
            for a in (at.t(), big):
                for b in (bt.t(), bt.t().contiguous()):
                    for out in (torch.empty(m, n, device="cuda"), torch.empty(n, m, device="cuda").t(),
                                torch.empty(m, n + 9, device="cuda")[:, :n]):
                        r = gemmlab.matmul(a, b, mode=mode, out=out)
                        self.assertIs(r, out)
                        torch.cuda.synchronize()
                        self.check(out, a, b, mode)

    def test_alpha_beta(self):
        a, b = self.rand(200, 300), self.rand(300, 100)
        c0 = self.rand(200, 100)
        for mode in MODES:
            c = c0.clone()
            gemmlab.matmul(a, b, mode=mode, out=c, alpha=-0.5, beta=0.75)
            torch.cuda.synchronize()
            self.check(c, a, b, mode, alpha=-0.5, beta=0.75, c0=c0)

    def test_side_stream_orders_with_torch(self):
        # The inputs are written on a side stream behind a long sleep: a product not enqueued on
        # that stream would read them too early.
        s = torch.cuda.Stream()
        src_a, b = self.rand(512, 512), self.rand(512, 512)
        a = torch.zeros_like(src_a)
        torch.cuda.synchronize()
        with torch.cuda.stream(s):
            torch.cuda._sleep(50_000_000)
            a.copy_(src_a)
            c = gemmlab.matmul(a, b, mode="tensor_fp32")
        s.synchronize()
        self.check(c, src_a, b, "tensor_fp32")

    def test_explicit_stream_argument(self):
        s = torch.cuda.Stream()
        a, b = self.rand(64, 32), self.rand(32, 48)
        torch.cuda.synchronize()
        c = gemmlab.matmul(a, b, stream=s)
        s.synchronize()
        self.check(c, a, b, "strict_fp32")

    def test_cuda_graph(self):
        for mode in MODES:
            # A shape first seen inside the capture: the library plans it in relaxed capture mode.
            m, n, k = 96 + MODES.index(mode), 160, 224
            a, b, c = self.rand(m, k), self.rand(k, n), torch.empty(m, n, device="cuda")
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            g = torch.cuda.CUDAGraph()
            with torch.cuda.stream(s):
                with torch.cuda.graph(g, stream=s):
                    gemmlab.matmul(a, b, mode=mode, out=c)
            torch.cuda.current_stream().wait_stream(s)
            for _ in range(2):
                a.copy_(self.rand(m, k))
                g.replay()
                torch.cuda.synchronize()
                self.check(c, a, b, mode)

    def test_matvec(self):
        m, n = 1000, 333
        a = self.rand(m, n)
        x = self.rand(3 * n)[::3]
        for av in (a, self.rand(n, m).t()):
            for mode in MODES:  # GEMV computes in FP32 in every mode
                y = gemmlab.matvec(av, x, mode=mode)
                torch.cuda.synchronize()
                self.check(y[:, None], av, x[:, None], "strict_fp32")
            y0 = self.rand(2 * m)
            out = y0.clone()[::2]
            gemmlab.matvec(av, x, out=out, alpha=2.0, beta=-1.0)
            torch.cuda.synchronize()
            self.check(out[:, None], av, x[:, None], "strict_fp32", alpha=2.0, beta=-1.0, c0=y0[::2][:, None])

    def test_generic_protocols(self):
        class DLPackOnly:
            def __init__(self, t):
                self.t, self.shape = t, t.shape

            def __dlpack__(self, stream=None):
                return self.t.__dlpack__(stream=stream)

            def __dlpack_device__(self):
                return self.t.__dlpack_device__()

        class CaiOnly:
            def __init__(self, t):
                self.t, self.shape = t, t.shape
                self.__cuda_array_interface__ = t.__cuda_array_interface__

        a, b = self.rand(70, 90), self.rand(90, 50)
        for wrap in (DLPackOnly, CaiOnly):
            c = torch.empty(70, 50, device="cuda")
            gemmlab.matmul(wrap(a.t().contiguous().t()), wrap(b), out=wrap(c))
            torch.cuda.synchronize()
            self.check(c, a, b, "strict_fp32")

    def test_cupy(self):
        try:
            import cupy
        except ImportError:
            self.skipTest("CuPy is not installed")
        a = cupy.random.rand(300, 200, dtype=cupy.float32)
        b = cupy.random.rand(200, 100, dtype=cupy.float32)
        for mode in MODES:
            c = gemmlab.matmul(a, b, mode=mode)
            self.assertIsInstance(c, cupy.ndarray)
            cupy.cuda.get_current_stream().synchronize()
            self.check(torch.as_tensor(c, device="cuda"), torch.as_tensor(a, device="cuda"),
                       torch.as_tensor(b, device="cuda"), mode)

    def test_refusals(self):
        a = self.rand(8, 8)
        cases = [
            (lambda: gemmlab.matmul(a.double(), a), r"a is not float32"),
            (lambda: gemmlab.matmul(a, self.rand(9, 8)), r"a is 8x8 and b is 9x8"),
            (lambda: gemmlab.matmul(a[:, ::2], self.rand(4, 8)), r"a has strides \(8, 2\)"),
            (lambda: gemmlab.matmul(a, a, out=a), r"out overlaps a"),
            (lambda: gemmlab.matmul(a, a, out=self.rand(8, 7)), r"out is 8x7, the product is 8x8"),
            (lambda: gemmlab.matmul(a, self.rand(8)), r"b is 1-D"),
            (lambda: gemmlab.matvec(a, self.rand(7)), r"a is 8x8 and x has 7 elements"),
        ]
        for call, message in cases:
            with self.assertRaisesRegex(ValueError, message):
                call()

    def test_choose(self):
        c = gemmlab.choose(4096, 4096, 4096, mode="tensor_fp32")
        self.assertTrue(c["family"])
        self.assertIn("why", c)


if __name__ == "__main__":
    which = sys.argv[1] if len(sys.argv) > 1 else "cpu"
    if which == "gpu" and not torch.cuda.is_available():
        print("SKIP: no CUDA device (torch.cuda.is_available() is False)")
        sys.exit(77)
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(CpuTests if which == "cpu" else GpuTests)
    sys.exit(0 if unittest.TextTestRunner(verbosity=2).run(suite).wasSuccessful() else 1)
