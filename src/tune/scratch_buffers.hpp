// Device buffers of the tuner's own that mirror a caller's tensor (its span, dtype and strides),
// filled with random values kept on the host too, and what the trials' float64 checks share:
// element access, the poison pattern, the activations and the rounding bound of a kernel.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "tilecraft/core/status.hpp"
#include "tilecraft/core/tensor_view.hpp"
#include "tilecraft/discover/api.hpp"

namespace tilecraft::tune {

// Elements from the first to one past the last a view addresses (0 when an extent is 0).
int64_t span_elements(const TensorView& t);
uint64_t splitmix(uint64_t& state);

struct ScratchBuffer {
  void* device = nullptr;
  std::vector<uint8_t> host;  // the values written to the device (filled buffers only)
  DataType dtype = DataType::f32;
  double at(int64_t element) const;  // a filled buffer's value
};

class ScratchBuffers {
 public:
  ScratchBuffers() = default;
  ~ScratchBuffers();
  ScratchBuffers(const ScratchBuffers&) = delete;
  ScratchBuffers& operator=(const ScratchBuffers&) = delete;
  // A device buffer spanning `view`'s elements, which `view` then points at; filled with random
  // values of `seed` (integers small enough not to overflow the accumulator) when `fill`.
  Result<const ScratchBuffer*> allocate(TensorView* view, bool fill, uint64_t seed);

 private:
  std::vector<std::unique_ptr<ScratchBuffer>> buffers_;
};

// Fills the span of `view` with bytes no kernel writes (NaN bits for floats).
Status poison(const TensorView& view, void* stream);
// The span of `view`, copied to the host.
Result<std::vector<uint8_t>> download(const TensorView& view);
// Element `element` of a downloaded span: its value, and whether it still holds the poison.
double value_in(const std::vector<uint8_t>& host, DataType dtype, int64_t element);
bool is_poisoned(const std::vector<uint8_t>& host, DataType dtype, int64_t element);

double activate(Activation a, double x, const std::vector<double>& args);

// How far a kernel's result may be from the float64 value of the same sum.
class RoundingBound {
 public:
  RoundingBound(const api::KernelMetadata& kernel, DataType out);
  // products: the sum of the absolute values of the (scaled) products, `terms` of them;
  // addend: |beta * C|; expected: the float64 result after the activation.
  double operator()(double products, int64_t terms, double addend, double expected) const;

 private:
  double u_acc_ = 0, u_product_ = 0, u_out_ = 0;
  bool integer_out_ = false;
};

}  // namespace tilecraft::tune
