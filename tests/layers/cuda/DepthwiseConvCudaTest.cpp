// DepthwiseConv2dCuda (Note [Depthwise convolution]) against Conv2dCpu over the zoo's depthwise
// shapes and the window's corners (stride, padding, dilation, channels not a multiple of 4), in
// F32 and BF16, input gradients overwritten, accumulated and skipped, bitwise repeatable; and the
// registry's choice between it and Conv2dCuda.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "layers/LayerTestSupport.hpp"
#include "layers/Registry.hpp"
#include "layers/cuda/Conv2dCuda.hpp"
#include "layers/cuda/CudaLayerTest.hpp"
#include "layers/cuda/DepthwiseConv2dCuda.hpp"
#include "runtime/Error.hpp"

namespace vdnn::test {
namespace {

using layers::Conv2dSpec;
using layers::LayerOptions;
using runtime::DType;
using runtime::Layout;
using runtime::Shape;
using DepthwiseConvCuda = CudaLayerTest;

// F32 against Eigen's F32: only the order of summation differs (over up to 49 taps forward, and
// over N * OH * OW for the weight gradient).
constexpr double kF32Tolerance = 1e-4;
// bf16 stores y and dx rounded once after F32 sums: within 2^-8 of a tensor's largest element.
constexpr double kBf16Tolerance = 2e-2;

Conv2dSpec depthwise(std::int64_t channels, std::int64_t kernel, std::int64_t stride,
                     std::int64_t padding, std::int64_t dilation = 1, bool bias = false) {
  return conv(channels, {kernel, kernel}, {stride, stride}, {padding, padding},
              {dilation, dilation}, channels, bias);
}

std::vector<ConvCase> depthwise_cases() {
  return {
      {"convnext_7x7_pad3_bias", Shape{2, 16, 14, 14}, depthwise(16, 7, 1, 3, 1, true)},
      {"mobilenet_3x3_pad1", Shape{2, 32, 9, 9}, depthwise(32, 3, 1, 1)},
      {"mobilenet_3x3_stride2", Shape{2, 24, 15, 15}, depthwise(24, 3, 2, 1)},
      {"efficientnet_5x5_stride2_bias", Shape{1, 40, 13, 12}, depthwise(40, 5, 2, 2, 1, true)},
      {"channels_not_multiple_of_4", Shape{2, 6, 8, 7}, depthwise(6, 3, 1, 1, 1, true)},
      {"dilation2_unpadded", Shape{1, 8, 12, 11}, depthwise(8, 3, 1, 0, 2)},
      {"stride2_pad0_odd", Shape{3, 12, 9, 10}, depthwise(12, 5, 2, 0)},
      {"more_channels_than_a_tile", Shape{1, 68, 5, 5}, depthwise(68, 3, 1, 1, 1, true)},
      {"accumulate_7x7", Shape{2, 8, 9, 9}, depthwise(8, 7, 1, 3), true},
      {"accumulate_3x3_stride2_bias", Shape{2, 12, 7, 8}, depthwise(12, 3, 2, 1, 1, true), true},
  };
}

LayerOptions nhwc(LayerOptions o) {
  o.layout = Layout::Nhwc;
  o.input_layout = Layout::Nhwc;
  return o;
}

TEST_F(DepthwiseConvCuda, MatchesCpuInF32) {
  for (const ConvCase& c : depthwise_cases()) {
    SCOPED_TRACE(c.name);
    layers::cuda::DepthwiseConv2dCuda layer(c.spec, {c.input}, nhwc(options()));
    StepSettings settings;
    settings.accumulate = c.accumulate;
    EXPECT_TRUE(cuda_matches_cpu(context(), layer, kF32Tolerance, settings));
  }
}

TEST_F(DepthwiseConvCuda, MatchesCpuInBf16) {
  for (const ConvCase& c : depthwise_cases()) {
    SCOPED_TRACE(c.name);
    layers::cuda::DepthwiseConv2dCuda layer(c.spec, {c.input}, nhwc(bf16_options()));
    StepSettings settings;
    settings.accumulate = c.accumulate;
    settings.norm_tolerance = kBf16NormTolerance;
    EXPECT_TRUE(cuda_matches_cpu(context(), layer, kBf16Tolerance, settings));
  }
}

TEST_F(DepthwiseConvCuda, SkipsAnInputGradientNobodyNeeds) {
  const ConvCase c = depthwise_cases().front();
  layers::cuda::DepthwiseConv2dCuda layer(c.spec, {c.input}, nhwc(options()));
  StepSettings settings;
  settings.input_grads = false;
  EXPECT_TRUE(cuda_matches_cpu(context(), layer, kF32Tolerance, settings));
}

// The registry runs channels-last F32 7x7 depthwise convolutions on our kernels, everything else
// (BF16, 3x3 and 5x5, NCHW, grouped but not depthwise, a channel multiplier, other kernels) on
// cuDNN; the layer itself refuses what it cannot run.
TEST_F(DepthwiseConvCuda, RegistryChoosesItWhereItIsFaster) {
  const auto built = [&](const Conv2dSpec& spec, const Shape& input, const LayerOptions& o) {
    return layers::make_layer(layers::Backend::Cuda, spec, {input}, o);
  };
  const Shape input{2, 8, 9, 9};
  const auto is_ours = [](const std::unique_ptr<layers::Layer>& layer) {
    return dynamic_cast<layers::cuda::DepthwiseConv2dCuda*>(layer.get()) != nullptr;
  };
  EXPECT_TRUE(is_ours(built(depthwise(8, 7, 1, 3, 1, true), input, nhwc(options()))));
  EXPECT_TRUE(is_ours(built(depthwise(8, 7, 2, 3), input, nhwc(options()))));
  EXPECT_FALSE(is_ours(built(depthwise(8, 7, 1, 3), input, nhwc(bf16_options()))));
  EXPECT_FALSE(is_ours(built(depthwise(8, 3, 1, 1), input, nhwc(options()))));
  EXPECT_FALSE(is_ours(built(depthwise(8, 5, 2, 2), input, nhwc(options()))));
  EXPECT_FALSE(is_ours(built(depthwise(8, 7, 1, 3), input, options())));  // NCHW
  EXPECT_FALSE(is_ours(built(conv(8, {7, 7}, {1, 1}, {3, 3}, {1, 1}, 2), input, nhwc(options()))));
  EXPECT_FALSE(is_ours(built(conv(16, {7, 7}, {1, 1}, {3, 3}, {1, 1}, 8), input, nhwc(options()))));
  EXPECT_FALSE(is_ours(built(depthwise(8, 1, 1, 0), input, nhwc(options()))));
  EXPECT_FALSE(is_ours(built(conv(8, {7, 5}, {1, 1}, {3, 2}, {1, 1}, 8), input, nhwc(options()))));
  EXPECT_THROW(layers::cuda::DepthwiseConv2dCuda(depthwise(8, 3, 1, 1), {input}, options()),
               runtime::InvalidArgument);
}

}  // namespace
}  // namespace vdnn::test
