#include "compile/process.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>

#include "tilecraft/compile/file_util.hpp"
#include "tilecraft/core/program_path.hpp"

extern char** environ;

namespace tilecraft::compile {
namespace {

constexpr int kPollMilliseconds = 50;

std::vector<std::string> merged_environment(const std::vector<std::string>& extra_env) {
  std::vector<std::string> merged;
  for (char** entry = environ; entry && *entry; ++entry) {
    std::string_view current(*entry);
    bool replaced = false;
    for (const std::string& extra : extra_env) {
      std::string_view name = std::string_view(extra).substr(0, extra.find('=') + 1);
      if (current.substr(0, name.size()) == name) replaced = true;
    }
    if (!replaced) merged.emplace_back(current);
  }
  merged.insert(merged.end(), extra_env.begin(), extra_env.end());
  return merged;
}

std::vector<char*> pointers_to(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  pointers.reserve(strings.size() + 1);
  for (std::string& text : strings) pointers.push_back(text.data());
  pointers.push_back(nullptr);
  return pointers;
}

// --- The supervisor: runs between fork and _exit, so only async-signal-safe calls. ---

void kill_own_group(int) {
  kill(0, SIGKILL);  // the supervisor leads the group: this ends it, the child and its children
  _exit(128 + SIGKILL);
}

// Closes what exec would close: the descriptors marked close-on-exec, except `keep`. The
// supervisor never execs, so without this it would hold the caller's descriptors (a lock file's,
// say) for as long as the child runs; descriptors the caller meant children to inherit (a tool's
// like compute-sanitizer's, passed to every process it follows) stay, as they would across exec.
void close_exec_closed_descriptors(int keep) {
  auto close_if_cloexec = [keep](int fd) {
    if (fd <= STDERR_FILENO || fd == keep) return;
    int flags = fcntl(fd, F_GETFD);
    if (flags >= 0 && (flags & FD_CLOEXEC)) close(fd);
  };
  int dir = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) {
    struct rlimit limit;
    rlim_t last = getrlimit(RLIMIT_NOFILE, &limit) == 0 ? limit.rlim_cur : 65536;
    for (int fd = 3; fd < static_cast<int>(last < 65536 ? last : 65536); ++fd) close_if_cloexec(fd);
    return;
  }
  alignas(8) char buffer[4096];
  for (;;) {
    long got = syscall(SYS_getdents64, dir, buffer, sizeof buffer);
    if (got <= 0) break;
    for (long at = 0; at < got;) {
      const auto* entry = reinterpret_cast<const struct dirent64*>(buffer + at);
      at += entry->d_reclen;
      int fd = 0;
      const char* name = entry->d_name;
      if (*name < '0' || *name > '9') continue;
      for (; *name >= '0' && *name <= '9'; ++name) fd = fd * 10 + (*name - '0');
      if (fd != dir) close_if_cloexec(fd);
    }
  }
  close(dir);
}

void write_errno(int fd, int error) {
  while (write(fd, &error, sizeof error) < 0 && errno == EINTR) {
  }
}

[[noreturn]] void supervise(pid_t parent, const char* program, char* const* argv, char* const* envp,
                            int devnull, int output, int report) {
  setpgid(0, 0);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  struct sigaction on_term {};
  on_term.sa_handler = kill_own_group;
  sigaction(SIGTERM, &on_term, nullptr);
  struct sigaction by_default {};
  by_default.sa_handler = SIG_DFL;
  for (int sig : {SIGINT, SIGQUIT, SIGHUP, SIGPIPE, SIGCHLD}) sigaction(sig, &by_default, nullptr);
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() != parent) kill_own_group(0);  // the parent died before PDEATHSIG was armed

  // Out of the way first (any of the three may itself be 0, 1 or 2 in a process that closed
  // those), as close-on-exec copies that the child never sees.
  devnull = fcntl(devnull, F_DUPFD_CLOEXEC, 3);
  output = fcntl(output, F_DUPFD_CLOEXEC, 3);
  report = fcntl(report, F_DUPFD_CLOEXEC, 3);
  if (devnull < 0 || output < 0 || report < 0) _exit(127);
  if (dup2(devnull, STDIN_FILENO) < 0 || dup2(output, STDOUT_FILENO) < 0 ||
      dup2(output, STDERR_FILENO) < 0) {
    _exit(127);
  }
  close_exec_closed_descriptors(report);

