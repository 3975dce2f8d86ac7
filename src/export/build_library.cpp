#include "export/build_library.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "compile/process.hpp"
#include "compile/toolchain.hpp"
#include "export/export_text.hpp"
#include "tilecraft/compile/file_util.hpp"
#include "tilecraft/core/settings.hpp"

namespace tilecraft::exporting {
namespace {

constexpr int kBuildShownLines = 40;

std::string build_first_lines(const std::string& text) {
  size_t end = 0;
  for (int lines = 0; lines < kBuildShownLines && end < text.size(); ++lines) {
    const size_t newline = text.find('\n', end);
    end = newline == std::string::npos ? text.size() : newline + 1;
  }
  std::string shown = text.substr(0, end);
  if (end < text.size()) shown += "[... more compiler output]\n";
  return shown.empty() ? "(the compiler printed nothing)\n" : shown;
}

// Ok when the step ran and exited with 0 and `output` exists; else the error for `step`.
Status build_checked(const Result<compile::ProcessResult>& run, const std::string& step,
                     const std::vector<std::string>& command, const std::string& output,
                     const std::string& build_dir) {
  if (!run) return run.status();
  if (run->exit_code == 0 && !run->cancelled && !run->timed_out &&
      access(output.c_str(), R_OK) == 0) {
    return Status::ok();
  }
  return Status(StatusCode::kCompileError,
                "export: the " + step + " failed (exit code " + std::to_string(run->exit_code) +
                    "):\n" + build_first_lines(run->output) + "command: " +
                    compile::format_command(command) + "\nsources kept in: " + build_dir);
}

double build_seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

Result<std::string> build_library(const std::string& name, const std::vector<ModuleSource>& modules,
                                  const std::string& api_source, const std::string& include_dir,
                                  const std::string& build_dir,
                                  const compile::ProgressFn& progress) {
  auto toolchain = compile::find_toolchain(settings());
  if (!toolchain) return toolchain.status();
  const compile::Toolchain& tools = **toolchain;
  const std::vector<std::string>& env = tools.nvcc_environment;
  std::vector<std::string> objects;
  for (size_t i = 0; i < modules.size(); ++i) {
    const std::string dir = build_dir + "/module" + std::to_string(i);
    TILECRAFT_RETURN_IF_ERROR(compile::make_private_dirs(dir));
    TILECRAFT_RETURN_IF_ERROR(
        compile::write_file_synced(dir + "/source.cu", modules[i].source, 0644));
    compile::CompileRequest request{name + "_module" + std::to_string(i), modules[i].source,
                                    modules[i].arch_flags};
    const compile::BuildPlan plan = compile::build_plan(tools, request, dir);
    const auto start = std::chrono::steady_clock::now();
    progress("[" + std::to_string(i + 1) + "/" + std::to_string(modules.size()) +
             "] compiling module " + std::to_string(i) + " of " + name + " (" + dir +
             "/source.cu)");
    // Both halves at once, as the JIT builds a module.
    Result<compile::ProcessResult> device = Status::ok();
    std::thread device_thread([&] { device = compile::run_process(plan.device, env); });
    Result<compile::ProcessResult> host = compile::run_process(plan.host, env);
    device_thread.join();
    TILECRAFT_RETURN_IF_ERROR(build_checked(device, "device half of module " + std::to_string(i),
                                            plan.device, dir + "/kernels.fatbin", build_dir));
    TILECRAFT_RETURN_IF_ERROR(build_checked(host, "host half of module " + std::to_string(i),
                                            plan.host, dir + "/host.o", build_dir));
    // The device image under the module's own symbol (module_rename_text renames its use).
    std::string assembly = compile::device_image_assembly(dir + "/kernels.fatbin");
    const std::string symbol = device_image_symbol(name, static_cast<int>(i));
    for (size_t at = assembly.find("tc_device_image"); at != std::string::npos;
         at = assembly.find("tc_device_image", at + symbol.size())) {
      assembly.replace(at, 15, symbol);
    }
    TILECRAFT_RETURN_IF_ERROR(compile::write_file_synced(dir + "/image.S", assembly, 0644));
    TILECRAFT_RETURN_IF_ERROR(build_checked(compile::run_process(plan.assemble, env),
                                            "device image of module " + std::to_string(i),
                                            plan.assemble, dir + "/image.o", build_dir));
    objects.push_back(dir + "/host.o");
    objects.push_back(dir + "/image.o");
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.1f", build_seconds_since(start));
    progress("    module " + std::to_string(i) + " compiled in " + seconds + " s");
  }

  const std::string api = build_dir + "/api.cpp";
  TILECRAFT_RETURN_IF_ERROR(compile::write_file_synced(api, api_source, 0644));
  std::vector<std::string> compile_api = {
      tools.nvcc, "-std=c++17",       "-O2",
      "-DNDEBUG", "-Xcompiler=-fPIC", "-Xcompiler=-fvisibility=hidden"};
  if (!tools.host_compiler.empty())
    compile_api.insert(compile_api.end(), {"-ccbin", tools.host_compiler});
  compile_api.insert(compile_api.end(), {"-I" + tools.jit_headers.root, "-I" + include_dir, "-c",
                                         api, "-o", build_dir + "/api.o"});
  TILECRAFT_RETURN_IF_ERROR(build_checked(compile::run_process(compile_api, env), "API source",
                                          compile_api, build_dir + "/api.o", build_dir));
  objects.push_back(build_dir + "/api.o");

  const std::string map = build_dir + "/exports.map";
  TILECRAFT_RETURN_IF_ERROR(compile::write_file_synced(map, version_script_text(name), 0644));
  const std::string library = build_dir + "/lib" + name + ".so";
  // A static CUDA runtime: the library needs only the driver, whatever runtime its user links.
  std::vector<std::string> link = {tools.nvcc, "-shared", "-cudart=static"};
  if (!tools.host_compiler.empty()) link.insert(link.end(), {"-ccbin", tools.host_compiler});
  link.insert(link.end(), {"-o", library});
  link.insert(link.end(), objects.begin(), objects.end());
  link.insert(link.end(), {"-Xlinker", "--version-script=" + map, "-Xlinker",
                           "-soname=lib" + name + ".so", "-Xlinker", "--no-undefined"});
  progress("linking lib" + name + ".so");
  TILECRAFT_RETURN_IF_ERROR(
      build_checked(compile::run_process(link, env), "link", link, library, build_dir));
  return library;
}

}  // namespace tilecraft::exporting
