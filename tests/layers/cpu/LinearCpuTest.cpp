// LinearCpu against direct loops in double: y = x W^T + b, the input gradient (overwrite and
// accumulate) and the weight and bias gradients, in F64 and F32.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "layers/LayerTestSupport.hpp"
#include "layers/cpu/LinearCpu.hpp"

namespace vdnn::layers::cpu {
namespace {

using runtime::Shape;
using test::cast;
using test::expect_close;
using test::ParamLayerData;
using test::random_param_layer_data;
using test::view_of;

struct LinearCase {
  std::string name;
  Shape input;
  std::int64_t out_features = 0;
  bool bias = true;
  bool accumulate = false;
};

std::vector<LinearCase> cases() {
  return {
      {"matrix_bias", Shape{3, 5}, 4, true, false},
      {"matrix_no_bias", Shape{4, 7}, 3, false, false},
      {"single_sample", Shape{1, 6}, 2, true, false},
      {"feature_map_flattened", Shape{2, 3, 2, 2}, 5, false, false},
      {"wide_bias", Shape{5, 64}, 33, true, false},
      {"accumulate_bias", Shape{3, 4, 1, 2}, 6, true, true},
  };
}

ParamLayerData reference(const LinearCase& c, std::uint64_t seed) {
  const std::int64_t batch = c.input.n(), in = c.input.sample_numel(), out = c.out_features;
  ParamLayerData d = random_param_layer_data(batch * in, out * in, c.bias ? out : 0, batch * out,
                                             c.accumulate, seed);
  for (std::int64_t n = 0; n < batch; ++n) {
    for (std::int64_t o = 0; o < out; ++o) {
      const auto yi = static_cast<std::size_t>(n * out + o);
      d.y[yi] = c.bias ? d.bias[static_cast<std::size_t>(o)] : 0.0;
      if (c.bias) d.dbias[static_cast<std::size_t>(o)] += d.dy[yi];
      for (std::int64_t i = 0; i < in; ++i) {
        const auto xi = static_cast<std::size_t>(n * in + i);
        const auto wi = static_cast<std::size_t>(o * in + i);
        d.y[yi] += d.x[xi] * d.weight[wi];
        d.dx[xi] += d.dy[yi] * d.weight[wi];
        d.dweight[wi] += d.dy[yi] * d.x[xi];
      }
    }
  }
  return d;
}

template <typename T>
void check_against_reference(const LinearCase& c, const ParamLayerData& d, double tolerance) {
  LinearSpec spec;
  spec.out_features = c.out_features;
  spec.bias = c.bias;
  LinearCpu layer(spec, {c.input}, LayerOptions{runtime::dtype_of<T>(), 0});
  const Shape weight_shape{c.out_features, c.input.sample_numel()};
  const Shape bias_shape{c.out_features};
  std::vector<T> x = cast<T>(d.x), weight = cast<T>(d.weight), bias = cast<T>(d.bias);
  std::vector<T> dy = cast<T>(d.dy), dx = cast<T>(d.dx_before), y(d.y.size(), T(-7));
  if (!c.accumulate) std::fill(dx.begin(), dx.end(), T(-7));  // must be overwritten
  std::vector<T> dweight(weight.size(), T(-7)), dbias(bias.size(), T(-7));

  ForwardArgs fwd;
  fwd.inputs = {view_of(x, c.input)};
  fwd.params = {view_of(weight, weight_shape)};
  if (c.bias) fwd.params.push_back(view_of(bias, bias_shape));
  fwd.output = view_of(y, layer.output_shape());
  layer.forward(fwd);
  expect_close(y, d.y, tolerance, "output");

  BackwardArgs bwd;
  bwd.inputs = fwd.inputs;  // backward_needs: inputs only
  bwd.grad_output = view_of(dy, layer.output_shape());
  bwd.grad_inputs = {GradTarget{view_of(dx, c.input), c.accumulate}};
  bwd.params = fwd.params;
  bwd.grad_params = {view_of(dweight, weight_shape)};
  if (c.bias) bwd.grad_params.push_back(view_of(dbias, bias_shape));
  layer.backward(bwd);
  expect_close(dx, d.dx, tolerance, "grad input");
  expect_close(dweight, d.dweight, tolerance, "grad weight");
  expect_close(dbias, d.dbias, tolerance, "grad bias");
}

template <typename T>
void check_all_cases(double tolerance) {
  std::uint64_t seed = 1;
  for (const LinearCase& c : cases()) {
    SCOPED_TRACE(c.name);
    check_against_reference<T>(c, reference(c, seed++), tolerance);
  }
}

TEST(LinearCpu, MatchesReferenceF64) { check_all_cases<double>(1e-12); }

TEST(LinearCpu, MatchesReferenceF32) { check_all_cases<float>(1e-5); }

TEST(LinearCpu, EmptyInputGradientStillGivesParameterGradients) {
  const LinearCase c{"no_grad_input", Shape{2, 3}, 2, true, false};
  const ParamLayerData d = reference(c, 5);
  LinearSpec spec;
  spec.out_features = 2;
  LinearCpu layer(spec, {c.input}, LayerOptions{DType::F64, 0});
  std::vector<double> x = d.x, weight = d.weight, bias = d.bias, dy = d.dy;
  std::vector<double> dweight(6), dbias(2);
  BackwardArgs bwd;
  bwd.inputs = {view_of(x, c.input)};
  bwd.grad_output = view_of(dy, Shape{2, 2});
  bwd.grad_inputs = {GradTarget{}};
  bwd.params = {view_of(weight, Shape{2, 3}), view_of(bias, Shape{2})};
  bwd.grad_params = {view_of(dweight, Shape{2, 3}), view_of(dbias, Shape{2})};
  layer.backward(bwd);
  expect_close(dweight, d.dweight, 1e-12, "grad weight");
  expect_close(dbias, d.dbias, 1e-12, "grad bias");
}

TEST(LinearCpu, RejectsMismatchedViews) {
  LinearSpec spec;
  spec.out_features = 2;
  LinearCpu layer(spec, {Shape{2, 3}}, LayerOptions{DType::F32, 0});
  std::vector<float> x(6), weight(6), bias(2), y(4);
  ForwardArgs fwd;
  fwd.inputs = {view_of(x, Shape{2, 3})};
  fwd.params = {view_of(weight, Shape{2, 3})};  // the bias view is missing
  fwd.output = view_of(y, Shape{2, 2});
  EXPECT_THROW(layer.forward(fwd), runtime::InvalidArgument);
  fwd.params.push_back(view_of(bias, Shape{2}));
  fwd.output = view_of(y, Shape{4});
  EXPECT_THROW(layer.forward(fwd), runtime::InvalidArgument);
  std::vector<double> y64(4);
  fwd.output = TensorView{y64.data(), Shape{2, 2}, DType::F64};
  EXPECT_THROW(layer.forward(fwd), runtime::InvalidArgument);
}

}  // namespace
}  // namespace vdnn::layers::cpu
