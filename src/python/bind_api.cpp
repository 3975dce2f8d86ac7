// The arguments-first API (seed 003): tilecraft::api, for python/tilecraft/api.
#include <nanobind/ndarray.h>
#include <nanobind/stl/array.h>
#include <nanobind/stl/function.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/set.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "common.hpp"
#include "tensor_adapter.hpp"
#include "tilecraft/discover/api.hpp"

namespace tilecraft::python {

namespace {

std::optional<std::string> error_of(const Status& status) {
  if (status) return std::nullopt;
  return status.message();
}

}  // namespace

void bind_api(nb::module_& root) {
  nb::module_ m = root.def_submodule("api", "The arguments-first API of seed 003.");
  using namespace tilecraft::api;

  nb::class_<OperandMetadata>(m, "OperandMetadata")
      .def_ro("dtype", &OperandMetadata::dtype)
      .def_ro("layout", &OperandMetadata::layout)
      .def_ro("alignment", &OperandMetadata::alignment);
  nb::class_<GemmOperandsMetadata>(m, "GemmOperandsMetadata")
      .def_ro("A", &GemmOperandsMetadata::A)
      .def_ro("B", &GemmOperandsMetadata::B)
      .def_ro("out", &GemmOperandsMetadata::out)
      .def_ro("accumulator", &GemmOperandsMetadata::accumulator);
  nb::class_<DesignMetadata>(m, "DesignMetadata")
      .def_ro("arch", &DesignMetadata::arch)
      .def_ro("tile_shape", &DesignMetadata::tile_shape)
      .def_ro("cluster_shape", &DesignMetadata::cluster_shape)
      .def_ro("warp_count", &DesignMetadata::warp_count)
      .def_ro("instruction_shape", &DesignMetadata::instruction_shape)
      .def_ro("stages", &DesignMetadata::stages)
      .def_ro("kernel_schedule", &DesignMetadata::kernel_schedule)
      .def_ro("epilogue_schedule", &DesignMetadata::epilogue_schedule)
      .def_ro("tile_scheduler", &DesignMetadata::tile_scheduler)
      .def_ro("swizzle", &DesignMetadata::swizzle);
  nb::class_<EpilogueMetadata>(m, "EpilogueMetadata")
      .def_ro("kind", &EpilogueMetadata::kind)
      .def_ro("activation", &EpilogueMetadata::activation)
      .def_ro("compute", &EpilogueMetadata::compute)
      .def_ro("per_tensor_scales", &EpilogueMetadata::per_tensor_scales)
      .def_ro("bias", &EpilogueMetadata::bias)
      .def_ro("bias_dtype", &EpilogueMetadata::bias_dtype);
  nb::class_<KernelMetadata>(m, "KernelMetadata")
      .def_ro("kernel_name", &KernelMetadata::kernel_name)
      .def_ro("kernel_class", &KernelMetadata::kernel_class)
      .def_ro("min_cc", &KernelMetadata::min_cc)
      .def_ro("operands", &KernelMetadata::operands)
      .def_ro("design", &KernelMetadata::design)
      .def_ro("epilogue", &KernelMetadata::epilogue)
      .def_ro("score", &KernelMetadata::score)
      .def_ro("score_explain", &KernelMetadata::score_explain);

  nb::class_<GemmArguments>(m, "GemmArguments")
      .def_static(
          "make",
          [](const nb::ndarray<>& A, const nb::ndarray<>& B, const nb::ndarray<>& out,
             DataType accumulator_type, double alpha, double beta, std::optional<nb::ndarray<>> C,
             Activation activation, const std::vector<double>& activation_args,
             std::optional<nb::ndarray<>> bias, bool bias_per_row, const nb::object& scale_a,
             const nb::object& scale_b) {
            EpilogueArguments e;
            e.alpha = alpha;
            e.beta = beta;
            if (C) e.C = to_tensor_view("epilogue.C", *C);
            e.activation = activation;
            e.activation_args = activation_args;
            if (bias) e.bias = to_tensor_view("epilogue.bias", *bias);
            e.bias_per_row = bias_per_row;
            e.scale_a = to_scale_argument("epilogue.scale_a", scale_a);
            e.scale_b = to_scale_argument("epilogue.scale_b", scale_b);
            return unwrap(GemmArguments::make(to_tensor_view("A", A), to_tensor_view("B", B),
                                              to_tensor_view("out", out), accumulator_type, e));
          },
          nb::arg("A"), nb::arg("B"), nb::arg("out"), nb::arg("accumulator_type"),
          nb::arg("alpha") = 1.0, nb::arg("beta") = 0.0, nb::arg("C").none() = nb::none(),
          nb::arg("activation") = Activation::identity,
          nb::arg("activation_args") = std::vector<double>{}, nb::arg("bias").none() = nb::none(),
          nb::arg("bias_per_row") = false, nb::arg("scale_a").none() = nb::none(),
          nb::arg("scale_b").none() = nb::none())
      .def_prop_ro("m", &GemmArguments::m)
      .def_prop_ro("n", &GemmArguments::n)
      .def_prop_ro("k", &GemmArguments::k)
      .def_prop_ro("batch", &GemmArguments::batch)
      .def_prop_ro("accumulator_type", &GemmArguments::accumulator_type)
      .def_prop_ro("layouts",
                   [](const GemmArguments& a) {
                     return std::array<Layout, 3>{a.layout_a(), a.layout_b(), a.layout_out()};
                   })
      .def_prop_ro("alignments", [](const GemmArguments& a) {
        return std::array<int, 3>{a.alignment_a(), a.alignment_b(), a.alignment_out()};
      });

  nb::class_<CompiledArtifact>(m, "CompiledArtifact")
      .def_prop_ro("kernel_name", &CompiledArtifact::kernel_name)
      .def_prop_ro("arch", &CompiledArtifact::arch)
      .def("save", [](const CompiledArtifact& a, const std::string& path) { check(a.save(path)); })
      .def_static("load",
                  [](const std::string& path) { return unwrap(CompiledArtifact::load(path)); });

  nb::class_<Kernel>(m, "Kernel")
      .def_prop_ro("metadata", &Kernel::metadata, nb::rv_policy::reference_internal)
      // Everything the Python KernelMetadata holds, in one call (filters visit every kernel).
      .def_prop_ro("metadata_fields",
                   [](const Kernel& k) {
                     const KernelMetadata& m = k.metadata();
                     const auto operand = [](const OperandMetadata& o) {
                       return nb::make_tuple(o.dtype, o.layout, o.alignment);
                     };
                     const DesignMetadata& d = m.design;
                     const EpilogueMetadata& e = m.epilogue;
                     return nb::make_tuple(
                         m.kernel_name, m.kernel_class, m.min_cc,
                         nb::make_tuple(operand(m.operands.A), operand(m.operands.B),
                                        operand(m.operands.out), m.operands.accumulator),
                         nb::make_tuple(d.arch, d.tile_shape, d.cluster_shape, d.warp_count,
                                        d.instruction_shape, d.stages, d.kernel_schedule,
                                        d.epilogue_schedule, d.tile_scheduler, d.swizzle),
                         nb::make_tuple(e.kind, e.activation, e.compute, e.per_tensor_scales,
                                        e.bias, e.bias_dtype),
                         m.score, m.score_explain);
                   })
      .def("supports",
           [](const Kernel& k, const GemmArguments& args) { return error_of(k.supports(args)); })
      .def("compile",
           [](const Kernel& k, const GemmArguments& args) {
             return unwrap(interruptible([&] { return k.compile(args); }));
           })
      .def("get_workspace_size",
           [](const Kernel& k, const GemmArguments& args) {
             return unwrap(interruptible([&] { return k.get_workspace_size(args); }));
           })
      .def(
          "run",
          [](const Kernel& k, const GemmArguments& args, const CompiledArtifact* artifact,
             uintptr_t stream, bool assume_supported_args, uintptr_t workspace,
             size_t workspace_bytes) {
            check(interruptible([&] {
              return k.run(args, artifact, reinterpret_cast<void*>(stream), assume_supported_args,
                           reinterpret_cast<void*>(workspace), workspace_bytes);
            }));
          },
          nb::arg("args"), nb::arg("compiled_artifact").none(), nb::arg("stream"),
          nb::arg("assume_supported_args"), nb::arg("workspace"), nb::arg("workspace_bytes"));

  m.def(
      "get_kernels",
      [](const GemmArguments* args, std::optional<int> cc) { return get_kernels(args, {}, cc); },
      nb::arg("args").none(), nb::arg("cc").none());
  m.def("compile_kernels", [](const std::vector<Kernel>& kernels) {
    check(interruptible([&] { return compile_kernels(kernels); }));
  });
  m.def("is_device_cc_supported",
        [](const std::set<int>& ccs) { return error_of(is_device_cc_supported(ccs)); });
  m.def("dsl_name", &dsl_name);
}

}  // namespace tilecraft::python
