// mul on the CPU backend: the broadcast product of squeeze-excitation and the plain one, forward
// values, finite-difference gradients of both operands, accumulation and the shapes it accepts.
#include <gtest/gtest.h>

#include <vector>

#include "layers/Layer.hpp"
#include "layers/LayerSpec.hpp"
#include "layers/Registry.hpp"
#include "layers/cpu/GradCheck.hpp"
#include "runtime/Error.hpp"

namespace vdnn::test {
namespace {

using runtime::DType;
using runtime::Shape;
using runtime::TensorView;

TEST(MulCpu, BroadcastsTheScaleOverEachPlane) {
  const Shape x_shape = Shape::nchw(2, 2, 1, 2);
  const Shape s_shape = Shape::nchw(2, 2, 1, 1);
  const auto layer = layers::make_layer(layers::Backend::Cpu, layers::MulSpec{}, {x_shape, s_shape},
                                        layers::LayerOptions{DType::F32, 0});
  std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<float> s = {10, -1, 0.5, 2};
  std::vector<float> y(x.size());
  layers::ForwardArgs args;
  args.inputs = {TensorView{x.data(), x_shape, DType::F32},
                 TensorView{s.data(), s_shape, DType::F32}};
  args.output = TensorView{y.data(), x_shape, DType::F32};
  layer->forward(args);
  EXPECT_EQ(y, (std::vector<float>{10, 20, -3, -4, 2.5, 3, 14, 16}));
}

TEST(MulCpu, ScaleGradientSumsEachPlane) {
  const Shape x_shape = Shape::nchw(1, 2, 1, 3);
  const Shape s_shape = Shape::nchw(1, 2, 1, 1);
  const auto layer = layers::make_layer(layers::Backend::Cpu, layers::MulSpec{}, {x_shape, s_shape},
                                        layers::LayerOptions{DType::F64, 0});
  std::vector<double> x = {1, 2, 3, -1, 0, 4};
  std::vector<double> s = {2, 3};
  std::vector<double> dy = {1, 1, 2, 0.5, 7, 1};
  std::vector<double> dx(x.size(), 0.0);
  std::vector<double> ds = {100, 200};
  layers::BackwardArgs args;
  args.inputs = {TensorView{x.data(), x_shape, DType::F64},
                 TensorView{s.data(), s_shape, DType::F64}};
  args.grad_output = TensorView{dy.data(), x_shape, DType::F64};
  args.grad_inputs = {{TensorView{dx.data(), x_shape, DType::F64}, false},
                      {TensorView{ds.data(), s_shape, DType::F64}, true}};
  layer->backward(args);
  EXPECT_EQ(dx, (std::vector<double>{2, 2, 4, 1.5, 21, 3}));
  EXPECT_EQ(ds, (std::vector<double>{100 + 1 + 2 + 6, 200 - 0.5 + 0 + 4}));
}

TEST(MulCpu, GradientsMatchFiniteDifferencesBroadcastAndPlain) {
  const Shape x = Shape::nchw(2, 3, 4, 5);
  for (const Shape& s : {Shape::nchw(2, 3, 1, 1), x}) {
    const GradCheckCase c{layers::MulSpec{}, {x, s}};
    EXPECT_TRUE(gradients_match(c)) << s.to_string();
    EXPECT_TRUE(accumulate_adds(c)) << s.to_string();
  }
}

TEST(MulCpu, TakesTwoInputsAndAScaleOfTheInputsShapeOrPerChannel) {
  const Shape x = Shape::nchw(2, 3, 4, 5);
  EXPECT_EQ(layers::infer_output_shape(layers::MulSpec{}, {x, Shape::nchw(2, 3, 1, 1)}), x);
  EXPECT_THROW(layers::infer_output_shape(layers::MulSpec{}, {x, Shape::nchw(1, 3, 1, 1)}),
               runtime::ShapeError);
  EXPECT_THROW(layers::infer_output_shape(layers::MulSpec{}, {x, Shape::nchw(2, 3, 4, 1)}),
               runtime::ShapeError);
  EXPECT_THROW(layers::infer_output_shape(layers::MulSpec{}, {x}), runtime::ShapeError);
  EXPECT_TRUE(layers::backward_needs(layers::MulSpec{}).input(1));
  EXPECT_EQ(layers::type_name(layers::MulSpec{}), "mul");
}

}  // namespace
}  // namespace vdnn::test
