// The one-call ops whose kernels are not tuned by measurement (grouped GEMM, convolution): the
// performance model's first ranked kernel that compiles serves, remembered for the process per
// problem family, so that later calls of the family pay no ranking.
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "tilecraft/compile/compiler.hpp"
#include "tilecraft/discover/api.hpp"

namespace tilecraft::tune {

struct RankedPick {
  std::string kernel_name;
  std::string reason;  // why this kernel serves (and which ranked kernels failed to compile)
};

struct RememberedPick {
  api::Kernel kernel;
  std::string reason;
};

std::mutex& ranked_picks_mutex();
std::map<std::string, RememberedPick>& ranked_picks();

// Runs `args` with the remembered pick of `family`, or with the first of `ranked` (up to four
// tries) whose kernel builds, and remembers it. A kernel that fails to build is skipped and named
// in the reason; any other failure (a refusal of the arguments) is the caller's and returned.
// `what`: "grouped" or "convolution", for the reason's words.
template <typename Args, typename Rank>
Result<RankedPick> run_ranked_first_pick(const std::string& family, const Args& args, void* stream,
                                         const char* what, Rank rank) {
  std::optional<RememberedPick> remembered;
  {
    std::lock_guard lock(ranked_picks_mutex());
    auto found = ranked_picks().find(family);
    if (found != ranked_picks().end()) remembered = found->second;
  }
  if (remembered) {  // run outside the lock: other families' calls need not wait for this one
    TILECRAFT_RETURN_IF_ERROR(remembered->kernel.run(args, nullptr, stream));
    return RankedPick{remembered->kernel.metadata().kernel_name, remembered->reason};
  }
  const Result<std::vector<api::Kernel>> listed = rank();
  if (!listed) return listed.status();
  const std::vector<api::Kernel>& ranked = *listed;
  constexpr size_t kTries = 4;
  std::string skipped;
  Status last = Status::ok();
  for (size_t i = 0; i < ranked.size() && i < kTries; ++i) {
    const api::Kernel& kernel = ranked[i];
    last = kernel.run(args, nullptr, stream);
    if (last) {
      std::string reason =
          "ranked first pick of " + std::to_string(ranked.size()) + " " + what + " kernels (model)";
      if (!skipped.empty()) reason += "; skipped " + skipped;
      std::lock_guard lock(ranked_picks_mutex());
      ranked_picks().insert({family, RememberedPick{kernel, reason}});
      return RankedPick{kernel.metadata().kernel_name, reason};
    }
    if (last.code() != StatusCode::kCompileError) return last;
    const std::string why = last.message().substr(0, last.message().find('\n'));
    skipped += (skipped.empty() ? "" : ", ") + kernel.metadata().kernel_name + " (" + why + ")";
    compile::default_progress("tilecraft: " + kernel.metadata().kernel_name +
                              " failed; trying the next ranked kernel: " + why);
  }
  return last;
}

}  // namespace tilecraft::tune
