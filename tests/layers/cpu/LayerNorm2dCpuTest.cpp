// layernorm2d on the CPU backend: forward against a double-precision reference of the per-pixel
// normalization over channels, finite-difference gradients of the input, weight and bias,
// accumulation, an unchanged recompute, emulated bf16, and the shapes and parameters it takes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "layers/Layer.hpp"
#include "layers/LayerSpec.hpp"
#include "layers/Registry.hpp"
#include "layers/cpu/GradCheck.hpp"
#include "runtime/BFloat16.hpp"
#include "runtime/Error.hpp"

namespace vdnn::test {
namespace {

using runtime::DType;
using runtime::Shape;
using runtime::TensorView;

layers::LayerNorm2dSpec layer_norm(double eps) {
  layers::LayerNorm2dSpec spec;
  spec.eps = eps;
  return spec;
}

// y of an NCHW tensor, straight from the definition, in double.
std::vector<double> reference(const Shape& s, const std::vector<double>& x,
                              const std::vector<double>& weight, const std::vector<double>& bias,
                              double eps) {
  std::vector<double> y(x.size());
  const std::int64_t pixels = s.h() * s.w();
  const auto at = [&](std::int64_t n, std::int64_t c, std::int64_t p) {
    return static_cast<std::size_t>((n * s.c() + c) * pixels + p);
  };
  for (std::int64_t n = 0; n < s.n(); ++n) {
    for (std::int64_t p = 0; p < pixels; ++p) {
      double mean = 0.0;
      for (std::int64_t c = 0; c < s.c(); ++c) mean += x[at(n, c, p)] / static_cast<double>(s.c());
      double var = 0.0;
      for (std::int64_t c = 0; c < s.c(); ++c) {
        var += (x[at(n, c, p)] - mean) * (x[at(n, c, p)] - mean) / static_cast<double>(s.c());
      }
      for (std::int64_t c = 0; c < s.c(); ++c) {
        const auto k = static_cast<std::size_t>(c);
        y[at(n, c, p)] = (x[at(n, c, p)] - mean) / std::sqrt(var + eps) * weight[k] + bias[k];
      }
    }
  }
  return y;
}

// Values of every sign and size, not symmetric about their mean.
std::vector<double> ramp(std::int64_t count) {
  std::vector<double> v(static_cast<std::size_t>(count));
  for (std::size_t i = 0; i < v.size(); ++i) {
    v[i] = std::sin(0.7 * static_cast<double>(i)) * 3.0 + 0.1 * static_cast<double>(i % 5);
  }
  return v;
}

TEST(LayerNorm2dCpu, NormalizesEachPixelOverTheChannelsInF32) {
  const Shape s = Shape::nchw(2, 5, 3, 4);
  const std::vector<double> x = ramp(s.numel());
  const std::vector<double> weight = {1.0, -0.5, 2.0, 0.25, 1.5};
  const std::vector<double> bias = {0.0, 0.1, -0.2, 0.3, -1.0};
  const std::vector<double> expected = reference(s, x, weight, bias, 1e-6);
  const auto layer = layers::make_layer(layers::Backend::Cpu, layer_norm(1e-6), {s},
                                        layers::LayerOptions{DType::F32, 0});
  std::vector<float> xf(x.begin(), x.end());
  std::vector<float> wf(weight.begin(), weight.end());
  std::vector<float> bf(bias.begin(), bias.end());
  std::vector<float> y(xf.size());
  layers::ForwardArgs args;
  args.inputs = {TensorView{xf.data(), s, DType::F32}};
  args.params = {TensorView{wf.data(), Shape{5}, DType::F32},
                 TensorView{bf.data(), Shape{5}, DType::F32}};
  args.output = TensorView{y.data(), s, DType::F32};
  layer->forward(args);
  for (std::size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], expected[i], 2e-6) << i;
  // A recompute changes nothing and gives the same output.
  const std::vector<float> first = y;
  args.recompute = true;
  layer->forward(args);
  EXPECT_EQ(y, first);
}

// The F32 layer's output on `x`, as a layer of `dtype` (F32 or BF16) gives it, read as floats.
std::vector<float> forward_as(DType dtype, const Shape& s, std::vector<float> x) {
  const auto layer = layers::make_layer(layers::Backend::Cpu, layer_norm(1e-5), {s},
                                        layers::LayerOptions{dtype, 0});
  std::vector<float> weight(static_cast<std::size_t>(s.c()), 1.5f);
  std::vector<float> bias(weight.size(), -0.25f);
  std::vector<runtime::BFloat16> xb(x.size()), yb(x.size());
  runtime::to_bfloat16(x.data(), xb.data(), x.size());
  std::vector<float> y(x.size());
  const bool bf16 = dtype == DType::BF16;
  layers::ForwardArgs args;
  args.inputs = {bf16 ? TensorView{xb.data(), s, dtype} : TensorView{x.data(), s, dtype}};
  args.params = {TensorView{weight.data(), Shape{s.c()}, DType::F32},
                 TensorView{bias.data(), Shape{s.c()}, DType::F32}};
  args.output = bf16 ? TensorView{yb.data(), s, dtype} : TensorView{y.data(), s, dtype};
  layer->forward(args);
  if (bf16) runtime::to_float(yb.data(), y.data(), y.size());
  return y;
}

TEST(LayerNorm2dCpu, EmulatedBf16IsTheF32ResultOnBf16InputsRoundedOnce) {
  const Shape s = Shape::nchw(2, 8, 2, 3);
  const std::vector<double> ramped = ramp(s.numel());
  std::vector<float> x;
  for (const double v : ramped) x.push_back(runtime::round_to_bfloat16(static_cast<float>(v)));
  const std::vector<float> f32 = forward_as(DType::F32, s, x);
  const std::vector<float> bf16 = forward_as(DType::BF16, s, x);
  for (std::size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(bf16[i], runtime::round_to_bfloat16(f32[i])) << i;
  }
}

TEST(LayerNorm2dCpu, GradientsMatchFiniteDifferences) {
  for (const Shape& s : {Shape::nchw(2, 3, 4, 5), Shape::nchw(3, 7, 1, 1), Shape::nchw(1, 2, 3, 2),
                         Shape::nchw(2, 16, 2, 3)}) {
    for (const double eps : {1e-6, 0.5}) {
      const GradCheckCase c{layer_norm(eps), {s}};
      EXPECT_TRUE(gradients_match(c)) << s.to_string() << " eps " << eps;
      EXPECT_TRUE(accumulate_adds(c)) << s.to_string() << " eps " << eps;
    }
  }
}

TEST(LayerNorm2dCpu, TakesFeatureMapsAndAPositiveEpsWithAWeightAndBiasPerChannel) {
  const Shape x = Shape::nchw(2, 3, 4, 5);
  EXPECT_EQ(layers::infer_output_shape(layer_norm(1e-6), {x}), x);
  EXPECT_THROW(layers::infer_output_shape(layer_norm(1e-6), {Shape{2, 3}}), runtime::ShapeError);
  EXPECT_THROW(layers::infer_output_shape(layer_norm(0.0), {x}), runtime::ShapeError);
  EXPECT_THROW(layers::infer_output_shape(layer_norm(1e-6), {x, x}), runtime::ShapeError);
  const std::vector<layers::ParamSpec> params = layers::param_specs(layer_norm(1e-6), {x});
  ASSERT_EQ(params.size(), 2u);
  EXPECT_EQ(params[0].name, "weight");
  EXPECT_EQ(params[0].shape, Shape{3});
  EXPECT_EQ(params[0].init, layers::Init::Ones);
  EXPECT_EQ(params[1].name, "bias");
  EXPECT_EQ(params[1].init, layers::Init::Zeros);
  EXPECT_TRUE(layers::backward_needs(layer_norm(1e-6)).inputs);
  EXPECT_FALSE(layers::backward_needs(layer_norm(1e-6)).output);
  EXPECT_EQ(layers::type_name(layer_norm(1e-6)), "layernorm2d");
  EXPECT_EQ(layers::LayerNorm2dSpec{}.eps, 1e-5);  // torch.nn.LayerNorm's default
}

}  // namespace
}  // namespace vdnn::test
