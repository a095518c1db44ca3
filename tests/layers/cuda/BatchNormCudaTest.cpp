// BatchNorm2dCuda and the fused BatchNormReluCuda in both layouts (NCHW, NHWC): against their CPU
// layers over a table of shapes (training, inference, accumulate, skipped input gradients), the
// recompute rule, and the fused layer against the unfused CUDA chain batchnorm2d -> [add] -> relu,
// bit for bit.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "layers/Registry.hpp"
#include "layers/cuda/AddCuda.hpp"
#include "layers/cuda/BatchNorm2dCuda.hpp"
#include "layers/cuda/BatchNormReluCuda.hpp"
#include "layers/cuda/CudaLayerTest.hpp"
#include "layers/cuda/DeviceData.hpp"
#include "layers/cuda/RawBuffer.hpp"
#include "layers/cuda/ReluCuda.hpp"
#include "runtime/Error.hpp"
#include "runtime/cuda/CudaCheck.hpp"

namespace vdnn::test {
namespace {

using layers::BackwardArgs;
using layers::BatchNorm2dSpec;
using layers::BatchNormReluSpec;
using layers::ForwardArgs;
using layers::GradTarget;
using layers::LayerOptions;
using runtime::Layout;
using runtime::Shape;
using runtime::TensorView;
using Floats = std::vector<float>;
using BatchNormCuda = CudaLayerTest;

// The CPU accumulates the statistics in double, in another order, and normalizes as x * a + b.
constexpr double kTolerance = 1e-5;
constexpr Layout kLayouts[] = {Layout::Nchw, Layout::Nhwc};
// The fused layer against the CPU: inputs take this many values, so that no bn(x) + r lies within
// rounding of 0 (a ReLU mask flipped by one ulp would move whole channels of the gradient).
constexpr int kFusedInputLevels = 9;

const std::vector<Shape>& shapes() {
  static const std::vector<Shape> table = {
      Shape::nchw(2, 3, 4, 5),      // C % 4 != 0
      Shape::nchw(1, 3, 3, 3),      // odd element count: scalar loads everywhere
      Shape::nchw(2, 8, 3, 3),      // H * W % 4 != 0, C % 4 == 0
      Shape::nchw(5, 2, 1, 1),      // H * W == 1
      Shape::nchw(6, 12, 1, 1),     // H * W == 1, C % 4 == 0
      Shape::nchw(2, 66, 5, 3),     // C % 4 != 0 over several NHWC row tiles
      Shape::nchw(4, 96, 9, 9),     // C % 4 == 0 over several NHWC row tiles, H * W odd
      Shape::nchw(4, 1024, 2, 2),   // many channels, few pixels
      Shape::nchw(16, 32, 14, 14),  // several reduction blocks per channel
      Shape::nchw(8, 64, 56, 56),   // ResNet's first stage
  };
  return table;
}

BatchNorm2dSpec batch_norm(double eps, double momentum) {
  BatchNorm2dSpec spec;
  spec.eps = eps;
  spec.momentum = momentum;
  return spec;
}

BatchNormReluSpec fused(bool residual) {
  BatchNormReluSpec spec;
  spec.bn = batch_norm(1e-5, 0.1);
  spec.residual = residual;
  return spec;
}

LayerOptions laid_out(LayerOptions options, Layout layout) {
  options.layout = layout;
  options.input_layout = layout;
  return options;
}

std::string describe(const Shape& shape, Layout layout) {
  return shape.to_string() + " " + runtime::layout_name(layout);
}

std::vector<Shape> fused_inputs(const Shape& shape, bool residual) {
  return residual ? std::vector<Shape>{shape, shape} : std::vector<Shape>{shape};
}

TEST_F(BatchNormCuda, RunsInTheLayoutAskedForAndRefusesMixedLayouts) {
  const Shape shape = Shape::nchw(2, 8, 3, 3);
  for (const Layout layout : kLayouts) {
    SCOPED_TRACE(runtime::layout_name(layout));
    const LayerOptions options = laid_out(this->options(), layout);
    const auto bn =
        layers::make_layer(layers::Backend::Cuda, batch_norm(1e-5, 0.1), {shape}, options);
    EXPECT_EQ(bn->layout(), layout);
    EXPECT_EQ(bn->input_layout(), layout);
    const auto relu =
        layers::make_layer(layers::Backend::Cuda, fused(true), {shape, shape}, options);
    EXPECT_EQ(relu->layout(), layout);
    EXPECT_EQ(relu->input_layout(), layout);
  }
  LayerOptions mixed = options();
  mixed.layout = Layout::Nhwc;
  mixed.input_layout = Layout::Nchw;
  EXPECT_THROW(layers::make_layer(layers::Backend::Cuda, batch_norm(1e-5, 0.1), {shape}, mixed),
               runtime::InvalidArgument);
  EXPECT_THROW(layers::make_layer(layers::Backend::Cuda, fused(false), {shape}, mixed),
               runtime::InvalidArgument);
}

// Every comparison with the CPU runs these backward variations: overwrite, accumulate, and no
// input gradient (parameter gradients only). The fused layer's inputs take kFusedInputLevels
// values.
std::vector<StepSettings> variations(bool training, bool is_fused) {
  StepSettings overwrite;
  overwrite.training = training;
  overwrite.input_levels = is_fused ? kFusedInputLevels : 0;
  StepSettings accumulate = overwrite;
  accumulate.accumulate = true;
  StepSettings no_input_grads = overwrite;
  no_input_grads.input_grads = false;
  return {overwrite, accumulate, no_input_grads};
}

std::string describe(const StepSettings& s) {
  return std::string(s.training ? " training" : " inference") +
         (s.accumulate ? " accumulate" : "") + (s.input_grads ? "" : " no input gradient");
}

// Inference normalizes with the running buffers and backward differentiates that (cuda_matches_cpu
// also checks that the buffers are untouched); training updates them.
TEST_F(BatchNormCuda, MatchesCpuIncludingRunningStats) {
  for (const Layout layout : kLayouts) {
    for (const Shape& shape : shapes()) {
      for (const BatchNorm2dSpec& spec : {batch_norm(1e-5, 0.1), batch_norm(1e-3, 0.7)}) {
        for (const bool training : {true, false}) {
          for (const StepSettings& settings : variations(training, /*is_fused=*/false)) {
            SCOPED_TRACE(describe(shape, layout) + " momentum " + std::to_string(spec.momentum) +
                         describe(settings));
            layers::cuda::BatchNorm2dCuda layer(spec, {shape}, laid_out(options(), layout));
            EXPECT_TRUE(cuda_matches_cpu(context(), layer, kTolerance, settings));
          }
        }
      }
    }
  }
}

TEST_F(BatchNormCuda, FusedReluMatchesCpu) {
  for (const Layout layout : kLayouts) {
    for (const Shape& shape : shapes()) {
      for (const bool residual : {false, true}) {
        for (const bool training : {true, false}) {
          for (const StepSettings& settings : variations(training, /*is_fused=*/true)) {
            SCOPED_TRACE(describe(shape, layout) + (residual ? " residual" : "") +
                         describe(settings));
            layers::cuda::BatchNormReluCuda layer(fused(residual), fused_inputs(shape, residual),
                                                  laid_out(options(), layout));
            EXPECT_TRUE(cuda_matches_cpu(context(), layer, kTolerance, settings));
          }
        }
      }
    }
  }
}

// ---- Hand-run steps on device buffers ----------------------------------------------------------

Floats random_floats(std::int64_t count, std::uint64_t seed, float low, float high) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(low, high);
  Floats values(static_cast<std::size_t>(count));
  for (float& v : values) v = dist(rng);
  return values;
}

// Host data of one step, NCHW-ordered (DeviceData stores it in the layout under test).
struct StepData {
  Floats x, r, weight, bias, running_mean, running_var, dy, dx_before, dr_before;
};

StepData random_step(const Shape& shape, std::uint64_t seed) {
  const std::int64_t n = shape.numel();
  const std::int64_t c = shape.c();
  StepData d;
  d.x = random_floats(n, seed, 1.0f, 5.0f);  // mean 3: the shifted sums matter
  d.r = random_floats(n, seed + 1, -1.0f, 1.0f);
  d.weight = random_floats(c, seed + 2, -1.5f, 1.5f);
  d.bias = random_floats(c, seed + 3, -1.0f, 1.0f);
  d.running_mean = random_floats(c, seed + 4, -1.0f, 1.0f);
  d.running_var = random_floats(c, seed + 5, 0.5f, 1.5f);
  d.dy = random_floats(n, seed + 6, -1.0f, 1.0f);
  d.dx_before = random_floats(n, seed + 7, -1.0f, 1.0f);
  d.dr_before = random_floats(n, seed + 8, -1.0f, 1.0f);
  return d;
}

// What a chain step produced.
struct StepResults {
  Floats y, running_mean, running_var, dx, dr, grad_weight, grad_bias;
};

struct ChainCase {
  Shape shape;
  Layout layout = Layout::Nchw;
  bool residual = false;
  bool accumulate = false;
  bool dx_wanted = true;  // false: the batch norm's input gradient target is empty
  bool training = true;
};

// The views of one step, uploaded from `d`.
struct StepViews {
  StepViews(DeviceData& mem, const ChainCase& c, const StepData& d)
      : x(mem.upload(d.x, c.shape)),
        r(c.residual ? mem.upload(d.r, c.shape) : TensorView{}),
        y(mem.nan(c.shape)),
        dy(mem.upload(d.dy, c.shape)),
        dx(!c.dx_wanted   ? TensorView{}
           : c.accumulate ? mem.upload(d.dx_before, c.shape)
                          : mem.nan(c.shape)),
        dr(!c.residual    ? TensorView{}
           : c.accumulate ? mem.upload(d.dr_before, c.shape)
                          : mem.nan(c.shape)) {
    const Shape channels{c.shape.c()};
    params = {mem.upload(d.weight, channels), mem.upload(d.bias, channels),
              mem.upload(d.running_mean, channels), mem.upload(d.running_var, channels)};
    grad_params = {mem.nan(channels), mem.nan(channels)};
  }

