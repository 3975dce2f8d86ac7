#include "tilecraft/describe/conv_description.hpp"

#include "describe/checks.hpp"

namespace tilecraft {

using describe::enum_name;

std::string_view to_string(ConvKind kind) { return enum_name(kind, {"fprop", "dgrad", "wgrad"}); }
bool is_valid(ConvKind kind) { return to_string(kind) != "?"; }

std::string_view to_string(IteratorAlgorithm algorithm) {
  return enum_name(algorithm,
                   {"analytic", "optimized", "fixed_channels", "few_channels", "direct"});
}
bool is_valid(IteratorAlgorithm algorithm) { return to_string(algorithm) != "?"; }

std::string_view to_string(StrideSupport support) {
  return enum_name(support, {"strided", "unity"});
}
bool is_valid(StrideSupport support) { return to_string(support) != "?"; }

std::string_view to_string(GroupMode mode) {
  return enum_name(mode, {"none", "single_group", "multiple_group", "depthwise"});
}
bool is_valid(GroupMode mode) { return to_string(mode) != "?"; }

}  // namespace tilecraft
