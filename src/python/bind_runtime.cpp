#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include "common.hpp"
#include "tensor_adapter.hpp"
#include "tilecraft/core/settings.hpp"
#include "tilecraft/runtime/device.hpp"
#include "tilecraft/runtime/gemm_arguments.hpp"
#include "tilecraft/runtime/gemm_operation.hpp"
#include "tilecraft/runtime/memory_pool.hpp"

namespace tilecraft::python {

void bind_runtime(nb::module_& m) {
  nb::class_<GemmOperation>(m, "GemmOperation")
      .def_static("make",
                  [](int arch, const TileDescription& tile, const TensorDescription& A,
                     const TensorDescription& B, const TensorDescription& C,
                     const EpilogueFunctor& epilogue, Swizzle swizzle) {
                    return unwrap(GemmOperation::make(arch, tile, A, B, C, epilogue, swizzle));
                  })
      .def_prop_ro("description", &GemmOperation::description)
      .def("procedural_name", &GemmOperation::procedural_name)
      .def("is_compiled", &GemmOperation::is_compiled)
      .def("epilogue_type",
           [](const GemmOperation& op, double alpha, double beta, std::vector<double> args) {
             return unwrap(op.epilogue_type(alpha, beta, std::move(args)));
           })
      .def(
          "run",
          [](const GemmOperation& op, GemmArguments& args, uintptr_t stream) {
            check(op.run(args, reinterpret_cast<void*>(stream)));
          },
          nb::arg("arguments"), nb::arg("stream") = 0);

  nb::class_<GemmArguments>(m, "GemmArguments")
      .def_static(
          "make",
          [](const GemmOperation& op, const GemmCoord& problem_size, const nb::ndarray<>& A,
             const nb::ndarray<>& B, std::optional<nb::ndarray<>> C, const nb::ndarray<>& D,
             const EpilogueParams& output_op, GemmMode mode, int split_k_slices, int batch,
             std::optional<nb::ndarray<>> bias, std::optional<nb::ndarray<>> aux,
             const std::vector<nb::object>& scales, bool deterministic, bool launch_with_pdl) {
            GemmProblem problem;
            problem.deterministic = deterministic;
            problem.launch_with_pdl = launch_with_pdl;
            if (bias) problem.bias = to_tensor_view("bias", *bias);
            if (aux) problem.aux = to_tensor_view("aux", *aux);
            ScaleArgument* targets[] = {&problem.scale_a, &problem.scale_b, &problem.scale_c,
                                        &problem.scale_d};
            const char* names[] = {"scale_a", "scale_b", "scale_c", "scale_d"};
            for (size_t i = 0; i < scales.size() && i < 4; ++i) {
              *targets[i] = to_scale_argument(names[i], scales[i]);
            }
            problem.problem_size = problem_size;
            problem.A = to_tensor_view("A", A);
            problem.B = to_tensor_view("B", B);
            if (C) problem.C = to_tensor_view("C", *C);
            problem.D = to_tensor_view("D", D);
            problem.output_op = output_op;
            problem.mode = mode;
            problem.split_k_slices = split_k_slices;
            problem.batch = batch;
            // Compiles the operation's kernel on first use (the mode's companion kernel too).
            return unwrap(interruptible([&] { return GemmArguments::make(op, problem); }));
          },
          nb::arg("operation"), nb::arg("problem_size"), nb::arg("A"), nb::arg("B"),
          nb::arg("C").none(), nb::arg("D"), nb::arg("output_op"), nb::arg("gemm_mode"),
          nb::arg("split_k_slices"), nb::arg("batch"), nb::arg("bias").none() = nb::none(),
          nb::arg("aux").none() = nb::none(), nb::arg("scales") = std::vector<nb::object>{},
          nb::arg("deterministic") = true, nb::arg("launch_with_pdl") = true)
      .def("sync", [](GemmArguments& args) { check(args.sync()); })
      .def_prop_ro("workspace_bytes", &GemmArguments::workspace_bytes)
      .def_prop_ro("mode", &GemmArguments::mode);

  m.def("compile_operations", [](const std::vector<std::shared_ptr<GemmOperation>>& operations) {
    check(interruptible([&] { return compile_operations(operations); }));
  });
  m.def(
      "get_memory_pool", [](size_t init, size_t max) { check(get_memory_pool(init, max)); },
      nb::arg("init"), nb::arg("max"));
  m.def("get_allocated_size", &get_allocated_size);
  m.def("cuda_device_available", []() -> std::optional<std::string> {
    Status status = cuda_device_available();
    if (status) return std::nullopt;
    return status.message();
  });
  m.def("device_compute_capability",
        []() { return unwrap(current_device_info()).compute_capability; });
  m.def("device_name", []() { return unwrap(current_device_info()).name; });
  m.def("cache_dir", []() { return settings().cache_dir; });
  m.def("cutlass_dir", []() { return settings().cutlass_dir; });
  m.def("reload_settings", []() { set_settings(settings_from_environment()); });
}

}  // namespace tilecraft::python
