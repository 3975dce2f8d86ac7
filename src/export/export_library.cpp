#include "tilecraft/export/export_library.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "export/build_library.hpp"
#include "export/choose_kernels.hpp"
#include "export/export_text.hpp"
#include "tilecraft/compile/file_util.hpp"
#include "tilecraft/compile/signed_record.hpp"
#include "tilecraft/emit/gemm_emitter.hpp"
#include "tilecraft/runtime/device.hpp"

namespace tilecraft::exporting {
namespace {

namespace fs = std::filesystem;

// Marks a folder as an export's: only such a folder (or an empty one) is written into again.
// The marker is a signed record: one this user's key did not sign (planted or edited) marks
// nothing.
constexpr const char* kExportMarker = ".tilecraft-export";

std::string marker_body(const std::string& name) {
  return "written by tilecraft export: the library " + name + "\n";
}

bool is_marked_export(const std::string& dir) {
  Result<std::string> key = compile::user_signing_key();
  if (!key) return false;
  const auto text = compile::read_record_file((fs::path(dir) / kExportMarker).string(), 4096);
  return text && compile::verified_body(*key, *text).has_value();
}
constexpr size_t kExportMaxNameLength = 64;

bool export_is_identifier(const std::string& text) {
  if (text.empty() || !(std::isalpha(static_cast<unsigned char>(text[0])) || text[0] == '_')) {
    return false;
  }
  return std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

bool export_is_keyword(const std::string& text) {
  static const char* const keywords[] = {"alignas",
                                         "alignof",
                                         "and",
                                         "asm",
                                         "auto",
                                         "bool",
                                         "break",
                                         "case",
                                         "catch",
                                         "char",
                                         "class",
                                         "const",
                                         "constexpr",
                                         "continue",
                                         "decltype",
                                         "default",
                                         "delete",
                                         "do",
                                         "double",
                                         "else",
                                         "enum",
                                         "explicit",
                                         "export",
                                         "extern",
                                         "false",
                                         "float",
                                         "for",
                                         "friend",
                                         "goto",
                                         "if",
                                         "inline",
                                         "int",
                                         "long",
                                         "mutable",
                                         "namespace",
                                         "new",
                                         "noexcept",
                                         "not",
                                         "nullptr",
                                         "operator",
                                         "or",
                                         "private",
                                         "protected",
                                         "public",
                                         "register",
                                         "return",
                                         "short",
                                         "signed",
                                         "sizeof",
                                         "static",
                                         "struct",
                                         "switch",
                                         "template",
                                         "this",
                                         "throw",
                                         "true",
                                         "try",
                                         "typedef",
                                         "typeid",
                                         "typename",
                                         "union",
                                         "unsigned",
                                         "using",
                                         "virtual",
                                         "void",
                                         "volatile",
                                         "while",
                                         "xor",
                                         "std",
                                         "concept",
                                         "requires",
                                         "co_await",
                                         "co_return",
                                         "co_yield",
                                         "consteval",
                                         "constinit",
                                         "char8_t",
                                         "char16_t",
                                         "char32_t",
                                         "wchar_t",
                                         "static_assert",
                                         "thread_local",
                                         "dynamic_cast",
                                         "static_cast",
                                         "const_cast",
                                         "reinterpret_cast",
                                         "cutlass",
                                         "cute"};
  return std::any_of(std::begin(keywords), std::end(keywords),
                     [&](const char* k) { return text == k; });
}

// Ok when `dir` is missing (it is made), an empty folder or an earlier export's.
Status export_check_out_dir(const std::string& dir) {
  if (dir.empty())
    return Status::invalid("out_dir: expected a folder to write the library into, got ''");
  struct stat info;
  if (lstat(dir.c_str(), &info) != 0) {
    if (errno != ENOENT)
      return Status::invalid("out_dir: " + compile::errno_text("cannot look at", dir));
    const fs::path parent = fs::absolute(fs::path(dir)).parent_path();
    std::error_code error;
    if (!fs::is_directory(parent, error)) {
      return Status::invalid("out_dir: expected a folder or a new one in an existing folder, got " +
                             dir + ", whose folder " + parent.string() + " does not exist");
    }
    return Status::ok();
  }
  if (!S_ISDIR(info.st_mode)) {
    return Status::invalid("out_dir: expected a folder, got " + dir + ", which is " +
                           compile::file_kind(info.st_mode));
  }
  std::error_code error;
  if (is_marked_export(dir)) return Status::ok();
  if (!fs::is_empty(dir, error)) {
    return Status::invalid("out_dir: expected an empty folder or an earlier export's (holding " +
                           std::string(kExportMarker) + "), got " + dir +
                           ", which holds other files: tilecraft writes only into folders it made");
  }
  return Status::ok();
}

// Writes `contents` to `path` through a temporary file and a rename.
Status export_write_replacing(const std::string& path, const std::string& contents) {
  const std::string temporary = path + ".tmp" + std::to_string(getpid());
  TILECRAFT_RETURN_IF_ERROR(compile::write_file_synced(temporary, contents, 0644));
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    Status error = Status::invalid(compile::errno_text("cannot rename into", path));
    std::remove(temporary.c_str());
    return error;
  }
  return Status::ok();
}

Status export_make_dirs(const std::string& path) {
  std::error_code error;
  fs::create_directories(path, error);
  if (error) return Status::invalid("out_dir: cannot make " + path + ": " + error.message());
  return Status::ok();
}

std::string export_chosen_text(const std::vector<ExportedProblem>& problems) {
  const bool all_tuned = std::all_of(problems.begin(), problems.end(),
                                     [](const auto& p) { return p.how.rfind("tuned", 0) == 0; });
  return all_tuned ? "Every kernel is the winner measured on this GPU for its problem."
                   : "NOT TUNED: some kernels are the performance model's first pick, never "
                     "measured; export again with a GPU (without --untuned) for tuned ones.";
}

}  // namespace

Status check_library_name(const std::string& name, const std::string& argument) {
  if (!export_is_identifier(name) || name.size() > kExportMaxNameLength) {
    std::string shown =
        name.size() > kExportMaxNameLength ? name.substr(0, kExportMaxNameLength) + "..." : name;
    for (char& c : shown) {
      if (!std::isprint(static_cast<unsigned char>(c))) c = '?';
    }
    return Status::invalid(
        argument + ": expected a C identifier of at most " + std::to_string(kExportMaxNameLength) +
        " characters (a letter or _, then letters, digits or _), got '" + shown + "'");
  }
  if (export_is_keyword(name) || name.rfind("__", 0) == 0 ||
      (name[0] == '_' && std::isupper(static_cast<unsigned char>(name[1])))) {
    return Status::invalid(argument + ": expected a name free for a C++ namespace, got '" + name +
                           "', which is a keyword or reserved");
  }
  if (name.rfind("tc_", 0) == 0 || name.rfind("tilecraft", 0) == 0) {
    return Status::invalid(argument + ": expected a name of your own, got '" + name +
                           "': names starting with tc_ or tilecraft are tilecraft's");
  }
  return Status::ok();
}

std::string name_from_folder(const std::string& out_dir) {
  std::string base = fs::path(out_dir).lexically_normal().filename().string();
  if (base.empty() || base == "." || base == "..") {
    base = fs::absolute(fs::path(out_dir)).lexically_normal().filename().string();
  }
  std::string name;
  for (char c : base) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (!name.empty() && std::isdigit(static_cast<unsigned char>(name[0]))) name = "_" + name;
  return check_library_name(name) ? name : "";
}

Result<ExportReport> export_gemm_library(const std::vector<GemmProblem>& problems,
                                         const ExportOptions& options,
                                         const compile::ProgressFn& progress) {
  TILECRAFT_RETURN_IF_ERROR(check_library_name(options.name));
  TILECRAFT_RETURN_IF_ERROR(export_check_out_dir(options.out_dir));
  if (problems.empty()) return Status::invalid("problems: expected at least one, got none");
  TILECRAFT_RETURN_IF_ERROR(tune::validate(options.tuning));

  // The capability to build for, and whether a GPU is here to tune on.
  const Status gpu = cuda_device_available();
  int device_cc = 0;
  if (gpu) {
    auto info = device_info(0);
    if (!info) return info.status();
    device_cc = info->compute_capability;
  }
  if (!options.cc && !gpu) {
    return Status::invalid(
        "cc: expected the compute capability to build for (there is no GPU "
        "here to take it from: " +
        gpu.message() + "), got none");
  }
  const int cc = options.cc ? *options.cc : device_cc;
  if (cc < 80) {
    return Status::invalid(
        "cc: expected a compute capability of 80 or more (tilecraft's kernels "
        "are SM80 and SM90 ones), got " +
        std::to_string(cc));
  }
  const bool tune_here = !options.untuned && gpu && cc == device_cc;
  if (!options.untuned && gpu && cc != device_cc) {
    return Status::invalid("cc: expected this GPU's compute capability " +
                           std::to_string(device_cc) + " (tuned winners are measured on it), got " +
                           std::to_string(cc) + "; export untuned first picks for another");
  }

  ExportReport report;
  report.name = options.name;
  report.cc = cc;
  LibraryText text;
  text.name = options.name;
  text.cc = cc;
  std::vector<std::string> classes;                   // module classes, in order of first use
  std::vector<std::vector<emit::GemmEntry>> modules;  // entries per class
  std::map<std::string, int> row_of_kernel;           // entry name -> row in text.entries
  for (const GemmProblem& problem : problems) {
    auto args = arguments_of(problem);
    if (!args) return args.status();
    auto choice = choose_kernel(problem, *args, cc, tune_here, options, progress);
    if (!choice) return choice.status();
    const api::KernelMetadata& m = choice->kernel.metadata();
    const GemmDescription& d = choice->kernel.description();
    const bool parallel = m.design.split_k_parallel && m.design.split_k_slices > 1;
    emit::GemmEntry entry{
        d, parallel ? emit::GemmEntryKind::kSplitKParallel : emit::GemmEntryKind::kUniversal};
    const std::string entry_name = emit::entry_name(entry);
    auto found = row_of_kernel.find(entry_name);
    if (found == row_of_kernel.end()) {
      const std::string kind = emit::module_class(d);
      auto at = std::find(classes.begin(), classes.end(), kind);
      const int module = static_cast<int>(at - classes.begin());
      if (at == classes.end()) {
        classes.push_back(kind);
        modules.emplace_back();
      }
      EntryRow row;
      row.kernel = m.kernel_name;
      row.module = module;
      row.entry = static_cast<int>(modules[module].size());
      row.a = args->A().dtype;
      row.b = args->B().dtype;
      row.d = args->out().dtype;
      row.layout_a = args->layout_a();
      row.layout_b = args->layout_b();
      row.layout_d = args->layout_out();
      row.activation = problem.activation;
      row.bias = problem.bias;
      row.split_k_slices = std::max(1, m.design.split_k_slices);
      row.split_k_parallel = parallel;
      modules[module].push_back(entry);
      found = row_of_kernel.emplace(entry_name, static_cast<int>(text.entries.size())).first;
      text.entries.push_back(row);
      report.kernels.push_back(m.kernel_name);
    }
    ProblemRow p;
    p.m = problem.m;
    p.n = problem.n;
    p.k = problem.k;
    p.batch = problem.batch;
    p.a = args->A().dtype;
    p.b = args->B().dtype;
    p.d = args->out().dtype;
    p.layout_a = args->layout_a();
    p.layout_b = args->layout_b();
    p.layout_d = args->layout_out();
    p.activation = problem.activation;
    p.bias = problem.bias;
    p.entry = found->second;
    p.label = label_of(problem) + " -> " + m.kernel_name + " (" + choice->how + ")";
    text.problems.push_back(p);
    report.problems.push_back({label_of(problem), m.kernel_name, choice->how});
    progress(label_of(problem) + ": " + m.kernel_name + " (" + choice->how + ")");
  }
  text.modules = static_cast<int>(modules.size());
  text.note = export_chosen_text(report.problems);
  report.tuned = text.note.rfind("Every", 0) == 0;

  std::vector<ModuleSource> sources;
  for (size_t i = 0; i < modules.size(); ++i) {
    std::string source;
    try {
      source = emit::emit_gemm_module(modules[i]);
    } catch (const Error& error) {
      return error.status();
    }
    sources.push_back({module_rename_text(options.name, static_cast<int>(i)) + source,
                       emit::gemm_module_arch_flags(modules[i].front().description.arch)});
  }

  // Build in a folder of the export's own; the results are renamed into place.
  const fs::path out = fs::absolute(fs::path(options.out_dir)).lexically_normal();
  const std::string include_dir = (out / "include").string();
  const std::string lib_dir = (out / "lib").string();
  const std::string cmake_dir = (out / "lib" / "cmake" / options.name).string();
  for (const std::string& dir : {out.string(), include_dir, lib_dir, cmake_dir}) {
    TILECRAFT_RETURN_IF_ERROR(export_make_dirs(dir));
  }
  Result<std::string> key = compile::user_signing_key();
  if (!key) return key.status();
  TILECRAFT_RETURN_IF_ERROR(export_write_replacing(
      (out / kExportMarker).string(), compile::signed_record(*key, marker_body(options.name))));
  // A build folder of this export's own, new (nothing that was there is touched or followed).
  std::string build_dir = (out / ".build-XXXXXX").string();
  if (mkdtemp(build_dir.data()) == nullptr) {
    return Status::invalid(
        compile::errno_text("out_dir: cannot make a build folder in", out.string()));
  }
  struct RemovedAtTheEnd {
    std::string path;
    ~RemovedAtTheEnd() { compile::remove_path(path); }
  } build_folder{build_dir};
  TILECRAFT_RETURN_IF_ERROR(export_make_dirs(build_dir + "/include"));
  const std::string header = header_text(text);
  TILECRAFT_RETURN_IF_ERROR(
      compile::write_file_synced(build_dir + "/include/" + options.name + ".hpp", header, 0644));
  auto library = build_library(options.name, sources, api_source_text(text), build_dir + "/include",
                               build_dir, progress);
  if (!library) return library.status();

  report.header = include_dir + "/" + options.name + ".hpp";
  report.library = lib_dir + "/lib" + options.name + ".so";
  report.config = cmake_dir + "/" + options.name + "Config.cmake";
  TILECRAFT_RETURN_IF_ERROR(export_write_replacing(report.header, header));
  if (std::rename(library->c_str(), report.library.c_str()) != 0) {
    return Status::invalid(compile::errno_text("cannot rename into", report.library));
  }
  TILECRAFT_RETURN_IF_ERROR(export_write_replacing(report.config, config_text(options.name)));
  TILECRAFT_RETURN_IF_ERROR(export_write_replacing(
      cmake_dir + "/" + options.name + "ConfigVersion.cmake", config_version_text(options.name)));
  return report;
}

}  // namespace tilecraft::exporting
