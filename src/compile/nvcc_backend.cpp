#include "compile/nvcc_backend.hpp"

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
                         const std::string& build_dir) {
  std::string source_path = build_dir + "/source.cu";
  TILECRAFT_RETURN_IF_ERROR(write_file_synced(source_path, request.source, 0644));
  NvccRun run;
  run.command = compile_command(toolchain, request, source_path, build_dir + "/module.so");
  Result<ProcessResult> process = run_process(run.command);
  if (!process) return process.status();
  run.exit_code = process->exit_code;
  run.output = std::move(process->output);
  return run;
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
