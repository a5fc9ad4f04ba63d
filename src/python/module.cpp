// gemmlab._gemmlab: the Python module's native part (python/gemmlab/__init__.py is the API).
// It turns CUDA arrays (DLPack or __cuda_array_interface__) into views, maps each view's strides to
// a layout and leading dimension (transposed views become transpose flags, never copies), and calls
// gemmlab::sgemm / sgemv on the caller's stream. Errors become ValueError (bad input) or
// RuntimeError (CUDA, no GPU), with gemmlab's one-line messages.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

// The distribution's dlpack/dlpack.h, or the copy inside an installed PyTorch (ATen/dlpack.h):
// cmake/python.cmake says which.
#include GEMMLAB_DLPACK_HEADER

#include <algorithm>
#include <chrono>
#include <string>

#include <cuda_runtime.h>

#include "gemmlab/error.hpp"
#include "gemmlab/gemmlab.hpp"

namespace py = pybind11;

namespace gemmlab {
const char* build_commit();
}
#ifdef GEMMLAB_JAX_FFI
void* gemmlab_jax_matmul_handler();  // jax_ffi.cpp
#endif

namespace {

// A float32 matrix or vector in device memory: rows x cols (a vector is n x 1), element strides.
struct View {
  uintptr_t data = 0;
  int64_t rows = 0, cols = 1, row_stride = 1, col_stride = 1;
  int device = 0;
  int dims = 2;
  int64_t span() const {  // elements from the first to one past the last
    return rows == 0 || cols == 0 ? 0 : (rows - 1) * row_stride + (cols - 1) * col_stride + 1;
  }
  View transposed() const { return {data, cols, rows, col_stride, row_stride, device, dims}; }
};

[[noreturn]] void refuse(const std::string& message) { throw gemmlab::UsageError(message); }

std::string type_name(py::handle obj) { return py::str(py::type::of(obj).attr("__name__")); }

View from_shape(uintptr_t data, int ndim, const int64_t* shape, const int64_t* strides, int device,
                const std::string& name) {
  if (ndim != 1 && ndim != 2) refuse(name + " has " + std::to_string(ndim) + " dimensions, not 1 or 2");
  View v;
  v.data = data, v.device = device, v.dims = ndim;
  v.rows = shape[0];
  v.cols = ndim == 2 ? shape[1] : 1;
  // No strides: compact row-major (DLPack, __cuda_array_interface__ both say so).
  v.row_stride = strides ? strides[0] : v.cols;
  v.col_stride = ndim == 2 ? (strides ? strides[1] : 1) : 1;
  return v;
}

// DLPack (PyTorch, CuPy, JAX, ...). `stream` is passed to __dlpack__ so that the producer makes it
// wait for the producer's pending work (the protocol's 1 means the legacy default stream).
View from_dlpack(py::handle obj, const std::string& name, uintptr_t stream) {
  auto dev = obj.attr("__dlpack_device__")().cast<std::pair<int, int>>();
  if (dev.first != kDLCUDA && dev.first != kDLCUDAManaged)
    refuse(name + " is on the " + (dev.first == kDLCPU ? std::string("CPU") : "device type " + std::to_string(dev.first)) +
           ": gemmlab takes CUDA arrays (torch: .cuda(); numpy: cupy.asarray)");
  py::object capsule = obj.attr("__dlpack__")(py::arg("stream") = stream == 0 ? 1 : stream);
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
  if (!managed) throw py::error_already_set();
  // The capsule is not consumed: its destructor releases the tensor, whose memory the caller's
  // array keeps alive.
  const DLTensor& t = managed->dl_tensor;
  if (t.dtype.code != kDLFloat || t.dtype.bits != 32 || t.dtype.lanes != 1)
    refuse(name + " is not float32 (DLPack type code " + std::to_string(t.dtype.code) + ", " +
           std::to_string(t.dtype.bits) + " bits): gemmlab computes float32 only");
  return from_shape(reinterpret_cast<uintptr_t>(t.data) + t.byte_offset, t.ndim, t.shape, t.strides,
                    t.device.device_id, name);
}

View from_cuda_array_interface(py::handle obj, const std::string& name, uintptr_t stream) {
  py::dict cai = obj.attr("__cuda_array_interface__");
  const std::string type = py::str(cai["typestr"]);
  if (type != "<f4" && type != "=f4" && type != "f4")
    refuse(name + " has type " + type + ", not float32 (<f4): gemmlab computes float32 only");
  auto shape = cai["shape"].cast<std::vector<int64_t>>();
  std::vector<int64_t> strides;
  if (cai.contains("strides") && !cai["strides"].is_none()) {
    for (int64_t s : cai["strides"].cast<std::vector<int64_t>>()) {
      if (s % 4) refuse(name + " has a stride of " + std::to_string(s) + " bytes, not whole floats");
      strides.push_back(s / 4);
    }
  }
  const auto data = cai["data"].cast<std::pair<uintptr_t, bool>>().first;
  cudaPointerAttributes attr{};
  GEMMLAB_CUDA(cudaPointerGetAttributes(&attr, reinterpret_cast<void*>(data)));
  // Version 3's producer stream: our stream waits for the work queued there.
  if (cai.contains("stream") && !cai["stream"].is_none()) {
    auto producer = cai["stream"].cast<uintptr_t>();
    auto as_stream = [](uintptr_t s) { return s == 1 ? cudaStreamLegacy : s == 2 ? cudaStreamPerThread : cudaStream_t(s); };
    if (producer != stream) {
      cudaEvent_t ready;
      GEMMLAB_CUDA(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));
      GEMMLAB_CUDA(cudaEventRecord(ready, as_stream(producer)));
      GEMMLAB_CUDA(cudaStreamWaitEvent(as_stream(stream), ready));
      GEMMLAB_CUDA(cudaEventDestroy(ready));
    }
  }
  return from_shape(data, int(shape.size()), shape.data(), strides.empty() ? nullptr : strides.data(), attr.device,
                    name);
}

