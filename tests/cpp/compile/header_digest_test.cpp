// The content hash of CUTLASS's header trees: every header counts, not only version.h, and the
// remembered hash is reused only while the files' metadata is unchanged.
#include "compile/header_digest.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <optional>

#include "compile/test_support.hpp"
#include "tilecraft/compile/signed_record.hpp"

namespace tilecraft::compile {
namespace {
namespace TILECRAFT_TEST_FILE {

namespace fs = std::filesystem;
using testing::read_file;
using testing::write_file;

class HeaderDigest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::make_temp_dir("headers");
    fs::create_directories(dir_ + "/include/cutlass/gemm");
    write_file(dir_ + "/include/cutlass/version.h", "#define CUTLASS_MAJOR 4\n");
    write_file(dir_ + "/include/cutlass/gemm/gemm.h", "struct Gemm {};\n");
    memo_ = dir_ + "/memo";
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string digest(const std::string& memo) {
    Result<std::string> d = header_tree_digest({dir_ + "/include"}, memo);
    EXPECT_TRUE(d) << d.status().message();
    return d ? *d : "";
  }

  std::string dir_;
  std::string memo_;
};

TEST_F(HeaderDigest, ChangesWhenAnyHeaderChanges) {
  const std::string before = digest("");
  EXPECT_EQ(before.size(), 64u);
  write_file(dir_ + "/include/cutlass/gemm/gemm.h", "struct Gemm { int edited; };\n");
  const std::string edited = digest("");
  EXPECT_NE(edited, before);
  write_file(dir_ + "/include/cutlass/gemm/new.h", "\n");
  EXPECT_NE(digest(""), edited);
}

TEST_F(HeaderDigest, IsRememberedAndRevalidatedByMetadata) {
  const std::string first = digest(memo_);
  ASSERT_EQ(std::distance(fs::directory_iterator(memo_), fs::directory_iterator()), 1);
  const fs::path memo_file = fs::directory_iterator(memo_)->path();
  EXPECT_NE(read_file(memo_file).find("digest " + first), std::string::npos);

  // The memo is what answers while the metadata holds (a value signed with this user's key
  // shows it is read) ...
  Result<std::string> key = user_signing_key();
  ASSERT_TRUE(key) << key.status().message();
  std::optional<std::string> body = verified_body(*key, read_file(memo_file));
  ASSERT_TRUE(body);
  std::string text = *body;
  text.replace(text.rfind("digest ") + 7, 64, std::string(64, 'a'));
  write_file(memo_file, signed_record(*key, text));
  EXPECT_EQ(digest(memo_), std::string(64, 'a'));
  // ... but one edited without the key (its HMAC no longer verifies) is not: hashed again.
  std::string planted = read_file(memo_file);
  planted.replace(planted.rfind("digest ") + 7, 64, std::string(64, 'b'));
  write_file(memo_file, planted);
  EXPECT_EQ(digest(memo_), first);
  // ... and an edit of the same size, in the same second, still changes the metadata (ctime,
  // nanoseconds): the memo is not trusted, the content is hashed again.
  write_file(dir_ + "/include/cutlass/gemm/gemm.h", "struct Gemx {};\n");
  const std::string edited = digest(memo_);
  EXPECT_NE(edited, first);
  EXPECT_NE(edited, std::string(64, 'a'));
  EXPECT_EQ(edited, digest(""));
  // A damaged memo is ignored.
  write_file(memo_file, "garbage");
  EXPECT_EQ(digest(memo_), edited);
}

TEST_F(HeaderDigest, MissingFolderIsAClearError) {
  Result<std::string> d = header_tree_digest({dir_ + "/nowhere"}, "");
  ASSERT_FALSE(d);
  EXPECT_NE(d.status().message().find(dir_ + "/nowhere"), std::string::npos);
}

}  // namespace TILECRAFT_TEST_FILE
}  // namespace
}  // namespace tilecraft::compile
