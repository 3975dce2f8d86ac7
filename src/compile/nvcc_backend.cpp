#include "compile/nvcc_backend.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string_view>

#include "compile/file_util.hpp"
#include "compile/process.hpp"

namespace tilecraft::compile {
namespace {

constexpr int kShownLines = 60;

std::string first_lines(const std::string& text, int count) {
  size_t end = 0;
  int lines = 0;
  while (lines < count && end < text.size()) {
    size_t newline = text.find('\n', end);
    end = newline == std::string::npos ? text.size() : newline + 1;
    ++lines;
  }
  std::string shown = text.substr(0, end);
  int rest = 0;
  for (size_t at = end; at < text.size(); ++at) rest += text[at] == '\n' ? 1 : 0;
  if (end < text.size() && text.back() != '\n') ++rest;
  if (!shown.empty() && shown.back() != '\n') shown += '\n';
  if (rest > 0) shown += "[... " + std::to_string(rest) + " more lines of compiler output]\n";
  return shown;
}

}  // namespace

Result<NvccRun> run_nvcc(const Toolchain& toolchain, const CompileRequest& request,
                         const std::string& build_dir, const std::atomic<bool>* cancel) {
  std::string source_path = build_dir + "/source.cu";
  TILECRAFT_RETURN_IF_ERROR(write_file_synced(source_path, request.source, 0644));
  NvccRun run;
  run.command = compile_command(toolchain, request, source_path, build_dir + "/module.so");
  Result<ProcessResult> process = run_process(run.command, toolchain.nvcc_environment, cancel);
  if (!process) return process.status();
  run.exit_code = process->exit_code;
  run.output = std::move(process->output);
  run.cancelled = process->cancelled;
  return run;
}

Status check_module_produced(const CompileRequest& request, const NvccRun& run,
                             const std::string& build_dir) {
  std::string module = build_dir + "/module.so";
  UniqueFd fd(open(module.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  struct stat info;
  char magic[4] = {0, 0, 0, 0};
  std::string problem;
  if (!fd.valid()) {
    problem = "produced no module (" + errno_text("cannot open", module) + ")";
  } else if (fstat(fd.get(), &info) != 0 || !S_ISREG(info.st_mode)) {
    problem = "produced something that is not a file at " + module;
  } else if (info.st_size == 0) {
    problem = "produced an empty " + module;
  } else if (read(fd.get(), magic, sizeof magic) != sizeof magic || std::string_view(magic, 4) !=
                                                                        "\x7f"
                                                                        "ELF") {
    problem = "produced a " + module + " that is not an ELF shared object";
  } else {
    return Status::ok();
  }
  std::string message = "nvcc exited with 0 for '" + request.name + "' but " + problem + ":\n";
  message += run.output.empty() ? std::string("(nvcc printed nothing)\n")
                                : first_lines(run.output, kShownLines);
  message += "command: " + format_command(run.command);
  return Status(StatusCode::kCompileError, std::move(message));
}

Status compile_error(const CompileRequest& request, const NvccRun& run,
                     const std::string& kept_source) {
  std::string message = "nvcc could not compile '" + request.name + "' (exit code " +
                        std::to_string(run.exit_code) + "):\n";
  message += run.output.empty() ? std::string("(nvcc printed nothing)\n")
                                : first_lines(run.output, kShownLines);
  message += "command: " + format_command(run.command) + "\n";
  message += "source kept at: " + kept_source;
  return Status(StatusCode::kCompileError, std::move(message));
}

}  // namespace tilecraft::compile