View view_of(py::handle obj, const std::string& name, uintptr_t stream) {
  if (py::isinstance<View>(obj)) return obj.cast<View>();
  if (py::hasattr(obj, "__dlpack_device__") && py::hasattr(obj, "__dlpack__")) return from_dlpack(obj, name, stream);
  if (py::hasattr(obj, "__cuda_array_interface__")) return from_cuda_array_interface(obj, name, stream);
  refuse(name + " is a " + type_name(obj) +
         ": gemmlab takes CUDA arrays that speak DLPack or __cuda_array_interface__ (PyTorch, CuPy, JAX)");
}

// A matrix as a row-major operand: its pointer, whether it is stored transposed, and the leading
// dimension. Size-1 dimensions may carry any stride, so they do not decide.
struct Operand {
  const float* data;
  gemmlab::Trans trans;
  int64_t ld;
};

Operand operand(const View& v, const std::string& name) {
  const auto ptr = reinterpret_cast<const float*>(v.data);
  const bool row_major = (v.col_stride == 1 || v.cols <= 1) && (v.rows <= 1 || v.row_stride >= std::max<int64_t>(1, v.cols));
  if (row_major) return {ptr, gemmlab::Trans::no, v.rows <= 1 ? std::max<int64_t>(1, v.cols) : v.row_stride};
  const bool col_major = (v.row_stride == 1 || v.rows <= 1) && (v.cols <= 1 || v.col_stride >= std::max<int64_t>(1, v.rows));
  if (col_major) return {ptr, gemmlab::Trans::yes, v.cols <= 1 ? std::max<int64_t>(1, v.rows) : v.col_stride};
  refuse(name + " has strides (" + std::to_string(v.row_stride) + ", " + std::to_string(v.col_stride) +
         ") elements for shape " + std::to_string(v.rows) + "x" + std::to_string(v.cols) +
         ": gemmlab takes row- or column-major matrices (one stride 1, the other at least the row or column "
         "length); copy it first (torch: .contiguous())");
}

void same_device(const View& a, const View& b, const char* na, const char* nb) {
  if (a.device != b.device)
    refuse(std::string(na) + " is on GPU " + std::to_string(a.device) + " and " + nb + " on GPU " +
           std::to_string(b.device));
}

void no_overlap(const View& out, const View& in, const char* name) {
  const uintptr_t o0 = out.data, o1 = out.data + 4 * uintptr_t(out.span());
  const uintptr_t i0 = in.data, i1 = in.data + 4 * uintptr_t(in.span());
  if (o0 < i1 && i0 < o1) refuse(std::string("out overlaps ") + name + ": gemmlab does not compute in place");
}

