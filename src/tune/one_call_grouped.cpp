#include <cmath>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "tilecraft/compile/compiler.hpp"
#include "tilecraft/runtime/device.hpp"
#include "tilecraft/tune/grouped_gemm.hpp"
#include "tune/ranked_pick.hpp"
#include "tune/text.hpp"

namespace tilecraft {
namespace {

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
  auto info = device_info(args.device());  // the operands' device, whichever is current
  if (!info) return info.status();
  auto pick = tune::run_ranked_first_pick(
      family_of(args, info->compute_capability), args, stream, "grouped",
      [&]() -> Result<std::vector<api::Kernel>> {
        std::vector<api::Kernel> ranked = api::get_kernels(args, {}, info->compute_capability);
        if (!ranked.empty()) return ranked;
        return Status::unsupported("grouped_gemm: no grouped kernel takes these operands (" +
                                   std::string(long_name(args.dtype_a())) + " A " +
                                   std::string(to_string(args.layout_a())) + ", " +
                                   std::string(long_name(args.dtype_b())) + " B " +
                                   std::string(to_string(args.layout_b())) + ", " +
                                   std::string(long_name(args.dtype_out())) + " out, alignments " +
                                   std::to_string(args.alignment_a()) + "/" +
                                   std::to_string(args.alignment_b()) + "/" +
                                   std::to_string(args.alignment_out()) + ")");
      });
  if (!pick) return pick.status();
  return GroupedPick{pick->kernel_name, pick->reason};
}

}  // namespace tilecraft
