// Golden files of emitted modules (tests/cpp/emit/golden/<name>.cu): the emitted text, byte for
// byte (the fixed code of a module is in the include/tilecraft/jit headers it includes, so a
// golden file holds only what depends on the description). After an intended change to an
// emitter, regenerate the files and review the diff:
//   TILECRAFT_UPDATE_GOLDEN=1 ./tilecraft_tests --gtest_filter='*Golden*'
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "emit/jit_header_text.hpp"

namespace tilecraft::emit::testing {

inline std::filesystem::path golden_path(const std::string& name) {
  return std::filesystem::path(__FILE__).parent_path() / "golden" / (name + ".cu");
}

inline void expect_golden(const std::string& name, const std::string& text) {
  EXPECT_EQ(missing_jit_headers(text), "");
  const std::filesystem::path path = golden_path(name);
  const char* update = std::getenv("TILECRAFT_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream(path, std::ios::binary) << text;
    GTEST_SKIP() << "wrote " << path;
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in) << path << " is missing; run with TILECRAFT_UPDATE_GOLDEN=1 to create it";
  std::stringstream golden;
  golden << in.rdbuf();
  EXPECT_EQ(golden.str(), text) << "emitted text differs from " << path
                                << "; if intended, rerun with TILECRAFT_UPDATE_GOLDEN=1";
}

}  // namespace tilecraft::emit::testing