  int exec_status[2];
  if (pipe2(exec_status, O_CLOEXEC) != 0) {
    write_errno(report, errno);
    _exit(127);
  }
  pid_t child = fork();
  if (child == 0) {
    sigaction(SIGTERM, &by_default, nullptr);
    execve(program, argv, envp);
    write_errno(exec_status[1], errno);
    _exit(127);
  }
  int fork_error = errno;
  close(exec_status[1]);
  if (child < 0) {
    write_errno(report, fork_error);
    _exit(127);
  }
  int exec_error = 0;
  ssize_t got;
  while ((got = read(exec_status[0], &exec_error, sizeof exec_error)) < 0 && errno == EINTR) {
  }
  if (got == static_cast<ssize_t>(sizeof exec_error)) write_errno(report, exec_error);
  int status = 0;
  while (waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) _exit(127);
  }
  _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
}

// --- The parent side. ---

int wait_for(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

enum class Supervisor { running, exited, gone };

// Whether `supervisor` has exited (its child has ended). It is left unreaped: while it is a zombie
// its pid, which is also its group's id, cannot be given to another process. `gone`: someone else
// reaped it (a SIGCHLD set to SIG_IGN), so its group's id is not ours any more.
Supervisor state_of(pid_t supervisor) {
  siginfo_t info{};
  if (waitid(P_PID, supervisor, &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
    return errno == EINTR ? Supervisor::running : Supervisor::gone;
  }
  return info.si_pid == supervisor ? Supervisor::exited : Supervisor::running;
}

void keep_output(const char* data, size_t size, ProcessResult* result, size_t* dropped) {
  size_t room = kMaxProcessOutput - std::min(kMaxProcessOutput, result->output.size());
  size_t kept = std::min(room, size);
  result->output.append(data, kept);
  *dropped += size - kept;
}

// Reads what is in the pipe now without waiting for more (a few buffers at most: a writer that
// never stops cannot keep this going).
void drain(int fd, char* buffer, size_t size, ProcessResult* result, size_t* dropped) {
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) return;
  for (int reads = 0; reads < 64; ++reads) {
    ssize_t got = read(fd, buffer, size);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    keep_output(buffer, static_cast<size_t>(got), result, dropped);
  }
}

// Reads the child's output until the child has ended and every holder of the pipe's write end is
// gone, killing the child's group as soon as `cancel` is set or the deadline passes. What the
// child started may hold the pipe after it ended (a background job of its group, or a daemon that
// left the group with setsid): kOutputGraceSeconds after the child's end, reading stops whoever
// still holds it. Returns false when the supervisor was reaped by someone else.
bool collect_output(int fd, pid_t group, const std::atomic<bool>* cancel,
                    std::optional<std::chrono::steady_clock::time_point> deadline,
                    ProcessResult* result) {
  using Clock = std::chrono::steady_clock;
  const auto grace = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(kOutputGraceSeconds));
  bool killed = false;
  std::optional<Clock::time_point> child_ended;
  size_t dropped = 0;
  char buffer[16384];
  pollfd watched{fd, POLLIN, 0};
  int wait_ms = kPollMilliseconds;
  Supervisor supervisor = Supervisor::running;
  for (;;) {
    // With the pipe closed, only the supervisor's end is awaited: it comes within moments of
    // the child's, so look often at first.
    int ready = poll(&watched, 1, watched.fd < 0 ? wait_ms : kPollMilliseconds);
    if (watched.fd < 0) wait_ms = std::min(2 * wait_ms, kPollMilliseconds);
    if (!killed && cancel && cancel->load()) result->cancelled = true;
    if (!killed && deadline && Clock::now() > *deadline) result->timed_out = true;
    if (!killed && (result->cancelled || result->timed_out)) {
      kill(-group, SIGKILL);
      killed = true;
    }
    if (ready < 0 && errno != EINTR) {
      watched.fd = -1;
      wait_ms = 1;
    } else if (ready > 0) {
      ssize_t got = read(fd, buffer, sizeof(buffer));
      if (got > 0) {
        keep_output(buffer, static_cast<size_t>(got), result, &dropped);
      } else if (got == 0 || errno != EINTR) {
        watched.fd = -1;  // every holder of the write end is gone
        wait_ms = 1;
      }
    }
    if (!child_ended) {
      supervisor = state_of(group);
      if (supervisor != Supervisor::running) child_ended = Clock::now();
    }
    if (!child_ended) continue;
    if (watched.fd < 0) break;
    if (Clock::now() - *child_ended > grace) {
      if (supervisor == Supervisor::exited) kill(-group, SIGKILL);
      drain(fd, buffer, sizeof buffer, result, &dropped);
      result->output +=
          "\n[tilecraft stopped waiting for output " + std::to_string(kOutputGraceSeconds) +
          " s after the program exited: processes it started still held its output]\n";
      break;
    }
  }
  if (dropped > 0) {
    result->output += "\n[... " + std::to_string(dropped) + " more bytes of output dropped]\n";
  }
  return supervisor != Supervisor::gone;
}

}  // namespace

