#include <cmath>
#include <map>
#include <string>

#include "tilecraft/tune/grouped_gemm.hpp"
#include "tune/ranked_pick.hpp"
#include "tune/text.hpp"

namespace tilecraft {
namespace {

int bucket(double rows) {
  return rows <= 1 ? 0 : static_cast<int>(std::floor(4 * std::log2(rows)));
}

std::string grouped_family(const api::GroupedGemmArguments& args, int cc) {
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
  return tune::run_ranked_first_pick<GroupedPick>(args, stream, "grouped", grouped_family, [&] {
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
