// Conv2dReluCpu (the fused conv2d -> relu, Note [Fusion]) against the unfused chain Conv2dCpu ->
// ReluCpu, bit for bit: forward output, input, weight and bias gradients, with and without bias,
// overwriting and accumulating the input gradient or skipping it, in F32 and F64; and its
// gradients against finite differences.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "layers/LayerTestSupport.hpp"
#include "layers/Registry.hpp"
#include "layers/cpu/Conv2dCpu.hpp"
#include "layers/cpu/Conv2dReluCpu.hpp"
#include "layers/cpu/GradCheck.hpp"
#include "layers/cpu/ReluCpu.hpp"
#include "runtime/Error.hpp"
#include "runtime/MemoryResource.hpp"

namespace vdnn::layers::cpu {
namespace {

using runtime::Shape;
using test::conv;
using test::ConvCase;
using test::view_of;

struct FusedCase {
  ConvCase conv;
  bool dx_wanted = true;  // false: the input gradient target is empty
};

std::vector<FusedCase> cases() {
  return {
      {{"3x3_pad1_bias", Shape{2, 3, 7, 7}, conv(4, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, true)}},
      {{"3x3_pad1", Shape{2, 3, 7, 7}, conv(4, {3, 3}, {1, 1}, {1, 1})}},
      {{"3x3_stride2_groups2_bias", Shape{2, 4, 9, 8},
        conv(6, {3, 3}, {2, 2}, {1, 1}, {1, 1}, 2, true)}},
      {{"1x1_direct_bias", Shape{3, 8, 5, 4}, conv(6, {1, 1}, {1, 1}, {0, 0}, {1, 1}, 1, true)}},
      {{"1x1_direct", Shape{3, 8, 5, 3}, conv(5, {1, 1})}},
      {{"accumulate_3x3_bias", Shape{2, 3, 8, 7}, conv(4, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, true),
        true}},
      {{"accumulate_1x1_direct", Shape{2, 4, 3, 5}, conv(6, {1, 1}), true}},
      {{"no_input_gradient_bias", Shape{2, 2, 6, 5},
        conv(3, {3, 3}, {1, 2}, {1, 1}, {1, 1}, 1, true)},
       false},
  };
}

// The tensors of one step, in T.
template <typename T>
struct Step {
  std::vector<T> x, weight, bias, dy, dx, y, dweight, dbias;
};

template <typename T>
Step<T> random_step(const ConvCase& c, const Shape& out, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const auto draw = [&rng](std::int64_t n) { return test::cast<T>(test::random_values(n, rng)); };
  const Conv2dSpec& s = c.spec;
  Step<T> d;
  d.x = draw(c.input.numel());
  d.weight = draw(s.out_channels * (c.input.c() / s.groups) * s.kernel[0] * s.kernel[1]);
  d.bias = draw(s.bias ? s.out_channels : 0);
  d.dy = draw(out.numel());
  d.dx = c.accumulate ? draw(c.input.numel()) : std::vector<T>(d.x.size(), T(0));
  d.y.assign(static_cast<std::size_t>(out.numel()), std::numeric_limits<T>::quiet_NaN());
  d.dweight.assign(d.weight.size(), std::numeric_limits<T>::quiet_NaN());
  d.dbias.assign(d.bias.size(), std::numeric_limits<T>::quiet_NaN());
  return d;
}

template <typename T>
std::vector<TensorView> param_views(Step<T>& d, const ConvCase& c) {
  std::vector<TensorView> views = {view_of(d.weight, param_specs(c.spec, {c.input})[0].shape)};
  if (c.spec.bias) views.push_back(view_of(d.bias, Shape{c.spec.out_channels}));
  return views;
}

template <typename T>
std::vector<TensorView> grad_views(Step<T>& d, const ConvCase& c) {
  std::vector<TensorView> views = {view_of(d.dweight, param_specs(c.spec, {c.input})[0].shape)};
  if (c.spec.bias) views.push_back(view_of(d.dbias, Shape{c.spec.out_channels}));
  return views;
}

// NaN-filled host memory starting on a MemoryResource::kAlignment boundary, as the executor's pools
// hand memory out: the bias gradient's vectorized row sums (Eigen) start at the first aligned
// element, so their rounding depends on where dz lies modulo the vector width.
template <typename T>
class AlignedBuffer {
 public:
  TensorView view(std::size_t bytes, const Shape& shape) {
    constexpr std::size_t kAlign = runtime::MemoryResource::kAlignment;
    storage_.assign((bytes + kAlign) / sizeof(T) + 1, std::numeric_limits<T>::quiet_NaN());
    const auto address = reinterpret_cast<std::uintptr_t>(storage_.data());
    const std::size_t skip = (kAlign - address % kAlign) % kAlign / sizeof(T);
    return TensorView{storage_.data() + skip, shape, runtime::dtype_of<T>()};
  }
  // A workspace of `bytes` bytes, empty for 0.
  TensorView workspace(std::size_t bytes) {
    if (bytes == 0) return {};
    return view(bytes, Shape{static_cast<std::int64_t>((bytes + sizeof(T) - 1) / sizeof(T))});
  }

