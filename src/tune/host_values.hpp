// Element values on the host: encoding doubles into each DataType's storage and reading them back
// (IEEE half, bfloat16 and the fp8 formats with round-to-nearest-even), for the tuner's random
// operands and its float64 reference.
#pragma once

#include <cstdint>

#include "tilecraft/core/types.hpp"

namespace tilecraft::tune {

// Writes value, rounded to `type` (integers rounded and saturated), at dst.
void encode_value(double value, DataType type, void* dst);
// The value stored at src.
double decode_value(const void* src, DataType type);
// The relative rounding step of `type` (2^-mantissa bits); 0 for integers.
double unit_roundoff(DataType type);

}  // namespace tilecraft::tune
