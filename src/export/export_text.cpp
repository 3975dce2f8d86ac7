#include "export/export_text.hpp"

#include <string_view>

namespace tilecraft::exporting {
namespace {

std::string text_replaced(std::string text, std::string_view from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

// The API every exported library has; @N@ is the library's name, @NOTE@ its problems.
constexpr std::string_view kTextHeader =
    R"(// @N@: GEMM kernels chosen and compiled by `tilecraft export` (generated; do not edit).
//
// Built for compute capability @CC@. The problems it was exported for, the kernel each runs and
// how that kernel was chosen:
@NOTE@//
// Use it with CMake: find_package(@N@ REQUIRED) and target_link_libraries(app PRIVATE @N@::@N@).
// Nothing of tilecraft, Python or nvcc is needed at run time; the library carries its own CUDA
// runtime (static) and needs the NVIDIA driver. The API is plain C++17 and includes no CUDA
// header: a stream is a cudaStream_t passed as void* (nullptr: the default stream).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#define @N@_API __attribute__((visibility("default")))

namespace @N@ {

// This header's API version: a library and a header of one export always agree.
inline constexpr int kApiVersion = 1;

// Element types of the tensors (f32 also for kernels that multiply in tf32).
enum class DataType : int { f64 = 0, f32 = 1, f16 = 2, bf16 = 3, s8 = 4, u8 = 5, s32 = 6, e4m3 = 7, e5m2 = 8 };
// RowMajor: element (i, j) of a matrix at i * ld + j; ColumnMajor: at i + j * ld.
enum class Layout : int { RowMajor = 0, ColumnMajor = 1 };
// Applied to alpha * A @ B + beta * C + bias before D is written.
enum class Activation : int {
  identity = 0, relu = 1, leaky_relu = 2, tanh = 3, sigmoid = 4, silu = 5, hardswish = 6,
  gelu = 7, gelu_tanh = 8, clamp = 9
};

// ok, or the reason: the argument, what was expected and what was given. A successful call may
// still carry a message (a kernel that was not tuned for the problem ran).
struct Status {
  bool ok = true;
  std::string message;
  explicit operator bool() const { return ok; }
};

// D (M x N) = activation(alpha * A (M x K) @ B (K x N) + beta * C + bias), for `batch` strided
// batches. Pointers are device memory; leading dimensions and batch strides count elements.
struct Gemm {
  int64_t m = 0, n = 0, k = 0;
  int64_t batch = 1;
  DataType a_type = DataType::bf16, b_type = DataType::bf16, d_type = DataType::bf16;
  Layout a_layout = Layout::RowMajor, b_layout = Layout::ColumnMajor, d_layout = Layout::RowMajor;
  const void* A = nullptr;
  int64_t lda = 0, batch_stride_A = 0;
  const void* B = nullptr;
  int64_t ldb = 0, batch_stride_B = 0;
  const void* C = nullptr;  // like D (type, layout); nullptr: none, and beta must be 0
  int64_t ldc = 0, batch_stride_C = 0;
  void* D = nullptr;
  int64_t ldd = 0, batch_stride_D = 0;
  const void* bias = nullptr;  // N values of d_type added to every row; nullptr: none
  int64_t batch_stride_bias = 0;  // 0: one bias for every batch
  Activation activation = Activation::identity;
  double alpha = 1.0, beta = 0.0;
  // A device buffer for the kernel's workspace (workspace_size() says how much), or nullptr: the
  // library allocates it on the stream (cudaMallocAsync) and frees it there after the launch.
  void* workspace = nullptr;
  size_t workspace_bytes = 0;
};

// Launches the exported kernel for the problem on `stream` (never synchronizes). The kernel
// exported for exactly this problem (types, layouts, epilogue, m, n, k, batch) runs it; another
// problem of the same types, layouts and epilogue runs on an exported kernel that can take it (not
// tuned for it: the status says so). Anything else, and any bad argument, is refused with a
// status naming the argument; nothing is launched then.
@N@_API Status gemm(const Gemm& problem, void* stream);
// Which kernel gemm() would run for the problem (ok), or why none can (not ok). Launches nothing.
@N@_API Status supports(const Gemm& problem);
// Bytes of workspace gemm() needs for the problem (0 for most kernels).
@N@_API Status workspace_size(const Gemm& problem, size_t* bytes);
// The problems the library was exported for, each with its kernel and how it was chosen.
@N@_API std::vector<std::string> problems();
// The library's API version (kApiVersion of the header it was built with).
@N@_API int api_version();

}  // namespace @N@
)";

std::string text_quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += (c == '\n' || c == '\r') ? ' ' : c;
  }
  return out + "\"";
}

