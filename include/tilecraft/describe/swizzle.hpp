// Threadblock swizzles: the order in which threadblocks visit output tiles (seed 002).
#pragma once

#include <cstdint>
#include <string_view>

namespace tilecraft {

enum class Swizzle : uint8_t {
  IdentitySwizzle1,
  IdentitySwizzle2,
  IdentitySwizzle4,
  IdentitySwizzle8,
  HorizontalSwizzle,
  BatchedIdentitySwizzle,
};
inline constexpr Swizzle kAllSwizzles[] = {
    Swizzle::IdentitySwizzle1, Swizzle::IdentitySwizzle2,  Swizzle::IdentitySwizzle4,
    Swizzle::IdentitySwizzle8, Swizzle::HorizontalSwizzle, Swizzle::BatchedIdentitySwizzle};

std::string_view to_string(Swizzle swizzle);
bool is_valid(Swizzle swizzle);  // one of the enumerators
// N of IdentitySwizzleN (the width of the band of tiles visited together); 1 for the others.
int identity_swizzle_size(Swizzle swizzle);

}  // namespace tilecraft
