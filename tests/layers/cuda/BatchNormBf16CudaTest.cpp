// BatchNorm2dCuda and the fused BatchNormReluCuda and BatchNormActivationCuda (silu, relu6,
// hardswish) with BF16 feature maps (Note [Precision]) in both
// layouts: the acceptance line (batch-norm statistics from bf16 input match FP32 to 1e-5
// relative), the BF16 layers against the CPU FP32 reference on the same bf16-rounded inputs, and
// against the F32 CUDA layers on them (the same reductions in the same order: the F32 results
// rounded once, statistics and parameter gradients bit for bit), and the dtype checks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "layers/Registry.hpp"
#include "layers/cuda/CudaLayerTest.hpp"
#include "layers/cuda/DeviceData.hpp"
#include "runtime/BFloat16.hpp"
#include "runtime/Error.hpp"
#include "runtime/cuda/CudaCheck.hpp"

namespace vdnn::test {
namespace {

using layers::BackwardArgs;
using layers::BatchNorm2dSpec;
using layers::BatchNormReluSpec;
using layers::ForwardArgs;
using layers::GradTarget;
using layers::Layer;
using layers::LayerOptions;
using runtime::DType;
using runtime::Layout;
using runtime::Shape;
using runtime::TensorView;
using Floats = std::vector<float>;
using BatchNormBf16Cuda = CudaLayerTest;

constexpr Layout kLayouts[] = {Layout::Nchw, Layout::Nhwc};
// The acceptance line: statistics from bf16 input within this of FP32 ones, relative.
constexpr double kStatsTolerance = 1e-5;

const std::vector<Shape>& shapes() {
  static const std::vector<Shape> table = {
      Shape::nchw(2, 3, 4, 5),      // C % 4 != 0
      Shape::nchw(1, 3, 3, 3),      // odd element count: scalar loads everywhere
      Shape::nchw(2, 8, 3, 3),      // H * W % 4 != 0, C % 4 == 0
      Shape::nchw(6, 12, 1, 1),     // H * W == 1, C % 4 == 0
      Shape::nchw(2, 66, 5, 3),     // C % 4 != 0 over several NHWC row tiles
      Shape::nchw(4, 96, 9, 9),     // C % 4 == 0 over several NHWC row tiles, H * W odd
      Shape::nchw(3, 40, 4, 4),     // C % 8 == 0, a last NHWC tile of 8 channels; H * W % 8 == 0
      Shape::nchw(2, 56, 6, 6),     // C % 8 == 0, a last NHWC tile of 24 channels; H * W % 8 == 4
      Shape::nchw(2, 36, 4, 2),     // C % 8 == 4 (bf16 NHWC 4-wide), H * W % 8 == 0
      Shape::nchw(16, 32, 14, 14),  // several reduction blocks per channel
      Shape::nchw(8, 64, 56, 56),   // ResNet's first stage
  };
  return table;
}

// The layers under test: the plain batch norm, the fused ReLU, the fused add and ReLU, the fused
// smooth activations.
enum class Kind { Plain, Relu, AddRelu, Silu, Relu6, Hardswish };
constexpr Kind kKinds[] = {Kind::Plain, Kind::Relu,  Kind::AddRelu,
                           Kind::Silu,  Kind::Relu6, Kind::Hardswish};

BatchNorm2dSpec batch_norm(double momentum) {
  BatchNorm2dSpec spec;
  spec.eps = 1e-5;
  spec.momentum = momentum;
  return spec;
}

layers::LayerSpec spec_of(Kind kind, double momentum) {
  switch (kind) {
    case Kind::Plain:
      return batch_norm(momentum);
    case Kind::Relu:
    case Kind::AddRelu:
      return BatchNormReluSpec{batch_norm(momentum), kind == Kind::AddRelu};
    case Kind::Silu:
      return layers::BatchNormActivationSpec{batch_norm(momentum), layers::Activation::Silu};
    case Kind::Relu6:
      return layers::BatchNormActivationSpec{batch_norm(momentum), layers::Activation::Relu6};
    case Kind::Hardswish:
      break;
  }
  return layers::BatchNormActivationSpec{batch_norm(momentum), layers::Activation::Hardswish};
}

std::string kind_name(Kind kind) { return std::string(layers::type_name(spec_of(kind, 0.1))); }

std::vector<Shape> inputs_of(Kind kind, const Shape& shape) {
  return kind == Kind::AddRelu ? std::vector<Shape>{shape, shape} : std::vector<Shape>{shape};
}

// The kind's CUDA layer, through the registry.
std::unique_ptr<Layer> make(Kind kind, double momentum, const Shape& shape,
                            const LayerOptions& options) {
  return layers::make_layer(layers::Backend::Cuda, spec_of(kind, momentum), inputs_of(kind, shape),
                            options);
}

LayerOptions with(LayerOptions options, Layout layout, DType dtype) {
  options.layout = layout;
  options.input_layout = layout;
  options.dtype = dtype;
  return options;
}

std::string describe(Kind kind, const Shape& shape, Layout layout) {
  return kind_name(kind) + " " + shape.to_string() + " " + runtime::layout_name(layout);
}

// n values uniform in [low, high), rounded to bf16: what both precisions are given.
Floats bf16_values(std::int64_t n, std::uint64_t seed, float low, float high) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(low, high);
  Floats values(static_cast<std::size_t>(n));
  for (float& v : values) v = runtime::round_to_bfloat16(dist(rng));
  return values;
}

std::uint32_t bits(float value) {
  std::uint32_t b = 0;
  std::memcpy(&b, &value, sizeof(b));
  return b;
}

// Host data of one step, NCHW-ordered; every feature map already bf16-valued.
struct StepData {
  Floats x, r, dy, dx_before, dr_before, weight, bias, running_mean, running_var;
};

StepData random_step(const Shape& shape, std::uint64_t seed) {
  const std::int64_t n = shape.numel();
  const std::int64_t c = shape.c();
  StepData d;
  d.x = bf16_values(n, seed, 1.0f, 5.0f);  // mean 3: the shifted sums matter
  d.r = bf16_values(n, seed + 1, -1.0f, 1.0f);
  d.dy = bf16_values(n, seed + 2, -1.0f, 1.0f);
  d.dx_before = bf16_values(n, seed + 3, -1.0f, 1.0f);
  d.dr_before = bf16_values(n, seed + 4, -1.0f, 1.0f);
  d.weight = bf16_values(c, seed + 5, -1.5f, 1.5f);
  d.bias = bf16_values(c, seed + 6, -1.0f, 1.0f);
  d.running_mean = bf16_values(c, seed + 7, 0.5f, 1.5f);  // away from 0: relative errors mean
  d.running_var = bf16_values(c, seed + 8, 0.5f, 1.5f);   // something
  return d;
}

struct StepResults {
  Floats y, running_mean, running_var, dx, dr, grad_weight, grad_bias;
};

struct StepCase {
  Kind kind = Kind::Plain;
  Shape shape;
  Layout layout = Layout::Nchw;
  double momentum = 0.1;
  bool training = true;
  bool accumulate = false;
  bool dx_wanted = true;
};

// One forward (and with `backward` one backward) of the case's layer with feature maps of `dtype`,
// parameters F32, as an executor runs it (backward gets what backward_needs declares).
StepResults run_step(runtime::cuda::DeviceContext& context, const LayerOptions& base,
                     const StepCase& c, const StepData& d, DType dtype, bool backward = true) {
  DeviceData mem(context.compute_stream(), c.layout);
  const bool residual = c.kind == Kind::AddRelu;
  const Shape channels{c.shape.c()};
  const std::vector<TensorView> params = {mem.upload(d.weight, channels, DType::F32),
                                          mem.upload(d.bias, channels, DType::F32),
                                          mem.upload(d.running_mean, channels, DType::F32),
                                          mem.upload(d.running_var, channels, DType::F32)};
  const std::vector<TensorView> grad_params = {mem.nan(channels, DType::F32),
                                               mem.nan(channels, DType::F32)};
  const TensorView x = mem.upload(d.x, c.shape, dtype);
  const TensorView r = residual ? mem.upload(d.r, c.shape, dtype) : TensorView{};
  const TensorView y = mem.nan(c.shape, dtype);
  const auto layer = make(c.kind, c.momentum, c.shape, with(base, c.layout, dtype));
  ForwardArgs f;
  f.inputs = residual ? std::vector<TensorView>{x, r} : std::vector<TensorView>{x};
  f.params = params;
  f.output = y;
  f.training = c.training;
  layer->forward(f);
  StepResults out;
  if (backward) {
    const TensorView dy = mem.upload(d.dy, c.shape, dtype);
    const TensorView dx = !c.dx_wanted   ? TensorView{}
                          : c.accumulate ? mem.upload(d.dx_before, c.shape, dtype)
                                         : mem.nan(c.shape, dtype);
    const TensorView dr = !residual      ? TensorView{}
                          : c.accumulate ? mem.upload(d.dr_before, c.shape, dtype)
                                         : mem.nan(c.shape, dtype);
    BackwardArgs b;
    b.inputs = residual ? std::vector<TensorView>{x, TensorView{}} : std::vector<TensorView>{x};
    b.output = residual ? y : TensorView{};  // the residual chain's mask reads y
    b.grad_output = dy;
    b.grad_inputs = {GradTarget{dx, c.accumulate}};
    if (residual) b.grad_inputs.push_back(GradTarget{dr, c.accumulate});
    b.params = params;
    b.grad_params = grad_params;
    layer->backward(b);
    if (!dx.empty()) out.dx = mem.download(dx);
    if (!dr.empty()) out.dr = mem.download(dr);
    out.grad_weight = mem.download(grad_params[0]);
    out.grad_bias = mem.download(grad_params[1]);
  }
  out.y = mem.download(y);
  out.running_mean = mem.download(params[2]);
  out.running_var = mem.download(params[3]);
  return out;
}

// ---- The acceptance line -----------------------------------------------------------------------

// The batch statistics of NCHW-ordered x in double: per channel the mean and the unbiased variance.
void batch_stats(const Floats& x, const Shape& shape, std::vector<double>& mean,
                 std::vector<double>& var) {
  const std::int64_t c_count = shape.c();
  const std::int64_t plane = shape.h() * shape.w();
  const std::int64_t count = shape.n() * plane;
  mean.assign(static_cast<std::size_t>(c_count), 0.0);
  var.assign(static_cast<std::size_t>(c_count), 0.0);
  for (std::int64_t c = 0; c < c_count; ++c) {
    double sum = 0.0;
    for (std::int64_t n = 0; n < shape.n(); ++n) {
      for (std::int64_t i = 0; i < plane; ++i)
        sum += x[static_cast<std::size_t>((n * c_count + c) * plane + i)];
    }
    const double m = sum / static_cast<double>(count);
    double squares = 0.0;
    for (std::int64_t n = 0; n < shape.n(); ++n) {
      for (std::int64_t i = 0; i < plane; ++i) {
        const double d = x[static_cast<std::size_t>((n * c_count + c) * plane + i)] - m;
        squares += d * d;
      }
    }
    mean[static_cast<std::size_t>(c)] = m;
    var[static_cast<std::size_t>(c)] = squares / static_cast<double>(count - 1);
  }
}

::testing::AssertionResult within_relative(const char* what, const Floats& actual,
                                           const std::vector<double>& expected, double tolerance) {
  if (actual.size() != expected.size()) {
    return ::testing::AssertionFailure()
           << what << ": " << actual.size() << " values, expected " << expected.size();
  }
  for (std::size_t i = 0; i < actual.size(); ++i) {
    const double error = std::abs(static_cast<double>(actual[i]) - expected[i]);
    if (!(error <= tolerance * std::abs(expected[i]))) {
      return ::testing::AssertionFailure()
             << what << "[" << i << "] is " << actual[i] << ", FP32 statistics give " << expected[i]
             << " (relative error " << error / std::abs(expected[i]) << ", allowed " << tolerance
             << ")";
    }
  }
  return ::testing::AssertionSuccess();
}

// Batch-norm statistics from bf16 input match FP32 to 1e-5 relative: one training forward of each
// BF16 layer on bf16 x, its running buffers against those the FP32 statistics (in double, of the
// same bf16 values) give. Momentum 1 makes the buffers the batch mean and unbiased variance
// themselves; momentum 0.1 checks the update too.
TEST_F(BatchNormBf16Cuda, StatisticsFromBf16InputMatchFp32) {
  for (const Layout layout : kLayouts) {
    for (const Kind kind : kKinds) {
      for (const Shape& shape : shapes()) {
        for (const double momentum : {1.0, 0.1}) {
          SCOPED_TRACE(describe(kind, shape, layout) + " momentum " + std::to_string(momentum));
          StepCase c;
          c.kind = kind;
          c.shape = shape;
          c.layout = layout;
          c.momentum = momentum;
          const StepData d = random_step(shape, 100);
          const StepResults got =
              run_step(context(), options(), c, d, DType::BF16, /*backward=*/false);
          std::vector<double> mean;
          std::vector<double> var;
          batch_stats(d.x, shape, mean, var);
          for (std::size_t i = 0; i < mean.size(); ++i) {
            mean[i] = (1.0 - momentum) * d.running_mean[i] + momentum * mean[i];
            var[i] = (1.0 - momentum) * d.running_var[i] + momentum * var[i];
          }
          EXPECT_TRUE(within_relative("running_mean", got.running_mean, mean, kStatsTolerance));
          EXPECT_TRUE(within_relative("running_var", got.running_var, var, kStatsTolerance));
        }
      }
    }
  }
}

// ---- BF16 against F32 on the same values -------------------------------------------------------

// Element i of `actual` is `expected` rounded to bf16, bit for bit (exact: `rounded`
// false, then the values are equal).
::testing::AssertionResult bitwise(const char* what, const Floats& actual, const Floats& expected,
                                   bool rounded) {
  if (actual.size() != expected.size()) {
    return ::testing::AssertionFailure()
           << what << ": " << actual.size() << " elements, expected " << expected.size();
  }
  for (std::size_t i = 0; i < actual.size(); ++i) {
    const float want = rounded ? runtime::round_to_bfloat16(expected[i]) : expected[i];
    if (bits(actual[i]) != bits(want)) {
      return ::testing::AssertionFailure()
             << what << ": element " << i << " is " << actual[i] << ", expected " << want
             << " (F32: " << expected[i] << ")";
    }
  }
  return ::testing::AssertionSuccess();
}

void expect_rounded_f32(const StepResults& bf16, const StepResults& f32) {
  EXPECT_TRUE(bitwise("output", bf16.y, f32.y, /*rounded=*/true));
  EXPECT_TRUE(bitwise("dx", bf16.dx, f32.dx, /*rounded=*/true));
  EXPECT_TRUE(bitwise("dr", bf16.dr, f32.dr, /*rounded=*/true));
  EXPECT_TRUE(bitwise("running_mean", bf16.running_mean, f32.running_mean, /*rounded=*/false));
  EXPECT_TRUE(bitwise("running_var", bf16.running_var, f32.running_var, /*rounded=*/false));
  EXPECT_TRUE(bitwise("grad_weight", bf16.grad_weight, f32.grad_weight, /*rounded=*/false));
  EXPECT_TRUE(bitwise("grad_bias", bf16.grad_bias, f32.grad_bias, /*rounded=*/false));
}

// The BF16 layers read bf16 into float, run the F32 layers' arithmetic and reductions in the same
// order and round each stored element once (an accumulated target after the add): on the same
// bf16 values every feature map is the F32 layer's rounded to bf16, and the statistics, running
// buffers and parameter gradients are the F32 layer's bits. (The fused ReLU's mask could differ
// only where bn(x) is positive below bf16's smallest subnormal.)
TEST_F(BatchNormBf16Cuda, IsTheF32LayerRoundedOnce) {
  for (const Layout layout : kLayouts) {
    for (const Kind kind : kKinds) {
      for (const Shape& shape : shapes()) {
        for (const bool training : {true, false}) {
          for (const bool accumulate : {false, true}) {
            SCOPED_TRACE(describe(kind, shape, layout) + (training ? " training" : " inference") +
                         (accumulate ? " accumulate" : ""));
            StepCase c;
            c.kind = kind;
            c.shape = shape;
            c.layout = layout;
            c.training = training;
            c.accumulate = accumulate;
            const StepData d = random_step(shape, 200);
            expect_rounded_f32(run_step(context(), options(), c, d, DType::BF16),
                               run_step(context(), options(), c, d, DType::F32));
          }
        }
      }
    }
  }
}

// Parameter gradients (and the residual's) only: the paths that skip dx.
TEST_F(BatchNormBf16Cuda, WithoutInputGradientIsTheF32LayerRoundedOnce) {
  for (const Layout layout : kLayouts) {
    for (const Kind kind : kKinds) {
      for (const bool accumulate : {false, true}) {
        const Shape shape = Shape::nchw(4, 24, 7, 7);
        SCOPED_TRACE(describe(kind, shape, layout) + (accumulate ? " accumulate" : ""));
        StepCase c;
        c.kind = kind;
        c.shape = shape;
        c.layout = layout;
        c.accumulate = accumulate;
        c.dx_wanted = false;
        const StepData d = random_step(shape, 300);
        expect_rounded_f32(run_step(context(), options(), c, d, DType::BF16),
                           run_step(context(), options(), c, d, DType::F32));
      }
    }
  }
}

// Deterministic kernels: a second BF16 run gives the same bits.
TEST_F(BatchNormBf16Cuda, IsBitwiseRepeatable) {
  for (const Layout layout : kLayouts) {
    for (const Kind kind : kKinds) {
      const Shape shape = Shape::nchw(8, 64, 28, 28);
      SCOPED_TRACE(describe(kind, shape, layout));
      StepCase c;
      c.kind = kind;
      c.shape = shape;
      c.layout = layout;
      c.accumulate = true;
      const StepData d = random_step(shape, 400);
      const StepResults first = run_step(context(), options(), c, d, DType::BF16);
      const StepResults second = run_step(context(), options(), c, d, DType::BF16);
      EXPECT_TRUE(bitwise("output", second.y, first.y, /*rounded=*/false));
      EXPECT_TRUE(bitwise("dx", second.dx, first.dx, /*rounded=*/false));
      EXPECT_TRUE(bitwise("dr", second.dr, first.dr, /*rounded=*/false));
      EXPECT_TRUE(bitwise("running_var", second.running_var, first.running_var, false));
      EXPECT_TRUE(bitwise("grad_weight", second.grad_weight, first.grad_weight, false));
    }
  }
}

// ---- BF16 against the CPU FP32 reference -------------------------------------------------------

// The CPU layer (F32, NCHW, host memory) of the case on the same bf16 values.
StepResults run_cpu_step(const StepCase& c, StepData d) {
  const bool residual = c.kind == Kind::AddRelu;
  const Shape channels{c.shape.c()};
  LayerOptions options;  // F32 on the CPU
  const auto host = [](Floats& v, const Shape& shape) {
    return TensorView{v.data(), shape, DType::F32, Layout::Nchw};
  };
  const std::unique_ptr<Layer> layer = layers::make_layer(
      layers::Backend::Cpu, spec_of(c.kind, c.momentum), inputs_of(c.kind, c.shape), options);
  StepResults out;
  out.y.resize(d.x.size());
  out.grad_weight.resize(d.weight.size());
  out.grad_bias.resize(d.bias.size());
  out.dx = c.accumulate ? d.dx_before : Floats(d.x.size(), 0.0f);
  out.dr = c.accumulate ? d.dr_before : Floats(d.x.size(), 0.0f);
  // The fused CPU layer renormalizes into its backward workspace: give each pass what it asks.
  const layers::WorkspaceBytes bytes = layer->workspace();
  Floats scratch((std::max(bytes.forward, bytes.backward) + sizeof(float) - 1) / sizeof(float));
  const auto workspace = [&](std::size_t needed) {
    return needed == 0
               ? TensorView{}
               : TensorView{scratch.data(), Shape{static_cast<std::int64_t>(scratch.size())},
                            DType::F32, Layout::Nchw};
  };
  ForwardArgs f;
  f.workspace = workspace(bytes.forward);
  f.inputs = {host(d.x, c.shape)};
  if (residual) f.inputs.push_back(host(d.r, c.shape));
  f.params = {host(d.weight, channels), host(d.bias, channels), host(d.running_mean, channels),
              host(d.running_var, channels)};
  f.output = host(out.y, c.shape);
  f.training = c.training;
  layer->forward(f);
  BackwardArgs b;
  b.inputs = f.inputs;
  b.output = f.output;
  b.grad_output = host(d.dy, c.shape);
  b.grad_inputs = {GradTarget{host(out.dx, c.shape), c.accumulate}};
  if (residual) b.grad_inputs.push_back(GradTarget{host(out.dr, c.shape), c.accumulate});
  b.params = f.params;
  b.workspace = workspace(bytes.backward);
  b.grad_params = {host(out.grad_weight, channels), host(out.grad_bias, channels)};
  layer->backward(b);
  out.running_mean = d.running_mean;
  out.running_var = d.running_var;
  if (!residual) out.dr.clear();
  return out;
}

// bf16 keeps 8 significant bits: one rounding to nearest errs by at most u = 2^-8 relative.
// Element-wise: |bf16 - cpu| <= kElementRel * |cpu| + kNormAbs * max|cpu| (one rounding of a value
// the F32 path gets within 1e-5 of the tensor's largest, with a margin of 2); norm-wise:
// ||bf16 - cpu|| <= kNormRel * ||cpu|| + kNormAbs * max|cpu| (u bounds it, about u / 2 is usual).
// F32 tensors (running statistics, parameter gradients) within kF32Rel of max|cpu|, as F32 does.
constexpr double kElementRel = 2.0 / 256;
constexpr double kNormAbs = 2e-5;
constexpr double kNormRel = 1.0 / 256;
constexpr double kF32Rel = 1e-5;

::testing::AssertionResult near_cpu(const char* what, const Floats& actual, const Floats& cpu,
                                    bool bf16) {
  if (actual.size() != cpu.size()) {
    return ::testing::AssertionFailure()
           << what << ": " << actual.size() << " elements, the CPU's " << cpu.size();
  }
  double largest = 1e-3;
  double error_norm = 0.0;
  double cpu_norm = 0.0;
  for (const float v : cpu) largest = std::max(largest, std::abs(static_cast<double>(v)));
  for (std::size_t i = 0; i < cpu.size(); ++i) {
    const double e = cpu[i];
    const double error = std::abs(static_cast<double>(actual[i]) - e);
    const double allowed =
        bf16 ? kElementRel * std::abs(e) + kNormAbs * largest : kF32Rel * largest;
    if (!(error <= allowed)) {
      return ::testing::AssertionFailure() << what << ": element " << i << " is " << actual[i]
                                           << ", the CPU's " << e << " (allowed " << allowed << ")";
    }
    error_norm += error * error;
    cpu_norm += e * e;
  }
  if (bf16 && !(std::sqrt(error_norm) <= kNormRel * std::sqrt(cpu_norm) + kNormAbs * largest)) {
    return ::testing::AssertionFailure() << what << ": error norm " << std::sqrt(error_norm)
                                         << ", the CPU's norm " << std::sqrt(cpu_norm);
  }
  return ::testing::AssertionSuccess();
}

// Every BF16 layer in both layouts, training and inference, overwrite and accumulate, against the
// CPU FP32 layer run on the same bf16-rounded inputs. The fused layers' x and r take few values
// (steps of 0.5 and 0.25, exact in bf16), so that no bn(x) [+ r] lies within rounding of 0, where
// the CPU's ReLU mask could differ from the GPU's.
TEST_F(BatchNormBf16Cuda, MatchesCpuFp32OnTheSameInputs) {
  const std::vector<Shape> cpu_shapes = {Shape::nchw(2, 3, 4, 5), Shape::nchw(2, 8, 3, 3),
                                         Shape::nchw(2, 66, 5, 3), Shape::nchw(4, 96, 9, 9),
                                         Shape::nchw(16, 32, 14, 14)};
  for (const Layout layout : kLayouts) {
    for (const Kind kind : kKinds) {
      for (const Shape& shape : cpu_shapes) {
        for (const bool training : {true, false}) {
          for (const bool accumulate : {false, true}) {
            SCOPED_TRACE(describe(kind, shape, layout) + (training ? " training" : " inference") +
                         (accumulate ? " accumulate" : ""));
            StepCase c;
            c.kind = kind;
            c.shape = shape;
            c.layout = layout;
            c.training = training;
            c.accumulate = accumulate;
            StepData d = random_step(shape, 600);
            if (kind != Kind::Plain) {
              for (float& v : d.x) v = 1.0f + 0.5f * std::round(2.0f * (v - 1.0f));
              for (float& v : d.r) v = 0.25f * std::round(4.0f * v);
            }
            const StepResults got = run_step(context(), options(), c, d, DType::BF16);
            const StepResults cpu = run_cpu_step(c, d);
            EXPECT_TRUE(near_cpu("output", got.y, cpu.y, true));
            EXPECT_TRUE(near_cpu("dx", got.dx, cpu.dx, true));
            EXPECT_TRUE(near_cpu("dr", got.dr, cpu.dr, true));
            EXPECT_TRUE(near_cpu("running_mean", got.running_mean, cpu.running_mean, false));
            EXPECT_TRUE(near_cpu("running_var", got.running_var, cpu.running_var, false));
            EXPECT_TRUE(near_cpu("grad_weight", got.grad_weight, cpu.grad_weight, false));
            EXPECT_TRUE(near_cpu("grad_bias", got.grad_bias, cpu.grad_bias, false));
          }
        }
      }
    }
  }
}

// ---- Dtypes ------------------------------------------------------------------------------------

TEST_F(BatchNormBf16Cuda, TakesF32OrBf16AndViewsOfThatDtype) {
  const Shape shape = Shape::nchw(2, 8, 3, 3);
  for (const Kind kind : kKinds) {
    SCOPED_TRACE(kind_name(kind));
    EXPECT_EQ(make(kind, 0.1, shape, with(options(), Layout::Nhwc, DType::BF16))->dtype(),
              DType::BF16);
    EXPECT_THROW(make(kind, 0.1, shape, with(options(), Layout::Nchw, DType::F64)),
                 runtime::InvalidArgument);
    LayerOptions no_context = with(options(), Layout::Nchw, DType::BF16);
    no_context.cuda = nullptr;
    EXPECT_THROW(make(kind, 0.1, shape, no_context), runtime::InvalidArgument);
  }
  // F32 feature maps given to a BF16 layer.
  const StepData d = random_step(shape, 500);
  DeviceData mem(context().compute_stream(), Layout::Nchw);
  const Shape channels{shape.c()};
  ForwardArgs f;
  f.inputs = {mem.upload(d.x, shape, DType::F32)};
  f.params = {mem.upload(d.weight, channels, DType::F32), mem.upload(d.bias, channels, DType::F32),
              mem.upload(d.running_mean, channels, DType::F32),
              mem.upload(d.running_var, channels, DType::F32)};
  f.output = mem.nan(shape, DType::BF16);
  const auto layer = make(Kind::Plain, 0.1, shape, with(options(), Layout::Nchw, DType::BF16));
  EXPECT_THROW(layer->forward(f), runtime::InvalidArgument);
  VDNN_CHECK_CUDA(cudaStreamSynchronize(context().compute_stream()));
}

}  // namespace
}  // namespace vdnn::test
