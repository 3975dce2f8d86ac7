// Running a child process without a shell, capturing what it prints, and never letting it (or
// anything it starts) outlive the caller.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "tilecraft/core/status.hpp"

namespace tilecraft::compile {

struct ProcessResult {
  int exit_code = 0;       // the child's exit status, or 128 + signal number when a signal ended it
  std::string output;      // stdout and stderr, interleaved, up to kMaxProcessOutput bytes
  bool cancelled = false;  // *cancel became true and the child was killed
  bool timed_out = false;  // the time limit passed and the child was killed
};

// What a child may print before the rest is dropped (and counted): a broken compiler is endless.
inline constexpr size_t kMaxProcessOutput = 4 << 20;

// How long run_process still reads after the child exited while processes it started hold its
// output (a daemon it started with setsid): then it returns without them.
inline constexpr int kOutputGraceSeconds = 2;

// Runs argv[0] (a path, or a name looked up in the absolute folders of PATH) with argv; stdin is
// /dev/null. extra_env's "NAME=value" entries are added to this process's environment (or replace).
//
// The child runs in a process group of its own under a small supervisor process. When this
// process dies, however it dies (SIGKILL included), the supervisor kills the whole group: a
// compiler never outlives its caller, nor do the programs the compiler started. When `cancel` is
// given and becomes true, the group is killed at once and the result says `cancelled`; when
// `time_limit` (seconds, 0 for none) passes first, likewise, and the result says `timed_out`.
// When the child exits, whatever it left running in its group is killed; a process that left the
// group (setsid) is not waited for more than kOutputGraceSeconds, even while it holds the output.
//
// Fails only when the child could not be started; a child's non-zero exit is a ProcessResult.
Result<ProcessResult> run_process(const std::vector<std::string>& argv,
                                  const std::vector<std::string>& extra_env = {},
                                  const std::atomic<bool>* cancel = nullptr, double time_limit = 0);

// The command line as a person would type it into a shell (arguments quoted where needed).
std::string format_command(const std::vector<std::string>& argv);

}  // namespace tilecraft::compile
