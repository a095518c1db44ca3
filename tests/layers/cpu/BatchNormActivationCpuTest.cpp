// BatchNormActivationCpu (the fused batchnorm2d -> silu / relu6 / hardswish, Note [Fusion]) against
// the unfused chain BatchNorm2dCpu -> ActivationCpu, bit for bit: output, running buffers, input
// and parameter gradients, training and inference, overwriting and accumulating, in F32 and F64;
// and its gradients against finite differences.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "layers/ActivationMath.hpp"
#include "layers/LayerTestSupport.hpp"
#include "layers/Registry.hpp"
#include "layers/cpu/GradCheck.hpp"

namespace vdnn::layers::cpu {
namespace {

using runtime::Shape;
using test::Aligned;

constexpr Activation kFused[] = {Activation::Silu, Activation::Relu6, Activation::Hardswish};
const Shape kShape{3, 4, 5, 3};

// The unfused activation layer's spec.
LayerSpec activation_spec(Activation a) {
  return with_activation(
      a, [](auto kind) -> LayerSpec { return ActivationSpec<decltype(kind)::value>{}; });
}

BatchNormActivationSpec fused_spec(Activation a) {
  BatchNormActivationSpec spec;
  spec.bn.momentum = 0.3;
  spec.activation = a;
  return spec;
}

// Everything one step reads and writes, in T. x has a mean of 1.5 and weight up to 3 in size, so
// bn(x) reaches past relu6's and hardswish's kinks.
template <typename T>
struct Step {
  Step(std::uint64_t seed, bool accumulate) : Step(std::mt19937_64(seed), accumulate) {}

  std::vector<TensorView> params() {
    const Shape channels{kShape.c()};
    return {weight.view(channels), bias.view(channels), running_mean.view(channels),
            running_var.view(channels)};
  }
  std::vector<TensorView> grad_params() {
    return {dweight.view(Shape{kShape.c()}), dbias.view(Shape{kShape.c()})};
  }

 private:
  static std::vector<T> draw(std::mt19937_64& rng, std::int64_t count, double scale,
                             double offset) {
    std::vector<T> v = test::cast<T>(test::random_values(count, rng));
    for (T& e : v) e = static_cast<T>(e * scale + offset);
    return v;
  }
  static std::vector<T> zeros(std::int64_t count) {
    return std::vector<T>(static_cast<std::size_t>(count), T(0));
  }
  Step(std::mt19937_64 rng, bool accumulate)
      : x(draw(rng, kShape.numel(), 1.0, 1.5)),
        weight(draw(rng, kShape.c(), 3.0, 0.0)),
        bias(draw(rng, kShape.c(), 1.0, 0.0)),
        running_mean(draw(rng, kShape.c(), 0.5, 1.0)),
        running_var(draw(rng, kShape.c(), 0.5, 1.0)),
        dy(draw(rng, kShape.numel(), 1.0, 0.0)),
        dx(accumulate ? draw(rng, kShape.numel(), 1.0, 0.0) : zeros(kShape.numel())) {}

