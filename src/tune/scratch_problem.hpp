// The GEMM trial: a problem shaped like the caller's on operands of the tuner's own, and the
// float64 check of a candidate's output on it (tune/trial.hpp).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "tilecraft/core/status.hpp"
#include "tilecraft/discover/api.hpp"
#include "tune/scratch_buffers.hpp"
#include "tune/trial.hpp"

namespace tilecraft::tune {

class ScratchProblem : public Trial {
 public:
  static constexpr int kRandomSamples = 251;
  // Allocates and fills the operands on the current device (the arguments' device); the check
  // compares the eight corners and `samples` random elements.
  static Result<std::unique_ptr<ScratchProblem>> make(const api::GemmArguments& like, uint64_t seed,
                                                      int samples = kRandomSamples);

  const api::GemmArguments& args() const { return *args_; }
  const api::KernelArguments& arguments() const override { return *args_; }
  Status poison_output(void* stream) const override;
  Status check_output(const api::KernelMetadata& kernel) const override;

 private:
  ScratchProblem() = default;
  double reference(int64_t l, int64_t i, int64_t j, double* magnitude) const;

  ScratchBuffers buffers_;
  int samples_ = kRandomSamples;
  TensorView a_, b_, c_, out_, bias_;
  const ScratchBuffer* a_host_ = nullptr;
  const ScratchBuffer* b_host_ = nullptr;
  const ScratchBuffer* c_host_ = nullptr;
  const ScratchBuffer* bias_host_ = nullptr;
  std::optional<api::GemmArguments> args_;
};

}  // namespace tilecraft::tune
