// CUDA ReLU, Add, Concat, Flatten, Dropout and BatchNorm2d against their CPU layers over tables of
// shapes (forward, backward, GradTarget::accumulate, empty targets), and the NaN fill. Exact where
// both backends do the same float operations; 1e-5 (relative to 1 + |value|) for batch norm, whose
// statistics the CPU accumulates in double and cuDNN in float.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "layers/cuda/AddCuda.hpp"
#include "layers/cuda/BatchNorm2dCuda.hpp"
#include "layers/cuda/ConcatCuda.hpp"
#include "layers/cuda/DropoutCuda.hpp"
#include "layers/cuda/FlattenCuda.hpp"
#include "layers/cuda/ReluCuda.hpp"
#include "runtime/Error.hpp"
#include "runtime/cuda/FillNan.hpp"
#include "tests/layers/cuda/LayerRun.hpp"

namespace vdnn::test {
namespace {

class ElementwiseCuda : public CudaTest {};
class FillNanCuda : public CudaTest {};

constexpr double kExact = 0.0;
constexpr double kBatchNormTolerance = 1e-5;

const std::vector<Shape>& element_shapes() {
  static const std::vector<Shape> table = {Shape::nchw(1, 1, 1, 7), Shape::nchw(2, 3, 4, 5),
                                           Shape::nchw(4, 16, 7, 7), Shape::nchw(8, 64, 14, 14),
                                           Shape{3, 10}};
  return table;
}

// A run of a one-input layer: input, grad_output and the gradient target's starting contents.
LayerRun unary_run(const Shape& in, const Shape& out, bool accumulate, std::uint64_t seed) {
  LayerRun run{{uniform(in.numel(), seed)}};
  run.grad_output = uniform(out.numel(), seed + 1);
  run.grad_inputs = {uniform(in.numel(), seed + 2)};
  run.accumulate = accumulate;
  return run;
}

TEST_F(ElementwiseCuda, ReluMatchesCpuExactly) {
  for (const Shape& shape : element_shapes()) {
    for (const bool accumulate : {false, true}) {
      SCOPED_TRACE(shape.to_string() + (accumulate ? " accumulate" : ""));
      LayerRun run = unary_run(shape, shape, accumulate, 10);
      run.inputs[0][0] = kNan;  // stays NaN, as on the CPU
      expect_cuda_matches_cpu<layers::cuda::ReluCuda>(layers::ReluSpec{}, {shape}, run,
                                                      cuda_options(), kExact);
    }
  }
}

TEST_F(ElementwiseCuda, FlattenMatchesCpuExactly) {
  for (const Shape& shape : element_shapes()) {
    for (const bool accumulate : {false, true}) {
      SCOPED_TRACE(shape.to_string() + (accumulate ? " accumulate" : ""));
      const Shape flat{shape.n(), shape.sample_numel()};
      expect_cuda_matches_cpu<layers::cuda::FlattenCuda>(layers::FlattenSpec{}, {shape},
                                                         unary_run(shape, flat, accumulate, 20),
                                                         cuda_options(), kExact);
    }
  }
}

TEST_F(ElementwiseCuda, AddMatchesCpuExactlyWithEmptyTargets) {
  for (const Shape& shape : element_shapes()) {
    for (const std::size_t inputs : {2, 3, 4}) {
      for (const bool accumulate : {false, true}) {
        SCOPED_TRACE(shape.to_string() + " x" + std::to_string(inputs) +
                     (accumulate ? " accumulate" : ""));
        LayerRun run{{}};
        for (std::size_t k = 0; k < inputs; ++k) {
          run.inputs.push_back(uniform(shape.numel(), 30 + k));
          // Input 1 needs no gradient.
          run.grad_inputs.push_back(k == 1 ? std::nullopt
                                           : std::optional(uniform(shape.numel(), 40 + k)));
        }
        run.grad_output = uniform(shape.numel(), 50);
        run.accumulate = accumulate;
        expect_cuda_matches_cpu<layers::cuda::AddCuda>(
            layers::AddSpec{}, std::vector<Shape>(inputs, shape), run, cuda_options(), kExact);
      }
    }
  }
}

TEST_F(ElementwiseCuda, ConcatMatchesCpuExactlyWithEmptyTargets) {
  struct Case {
    std::int64_t n, h, w;
    std::vector<std::int64_t> channels;
  };
  const std::vector<Case> cases = {
      {1, 1, 1, {1, 1}}, {2, 3, 5, {1, 2}}, {3, 4, 4, {3, 5, 2}}, {4, 14, 14, {16, 16, 32, 8}}};
  for (const Case& c : cases) {
    for (const bool accumulate : {false, true}) {
      std::vector<Shape> shapes;
      LayerRun run{{}};
      std::int64_t channels = 0;
      for (std::size_t k = 0; k < c.channels.size(); ++k) {
        shapes.push_back(Shape::nchw(c.n, c.channels[k], c.h, c.w));
        channels += c.channels[k];
        run.inputs.push_back(uniform(shapes.back().numel(), 60 + k));
        // The last input needs no gradient.
        run.grad_inputs.push_back(k + 1 == c.channels.size()
                                      ? std::nullopt
                                      : std::optional(uniform(shapes.back().numel(), 70 + k)));
      }
      SCOPED_TRACE(Shape::nchw(c.n, channels, c.h, c.w).to_string() +
                   (accumulate ? " accumulate" : ""));
      run.grad_output = uniform(c.n * channels * c.h * c.w, 80);
      run.accumulate = accumulate;
      expect_cuda_matches_cpu<layers::cuda::ConcatCuda>(layers::ConcatSpec{}, shapes, run,
                                                        cuda_options(), kExact);
    }
  }
}

layers::DropoutSpec dropout(double p) {
  layers::DropoutSpec spec;
  spec.p = p;
  return spec;
}

// Forward and an overwriting backward multiply once by the mask: bitwise equal to the CPU for any
// p, so the masks are too.
TEST_F(ElementwiseCuda, DropoutMasksMatchCpuBitwise) {
  for (const Shape& shape : element_shapes()) {
    for (const double p : {0.0, 0.1, 0.3, 0.5, 0.9}) {
      for (const std::uint64_t step : {0, 1, 12345}) {
        SCOPED_TRACE(shape.to_string() + " p=" + std::to_string(p) +
                     " step=" + std::to_string(step));
        LayerRun run = unary_run(shape, shape, /*accumulate=*/false, 90);
        run.step = step;
        expect_cuda_matches_cpu<layers::cuda::DropoutCuda>(dropout(p), {shape}, run,
                                                           cuda_options(/*seed=*/7 + step), kExact);
      }
    }
  }
}

// Accumulating adds a product to the target; with 1 / (1 - p) a power of two the product is exact,
// so the sum is the same whether or not a compiler fuses it into an FMA.
TEST_F(ElementwiseCuda, DropoutAccumulatesAndInferenceCopies) {
  for (const Shape& shape : element_shapes()) {
    for (const double p : {0.5, 0.75}) {
      SCOPED_TRACE(shape.to_string() + " p=" + std::to_string(p));
      LayerRun run = unary_run(shape, shape, /*accumulate=*/true, 100);
      run.step = 3;
      expect_cuda_matches_cpu<layers::cuda::DropoutCuda>(dropout(p), {shape}, run, cuda_options(11),
                                                         kExact);
      LayerRun inference{{uniform(shape.numel(), 110)}};
      inference.training = false;
      const LayerRun cuda = expect_cuda_matches_cpu<layers::cuda::DropoutCuda>(
          dropout(p), {shape}, inference, cuda_options(11), kExact);
      EXPECT_EQ(cuda.output, inference.inputs[0]);
    }
  }
}

TEST_F(ElementwiseCuda, DropoutEmptyTargetIsSkipped) {
  const Shape shape = Shape::nchw(2, 3, 4, 5);
  LayerRun run = unary_run(shape, shape, /*accumulate=*/false, 120);
  run.grad_inputs = {std::nullopt};
  expect_cuda_matches_cpu<layers::cuda::DropoutCuda>(dropout(0.5), {shape}, run, cuda_options(),
                                                     kExact);
}

layers::BatchNorm2dSpec batch_norm(double eps, double momentum) {
  layers::BatchNorm2dSpec spec;
  spec.eps = eps;
  spec.momentum = momentum;
  return spec;
}

const std::vector<Shape>& batch_norm_shapes() {
  static const std::vector<Shape> table = {Shape::nchw(2, 3, 4, 5), Shape::nchw(5, 2, 1, 1),
                                           Shape::nchw(1, 4, 3, 3), Shape::nchw(8, 16, 7, 7),
                                           Shape::nchw(16, 32, 14, 14)};
  return table;
}

// Input centred away from 0 (mean 3, so the statistics matter), weight, bias and running buffers.
LayerRun batch_norm_run(const Shape& shape, bool training, bool accumulate) {
  const std::int64_t c = shape.c();
  LayerRun run{
      {uniform(shape.numel(), 130, 1.0f, 5.0f)},
      {uniform(c, 131, 0.5f, 1.5f), uniform(c, 132), uniform(c, 133), uniform(c, 134, 0.5f, 1.5f)}};
  run.training = training;
  run.grad_output = uniform(shape.numel(), 135);
  run.grad_inputs = {uniform(shape.numel(), 136)};
  run.accumulate = accumulate;
  return run;
}

TEST_F(ElementwiseCuda, BatchNormTrainingMatchesCpuIncludingRunningStats) {
  for (const Shape& shape : batch_norm_shapes()) {
    for (const layers::BatchNorm2dSpec& spec :
         {batch_norm(1e-5, 0.1), batch_norm(1e-3, 0.7), batch_norm(1e-7, 1.0)}) {
      for (const bool accumulate : {false, true}) {
        SCOPED_TRACE(shape.to_string() + " eps=" + std::to_string(spec.eps) + " momentum=" +
                     std::to_string(spec.momentum) + (accumulate ? " accumulate" : ""));
        expect_cuda_matches_cpu<layers::cuda::BatchNorm2dCuda>(
            spec, {shape}, batch_norm_run(shape, /*training=*/true, accumulate), cuda_options(),
            kBatchNormTolerance);
      }
    }
  }
}

// After an inference forward the statistics are constants: backward takes the layer's own kernel.
TEST_F(ElementwiseCuda, BatchNormInferenceMatchesCpuForwardAndBackward) {
  for (const Shape& shape : batch_norm_shapes()) {
    for (const bool accumulate : {false, true}) {
      SCOPED_TRACE(shape.to_string() + (accumulate ? " accumulate" : ""));
      const LayerRun run = batch_norm_run(shape, /*training=*/false, accumulate);
      const LayerRun cuda = expect_cuda_matches_cpu<layers::cuda::BatchNorm2dCuda>(
          batch_norm(1e-5, 0.1), {shape}, run, cuda_options(), kBatchNormTolerance);
      for (std::size_t j = 2; j < 4; ++j)
        EXPECT_EQ(cuda.params[j], run.params[j]) << "buffer " << j;
    }
  }
}

TEST_F(ElementwiseCuda, BatchNormParamGradsWithoutInputGradAndTheReverse) {
  for (const Shape& shape : batch_norm_shapes()) {
    for (const bool training : {true, false}) {
      SCOPED_TRACE(shape.to_string() + (training ? " training" : " inference"));
      LayerRun params_only = batch_norm_run(shape, training, /*accumulate=*/false);
      params_only.grad_inputs = {std::nullopt};
      expect_cuda_matches_cpu<layers::cuda::BatchNorm2dCuda>(
          batch_norm(1e-5, 0.1), {shape}, params_only, cuda_options(), kBatchNormTolerance);
      LayerRun input_only = batch_norm_run(shape, training, /*accumulate=*/true);
      input_only.param_grads = false;
      expect_cuda_matches_cpu<layers::cuda::BatchNorm2dCuda>(
          batch_norm(1e-5, 0.1), {shape}, input_only, cuda_options(), kBatchNormTolerance);
    }
  }
}

TEST_F(ElementwiseCuda, BatchNormTrainingIsBitwiseReproducible) {
  const Shape shape = Shape::nchw(16, 32, 14, 14);
  layers::cuda::BatchNorm2dCuda layer(batch_norm(1e-5, 0.1), {shape}, cuda_options());
  const LayerRun run = batch_norm_run(shape, /*training=*/true, /*accumulate=*/false);
  const LayerRun first = run_on_cuda(layer, stream(), run);
  const LayerRun second = run_on_cuda(layer, stream(), run);
  EXPECT_EQ(first.output, second.output);
  EXPECT_EQ(first.params, second.params);
  EXPECT_EQ(first.grad_inputs, second.grad_inputs);
  EXPECT_EQ(first.grad_params, second.grad_params);
}

// Note [Recomputation]: the same bits again, and the running buffers updated only once.
TEST_F(ElementwiseCuda, BatchNormRecomputeRepeatsTheOutputAndLeavesRunningStats) {
  const Shape shape = Shape::nchw(16, 32, 14, 14);
  layers::cuda::BatchNorm2dCuda layer(batch_norm(1e-5, 0.1), {shape}, cuda_options());
  LayerRun run = batch_norm_run(shape, /*training=*/true, /*accumulate=*/false);
  run.grad_output.clear();  // forward only
  const LayerRun first = run_on_cuda(layer, stream(), run);
  LayerRun again = first;
  again.recompute = true;
  const LayerRun second = run_on_cuda(layer, stream(), again);
  EXPECT_EQ(second.output, first.output);
  EXPECT_EQ(second.params, first.params);
}

TEST_F(ElementwiseCuda, BatchNormTrainingRejectsOneValuePerChannel) {
  const Shape single = Shape::nchw(1, 2, 1, 1);
  layers::cuda::BatchNorm2dCuda layer(batch_norm(1e-5, 0.1), {single}, cuda_options());
  LayerRun run = batch_norm_run(single, /*training=*/true, /*accumulate=*/false);
  run.grad_output.clear();
  EXPECT_THROW(run_on_cuda(layer, stream(), run), runtime::InvalidArgument);
  run.training = false;
  EXPECT_NO_THROW(run_on_cuda(layer, stream(), run));
}

TEST_F(ElementwiseCuda, ConstructorsRejectF64AndAMissingContext) {
  const Shape shape = Shape::nchw(2, 2, 2, 2);
  layers::LayerOptions f64 = cuda_options();
  f64.dtype = runtime::DType::F64;
  const layers::LayerOptions no_context;
  for (const layers::LayerOptions& options : {f64, no_context}) {
    EXPECT_THROW(layers::cuda::ReluCuda(layers::ReluSpec{}, {shape}, options),
                 runtime::InvalidArgument);
    EXPECT_THROW(layers::cuda::AddCuda(layers::AddSpec{}, {shape, shape}, options),
                 runtime::InvalidArgument);
    EXPECT_THROW(layers::cuda::ConcatCuda(layers::ConcatSpec{}, {shape, shape}, options),
                 runtime::InvalidArgument);
    EXPECT_THROW(layers::cuda::FlattenCuda(layers::FlattenSpec{}, {shape}, options),
                 runtime::InvalidArgument);
    EXPECT_THROW(layers::cuda::DropoutCuda(dropout(0.5), {shape}, options),
                 runtime::InvalidArgument);
    EXPECT_THROW(layers::cuda::BatchNorm2dCuda(layers::BatchNorm2dSpec{}, {shape}, options),
                 runtime::InvalidArgument);
  }
}

TEST_F(FillNanCuda, FillsExactlyTheRangeWithNanForF32F64AndBf16) {
  constexpr std::size_t kFloats = 3000;
  DeviceTensor tensor(stream(), std::vector<float>(kFloats, 1.0f),
                      Shape{static_cast<std::int64_t>(kFloats)});
  auto* data = static_cast<float*>(tensor.view().data);
  runtime::cuda::fill_nan_async(stream(), data + 2, (kFloats - 4) * sizeof(float));
  const std::vector<float> host = tensor.download_now(stream());
  for (std::size_t i = 0; i < kFloats; ++i) {
    const bool inside = i >= 2 && i < kFloats - 2;
    ASSERT_EQ(std::isnan(host[i]), inside) << "element " << i;
  }
  const auto* as_doubles = reinterpret_cast<const double*>(host.data() + 2);
  for (std::size_t i = 0; i < (kFloats - 4) / 2; ++i) ASSERT_TRUE(std::isnan(as_doubles[i])) << i;
  const auto* as_bf16 = reinterpret_cast<const runtime::BFloat16*>(host.data() + 2);
  for (std::size_t i = 0; i < (kFloats - 4) * 2; ++i) {
    ASSERT_TRUE(std::isnan(runtime::to_float(as_bf16[i]))) << i;
  }
}

TEST_F(FillNanCuda, ZeroBytesIsANoOpAndBadArgumentsThrow) {
  DeviceTensor tensor(stream(), std::vector<float>(4, 1.0f), Shape{4});
  auto* data = static_cast<float*>(tensor.view().data);
  runtime::cuda::fill_nan_async(stream(), data, 0);
  EXPECT_EQ(tensor.download_now(stream()), std::vector<float>(4, 1.0f));
  EXPECT_THROW(runtime::cuda::fill_nan_async(stream(), data, 5), runtime::InvalidArgument);
  EXPECT_THROW(runtime::cuda::fill_nan_async(stream(), reinterpret_cast<char*>(data) + 1, 4),
               runtime::InvalidArgument);
  EXPECT_THROW(runtime::cuda::fill_nan_async(nullptr, data, 4), runtime::InvalidArgument);
  EXPECT_THROW(runtime::cuda::fill_nan_async(stream(), nullptr, 4), runtime::InvalidArgument);
}

}  // namespace
}  // namespace vdnn::test