 public:
  Aligned<T> x, weight, bias, running_mean, running_var, dy, dx;
  Aligned<T> y{zeros(kShape.numel())};
  Aligned<T> dweight{zeros(kShape.c())};
  Aligned<T> dbias{zeros(kShape.c())};
  // The unfused chain's bn(x) or the fused layer's workspace, and the unfused chain's gradient g.
  Aligned<T> scratch{zeros(kShape.numel())};
  Aligned<T> g{zeros(kShape.numel())};
};

template <typename T>
LayerOptions options_of() {
  LayerOptions options;
  options.dtype = runtime::dtype_of<T>();
  return options;
}

// One forward and backward of the fused layer.
template <typename T>
void run_fused(Activation a, Step<T>& s, bool training, bool accumulate) {
  const auto layer = make_layer(Backend::Cpu, fused_spec(a), {kShape}, options_of<T>());
  ForwardArgs f;
  f.inputs = {s.x.view(kShape)};
  f.params = s.params();
  f.output = s.y.view(kShape);
  f.training = training;
  layer->forward(f);
  BackwardArgs b;
  b.inputs = f.inputs;
  b.params = f.params;
  b.grad_output = s.dy.view(kShape);
  b.grad_inputs = {GradTarget{s.dx.view(kShape), accumulate}};
  b.grad_params = s.grad_params();
  b.workspace = s.scratch.view(kShape);
  layer->backward(b);
}

// The same step through batchnorm2d -> activation.
template <typename T>
void run_unfused(Activation a, Step<T>& s, bool training, bool accumulate) {
  const auto bn = make_layer(Backend::Cpu, fused_spec(a).bn, {kShape}, options_of<T>());
  const auto act = make_layer(Backend::Cpu, activation_spec(a), {kShape}, options_of<T>());
  const TensorView z = s.scratch.view(kShape);
  ForwardArgs f;
  f.inputs = {s.x.view(kShape)};
  f.params = s.params();
  f.output = z;
  f.training = training;
  bn->forward(f);
  act->forward({{z}, {}, s.y.view(kShape), {}, training});
  BackwardArgs ab;
  ab.inputs = {z};
  ab.output = s.y.view(kShape);
  ab.grad_output = s.dy.view(kShape);
  ab.grad_inputs = {GradTarget{s.g.view(kShape), false}};
  act->backward(ab);
  BackwardArgs bb;
  bb.inputs = f.inputs;
  bb.params = f.params;
  bb.grad_output = s.g.view(kShape);
  bb.grad_inputs = {GradTarget{s.dx.view(kShape), accumulate}};
  bb.grad_params = s.grad_params();
  bn->backward(bb);
}

template <typename T>
void expect_fused_is_the_chain() {
  for (const Activation a : kFused) {
    for (const bool training : {true, false}) {
      for (const bool accumulate : {false, true}) {
        SCOPED_TRACE(std::string(type_name(fused_spec(a))) + (training ? " training" : "") +
                     (accumulate ? " accumulate" : ""));
        Step<T> fused(11, accumulate);
        Step<T> chain(11, accumulate);
        run_fused(a, fused, training, accumulate);
        run_unfused(a, chain, training, accumulate);
        EXPECT_EQ(fused.y.values(), chain.y.values());
        EXPECT_EQ(fused.dx.values(), chain.dx.values());
        EXPECT_EQ(fused.dweight.values(), chain.dweight.values());
        EXPECT_EQ(fused.dbias.values(), chain.dbias.values());
        EXPECT_EQ(fused.running_mean.values(), chain.running_mean.values());
        EXPECT_EQ(fused.running_var.values(), chain.running_var.values());
      }
    }
  }
}

TEST(BatchNormActivationCpu, IsBitwiseTheUnfusedChainF32) { expect_fused_is_the_chain<float>(); }

TEST(BatchNormActivationCpu, IsBitwiseTheUnfusedChainF64) { expect_fused_is_the_chain<double>(); }

TEST(BatchNormActivationCpu, GradientsMatchFiniteDifferences) {
  for (const Activation a : kFused) {
    for (const bool training : {true, false}) {
      SCOPED_TRACE(std::string(type_name(fused_spec(a))) + (training ? " training" : ""));
      test::GradCheckCase c{fused_spec(a), {Shape{2, 3, 4, 3}}, training};
      EXPECT_TRUE(test::gradients_match(c));
      EXPECT_TRUE(test::accumulate_adds(c));
    }
  }
}

TEST(BatchNormActivationCpu, ReadsOnlyItsInputInBackward) {
  for (const Activation a : kFused) {
    const BackwardNeeds needs = backward_needs(fused_spec(a));
    EXPECT_TRUE(needs.inputs);
    EXPECT_FALSE(needs.output);
    const auto layer = make_layer(Backend::Cpu, fused_spec(a), {kShape}, LayerOptions{});
    EXPECT_EQ(layer->workspace().backward, kShape.bytes(runtime::DType::F32));
  }
}

}  // namespace
}  // namespace vdnn::layers::cpu
