#include "tune/host_values.hpp"

#include <cmath>
#include <cstring>
#include <limits>

namespace tilecraft::tune {
namespace {

// A binary float format: sign, `exponent_bits`, `mantissa_bits`; finite_only formats (e4m3)
// spend the top exponent on numbers and keep one NaN code.
struct Format {
  int exponent_bits;
  int mantissa_bits;
  bool finite_only;
  double max_value;
};

constexpr Format kHalf{5, 10, false, 65504.0};
constexpr Format kBf16{8, 7, false, 3.3895313892515355e38};
constexpr Format kE4m3{4, 3, true, 448.0};
constexpr Format kE5m2{5, 2, false, 57344.0};

uint32_t encode_float(double value, const Format& f) {
  const int total = 1 + f.exponent_bits + f.mantissa_bits;
  const uint32_t sign = std::signbit(value) ? 1u << (total - 1) : 0u;
  const int bias = (1 << (f.exponent_bits - 1)) - 1;
  const uint32_t mantissa_mask = (1u << f.mantissa_bits) - 1;
  if (std::isnan(value)) return sign | ((1u << (total - 1)) - 1);
  double magnitude = std::fabs(value);
  if (magnitude > f.max_value) {
    if (f.finite_only)
      magnitude = f.max_value;  // saturate, as the conversion instructions do
    else
      return sign | (((1u << f.exponent_bits) - 1) << f.mantissa_bits);  // infinity
  }
  if (magnitude == 0) return sign;
  int exponent = std::ilogb(magnitude);
  const int min_exponent = 1 - bias;
  if (exponent < min_exponent) exponent = min_exponent;  // subnormal
  const double scaled = std::ldexp(magnitude, f.mantissa_bits - exponent);
  double rounded = std::nearbyint(scaled);  // ties to even in the default rounding mode
  if (rounded >= std::ldexp(1.0, f.mantissa_bits + 1)) {
    rounded /= 2;
    ++exponent;
  }
  uint32_t biased = 0;
  uint32_t mantissa = static_cast<uint32_t>(rounded);
  if (mantissa >= (1u << f.mantissa_bits)) {
    biased = static_cast<uint32_t>(exponent + bias);
    mantissa &= mantissa_mask;
  }
  return sign | (biased << f.mantissa_bits) | mantissa;
}

double decode_float(uint32_t bits, const Format& f) {
  const int total = 1 + f.exponent_bits + f.mantissa_bits;
  const bool negative = (bits >> (total - 1)) & 1u;
  const int bias = (1 << (f.exponent_bits - 1)) - 1;
  const uint32_t exponent = (bits >> f.mantissa_bits) & ((1u << f.exponent_bits) - 1);
  const uint32_t mantissa = bits & ((1u << f.mantissa_bits) - 1);
  double value;
  const uint32_t top = (1u << f.exponent_bits) - 1;
  if (exponent == top && !f.finite_only) {
    value = mantissa ? std::numeric_limits<double>::quiet_NaN()
                     : std::numeric_limits<double>::infinity();
  } else if (exponent == top && f.finite_only && mantissa == ((1u << f.mantissa_bits) - 1)) {
    value = std::numeric_limits<double>::quiet_NaN();
  } else if (exponent == 0) {
    value = std::ldexp(static_cast<double>(mantissa), 1 - bias - f.mantissa_bits);
  } else {
    value = std::ldexp(static_cast<double>(mantissa | (1u << f.mantissa_bits)),
                       static_cast<int>(exponent) - bias - f.mantissa_bits);
  }
  return negative ? -value : value;
}

template <typename T>
T saturated(double value) {
  const double low = static_cast<double>(std::numeric_limits<T>::min());
  const double high = static_cast<double>(std::numeric_limits<T>::max());
  return static_cast<T>(std::fmin(std::fmax(std::nearbyint(value), low), high));
}

template <typename T>
void store(void* dst, T value) {
  std::memcpy(dst, &value, sizeof(T));
}

template <typename T>
T load(const void* src) {
  T value;
  std::memcpy(&value, src, sizeof(T));
  return value;
}

}  // namespace

void encode_value(double value, DataType type, void* dst) {
  switch (type) {
    case DataType::f64:
      return store(dst, value);
    case DataType::f32:
    case DataType::tf32:
      return store(dst, static_cast<float>(value));
    case DataType::f16:
      return store(dst, static_cast<uint16_t>(encode_float(value, kHalf)));
    case DataType::bf16:
      return store(dst, static_cast<uint16_t>(encode_float(value, kBf16)));
    case DataType::e4m3:
      return store(dst, static_cast<uint8_t>(encode_float(value, kE4m3)));
    case DataType::e5m2:
      return store(dst, static_cast<uint8_t>(encode_float(value, kE5m2)));
    case DataType::s8:
      return store(dst, saturated<int8_t>(value));
    case DataType::u8:
      return store(dst, saturated<uint8_t>(value));
    case DataType::s32:
      return store(dst, saturated<int32_t>(value));
  }
}

double decode_value(const void* src, DataType type) {
  switch (type) {
    case DataType::f64:
      return load<double>(src);
    case DataType::f32:
    case DataType::tf32:
      return load<float>(src);
    case DataType::f16:
      return decode_float(load<uint16_t>(src), kHalf);
    case DataType::bf16:
      return decode_float(load<uint16_t>(src), kBf16);
    case DataType::e4m3:
      return decode_float(load<uint8_t>(src), kE4m3);
    case DataType::e5m2:
      return decode_float(load<uint8_t>(src), kE5m2);
    case DataType::s8:
      return load<int8_t>(src);
    case DataType::u8:
      return load<uint8_t>(src);
    case DataType::s32:
      return load<int32_t>(src);
  }
  return 0;
}

double unit_roundoff(DataType type) {
  switch (type) {
    case DataType::f64:
      return std::ldexp(1.0, -53);
    case DataType::f32:
      return std::ldexp(1.0, -24);
    case DataType::tf32:
    case DataType::f16:
      return std::ldexp(1.0, -11);
    case DataType::bf16:
      return std::ldexp(1.0, -8);
    case DataType::e4m3:
      return std::ldexp(1.0, -4);
    case DataType::e5m2:
      return std::ldexp(1.0, -3);
    default:
      return 0;
  }
}

}  // namespace tilecraft::tune
