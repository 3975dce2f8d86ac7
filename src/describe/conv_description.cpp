#include "tilecraft/describe/conv_description.hpp"

namespace tilecraft {

std::string_view to_string(ConvKind kind) {
  switch (kind) {
    case ConvKind::Fprop:
      return "fprop";
    case ConvKind::Dgrad:
      return "dgrad";
    case ConvKind::Wgrad:
      return "wgrad";
  }
  return "?";
}

bool is_valid(ConvKind kind) { return to_string(kind) != "?"; }

std::string_view to_string(IteratorAlgorithm algorithm) {
  switch (algorithm) {
    case IteratorAlgorithm::Analytic:
      return "analytic";
    case IteratorAlgorithm::Optimized:
      return "optimized";
    case IteratorAlgorithm::FixedChannels:
      return "fixed_channels";
    case IteratorAlgorithm::FewChannels:
      return "few_channels";
  }
  return "?";
}

bool is_valid(IteratorAlgorithm algorithm) { return to_string(algorithm) != "?"; }

std::string_view to_string(StrideSupport support) {
  switch (support) {
    case StrideSupport::Strided:
      return "strided";
    case StrideSupport::Unity:
      return "unity";
  }
  return "?";
}

bool is_valid(StrideSupport support) { return to_string(support) != "?"; }

std::string_view to_string(GroupMode mode) {
  switch (mode) {
    case GroupMode::None:
      return "none";
    case GroupMode::SingleGroup:
      return "single_group";
    case GroupMode::MultipleGroup:
      return "multiple_group";
    case GroupMode::Depthwise:
      return "depthwise";
  }
  return "?";
}

bool is_valid(GroupMode mode) { return to_string(mode) != "?"; }

}  // namespace tilecraft
