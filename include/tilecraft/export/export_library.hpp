// Tuned kernels as a C++ library (issue 30, deliverable 3): the kernels chosen for a list of GEMM
// problems are compiled into one shared library with a small C++ API and a CMake package, which a
// program uses with find_package and without tilecraft, Python or nvcc at run time.
//
// <out>/include/<name>.hpp          the API (plain C++17; no CUDA, CUTLASS or tilecraft header)
// <out>/lib/lib<name>.so            the kernels, the dispatch, a static CUDA runtime
// <out>/lib/cmake/<name>/<name>Config.cmake, <name>ConfigVersion.cmake: target <name>::<name>
// docs/export.md says how the library chooses a kernel and what it says when none fits.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tilecraft/compile/compiler.hpp"
#include "tilecraft/core/status.hpp"
#include "tilecraft/core/types.hpp"
#include "tilecraft/describe/epilogue.hpp"
#include "tilecraft/tune/tuning.hpp"

namespace tilecraft::exporting {

// One GEMM: out (M x N) = activation(A (M x K) @ B (K x N) + bias), strided batches when
// batch > 1, with tensors of these types and layouts (out: row-major or column-major).
struct GemmProblem {
  int64_t m = 0, n = 0, k = 0, batch = 1;
  DataType a = DataType::bf16, b = DataType::bf16, out = DataType::bf16;
  DataType accumulator = DataType::f32;
  Layout layout_a = Layout::RowMajor, layout_b = Layout::ColumnMajor, layout_out = Layout::RowMajor;
  Activation activation = Activation::identity;
  bool bias = false;  // a bias of N values of out's type, added to every row
  // f32 tensors: tf32 tensor-core kernels may serve (true) or only full-f32 ones (false).
  bool allow_tf32 = true;
  std::string label;  // for messages and the header's comment; made from the fields when empty
};

struct ExportOptions {
  std::string name;     // a C identifier: the namespace, library and package name
  std::string out_dir;  // made when missing; an existing one must be empty or an earlier export
  // The compute capability to build for. Default: the GPU's; required without a GPU.
  std::optional<int> cc;
  // Take each problem's ranked first pick without tuning (also what happens without a GPU).
  bool untuned = false;
  tune::TuningOptions tuning;  // for problems without a stored winner (mode is ignored)
};

struct ExportedProblem {
  std::string label;
  std::string kernel;
  std::string how;  // "tuned winner (stored)", "tuned now", "ranked first pick (untuned: ...)"
};

struct ExportReport {
  std::string name;
  int cc = 0;
  std::string header, library, config;  // the paths written
  std::vector<ExportedProblem> problems;
  std::vector<std::string> kernels;  // distinct, in the library's order
  bool tuned = false;                // every problem's kernel is a measured winner
};

// Ok, or why `name` cannot name an exported library (the error names `argument`).
Status check_library_name(const std::string& name, const std::string& argument = "name");

// A library name made from an output folder's last component, or "" when none can be made.
std::string name_from_folder(const std::string& out_dir);

// Chooses a kernel for each problem (the stored tuned winner; tuned now where none is stored and
// a GPU is here; the ranked first pick with options.untuned or without a GPU), compiles them all
// with the dispatch into <out>/lib/lib<name>.so and writes the header and the package files.
Result<ExportReport> export_gemm_library(
    const std::vector<GemmProblem>& problems, const ExportOptions& options,
    const compile::ProgressFn& progress = compile::default_progress);

}  // namespace tilecraft::exporting
