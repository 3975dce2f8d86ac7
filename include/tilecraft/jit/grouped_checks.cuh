// The arrays every grouped kernel reads, checked before any is read
// (namespace tc_grouped_checks).
#pragma once

#if !defined(TILECRAFT_DEVICE_HALF)  // host half only

#include <string>

#include "tilecraft/abi/grouped_args.h"
#include "tilecraft/jit/grouped_stacked.cuh"

namespace tc_grouped_checks {

inline std::string check(const tc_grouped_args& a) {
  if (a.stacked_offsets != nullptr) return tc_grouped_stacked::check(a);
  if (a.problem_count < 1) {
    return "problem_count: expected at least 1 problem, got " + std::to_string(a.problem_count);
  }
  if (a.problem_sizes == nullptr) return "problem_sizes: null device array";
  if (a.A_array == nullptr || a.B_array == nullptr || a.C_array == nullptr ||
      a.D_array == nullptr) {
    return "A_array, B_array, C_array and D_array must all be device arrays of problem_count "
           "pointers";
  }
  if (a.lda_array == nullptr || a.ldb_array == nullptr || a.ldc_array == nullptr ||
      a.ldd_array == nullptr) {
    return "lda_array, ldb_array, ldc_array and ldd_array must all be device arrays of "
           "problem_count leading dimensions";
  }
  return {};
}

}  // namespace tc_grouped_checks

#endif  // !TILECRAFT_DEVICE_HALF
