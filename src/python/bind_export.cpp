// tilecraft._core.export: tuned kernels written out as a C++ library (src/export).
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "common.hpp"
#include "tilecraft/export/export_library.hpp"

namespace tilecraft::python {

void bind_export(nb::module_& root) {
  nb::module_ m = root.def_submodule("export", "Tuned kernels as a C++ library (issue 30).");
  nb::class_<exporting::GemmProblem>(m, "GemmProblem")
      .def(nb::init<>())
      .def_rw("m", &exporting::GemmProblem::m)
      .def_rw("n", &exporting::GemmProblem::n)
      .def_rw("k", &exporting::GemmProblem::k)
      .def_rw("batch", &exporting::GemmProblem::batch)
      .def_rw("a", &exporting::GemmProblem::a)
      .def_rw("b", &exporting::GemmProblem::b)
      .def_rw("out", &exporting::GemmProblem::out)
      .def_rw("accumulator", &exporting::GemmProblem::accumulator)
      .def_rw("layout_a", &exporting::GemmProblem::layout_a)
      .def_rw("layout_b", &exporting::GemmProblem::layout_b)
      .def_rw("layout_out", &exporting::GemmProblem::layout_out)
      .def_rw("activation", &exporting::GemmProblem::activation)
      .def_rw("bias", &exporting::GemmProblem::bias)
      .def_rw("allow_tf32", &exporting::GemmProblem::allow_tf32)
      .def_rw("label", &exporting::GemmProblem::label);
  m.def("check_name", [](const std::string& name, const std::string& argument) {
    return error_of(exporting::check_library_name(name, argument));
  });
  m.def("name_from_folder", &exporting::name_from_folder);
  // A dict: name, cc, header, library, config, tuned, kernels, problems (label, kernel, how).
  m.def(
      "export_gemm_library",
      [](const std::vector<exporting::GemmProblem>& problems, const std::string& name,
         const std::string& out_dir, std::optional<int> cc, bool untuned,
         std::optional<int> max_candidates, std::optional<double> max_seconds) {
        exporting::ExportOptions options;
        options.name = name;
        options.out_dir = out_dir;
        options.cc = cc;
        options.untuned = untuned;
        options.tuning = unwrap(tune::tuning_options_from_environment());
        if (max_candidates) options.tuning.max_candidates = *max_candidates;
        if (max_seconds) options.tuning.max_seconds = *max_seconds;
        auto report = unwrap(
            interruptible([&] { return exporting::export_gemm_library(problems, options); }));
        nb::dict d;
        d["name"] = report.name;
        d["cc"] = report.cc;
        d["header"] = report.header;
        d["library"] = report.library;
        d["config"] = report.config;
        d["tuned"] = report.tuned;
        d["kernels"] = report.kernels;
        nb::list rows;
        for (const auto& p : report.problems) {
          nb::dict row;
          row["problem"] = p.label;
          row["kernel"] = p.kernel;
          row["how"] = p.how;
          rows.append(row);
        }
        d["problems"] = rows;
        return d;
      },
      nb::arg("problems"), nb::arg("name"), nb::arg("out_dir"), nb::arg("cc").none(),
      nb::arg("untuned"), nb::arg("max_candidates").none(), nb::arg("max_seconds").none());
}

}  // namespace tilecraft::python
