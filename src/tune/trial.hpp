// A trial problem: the caller's problem (same dtypes, shapes, strides, epilogue) on fresh random
// device operands of the tuner's own, and the float64 check of a candidate's output on it, for
// any family. The caller's tensors are never read or written while tuning.
#pragma once

#include <cstdint>
#include <memory>

#include "tilecraft/core/status.hpp"
#include "tilecraft/discover/api.hpp"
#include "tilecraft/discover/conv_api.hpp"
#include "tilecraft/discover/grouped_api.hpp"

namespace tilecraft::tune {

class Trial {
 public:
  virtual ~Trial() = default;
  // The arguments a candidate runs on (the trial's own tensors).
  virtual const api::KernelArguments& arguments() const = 0;
  // Fills every output with a pattern no kernel writes (NaN bits for floats).
  virtual Status poison_output(void* stream) const = 0;
  // After the launch has finished: every output element was written, and sampled elements match
  // a float64 reference within the rounding of `kernel`'s types. The error names the first
  // mismatch (position, got, expected, tolerance).
  virtual Status check_output(const api::KernelMetadata& kernel) const = 0;
};

// Each allocates and fills its operands on the current device (the arguments' device).
Result<std::unique_ptr<Trial>> make_trial(const api::GemmArguments& like, uint64_t seed);
Result<std::unique_ptr<Trial>> make_trial(const api::GroupedGemmArguments& like, uint64_t seed);
Result<std::unique_ptr<Trial>> make_trial(const api::Conv2dArguments& like, uint64_t seed);

}  // namespace tilecraft::tune
