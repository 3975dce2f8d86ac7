// Running a child process without a shell and capturing what it prints.
#pragma once

#include <string>
#include <vector>

#include "tilecraft/core/status.hpp"

namespace tilecraft::compile {

struct ProcessResult {
  int exit_code = 0;   // the child's exit status, or 128 + signal number when a signal ended it
  std::string output;  // stdout and stderr, interleaved as the child wrote them
};

// Runs argv[0] (a path, or a name looked up on PATH) with argv; stdin is /dev/null. extra_env
// holds "NAME=value" entries that are added to (or replace those of) this process's environment.
// Fails only when the child could not be started; a child's non-zero exit is a ProcessResult.
Result<ProcessResult> run_process(const std::vector<std::string>& argv,
                                  const std::vector<std::string>& extra_env = {});

// The command line as a person would type it into a shell (arguments quoted where needed).
std::string format_command(const std::vector<std::string>& argv);

}  // namespace tilecraft::compile