gemmlab::MathMode math_of(const std::string& mode) {
  if (mode == "strict_fp32") return gemmlab::MathMode::strict_fp32;
  if (mode == "tensor_fp32") return gemmlab::MathMode::tensor_fp32;
  if (mode == "tf32") return gemmlab::MathMode::tf32;
  refuse("mode '" + mode + "' is not one of strict_fp32, tensor_fp32, tf32");
}

// Runs on the arrays' GPU, the caller's current device restored afterwards.
struct OnDevice {
  int previous = -1;
  explicit OnDevice(int device) {
    GEMMLAB_CUDA(cudaGetDevice(&previous));
    if (previous != device) GEMMLAB_CUDA(cudaSetDevice(device));
  }
  ~OnDevice() {
    int now = -1;
    if (cudaGetDevice(&now) == cudaSuccess && now != previous) (void)cudaSetDevice(previous);
  }
};

template <class Call>
void named(const char* function, Call call) {
  try {
    call();
  } catch (const gemmlab::UsageError& e) {
    throw py::value_error(std::string(function) + ": " + e.what());
  } catch (const py::error_already_set&) {
    throw;
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(std::string(function) + ": " + e.what());
  }
}

// out = alpha a b + beta out on the arrays' GPU (their devices checked here: a CPU array is device -1).
void matmul_views(View a, View b, View c, gemmlab::MathMode math, float alpha, float beta, uintptr_t stream) {
  if (a.dims != 2 || b.dims != 2)
    refuse(std::string(a.dims != 2 ? "a" : "b") + " is 1-D: matmul takes matrices (gemmlab.matvec takes a vector)");
  if (c.dims != 2) refuse("out is 1-D: matmul writes a matrix");
  for (auto [v, n] : {std::pair{&a, "a"}, std::pair{&b, "b"}, std::pair{&c, "out"}})
    if (v->device < 0) refuse(std::string(n) + " is on the CPU: gemmlab takes CUDA arrays (torch: .cuda(); numpy: cupy.asarray)");
  if (a.cols != b.rows)
    refuse("a is " + std::to_string(a.rows) + "x" + std::to_string(a.cols) + " and b is " + std::to_string(b.rows) +
           "x" + std::to_string(b.cols) + ": a's columns must equal b's rows");
  if (c.rows != a.rows || c.cols != b.cols)
    refuse("out is " + std::to_string(c.rows) + "x" + std::to_string(c.cols) + ", the product is " +
           std::to_string(a.rows) + "x" + std::to_string(b.cols));
  same_device(a, b, "a", "b");
  same_device(a, c, "a", "out");
  no_overlap(c, a, "a");
  no_overlap(c, b, "b");
  if (c.rows == 0 || c.cols == 0) return;
  if (a.cols == 0) refuse("a has no columns (K = 0)");
  // A column-major out is written as its row-major transpose: Cᵀ = Bᵀ·Aᵀ.
  const bool c_row_major = (c.col_stride == 1 || c.cols <= 1) && (c.rows <= 1 || c.row_stride >= c.cols);
  if (!c_row_major) std::swap(a, b), a = a.transposed(), b = b.transposed(), c = c.transposed();
  const Operand oa = operand(a, "a"), ob = operand(b, "b"), oc = operand(c, "out");
  if (oc.trans == gemmlab::Trans::yes) refuse("out must be row- or column-major");
  OnDevice on(a.device);
  gemmlab::sgemm(gemmlab::Layout::row_major, oa.trans, ob.trans, c.rows, c.cols, a.cols, alpha, oa.data, oa.ld,
                 ob.data, ob.ld, beta, const_cast<float*>(oc.data), oc.ld, reinterpret_cast<cudaStream_t>(stream), math);
}

void matmul(py::handle a_obj, py::handle b_obj, py::handle out_obj, const std::string& mode, float alpha, float beta,
            uintptr_t stream) {
  named("gemmlab.matmul", [&] {
    const auto math = math_of(mode);
    matmul_views(view_of(a_obj, "a", stream), view_of(b_obj, "b", stream), view_of(out_obj, "out", stream), math,
                 alpha, beta, stream);
  });
}

