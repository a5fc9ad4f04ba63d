#!/usr/bin/env python3
"""gemmlab.jax on the GPU: matmul under jax.jit, jax.grad and jax.vmap against float64 numpy, and
its refusals. Exit 77 (skipped) without JAX, without JAX's GPU backend, or for a gemmlab built
without JAX's FFI headers. PYTHONPATH must hold the package."""
import os
import sys
import unittest

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # leave the GPU to the library too

try:
    import jax
    import jax.numpy as jnp
    import numpy as np
except ImportError as e:
    print(f"SKIP: {e}")
    sys.exit(77)
if not any(d.platform == "gpu" for d in jax.devices()):
    print(f"SKIP: JAX has no GPU backend here ({jax.devices()})")
    sys.exit(77)
try:
    import gemmlab.jax as gj
except ImportError as e:
    print(f"SKIP: {e}")
    sys.exit(77)

MODES = ("strict_fp32", "tensor_fp32", "tf32")


def tolerance(mode, k):
    return 2.0 ** -23 * (4 + 2 * k ** 0.5) + (2.0 ** -9 if mode == "tf32" else 0.0)


def scaled_error(c, a, b):
    a64, b64 = np.asarray(a, np.float64), np.asarray(b, np.float64)
    scale = np.linalg.norm(a64, axis=1)[:, None] * np.linalg.norm(b64, axis=0)[None, :]
    c = np.asarray(c, np.float64)
    assert np.isfinite(c).all()
    return float((np.abs(c - a64 @ b64) / np.maximum(scale, 1e-300)).max())


class JaxTests(unittest.TestCase):
    def setUp(self):
        self.rng = np.random.default_rng(0)

    def rand(self, *shape):
        return jnp.asarray(self.rng.uniform(-1, 1, shape).astype(np.float32))

    def test_jit_every_mode(self):
        for mode in MODES:
            f = jax.jit(lambda a, b, mode=mode: gj.matmul(a, b, mode=mode))
            for m, n, k in [(64, 64, 64), (257, 129, 511), (1, 300, 77), (300, 1, 77), (1000, 17, 2048)]:
                a, b = self.rand(m, k), self.rand(k, n)  # fresh inputs for every call
                c = f(a, b)
                self.assertEqual(c.shape, (m, n))
                self.assertLessEqual(scaled_error(c, a, b), tolerance(mode, k), f"{mode} {m}x{n}x{k}")

    def test_inside_a_jitted_program(self):
        @jax.jit
        def layer(x, w):
            return jnp.tanh(gj.matmul(x * 2.0, w, mode="tensor_fp32")) + 1.0

        x, w = self.rand(128, 96), self.rand(96, 64)
        ref = np.tanh(np.asarray(x, np.float64) * 2.0 @ np.asarray(w, np.float64)) + 1.0
        self.assertLess(float(np.abs(np.asarray(layer(x, w)) - ref).max()), 1e-5)

    def test_grad(self):
        a, b, w = self.rand(40, 30), self.rand(30, 20), self.rand(40, 20)
        loss = lambda a, b: jnp.sum(gj.matmul(a, b, mode="tensor_fp32") * w)
        ga, gb = jax.jit(jax.grad(loss, argnums=(0, 1)))(a, b)
        w64 = np.asarray(w, np.float64)
        ref_a, ref_b = w64 @ np.asarray(b, np.float64).T, np.asarray(a, np.float64).T @ w64
        self.assertLess(float(np.abs(np.asarray(ga) - ref_a).max()), 1e-5)
        self.assertLess(float(np.abs(np.asarray(gb) - ref_b).max()), 1e-5)

    def test_vmap(self):
        a, b = self.rand(3, 20, 10), self.rand(3, 10, 7)
        c = jax.jit(jax.vmap(lambda x, y: gj.matmul(x, y)))(a, b)
        for i in range(3):
            self.assertLessEqual(scaled_error(c[i], a[i], b[i]), tolerance("strict_fp32", 10))

    def test_refusals(self):
        a = self.rand(4, 4)
        with self.assertRaisesRegex(ValueError, r"gemmlab.jax.matmul: mode 'fp16'"):
            gj.matmul(a, a, mode="fp16")
        with self.assertRaisesRegex(ValueError, r"takes float32"):
            gj.matmul(a.astype(jnp.bfloat16), a)
        with self.assertRaisesRegex(ValueError, r"a is 4x4 and b is 3x4"):
            gj.matmul(a, self.rand(3, 4))


if __name__ == "__main__":
    sys.exit(0 if unittest.main(exit=False, verbosity=2).result.wasSuccessful() else 1)