Result<ProcessResult> run_process(const std::vector<std::string>& argv,
                                  const std::vector<std::string>& extra_env,
                                  const std::atomic<bool>* cancel, double time_limit) {
  if (argv.empty()) return Status::internal("run_process: expected a command, got none");
  std::string program = argv[0];
  if (program.find('/') == std::string::npos) {
    program = find_program_on_path(argv[0]);
    if (program.empty()) {
      return Status::internal("could not start " + argv[0] +
                              ": not found in the absolute folders of PATH");
    }
  }
  // Everything the children need is made before fork: after it they may not allocate.
  std::vector<std::string> arguments = argv;
  std::vector<char*> arg_pointers = pointers_to(arguments);
  std::vector<std::string> environment = merged_environment(extra_env);
  std::vector<char*> env_pointers = pointers_to(environment);

  int output_fds[2], report_fds[2];
  if (pipe2(output_fds, O_CLOEXEC) != 0) {
    return Status::internal(errno_text("could not create a pipe for", argv[0]));
  }
  UniqueFd output_read(output_fds[0]), output_write(output_fds[1]);
  if (pipe2(report_fds, O_CLOEXEC) != 0) {
    return Status::internal(errno_text("could not create a pipe for", argv[0]));
  }
  UniqueFd report_read(report_fds[0]), report_write(report_fds[1]);
  UniqueFd devnull(open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (!devnull.valid()) return Status::internal(errno_text("could not open", "/dev/null"));

  const pid_t parent = getpid();
  const pid_t supervisor = fork();
  if (supervisor < 0) {
    return Status::internal(errno_text("could not start", argv[0]));
  }
  if (supervisor == 0) {
    supervise(parent, program.c_str(), arg_pointers.data(), env_pointers.data(), devnull.get(),
              output_write.get(), report_write.get());
  }
  setpgid(supervisor, supervisor);  // also here, so that a kill(-group) cannot come too early
  output_write.reset();
  report_write.reset();
  devnull.reset();

  ProcessResult result;
  try {
    std::optional<std::chrono::steady_clock::time_point> deadline;
    if (time_limit > 0) {
      deadline = std::chrono::steady_clock::now() +
                 std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                     std::chrono::duration<double>(time_limit));
    }
    // The supervisor has exited when this returns (unreaped until wait_for below, so that its
    // group's id is still ours): what the child started in its group ends with it.
    if (collect_output(output_read.get(), supervisor, cancel, deadline, &result)) {
      kill(-supervisor, SIGKILL);
    }
  } catch (...) {
    kill(-supervisor, SIGKILL);
    wait_for(supervisor);
    throw;
  }
  result.exit_code = wait_for(supervisor);
  int exec_error = 0;
  if (read(report_read.get(), &exec_error, sizeof exec_error) ==
      static_cast<ssize_t>(sizeof exec_error)) {
    return Status::internal("could not start " + program + ": " + std::strerror(exec_error));
  }
  return result;
}

std::string format_command(const std::vector<std::string>& argv) {
  std::string line;
  for (const std::string& argument : argv) {
    if (!line.empty()) line += ' ';
    bool plain = !argument.empty() && argument.find_first_not_of(
                                          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                          "0123456789-_./=,:+@%") == std::string::npos;
    if (plain) {
      line += argument;
      continue;
    }
    line += '\'';
    for (char c : argument) line += c == '\'' ? std::string("'\\''") : std::string(1, c);
    line += '\'';
  }
  return line;
}

}  // namespace tilecraft::compile