// The wrapper's fast path for PyTorch tensors, called once per product: a METH_FASTCALL function
// that reads the tensors' fields through the C API (no Python code, no argument conversion layer).
// matmul_tensors(a, b, out or None, mode, alpha, beta) returns out, or NotImplemented for anything
// but 2-D float32 tensors (the wrapper then takes the general path).
struct TorchTypes {
  PyObject* tensor = nullptr;      // torch.Tensor
  PyObject* parameter = nullptr;   // torch.nn.Parameter
  PyObject* float32 = nullptr;     // torch.float32
  PyObject* raw_stream = nullptr;  // torch._C._cuda_getCurrentRawStream(device) -> int
};
TorchTypes torch_types;

PyObject* interned(const char* s) { return PyUnicode_InternFromString(s); }

// A new reference to the value of a method call or an attribute, nullptr with the error cleared.
PyObject* method(PyObject* obj, PyObject* name) {
  PyObject* r = PyObject_CallMethodNoArgs(obj, name);
  if (!r) PyErr_Clear();
  return r;
}

bool int_pair(PyObject* tuple, int64_t& x, int64_t& y) {
  if (!tuple || !PyTuple_Check(tuple) || PyTuple_GET_SIZE(tuple) != 2) return false;
  x = PyLong_AsLongLong(PyTuple_GET_ITEM(tuple, 0));
  y = PyLong_AsLongLong(PyTuple_GET_ITEM(tuple, 1));
  return !PyErr_Occurred();
}

// A 2-D float32 tensor's view; false for anything else.
bool tensor_view(PyObject* t, View& v) {
  static PyObject *dtype = interned("dtype"), *shape = interned("shape"), *stride = interned("stride"),
                  *data_ptr = interned("data_ptr"), *get_device = interned("get_device");
  const auto type = reinterpret_cast<PyObject*>(Py_TYPE(t));
  if (type != torch_types.tensor && type != torch_types.parameter) return false;
  PyObject* d = PyObject_GetAttr(t, dtype);
  Py_XDECREF(d);  // torch.float32 is a singleton that torch_types holds
  if (d != torch_types.float32) return PyErr_Clear(), false;
  PyObject *sh = PyObject_GetAttr(t, shape), *st = method(t, stride), *ptr = method(t, data_ptr),
           *dev = method(t, get_device);
  bool ok = int_pair(sh, v.rows, v.cols) && int_pair(st, v.row_stride, v.col_stride) && ptr && dev;
  if (ok) {
    v.data = uintptr_t(PyLong_AsUnsignedLongLong(ptr));
    v.device = int(PyLong_AsLong(dev));
    v.dims = 2;
    ok = !PyErr_Occurred();
  }
  for (PyObject* o : {sh, st, ptr, dev}) Py_XDECREF(o);
  if (!ok) PyErr_Clear();
  return ok;
}

PyObject* matmul_tensors(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  static PyObject* new_empty = interned("new_empty");
  if (nargs != 6 || !torch_types.tensor) {
    PyErr_SetString(PyExc_TypeError, "matmul_tensors(a, b, out, mode, alpha, beta)");
    return nullptr;
  }
  View a, b, c;
  if (!tensor_view(args[0], a) || !tensor_view(args[1], b)) Py_RETURN_NOTIMPLEMENTED;
  const double alpha = PyFloat_AsDouble(args[4]), beta = PyFloat_AsDouble(args[5]);
  Py_ssize_t mode_size = 0;
  const char* mode = PyUnicode_AsUTF8AndSize(args[3], &mode_size);
  if (PyErr_Occurred()) {
    PyErr_Clear();
    Py_RETURN_NOTIMPLEMENTED;
  }
  PyObject* out = args[2];
  if (out == Py_None) {
    if (beta != 0.0) {
      PyErr_SetString(PyExc_ValueError, "gemmlab.matmul: beta != 0 reads out; pass out=");
      return nullptr;
    }
    PyObject* shape = Py_BuildValue("(LL)", (long long)a.rows, (long long)b.cols);
    out = shape ? PyObject_CallMethodOneArg(args[0], new_empty, shape) : nullptr;
    Py_XDECREF(shape);
    if (!out) return nullptr;
  } else {
    Py_INCREF(out);
  }
  if (!tensor_view(out, c)) {
    Py_DECREF(out);
    Py_RETURN_NOTIMPLEMENTED;
  }
  uintptr_t stream = 0;
  if (a.device >= 0) {
    PyObject* device = PyLong_FromLong(a.device);
    PyObject* s = device ? PyObject_CallOneArg(torch_types.raw_stream, device) : nullptr;
    Py_XDECREF(device);
    if (!s) return Py_DECREF(out), nullptr;
    stream = uintptr_t(PyLong_AsUnsignedLongLong(s));
    Py_DECREF(s);
  }
  try {
    named("gemmlab.matmul", [&] {
      matmul_views(a, b, c, math_of(std::string(mode, size_t(mode_size))), float(alpha), float(beta), stream);
    });
  } catch (py::error_already_set& e) {
    Py_DECREF(out);
    e.restore();
    return nullptr;
  } catch (const py::value_error& e) {
    Py_DECREF(out);
    PyErr_SetString(PyExc_ValueError, e.what());
    return nullptr;
  } catch (const std::exception& e) {
    Py_DECREF(out);
    PyErr_SetString(PyExc_RuntimeError, e.what());
    return nullptr;
  }
  return out;
}

