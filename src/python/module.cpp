#include "common.hpp"

namespace nb = nanobind;

namespace {

// Python classes the Status codes raise as; created once at import.
PyObject* g_unsupported = nullptr;
PyObject* g_compile_error = nullptr;
PyObject* g_cuda_error = nullptr;

}  // namespace

NB_MODULE(_core, m) {
  m.doc() = "tilecraft's C++ core: descriptions, compilation, runtime.";
  g_unsupported = PyErr_NewExceptionWithDoc("tilecraft.UnsupportedError",
                                            "A valid request no kernel or device here can serve.",
                                            PyExc_ValueError, nullptr);
  g_compile_error = PyErr_NewExceptionWithDoc("tilecraft.CompileError",
                                              "The device compiler rejected generated code.",
                                              PyExc_RuntimeError, nullptr);
  g_cuda_error = PyErr_NewExceptionWithDoc("tilecraft.CudaError", "A CUDA call failed.",
                                           PyExc_RuntimeError, nullptr);
  m.attr("UnsupportedError") = nb::handle(g_unsupported);
  m.attr("CompileError") = nb::handle(g_compile_error);
  m.attr("CudaError") = nb::handle(g_cuda_error);

  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const tilecraft::Error& e) {
      PyObject* type = PyExc_RuntimeError;
      switch (e.status().code()) {
        case tilecraft::StatusCode::kInvalidArgument:
          type = PyExc_ValueError;
          break;
        case tilecraft::StatusCode::kNotSupported:
          type = g_unsupported;
          break;
        case tilecraft::StatusCode::kCompileError:
          type = g_compile_error;
          break;
        case tilecraft::StatusCode::kCudaError:
          type = g_cuda_error;
          break;
        case tilecraft::StatusCode::kCancelled:
          type = PyExc_KeyboardInterrupt;
          break;
        default:
          break;
      }
      PyErr_SetString(type, e.what());
    }
  });

  // "'80' (str)": how argument messages show a value, for the Python layer's own messages.
  tilecraft::python::def_checked(
      m, "given", "given", [](nb::object value) { return tilecraft::python::given(value); },
      tilecraft::python::required<nb::object>("value"));

  tilecraft::python::bind_types(m);
  tilecraft::python::bind_describe(m);
  tilecraft::python::bind_runtime(m);
  tilecraft::python::bind_api(m);
  tilecraft::python::bind_tune(m);
  tilecraft::python::bind_epilogue_graph(m);
  tilecraft::python::bind_export(m);
}
