// The text files of an exported library: its public header, the api.cpp that lists its kernels
// and problems for jit/export_dispatch.hpp, the renames that let several generated modules share
// one shared object, the linker's export list and the CMake package files.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tilecraft/core/types.hpp"
#include "tilecraft/describe/epilogue.hpp"

namespace tilecraft::exporting {

// One kernel of the library: entry `entry` of module `module`'s table.
struct EntryRow {
  std::string kernel;
  int module = 0, entry = 0;
  DataType a{}, b{}, d{};  // tensor types (tf32 kernels take f32 tensors)
  Layout layout_a{}, layout_b{}, layout_d{};
  Activation activation = Activation::identity;
  bool bias = false;
  int split_k_slices = 1;
  bool split_k_parallel = false;
};

// One problem of the export and the row of its kernel.
struct ProblemRow {
  int64_t m = 0, n = 0, k = 0, batch = 1;
  DataType a{}, b{}, d{};
  Layout layout_a{}, layout_b{}, layout_d{};
  Activation activation = Activation::identity;
  bool bias = false;
  int entry = 0;
  std::string label;  // the problem, its kernel and how it was chosen
};

struct LibraryText {
  std::string name;
  int cc = 0;
  std::string note;  // how the kernels were chosen, for the header's comment
  std::vector<EntryRow> entries;
  std::vector<ProblemRow> problems;
  int modules = 0;
};

// The value of `type` in the exported header's DataType (tf32 -> f32: a tensor's type).
int header_type(DataType type);

std::string header_text(const LibraryText& lib);
std::string api_source_text(const LibraryText& lib);
// Put before module `index`'s generated source: its tilecraft namespaces and symbols renamed, so
// that the modules of one library never share an inline function or a table symbol.
std::string module_rename_text(const std::string& name, int index);
// The symbol module `index`'s device image is linked in as (see module_rename_text).
std::string device_image_symbol(const std::string& name, int index);
// The linker version script: only the library's namespace is exported.
std::string version_script_text(const std::string& name);
std::string config_text(const std::string& name);
std::string config_version_text(const std::string& name);

}  // namespace tilecraft::exporting