PyMethodDef matmul_tensors_def = {"matmul_tensors", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(matmul_tensors)),
                                  METH_FASTCALL, "gemmlab.matmul's path for PyTorch tensors"};

// `mode` is checked and otherwise unused: GEMV is bound by memory and runs on the CUDA cores in FP32 in every mode.
void matvec(py::handle a_obj, py::handle x_obj, py::handle out_obj, const std::string& mode, float alpha, float beta,
            uintptr_t stream) {
  named("gemmlab.matvec", [&] {
    (void)math_of(mode);
    View a = view_of(a_obj, "a", stream), x = view_of(x_obj, "x", stream), y = view_of(out_obj, "out", stream);
    if (a.dims != 2) refuse("a is 1-D: matvec takes a matrix and a vector");
    if (x.dims != 1 || y.dims != 1) refuse(std::string(x.dims != 1 ? "x" : "out") + " is not 1-D");
    if (a.cols != x.rows)
      refuse("a is " + std::to_string(a.rows) + "x" + std::to_string(a.cols) + " and x has " +
             std::to_string(x.rows) + " elements");
    if (y.rows != a.rows) refuse("out has " + std::to_string(y.rows) + " elements, the product " + std::to_string(a.rows));
    for (auto [v, n] : {std::pair{&x, "x"}, std::pair{&y, "out"}})
      if (v->row_stride < 1 && v->rows > 1)
        refuse(std::string(n) + " has stride " + std::to_string(v->row_stride) + ": gemmlab takes increments >= 1");
    same_device(a, x, "a", "x");
    same_device(a, y, "a", "out");
    no_overlap(y, a, "a");
    no_overlap(y, x, "x");
    if (a.rows == 0) return;
    if (a.cols == 0) refuse("a has no columns");
    const Operand oa = operand(a, "a");
    // A stored transposed is column-major m x n: the same product with BLAS's column-major layout.
    const auto layout = oa.trans == gemmlab::Trans::no ? gemmlab::Layout::row_major : gemmlab::Layout::col_major;
    OnDevice on(a.device);
    gemmlab::sgemv(layout, gemmlab::Trans::no, a.rows, a.cols, alpha, oa.data, oa.ld,
                   reinterpret_cast<const float*>(x.data), std::max<int64_t>(1, x.row_stride), beta,
                   reinterpret_cast<float*>(y.data), std::max<int64_t>(1, y.row_stride),
                   reinterpret_cast<cudaStream_t>(stream));
  });
}

py::dict choose(int64_t m, int64_t n, int64_t k, const std::string& mode, bool trans_a, bool trans_b) {
  py::dict d;
  named("gemmlab.choose", [&] {
    gemmlab::Problem p;
    p.m = m, p.n = n, p.k = k;
    p.trans_a = trans_a ? gemmlab::Trans::yes : gemmlab::Trans::no;
    p.trans_b = trans_b ? gemmlab::Trans::yes : gemmlab::Trans::no;
    const auto c = gemmlab::choose(gemmlab::normalized(p), math_of(mode));
    d["family"] = c.family, d["params"] = c.params, d["source"] = c.source, d["why"] = c.why;
    d["workspace_bytes"] = c.workspace_bytes, d["predicted_us"] = c.predicted_us;
  });
  return d;
}

}  // namespace

