#include <cmath>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "tilecraft/compile/compiler.hpp"
#include "tilecraft/runtime/device.hpp"
#include "tilecraft/tune/grouped_gemm.hpp"
#include "tune/text.hpp"

namespace tilecraft {
namespace {

struct Chosen {
  api::Kernel kernel;
  std::string reason;
};

std::mutex& picks_mutex() {
  static std::mutex mutex;
  return mutex;
}

std::map<std::string, Chosen>& picks() {
  static std::map<std::string, Chosen> chosen;
  return chosen;
}

int bucket(double rows) {
  return rows <= 1 ? 0 : static_cast<int>(std::floor(4 * std::log2(rows)));
}

std::string family_of(const api::GroupedGemmArguments& args, int cc) {
  tune::Text key;
  key << "cc" << cc << ";" << short_name(args.dtype_a()) << short_name(args.dtype_b())
      << short_name(args.dtype_out()) << short_name(args.accumulator_type()) << ";"
      << to_string(args.layout_a()) << to_string(args.layout_b()) << to_string(args.layout_out())
      << ";" << args.alignment_a() << "x" << args.alignment_b() << "x" << args.alignment_out()
      << ";" << to_string(args.epilogue().activation)
      << (args.epilogue().scale_a != 1.0 || args.epilogue().scale_b != 1.0 ? ";scaled" : "")
      << (args.bias_dtype() ? ";bias_" + std::string(short_name(*args.bias_dtype())) : "");
  std::map<std::pair<int, int>, double> rows;
  for (const GemmCoord& s : args.problem().problem_sizes) rows[{s.n, s.k}] += s.m;
  for (const auto& [nk, m] : rows) key << ";" << nk.first << "x" << nk.second << "r" << bucket(m);
  return key.str();
}

}  // namespace

Result<GroupedPick> grouped_gemm(const api::GroupedGemmArguments& args, void* stream) {
  auto info = current_device_info();
  if (!info) return info.status();
  const std::string family = family_of(args, info->compute_capability);
  std::optional<Chosen> remembered;
  {
    std::lock_guard lock(picks_mutex());
    auto found = picks().find(family);
    if (found != picks().end()) remembered = found->second;
  }
  if (remembered) {  // run outside the lock: other families' calls need not wait for this one
    TILECRAFT_RETURN_IF_ERROR(remembered->kernel.run(args, nullptr, stream));
    return GroupedPick{remembered->kernel.metadata().kernel_name, remembered->reason};
  }
  const std::vector<api::Kernel> ranked = api::get_kernels(args, {}, info->compute_capability);
  if (ranked.empty()) {
    return Status::unsupported(
        "grouped_gemm: no grouped kernel takes these operands (" +
        std::string(long_name(args.dtype_a())) + " A " + std::string(to_string(args.layout_a())) +
        ", " + std::string(long_name(args.dtype_b())) + " B " +
        std::string(to_string(args.layout_b())) + ", " + std::string(long_name(args.dtype_out())) +
        " out, alignments " + std::to_string(args.alignment_a()) + "/" +
        std::to_string(args.alignment_b()) + "/" + std::to_string(args.alignment_out()) + ")");
  }
  constexpr size_t kTries = 4;
  std::string skipped;
  Status last = Status::ok();
  for (size_t i = 0; i < ranked.size() && i < kTries; ++i) {
    const api::Kernel& kernel = ranked[i];
    last = kernel.run(args, nullptr, stream);
    if (last) {
      std::string reason =
          "ranked first pick of " + std::to_string(ranked.size()) + " grouped kernels (model)";
      if (!skipped.empty()) reason += "; skipped " + skipped;
      std::lock_guard lock(picks_mutex());
      picks().insert({family, Chosen{kernel, reason}});
      return GroupedPick{kernel.metadata().kernel_name, reason};
    }
    // Only a kernel that fails to build is skipped; a refusal of the arguments is the caller's.
    if (last.code() != StatusCode::kCompileError) return last;
    const std::string why = last.message().substr(0, last.message().find('\n'));
    skipped += (skipped.empty() ? "" : ", ") + kernel.metadata().kernel_name + " (" + why + ")";
    compile::default_progress("tilecraft: " + kernel.metadata().kernel_name +
                              " failed; trying the next ranked kernel: " + why);
  }
  return last;
}

}  // namespace tilecraft
