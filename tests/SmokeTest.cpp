#include <gtest/gtest.h>

#include "runtime/Shape.hpp"

TEST(Smoke, ShapeNumel) { EXPECT_EQ(vdnn::runtime::Shape::nchw(2, 3, 4, 5).numel(), 120); }