int text_layout_value(Layout layout) { return layout == Layout::ColumnMajor ? 1 : 0; }

}  // namespace

int header_type(DataType type) {
  switch (type) {
    case DataType::f64:
      return 0;
    case DataType::f32:
    case DataType::tf32:
      return 1;
    case DataType::f16:
      return 2;
    case DataType::bf16:
      return 3;
    case DataType::s8:
      return 4;
    case DataType::u8:
      return 5;
    case DataType::s32:
      return 6;
    case DataType::e4m3:
      return 7;
    case DataType::e5m2:
      return 8;
  }
  return -1;
}

std::string header_text(const LibraryText& lib) {
  std::string note;
  for (const ProblemRow& p : lib.problems) note += "//   " + p.label + "\n";
  if (!lib.note.empty()) note += "// " + lib.note + "\n";
  std::string text = text_replaced(std::string(kTextHeader), "@NOTE@", note);
  text = text_replaced(text, "@CC@", std::to_string(lib.cc));
  return text_replaced(text, "@N@", lib.name);
}

std::string api_source_text(const LibraryText& lib) {
  const std::string& n = lib.name;
  std::string out = "// " + n +
                    ": the API over the exported kernels (generated by `tilecraft export`).\n"
                    "#include \"" +
                    n +
                    ".hpp\"\n"
                    "#include \"tilecraft/jit/export_dispatch.hpp\"\n\n";
  for (int m = 0; m < lib.modules; ++m) {
    out += "extern \"C\" const tc_module_table* " + n + "_module_table_" + std::to_string(m) +
           "(void);\n";
  }
  out += "\nnamespace {\n\nconst tc_export::Entry kEntries[] = {\n";
  for (const EntryRow& e : lib.entries) {
    out += "    {&" + n + "_module_table_" + std::to_string(e.module) + ", " +
           std::to_string(e.entry) + "u, " + text_quoted(e.kernel) + ", " +
           std::to_string(header_type(e.a)) + ", " + std::to_string(header_type(e.b)) + ", " +
           std::to_string(header_type(e.d)) + ", " + std::to_string(text_layout_value(e.layout_a)) +
           ", " + std::to_string(text_layout_value(e.layout_b)) + ", " +
           std::to_string(text_layout_value(e.layout_d)) + ", " +
           std::to_string(static_cast<int>(e.activation)) + ", " + (e.bias ? "1" : "0") + ", " +
           std::to_string(e.split_k_slices) + ", " + (e.split_k_parallel ? "1" : "0") + "},\n";
  }
  out += "};\n\nconst tc_export::Problem kProblems[] = {\n";
  for (const ProblemRow& p : lib.problems) {
    out += "    {" + std::to_string(p.m) + ", " + std::to_string(p.n) + ", " + std::to_string(p.k) +
           ", " + std::to_string(p.batch) + ", " + std::to_string(header_type(p.a)) + ", " +
           std::to_string(header_type(p.b)) + ", " + std::to_string(header_type(p.d)) + ", " +
           std::to_string(text_layout_value(p.layout_a)) + ", " +
           std::to_string(text_layout_value(p.layout_b)) + ", " +
           std::to_string(text_layout_value(p.layout_d)) + ", " +
           std::to_string(static_cast<int>(p.activation)) + ", " + (p.bias ? "1" : "0") + ", " +
           std::to_string(p.entry) + ", " + text_quoted(p.label) + "},\n";
  }
  out += "};\n\nconst tc_export::Library kLibrary = {" + text_quoted(n) + ", kEntries, " +
         std::to_string(lib.entries.size()) + ", kProblems, " +
         std::to_string(lib.problems.size()) + "};\n\n";
  out += n + "::Status status_of(const tc_export::Result& r) { return {r.ok, r.message}; }\n\n";
  out += "}  // namespace\n\nnamespace " + n + " {\n\n";
  out +=
      "Status gemm(const Gemm& problem, void* stream) {\n"
      "  return status_of(tc_export::run(kLibrary, problem, stream));\n}\n\n"
      "Status supports(const Gemm& problem) {\n"
      "  return status_of(tc_export::supports(kLibrary, problem));\n}\n\n"
      "Status workspace_size(const Gemm& problem, size_t* bytes) {\n"
      "  return status_of(tc_export::workspace_size(kLibrary, problem, bytes));\n}\n\n"
      "std::vector<std::string> problems() {\n"
      "  std::vector<std::string> out;\n"
      "  for (const tc_export::Problem& p : kProblems) out.push_back(p.label);\n"
      "  return out;\n}\n\n"
      "int api_version() { return kApiVersion; }\n\n";
  out += "}  // namespace " + n + "\n";
  return out;
}

