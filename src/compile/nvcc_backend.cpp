#include "compile/nvcc_backend.hpp"

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <string_view>
#include <thread>

#include "compile/process.hpp"
#include "tilecraft/compile/file_util.hpp"

namespace tilecraft::compile {
namespace {

constexpr int kShownLines = 60;

// The first `count` lines of text, and how many more there were.
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

std::string shown_output(const NvccRun& run) {
  return run.output.empty() ? std::string("(nvcc printed nothing)\n")
                            : first_lines(run.output, kShownLines);
}

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

// What is wrong with the output a step should have written at `path`: "" when it is a non-empty
// regular file, and an ELF file where `elf` names the kind of one it must be.
std::string output_problem(const std::string& path, const char* elf) {
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  struct stat info;
  char magic[4] = {0, 0, 0, 0};
  if (!fd.valid()) return "produced no " + path + " (" + errno_text("cannot open", path) + ")";
  if (fstat(fd.get(), &info) != 0 || !S_ISREG(info.st_mode)) {
    return "produced something that is not a file at " + path;
  }
  if (info.st_size == 0) return "produced an empty " + path;
  if (elf && (read(fd.get(), magic, sizeof magic) != sizeof magic ||
              std::string_view(magic, sizeof magic) != ELFMAG)) {
    return "produced a " + path + " that is not an " + elf;
  }
  return "";
}

// Records the step in `run` when it exited with 0 but left no usable output; true when it did.
bool produced(const std::string& path, const char* name, const std::vector<std::string>& command,
              NvccRun& run) {
  std::string problem = output_problem(path, nullptr);
  if (problem.empty()) return true;
  run.step = name;
  run.command = command;
  run.no_output = std::move(problem);
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
  // A compiler that exits with 0 without writing its output is named here, not by the next step
  // that reads what is missing.
  if (!produced(build_dir + "/kernels.fatbin", "device half", plan.device, run)) return run;
  if (!produced(build_dir + "/host.o", "host half", plan.host, run)) return run;

  auto start = std::chrono::steady_clock::now();
  TILECRAFT_RETURN_IF_ERROR(write_file_synced(
      build_dir + "/image.S", device_image_assembly(build_dir + "/kernels.fatbin"), 0644));
  Step assemble = run_step(plan.assemble, toolchain, cancel);
  if (!assemble.result) return assemble.result.status();
  if (!passed(assemble, "device image", plan.assemble, run)) return run;
  if (!produced(build_dir + "/image.o", "device image", plan.assemble, run)) return run;
  Step link = run_step(plan.link, toolchain, cancel);
  if (!link.result) return link.result.status();
  run.link_seconds = seconds_since(start);
  run.command = plan.link;
  passed(link, "link", plan.link, run);
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
  const std::string problem = output_problem(module, "ELF shared object");
  if (problem.empty()) return Status::ok();
  std::string message = "nvcc exited with 0 for '" + request.name + "' but " + problem + ":\n";
  message += shown_output(run) + "command: " + format_command(run.command);
  return Status(StatusCode::kCompileError, std::move(message));
}

Status compile_error(const CompileRequest& request, const NvccRun& run,
                     const std::string& kept_source) {
  std::string message = run.no_output.empty()
                            ? "nvcc could not compile '" + request.name + "' (" + run.step +
                                  ", exit code " + std::to_string(run.exit_code) + "):\n"
                            : "nvcc could not compile '" + request.name + "': its " + run.step +
                                  " exited with 0 but " + run.no_output + ":\n";
  message += shown_output(run) + "command: " + format_command(run.command) + "\n";
  message += "source kept at: " + kept_source;
  return Status(StatusCode::kCompileError, std::move(message));
}

}  // namespace tilecraft::compile
