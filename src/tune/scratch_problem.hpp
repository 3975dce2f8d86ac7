// A problem shaped like the caller's (same dtypes, shapes, strides, epilogue) on fresh random
// device operands of the tuner's own, and the float64 check of a candidate's output on it. The
// caller's tensors are never read or written while tuning.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tilecraft/core/status.hpp"
#include "tilecraft/discover/api.hpp"

namespace tilecraft::tune {

class ScratchProblem {
 public:
  // Allocates and fills the operands on the current device (the arguments' device).
  static Result<std::unique_ptr<ScratchProblem>> make(const api::GemmArguments& like,
                                                      uint64_t seed);
  ~ScratchProblem();
  ScratchProblem(const ScratchProblem&) = delete;
  ScratchProblem& operator=(const ScratchProblem&) = delete;

  const api::GemmArguments& args() const { return *args_; }

  // Fills the output with a pattern no kernel writes (NaN bits for floats).
  Status poison_output(void* stream) const;
  // After the launch has finished: every output element was written, and sampled elements
  // match a float64 reference within the rounding of the kernel's types. `kernel` names the
  // element types and accumulation the kernel computes with. The error names the first
  // mismatch (position, got, expected, tolerance).
  Status check_output(const api::KernelMetadata& kernel) const;

 private:
  ScratchProblem() = default;
  struct Buffer {
    void* device = nullptr;
    std::vector<uint8_t> host;  // the values written to the device (inputs only)
    size_t bytes = 0;
  };
  Result<Buffer*> allocate(TensorView* view, bool fill, uint64_t seed);
  double reference(int64_t l, int64_t i, int64_t j, double* magnitude) const;

  std::vector<std::unique_ptr<Buffer>> buffers_;
  TensorView a_, b_, c_, out_, bias_;
  const Buffer* a_host_ = nullptr;
  const Buffer* b_host_ = nullptr;
  const Buffer* c_host_ = nullptr;
  const Buffer* bias_host_ = nullptr;
  std::optional<api::GemmArguments> args_;
};

}  // namespace tilecraft::tune
