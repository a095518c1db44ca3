// MaxPool2dCuda, AvgPool2dCuda and GlobalAvgPoolCuda against their CPU layers over a table of
// shapes (forward and input gradient, overwrite, accumulate and skipped), plus max-pool ties.
#include <gtest/gtest.h>

#include <memory>
#include <variant>
#include <vector>

#include "layers/LayerTestSupport.hpp"
#include "layers/cuda/AvgPool2dCuda.hpp"
#include "layers/cuda/CudaLayerTest.hpp"
#include "layers/cuda/GlobalAvgPoolCuda.hpp"
#include "layers/cuda/MaxPool2dCuda.hpp"
#include "runtime/Error.hpp"

namespace vdnn::test {
namespace {

using layers::AvgPool2dSpec;
using layers::GlobalAvgPoolSpec;
using layers::Layer;
using layers::LayerOptions;
using layers::LayerSpec;
using layers::MaxPool2dSpec;
using runtime::Shape;
using PoolingCuda = CudaLayerTest;

// Max pooling only selects, and both backends add a gradient's shares in the same order: exact.
constexpr double kMaxTolerance = 0.0;
// cuDNN may scale the window sum by the reciprocal of the divisor instead of dividing by it.
constexpr double kAverageTolerance = 1e-6;

std::unique_ptr<Layer> make_cuda_pool(const LayerSpec& spec, const Shape& input,
                                      const LayerOptions& options) {
  if (const auto* m = std::get_if<MaxPool2dSpec>(&spec)) {
    return std::make_unique<layers::cuda::MaxPool2dCuda>(*m, std::vector<Shape>{input}, options);
  }
  if (const auto* a = std::get_if<AvgPool2dSpec>(&spec)) {
    return std::make_unique<layers::cuda::AvgPool2dCuda>(*a, std::vector<Shape>{input}, options);
  }
  return std::make_unique<layers::cuda::GlobalAvgPoolCuda>(std::get<GlobalAvgPoolSpec>(spec),
                                                           std::vector<Shape>{input}, options);
}

double tolerance_for(const LayerSpec& spec) {
  return std::holds_alternative<MaxPool2dSpec>(spec) ? kMaxTolerance : kAverageTolerance;
}

std::vector<PoolCase> cases() {
  return {
      {"max_2x2_stride_default", Shape{2, 3, 6, 8}, max_pool({2, 2}, {0, 0}, {0, 0})},
      {"max_3x3_stride2_pad1", Shape{2, 2, 9, 7}, max_pool({3, 3}, {2, 2}, {1, 1})},
      {"max_overlapping_3x3_stride1", Shape{1, 2, 5, 6}, max_pool({3, 3}, {1, 1}, {1, 1})},
      {"max_2x3_nonsquare", Shape{2, 1, 7, 9}, max_pool({2, 3}, {1, 2}, {1, 1})},
      {"max_resnet_stem", Shape{4, 16, 56, 56}, max_pool({3, 3}, {2, 2}, {1, 1})},
      {"max_accumulate", Shape{2, 2, 8, 8}, max_pool({3, 3}, {2, 2}, {1, 1}), true},
      {"max_ceil_3x3_stride2", Shape{2, 2, 8, 7}, max_pool({3, 3}, {2, 2}, {0, 0}, true)},
      {"max_ceil_2x3_pad1_nonsquare", Shape{1, 3, 7, 10}, max_pool({2, 3}, {2, 2}, {1, 1}, true)},
      {"max_ceil_googlenet_pool1", Shape{2, 8, 112, 112}, max_pool({3, 3}, {2, 2}, {0, 0}, true)},
      {"max_ceil_accumulate", Shape{2, 2, 10, 10}, max_pool({3, 3}, {2, 2}, {0, 0}, true), true},
      {"avg_2x2_stride_default", Shape{2, 3, 6, 8}, avg_pool({2, 2}, {0, 0}, {0, 0}, true)},
      {"avg_3x3_pad1_include_pad", Shape{2, 2, 7, 7}, avg_pool({3, 3}, {2, 2}, {1, 1}, true)},
      {"avg_3x3_pad1_exclude_pad", Shape{2, 2, 7, 7}, avg_pool({3, 3}, {2, 2}, {1, 1}, false)},
      {"avg_2x4_nonsquare_exclude_pad", Shape{1, 3, 6, 9}, avg_pool({2, 4}, {1, 3}, {1, 2}, false)},
      {"avg_densenet_transition", Shape{4, 32, 28, 28}, avg_pool({2, 2}, {2, 2}, {0, 0}, true)},
      {"avg_accumulate", Shape{2, 2, 6, 6}, avg_pool({3, 3}, {1, 1}, {1, 1}, true), true},
      {"global", Shape{3, 4, 5, 6}, GlobalAvgPoolSpec{}},
      {"global_resnet_head", Shape{8, 512, 7, 7}, GlobalAvgPoolSpec{}},
      {"global_large_plane", Shape{2, 8, 56, 56}, GlobalAvgPoolSpec{}},
      {"global_1x1_plane", Shape{2, 3, 1, 1}, GlobalAvgPoolSpec{}},
      {"global_accumulate", Shape{2, 3, 7, 7}, GlobalAvgPoolSpec{}, true},
  };
}

TEST_F(PoolingCuda, MatchesCpuOverShapeTable) {
  for (const PoolCase& c : cases()) {
    SCOPED_TRACE(c.name);
    const auto layer = make_cuda_pool(c.spec, c.input, options());
    StepSettings settings;
    settings.accumulate = c.accumulate;
    EXPECT_TRUE(cuda_matches_cpu(context(), *layer, tolerance_for(c.spec), settings));
  }
}

TEST_F(PoolingCuda, EmptyInputGradientTargetIsSkipped) {
  for (const PoolCase& c : cases()) {
    SCOPED_TRACE(c.name);
    const auto layer = make_cuda_pool(c.spec, c.input, options());
    StepSettings settings;
    settings.input_grads = false;
    EXPECT_TRUE(cuda_matches_cpu(context(), *layer, tolerance_for(c.spec), settings));
  }
}

// Inputs of three values, as after a ReLU: most windows hold ties, which both backends route to
// the window's first maximum in row-major order.
TEST_F(PoolingCuda, MaxPoolTiesGoToTheFirstMaximumAsOnTheCpu) {
  for (const PoolCase& c : cases()) {
    if (!std::holds_alternative<MaxPool2dSpec>(c.spec)) continue;
    SCOPED_TRACE(c.name);
    const auto layer = make_cuda_pool(c.spec, c.input, options());
    StepSettings settings;
    settings.accumulate = c.accumulate;
    settings.input_levels = 3;
    EXPECT_TRUE(cuda_matches_cpu(context(), *layer, kMaxTolerance, settings));
  }
}

// Need no device: the options are refused before any CUDA call.
TEST(PoolingCudaOptions, RejectF64AndMissingContext) {
  LayerOptions f64;
  f64.dtype = runtime::DType::F64;
  for (const PoolCase& c : cases()) {
    SCOPED_TRACE(c.name);
    EXPECT_THROW(make_cuda_pool(c.spec, c.input, f64), runtime::InvalidArgument);
    EXPECT_THROW(make_cuda_pool(c.spec, c.input, LayerOptions{}), runtime::InvalidArgument);
  }
}

}  // namespace
}  // namespace vdnn::test
