// How many nvcc compiles of CUTLASS modules the C++ tests run: TILECRAFT_COMPILE_TESTS=few (the
// seed's SIMT GEMM module only; what scripts/test.sh asks for on a machine without a GPU, where
// every compile is ten minutes of a slow two-core machine),
// standard (the default: a module of every family and kind) or full (every module the suites
// know; scripts/gpu_run.sh for the grouped and convolution compile tests).
#pragma once

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>

namespace tilecraft::compile_tests {

enum class Level { few = 0, standard = 1, full = 2 };

inline Level level() {
  const char* value = std::getenv("TILECRAFT_COMPILE_TESTS");
  if (value == nullptr || std::string_view(value).empty()) return Level::standard;
  const std::string_view v(value);
  if (v == "few") return Level::few;
  if (v == "standard") return Level::standard;
  if (v == "full") return Level::full;
  throw std::invalid_argument("TILECRAFT_COMPILE_TESTS: expected few, standard or full, got '" +
                              std::string(v) + "'");
}

inline const char* name(Level l) {
  switch (l) {
    case Level::few:
      return "few";
    case Level::standard:
      return "standard";
    case Level::full:
      return "full";
  }
  return "?";
}

// Empty when the level asks for these compiles, else the reason to skip them.
inline std::string skip_unless(Level needed, std::string_view what) {
  const Level now = level();
  if (now >= needed) return "";
  return std::string(what) + ": compiled with TILECRAFT_COMPILE_TESTS=" + name(needed) +
         (needed == Level::standard ? " (the default) or full" : "") + "; this run has " +
         name(now);
}

}  // namespace tilecraft::compile_tests

// In a test body: skip the test unless TILECRAFT_COMPILE_TESTS asks for `level` (few, standard,
// full).
#define TILECRAFT_COMPILE_TESTS_AT_LEAST(level, what)                                              \
  if (const std::string why_skipped =                                                              \
          ::tilecraft::compile_tests::skip_unless(::tilecraft::compile_tests::Level::level, what); \
      !why_skipped.empty())                                                                        \
  GTEST_SKIP() << why_skipped
