// A grouped GEMM's shape as the tuner reports and records it.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "tilecraft/discover/grouped_api.hpp"

namespace tilecraft::tune {

struct GroupedShape {
  std::string text;                  // "64 groups, 8192 rows (at most 301 a group) x 2048 x 7168"
  std::array<int64_t, 4> extents{};  // mean rows a group (rounded up), largest N, largest K, groups
  int64_t largest_rows = 0;
  int64_t empty_groups = 0;
};

GroupedShape grouped_shape(const api::GroupedGemmArguments& args);

}  // namespace tilecraft::tune
