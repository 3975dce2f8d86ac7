#include "compile/nvcc_backend.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <string_view>
#include <thread>

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

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

struct Step {
  Result<ProcessResult> result = Status::ok();
  double seconds = 0;
};

Step run_step(const std::vector<std::string>& command, const Toolchain& toolchain,
              const std::atomic<bool>* cancel) {
  auto start = std::chrono::steady_clock::now();
  Step step;
  step.result = run_process(command, toolchain.nvcc_environment, cancel);
  step.seconds = seconds_since(start);
  return step;
}

// Records the step in `run` when it failed (or was cancelled); true when it succeeded.
bool passed(const Step& step, const char* name, const std::vector<std::string>& command,
            NvccRun& run) {
  const ProcessResult& process = *step.result;
  if (!process.output.empty()) {
    run.output += process.output;
    if (run.output.back() != '\n') run.output += '\n';
  }
  if (process.exit_code == 0 && !process.cancelled) return true;
  run.step = name;
  run.command = command;
  run.exit_code = process.exit_code;
  run.cancelled = process.cancelled;
  return false;
}

}  // namespace

Result<NvccRun> run_nvcc(const Toolchain& toolchain, const CompileRequest& request,
                         const std::string& build_dir, const std::atomic<bool>* cancel) {
  TILECRAFT_RETURN_IF_ERROR(write_file_synced(build_dir + "/source.cu", request.source, 0644));
  const BuildPlan plan = build_plan(toolchain, request, build_dir);
  NvccRun run;
  Step device;
  std::thread device_thread([&] { device = run_step(plan.device, toolchain, cancel); });
  Step host = run_step(plan.host, toolchain, cancel);
  device_thread.join();
  if (!device.result) return device.result.status();
  if (!host.result) return host.result.status();
  run.device_seconds = device.seconds;
  run.host_seconds = host.seconds;
  if (!passed(device, "device half", plan.device, run)) return run;
  if (!passed(host, "host half", plan.host, run)) return run;

  auto start = std::chrono::steady_clock::now();
  TILECRAFT_RETURN_IF_ERROR(write_file_synced(
      build_dir + "/image.S", device_image_assembly(build_dir + "/kernels.fatbin"), 0644));
  Step assemble = run_step(plan.assemble, toolchain, cancel);
  if (!assemble.result) return assemble.result.status();
  if (!passed(assemble, "device image", plan.assemble, run)) return run;
  Step link = run_step(plan.link, toolchain, cancel);
  if (!link.result) return link.result.status();
  run.link_seconds = seconds_since(start);
  run.command = plan.link;
  if (!passed(link, "link", plan.link, run)) return run;
  return run;
}

void remove_intermediates(const std::string& dir) {
  for (const char* intermediate : {"/kernels.fatbin", "/host.o", "/image.S", "/image.o"}) {
    unlink((dir + intermediate).c_str());
  }
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
  std::string message = "nvcc could not compile '" + request.name + "' (" + run.step +
                        ", exit code " + std::to_string(run.exit_code) + "):\n";
  message += run.output.empty() ? std::string("(nvcc printed nothing)\n")
                                : first_lines(run.output, kShownLines);
  message += "command: " + format_command(run.command) + "\n";
  message += "source kept at: " + kept_source;
  return Status(StatusCode::kCompileError, std::move(message));
}

}  // namespace tilecraft::compile
