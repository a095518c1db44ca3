// Forward values of the CPU element-wise, joining, normalization and loss layers, in F32 and F64;
// gradients are covered by GradCheckTest.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <numeric>
#include <type_traits>
#include <vector>

#include "layers/Layer.hpp"
#include "layers/LayerSpec.hpp"
#include "layers/Registry.hpp"
#include "runtime/Error.hpp"

namespace vdnn::test {
namespace {

using layers::Layer;
using runtime::Shape;
using runtime::TensorView;

template <typename T>
TensorView view_of(std::vector<T>& values, const Shape& shape) {
  return {values.data(), shape, runtime::dtype_of<T>()};
}

template <typename T>
std::unique_ptr<Layer> make(const layers::LayerSpec& spec, const std::vector<Shape>& shapes,
                            std::uint64_t seed = 0) {
  layers::LayerOptions options;
  options.dtype = runtime::dtype_of<T>();
  options.seed = seed;
  return layers::make_layer(layers::Backend::Cpu, spec, shapes, options);
}

// Host tensors for one forward call; params follow param_specs() order.
template <typename T>
struct ForwardRun {
  std::vector<std::vector<T>> inputs;
  std::vector<std::vector<T>> params{};
  bool training = true;
  bool recompute = false;
  std::uint64_t step = 0;
  std::vector<std::int32_t> labels{};
  layers::LossStats stats{};

  std::vector<T> run(Layer& layer) {
    layers::ForwardArgs args;
    for (std::size_t k = 0; k < inputs.size(); ++k) {
      args.inputs.push_back(view_of(inputs[k], layer.input_shapes()[k]));
    }
    const auto specs = layers::param_specs(layer.spec(), layer.input_shapes());
    for (std::size_t j = 0; j < params.size(); ++j) {
      args.params.push_back(view_of(params[j], specs[j].shape));
    }
    std::vector<T> output(static_cast<std::size_t>(layer.output_shape().numel()));
    args.output = view_of(output, layer.output_shape());
    args.training = training;
    args.recompute = recompute;
    args.step = step;
    args.labels = labels.empty() ? nullptr : labels.data();
    args.loss_stats = &stats;
    layer.forward(args);
    return output;
  }
};

template <typename T>
class ElementwiseCpu : public ::testing::Test {
 protected:
  static constexpr double kTolerance = std::is_same_v<T, float> ? 1e-5 : 1e-12;