PYBIND11_MODULE(_gemmlab, m) {
  m.doc() = "gemmlab's native part; use the gemmlab package";
  py::class_<View>(m, "View")
      .def(py::init([](uintptr_t data, int64_t rows, int64_t cols, int64_t row_stride, int64_t col_stride, int device) {
             return View{data, rows, cols, row_stride, col_stride, device, 2};
           }),
           py::arg("data"), py::arg("rows"), py::arg("cols"), py::arg("row_stride"), py::arg("col_stride"),
           py::arg("device"))
      .def_static("vector", [](uintptr_t data, int64_t n, int64_t stride, int device) {
        return View{data, n, 1, stride, 1, device, 1};
      });
  m.def("matmul", &matmul, py::arg("a"), py::arg("b"), py::arg("out"), py::arg("mode"), py::arg("alpha"),
        py::arg("beta"), py::arg("stream"));
  // PyTorch's types, handed over by the package when PyTorch is importable (no build-time dependency).
  m.def("register_torch", [](py::object tensor, py::object parameter, py::object float32, py::object raw_stream) {
    for (auto [slot, obj] : {std::pair{&torch_types.tensor, &tensor}, std::pair{&torch_types.parameter, &parameter},
                             std::pair{&torch_types.float32, &float32}, std::pair{&torch_types.raw_stream, &raw_stream}})
      *slot = obj->release().ptr();  // held for the process's life
  });
  m.attr("matmul_tensors") = py::reinterpret_steal<py::object>(PyCFunction_NewEx(&matmul_tensors_def, nullptr, m.ptr()));
  // The fast path's own cost per call (seconds): reading three tensors' fields and the current
  // stream, `calls` times, without the library call (scripts/bench-python's breakdown).
  m.def("read_tensors_seconds", [](py::handle a, py::handle b, py::handle c, int calls) {
    View v;
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) {
      for (py::handle t : {a, b, c})
        if (!tensor_view(t.ptr(), v)) throw py::value_error("read_tensors_seconds: not a 2-D float32 tensor");
      py::object s = py::reinterpret_borrow<py::object>(torch_types.raw_stream)(v.device);
    }
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / calls;
  });
  m.def("matvec", &matvec, py::arg("a"), py::arg("x"), py::arg("out"), py::arg("mode"), py::arg("alpha"), py::arg("beta"),
        py::arg("stream"));
  m.def("choose", &choose, py::arg("m"), py::arg("n"), py::arg("k"), py::arg("mode"), py::arg("trans_a"),
        py::arg("trans_b"));
  // The one-line error for an object that is not a CUDA float32 array (the wrapper's slow path).
  m.def("check_array", [](py::handle obj, const std::string& name, const std::string& function) {
    named(("gemmlab." + function).c_str(), [&] { (void)view_of(obj, name, 0); });
  });
  // The library's own host time per sgemm call (seconds), `calls` calls from C++ on the views: the
  // baseline the Python call's overhead is measured against (scripts/bench-python).
  m.def("library_host_seconds", [](const View& a, const View& b, const View& c, const std::string& mode,
                                   uintptr_t stream, int calls) {
    const auto math = math_of(mode);
    const Operand oa = operand(a, "a"), ob = operand(b, "b"), oc = operand(c, "out");
    auto call = [&] {
      gemmlab::sgemm(gemmlab::Layout::row_major, oa.trans, ob.trans, c.rows, c.cols, a.cols, 1.0f, oa.data, oa.ld,
                     ob.data, ob.ld, 0.0f, const_cast<float*>(oc.data), oc.ld, reinterpret_cast<cudaStream_t>(stream),
                     math);
    };
    call();  // plans the shape
    GEMMLAB_CUDA(cudaStreamSynchronize(reinterpret_cast<cudaStream_t>(stream)));
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) call();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    GEMMLAB_CUDA(cudaStreamSynchronize(reinterpret_cast<cudaStream_t>(stream)));
    return s / calls;
  });
#ifdef GEMMLAB_JAX_FFI
  // The XLA FFI handler for jax.ffi.register_ffi_target (python/gemmlab/jax.py).
  m.attr("jax_matmul_handler") = py::capsule(gemmlab_jax_matmul_handler());
#endif
  m.attr("__version__") = GEMMLAB_VERSION_STRING;
  m.attr("commit") = gemmlab::build_commit();
}
