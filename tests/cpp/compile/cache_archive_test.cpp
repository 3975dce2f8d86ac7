// export_cache / import_cache: signed archives. A round trip between two caches of two users;
// an archive imported only when its signer is trusted (SEC-1: a swapped module with its digests
// recomputed is refused); strict parsing of the index (ARC-1); every damage refused whole, leaving
// the destination untouched; export never writes over anything but a regular file (DATA-4).
#include <elf.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <sstream>
#include <string>

#include "compile/archive_keys.hpp"
#include "compile/ed25519.hpp"
#include "compile/sha256.hpp"
#include "compile/signing_key.hpp"
#include "compile/test_support.hpp"
#include "compile/toolchain.hpp"
#include "tilecraft/compile/artifact_cache.hpp"
#include "tilecraft/compile/compiler.hpp"

namespace tilecraft::compile {
namespace {
namespace TILECRAFT_TEST_FILE {

namespace fs = std::filesystem;
using namespace testing;

// The 64-byte header of a shared object for this machine, then tag: what import_cache checks of
// a module (it never loads one).
std::string fake_module(const std::string& tag) {
  Elf64_Ehdr header{};
  std::copy(ELFMAG, ELFMAG + SELFMAG, header.e_ident);
  header.e_ident[EI_CLASS] = ELFCLASS64;
  header.e_ident[EI_DATA] = ELFDATA2LSB;
  header.e_ident[EI_VERSION] = EV_CURRENT;
  header.e_type = ET_DYN;
#if defined(__aarch64__)
  header.e_machine = EM_AARCH64;
#else
  header.e_machine = EM_X86_64;
#endif
  header.e_version = EV_CURRENT;
  return std::string(reinterpret_cast<const char*>(&header), sizeof(header)) + tag;
}

// Stores an entry the way a compile would, under the key of its key text and source.
std::string store_entry(const std::string& key_text, const std::string& source) {
  ArtifactCache cache = ArtifactCache::open(settings());
  const std::string key = key_of(key_text, source);
  Result<BuildDir> build = cache.make_build_dir(key);
  EXPECT_TRUE(build) << build.status().message();
  write_file(build->path() + "/module.so", fake_module(key));
  write_file(build->path() + "/source.cu", source);
  Result<std::string> module = cache.commit(key, *build, key_text);
  EXPECT_TRUE(module) << module.status().message();
  return key;
}

size_t module_count(const std::string& root) {
  size_t count = 0;
  std::error_code error;
  for (auto it = fs::recursive_directory_iterator(root, error);
       it != fs::recursive_directory_iterator(); ++it) {
    count += it->path().filename() == "module.so" ? 1 : 0;
  }
  return count;
}

std::string own_public_key() { return *archive_public_key(); }

TEST(CacheArchive, RoundTripBetweenUsersWhoTrustTheSigner) {
  ScopedCache source_cache("archive-src");
  const std::string first = store_entry("key text one\n", "source one");
  const std::string second = store_entry("key text two\n", "source two");
  const std::string archive = source_cache.dir() + "/cache.tcarchive";
  Result<CacheTransfer> exported = export_cache(archive);
  ASSERT_TRUE(exported) << exported.status().message();
  EXPECT_EQ(exported->entries, 2u);
  EXPECT_EQ(exported->skipped, 0u);
  // The first export made the key pair, and said so with its public key.
  const std::string signer = own_public_key();
  ASSERT_EQ(exported->notes.size(), 1u);
  EXPECT_NE(exported->notes[0].find("made an archive signing key"), std::string::npos);
  EXPECT_NE(exported->notes[0].find(signer), std::string::npos);
  struct stat info;
  ASSERT_EQ(stat(settings().archive_key_file.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u);

  ScopedCache destination("archive-dst");  // another user: other keys, nothing trusted yet
  Result<CacheTransfer> refused = import_cache(archive);
  ASSERT_FALSE(refused);
  EXPECT_NE(
      refused.status().message().find("signed by " + signer + ", which is not a key you trust"),
      std::string::npos)
      << refused.status().message();
  EXPECT_EQ(module_count(destination.cache_dir()), 0u);

  Result<CacheTransfer> imported = import_cache(archive, {signer});
  ASSERT_TRUE(imported) << imported.status().message();
  EXPECT_EQ(imported->entries, 2u);
  ArtifactCache cache = ArtifactCache::open(settings());
  for (const std::string& key : {first, second}) {
    LookupResult found = cache.lookup(key);
    ASSERT_TRUE(found.module_path) << found.invalid_reason;
    EXPECT_EQ(read_file(*found.module_path), fake_module(key));
  }
  // The trusted keys file works as well as the argument.
  fs::create_directories(destination.dir() + "/config");
  write_file(destination.dir() + "/config/trusted-keys", "# colleagues\n" + signer + " alice\n");
  Result<CacheTransfer> again = import_cache(archive);
  ASSERT_TRUE(again) << again.status().message();
  EXPECT_EQ(again->entries, 0u);
  EXPECT_EQ(again->already_present, 2u);
}

TEST(CacheArchive, YourOwnKeyIsTrusted) {
  ScopedCache scope("archive-own");
  store_entry("own\n", "own source");
  const std::string archive = scope.dir() + "/own.tcarchive";
  ASSERT_TRUE(export_cache(archive));
  scope.set_cache_dir(scope.dir() + "/another-cache");
  Result<CacheTransfer> imported = import_cache(archive);
  ASSERT_TRUE(imported) << imported.status().message();
  EXPECT_EQ(imported->entries, 1u);
}

TEST(CacheArchive, ExportLeavesOutEntriesThatDoNotVerify) {
  ScopedCache scope("archive-bad");
  const std::string good = store_entry("good\n", "good source");
  const std::string bad = store_entry("bad\n", "bad source");
  ArtifactCache cache = ArtifactCache::open(settings());
  write_file(cache.entry_dir(bad) + "/module.so", fake_module("modified after signing"));
  Result<CacheTransfer> exported = export_cache(scope.dir() + "/a.tcarchive");
  ASSERT_TRUE(exported) << exported.status().message();
  EXPECT_EQ(exported->entries, 1u);
  EXPECT_EQ(exported->skipped, 1u);
  bool named = false;
  for (const std::string& note : exported->notes) named |= note.rfind(bad.substr(0, 16), 0) == 0;
  EXPECT_TRUE(named);
  (void)good;
}

TEST(CacheArchive, EmptyCacheExportsAnEmptyArchive) {
  ScopedCache scope("archive-empty");
  const std::string archive = scope.dir() + "/empty.tcarchive";
  Result<CacheTransfer> exported = export_cache(archive);
  ASSERT_TRUE(exported) << exported.status().message();
  EXPECT_EQ(exported->entries, 0u);
  EXPECT_EQ(read_file(archive).rfind("tilecraft-cache-archive 2\nsigner tilecraft-ed25519:", 0),
            0u);
  Result<CacheTransfer> imported = import_cache(archive);
  ASSERT_TRUE(imported) << imported.status().message();
  EXPECT_EQ(imported->entries, 0u);
}

// The index of an archive, re-signed with the exporter's own key: how an edit would look if the
// attacker held the private key, so that the parser's own checks are tested past the signature.
std::string resigned(const std::string& archive, const ArchiveKey& key) {
  const size_t at = archive.find("signature ");
  const size_t end = archive.find('\n', at);
  const std::string index = archive.substr(0, at);
  const std::string signature =
      *ed25519_sign(key.seed, "tilecraft cache archive signature v2\n" + index);
  return index + "signature " + to_hex(signature) + archive.substr(end);
}

// The file line of one entry's file, for edits.
size_t file_line(const std::string& archive, const std::string& name, int nth = 0) {
  size_t at = 0;
  for (int i = 0; i <= nth; ++i) at = archive.find("file " + name + " ", at + (i ? 1 : 0));
  return at;
}

std::string with_digest(std::string archive, const std::string& name, int nth,
                        const std::string& bytes) {
  const size_t at = file_line(archive, name, nth);
  const size_t end = archive.find('\n', at);
  archive.replace(at, end - at,
                  "file " + name + " " + std::to_string(bytes.size()) + " " + sha256_hex(bytes));
  return archive;
}

// Each damage, applied to a good archive, is refused with words naming it, and nothing is
// written into the destination cache.
TEST(CacheArchive, DamagedOrForgedArchivesAreRefusedWhole) {
  ScopedCache source_cache("archive-tamper");
  const std::string first = store_entry("text\n", "the source");
  const std::string second = store_entry("other text\n", "other source");
  const std::string archive = source_cache.dir() + "/good.tcarchive";
  ASSERT_TRUE(export_cache(archive));
  const std::string good = read_file(archive);
  const ArchiveKey key = *read_archive_key(settings().archive_key_file, "key");
  const std::string signer = public_key_text(key.public_key);
  const size_t data = good.find('\n', good.find("signature ")) + 1;
  const std::string module = fake_module(first < second ? first : second);
  const std::string evil = fake_module("a planted module whose constructor runs");

  struct Damage {
    const char* name;
    std::function<std::string(std::string)> apply;
    const char* words;
  };
  const std::vector<Damage> damages = {
      // SEC-1: the audit's planted module, its digests recomputed; and a module moved to the
      // other entry. Without the signer's private key no edit of the index verifies.
      {"a planted module, digests recomputed",
       [&](std::string a) {
         a = with_digest(a, "module.so", 0, evil);
         a.replace(a.find("signature "), 0, "");
         const size_t start = a.find('\n', a.find("signature ")) + 1;
         return a.substr(0, start) + evil + a.substr(start + module.size());
       },
       "its signature does not verify"},
      {"a flipped module byte",
       [&](std::string a) {
         a[data + 70] ^= 1;
         return a;
       },
       "module.so: its SHA-256 is not the one the signed index records"},
      {"modules swapped between entries",
       [&](std::string a) {
         const size_t one = file_line(a, "module.so", 0), two = file_line(a, "module.so", 1);
         const std::string line_one = a.substr(one, a.find('\n', one) - one);
         const std::string line_two = a.substr(two, a.find('\n', two) - two);
         a.replace(two, line_two.size(), line_one);
         a.replace(one, line_one.size(), line_two);
         return a;
       },
       "its signature does not verify"},
      {"truncated", [&](std::string a) { return a.substr(0, a.size() - 10); },
       "truncated, or bytes added"},
      {"bytes appended", [&](std::string a) { return a + "more"; }, "truncated, or bytes added"},
      {"another version",
       [&](std::string a) { return resigned(a.replace(0, 25, "tilecraft-cache-archive 1"), key); },
       "expected a tilecraft cache archive of version 2"},
      {"a magic with a suffix",
       [&](std::string a) {
         return resigned(a.replace(0, 25, "tilecraft-cache-archive 2 EVIL"), key);
       },
       "got 'tilecraft-cache-archive 2 EVIL'"},
      {"a duplicate entry",
       [&](std::string a) {
         const size_t one = a.find("entry "), two = a.find("entry ", one + 1);
         a.replace(two + 6, 64, a.substr(one + 6, 64));
         return resigned(a, key);
       },
       "appears twice"},
      {"an extra field on a file line",
       [&](std::string a) {
         const size_t at = a.find('\n', file_line(a, "key.txt"));
         return resigned(a.insert(at, " extra"), key);
       },
       "malformed file line"},
      {"a size with a leading zero",
       [&](std::string a) { return resigned(a.insert(file_line(a, "key.txt") + 13, "0"), key); },
       "malformed file line"},
      {"a path in a file name",
       [&](std::string a) {
         return resigned(a.replace(file_line(a, "module.so"), 14, "file ../x.so  "), key);
       },
       "malformed file line"},
      {"a million entries",
       [&](std::string a) {
         const size_t at = a.find("entries 2");
         return resigned(a.replace(at, 9, "entries 1000000"), key);
       },
       "malformed entry count 'entries 1000000' (at most 100000 entries)"},
      {"a huge declared size",
       [&](std::string a) {
         const size_t at = file_line(a, "source.cu") + 15;
         a.replace(at, a.find(' ', at) - at, "99999999999");
         return resigned(a, key);
       },
       "malformed file line"},
      {"a module that is no ELF file",
       [&](std::string a) {
         const std::string text(module.size(), 'x');
         a = resigned(with_digest(a, "module.so", 0, text), key);
         const size_t start = a.find('\n', a.find("signature ")) + 1;
         return a.replace(start, module.size(), text);
       },
       "module.so: it is not an ELF file"},
      {"a module of four bytes",
       [&](std::string a) {
         const std::string text =
             "\x7f"
             "ELF";
         a = resigned(with_digest(a, "module.so", 0, text), key);
         const size_t start = a.find('\n', a.find("signature ")) + 1;
         return a.replace(start, module.size(), text);
       },
       "it is too short to be an ELF shared object"},
      {"a key that is not its source's",
       [&](std::string a) {
         const size_t at = a.find("entry ") + 6;
         a[at] = a[at] == 'a' ? 'b' : 'a';
         return resigned(a, key);
       },
       "is not the key of its key.txt and source.cu"},
  };
  ScopedCache destination("archive-tamper-dst");
  for (const Damage& damage : damages) {
    SCOPED_TRACE(damage.name);
    const std::string path = destination.dir() + "/damaged.tcarchive";
    write_file(path, damage.apply(good));
    Result<CacheTransfer> imported = import_cache(path, {signer});
    ASSERT_FALSE(imported);
    const std::string message = imported.status().message();
    EXPECT_NE(message.find(damage.words), std::string::npos) << message;
    EXPECT_NE(message.find(path), std::string::npos) << message;
    EXPECT_NE(message.find("nothing was imported"), std::string::npos) << message;
    EXPECT_EQ(module_count(destination.cache_dir()), 0u);
  }
}

TEST(CacheArchive, BadPathsAndKeysAreClearErrors) {
  ScopedCache scope("archive-paths");
  Result<CacheTransfer> missing = import_cache(scope.dir() + "/nothing-here");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.status().message().find("import_cache: path: cannot open"), std::string::npos);

  const std::string fifo = scope.dir() + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  Result<CacheTransfer> from_fifo = import_cache(fifo);  // refused at once, never blocking
  ASSERT_FALSE(from_fifo);
  EXPECT_NE(from_fifo.status().message().find("got a fifo"), std::string::npos);

  const std::string nul = scope.dir() + std::string("/a\0b", 4);
  EXPECT_NE(import_cache(nul).status().message().find("path: expected an archive"),
            std::string::npos);
  EXPECT_NE(export_cache(nul).status().message().find("path: expected a file name without NUL"),
            std::string::npos);

  Result<CacheTransfer> bad_key = import_cache(fifo, {"tilecraft-ed25519:123"});
  ASSERT_FALSE(bad_key);
  EXPECT_NE(bad_key.status().message().find("trusted_keys[0]: expected a public key"),
            std::string::npos)
      << bad_key.status().message();
  Result<CacheTransfer> relative = import_cache(fifo, {"keys.txt"});
  EXPECT_NE(relative.status().message().find("trusted_keys[0]: expected a public key ('"),
            std::string::npos);
  Result<CacheTransfer> no_key_file = export_cache(scope.dir() + "/x.tca", scope.dir() + "/none");
  ASSERT_FALSE(no_key_file);
  EXPECT_NE(no_key_file.status().message().find("key_file: cannot open"), std::string::npos);
}

// DATA-4: an archive is written only over nothing or a regular file.
TEST(CacheArchive, ExportRefusesDevicesLinksAndFolders) {
  ScopedCache scope("archive-export-targets");
  const std::string folder = scope.dir() + "/folder";
  fs::create_directory(folder);
  const std::string target = scope.dir() + "/target";
  write_file(target, "the user's file");
  const std::string link = scope.dir() + "/link";
  fs::create_symlink(target, link);
  const std::string folder_link = scope.dir() + "/folder-link";
  fs::create_directory_symlink(folder, folder_link);
  const std::string fifo = scope.dir() + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::vector<std::pair<std::string, std::string>> cases = {{folder, "a folder"},
                                                            {link, "a symbolic link"},
                                                            {folder_link, "a symbolic link"},
                                                            {fifo, "a fifo"}};
  const std::string device = scope.dir() + "/null";
  if (geteuid() == 0 && mknod(device.c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0) {
    cases.push_back({device, "a device file"});
  }
  for (const auto& [path, kind] : cases) {
    SCOPED_TRACE(path);
    Result<CacheTransfer> exported = export_cache(path);
    ASSERT_FALSE(exported);
    EXPECT_NE(exported.status().message().find("export_cache: path: expected a new or regular "
                                               "file, got " +
                                               kind),
              std::string::npos)
        << exported.status().message();
  }
  EXPECT_TRUE(fs::is_directory(folder));
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(read_file(target), "the user's file");
  EXPECT_TRUE(fs::is_fifo(fifo));
  if (fs::exists(device)) {
    EXPECT_TRUE(fs::is_character_file(device));
  }
  for (const auto& item : fs::directory_iterator(scope.dir())) {
    EXPECT_EQ(item.path().filename().string().find(".tmp-"), std::string::npos) << item.path();
  }
  // A regular file is replaced whole.
  Result<CacheTransfer> over_file = export_cache(target);
  ASSERT_TRUE(over_file) << over_file.status().message();
  EXPECT_EQ(read_file(target).rfind("tilecraft-cache-archive 2\n", 0), 0u);
}

// The child half of ImportStreamsALargeArchive: imports $TILECRAFT_TEST_ARCHIVE into
// $TILECRAFT_TEST_CHILD_CACHE, trusting $TILECRAFT_TEST_TRUSTED, and writes its peak memory (KiB)
// to $TILECRAFT_TEST_CHILD_RESULT.
TEST(CacheArchiveChild, Import) {
  const char* archive = std::getenv("TILECRAFT_TEST_ARCHIVE");
  if (!archive) GTEST_SKIP() << "runs only as the child half of a CacheArchive test";
  Settings s = settings_from_environment();
  s.cache_dir = std::getenv("TILECRAFT_TEST_CHILD_CACHE");
  s.signing_key_file = s.cache_dir + "-state/signing-key";
  s.quiet = true;
  set_settings(s);
  Result<CacheTransfer> imported = import_cache(archive, {std::getenv("TILECRAFT_TEST_TRUSTED")});
  ASSERT_TRUE(imported) << imported.status().message();
  // VmHWM: this process's own peak (getrusage's survives exec, and would count the parent's).
  const std::string status = read_file("/proc/self/status");
  const size_t at = status.find("VmHWM:");
  ASSERT_NE(at, std::string::npos);
  write_file(
      std::getenv("TILECRAFT_TEST_CHILD_RESULT"),
      std::to_string(imported->entries) + " " + std::to_string(std::stoull(status.substr(at + 6))));
}

// MEM-1: an import streams the archive: its peak memory does not grow with the archive or with
// its largest module (it held about five copies of the archive).
TEST(CacheArchive, ImportStreamsALargeArchive) {
  ScopedCache scope("archive-large");
  const std::string filler(size_t(64) << 20, 'm');
  const std::string keys[] = {store_entry("large one\n", "large source one"),
                              store_entry("large two\n", "large source two")};
  ArtifactCache cache = ArtifactCache::open(settings());
  for (const std::string& key : keys) {
    // Grown after the fact, then signed again: a 64 MiB module.
    const std::string dir = cache.entry_dir(key);
    write_file(dir + "/module.so", fake_module(key) + filler);
    write_file(dir + "/manifest",
               manifest_text(*load_signing_key(settings().signing_key_file, nullptr), key,
                             read_file(dir + "/module.so")));
  }
  const std::string archive = scope.dir() + "/large.tcarchive";
  Result<CacheTransfer> exported = export_cache(archive);
  ASSERT_TRUE(exported) << exported.status().message();
  ASSERT_EQ(exported->entries, 2u);
  ASSERT_GT(fs::file_size(archive), size_t(128) << 20);

  const std::string result = scope.dir() + "/child-result";
  const pid_t child = spawn_self(
      "CacheArchiveChild.Import",
      {"TILECRAFT_TEST_ARCHIVE=" + archive, "TILECRAFT_TEST_CHILD_CACHE=" + scope.dir() + "/dst",
       "TILECRAFT_TEST_TRUSTED=" + own_public_key(), "TILECRAFT_TEST_CHILD_RESULT=" + result});
  ASSERT_EQ(wait_exit_code(child), 0);
  std::istringstream report(read_file(result));
  size_t entries = 0, peak_kib = 0;
  ASSERT_TRUE(report >> entries >> peak_kib) << read_file(result);
  EXPECT_EQ(entries, 2u);
  EXPECT_LT(peak_kib, size_t(48) << 10)
      << "import_cache of a 128 MiB archive peaked at " << peak_kib / 1024 << " MiB";
}

TEST(ArchiveKeys, AKeyPairIsMadeOnceAndNeverReplaced) {
  ScopedCache scope("archive-keys");
  const std::string path = scope.dir() + "/keys/mine";
  Result<std::string> made = make_archive_key(path);
  ASSERT_TRUE(made) << made.status().message();
  EXPECT_EQ(made->rfind("tilecraft-ed25519:", 0), 0u);
  EXPECT_EQ(made->size(), 18u + 64u);
  EXPECT_EQ(*archive_public_key(path), *made);
  const std::string text = read_file(path);
  Result<std::string> again = make_archive_key(path);
  ASSERT_FALSE(again);
  EXPECT_NE(again.status().message().find("something is there already"), std::string::npos);
  EXPECT_EQ(read_file(path), text);
  chmod(path.c_str(), 0644);
  Result<std::string> exposed = archive_public_key(path);
  ASSERT_FALSE(exposed);
  EXPECT_NE(exposed.status().message().find("may be read by others (mode 0644)"),
            std::string::npos);
  const std::string users = scope.dir() + "/users-file";
  write_file(users, "not a key");
  chmod(users.c_str(), 0600);
  EXPECT_NE(archive_public_key(users).status().message().find("is not an archive key pair"),
            std::string::npos);
}

TEST(Ed25519, Rfc8032TestVector1) {
  bool ok = false;
  const std::string seed =
      from_hex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60", &ok);
  ASSERT_TRUE(ok);
  EXPECT_EQ(to_hex(*ed25519_public_key(seed)),
            "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a");
  const std::string signature = *ed25519_sign(seed, "");
  EXPECT_EQ(to_hex(signature),
            "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39"
            "701cf9b46bd25bf5f0595bbe24655141438e7a100b");
  EXPECT_TRUE(ed25519_verify(*ed25519_public_key(seed), "", signature));
  EXPECT_FALSE(ed25519_verify(*ed25519_public_key(seed), "x", signature));
  EXPECT_FALSE(ed25519_verify("short", "", signature));
}

}  // namespace TILECRAFT_TEST_FILE
}  // namespace
}  // namespace tilecraft::compile
