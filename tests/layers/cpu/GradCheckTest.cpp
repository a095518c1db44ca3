// Finite-difference gradient checks in double for every layer type of the CPU backend, over the
// attribute variants that change the backward code path.
#include <gtest/gtest.h>

#include <cstdint>

#include "layers/LayerSpec.hpp"
#include "layers/cpu/GradCheck.hpp"

namespace vdnn::test {
namespace {

using layers::Pair;
using runtime::Shape;

layers::Conv2dSpec conv(std::int64_t out_channels, Pair kernel) {
  layers::Conv2dSpec spec;
  spec.out_channels = out_channels;
  spec.kernel = kernel;
  return spec;
}

layers::MaxPool2dSpec max_pool(Pair kernel, Pair stride, Pair padding) {
  layers::MaxPool2dSpec spec;
  spec.kernel = kernel;
  spec.stride = stride;
  spec.padding = padding;
  return spec;
}

layers::AvgPool2dSpec avg_pool(Pair kernel, Pair stride, Pair padding, bool count_include_pad) {
  layers::AvgPool2dSpec spec;
  spec.kernel = kernel;
  spec.stride = stride;
  spec.padding = padding;
  spec.count_include_pad = count_include_pad;
  return spec;
}

layers::LinearSpec linear(std::int64_t out_features, bool bias) {
  layers::LinearSpec spec;
  spec.out_features = out_features;
  spec.bias = bias;
  return spec;
}

GradCheckCase batch_norm_case(bool training) {
  GradCheckCase c{layers::BatchNorm2dSpec{}, {Shape::nchw(3, 2, 3, 4)}};
  c.training = training;
  return c;
}

GradCheckCase dropout_case() {
  layers::DropoutSpec spec;
  spec.p = 0.3;
  return {spec, {Shape::nchw(2, 3, 5, 5)}};
}

GradCheckCase loss_case(const Shape& logits, double output_weight) {
  GradCheckCase c{layers::SoftmaxCrossEntropySpec{}, {logits}};
  c.output_weight = output_weight;
  return c;
}

GradCheckCase add_case() {
  const Shape x = Shape::nchw(2, 3, 4, 4);
  return {layers::AddSpec{}, {x, x, x}};
}

GradCheckCase concat_case() {
  return {layers::ConcatSpec{},
          {Shape::nchw(2, 1, 3, 3), Shape::nchw(2, 3, 3, 3), Shape::nchw(2, 2, 3, 3)}};
}

TEST(GradCheck, Conv2dPlain) {
  EXPECT_TRUE(gradients_match({conv(3, {3, 3}), {Shape::nchw(2, 2, 5, 5)}}));
}

TEST(GradCheck, Conv2dStridePaddingBias) {
  layers::Conv2dSpec spec = conv(4, {3, 2});
  spec.stride = {2, 1};
  spec.padding = {1, 1};
  spec.bias = true;
  EXPECT_TRUE(gradients_match({spec, {Shape::nchw(2, 3, 6, 5)}}));
}

TEST(GradCheck, Conv2dDilation) {
  layers::Conv2dSpec spec = conv(2, {3, 3});
  spec.dilation = {2, 1};
  spec.padding = {2, 1};
  EXPECT_TRUE(gradients_match({spec, {Shape::nchw(1, 2, 7, 6)}}));
}

TEST(GradCheck, Conv2dGroupsBias) {
  layers::Conv2dSpec spec = conv(4, {3, 3});
  spec.groups = 2;
  spec.padding = {1, 1};
  spec.bias = true;
  EXPECT_TRUE(gradients_match({spec, {Shape::nchw(2, 4, 5, 5)}}));
}

TEST(GradCheck, Conv2dDepthwiseStrided) {
  layers::Conv2dSpec spec = conv(3, {3, 3});
  spec.groups = 3;
  spec.stride = {2, 2};
  spec.padding = {1, 1};
  EXPECT_TRUE(gradients_match({spec, {Shape::nchw(2, 3, 6, 6)}}));
}

TEST(GradCheck, BatchNorm2dTraining) { EXPECT_TRUE(gradients_match(batch_norm_case(true))); }

TEST(GradCheck, BatchNorm2dInference) { EXPECT_TRUE(gradients_match(batch_norm_case(false))); }

TEST(GradCheck, Relu) {
  EXPECT_TRUE(gradients_match({layers::ReluSpec{}, {Shape::nchw(2, 3, 4, 5)}}));
}

TEST(GradCheck, MaxPool2dNonOverlapping) {
  EXPECT_TRUE(gradients_match({max_pool({2, 2}, {0, 0}, {0, 0}), {Shape::nchw(2, 2, 6, 6)}}));
}

TEST(GradCheck, MaxPool2dOverlappingPadded) {
  EXPECT_TRUE(gradients_match({max_pool({3, 3}, {2, 2}, {1, 1}), {Shape::nchw(2, 2, 7, 7)}}));
}

TEST(GradCheck, MaxPool2dCeilMode) {
  layers::MaxPool2dSpec spec = max_pool({3, 3}, {2, 2}, {0, 0});
  spec.ceil_mode = true;  // 8x7 -> 4x3: a last, clipped row of windows
  EXPECT_TRUE(gradients_match({spec, {Shape::nchw(2, 2, 8, 7)}}));
}

TEST(GradCheck, AvgPool2dUnpadded) {
  EXPECT_TRUE(gradients_match({avg_pool({2, 2}, {0, 0}, {0, 0}, true), {Shape::nchw(2, 2, 6, 6)}}));
}

TEST(GradCheck, AvgPool2dPaddedCountIncludePad) {
  EXPECT_TRUE(gradients_match({avg_pool({3, 3}, {2, 2}, {1, 1}, true), {Shape::nchw(2, 2, 7, 6)}}));
}

TEST(GradCheck, AvgPool2dPaddedCountExcludePad) {
  EXPECT_TRUE(
      gradients_match({avg_pool({3, 3}, {2, 2}, {1, 1}, false), {Shape::nchw(2, 2, 7, 6)}}));
}

TEST(GradCheck, GlobalAvgPool) {
  EXPECT_TRUE(gradients_match({layers::GlobalAvgPoolSpec{}, {Shape::nchw(2, 3, 4, 5)}}));
}

TEST(GradCheck, LinearBiasFromFeatureMap) {
  EXPECT_TRUE(gradients_match({linear(4, true), {Shape::nchw(3, 2, 2, 3)}}));
}

TEST(GradCheck, LinearNoBias) { EXPECT_TRUE(gradients_match({linear(5, false), {Shape{4, 6}}})); }

TEST(GradCheck, AddThreeInputs) { EXPECT_TRUE(gradients_match(add_case())); }

TEST(GradCheck, ConcatThreeInputs) { EXPECT_TRUE(gradients_match(concat_case())); }

TEST(GradCheck, Dropout) { EXPECT_TRUE(gradients_match(dropout_case())); }

TEST(GradCheck, Flatten) {
  EXPECT_TRUE(gradients_match({layers::FlattenSpec{}, {Shape::nchw(2, 3, 4, 5)}}));
}

TEST(GradCheck, SoftmaxCrossEntropy) { EXPECT_TRUE(gradients_match(loss_case(Shape{5, 7}, 1.0))); }

TEST(GradCheck, SoftmaxCrossEntropyScaledFeatureMapLogits) {
  EXPECT_TRUE(gradients_match(loss_case(Shape::nchw(4, 3, 2, 2), 2.5)));
}

TEST(GradCheck, AccumulateAddsToInputGradients) {
  for (const GradCheckCase& c : {add_case(), concat_case(), dropout_case(), batch_norm_case(true),
                                 GradCheckCase{layers::ReluSpec{}, {Shape::nchw(2, 3, 4, 5)}},
                                 GradCheckCase{layers::FlattenSpec{}, {Shape::nchw(2, 3, 4, 5)}},
                                 loss_case(Shape{5, 7}, 1.0)}) {
    EXPECT_TRUE(accumulate_adds(c));
  }
}

TEST(GradCheck, AccumulateAddsToInputGradientsOfConvPoolLinear) {
  layers::Conv2dSpec conv_spec = conv(4, {3, 3});
  conv_spec.groups = 2;
  conv_spec.padding = {1, 1};
  for (const GradCheckCase& c :
       {GradCheckCase{conv_spec, {Shape::nchw(2, 4, 5, 5)}},
        GradCheckCase{max_pool({3, 3}, {2, 2}, {1, 1}), {Shape::nchw(2, 2, 7, 7)}},
        GradCheckCase{avg_pool({3, 3}, {2, 2}, {1, 1}, false), {Shape::nchw(2, 2, 7, 6)}},
        GradCheckCase{layers::GlobalAvgPoolSpec{}, {Shape::nchw(2, 3, 4, 5)}},
        GradCheckCase{linear(4, true), {Shape::nchw(3, 2, 2, 3)}}}) {
    EXPECT_TRUE(accumulate_adds(c));
  }
}

}  // namespace
}  // namespace vdnn::test
