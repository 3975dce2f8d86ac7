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
#include "tilecraft/runtime/device.hpp"

namespace tilecraft::tune {

// How many ranked kernels a first pick tries before it gives up.
constexpr size_t kRankedTries = 4;

// Names `kernel`, which failed to build, in *skipped and on stderr.
inline void note_skipped(const api::Kernel& kernel, const Status& failure, std::string* skipped) {
  const std::string& name = kernel.metadata().kernel_name;
  const std::string why = failure.message().substr(0, failure.message().find('\n'));
  *skipped += (skipped->empty() ? "" : ", ") + name + " (" + why + ")";
  compile::default_progress("tilecraft: " + name +
                            " failed; trying the next ranked kernel: " + why);
}

struct RememberedPick {
  api::Kernel kernel;
  std::string reason;
};

struct RankedPicks {
  std::mutex mutex;
  std::map<std::string, RememberedPick> by_family;
};

inline RankedPicks& ranked_picks() {
  static RankedPicks picks;
  return picks;
}

// Runs `args` with the remembered pick of their family (family_of(args, cc), cc their device's),
// or with the first of get_kernels(args) (up to kRankedTries) whose kernel builds, and remembers
// it. A kernel that fails to build is skipped and named in the reason; any other failure (a
// refusal of the arguments) is the caller's and returned. No kernel listed: why_none() says why.
// `what`: "grouped" or "convolution", for the reason's words. Pick: GroupedPick or ConvPick.
template <typename Pick, typename Args, typename Family, typename WhyNone>
Result<Pick> run_ranked_first_pick(const Args& args, void* stream, const char* what,
                                   Family family_of, WhyNone why_none) {
  auto info = device_info(args.device());  // the operands' device, whichever is current
  if (!info) return info.status();
  const std::string family = family_of(args, info->compute_capability);
  RankedPicks& picks = ranked_picks();
  std::optional<RememberedPick> remembered;
  {
    std::lock_guard lock(picks.mutex);
    auto found = picks.by_family.find(family);
    if (found != picks.by_family.end()) remembered = found->second;
  }
  if (remembered) {  // run outside the lock: other families' calls need not wait for this one
    TILECRAFT_RETURN_IF_ERROR(remembered->kernel.run(args, nullptr, stream));
    return Pick{remembered->kernel.metadata().kernel_name, remembered->reason};
  }
  const std::vector<api::Kernel> ranked = api::get_kernels(args, {}, info->compute_capability);
  if (ranked.empty()) return Status::unsupported(why_none());
  std::string skipped;
  Status last = Status::ok();
  for (size_t i = 0; i < ranked.size() && i < kRankedTries; ++i) {
    const api::Kernel& kernel = ranked[i];
    last = kernel.run(args, nullptr, stream);
    if (last) {
      std::string reason =
          "ranked first pick of " + std::to_string(ranked.size()) + " " + what + " kernels (model)";
      if (!skipped.empty()) reason += "; skipped " + skipped;
      std::lock_guard lock(picks.mutex);
      picks.by_family.insert({family, RememberedPick{kernel, reason}});
      return Pick{kernel.metadata().kernel_name, reason};
    }
    if (last.code() != StatusCode::kCompileError) return last;
    note_skipped(kernel, last, &skipped);
  }
  return last;
}

}  // namespace tilecraft::tune
