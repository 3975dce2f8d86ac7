// tilecraft's headers of generated modules in the cache key: a module's key holds the content of
// exactly the headers its source reaches, so that editing one family's header re-keys that
// family's modules and no other.
#include "compile/jit_headers.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "compile/test_support.hpp"
#include "tilecraft/core/settings.hpp"

namespace tilecraft::compile {
namespace {
namespace TILECRAFT_TEST_FILE {

namespace fs = std::filesystem;
using testing::write_file;

class JitHeadersKey : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::make_temp_dir("jit");
    fs::create_directories(dir_ + "/tilecraft/jit");
    fs::create_directories(dir_ + "/tilecraft/abi");
    write_file(dir_ + "/tilecraft/abi/module_abi.h", "struct tc_gemm_args;\n");
    write_file(dir_ + "/tilecraft/jit/module_prelude.cuh",
               "#pragma once\n#include \"tilecraft/abi/module_abi.h\"\n");
    write_file(dir_ + "/tilecraft/jit/common.cuh", "#pragma once\n#include <string>\n");
    write_file(
        dir_ + "/tilecraft/jit/gemm.cuh",
        "#pragma once\n#include \"cutlass/gemm.h\"\n#include \"tilecraft/jit/common.cuh\"\n");
    write_file(dir_ + "/tilecraft/jit/conv.cuh",
               "#pragma once\n#include \"tilecraft/jit/common.cuh\"\n");
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string key_text(const std::string& source) {
    Result<JitHeaders> headers = read_jit_headers(dir_, "TEST_ROOT");
    EXPECT_TRUE(headers) << headers.status().message();
    return headers ? jit_header_key_text(*headers, source) : "";
  }

  std::string dir_;
  const std::string gemm_ =
      "#include \"tilecraft/jit/module_prelude.cuh\"\n#include \"tilecraft/jit/gemm.cuh\"\n";
  const std::string conv_ =
      "#include \"tilecraft/jit/module_prelude.cuh\"\n#include \"tilecraft/jit/conv.cuh\"\n";
};

TEST_F(JitHeadersKey, NamesEveryHeaderTheSourceReachesAndNoOther) {
  const std::string text = key_text(gemm_);
  for (const char* name : {"tilecraft/abi/module_abi.h ", "tilecraft/jit/module_prelude.cuh ",
                           "tilecraft/jit/gemm.cuh ", "tilecraft/jit/common.cuh "}) {
    EXPECT_NE(text.find(name), std::string::npos) << name << " in\n" << text;
  }
  EXPECT_EQ(text.find("conv.cuh"), std::string::npos) << text;
  EXPECT_EQ(text.find("cutlass"), std::string::npos) << text;  // keyed by the CUTLASS digest
}

TEST_F(JitHeadersKey, AnEditReKeysTheModulesThatReachTheHeaderOnly) {
  const std::string gemm = key_text(gemm_), conv = key_text(conv_);
  write_file(dir_ + "/tilecraft/jit/gemm.cuh", "#pragma once\n// edited\n");
  EXPECT_NE(key_text(gemm_), gemm);
  EXPECT_EQ(key_text(conv_), conv);
  write_file(dir_ + "/tilecraft/jit/common.cuh", "#pragma once\n// edited\n");
  EXPECT_NE(key_text(conv_), conv);
}

TEST_F(JitHeadersKey, AMissingHeaderIsNamedInTheKey) {
  EXPECT_NE(key_text("#include \"tilecraft/jit/absent.cuh\"\n")
                .find("tilecraft/jit/absent.cuh (missing)"),
            std::string::npos);
}

TEST_F(JitHeadersKey, AFolderWithoutThemIsRefusedByItsSetting) {
  Result<JitHeaders> headers = read_jit_headers(dir_ + "/tilecraft", "TEST_ROOT");
  ASSERT_FALSE(headers);
  EXPECT_NE(headers.status().message().find("TEST_ROOT: expected a folder holding "
                                            "tilecraft/jit/module_prelude.cuh"),
            std::string::npos)
      << headers.status().message();
}

// The library finds the headers it was built with (or those installed beside it), and they hold
// every header the emitters name.
TEST(JitHeaders, TheLibrarysOwnAreFound) {
  Result<JitHeaders> headers = read_jit_headers(settings().jit_include_dir, "jit_include_dir");
  ASSERT_TRUE(headers) << headers.status().message();
  for (const char* name :
       {"tilecraft/jit/module_prelude.cuh", "tilecraft/jit/device_image.cuh",
        "tilecraft/jit/sm80_gemm.cuh", "tilecraft/jit/sm80_grouped.cuh",
        "tilecraft/jit/sm80_conv.cuh", "tilecraft/jit/sm90_gemm.cuh", "tilecraft/jit/sm90_conv.cuh",
        "tilecraft/jit/sm90_grouped.cuh", "tilecraft/abi/module_abi.h", "tilecraft/abi/gemm_args.h",
        "tilecraft/abi/grouped_args.h", "tilecraft/abi/conv_args.h"}) {
    EXPECT_EQ(headers->files.count(name), 1u) << name;
  }
}

// Each family's modules reach its own argument block and no other family's, so that a change to
// one block re-keys that family's modules only (every module reaches the shared module_abi.h).
TEST(JitHeaders, EachFamilyReachesItsOwnArgumentBlockOnly) {
  Result<JitHeaders> headers = read_jit_headers(settings().jit_include_dir, "jit_include_dir");
  ASSERT_TRUE(headers) << headers.status().message();
  const std::string prelude = "#include \"tilecraft/jit/module_prelude.cuh\"\n";
  const struct {
    const char* includes;
    const char* block;
  } families[] = {
      {"sm80_gemm.cuh sm80_split_k_parallel.cuh sm80_epilogue_graph.cuh", "gemm_args.h"},
      {"sm90_gemm.cuh evt_functions.cuh", "gemm_args.h"},
      {"sm80_grouped.cuh", "grouped_args.h"},
      {"sm90_grouped.cuh", "grouped_args.h"},
      {"sm80_conv.cuh sm80_conv_grouped.cuh sm80_conv3d.cuh", "conv_args.h"},
      {"sm90_conv.cuh", "conv_args.h"},
  };
  for (const auto& family : families) {
    std::string source = prelude;
    std::istringstream names(family.includes);
    for (std::string name; names >> name;) {
      source += "#include \"tilecraft/jit/" + name + "\"\n";
    }
    const std::string text = jit_header_key_text(*headers, source);
    EXPECT_NE(text.find("tilecraft/abi/module_abi.h "), std::string::npos) << text;
    for (const char* block : {"gemm_args.h", "grouped_args.h", "conv_args.h"}) {
      const bool reached = text.find(std::string("tilecraft/abi/") + block) != std::string::npos;
      EXPECT_EQ(reached, std::string(block) == family.block) << family.includes << ": " << block;
    }
  }
}

}  // namespace TILECRAFT_TEST_FILE
}  // namespace
}  // namespace tilecraft::compile