  static void expect_near(const std::vector<T>& got, const std::vector<double>& want) {
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      EXPECT_NEAR(static_cast<double>(got[i]), want[i], kTolerance * (1.0 + std::abs(want[i])))
          << "element " << i;
    }
  }
};
using ScalarTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(ElementwiseCpu, ScalarTypes);

TYPED_TEST(ElementwiseCpu, ReluZeroesNegatives) {
  const auto layer = make<TypeParam>(layers::ReluSpec{}, {Shape::nchw(1, 1, 2, 3)});
  ForwardRun<TypeParam> run{{{-2, -0.5, 0, 0.25, 3, -1}}};
  this->expect_near(run.run(*layer), {0, 0, 0, 0.25, 3, 0});
}

TYPED_TEST(ElementwiseCpu, AddSumsEveryInput) {
  const Shape x = Shape::nchw(1, 2, 1, 2);
  const auto layer = make<TypeParam>(layers::AddSpec{}, {x, x, x});
  ForwardRun<TypeParam> run{{{1, 2, 3, 4}, {10, 20, 30, 40}, {-0.5, 0.5, -1, 1}}};
  this->expect_near(run.run(*layer), {10.5, 22.5, 32, 45});
}

TYPED_TEST(ElementwiseCpu, ConcatStacksChannelsPerSample) {
  const auto layer =
      make<TypeParam>(layers::ConcatSpec{}, {Shape::nchw(2, 1, 1, 2), Shape::nchw(2, 2, 1, 2)});
  ForwardRun<TypeParam> run{{{1, 2, 3, 4}, {10, 11, 12, 13, 20, 21, 22, 23}}};
  EXPECT_EQ(layer->output_shape(), Shape::nchw(2, 3, 1, 2));
  this->expect_near(run.run(*layer), {1, 2, 10, 11, 12, 13, 3, 4, 20, 21, 22, 23});
}

TYPED_TEST(ElementwiseCpu, FlattenKeepsRowMajorOrder) {
  const auto layer = make<TypeParam>(layers::FlattenSpec{}, {Shape::nchw(2, 3, 1, 2)});
  ForwardRun<TypeParam> run{{std::vector<TypeParam>(12)}};
  std::iota(run.inputs[0].begin(), run.inputs[0].end(), TypeParam(1));
  EXPECT_EQ(layer->output_shape(), (Shape{2, 6}));
  this->expect_near(run.run(*layer), {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
}

TYPED_TEST(ElementwiseCpu, BackwardSkipsEmptyGradTargetsAndAccumulates) {
  const Shape x = Shape::nchw(1, 1, 1, 3);
  const auto layer = make<TypeParam>(layers::AddSpec{}, {x, x});
  std::vector<TypeParam> dy = {1, 2, 3};
  std::vector<TypeParam> dx = {10, 20, 30};
  layers::BackwardArgs args;
  args.inputs.resize(2);
  args.grad_output = view_of(dy, x);
  args.grad_inputs = {{TensorView{}, false}, {view_of(dx, x), true}};
  layer->backward(args);
  this->expect_near(dx, {11, 22, 33});
}

layers::DropoutSpec dropout(double p) {
  layers::DropoutSpec spec;
  spec.p = p;
  return spec;
}

TYPED_TEST(ElementwiseCpu, DropoutInferenceIsIdentity) {
  const auto layer = make<TypeParam>(dropout(0.5), {Shape::nchw(1, 1, 2, 2)}, 42);
  ForwardRun<TypeParam> run{{{1, -2, 3, -4}}};
  run.training = false;
  this->expect_near(run.run(*layer), {1, -2, 3, -4});
}

TYPED_TEST(ElementwiseCpu, DropoutDropsAboutPAndScalesTheRest) {
  constexpr double kP = 0.3;
  const Shape x = Shape::nchw(10, 10, 10, 100);
  const auto layer = make<TypeParam>(dropout(kP), {x}, 42);
  ForwardRun<TypeParam> run{{std::vector<TypeParam>(static_cast<std::size_t>(x.numel()), 1)}};
  run.step = 5;
  const std::vector<TypeParam> y = run.run(*layer);
  std::int64_t dropped = 0;
  for (TypeParam v : y) {
    if (v == TypeParam(0)) {
      ++dropped;
    } else {
      ASSERT_NEAR(static_cast<double>(v), 1.0 / (1.0 - kP), this->kTolerance);
    }
  }
  EXPECT_NEAR(static_cast<double>(dropped) / static_cast<double>(x.numel()), kP, 0.01);

  EXPECT_EQ(run.run(*layer), y) << "same (seed, step) must give the same mask";
  run.step = 6;
  EXPECT_NE(run.run(*layer), y) << "another step must give another mask";
  const auto reseeded = make<TypeParam>(dropout(kP), {x}, 43);
  run.step = 5;
  EXPECT_NE(run.run(*reseeded), y) << "another seed must give another mask";

  // Backward regenerates the forward mask: with x = 1 and dy = 1, dx equals y.
  std::vector<TypeParam> dy(y.size(), 1);
  std::vector<TypeParam> dx(y.size());
  layers::BackwardArgs args;
  args.inputs.resize(1);
  args.grad_output = view_of(dy, x);
  args.grad_inputs = {{view_of(dx, x), false}};
  args.step = 5;
  layer->backward(args);
  EXPECT_EQ(dx, y);
}

TEST(ElementwiseCpuDropout, MaskIsTheSameInF32AndF64) {
  const Shape x = Shape::nchw(2, 3, 8, 8);
  const auto single = make<float>(dropout(0.5), {x}, 9);
  const auto twice = make<double>(dropout(0.5), {x}, 9);
  ForwardRun<float> run_single{{std::vector<float>(static_cast<std::size_t>(x.numel()), 1)}};
  ForwardRun<double> run_double{{std::vector<double>(static_cast<std::size_t>(x.numel()), 1)}};
  const std::vector<float> a = run_single.run(*single);
  const std::vector<double> b = run_double.run(*twice);
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i] == 0.0F, b[i] == 0.0) << i;
}

TYPED_TEST(ElementwiseCpu, BatchNormTrainingNormalizesWithBatchStatsAndUpdatesRunningStats) {
  const auto layer = make<TypeParam>(layers::BatchNorm2dSpec{}, {Shape::nchw(2, 2, 1, 3)});
  // Channel 0 holds 1..6 (mean 3.5, biased variance 35/12, unbiased 3.5); channel 1 holds
  // -1, -1, -1, 1, 1, 1 (mean 0, biased variance 1, unbiased 1.2).
  ForwardRun<TypeParam> run{{{1, 2, 3, -1, -1, -1, 4, 5, 6, 1, 1, 1}},
                            {{1, 2}, {0, 0.5}, {0, 0}, {1, 1}}};
  const std::vector<TypeParam> y = run.run(*layer);
  const double inv0 = 1.0 / std::sqrt(35.0 / 12.0 + 1e-5);
  const double inv1 = 1.0 / std::sqrt(1.0 + 1e-5);
  std::vector<double> want;
  for (double v : {1.0, 2.0, 3.0}) want.push_back((v - 3.5) * inv0);
  for (int i = 0; i < 3; ++i) want.push_back(-2.0 * inv1 + 0.5);
  for (double v : {4.0, 5.0, 6.0}) want.push_back((v - 3.5) * inv0);
  for (int i = 0; i < 3; ++i) want.push_back(2.0 * inv1 + 0.5);
  this->expect_near(y, want);
  this->expect_near(run.params[2], {0.35, 0.0});
  this->expect_near(run.params[3], {0.9 + 0.35, 0.9 + 0.12});
}

TYPED_TEST(ElementwiseCpu, BatchNormInferenceUsesRunningStatsAndLeavesThem) {
  const auto layer = make<TypeParam>(layers::BatchNorm2dSpec{}, {Shape::nchw(1, 2, 1, 2)});
  ForwardRun<TypeParam> run{{{3, 5, 0, 1}}, {{2, 1}, {1, -1}, {1, -1}, {4, 0.25}}};
  run.training = false;
  const std::vector<TypeParam> y = run.run(*layer);
  const double inv0 = 1.0 / std::sqrt(4.0 + 1e-5);
  const double inv1 = 1.0 / std::sqrt(0.25 + 1e-5);
  this->expect_near(y,
                    {2.0 * 2.0 * inv0 + 1.0, 2.0 * 4.0 * inv0 + 1.0, inv1 - 1.0, 2.0 * inv1 - 1.0});
  this->expect_near(run.params[2], {1, -1});
  this->expect_near(run.params[3], {4, 0.25});
}

// Note [Recomputation]: the same bits again, and the running buffers updated only once.
TYPED_TEST(ElementwiseCpu, BatchNormRecomputeRepeatsTheOutputAndLeavesRunningStats) {
  const auto layer = make<TypeParam>(layers::BatchNorm2dSpec{}, {Shape::nchw(2, 2, 1, 3)});
  ForwardRun<TypeParam> run{{{1, 2, 3, -1, -1, -1, 4, 5, 6, 1, 1, 1}},
                            {{1, 2}, {0, 0.5}, {0, 0}, {1, 1}}};
  const std::vector<TypeParam> first = run.run(*layer);
  const std::vector<std::vector<TypeParam>> params = run.params;
  run.recompute = true;
  EXPECT_EQ(run.run(*layer), first);
  EXPECT_EQ(run.params, params);
}

TYPED_TEST(ElementwiseCpu, BatchNormTrainingRejectsOneValuePerChannel) {
  const auto layer = make<TypeParam>(layers::BatchNorm2dSpec{}, {Shape::nchw(1, 2, 1, 1)});
  ForwardRun<TypeParam> run{{{1, 2}}, {{1, 1}, {0, 0}, {0, 0}, {1, 1}}};
  EXPECT_THROW(run.run(*layer), runtime::InvalidArgument);
  run.training = false;
  EXPECT_NO_THROW(run.run(*layer));
}

TYPED_TEST(ElementwiseCpu, SoftmaxCrossEntropyLossAndAccuracyWithFirstMaxTies) {
  const auto layer = make<TypeParam>(layers::SoftmaxCrossEntropySpec{}, {Shape{3, 3}});
  // Row 0 is right; row 1 ties at index 0 against label 1 (wrong); row 2 ties at index 0 against
  // label 0 (right).
  ForwardRun<TypeParam> run{{{1, 2, 3, 0, 0, 0, 5, 5, 1}}};
  run.labels = {2, 1, 0};
  const double e = std::exp(1.0);
  const double loss = (std::log(e + e * e + e * e * e) - 3.0 + std::log(3.0) +
                       std::log(2.0 * std::exp(5.0) + e) - 5.0) /
                      3.0;
  this->expect_near(run.run(*layer), {loss});
  EXPECT_NEAR(run.stats.loss, loss, this->kTolerance);
  EXPECT_DOUBLE_EQ(run.stats.accuracy, 2.0 / 3.0);
  EXPECT_EQ(run.stats.top5, 1.0) << "with 3 classes every label is among the top 5";
}

TYPED_TEST(ElementwiseCpu, SoftmaxCrossEntropyTop5CountsLogitsAboveTheLabel) {
  const auto layer = make<TypeParam>(layers::SoftmaxCrossEntropySpec{}, {Shape{6, 8}});
  const std::vector<TypeParam> distinct = {9, 8, 7, 6, 5, 4, 3, 2};
  const std::vector<TypeParam> tied = {3, 5, 5, 0, 5, 5, 5, 5};
  ForwardRun<TypeParam> run{{{}}};
  for (const auto* row : {&distinct, &distinct, &distinct, &tied, &tied, &tied}) {
    run.inputs[0].insert(run.inputs[0].end(), row->begin(), row->end());
  }
  // Distinct logits: the label in 5th place (in the top 5), in 6th (out) and in 1st. Tied logits:
  // an equal logit ranks above the label only at a lower index, so labels 6, 7 and 4 have 4, 5
  // and 2 logits above them (by the opposite rule, 1, 0 and 3).
  run.labels = {4, 5, 0, 6, 7, 4};
  run.run(*layer);
  EXPECT_DOUBLE_EQ(run.stats.accuracy, 1.0 / 6.0);
  EXPECT_DOUBLE_EQ(run.stats.top5, 4.0 / 6.0);
}

TYPED_TEST(ElementwiseCpu, SoftmaxCrossEntropyRanksNanAboveEveryLogit) {
  const auto layer = make<TypeParam>(layers::SoftmaxCrossEntropySpec{}, {Shape{3, 6}});
  const TypeParam nan = std::numeric_limits<TypeParam>::quiet_NaN();
  // Row 0: a NaN before the label's maximum; row 2: after it; row 1: the label's logit is NaN,
  // so all 5 others rank above it.
  ForwardRun<TypeParam> run{{{nan, 5, 4, 3, 2, 1, 5, nan, 4, 3, 2, 1, 1, 2, 3, 4, 5, nan}}};
  run.labels = {1, 1, 4};
  run.run(*layer);
  EXPECT_EQ(run.stats.accuracy, 0.0);
  EXPECT_DOUBLE_EQ(run.stats.top5, 2.0 / 3.0);
}

TYPED_TEST(ElementwiseCpu, SoftmaxCrossEntropyIsStableForLargeLogits) {
  const auto layer = make<TypeParam>(layers::SoftmaxCrossEntropySpec{}, {Shape{2, 3}});
  ForwardRun<TypeParam> run{{{1000, 0, -1000, 1000, 0, -1000}}};
  run.labels = {0, 2};
  this->expect_near(run.run(*layer), {1000.0});
}

TYPED_TEST(ElementwiseCpu, SoftmaxCrossEntropyRejectsBadLabels) {
  const Shape logits{2, 3};
  const auto layer = make<TypeParam>(layers::SoftmaxCrossEntropySpec{}, {logits});
  ForwardRun<TypeParam> run{{{1, 2, 3, 4, 5, 6}}};
  EXPECT_THROW(run.run(*layer), runtime::InvalidArgument) << "missing labels";
  for (const auto& labels : std::vector<std::vector<std::int32_t>>{{0, 3}, {-1, 0}}) {
    run.labels = labels;
    EXPECT_THROW(run.run(*layer), runtime::InvalidArgument);
  }
  std::vector<TypeParam> dy = {1};
  std::vector<TypeParam> dx(6);
  layers::BackwardArgs args;
  args.inputs = {view_of(run.inputs[0], logits)};
  args.grad_output = view_of(dy, Shape{1});
  args.grad_inputs = {{view_of(dx, logits), false}};
  args.labels = run.labels.data();
  EXPECT_THROW(layer->backward(args), runtime::InvalidArgument);
}

}  // namespace
}  // namespace vdnn::test
