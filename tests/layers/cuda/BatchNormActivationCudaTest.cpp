// BatchNormActivationCuda (the fused batchnorm2d -> silu / relu6 / hardswish) in both layouts, F32
// and BF16: against the CPU layer over a table of shapes (training, inference, accumulate, skipped
// input gradients), the recompute rule, and the activations it refuses. Its BF16 results against
// its F32 ones (rounded once, statistics and parameter gradients bit for bit) are in
// BatchNormBf16CudaTest.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "layers/Registry.hpp"
#include "layers/cuda/BatchNormActivationCuda.hpp"
#include "layers/cuda/Bf16LayerCases.hpp"
#include "layers/cuda/CudaLayerTest.hpp"
#include "layers/cuda/DeviceData.hpp"
#include "runtime/Error.hpp"
#include "runtime/cuda/CudaCheck.hpp"

namespace vdnn::test {
namespace {

using layers::Activation;
using layers::BatchNormActivationSpec;
using layers::LayerOptions;
using runtime::DType;
using runtime::Layout;
using runtime::Shape;
using BatchNormActivationCuda = CudaLayerTest;

constexpr Layout kLayouts[] = {Layout::Nchw, Layout::Nhwc};
constexpr Activation kActivations[] = {Activation::Silu, Activation::Relu6, Activation::Hardswish};
// F32: as the batch norm's own test (BatchNormCudaTest): the CPU accumulates the statistics in
// double, in another order, and normalizes as x * a + b; the device's expf may differ from the
// host's by an ulp or two, well inside it.
constexpr double kTolerance = 1e-5;
// Inputs take this many values, so that no bn(x) lies within rounding of a kink of relu6 (0, 6) or
// hardswish (-3, 3), where the derivative jumps and one ulp would move a whole channel's gradient.
constexpr int kInputLevels = 9;

const std::vector<Shape>& shapes() {
  static const std::vector<Shape> table = {
      Shape::nchw(2, 3, 4, 5),      // C % 4 != 0
      Shape::nchw(1, 3, 3, 3),      // odd element count: scalar loads everywhere
      Shape::nchw(2, 8, 3, 3),      // H * W % 4 != 0, C % 4 == 0
      Shape::nchw(6, 12, 1, 1),     // H * W == 1, C % 4 == 0
      Shape::nchw(2, 66, 5, 3),     // C % 4 != 0 over several NHWC row tiles
      Shape::nchw(3, 40, 4, 4),     // C % 8 == 0 (bf16's 16-byte vectors), H * W % 8 == 0
      Shape::nchw(16, 32, 14, 14),  // several reduction blocks per channel
  };
  return table;
}

BatchNormActivationSpec fused(Activation activation) {
  BatchNormActivationSpec spec;
  spec.bn.momentum = 0.1;
  spec.activation = activation;
  return spec;
}

std::string describe(Activation a, const Shape& shape, Layout layout, DType dtype) {
  return std::string(layers::type_name(fused(a))) + " " + shape.to_string() + " " +
         runtime::layout_name(layout) + " " + runtime::dtype_name(dtype);
}

// The comparison's settings and tolerance: overwrite (mode 0), accumulate (1) or no input
// gradient (2). BF16 against the F32 CPU layer on the same bf16 values: each stored value rounded
// once (twice when accumulating), and the norm-wise bound of the bf16 tests.
double settings_for(DType dtype, bool training, int mode, StepSettings& s) {
  s.training = training;
  s.accumulate = mode == 1;
  s.input_grads = mode != 2;
  s.input_levels = kInputLevels;
  if (dtype == DType::F32) return kTolerance;
  s.norm_tolerance = kBf16NormTolerance;
  return mode == 1 ? 2 * kBf16Rounding : kBf16Rounding;
}

TEST_F(BatchNormActivationCuda, MatchesCpu) {
  for (const DType dtype : {DType::F32, DType::BF16}) {
    for (const Layout layout : kLayouts) {
      for (const Activation a : kActivations) {
        for (const Shape& shape : shapes()) {
          for (const bool training : {true, false}) {
            for (const int mode : {0, 1, 2}) {
              SCOPED_TRACE(describe(a, shape, layout, dtype) + (training ? " training" : "") +
                           " mode " + std::to_string(mode));
              LayerOptions o = dtype == DType::BF16 ? bf16_options() : options();
              o.layout = layout;
              o.input_layout = layout;
              const auto layer = layers::make_layer(layers::Backend::Cuda, fused(a), {shape}, o);
              ASSERT_EQ(layer->layout(), layout);
              StepSettings s;
              const double tolerance = settings_for(dtype, training, mode, s);
              EXPECT_TRUE(cuda_matches_cpu(context(), *layer, tolerance, s));
            }
          }
        }
      }
    }
  }
}

// A recompute gives the first forward's output bit for bit and leaves the running buffers alone.
TEST_F(BatchNormActivationCuda, RecomputeRepeatsTheOutputAndLeavesRunningStats) {
  const Shape shape = Shape::nchw(4, 24, 5, 5);
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  const auto draw = [&](std::int64_t n, float offset) {
    std::vector<float> v(static_cast<std::size_t>(n));
    for (float& e : v) e = dist(rng) + offset;
    return v;
  };
  const Shape channels{shape.c()};
  for (const Layout layout : kLayouts) {
    for (const Activation a : kActivations) {
      SCOPED_TRACE(describe(a, shape, layout, DType::F32));
      DeviceData mem(context().compute_stream(), layout);
      layers::ForwardArgs f;
      f.inputs = {mem.upload(draw(shape.numel(), 2.0f), shape)};
      f.params = {
          mem.upload(draw(shape.c(), 0.0f), channels), mem.upload(draw(shape.c(), 0.0f), channels),
          mem.upload(draw(shape.c(), 0.0f), channels), mem.upload(draw(shape.c(), 2.0f), channels)};
      f.output = mem.nan(shape);
      LayerOptions o = options();
      o.layout = layout;
      o.input_layout = layout;
      layers::cuda::BatchNormActivationCuda layer(fused(a), {shape}, o);
      layer.forward(f);
      const std::vector<float> y = mem.download(f.output);
      const std::vector<float> running_var = mem.download(f.params[3]);
      f.output = mem.nan(shape);
      f.recompute = true;
      layer.forward(f);
      EXPECT_EQ(mem.download(f.output), y);
      EXPECT_EQ(mem.download(f.params[3]), running_var);
    }
  }
}

TEST_F(BatchNormActivationCuda, RefusesTheActivationsItDoesNotFuse) {
  const Shape shape = Shape::nchw(2, 8, 3, 3);
  for (const Activation a : {Activation::Gelu, Activation::Sigmoid, Activation::Hardsigmoid}) {
    EXPECT_THROW(layers::cuda::BatchNormActivationCuda(fused(a), {shape}, options()),
                 runtime::InvalidArgument);
  }
}

}  // namespace
}  // namespace vdnn::test
