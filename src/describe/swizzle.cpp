#include "tilecraft/describe/swizzle.hpp"

namespace tilecraft {

std::string_view to_string(Swizzle swizzle) {
  switch (swizzle) {
    case Swizzle::IdentitySwizzle1:
      return "IdentitySwizzle1";
    case Swizzle::IdentitySwizzle2:
      return "IdentitySwizzle2";
    case Swizzle::IdentitySwizzle4:
      return "IdentitySwizzle4";
    case Swizzle::IdentitySwizzle8:
      return "IdentitySwizzle8";
    case Swizzle::HorizontalSwizzle:
      return "HorizontalSwizzle";
    case Swizzle::BatchedIdentitySwizzle:
      return "BatchedIdentitySwizzle";
  }
  return "?";
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
