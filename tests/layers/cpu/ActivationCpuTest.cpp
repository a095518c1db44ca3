// The element-wise activations (silu, gelu, sigmoid, hardswish, relu6, hardsigmoid) on the CPU
// backend: forward values against closed-form references in F32, F64 and emulated BF16, PyTorch's
// branches of the piecewise ones in both directions, finite-difference gradients, and what
// backward declares it reads.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "layers/Layer.hpp"
#include "layers/LayerSpec.hpp"
#include "layers/Registry.hpp"
#include "layers/cpu/GradCheck.hpp"
#include "runtime/BFloat16.hpp"

namespace vdnn::test {
namespace {

using layers::Activation;
using runtime::DType;
using runtime::Shape;
using runtime::TensorView;

// Closed forms of PyTorch's definitions, in double.
double sigmoid_of(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double reference(Activation a, double x) {
  switch (a) {
    case Activation::Silu:
      return x * sigmoid_of(x);
    case Activation::Gelu:
      return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    case Activation::Sigmoid:
      return sigmoid_of(x);
    case Activation::Hardswish:
      return x * std::fmin(std::fmax(x + 3.0, 0.0), 6.0) / 6.0;
    case Activation::Relu6:
      return std::fmin(std::fmax(x, 0.0), 6.0);
    case Activation::Hardsigmoid:
      return std::fmin(std::fmax(x + 3.0, 0.0), 6.0) / 6.0;
  }
  return 0.0;
}

layers::LayerSpec spec_of(Activation a) {
  switch (a) {
    case Activation::Silu:
      return layers::SiluSpec{};
    case Activation::Gelu:
      return layers::GeluSpec{};
    case Activation::Sigmoid:
      return layers::SigmoidSpec{};
    case Activation::Hardswish:
      return layers::HardswishSpec{};
    case Activation::Relu6:
      return layers::Relu6Spec{};
    case Activation::Hardsigmoid:
      return layers::HardsigmoidSpec{};
  }
  return layers::ReluSpec{};
}

constexpr Activation kAll[] = {Activation::Silu,      Activation::Gelu,  Activation::Sigmoid,
                               Activation::Hardswish, Activation::Relu6, Activation::Hardsigmoid};
// Inputs on every branch of every activation (the kinks -3, 0, 3 and 6 included).
const std::vector<double> kInputs = {-5.0, -3.0, -2.5, -1.0, -0.25, 0.0, 0.5,
                                     1.0,  2.0,  3.0,  4.5,  6.0,   7.5};

Shape shape_of(const std::vector<double>& values) {
  return Shape::nchw(1, 1, 1, static_cast<std::int64_t>(values.size()));
}

// Host elements of each storage type to and from double.
void store(double v, float& out) { out = static_cast<float>(v); }
void store(double v, double& out) { out = v; }
void store(double v, runtime::BFloat16& out) { out = runtime::to_bfloat16(static_cast<float>(v)); }
double load(float v) { return v; }
double load(double v) { return v; }
double load(runtime::BFloat16 v) { return runtime::to_float(v); }

// The layer's forward over kInputs, in `dtype` (F32, F64 or BF16), as doubles.
template <typename T>
std::vector<double> forward_values(Activation a, DType dtype) {
  const Shape shape = shape_of(kInputs);
  const auto layer =
      layers::make_layer(layers::Backend::Cpu, spec_of(a), {shape}, layers::LayerOptions{dtype, 0});
  std::vector<T> x(kInputs.size());
  for (std::size_t i = 0; i < x.size(); ++i) store(kInputs[i], x[i]);
  std::vector<T> y(x.size());
  layers::ForwardArgs args;
  args.inputs = {TensorView{x.data(), shape, dtype}};
  args.output = TensorView{y.data(), shape, dtype};
  layer->forward(args);
  std::vector<double> out;
  for (const T& v : y) out.push_back(load(v));
  return out;
}

void expect_matches_reference(Activation a, const std::vector<double>& got, double relative) {
  ASSERT_EQ(got.size(), kInputs.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double want = reference(a, kInputs[i]);
    EXPECT_NEAR(got[i], want, relative * (1.0 + std::abs(want)))
        << layers::type_name(spec_of(a)) << " at x = " << kInputs[i];
  }
}

TEST(ActivationCpu, ForwardMatchesPyTorchDefinitionsInF32AndF64) {
  for (Activation a : kAll) {
    expect_matches_reference(a, forward_values<float>(a, DType::F32), 1e-6);
    expect_matches_reference(a, forward_values<double>(a, DType::F64), 1e-14);
  }
}

TEST(ActivationCpu, Bf16EmulationRoundsTheFloatResultOnce) {
  for (Activation a : kAll) {
    const std::vector<double> bf16 = forward_values<runtime::BFloat16>(a, DType::BF16);
    const std::vector<double> f32 = forward_values<float>(a, DType::F32);
    for (std::size_t i = 0; i < bf16.size(); ++i) {
      EXPECT_EQ(bf16[i], runtime::round_to_bfloat16(static_cast<float>(f32[i])))
          << layers::type_name(spec_of(a)) << " at x = " << kInputs[i];
    }
  }
}

// dx for dy = 1 at each of `x`, in F64, with the input and the output the layer saved.
std::vector<double> backward_at(Activation a, const std::vector<double>& x) {
  const Shape shape = shape_of(x);
  const auto layer = layers::make_layer(layers::Backend::Cpu, spec_of(a), {shape},
                                        layers::LayerOptions{DType::F64, 0});
  std::vector<double> input = x;
  std::vector<double> output(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) output[i] = reference(a, x[i]);
  std::vector<double> dy(x.size(), 1.0);
  std::vector<double> dx(x.size(), 0.0);
  layers::BackwardArgs args;
  args.inputs = {TensorView{input.data(), shape, DType::F64}};
  args.output = TensorView{output.data(), shape, DType::F64};
  args.grad_output = TensorView{dy.data(), shape, DType::F64};
  args.grad_inputs = {{TensorView{dx.data(), shape, DType::F64}, false}};
  layer->backward(args);
  return dx;
}

TEST(ActivationCpu, PiecewiseBackwardsFollowPyTorchBranches) {
  EXPECT_EQ(backward_at(Activation::Hardswish, {-4.0, -3.0, 0.0, 1.5, 3.0, 5.0}),
            (std::vector<double>{0.0, -0.5, 0.5, 1.0, 1.5, 1.0}));
  // hardtanh_backward: 0 at and beyond the clamps 0 and 6.
  EXPECT_EQ(backward_at(Activation::Relu6, {-1.0, 0.0, 0.5, 5.5, 6.0, 7.0}),
            (std::vector<double>{0.0, 0.0, 1.0, 1.0, 0.0, 0.0}));
  // hardsigmoid_backward: 1/6 strictly between -3 and 3.
  EXPECT_EQ(backward_at(Activation::Hardsigmoid, {-4.0, -3.0, -2.0, 2.5, 3.0, 4.0}),
            (std::vector<double>{0.0, 0.0, 1.0 / 6.0, 1.0 / 6.0, 0.0, 0.0}));
}

TEST(ActivationCpu, BackwardReadsOutputForSigmoidAndRelu6AndInputOtherwise) {
  for (Activation a : kAll) {
    const layers::BackwardNeeds needs = layers::backward_needs(spec_of(a));
    const bool from_output = a == Activation::Sigmoid || a == Activation::Relu6;
    EXPECT_EQ(needs.output, from_output) << layers::type_name(spec_of(a));
    EXPECT_EQ(needs.input(0), !from_output) << layers::type_name(spec_of(a));
  }
}

TEST(ActivationCpu, ConfigNamesAndShapes) {
  const auto& known = layers::known_type_names();
  const Shape x = Shape::nchw(2, 3, 4, 5);
  for (Activation a : kAll) {
    const layers::LayerSpec spec = spec_of(a);
    EXPECT_NE(std::find(known.begin(), known.end(), layers::type_name(spec)), known.end());
    EXPECT_EQ(layers::infer_output_shape(spec, {x}), x);
    EXPECT_TRUE(layers::param_specs(spec, {x}).empty());
  }
  EXPECT_EQ(layers::type_name(layers::GeluSpec{}), "gelu");
  EXPECT_EQ(layers::type_name(layers::HardswishSpec{}), "hardswish");
  EXPECT_EQ(layers::type_name(layers::Relu6Spec{}), "relu6");
  EXPECT_EQ(layers::type_name(layers::HardsigmoidSpec{}), "hardsigmoid");
}

TEST(ActivationCpu, GradientsMatchFiniteDifferences) {
  for (Activation a : kAll) {
    const GradCheckCase c{spec_of(a), {Shape::nchw(2, 3, 4, 5)}};
    EXPECT_TRUE(gradients_match(c)) << layers::type_name(c.spec);
    EXPECT_TRUE(accumulate_adds(c)) << layers::type_name(c.spec);
  }
}

}  // namespace
}  // namespace vdnn::test
