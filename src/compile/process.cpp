#include "compile/process.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace tilecraft::compile {
namespace {

// Closes a file descriptor when it goes out of scope.
class FdGuard {
 public:
  explicit FdGuard(int fd) : fd_(fd) {}
  ~FdGuard() { reset(); }
  FdGuard(const FdGuard&) = delete;
  FdGuard& operator=(const FdGuard&) = delete;
  int get() const { return fd_; }
  void reset() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

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

}  // namespace

Result<ProcessResult> run_process(const std::vector<std::string>& argv,
                                  const std::vector<std::string>& extra_env) {
  if (argv.empty())
    return Status(StatusCode::kInternal, "run_process: expected a command, got none");
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    return Status(StatusCode::kInternal, std::string("could not create a pipe for ") + argv[0] +
                                             ": " + std::strerror(errno));
  }
  FdGuard read_end(pipe_fds[0]);
  FdGuard write_end(pipe_fds[1]);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, write_end.get(), STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, write_end.get(), STDERR_FILENO);

  std::vector<std::string> arguments = argv;
  std::vector<char*> arg_pointers = pointers_to(arguments);
  std::vector<std::string> environment = merged_environment(extra_env);
  std::vector<char*> env_pointers = pointers_to(environment);

  pid_t pid = -1;
  int spawn_error = argv[0].find('/') == std::string::npos
                        ? posix_spawnp(&pid, argv[0].c_str(), &actions, nullptr,
                                       arg_pointers.data(), env_pointers.data())
                        : posix_spawn(&pid, argv[0].c_str(), &actions, nullptr, arg_pointers.data(),
                                      env_pointers.data());
  posix_spawn_file_actions_destroy(&actions);
  write_end.reset();
  if (spawn_error != 0) {
    return Status(StatusCode::kInternal,
                  "could not start " + argv[0] + ": " + std::strerror(spawn_error));
  }

  ProcessResult result;
  char buffer[16384];
  for (;;) {
    ssize_t got = read(read_end.get(), buffer, sizeof(buffer));
    if (got > 0) {
      result.output.append(buffer, static_cast<size_t>(got));
    } else if (got == 0 || errno != EINTR) {
      break;
    }
  }
  int wait_status = 0;
  while (waitpid(pid, &wait_status, 0) < 0) {
    if (errno != EINTR) {
      return Status(StatusCode::kInternal,
                    "could not wait for " + argv[0] + ": " + std::strerror(errno));
    }
  }
  if (WIFEXITED(wait_status)) {
    result.exit_code = WEXITSTATUS(wait_status);
  } else if (WIFSIGNALED(wait_status)) {
    result.exit_code = 128 + WTERMSIG(wait_status);
  } else {
    result.exit_code = -1;
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
    for (char c : argument) {
      if (c == '\'') {
        line += "'\\''";
      } else {
        line += c;
      }
    }
    line += '\'';
  }
  return line;
}

}  // namespace tilecraft::compile
