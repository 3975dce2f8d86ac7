#include "compile/process.hpp"

#include <gtest/gtest.h>

namespace tilecraft::compile {
namespace {

TEST(RunProcess, CapturesStdoutAndStderrAndExitCode) {
  Result<ProcessResult> run = run_process({"/bin/sh", "-c", "echo out; echo err 1>&2; exit 3"});
  ASSERT_TRUE(run) << run.status().message();
  EXPECT_EQ(run->exit_code, 3);
  EXPECT_NE(run->output.find("out\n"), std::string::npos);
  EXPECT_NE(run->output.find("err\n"), std::string::npos);
}

TEST(RunProcess, PassesExtraEnvironmentWithoutAShell) {
  Result<ProcessResult> run =
      run_process({"/bin/sh", "-c", "printf %s \"$TC_PROCESS_TEST\""}, {"TC_PROCESS_TEST=a b;c"});
  ASSERT_TRUE(run) << run.status().message();
  EXPECT_EQ(run->output, "a b;c");
}

TEST(RunProcess, MissingProgramIsAStatus) {
  Result<ProcessResult> run = run_process({"/nonexistent/tilecraft-no-such-program"});
  ASSERT_FALSE(run);
  EXPECT_NE(run.status().message().find("/nonexistent/tilecraft-no-such-program"),
            std::string::npos);
}

TEST(FormatCommand, QuotesOnlyWhatNeedsIt) {
  EXPECT_EQ(
      format_command({"nvcc", "-O3", "-gencode", "arch=compute_90a,code=sm_90a", "a b", "it's"}),
      "nvcc -O3 -gencode arch=compute_90a,code=sm_90a 'a b' 'it'\\''s'");
}

}  // namespace
}  // namespace tilecraft::compile
