// bfloat16 and float16 on the host, by their bits: enough to fill inputs and read outputs.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

inline uint16_t to_bf16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  if (std::isnan(value)) return 0x7fc0;
  bits += 0x7fff + ((bits >> 16) & 1);  // round to nearest even
  return static_cast<uint16_t>(bits >> 16);
}

inline double from_bf16(uint16_t half) {
  const uint32_t bits = static_cast<uint32_t>(half) << 16;
  float value;
  std::memcpy(&value, &bits, 4);
  return value;
}

inline double from_f16(uint16_t half) {
  const int sign = half >> 15, exponent = (half >> 10) & 0x1f, mantissa = half & 0x3ff;
  double value;
  if (exponent == 0) {
    value = std::ldexp(mantissa, -24);
  } else if (exponent == 31) {
    value = mantissa ? NAN : INFINITY;
  } else {
    value = std::ldexp(mantissa + 1024, exponent - 25);
  }
  return sign ? -value : value;
}

// Values of magnitude below 2 (what the program draws) rounded to nearest even.
inline uint16_t to_f16(float value) {
  const uint16_t sign = std::signbit(value) ? 0x8000 : 0;
  const double magnitude = std::fabs(static_cast<double>(value));
  if (magnitude < std::ldexp(1.0, -24)) return sign;
  int exponent;
  std::frexp(magnitude, &exponent);  // magnitude = f * 2^exponent, f in [0.5, 1)
  if (exponent < -13) {              // subnormal: steps of 2^-24
    return sign | static_cast<uint16_t>(std::nearbyint(std::ldexp(magnitude, 24)));
  }
  const double steps = std::nearbyint(std::ldexp(magnitude, 11 - exponent));  // 1024 .. 2048
  const int biased = exponent + 14 + (steps >= 2048 ? 1 : 0);
  const int mantissa = static_cast<int>(steps >= 2048 ? steps / 2 : steps) - 1024;
  return sign | static_cast<uint16_t>(biased << 10) | static_cast<uint16_t>(mantissa);
}