std::string module_rename_text(const std::string& name, int index) {
  const std::string suffix = "_" + name + "_" + std::to_string(index);
  std::string out = "// ---- tilecraft export " + name + ", module " + std::to_string(index) +
                    ": its namespaces and symbols renamed, so that the modules of one library\n"
                    "// share no inline function, device image or table symbol.\n";
  for (const char* space : {"tc_image", "tc_gemm", "tc_sm90", "tc_conv", "tc_grouped", "tc_evt",
                            "tc_evt_args", "tc_conv_checks", "tc_grouped_checks"}) {
    out += "#define " + std::string(space) + " " + space + suffix + "\n";
  }
  out += "#define tc_device_image " + device_image_symbol(name, index) + "\n";
  out += "#define tilecraft_module_table " + name + "_module_table_" + std::to_string(index) + "\n";
  out +=
      "#define tilecraft_module_verify " + name + "_module_verify_" + std::to_string(index) + "\n";
  return out;
}

std::string device_image_symbol(const std::string& name, int index) {
  return "tc_device_image_" + name + "_" + std::to_string(index);
}

std::string version_script_text(const std::string& name) {
  // Unquoted: a quoted name would be matched literally, not as a pattern.
  return "{\n  global:\n    extern \"C++\" {\n      " + name +
         "::*;\n    };\n  local:\n    *;\n};\n";
}

std::string config_text(const std::string& name) {
  const std::string& n = name;
  return "# " + n + ": kernels exported by `tilecraft export` (generated). Defines " + n +
         "::" + n +
         ".\n"
         "get_filename_component(_" +
         n +
         "_prefix \"${CMAKE_CURRENT_LIST_DIR}/../../..\" ABSOLUTE)\n"
         "if(NOT TARGET " +
         n + "::" + n +
         ")\n"
         "  add_library(" +
         n + "::" + n +
         " SHARED IMPORTED)\n"
         "  set_target_properties(" +
         n + "::" + n +
         " PROPERTIES\n"
         "    IMPORTED_LOCATION \"${_" +
         n + "_prefix}/lib/lib" + n +
         ".so\"\n"
         "    IMPORTED_SONAME \"lib" +
         n +
         ".so\"\n"
         "    INTERFACE_INCLUDE_DIRECTORIES \"${_" +
         n +
         "_prefix}/include\"\n"
         "    INTERFACE_COMPILE_FEATURES cxx_std_17)\n"
         "endif()\n"
         "if(NOT EXISTS \"${_" +
         n + "_prefix}/lib/lib" + n +
         ".so\")\n"
         "  set(" +
         n +
         "_FOUND FALSE)\n"
         "  set(" +
         n + "_NOT_FOUND_MESSAGE \"expected ${_" + n + "_prefix}/lib/lib" + n +
         ".so beside this file's package, found none\")\n"
         "endif()\n"
         "unset(_" +
         n + "_prefix)\n";
}

std::string config_version_text(const std::string& name) {
  return "# " + name +
         ": API version 1 (generated by `tilecraft export`). A request for another major "
         "version,\n# or from a 32-bit project, is not compatible.\n"
         "set(PACKAGE_VERSION \"1.0.0\")\n"
         "if(NOT CMAKE_SIZEOF_VOID_P STREQUAL \"8\")\n"
         "  set(PACKAGE_VERSION_COMPATIBLE FALSE)\n"
         "  set(PACKAGE_VERSION_UNSUITABLE TRUE)\n"
         "elseif(NOT PACKAGE_FIND_VERSION OR (PACKAGE_FIND_VERSION_MAJOR STREQUAL \"1\" AND\n"
         "       PACKAGE_FIND_VERSION VERSION_LESS_EQUAL PACKAGE_VERSION))\n"
         "  set(PACKAGE_VERSION_COMPATIBLE TRUE)\n"
         "  if(PACKAGE_FIND_VERSION STREQUAL PACKAGE_VERSION)\n"
         "    set(PACKAGE_VERSION_EXACT TRUE)\n"
         "  endif()\n"
         "else()\n"
         "  set(PACKAGE_VERSION_COMPATIBLE FALSE)\n"
         "endif()\n";
}

}  // namespace tilecraft::exporting
