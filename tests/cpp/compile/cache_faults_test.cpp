// Fault injection on the compile path and its cache: compilers interrupted, killed with their
// caller, or broken; a damaged signing key; files and links where folders belong; a full disk; a
// read-only cache; caches planted by someone else. Each must end in a clear message or a clean
// recovery, with nothing left running or behind, and nothing planted ever loaded.
//
// Most cases use tests/fixtures/fake_nvcc.sh in place of nvcc (fast, and able to misbehave);
// the planted-cache case compiles for real. Cases that kill a caller or change its working
// folder run a child half of themselves (CacheFaultsChild.*) in another process.
#include <dlfcn.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "compile/process.hpp"
#include "compile/test_support.hpp"
#include "tilecraft/compile/artifact_cache.hpp"
#include "tilecraft/compile/compiler.hpp"
#include "tilecraft/core/program_path.hpp"
#include "tilecraft/core/settings.hpp"

namespace tilecraft::compile {
namespace {
namespace TILECRAFT_TEST_FILE {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using testing::fake_nvcc;
using testing::folder_is_empty;
using testing::process_alive;
using testing::read_file;
using testing::ScopedCache;
using testing::ScopedEnv;
using testing::spawn_self;
using testing::tiny_request;
using testing::unique_marker;
using testing::wait_exit_code;
using testing::wait_until;
using testing::write_file;

// Points the settings at the fake nvcc, misbehaving as `mode` says, for one scope.
class FakeCompiler {
 public:
  explicit FakeCompiler(const std::string& mode) : mode_("TILECRAFT_FAKE_NVCC_MODE", mode) {
    Settings s = settings();
    s.nvcc = fake_nvcc();
    set_settings(s);
  }
  void set_mode(const std::string& mode) { setenv("TILECRAFT_FAKE_NVCC_MODE", mode.c_str(), 1); }