  StepResults download(DeviceData& mem) const {
    StepResults out;
    out.y = mem.download(y);
    out.running_mean = mem.download(params[2]);
    out.running_var = mem.download(params[3]);
    if (!dx.empty()) out.dx = mem.download(dx);
    if (!dr.empty()) out.dr = mem.download(dr);
    out.grad_weight = mem.download(grad_params[0]);
    out.grad_bias = mem.download(grad_params[1]);
    return out;
  }

  TensorView x, r, y, dy, dx, dr;
  std::vector<TensorView> params, grad_params;
};

StepResults run_fused(runtime::cuda::DeviceContext& context, const LayerOptions& options,
                      const ChainCase& c, const StepData& d) {
  DeviceData mem(context.compute_stream(), c.layout);
  const StepViews v(mem, c, d);
  layers::cuda::BatchNormReluCuda layer(fused(c.residual), fused_inputs(c.shape, c.residual),
                                        options);
  ForwardArgs f;
  f.inputs = c.residual ? std::vector<TensorView>{v.x, v.r} : std::vector<TensorView>{v.x};
  f.params = v.params;
  f.output = v.y;
  f.training = c.training;
  layer.forward(f);
  BackwardArgs b;
  b.inputs = c.residual ? std::vector<TensorView>{v.x, TensorView{}} : std::vector<TensorView>{v.x};
  // As backward_needs declares: y for the residual chain's mask only.
  b.output = c.residual ? v.y : TensorView{};
  b.grad_output = v.dy;
  b.grad_inputs = {GradTarget{v.dx, c.accumulate}};
  if (c.residual) b.grad_inputs.push_back(GradTarget{v.dr, c.accumulate});
  b.params = v.params;
  b.grad_params = v.grad_params;
  layer.backward(b);
  return v.download(mem);
}

// BatchNorm2dCuda -> [AddCuda with r] -> ReluCuda, forward and backward, as an executor runs them.
StepResults run_chain(runtime::cuda::DeviceContext& context, const LayerOptions& options,
                      const ChainCase& c, const StepData& d) {
  DeviceData mem(context.compute_stream(), c.layout);
  const StepViews v(mem, c, d);
  layers::cuda::BatchNorm2dCuda bn(fused(c.residual).bn, {c.shape}, options);
  layers::cuda::AddCuda add(layers::AddSpec{}, {c.shape, c.shape}, options);
  layers::cuda::ReluCuda relu(layers::ReluSpec{}, {c.shape}, options);
  const TensorView normalized = mem.nan(c.shape);
  const TensorView sum = c.residual ? mem.nan(c.shape) : normalized;
  ForwardArgs f;
  f.inputs = {v.x};
  f.params = v.params;
  f.output = normalized;
  f.training = c.training;
  bn.forward(f);
  if (c.residual) {
    ForwardArgs a;
    a.inputs = {normalized, v.r};
    a.output = sum;
    add.forward(a);
  }
  ForwardArgs r;
  r.inputs = {sum};
  r.output = v.y;
  relu.forward(r);

  const TensorView grad_sum = mem.nan(c.shape);
  BackwardArgs rb;
  rb.inputs = {TensorView{}};
  rb.output = v.y;
  rb.grad_output = v.dy;
  rb.grad_inputs = {GradTarget{grad_sum, false}};
  relu.backward(rb);
  TensorView grad_normalized = grad_sum;
  if (c.residual) {
    grad_normalized = mem.nan(c.shape);
    BackwardArgs ab;
    ab.inputs = {TensorView{}, TensorView{}};
    ab.grad_output = grad_sum;
    ab.grad_inputs = {GradTarget{grad_normalized, false}, GradTarget{v.dr, c.accumulate}};
    add.backward(ab);
  }
  BackwardArgs bb;
  bb.inputs = {v.x};
  bb.grad_output = grad_normalized;
  bb.grad_inputs = {GradTarget{v.dx, c.accumulate}};
  bb.params = v.params;
  bb.grad_params = v.grad_params;
  bn.backward(bb);
  return v.download(mem);
}

std::uint32_t bits(float value) {
  std::uint32_t b = 0;
  std::memcpy(&b, &value, sizeof(b));
  return b;
}

::testing::AssertionResult bitwise_equal(const char* what, const Floats& actual,
                                         const Floats& expected) {
  if (actual.size() != expected.size()) {
    return ::testing::AssertionFailure()
           << what << ": " << actual.size() << " elements, expected " << expected.size();
  }
  for (std::size_t i = 0; i < actual.size(); ++i) {
    if (bits(actual[i]) != bits(expected[i])) {
      return ::testing::AssertionFailure() << what << ": element " << i << " is " << actual[i]
                                           << ", the unfused chain's " << expected[i];
    }
  }
  return ::testing::AssertionSuccess();
}

void expect_bitwise_equal(const StepResults& fused_results, const StepResults& chain) {
  EXPECT_TRUE(bitwise_equal("output", fused_results.y, chain.y));
  EXPECT_TRUE(bitwise_equal("running_mean", fused_results.running_mean, chain.running_mean));
  EXPECT_TRUE(bitwise_equal("running_var", fused_results.running_var, chain.running_var));
  EXPECT_TRUE(bitwise_equal("dx", fused_results.dx, chain.dx));
  EXPECT_TRUE(bitwise_equal("dr", fused_results.dr, chain.dr));
  EXPECT_TRUE(bitwise_equal("grad_weight", fused_results.grad_weight, chain.grad_weight));
  EXPECT_TRUE(bitwise_equal("grad_bias", fused_results.grad_bias, chain.grad_bias));
}

// Note [Fusion]: the fused layer adds the same values in the same order and rounds every
// operation as the chain does, so it gets the chain's bits.
TEST_F(BatchNormCuda, FusedReluIsBitwiseTheUnfusedChain) {
  const std::vector<Shape> chain_shapes = {Shape::nchw(2, 3, 4, 5),  Shape::nchw(2, 8, 3, 3),
                                           Shape::nchw(5, 2, 1, 1),  Shape::nchw(2, 66, 5, 3),
                                           Shape::nchw(4, 96, 9, 9), Shape::nchw(8, 64, 56, 56)};
  for (const Layout layout : kLayouts) {
    for (const Shape& shape : chain_shapes) {
      for (const bool residual : {false, true}) {
        for (const bool training : {true, false}) {
          for (const bool accumulate : {false, true}) {
            SCOPED_TRACE(describe(shape, layout) + (residual ? " residual" : "") +
                         (training ? " training" : " inference") +
                         (accumulate ? " accumulate" : ""));
            const ChainCase c{shape, layout, residual, accumulate, /*dx_wanted=*/true, training};
            const StepData data = random_step(shape, 40);
            const LayerOptions options = laid_out(this->options(), layout);
            expect_bitwise_equal(run_fused(context(), options, c, data),
                                 run_chain(context(), options, c, data));
          }
        }
      }
    }
  }
}

// Only the residual's gradient and the parameter gradients: the fused pass writes dr alone.
TEST_F(BatchNormCuda, FusedReluWithoutInputGradIsBitwiseTheUnfusedChain) {
  for (const Layout layout : kLayouts) {
    for (const bool accumulate : {false, true}) {
      SCOPED_TRACE(std::string(runtime::layout_name(layout)) + (accumulate ? " accumulate" : ""));
      const Shape shape = Shape::nchw(4, 24, 7, 7);
      const ChainCase c{shape, layout, /*residual=*/true, accumulate, /*dx_wanted=*/false};
      const StepData data = random_step(shape, 50);
      const LayerOptions options = laid_out(this->options(), layout);
      expect_bitwise_equal(run_fused(context(), options, c, data),
                           run_chain(context(), options, c, data));
    }
  }
}

// Note [Recomputation]: the same bits again, and the running buffers updated only once.
TEST_F(BatchNormCuda, RecomputeRepeatsTheOutputAndLeavesRunningStats) {
  const Shape shape = Shape::nchw(4, 24, 14, 14);
  for (const Layout layout : kLayouts) {
    for (const bool is_fused : {false, true}) {
      SCOPED_TRACE(std::string(runtime::layout_name(layout)) + (is_fused ? " fused" : ""));
      const LayerOptions options = laid_out(this->options(), layout);
      std::unique_ptr<layers::Layer> layer;
      if (is_fused) {
        layer = std::make_unique<layers::cuda::BatchNormReluCuda>(
            fused(true), fused_inputs(shape, true), options);
      } else {
        layer = std::make_unique<layers::cuda::BatchNorm2dCuda>(batch_norm(1e-5, 0.1),
                                                                std::vector<Shape>{shape}, options);
      }
      DeviceData mem(context().compute_stream(), layout);
      const ChainCase c{shape, layout, is_fused};
      const StepData data = random_step(shape, 60);
      const StepViews v(mem, c, data);
      ForwardArgs f;
      f.inputs = is_fused ? std::vector<TensorView>{v.x, v.r} : std::vector<TensorView>{v.x};
      f.params = v.params;
      f.output = v.y;
      layer->forward(f);
      const StepResults first = v.download(mem);
      EXPECT_NE(first.running_mean, data.running_mean);  // the first forward did update them

      f.recompute = true;
      f.output = mem.nan(shape);
      layer->forward(f);
      EXPECT_TRUE(bitwise_equal("recomputed output", mem.download(f.output), first.y));
      const StepResults second = v.download(mem);
      EXPECT_TRUE(bitwise_equal("running_mean", second.running_mean, first.running_mean));
      EXPECT_TRUE(bitwise_equal("running_var", second.running_var, first.running_var));
    }
  }
}

TEST_F(BatchNormCuda, TrainingRejectsOneValuePerChannel) {
  const Shape single = Shape::nchw(1, 4, 1, 1);
  for (const Layout layout : kLayouts) {
    SCOPED_TRACE(runtime::layout_name(layout));
    const LayerOptions options = laid_out(this->options(), layout);
    DeviceData mem(context().compute_stream(), layout);
    const ChainCase c{single, layout};
    const StepViews v(mem, c, random_step(single, 80));
    ForwardArgs f;
    f.inputs = {v.x};
    f.params = v.params;
    f.output = v.y;
    layers::cuda::BatchNorm2dCuda bn(batch_norm(1e-5, 0.1), {single}, options);
    layers::cuda::BatchNormReluCuda relu(fused(false), {single}, options);
    EXPECT_THROW(bn.forward(f), runtime::InvalidArgument);
    EXPECT_THROW(relu.forward(f), runtime::InvalidArgument);
    f.training = false;
    EXPECT_NO_THROW(bn.forward(f));
    EXPECT_NO_THROW(relu.forward(f));
    VDNN_CHECK_CUDA(cudaStreamSynchronize(context().compute_stream()));
  }
}

}  // namespace
}  // namespace vdnn::test
