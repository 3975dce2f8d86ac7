#include <string>

#include "tilecraft/tune/grouped_gemm.hpp"
#include "tune/served_pick.hpp"
#include "tune/text.hpp"

namespace tilecraft {
namespace {

Result<tune::TuningReport> tune_grouped(const api::GroupedGemmArguments& args,
                                        const tune::TuningOptions& options,
                                        const compile::ProgressFn& progress) {
  return tune::tune_grouped_gemm(args, options, progress);
}

}  // namespace

Result<GroupedPick> grouped_gemm(const api::GroupedGemmArguments& args, void* stream,
                                 const std::optional<tune::TuningOptions>& tuning) {
  return tune::run_served_kernel<GroupedPick>(args, stream, tuning, "grouped", tune_grouped, [&] {
    return "grouped_gemm: no grouped kernel takes these operands (" +
           std::string(long_name(args.dtype_a())) + " A " +
           std::string(to_string(args.layout_a())) + ", " + std::string(long_name(args.dtype_b())) +
           " B " + std::string(to_string(args.layout_b())) + ", " +
           std::string(long_name(args.dtype_out())) + " out, alignments " +
           std::to_string(args.alignment_a()) + "/" + std::to_string(args.alignment_b()) + "/" +
           std::to_string(args.alignment_out()) + ")";
  });
}

}  // namespace tilecraft
