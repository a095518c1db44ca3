// layer_scale and stochastic_depth on the CPU backend: forward values, finite-difference
// gradients, accumulation, stochastic depth's per-sample mask (seeded by the step, the same on a
// recompute and in backward, identity in inference) and the shapes and parameters they take.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "layers/DropoutMask.hpp"
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

layers::StochasticDepthSpec drop_path(double p) {
  layers::StochasticDepthSpec spec;
  spec.p = p;
  return spec;
}

TEST(LayerScaleCpu, ScalesEachChannel) {
  const Shape s = Shape::nchw(2, 2, 1, 2);
  const auto layer = layers::make_layer(layers::Backend::Cpu, layers::LayerScaleSpec{}, {s},
                                        layers::LayerOptions{DType::F32, 0});
  std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<float> gamma = {10, -0.5};
  std::vector<float> y(x.size());
  layers::ForwardArgs args;
  args.inputs = {TensorView{x.data(), s, DType::F32}};
  args.params = {TensorView{gamma.data(), Shape{2, 1, 1}, DType::F32}};
  args.output = TensorView{y.data(), s, DType::F32};
  layer->forward(args);
  EXPECT_EQ(y, (std::vector<float>{10, 20, -1.5, -2, 50, 60, -3.5, -4}));
}

TEST(LayerScaleCpu, GradientsMatchFiniteDifferences) {
  for (const Shape& s : {Shape::nchw(2, 3, 4, 5), Shape::nchw(3, 7, 1, 1)}) {
    const GradCheckCase c{layers::LayerScaleSpec{}, {s}};
    EXPECT_TRUE(gradients_match(c)) << s.to_string();
    EXPECT_TRUE(accumulate_adds(c)) << s.to_string();
  }
}

TEST(LayerScaleCpu, HasTorchvisionsParameterPerChannel) {
  const Shape x = Shape::nchw(2, 3, 4, 5);
  EXPECT_EQ(layers::infer_output_shape(layers::LayerScaleSpec{}, {x}), x);
  EXPECT_THROW(layers::infer_output_shape(layers::LayerScaleSpec{}, {Shape{2, 3}}),
               runtime::ShapeError);
  const std::vector<layers::ParamSpec> params = layers::param_specs(layers::LayerScaleSpec{}, {x});
  ASSERT_EQ(params.size(), 1u);
  EXPECT_EQ(params[0].name, "layer_scale");  // CNBlock.layer_scale
  EXPECT_EQ(params[0].shape, (Shape{3, 1, 1}));
  EXPECT_EQ(params[0].kind, layers::ParamKind::Trainable);
  EXPECT_TRUE(layers::backward_needs(layers::LayerScaleSpec{}).inputs);
  EXPECT_EQ(layers::type_name(layers::LayerScaleSpec{}), "layer_scale");
}

class StochasticDepthCpu : public ::testing::Test {
 protected:
  static constexpr std::uint64_t kSeed = 11;
  static constexpr std::int64_t kSamples = 400;
  const Shape shape_ = Shape::nchw(kSamples, 2, 1, 3);

  // The layer's output for x = 1 everywhere.
  std::vector<float> forward(double p, bool training, std::uint64_t step, bool recompute = false) {
    layers::LayerOptions options;
    options.seed = kSeed;
    const auto layer = layers::make_layer(layers::Backend::Cpu, drop_path(p), {shape_}, options);
    std::vector<float> x(static_cast<std::size_t>(shape_.numel()), 1.0f);
    std::vector<float> y(x.size());
    layers::ForwardArgs args;
    args.inputs = {TensorView{x.data(), shape_, DType::F32}};
    args.output = TensorView{y.data(), shape_, DType::F32};
    args.training = training;
    args.recompute = recompute;
    args.step = step;
    layer->forward(args);
    return y;
  }
};

TEST_F(StochasticDepthCpu, KeepsOrDropsWholeSamplesAsDropoutsDrawOfTheSampleIndex) {
  const double p = 0.25;
  const std::vector<float> y = forward(p, true, 5);
  const std::uint64_t state = layers::dropout::state(kSeed, 5);
  std::int64_t dropped = 0;
  for (std::int64_t n = 0; n < kSamples; ++n) {
    const bool keep = layers::dropout::keep(state, n, p);
    dropped += keep ? 0 : 1;
    for (std::int64_t i = n * shape_.sample_numel(); i < (n + 1) * shape_.sample_numel(); ++i) {
      ASSERT_EQ(y[static_cast<std::size_t>(i)], keep ? static_cast<float>(1.0 / (1.0 - p)) : 0.0f)
          << "sample " << n;
    }
  }
  // 100 expected of 400; a standard deviation is under 9.
  EXPECT_GT(dropped, 65);
  EXPECT_LT(dropped, 135);
}

TEST_F(StochasticDepthCpu, TheMaskFollowsTheStepAndARecomputeRepeatsIt) {
  EXPECT_EQ(forward(0.5, true, 3), forward(0.5, true, 3, /*recompute=*/true));
  EXPECT_NE(forward(0.5, true, 3), forward(0.5, true, 4));
}

TEST_F(StochasticDepthCpu, InferenceAndPZeroAreTheIdentity) {
  const std::vector<float> ones(static_cast<std::size_t>(shape_.numel()), 1.0f);
  EXPECT_EQ(forward(0.5, false, 3), ones);
  EXPECT_EQ(forward(0.0, true, 3), ones);
}

TEST_F(StochasticDepthCpu, GradientsMatchFiniteDifferencesUnderTheStepsMask) {
  for (const double p : {0.2, 0.5}) {
    const GradCheckCase c{drop_path(p), {Shape::nchw(6, 3, 2, 2)}};
    EXPECT_TRUE(gradients_match(c)) << p;
    EXPECT_TRUE(accumulate_adds(c)) << p;
  }
}

TEST_F(StochasticDepthCpu, TakesPInZeroToOneAndReadsNothingInBackward) {
  EXPECT_EQ(layers::infer_output_shape(drop_path(0.1), {shape_}), shape_);
  EXPECT_EQ(layers::infer_output_shape(drop_path(0.1), {Shape{4, 5}}), (Shape{4, 5}));
  EXPECT_THROW(layers::infer_output_shape(drop_path(1.0), {shape_}), runtime::ShapeError);
  EXPECT_THROW(layers::infer_output_shape(drop_path(-0.1), {shape_}), runtime::ShapeError);
  const layers::BackwardNeeds needs = layers::backward_needs(drop_path(0.1));
  EXPECT_FALSE(needs.inputs || needs.output || needs.first_input);
  EXPECT_TRUE(layers::param_specs(drop_path(0.1), {shape_}).empty());
  EXPECT_EQ(layers::type_name(drop_path(0.1)), "stochastic_depth");
}

}  // namespace
}  // namespace vdnn::test
