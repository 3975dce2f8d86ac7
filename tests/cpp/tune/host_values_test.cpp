#include "tune/host_values.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>

namespace tilecraft::tune {
namespace {
namespace TILECRAFT_TEST_FILE {

double round_trip(double value, DataType type) {
  uint8_t storage[8] = {};
  encode_value(value, type, storage);
  return decode_value(storage, type);
}

TEST(HostValues, ExactValuesSurviveEveryType) {
  for (DataType type : {DataType::f64, DataType::f32, DataType::f16, DataType::bf16, DataType::e4m3,
                        DataType::e5m2, DataType::s8, DataType::s32}) {
    for (double v : {0.0, 1.0, -2.0, 0.5, 3.0, -12.0}) {
      if (is_integer(type) && v != std::floor(v)) continue;
      EXPECT_EQ(round_trip(v, type), v) << long_name(type) << " " << v;
    }
  }
}

TEST(HostValues, KnownEncodings) {
  uint8_t storage[8] = {};
  encode_value(1.0, DataType::f16, storage);
  uint16_t half;
  std::memcpy(&half, storage, 2);
  EXPECT_EQ(half, 0x3C00);
  encode_value(-2.0, DataType::bf16, storage);
  std::memcpy(&half, storage, 2);
  EXPECT_EQ(half, 0xC000);
  encode_value(448.0, DataType::e4m3, storage);
  EXPECT_EQ(storage[0], 0x7E);
  encode_value(1000.0, DataType::e4m3, storage);  // saturates
  EXPECT_EQ(storage[0], 0x7E);
  encode_value(57344.0, DataType::e5m2, storage);
  EXPECT_EQ(storage[0], 0x7B);
  encode_value(300.0, DataType::s8, storage);
  EXPECT_EQ(static_cast<int8_t>(storage[0]), 127);
}

TEST(HostValues, RoundsToNearestWithinHalfAStep) {
  // Half the smallest subnormal step of each type bounds the error near zero.
  const std::pair<DataType, double> types[] = {{DataType::f16, std::ldexp(1.0, -25)},
                                               {DataType::bf16, std::ldexp(1.0, -134)},
                                               {DataType::e4m3, std::ldexp(1.0, -10)},
                                               {DataType::e5m2, std::ldexp(1.0, -17)}};
  for (const auto& [type, near_zero] : types) {
    for (double v = -3.7; v < 3.7; v += 0.0137) {
      const double got = round_trip(v, type);
      EXPECT_LE(std::fabs(got - v), unit_roundoff(type) * std::fabs(v) + near_zero)
          << long_name(type) << " " << v << " -> " << got;
    }
  }
}

TEST(HostValues, SubnormalsAndSpecials) {
  EXPECT_EQ(round_trip(std::ldexp(1.0, -24), DataType::f16), std::ldexp(1.0, -24));
  EXPECT_EQ(round_trip(std::ldexp(1.0, -9), DataType::e4m3), std::ldexp(1.0, -9));
  uint8_t nan_code = 0xFF;
  EXPECT_TRUE(std::isnan(decode_value(&nan_code, DataType::e4m3)));
  EXPECT_TRUE(std::isnan(decode_value(&nan_code, DataType::e5m2)));
  uint16_t half_nan = 0xFFFF;
  EXPECT_TRUE(std::isnan(decode_value(&half_nan, DataType::f16)));
  EXPECT_TRUE(std::isnan(decode_value(&half_nan, DataType::bf16)));
}

}  // namespace TILECRAFT_TEST_FILE
}  // namespace
}  // namespace tilecraft::tune