 private:
  std::vector<T> storage_;
};

// One forward and backward of the fused layer, built through the registry.
template <typename T>
void run_fused(const FusedCase& f, Step<T>& d) {
  const ConvCase& c = f.conv;
  const auto layer = make_layer(Backend::Cpu, Conv2dReluSpec{c.spec}, {c.input},
                                LayerOptions{runtime::dtype_of<T>(), 0});
  AlignedBuffer<T> memory;
  ForwardArgs fa;
  fa.inputs = {view_of(d.x, c.input)};
  fa.params = param_views(d, c);
  fa.output = view_of(d.y, layer->output_shape());
  fa.workspace = memory.workspace(layer->workspace().forward);
  layer->forward(fa);
  // The layer masks its output gradient in place (BackwardArgs::grad_output): a pool-aligned copy,
  // as the chain's dz.
  const Shape& out = layer->output_shape();
  AlignedBuffer<T> dy_memory;
  const TensorView dy = dy_memory.view(out.bytes(runtime::dtype_of<T>()), out);
  std::copy(d.dy.begin(), d.dy.end(), dy.as<T>());
  BackwardArgs ba;
  ba.inputs = fa.inputs;
  ba.output = fa.output;
  ba.grad_output = dy;
  ba.grad_inputs = {GradTarget{f.dx_wanted ? view_of(d.dx, c.input) : TensorView{}, c.accumulate}};
  ba.params = fa.params;
  ba.grad_params = grad_views(d, c);
  ba.workspace = memory.workspace(layer->workspace().backward);
  layer->backward(ba);
}

// Conv2dCpu -> ReluCpu, forward and backward, as an executor runs them.
template <typename T>
void run_chain(const FusedCase& f, Step<T>& d) {
  const ConvCase& c = f.conv;
  const LayerOptions options{runtime::dtype_of<T>(), 0};
  Conv2dCpu conv_layer(c.spec, {c.input}, options);
  ReluCpu relu(ReluSpec{}, {conv_layer.output_shape()}, options);
  const Shape& out = conv_layer.output_shape();
  std::vector<T> z(static_cast<std::size_t>(out.numel()));
  AlignedBuffer<T> dz_memory;
  const TensorView dz = dz_memory.view(out.bytes(runtime::dtype_of<T>()), out);
  AlignedBuffer<T> memory;
  ForwardArgs fa;
  fa.inputs = {view_of(d.x, c.input)};
  fa.params = param_views(d, c);
  fa.output = view_of(z, out);
  fa.workspace = memory.workspace(conv_layer.workspace().forward);
  conv_layer.forward(fa);
  ForwardArgs ra;
  ra.inputs = {view_of(z, out)};
  ra.output = view_of(d.y, out);
  relu.forward(ra);

  BackwardArgs rb;
  rb.inputs = {TensorView{}};
  rb.output = view_of(d.y, out);
  rb.grad_output = view_of(d.dy, out);
  rb.grad_inputs = {GradTarget{dz, false}};
  relu.backward(rb);
  BackwardArgs cb;
  cb.inputs = fa.inputs;
  cb.grad_output = dz;
  cb.grad_inputs = {GradTarget{f.dx_wanted ? view_of(d.dx, c.input) : TensorView{}, c.accumulate}};
  cb.params = fa.params;
  cb.grad_params = grad_views(d, c);
  cb.workspace = memory.workspace(conv_layer.workspace().backward);
  conv_layer.backward(cb);
}

template <typename T>
::testing::AssertionResult bitwise_equal(const char* what, const std::vector<T>& fused,
                                         const std::vector<T>& chain) {
  if (fused.size() != chain.size()) {
    return ::testing::AssertionFailure()
           << what << ": " << fused.size() << " elements, expected " << chain.size();
  }
  for (std::size_t i = 0; i < fused.size(); ++i) {
    if (std::memcmp(&fused[i], &chain[i], sizeof(T)) != 0) {
      return ::testing::AssertionFailure() << what << ": element " << i << " is " << fused[i]
                                           << ", the unfused chain's " << chain[i];
    }
  }
  return ::testing::AssertionSuccess();
}

template <typename T>
void expect_fused_is_the_chain() {
  std::uint64_t seed = 11;
  for (const FusedCase& f : cases()) {
    SCOPED_TRACE(f.conv.name);
    const Shape out = infer_output_shape(f.conv.spec, {f.conv.input});
    Step<T> fused = random_step<T>(f.conv, out, seed);
    Step<T> chain = random_step<T>(f.conv, out, seed++);
    run_fused(f, fused);
    run_chain(f, chain);
    EXPECT_TRUE(bitwise_equal("output", fused.y, chain.y));
    EXPECT_TRUE(bitwise_equal("grad input", fused.dx, chain.dx));
    EXPECT_TRUE(bitwise_equal("grad weight", fused.dweight, chain.dweight));
    EXPECT_TRUE(bitwise_equal("grad bias", fused.dbias, chain.dbias));
    // The ReLU did clip: some outputs are 0 and some positive.
    std::size_t zeros = 0;
    for (const T v : fused.y) zeros += v == T(0) ? 1 : 0;
    EXPECT_GT(zeros, 0u);
    EXPECT_LT(zeros, fused.y.size());
  }
}

TEST(Conv2dReluCpu, IsBitwiseTheUnfusedChainF64) { expect_fused_is_the_chain<double>(); }

TEST(Conv2dReluCpu, IsBitwiseTheUnfusedChainF32) { expect_fused_is_the_chain<float>(); }

TEST(Conv2dReluCpu, KeepsTheConvolutionsShapeParametersAndWorkspace) {
  const ConvCase c{"3x3", Shape{2, 3, 7, 7}, conv(4, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, true)};
  const Conv2dReluSpec spec{c.spec};
  const LayerOptions options{DType::F32, 0};
  const Conv2dReluCpu fused(spec, {c.input}, options);
  const Conv2dCpu plain(c.spec, {c.input}, options);
  EXPECT_EQ(type_name(fused.spec()), "conv2d_relu");
  EXPECT_EQ(fused.output_shape(), plain.output_shape());
  const std::vector<ParamSpec> fused_params = param_specs(spec, {c.input});
  const std::vector<ParamSpec> plain_params = param_specs(c.spec, {c.input});
  ASSERT_EQ(fused_params.size(), plain_params.size());
  for (std::size_t i = 0; i < plain_params.size(); ++i) {
    EXPECT_EQ(fused_params[i].name, plain_params[i].name);
    EXPECT_EQ(fused_params[i].shape, plain_params[i].shape);
    EXPECT_EQ(fused_params[i].init, plain_params[i].init);
    EXPECT_EQ(fused_params[i].fan, plain_params[i].fan);
  }
  EXPECT_EQ(fused.workspace().forward, plain.workspace().forward);
  EXPECT_EQ(fused.workspace().backward, plain.workspace().backward);
  const BackwardNeeds needs = backward_needs(spec);
  EXPECT_TRUE(needs.inputs && needs.output);
}

TEST(Conv2dReluCpu, ANanStaysNan) {
  const ConvCase c{"3x3", Shape{1, 2, 5, 5}, conv(3, {3, 3}, {1, 1}, {1, 1})};
  const FusedCase f{c};
  Step<float> d = random_step<float>(c, infer_output_shape(c.spec, {c.input}), 3);
  d.x[0] = std::numeric_limits<float>::quiet_NaN();  // read by pixel (0, 0) of every channel
  run_fused(f, d);
  const std::int64_t plane = 25;
  for (std::int64_t k = 0; k < 3; ++k) {
    const auto first = static_cast<std::size_t>(k * plane);
    EXPECT_TRUE(std::isnan(d.y[first])) << k;
    EXPECT_FALSE(std::isnan(d.y[first + 24])) << k;  // pixel (4, 4) does not read x[0]
  }
}

TEST(Conv2dReluCpu, GradientsMatchFiniteDifferences) {
  Conv2dSpec strided = conv(4, {3, 2}, {2, 1}, {1, 1}, {1, 1}, 2, true);
  for (const test::GradCheckCase& c :
       {test::GradCheckCase{Conv2dReluSpec{conv(3, {3, 3}, {1, 1}, {1, 1})}, {Shape{2, 2, 5, 5}}},
        test::GradCheckCase{Conv2dReluSpec{strided}, {Shape{2, 4, 6, 5}}},
        test::GradCheckCase{Conv2dReluSpec{conv(3, {1, 1}, {1, 1}, {0, 0}, {1, 1}, 1, true)},
                            {Shape{2, 4, 3, 3}}}}) {
    EXPECT_TRUE(test::gradients_match(c));
    EXPECT_TRUE(test::accumulate_adds(c));
  }
}

}  // namespace
}  // namespace vdnn::layers::cpu
