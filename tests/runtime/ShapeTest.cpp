// Shape: element counts, printing, bounds checks.
#include "runtime/Shape.hpp"

#include <gtest/gtest.h>

#include "runtime/Error.hpp"
#include "runtime/TensorView.hpp"

namespace vdnn::runtime {
namespace {

TEST(Shape, CountsAndPrints) {
  const Shape s = Shape::nchw(2, 3, 4, 5);
  EXPECT_EQ(s.rank(), 4);
  EXPECT_EQ(s.numel(), 120);
  EXPECT_EQ(s.sample_numel(), 60);
  EXPECT_EQ(s.bytes(DType::F32), 480u);
  EXPECT_EQ(s.bytes(DType::F64), 960u);
  EXPECT_EQ(s.to_string(), "[2, 3, 4, 5]");
  EXPECT_EQ(Shape{}.numel(), 1);
  EXPECT_EQ((Shape{7}), (Shape{7}));
  EXPECT_NE((Shape{7}), (Shape{7, 1}));
}

TEST(Shape, RejectsBadAxesAndExtents) {
  const Shape s{2, 3};
  EXPECT_THROW(s[2], InvalidArgument);
  EXPECT_THROW(s.h(), InvalidArgument);
  EXPECT_THROW((Shape{1, -1}), InvalidArgument);
  EXPECT_THROW((Shape{1, 2, 3, 4, 5}), InvalidArgument);
}

TEST(TensorView, TypedAccessChecksTheElementType) {
  float x = 1.0f;
  const TensorView v{&x, Shape{1}, DType::F32};
  EXPECT_EQ(v.as<float>(), &x);
  EXPECT_THROW(v.as<double>(), InvalidArgument);
  EXPECT_THROW(TensorView{}.as<float>(), InvalidArgument);
}

}  // namespace
}  // namespace vdnn::runtime
