// Conv2dCpu against a direct nested-loop convolution in double: forward, data gradient, weight and
// bias gradients over a table of geometries, in F64 and F32.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "layers/LayerTestSupport.hpp"
#include "layers/Registry.hpp"
#include "layers/cpu/Conv2dCpu.hpp"

namespace vdnn::layers::cpu {
namespace {

using runtime::Shape;
using test::cast;
using test::conv;
using test::ConvCase;
using test::ParamLayerData;
using test::random_param_layer_data;
using test::view_of;

std::vector<ConvCase> cases() {
  return {
      {"3x3_pad1_bias", Shape{2, 3, 7, 7}, conv(4, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, true)},
      {"3x3_stride2_pad1", Shape{1, 4, 9, 8}, conv(5, {3, 3}, {2, 2}, {1, 1})},
      {"3x3_dilation2_bias", Shape{2, 3, 10, 9}, conv(2, {3, 3}, {1, 1}, {2, 2}, {2, 2}, 1, true)},
      {"groups2_bias", Shape{2, 4, 6, 6}, conv(6, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 2, true)},
      {"depthwise", Shape{2, 5, 7, 7}, conv(5, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 5)},
      {"depthwise_x2_stride2", Shape{1, 3, 8, 8}, conv(6, {3, 3}, {2, 2}, {1, 1}, {1, 1}, 3, true)},
      {"depthwise_7x7_pad3_bias", Shape{2, 8, 9, 9},
       conv(8, {7, 7}, {1, 1}, {3, 3}, {1, 1}, 8, true)},
      {"kernel_1x3_stride_1x2", Shape{2, 3, 5, 9}, conv(4, {1, 3}, {1, 2}, {0, 2})},
      {"kernel_5x2_bias", Shape{1, 2, 9, 6}, conv(3, {5, 2}, {2, 1}, {2, 1}, {1, 1}, 1, true)},
      {"1x1_direct_bias", Shape{3, 8, 5, 4}, conv(6, {1, 1}, {1, 1}, {0, 0}, {1, 1}, 1, true)},
      {"1x1_stride2", Shape{2, 4, 7, 7}, conv(3, {1, 1}, {2, 2})},
      {"taps_reading_only_padding", Shape{2, 2, 1, 4}, conv(3, {3, 3}, {1, 2}, {1, 1})},
      {"kernel_covers_input", Shape{2, 2, 5, 5}, conv(3, {5, 5})},
      {"groups_dilation_stride_mixed", Shape{2, 6, 11, 10},
       conv(4, {3, 2}, {2, 3}, {2, 1}, {2, 3}, 2, true)},
      {"accumulate_3x3_stride2", Shape{2, 3, 8, 7}, conv(4, {3, 3}, {2, 2}, {1, 1}), true},
      {"accumulate_1x1_direct_groups", Shape{2, 4, 3, 5},
       conv(6, {1, 1}, {1, 1}, {0, 0}, {1, 1}, 2, true), true},
  };
}

// The textbook definition, one multiply-add per (output, tap) pair, in double.
ParamLayerData reference(const ConvCase& c, std::uint64_t seed) {
  const Conv2dSpec& s = c.spec;
  const Shape out = infer_output_shape(s, {c.input});
  const std::int64_t n_img = c.input.n(), cin = c.input.c(), h = c.input.h(), w = c.input.w();
  const std::int64_t cout = s.out_channels, oh_n = out.h(), ow_n = out.w();
  const std::int64_t cin_g = cin / s.groups, cout_g = cout / s.groups;
  const std::int64_t kh = s.kernel[0], kw = s.kernel[1];

  ParamLayerData d = random_param_layer_data(c.input.numel(), cout * cin_g * kh * kw,
                                             s.bias ? cout : 0, out.numel(), c.accumulate, seed);

  for (std::int64_t n = 0; n < n_img; ++n) {
    for (std::int64_t co = 0; co < cout; ++co) {
      const std::int64_t g = co / cout_g;
      for (std::int64_t oh = 0; oh < oh_n; ++oh) {
        for (std::int64_t ow = 0; ow < ow_n; ++ow) {
          const std::size_t yi =
              static_cast<std::size_t>(((n * cout + co) * oh_n + oh) * ow_n + ow);
          double acc = s.bias ? d.bias[static_cast<std::size_t>(co)] : 0.0;
          if (s.bias) d.dbias[static_cast<std::size_t>(co)] += d.dy[yi];
          for (std::int64_t ci = 0; ci < cin_g; ++ci) {
            for (std::int64_t ki = 0; ki < kh; ++ki) {
              for (std::int64_t kj = 0; kj < kw; ++kj) {
                const std::int64_t ih = oh * s.stride[0] - s.padding[0] + ki * s.dilation[0];
                const std::int64_t iw = ow * s.stride[1] - s.padding[1] + kj * s.dilation[1];
                if (ih < 0 || ih >= h || iw < 0 || iw >= w) continue;
                const auto xi =
                    static_cast<std::size_t>(((n * cin + g * cin_g + ci) * h + ih) * w + iw);
                const auto wi = static_cast<std::size_t>(((co * cin_g + ci) * kh + ki) * kw + kj);
                acc += d.weight[wi] * d.x[xi];
                d.dx[xi] += d.weight[wi] * d.dy[yi];
                d.dweight[wi] += d.x[xi] * d.dy[yi];
              }
            }
          }
          d.y[yi] = acc;
        }
      }
    }
  }
  return d;
}

// Largest |actual - expected| must stay within tolerance * max(1, largest |expected|).
template <typename T>
void expect_close(const std::vector<T>& actual, const std::vector<double>& expected,
                  double tolerance, const char* what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  double scale = 1.0;
  double worst = 0.0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    scale = std::max(scale, std::abs(expected[i]));
    worst = std::max(worst, std::abs(static_cast<double>(actual[i]) - expected[i]));
  }
  EXPECT_LE(worst, tolerance * scale) << what;
}

// Runs forward and backward of `layer` on the case's data at precision T, giving backward only
// what backward_needs() declares, and compares every result with the reference.
template <typename T>
void check_against_reference(Layer& layer, const ConvCase& c, const ParamLayerData& d,
                             double tolerance) {
  const Shape out = layer.output_shape();
  const std::vector<ParamSpec> params = param_specs(c.spec, {c.input});
  std::vector<T> x = cast<T>(d.x), weight = cast<T>(d.weight), bias = cast<T>(d.bias);
  std::vector<T> dy = cast<T>(d.dy), dx = cast<T>(d.dx_before);
  std::vector<T> y(d.y.size(), T(-7));
  if (!c.accumulate) std::fill(dx.begin(), dx.end(), T(-7));  // must be overwritten
  std::vector<T> dweight(d.weight.size(), T(-7)), dbias(d.bias.size(), T(-7));
  std::vector<T> workspace(layer.workspace_bytes() / sizeof(T));

  ForwardArgs fwd;
  fwd.inputs = {view_of(x, c.input)};
  fwd.params = {view_of(weight, params[0].shape)};
  if (c.spec.bias) fwd.params.push_back(view_of(bias, params[1].shape));
  fwd.output = view_of(y, out);
  fwd.workspace = view_of(workspace, Shape{static_cast<std::int64_t>(workspace.size())});
  layer.forward(fwd);
  expect_close(y, d.y, tolerance, "output");

  BackwardArgs bwd;
  const BackwardNeeds needs = backward_needs(c.spec);
  bwd.inputs = {needs.inputs ? fwd.inputs[0] : TensorView{}};
  bwd.output = needs.output ? fwd.output : TensorView{};
  bwd.grad_output = view_of(dy, out);
  bwd.grad_inputs = {GradTarget{view_of(dx, c.input), c.accumulate}};
  bwd.params = fwd.params;
  bwd.grad_params = {view_of(dweight, params[0].shape)};
  if (c.spec.bias) bwd.grad_params.push_back(view_of(dbias, params[1].shape));
  bwd.workspace = fwd.workspace;
  layer.backward(bwd);
  expect_close(dx, d.dx, tolerance, "grad input");
  expect_close(dweight, d.dweight, tolerance, "grad weight");
  expect_close(dbias, d.dbias, tolerance, "grad bias");
}

template <typename T>
void check_all_cases(double tolerance) {
  std::uint64_t seed = 1;
  for (const ConvCase& c : cases()) {
    SCOPED_TRACE(c.name);
    Conv2dCpu layer(c.spec, {c.input}, LayerOptions{runtime::dtype_of<T>(), 0});
    check_against_reference<T>(layer, c, reference(c, seed++), tolerance);
  }
}

TEST(Conv2dCpu, MatchesReferenceF64) { check_all_cases<double>(1e-12); }

TEST(Conv2dCpu, MatchesReferenceF32) { check_all_cases<float>(2e-5); }

TEST(Conv2dCpu, RegistryBuildsTheSameLayer) {
  const ConvCase c = cases()[1];
  auto layer = make_layer(Backend::Cpu, c.spec, {c.input}, LayerOptions{DType::F64, 0});
  check_against_reference<double>(*layer, c, reference(c, 99), 1e-12);
}

TEST(Conv2dCpu, WorkspaceHoldsOneImageAndGroupOfColumns) {
  // 2 input channels per group, 3x2 taps, 4x3 output pixels.
  const Conv2dCpu grouped(conv(4, {3, 2}, {2, 2}, {1, 0}, {1, 1}, 2), {Shape{5, 4, 8, 6}},
                          LayerOptions{DType::F32, 0});
  EXPECT_EQ(grouped.workspace_bytes(), 2u * 6u * 12u * 4u);
  const Conv2dCpu in_double(conv(4, {3, 2}, {2, 2}, {1, 0}, {1, 1}, 2), {Shape{5, 4, 8, 6}},
                            LayerOptions{DType::F64, 0});
  EXPECT_EQ(in_double.workspace_bytes(), 2u * 6u * 12u * 8u);
  // A 1x1, stride-1, unpadded convolution multiplies the input itself.
  const Conv2dCpu pointwise(conv(4, {1, 1}), {Shape{5, 4, 8, 6}}, LayerOptions{DType::F32, 0});
  EXPECT_EQ(pointwise.workspace_bytes(), 0u);
}

TEST(Conv2dCpu, RejectsTooSmallWorkspace) {
  const Shape in{1, 2, 5, 5};
  Conv2dCpu layer(conv(3, {3, 3}, {1, 1}, {1, 1}), {in}, LayerOptions{DType::F64, 0});
  std::vector<double> x(50), weight(54), y(75), workspace(layer.workspace_bytes() / 8 - 1);
  ForwardArgs args;
  args.inputs = {view_of(x, in)};
  args.params = {view_of(weight, Shape{3, 2, 3, 3})};
  args.output = view_of(y, layer.output_shape());
  args.workspace = view_of(workspace, Shape{static_cast<std::int64_t>(workspace.size())});
  EXPECT_THROW(layer.forward(args), runtime::InvalidArgument);
  args.workspace = TensorView{};
  EXPECT_THROW(layer.forward(args), runtime::InvalidArgument);
}

TEST(Conv2dCpu, EmptyInputGradientStillGivesParameterGradients) {
  const ConvCase c{"no_grad_input", Shape{2, 2, 6, 5},
                   conv(3, {3, 3}, {1, 2}, {1, 1}, {1, 1}, 1, true)};
  const ParamLayerData d = reference(c, 7);
  Conv2dCpu layer(c.spec, {c.input}, LayerOptions{DType::F64, 0});
  std::vector<double> x = d.x, weight = d.weight, bias = d.bias, dy = d.dy;
  std::vector<double> dweight(weight.size()), dbias(bias.size());
  std::vector<double> workspace(layer.workspace_bytes() / sizeof(double));
  BackwardArgs args;
  args.inputs = {view_of(x, c.input)};
  args.grad_output = view_of(dy, layer.output_shape());
  args.grad_inputs = {GradTarget{}};
  args.params = {view_of(weight, Shape{3, 2, 3, 3}), view_of(bias, Shape{3})};
  args.grad_params = {view_of(dweight, Shape{3, 2, 3, 3}), view_of(dbias, Shape{3})};
  args.workspace = view_of(workspace, Shape{static_cast<std::int64_t>(workspace.size())});
  layer.backward(args);
  expect_close(dweight, d.dweight, 1e-12, "grad weight");
  expect_close(dbias, d.dbias, 1e-12, "grad bias");
}

}  // namespace
}  // namespace vdnn::layers::cpu
