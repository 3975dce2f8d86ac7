#include "compile/process.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <set>
#include <sstream>
#include <thread>

#include "compile/test_support.hpp"

namespace tilecraft::compile {
namespace {
namespace TILECRAFT_TEST_FILE {

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

TEST(RunProcess, ProgramNotOnPathIsAStatus) {
  Result<ProcessResult> run = run_process({"tilecraft-no-such-program"});
  ASSERT_FALSE(run);
  EXPECT_NE(run.status().message().find("not found in the absolute folders of PATH"),
            std::string::npos)
      << run.status().message();
}

TEST(RunProcess, ExitBySignalIsReportedAs128PlusTheSignal) {
  Result<ProcessResult> run = run_process({"/bin/sh", "-c", "kill -TERM $$"});
  ASSERT_TRUE(run) << run.status().message();
  EXPECT_EQ(run->exit_code, 128 + SIGTERM);
  EXPECT_FALSE(run->cancelled);
}

TEST(RunProcess, CancelKillsTheChildAndEverythingItStarted) {
  std::atomic<bool> cancel{false};
  std::string pid_file = testing::make_temp_dir("cancel") + "/pids";
  std::thread canceller([&] {
    testing::wait_until([&] { return std::filesystem::exists(pid_file); },
                        std::chrono::milliseconds(10000));
    cancel = true;
  });
  auto start = std::chrono::steady_clock::now();
  Result<ProcessResult> run =
      run_process({"/bin/sh", "-c",
                   "sleep 300 & echo $$ $! > \"$0.tmp\" && mv \"$0.tmp\" \"$0\"; wait", pid_file},
                  {}, &cancel);
  canceller.join();
  ASSERT_TRUE(run) << run.status().message();
  EXPECT_TRUE(run->cancelled);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  std::istringstream pids(testing::read_file(pid_file));
  pid_t shell = -1, sleeper = -1;
  ASSERT_TRUE(pids >> shell >> sleeper);
  EXPECT_TRUE(testing::wait_until(
      [&] { return !testing::process_alive(shell) && !testing::process_alive(sleeper); },
      std::chrono::milliseconds(2000)));
}

TEST(RunProcess, TimeLimitKillsTheChild) {
  auto start = std::chrono::steady_clock::now();
  Result<ProcessResult> run = run_process({"/bin/sh", "-c", "sleep 300"}, {}, nullptr, 0.3);
  ASSERT_TRUE(run) << run.status().message();
  EXPECT_TRUE(run->timed_out);
  EXPECT_FALSE(run->cancelled);
  EXPECT_EQ(run->exit_code, 128 + SIGKILL);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(RunProcess, EndlessOutputIsCappedAndCounted) {
  Result<ProcessResult> run =
      run_process({"/bin/sh", "-c", "head -c 6000000 /dev/zero | tr '\\0' x"});
  ASSERT_TRUE(run) << run.status().message();
  EXPECT_EQ(run->exit_code, 0);
  EXPECT_LT(run->output.size(), kMaxProcessOutput + 100);
  EXPECT_NE(run->output.find("more bytes of output dropped"), std::string::npos);
}

TEST(RunProcess, DescriptorsPassAsExecWouldPassThem) {
  // A lock held on a close-on-exec descriptor must end when its owner closes it, even while a
  // child runs: the supervisor (a fork that never execs) closes what exec would have closed.
  std::string folder = testing::make_temp_dir("fds");
  std::string lock_path = folder + "/lock";
  int held = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  ASSERT_GE(held, 0);
  ASSERT_EQ(flock(held, LOCK_EX), 0);
  std::thread child([] { (void)run_process({"/bin/sh", "-c", "sleep 1"}); });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  close(held);
  int other = open(lock_path.c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(other, 0);
  EXPECT_EQ(flock(other, LOCK_EX | LOCK_NB), 0) << "the running child's supervisor kept the lock";
  close(other);
  child.join();

  // A descriptor meant for children (no close-on-exec; compute-sanitizer passes one to every
  // process it follows) reaches the child at its number; a close-on-exec one does not.
  int inherited = open(lock_path.c_str(), O_RDONLY);
  int private_fd = open(lock_path.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(inherited, 0);
  ASSERT_GE(private_fd, 0);
  Result<ProcessResult> listed = run_process({"/bin/sh", "-c", "ls /proc/$$/fd"});
  close(inherited);
  close(private_fd);
  ASSERT_TRUE(listed) << listed.status().message();
  std::istringstream fds(listed->output);
  std::set<int> seen;
  for (int fd; fds >> fd;) seen.insert(fd);
  EXPECT_TRUE(seen.count(inherited)) << listed->output;
  EXPECT_FALSE(seen.count(private_fd)) << listed->output;
  for (int standard : {0, 1, 2}) EXPECT_TRUE(seen.count(standard)) << listed->output;
}

TEST(RunProcess, ADaemonHoldingTheOutputIsNotWaitedForLong) {
  // The audit's case: the child starts a process that leaves its group (setsid) and keeps the
  // output pipe open for 40 s after the child exited.
  std::string pid_file = testing::make_temp_dir("daemon") + "/pid";
  auto start = std::chrono::steady_clock::now();
  Result<ProcessResult> run =
      run_process({"/bin/sh", "-c", "setsid sleep 40 & echo $! > \"$0\"; echo started", pid_file});
  auto took = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(run) << run.status().message();
  std::istringstream pid_text(testing::read_file(pid_file));
  pid_t daemon = -1;
  ASSERT_TRUE(pid_text >> daemon);
  const bool daemon_alive = testing::process_alive(daemon);
  kill(daemon, SIGKILL);  // outside the child's group, so left alone by run_process: ended here
  EXPECT_EQ(run->exit_code, 0);
  EXPECT_NE(run->output.find("started"), std::string::npos) << run->output;
  EXPECT_NE(run->output.find("processes it started still held its output"), std::string::npos)
      << run->output;
  EXPECT_LT(took, std::chrono::seconds(kOutputGraceSeconds + 5));
  EXPECT_TRUE(daemon_alive) << "the test's daemon ended early: it proved nothing";
}

TEST(RunProcess, WhatTheChildLeftRunningInItsGroupEndsWithIt) {
  // One background job keeps the output open, one does not; the child's exit code is kept.
  std::string pid_file = testing::make_temp_dir("group") + "/pids";
  auto start = std::chrono::steady_clock::now();
  Result<ProcessResult> run = run_process(
      {"/bin/sh", "-c", "sleep 60 & a=$!; sleep 60 >/dev/null 2>&1 & echo $a $! > \"$0\"; exit 4",
       pid_file});
  ASSERT_TRUE(run) << run.status().message();
  EXPECT_EQ(run->exit_code, 4);
  EXPECT_LT(std::chrono::steady_clock::now() - start,
            std::chrono::seconds(kOutputGraceSeconds + 5));
  std::istringstream pids(testing::read_file(pid_file));
  pid_t holding = -1, quiet = -1;
  ASSERT_TRUE(pids >> holding >> quiet);
  EXPECT_TRUE(testing::wait_until(
      [&] { return !testing::process_alive(holding) && !testing::process_alive(quiet); },
      std::chrono::milliseconds(2000)));
}

TEST(FormatCommand, QuotesOnlyWhatNeedsIt) {
  EXPECT_EQ(
      format_command({"nvcc", "-O3", "-gencode", "arch=compute_90a,code=sm_90a", "a b", "it's"}),
      "nvcc -O3 -gencode arch=compute_90a,code=sm_90a 'a b' 'it'\\''s'");
}

}  // namespace TILECRAFT_TEST_FILE
}  // namespace
}  // namespace tilecraft::compile
