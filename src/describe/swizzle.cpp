#include "tilecraft/describe/swizzle.hpp"

#include "describe/checks.hpp"

namespace tilecraft {

std::string_view to_string(Swizzle swizzle) {
  return describe::enum_name(
      swizzle, {"IdentitySwizzle1", "IdentitySwizzle2", "IdentitySwizzle4", "IdentitySwizzle8",
                "HorizontalSwizzle", "BatchedIdentitySwizzle"});
}

bool is_valid(Swizzle swizzle) { return to_string(swizzle) != "?"; }

int identity_swizzle_size(Swizzle swizzle) {
  switch (swizzle) {
    case Swizzle::IdentitySwizzle2:
      return 2;
    case Swizzle::IdentitySwizzle4:
      return 4;
    case Swizzle::IdentitySwizzle8:
      return 8;
    default:
      return 1;
  }
}

}  // namespace tilecraft
