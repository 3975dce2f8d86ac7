// The checks every description's validation starts with: each enum holds one of its
// enumerators, and each extent lies in its allowed range. The rules after them compute sizes
// (bytes of shared memory, threads, registers) in 64 bits from values these checks bound, so no
// product can overflow into a false verdict.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include "tilecraft/core/extents.hpp"
#include "tilecraft/core/status.hpp"

namespace tilecraft::describe {

inline std::string triple_text(const std::array<int, 3>& v) {
  return "[" + std::to_string(v[0]) + ", " + std::to_string(v[1]) + ", " + std::to_string(v[2]) +
         "]";
}

// The name of `value` among `names`, the enum's enumerators in declaration order (numbered 0,
// 1, ...); "?" for a value that is none of them.
template <typename Enum>
std::string_view enum_name(Enum value, std::initializer_list<std::string_view> names) {
  const auto index = static_cast<size_t>(value);
  return index < names.size() ? names.begin()[index] : "?";
}

template <typename Enum>
bool one_of(Enum value, std::initializer_list<Enum> allowed) {
  for (Enum a : allowed) {
    if (a == value) return true;
  }
  return false;
}

// "<who>element_a: expected a DataType, got the out-of-range value 200".
template <typename Enum>
Status check_enumerator(std::string_view who, std::string_view name, std::string_view type,
                        Enum value) {
  if (is_valid(value)) return Status::ok();
  const bool vowel = !type.empty() && std::string_view("AEIOU").find(type[0]) != type.npos;
  return Status::invalid(std::string(who) + std::string(name) + ": expected " +
                         (vowel ? "an " : "a ") + std::string(type) +
                         ", got the out-of-range value " +
                         std::to_string(static_cast<int64_t>(value)));
}

// "<who>threadblock_shape [128, 16777216, 8]: each extent must be in [1, 65536] (<why>)".
inline Status check_extents(std::string_view who, std::string_view name,
                            const std::array<int, 3>& values, int lo, int hi,
                            std::string_view why = {}) {
  for (int v : values) {
    if (v < lo || v > hi) {
      return Status::invalid(std::string(who) + std::string(name) + " " + triple_text(values) +
                             ": each extent must be in [" + std::to_string(lo) + ", " +
                             std::to_string(hi) + "]" +
                             (why.empty() ? std::string() : " (" + std::string(why) + ")"));
    }
  }
  return Status::ok();
}

using tilecraft::saturating_product;  // a * b * ..., or INT64_MAX past 64 bits

}  // namespace tilecraft::describe
