#include "tilecraft/core/tensor_view.hpp"

#include <gtest/gtest.h>

namespace tilecraft {
namespace {
namespace TILECRAFT_TEST_FILE {

TEST(TensorView, DescribeNamesDtypeShapeStridesAndDevice) {
  float data[6];
  TensorView view = TensorView::host_contiguous(data, DataType::f32, {2, 3});
  EXPECT_EQ(view.describe(), "float32[2, 3] strides (3, 1) on cpu");
  EXPECT_TRUE(view.is_contiguous());
  EXPECT_EQ(view.numel(), 6);
  TensorView flat = TensorView::cuda_contiguous(data, DataType::f16, {6}, 1);
  EXPECT_EQ(flat.describe(), "float16[6] strides (1,) on cuda:1");
  view.strides = {1, 2};
  EXPECT_FALSE(view.is_contiguous());
}

}  // namespace TILECRAFT_TEST_FILE
}  // namespace
}  // namespace tilecraft
