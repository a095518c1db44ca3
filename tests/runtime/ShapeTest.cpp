// Shape: element counts, printing, bounds checks.
#include "runtime/Shape.hpp"

#include <gtest/gtest.h>

#include <vector>

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

// A KCRS weight [K=2, C=3, R=2, S=2] to KRSC: element (k, c, r, s) moves to ((k R + r) S + s) C +
// c.
TEST(Relayout, PermutesRankFourTensorsAndKeepsTheRest) {
  const Shape s = Shape::nchw(2, 3, 2, 2);
  std::vector<float> kcrs(static_cast<std::size_t>(s.numel()));
  for (std::size_t i = 0; i < kcrs.size(); ++i) kcrs[i] = static_cast<float>(i);
  const std::vector<float> krsc = relayout(kcrs, s, Layout::Nchw, Layout::Nhwc);
  // (k=1, c=2, r=0, s=1): KCRS index ((1 * 3 + 2) * 2 + 0) * 2 + 1 = 21; KRSC ((1 * 2 + 0) * 2 +
  // 1) * 3 + 2 = 17.
  EXPECT_EQ(krsc[17], 21.0f);
  EXPECT_EQ(krsc[1], kcrs[4]);  // (0, 1, 0, 0)
  EXPECT_EQ(relayout(krsc, s, Layout::Nhwc, Layout::Nchw), kcrs);
  EXPECT_EQ(relayout(kcrs, s, Layout::Nchw, Layout::Nchw), kcrs);
  const std::vector<float> rows{1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f};
  EXPECT_EQ(relayout(rows, Shape{2, 3}, Layout::Nchw, Layout::Nhwc), rows);
  EXPECT_THROW(relayout(rows, s, Layout::Nchw, Layout::Nhwc), InvalidArgument);
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