 private:
  ScopedEnv mode_;
};

struct HangPids {
  pid_t nvcc = -1;
  pid_t child = -1;
  std::string output;  // the module.so nvcc was asked to write
};

std::optional<HangPids> read_pids(const std::string& path) {
  std::istringstream in(read_file(path));
  HangPids pids;
  if (!(in >> pids.nvcc >> pids.child >> pids.output)) return std::nullopt;
  return pids;
}

bool all_dead(const HangPids& pids) {
  return !process_alive(pids.nvcc) && !process_alive(pids.child);
}

std::string v1_of(const ScopedCache& scope) { return scope.cache_dir() + "/v1"; }

std::string entry_of(const ScopedCache& scope, const std::string& key) {
  return v1_of(scope) + "/" + key.substr(0, 2) + "/" + key;
}

// ---- Children: halves of the tests below, run in another process --------------------------

// Compiles tiny_request("child", $TILECRAFT_TEST_CHILD_MARKER) with the settings the parent
// names, and writes "ok <path> <from_cache>" or "error <message>" to $TILECRAFT_TEST_CHILD_RESULT.
TEST(CacheFaultsChild, Compile) {
  const char* cache = std::getenv("TILECRAFT_TEST_CHILD_CACHE");
  if (!cache) GTEST_SKIP() << "runs only as the child half of a CacheFaults test";
  Settings s = settings_from_environment();
  s.cache_dir = cache;
  s.signing_key_file = std::getenv("TILECRAFT_TEST_CHILD_KEY");
  if (const char* nvcc = std::getenv("TILECRAFT_TEST_CHILD_NVCC")) s.nvcc = nvcc;
  s.quiet = true;
  set_settings(s);
  Result<CompiledModule> built =
      build_module(tiny_request("child", std::getenv("TILECRAFT_TEST_CHILD_MARKER")), nullptr);
  if (const char* result = std::getenv("TILECRAFT_TEST_CHILD_RESULT")) {
    write_file(result, built ? "ok " + built->path + " " + std::to_string(built->from_cache)
                             : "error " + built.status().message());
  }
}

// Opens a cache (which sweeps what dead processes left) and does nothing else.
TEST(CacheFaultsChild, OpenCache) {
  const char* cache = std::getenv("TILECRAFT_TEST_CHILD_OPEN");
  if (!cache) GTEST_SKIP() << "runs only as the child half of a CacheFaults test";
  Settings s = settings_from_environment();
  s.cache_dir = cache;
  s.signing_key_file = std::getenv("TILECRAFT_TEST_CHILD_KEY");
  s.quiet = true;
  ArtifactCache::open(s);
}

// Compiles with the settings the environment gives (a relative XDG_CACHE_HOME or
// TILECRAFT_CACHE_DIR, a HOME of the parent's choosing), loads the module and calls it.
TEST(CacheFaultsChild, CompileFromTheEnvironment) {
  const char* marker = std::getenv("TILECRAFT_TEST_CHILD_PLANTED_MARKER");
  if (!marker) GTEST_SKIP() << "runs only as the child half of a CacheFaults test";
  Result<CompiledModule> built = build_module(tiny_request("planted", marker), nullptr);
  ASSERT_TRUE(built) << built.status().message();
  void* handle = dlopen(built->path.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << dlerror();
  auto* answer = reinterpret_cast<int (*)()>(dlsym(handle, "tilecraft_test_answer"));
  ASSERT_NE(answer, nullptr);
  EXPECT_EQ(answer(), 42);
  write_file(std::getenv("TILECRAFT_TEST_CHILD_RESULT"),
             built->path + " " + std::to_string(built->from_cache));
}

// The halves that run in a mount namespace with a small tmpfs at $TILECRAFT_TEST_CHILD_DISK.
Settings settings_on_disk(const std::string& disk) {
  Settings s = settings_from_environment();
  s.cache_dir = disk + "/cache";
  s.signing_key_file = disk + "/state/signing-key";
  s.nvcc = fake_nvcc();
  s.quiet = true;
  return s;
}

TEST(CacheFaultsChild, DiskFull) {
  const char* disk = std::getenv("TILECRAFT_TEST_CHILD_DISK_FULL");
  if (!disk) GTEST_SKIP() << "runs only as the child half of CacheFaults.DiskFullWhileStoring";
  set_settings(settings_on_disk(disk));
  const std::string filler = std::string(disk) + "/filler";
  ScopedEnv fill("TILECRAFT_FAKE_NVCC_FILL", filler);
  ScopedEnv mode("TILECRAFT_FAKE_NVCC_MODE", "fill");
  CompileRequest request = tiny_request("full", unique_marker("full"));

  // The compiler wrote the module, then the disk filled up: storing it fails, and says why.
  Result<CompiledModule> built = build_module(request, nullptr);
  ASSERT_FALSE(built);
  EXPECT_NE(built.status().message().find("could not store it in the cache"), std::string::npos)
      << built.status().message();
  EXPECT_NE(built.status().message().find("No space left on device"), std::string::npos)
      << built.status().message();
  // Nothing is left behind to keep the disk full.
  EXPECT_TRUE(folder_is_empty(settings().cache_dir + "/v1/tmp"));
  EXPECT_FALSE(fs::exists(settings().cache_dir + "/v1/" + cache_key(request).substr(0, 2) + "/" +
                          cache_key(request)));

  // Space comes back: the next run stores the module, and the one after finds it.
  fs::remove(filler);
  setenv("TILECRAFT_FAKE_NVCC_MODE", "ok", 1);
  Result<CompiledModule> again = build_module(request, nullptr);
  ASSERT_TRUE(again) << again.status().message();
  EXPECT_FALSE(again->from_cache);
  EXPECT_TRUE(folder_is_empty(settings().cache_dir + "/v1/tmp"));
  Result<CompiledModule> third = build_module(request, nullptr);
  ASSERT_TRUE(third) << third.status().message();
  EXPECT_TRUE(third->from_cache);
}

TEST(CacheFaultsChild, ReadOnlyCache) {
  const char* disk = std::getenv("TILECRAFT_TEST_CHILD_READ_ONLY");
  if (!disk) GTEST_SKIP() << "runs only as the child half of CacheFaults.ReadOnlyCache";
  set_settings(settings_on_disk(disk));
  ScopedEnv mode("TILECRAFT_FAKE_NVCC_MODE", "ok");
  CompileRequest cached = tiny_request("cached", unique_marker("ro-cached"));
  Result<CompiledModule> first = build_module(cached, nullptr);
  ASSERT_TRUE(first) << first.status().message();

  ASSERT_EQ(mount(nullptr, disk, nullptr, MS_REMOUNT | MS_RDONLY, nullptr), 0)
      << "remount read-only: " << std::strerror(errno);
  ArtifactCache cache = ArtifactCache::open(settings());
  EXPECT_TRUE(cache.readable());
  EXPECT_FALSE(cache.writable());
  EXPECT_NE(cache.reason().find("Read-only file system"), std::string::npos) << cache.reason();

  // What is there is used; what is new is built in a private folder, and works.
  Result<CompiledModule> hit = build_module(cached, nullptr);
  ASSERT_TRUE(hit) << hit.status().message();
  EXPECT_TRUE(hit->from_cache);
  EXPECT_EQ(hit->path, first->path);
  Result<CompiledModule> built = build_module(tiny_request("new", unique_marker("ro")), nullptr);
  ASSERT_TRUE(built) << built.status().message();
  EXPECT_FALSE(built->from_cache);
  EXPECT_NE(built->path.rfind(disk, 0), 0u) << built->path;
  write_file(std::getenv("TILECRAFT_TEST_CHILD_RESULT"), built->path);
}

// Runs one CacheFaultsChild test in a private mount namespace with a 1 MiB tmpfs at `disk`;
// nullopt when this machine cannot mount one (then `why` says what happened).
std::optional<ProcessResult> run_on_small_tmpfs(const std::string& child, const std::string& disk,
                                                const std::vector<std::string>& env,
                                                std::string* why) {
  std::string unshare = find_program_on_path("unshare");
  if (unshare.empty()) {
    *why = "no unshare program on PATH (util-linux) to make a private mount namespace";
    return std::nullopt;
  }
  std::vector<std::string> command = {unshare};
  if (geteuid() != 0) command.push_back("--map-root-user");
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  command.insert(command.end(), {"--mount", "--propagation", "private", "/bin/sh", "-c",
                                 "mount -t tmpfs -o size=1m tilecraft-test \"$1\" || exit 77; "
                                 "exec \"$2\" --gtest_filter=\"$3\"",
                                 "sh", disk, self, child});
  Result<ProcessResult> run = run_process(command, env);
  if (!run) {
    *why = run.status().message();
    return std::nullopt;
  }
  if (run->exit_code == 77 || run->output.find("unshare failed") != std::string::npos) {
    *why = "cannot mount a small tmpfs in a private mount namespace here: " + run->output;
    return std::nullopt;
  }
  return *run;
}

// ---- Interrupted and killed compiles --------------------------------------------------------

TEST(CacheFaults, InterruptStopsTheCompilerAndKeepsNothing) {
  ScopedCache scope("interrupt");
  const std::string pids_file = scope.dir() + "/pids";
  ScopedEnv pids_env("TILECRAFT_FAKE_NVCC_PIDS", pids_file);
  FakeCompiler fake("hang");
  std::optional<std::chrono::steady_clock::time_point> interrupted_at;
  InterruptScope interrupt([&] {
    if (!fs::exists(pids_file)) return false;
    interrupted_at = std::chrono::steady_clock::now();
    return true;
  });
  Result<CompiledModule> built =
      build_module(tiny_request("hang", unique_marker("interrupt")), nullptr);
  ASSERT_FALSE(built);
  EXPECT_EQ(built.status().code(), StatusCode::kCancelled) << built.status().message();
  EXPECT_NE(built.status().message().find("interrupted"), std::string::npos);
  ASSERT_TRUE(interrupted_at.has_value());
  EXPECT_LT(std::chrono::steady_clock::now() - *interrupted_at, 2s) << "not stopped promptly";

  std::optional<HangPids> pids = read_pids(pids_file);
  ASSERT_TRUE(pids.has_value()) << read_file(pids_file);
  EXPECT_TRUE(wait_until([&] { return all_dead(*pids); }, 2000ms))
      << "the compiler (pid " << pids->nvcc << ") or its child (pid " << pids->child
      << ") outlived the interrupt";
  EXPECT_TRUE(folder_is_empty(v1_of(scope) + "/tmp"));
  EXPECT_TRUE(folder_is_empty(v1_of(scope) + "/failed"));
}

TEST(CacheFaults, KilledCallerTakesItsCompilerAlongAndTheNextStartSweeps) {
  ScopedCache scope("killed");
  const std::string pids_file = scope.dir() + "/pids";
  pid_t child =
      spawn_self("CacheFaultsChild.Compile",
                 {"TILECRAFT_TEST_CHILD_CACHE=" + scope.cache_dir(),
                  "TILECRAFT_TEST_CHILD_KEY=" + scope.signing_key_file(),
                  "TILECRAFT_TEST_CHILD_NVCC=" + fake_nvcc(),
                  "TILECRAFT_TEST_CHILD_MARKER=" + unique_marker("killed"),
                  "TILECRAFT_FAKE_NVCC_MODE=hang", "TILECRAFT_FAKE_NVCC_PIDS=" + pids_file});
  ASSERT_GT(child, 0);
  ASSERT_TRUE(wait_until([&] { return fs::exists(pids_file); }, 60000ms));
  std::optional<HangPids> pids = read_pids(pids_file);
  ASSERT_TRUE(pids.has_value());
  ASSERT_TRUE(process_alive(pids->nvcc));
  kill(child, SIGKILL);
  EXPECT_EQ(wait_exit_code(child), 128 + SIGKILL);

  EXPECT_TRUE(wait_until([&] { return all_dead(*pids); }, 3000ms))
      << "the compiler (pid " << pids->nvcc << ") or its child (pid " << pids->child
      << ") outlived its killed caller";
  // The dead builder's folder is still there; the next process to open the cache removes it.
  ASSERT_FALSE(folder_is_empty(v1_of(scope) + "/tmp"));
  pid_t next = spawn_self("CacheFaultsChild.OpenCache",
                          {"TILECRAFT_TEST_CHILD_OPEN=" + scope.cache_dir(),
                           "TILECRAFT_TEST_CHILD_KEY=" + scope.signing_key_file()});
  EXPECT_EQ(wait_exit_code(next), 0);
  EXPECT_TRUE(folder_is_empty(v1_of(scope) + "/tmp"));
}

TEST(CacheFaults, PrivateFolderOfAKilledCallerIsSweptButNotOneInUse) {
  ScopedCache scope("killed-private");
  write_file(scope.dir() + "/not-a-folder", "x");  // the cache cannot exist: builds go private
  const std::string cache = scope.dir() + "/not-a-folder/cache";
  const std::string pids_file = scope.dir() + "/pids";
  pid_t child =
      spawn_self("CacheFaultsChild.Compile",
                 {"TILECRAFT_TEST_CHILD_CACHE=" + cache,
                  "TILECRAFT_TEST_CHILD_KEY=" + scope.signing_key_file(),
                  "TILECRAFT_TEST_CHILD_NVCC=" + fake_nvcc(),
                  "TILECRAFT_TEST_CHILD_MARKER=" + unique_marker("private"),
                  "TILECRAFT_FAKE_NVCC_MODE=hang", "TILECRAFT_FAKE_NVCC_PIDS=" + pids_file});
  ASSERT_GT(child, 0);
  ASSERT_TRUE(wait_until([&] { return fs::exists(pids_file); }, 60000ms));
  std::optional<HangPids> pids = read_pids(pids_file);
  ASSERT_TRUE(pids.has_value());
  const fs::path private_folder = fs::path(pids->output).parent_path().parent_path();
  ASSERT_EQ(private_folder.filename().string().rfind("tilecraft-private-", 0), 0u) << pids->output;

  auto open_in_another_process = [&] {
    pid_t next = spawn_self("CacheFaultsChild.OpenCache",
                            {"TILECRAFT_TEST_CHILD_OPEN=" + cache,
                             "TILECRAFT_TEST_CHILD_KEY=" + scope.signing_key_file()});
    return wait_exit_code(next);
  };
  EXPECT_EQ(open_in_another_process(), 0);
  EXPECT_TRUE(fs::exists(private_folder)) << "a living process's private folder was swept";

  kill(child, SIGKILL);
  EXPECT_EQ(wait_exit_code(child), 128 + SIGKILL);
  EXPECT_TRUE(wait_until([&] { return all_dead(*pids); }, 3000ms));
  EXPECT_EQ(open_in_another_process(), 0);
  EXPECT_FALSE(fs::exists(private_folder)) << "a dead process's private folder was left behind";
}

// ---- Broken compilers -----------------------------------------------------------------------

struct BrokenCompiler {
  const char* mode;
  std::vector<const char*> said;    // what the error message must contain
  std::vector<const char*> unsaid;  // what it must not (a step the failure did not reach)
};

class BrokenCompilers : public ::testing::TestWithParam<BrokenCompiler> {};

TEST_P(BrokenCompilers, EndInAClearErrorWithNothingLeftBehind) {
  ScopedCache scope(std::string("broken-") + GetParam().mode);
  FakeCompiler fake(GetParam().mode);
  CompileRequest request = tiny_request("broken", unique_marker("broken"));
  Result<CompiledModule> built = build_module(request, nullptr);
  ASSERT_FALSE(built);
  EXPECT_EQ(built.status().code(), StatusCode::kCompileError);
  const std::string& message = built.status().message();
  for (const char* words : GetParam().said) {
    EXPECT_NE(message.find(words), std::string::npos) << "missing '" << words << "' in:\n"
                                                      << message;
  }
  for (const char* words : GetParam().unsaid) {
    EXPECT_EQ(message.find(words), std::string::npos) << "'" << words << "' in:\n" << message;
  }
  EXPECT_NE(message.find("command: " + fake_nvcc()), std::string::npos) << message;
  EXPECT_TRUE(folder_is_empty(v1_of(scope) + "/tmp"));
  EXPECT_FALSE(fs::exists(entry_of(scope, cache_key(request))));
}

INSTANTIATE_TEST_SUITE_P(
    CacheFaults, BrokenCompilers,
    ::testing::Values(
        BrokenCompiler{"nothing",
                       {"nvcc exited with 0", "produced no ", "/module.so (cannot open",
                        "fake nvcc: finished without writing anything"},
                       {}},
        BrokenCompiler{"empty", {"nvcc exited with 0", "produced an empty"}, {}},
        BrokenCompiler{"garbage", {"nvcc exited with 0", "not an ELF shared object"}, {}},
        BrokenCompiler{
            "symlink", {"nvcc exited with 0", "produced no ", "/module.so (cannot open"}, {}},
        BrokenCompiler{"crash", {"nvcc could not compile", "exit code 139"}, {}},
        BrokenCompiler{
            "fail", {"nvcc could not compile", "fake compile error", "source kept at"}, {}},
        // Old defect 9: a compiler that exits with 0 and writes nothing is named, not the
        // assembler that then finds no kernels.fatbin.
        BrokenCompiler{"silent",
                       {"its device half exited with 0 but produced no ", "/kernels.fatbin",
                        "fake nvcc: finished without writing anything", "-fatbin"},
                       {"image.S", "device image", "-shared"}},
        BrokenCompiler{"silent_device",
                       {"its device half exited with 0 but produced no ", "/kernels.fatbin"},
                       {"image.S", "-shared"}},
        BrokenCompiler{
            "silent_host",
            {"its host half exited with 0 but produced no ", "/host.o", "-DTILECRAFT_HOST_HALF=1"},
            {"image.S", "-shared"}}),
    [](const auto& p) { return std::string(p.param.mode); });

TEST(CacheFaults, CompilerThatCannotTellItsVersionIsNamed) {
  ScopedCache scope("no-version");
  // A copy at a path of its own: a compiler is identified once per path per process.
  const std::string nvcc = scope.dir() + "/nvcc";
  fs::copy_file(fake_nvcc(), nvcc);
  fs::permissions(nvcc, fs::perms::owner_all);
  ScopedEnv mode("TILECRAFT_FAKE_NVCC_MODE", "no-version");
  Settings s = settings();
  s.nvcc = nvcc;
  set_settings(s);
  Result<CompiledModule> built = build_module(tiny_request("x", unique_marker("version")), nullptr);
  ASSERT_FALSE(built);
  EXPECT_EQ(built.status().code(), StatusCode::kNotSupported);
  EXPECT_NE(built.status().message().find("TILECRAFT_NVCC: expected an nvcc that answers "
                                          "--version, got '" +
                                          nvcc + "', which exited with 3"),
            std::string::npos)
      << built.status().message();
  EXPECT_NE(built.status().message().find("fake nvcc: cannot tell its version"), std::string::npos);
  EXPECT_TRUE(folder_is_empty(v1_of(scope) + "/tmp"));
}

TEST(CacheFaults, CompilerThatCannotTellItsVersionIsAskedOncePerProcess) {
  // An nvcc that hangs on --version costs its time limit once, not at every compile.
  ScopedCache scope("version-once");
  const std::string nvcc = scope.dir() + "/nvcc";
  fs::copy_file(fake_nvcc(), nvcc);
  fs::permissions(nvcc, fs::perms::owner_all);
  const std::string log = scope.dir() + "/version-calls";
  ScopedEnv mode("TILECRAFT_FAKE_NVCC_MODE", "no-version");
  ScopedEnv calls("TILECRAFT_FAKE_NVCC_VERSION_LOG", log);
  Settings s = settings();
  s.nvcc = nvcc;
  set_settings(s);
  for (int i = 0; i < 3; ++i) {
    Result<CompiledModule> built = build_module(tiny_request("x", unique_marker("once")), nullptr);
    ASSERT_FALSE(built);
    EXPECT_NE(built.status().message().find("which exited with 3"), std::string::npos)
        << built.status().message();
  }
  EXPECT_EQ(read_file(log), "--version\n");
}

TEST(CacheFaults, HostCompilerThatCannotTellItsVersionIsNamed) {
  ScopedCache scope("host-version");
  FakeCompiler fake("ok");
  const std::string broken = scope.dir() + "/c++";
  write_file(broken, "#!/bin/sh\necho 'broken c++: no version here' >&2\nexit 5\n");
  fs::permissions(broken, fs::perms::owner_all);
  {
    ScopedEnv ccbin("NVCC_CCBIN", broken);
    Result<CompiledModule> built = build_module(tiny_request("x", unique_marker("cc")), nullptr);
    ASSERT_FALSE(built);
    EXPECT_EQ(built.status().code(), StatusCode::kNotSupported);
    EXPECT_NE(built.status().message().find("NVCC_CCBIN: expected a host compiler that answers "
                                            "--version, got '" +
                                            broken + "', which exited with 5"),
              std::string::npos)
        << built.status().message();
    EXPECT_NE(built.status().message().find("broken c++: no version here"), std::string::npos);
  }
  {
    ScopedEnv ccbin("NVCC_CCBIN", "tilecraft-no-such-compiler");
    Result<CompiledModule> built = build_module(tiny_request("x", unique_marker("cc")), nullptr);
    ASSERT_FALSE(built);
    EXPECT_NE(built.status().message().find("NVCC_CCBIN: expected a host compiler (a path, or a "
                                            "name found in an absolute folder of PATH), got "
                                            "'tilecraft-no-such-compiler', which is not on PATH"),
              std::string::npos)
        << built.status().message();
  }
  {
    ScopedEnv ccbin("NVCC_CCBIN", scope.dir());
    Result<CompiledModule> built = build_module(tiny_request("x", unique_marker("cc")), nullptr);
    ASSERT_FALSE(built);
    EXPECT_NE(built.status().message().find("NVCC_CCBIN: expected the host compiler's executable, "
                                            "got '" +
                                            scope.dir() + "', a folder"),
              std::string::npos)
        << built.status().message();
  }
  EXPECT_TRUE(folder_is_empty(v1_of(scope) + "/tmp"));
}

// ---- A damaged signing key ------------------------------------------------------------------

struct KeyDamage {
  const char* name;
  void (*damage)(const std::string& key, const std::string& scratch);
  const char* said;  // how the repair describes the damage
};

class DamagedSigningKey : public ::testing::TestWithParam<KeyDamage> {};

constexpr size_t kKeyFileBytes = 25 + 65;  // "tilecraft-signing-key v1\n", 64 hex digits, '\n'

TEST_P(DamagedSigningKey, IsReplacedAndSaidSoAndTheCacheKeepsWorking) {
  ScopedCache scope(std::string("key-") + GetParam().name);
  FakeCompiler fake("ok");
  CompileRequest request = tiny_request("signed", unique_marker("key"));
  ASSERT_TRUE(build_module(request, nullptr));
  const std::string old_key = read_file(scope.signing_key_file());
  ASSERT_EQ(old_key.size(), kKeyFileBytes);
  ASSERT_EQ(old_key.rfind("tilecraft-signing-key v1\n", 0), 0u);

  GetParam().damage(scope.signing_key_file(), scope.dir());
  ArtifactCache cache = ArtifactCache::open(settings());
  ASSERT_TRUE(cache.writable()) << cache.reason();
  ASSERT_EQ(cache.repairs().size(), 1u);
  EXPECT_NE(cache.repairs()[0].find("was damaged (" + std::string(GetParam().said)),
            std::string::npos)
      << cache.repairs()[0];
  EXPECT_NE(cache.repairs()[0].find("replaced it with a new key"), std::string::npos);
  struct stat info;
  ASSERT_EQ(lstat(scope.signing_key_file().c_str(), &info), 0);
  EXPECT_TRUE(S_ISREG(info.st_mode));
  EXPECT_EQ(info.st_mode & 0777, 0600u);
  EXPECT_EQ(static_cast<size_t>(info.st_size), kKeyFileBytes);
  EXPECT_NE(read_file(scope.signing_key_file()), old_key);

  // What the old key signed is no longer trusted: rebuilt once, then found.
  Result<CompiledModule> rebuilt = build_module(request, nullptr);
  ASSERT_TRUE(rebuilt) << rebuilt.status().message();
  EXPECT_FALSE(rebuilt->from_cache);
  Result<CompiledModule> found = build_module(request, nullptr);
  ASSERT_TRUE(found) << found.status().message();
  EXPECT_TRUE(found->from_cache);
  EXPECT_TRUE(ArtifactCache::open(settings()).repairs().empty());
}

void replace_with(const std::string& key, const std::string& bytes) { write_file(key, bytes); }

// Only a key file tilecraft wrote is ever repaired.
INSTANTIATE_TEST_SUITE_P(CacheFaults, DamagedSigningKey,
                         ::testing::Values(KeyDamage{"truncated",
                                                     [](const std::string& k, const std::string&) {
                                                       replace_with(k, read_file(k).substr(0, 40));
                                                     },
                                                     "its key text is malformed (40 bytes)"},
                                           KeyDamage{"torn_magic",
                                                     [](const std::string& k, const std::string&) {
                                                       replace_with(k, read_file(k).substr(0, 5));
                                                     },
                                                     "its key text is malformed (5 bytes)"},
                                           KeyDamage{"too_long",
                                                     [](const std::string& k, const std::string&) {
                                                       replace_with(k, read_file(k) + "x");
                                                     },
                                                     "its key text is malformed (91 bytes)"},
                                           KeyDamage{"readable_by_others",
                                                     [](const std::string& k, const std::string&) {
                                                       chmod(k.c_str(), 0644);
                                                     },
                                                     "others may read it (mode 0644)"}),
                         [](const auto& p) { return std::string(p.param.name); });

// DATA-1: TILECRAFT_SIGNING_KEY_FILE naming what tilecraft did not write (a folder, a file of the
// user's, a link, a fifo, a device) is refused by name and left exactly as it was, also by a
// read-only `cache stats`.
struct ForeignKey {
  const char* name;
  std::function<void(const std::string& key, const std::string& scratch)> plant;
  const char* said;
};

class ForeignSigningKey : public ::testing::TestWithParam<ForeignKey> {};

std::string describe_path(const std::string& path) {
  struct stat info;
  if (lstat(path.c_str(), &info) != 0) return "nothing";
  std::string text = std::to_string(info.st_mode) + " " + std::to_string(info.st_size);
  if (S_ISREG(info.st_mode)) text += " " + read_file(path);
  if (S_ISDIR(info.st_mode)) {
    for (const auto& item : fs::recursive_directory_iterator(path)) {
      text += " " + item.path().string() + "=" + read_file(item.path().string());
    }
  }
  return text;
}

TEST_P(ForeignSigningKey, IsRefusedByNameAndLeftAsItWas) {
  ScopedCache scope(std::string("foreign-key-") + GetParam().name);
  const std::string key = scope.signing_key_file();
  fs::create_directories(fs::path(key).parent_path());
  chmod(fs::path(key).parent_path().c_str(), 0700);
  GetParam().plant(key, scope.dir());
  const std::string before = describe_path(key);

  ArtifactCache cache = ArtifactCache::open(settings());
  EXPECT_FALSE(cache.readable());
  EXPECT_NE(cache.reason().find("TILECRAFT_SIGNING_KEY_FILE"), std::string::npos) << cache.reason();
  EXPECT_NE(cache.reason().find("is not a key tilecraft wrote: " + std::string(GetParam().said)),
            std::string::npos)
      << cache.reason();
  EXPECT_TRUE(cache.repairs().empty());
  Result<KernelCacheStats> stats = kernel_cache_stats();
  EXPECT_FALSE(stats);
  EXPECT_EQ(describe_path(key), before);
  EXPECT_FALSE(fs::exists(key + ".lock"));
}

INSTANTIATE_TEST_SUITE_P(
    CacheFaults, ForeignSigningKey,
    ::testing::Values(
        ForeignKey{"folder",
                   [](const std::string& k, const std::string&) {
                     fs::create_directory(k);
                     write_file(k + "/thesis.tex", "my thesis");
                   },
                   "it is a folder, not a file"},
        ForeignKey{"users_file",
                   [](const std::string& k, const std::string&) {
                     write_file(k, std::string(400, 'x'));
                     chmod(k.c_str(), 0600);
                   },
                   "it is a file of 400 bytes (mode 0600) that tilecraft did not write"},
        ForeignKey{"empty_file",
                   [](const std::string& k, const std::string&) { write_file(k, ""); },
                   "it is a file of 0 bytes"},
        ForeignKey{"raw_key_readable_by_others",
                   [](const std::string& k, const std::string&) {
                     write_file(k, std::string(32, 'k'));
                     chmod(k.c_str(), 0644);
                   },
                   "it is a file of 32 bytes (mode 0644)"},
        ForeignKey{"symlink",
                   [](const std::string& k, const std::string& scratch) {
                     write_file(scratch + "/someone-elses-key", std::string(32, 'k'));
                     fs::create_symlink(scratch + "/someone-elses-key", k);
                   },
                   "it is a symbolic link"},
        ForeignKey{"fifo",
                   [](const std::string& k, const std::string&) { mkfifo(k.c_str(), 0600); },
                   "it is a fifo, not a file"}),
    [](const auto& p) { return std::string(p.param.name); });

TEST(CacheFaults, AnEarlierTilecraftsRawKeyIsUsedAsItIs) {
  ScopedCache scope("raw-key");
  FakeCompiler fake("ok");
  const std::string key = scope.signing_key_file();
  fs::create_directories(fs::path(key).parent_path());
  chmod(fs::path(key).parent_path().c_str(), 0700);
  write_file(key, std::string(32, 'r'));
  chmod(key.c_str(), 0600);
  CompileRequest request = tiny_request("raw", unique_marker("raw-key"));
  ASSERT_TRUE(build_module(request, nullptr));
  Result<CompiledModule> found = build_module(request, nullptr);
  ASSERT_TRUE(found) << found.status().message();
  EXPECT_TRUE(found->from_cache);
  EXPECT_EQ(read_file(key), std::string(32, 'r'));
}

// ---- Files and links where folders belong ---------------------------------------------------

struct Intruder {
  const char* where;  // entry, shard, v1, tmp, locks, failed, lock_file
  const char* what;   // file, symlink, dangling_symlink, fifo
};

class IntruderInTheCache : public ::testing::TestWithParam<Intruder> {};

TEST_P(IntruderInTheCache, IsReplacedAndNothingIsWrittenThroughIt) {
  const Intruder intruder = GetParam();
  ScopedCache scope(std::string("intruder-") + intruder.where + "-" + intruder.what);
  FakeCompiler fake("ok");
  CompileRequest request = tiny_request("first", unique_marker("intruder"));
  const std::string key = cache_key(request);
  ASSERT_TRUE(build_module(request, nullptr));

  const std::string v1 = v1_of(scope);
  const std::map<std::string, std::string> places = {{"entry", entry_of(scope, key)},
                                                     {"shard", v1 + "/" + key.substr(0, 2)},
                                                     {"v1", v1},
                                                     {"tmp", v1 + "/tmp"},
                                                     {"locks", v1 + "/locks"},
                                                     {"failed", v1 + "/failed"},
                                                     {"lock_file", v1 + "/locks/" + key + ".lock"}};
  const std::string target = places.at(intruder.where);
  const std::string outside = scope.dir() + "/outside";
  fs::create_directories(outside);
  write_file(outside + "/sentinel", "untouched");
  fs::remove_all(target);
  // A key's lock is taken only to build it: make the next request for the key a miss.
  if (std::string(intruder.where) == "lock_file") fs::remove_all(entry_of(scope, key));
  const std::string what = intruder.what;
  if (what == "file") write_file(target, "planted");
  if (what == "symlink") fs::create_directory_symlink(outside, target);
  if (what == "dangling_symlink") fs::create_symlink(scope.dir() + "/nowhere", target);
  if (what == "fifo") {
    ASSERT_EQ(mkfifo(target.c_str(), 0600), 0);
  }

  Result<CompiledModule> again = build_module(request, nullptr);
  ASSERT_TRUE(again) << again.status().message();
  EXPECT_EQ(again->path, entry_of(scope, key) + "/module.so");
  Result<CompiledModule> other =
      build_module(tiny_request("second", unique_marker("intruder-2")), nullptr);
  ASSERT_TRUE(other) << other.status().message();
  fake.set_mode("fail");
  Result<CompiledModule> failed =
      build_module(tiny_request("third", unique_marker("intruder-3")), nullptr);
  ASSERT_FALSE(failed);
  EXPECT_NE(failed.status().message().find("source kept at: " + v1 + "/failed/"), std::string::npos)
      << failed.status().message();
  fake.set_mode("ok");

  struct stat info;
  ASSERT_EQ(lstat(target.c_str(), &info), 0) << target;
  if (std::string(intruder.where) == "lock_file") {
    EXPECT_TRUE(S_ISREG(info.st_mode)) << target;
  } else {
    EXPECT_TRUE(S_ISDIR(info.st_mode)) << target;
  }
  EXPECT_EQ(read_file(outside + "/sentinel"), "untouched");
  EXPECT_EQ(std::distance(fs::directory_iterator(outside), fs::directory_iterator()), 1)
      << "something was written through a link into " << outside;
  EXPECT_TRUE(folder_is_empty(v1 + "/tmp"));
  Result<CompiledModule> found = build_module(request, nullptr);
  ASSERT_TRUE(found) << found.status().message();
  EXPECT_TRUE(found->from_cache);
}

std::vector<Intruder> all_intruders() {
  std::vector<Intruder> all;
  for (const char* where : {"entry", "shard", "v1", "tmp", "locks", "failed", "lock_file"}) {
    for (const char* what : {"file", "symlink", "dangling_symlink", "fifo"}) {
      all.push_back({where, what});
    }
  }
  return all;
}

INSTANTIATE_TEST_SUITE_P(CacheFaults, IntruderInTheCache, ::testing::ValuesIn(all_intruders()),
                         [](const auto& p) {
                           return std::string(p.param.where) + "_" + p.param.what;
                         });

// ---- A full disk, a read-only cache ---------------------------------------------------------

TEST(CacheFaults, DiskFullWhileStoring) {
  ScopedCache scope("disk-full");
  const std::string disk = scope.dir() + "/disk";
  fs::create_directories(disk);
  std::string why;
  std::optional<ProcessResult> run = run_on_small_tmpfs(
      "CacheFaultsChild.DiskFull", disk, {"TILECRAFT_TEST_CHILD_DISK_FULL=" + disk}, &why);
  if (!run) GTEST_SKIP() << why;
  EXPECT_EQ(run->exit_code, 0) << run->output;
  EXPECT_NE(run->output.find("[  PASSED  ] 1 test"), std::string::npos) << run->output;
}

TEST(CacheFaults, ReadOnlyCache) {
  ScopedCache scope("read-only");
  const std::string disk = scope.dir() + "/disk";
  fs::create_directories(disk);
  const std::string result = scope.dir() + "/result";
  std::string why;
  std::optional<ProcessResult> run = run_on_small_tmpfs(
      "CacheFaultsChild.ReadOnlyCache", disk,
      {"TILECRAFT_TEST_CHILD_READ_ONLY=" + disk, "TILECRAFT_TEST_CHILD_RESULT=" + result}, &why);
  if (!run) GTEST_SKIP() << why;
  EXPECT_EQ(run->exit_code, 0) << run->output;
  EXPECT_NE(run->output.find("[  PASSED  ] 1 test"), std::string::npos) << run->output;
  // The module built privately went away with the process that built it.
  const std::string module = read_file(result);
  ASSERT_FALSE(module.empty());
  EXPECT_FALSE(fs::exists(fs::path(module).parent_path().parent_path())) << module;
}

// ---- Caches planted by someone else ---------------------------------------------------------

// A cache as an attacker would ship it in a checkout: entries for the very key tilecraft will
// look up, each a module whose constructor leaves `marker`, signed with a secret that travels
// beside them (the layout before the signing key moved out of the cache).
void plant_cache(const std::string& root, const std::string& key, const std::string& module,
                 const std::string& source) {
  const std::string secret(32, 's');
  const std::string entry = root + "/v1/" + key.substr(0, 2) + "/" + key;
  fs::create_directories(entry);
  for (const std::string& folder : {root, root + "/v1", entry}) chmod(folder.c_str(), 0700);
  write_file(root + "/secret", secret);
  chmod((root + "/secret").c_str(), 0600);
  fs::copy_file(module, entry + "/module.so");
  write_file(entry + "/source.cu", source);
  write_file(entry + "/key.txt", "planted");
  write_file(entry + "/manifest", manifest_text(secret, key, read_file(entry + "/module.so")));
}

TEST(CacheFaults, PlantedCacheInTheWorkingFolderIsNeverLoaded) {
  ScopedCache scope("planted-cache");
  const std::string gxx = find_program_on_path("g++");
  if (gxx.empty()) GTEST_SKIP() << "no g++ on PATH to build the planted module";
  const std::string ran = scope.dir() + "/planted-code-ran";
  const std::string planted_source = scope.dir() + "/planted.cpp";
  write_file(planted_source,
             "#include <cstdio>\n__attribute__((constructor)) static void ran() "
             "{ std::FILE* f = std::fopen(\"" +
                 ran + "\", \"w\"); if (f) std::fclose(f); }\n");
  Result<ProcessResult> made =
      run_process({gxx, "-shared", "-fPIC", "-o", scope.dir() + "/planted.so", planted_source});
  ASSERT_TRUE(made && made->exit_code == 0) << (made ? made->output : made.status().message());

  const std::string marker = unique_marker("planted");
  const CompileRequest request = tiny_request("planted", marker);
  const std::string key = cache_key(request);  // the child's key too: same compiler and CUTLASS
  const std::string checkout = scope.dir() + "/checkout";
  plant_cache(checkout + "/xdg/tilecraft", key, scope.dir() + "/planted.so", request.source);
  plant_cache(checkout + "/cache", key, scope.dir() + "/planted.so", request.source);
  const std::string home = scope.dir() + "/home";
  fs::create_directories(home);
  const std::string self = fs::read_symlink("/proc/self/exe").string();

  auto run_child = [&](const std::vector<std::string>& extra) {
    std::vector<std::string> env = {"HOME=" + home, "TILECRAFT_NVCC=" + settings().nvcc,
                                    "TILECRAFT_CUTLASS_DIR=" + settings().cutlass_dir,
                                    "TILECRAFT_TEST_CHILD_PLANTED_MARKER=" + marker,
                                    "TILECRAFT_TEST_CHILD_RESULT=" + scope.dir() + "/result"};
    env.insert(env.end(), extra.begin(), extra.end());
    // The child's environment is only what is given here (and PATH): no inherited cache settings.
    std::vector<std::string> command = {"/usr/bin/env", "-i",
                                        "PATH=" + std::string(getenv("PATH"))};
    command.insert(command.end(), env.begin(), env.end());
    command.insert(command.end(), {"/bin/sh", "-c",
                                   "cd \"$1\" && exec \"$2\" "
                                   "--gtest_filter=CacheFaultsChild.CompileFromTheEnvironment",
                                   "sh", checkout, self});
    return run_process(command);
  };

  // XDG_CACHE_HOME=xdg is relative: ignored, as the XDG specification says.
  Result<ProcessResult> xdg = run_child({"XDG_CACHE_HOME=xdg"});
  ASSERT_TRUE(xdg) << xdg.status().message();
  EXPECT_EQ(xdg->exit_code, 0) << xdg->output;
  EXPECT_NE(xdg->output.find("ignoring XDG_CACHE_HOME='xdg'"), std::string::npos) << xdg->output;
  EXPECT_EQ(read_file(scope.dir() + "/result"),
            home + "/.cache/tilecraft/v1/" + key.substr(0, 2) + "/" + key + "/module.so 0");
  EXPECT_FALSE(fs::exists(ran)) << "the planted module's code ran";

  // TILECRAFT_CACHE_DIR=cache is relative: resolved once, and said so. The planted entry's
  // secret signs nothing tilecraft trusts: the entry is rebuilt, never loaded.
  Result<ProcessResult> relative = run_child({"TILECRAFT_CACHE_DIR=cache"});
  ASSERT_TRUE(relative) << relative.status().message();
  EXPECT_EQ(relative->exit_code, 0) << relative->output;
  EXPECT_NE(relative->output.find("TILECRAFT_CACHE_DIR='cache' is a relative path: using " +
                                  checkout + "/cache"),
            std::string::npos)
      << relative->output;
  EXPECT_EQ(read_file(scope.dir() + "/result"),
            checkout + "/cache/v1/" + key.substr(0, 2) + "/" + key + "/module.so 0");
  EXPECT_FALSE(fs::exists(ran)) << "the planted module's code ran";
}

}  // namespace TILECRAFT_TEST_FILE
}  // namespace
}  // namespace tilecraft::compile
