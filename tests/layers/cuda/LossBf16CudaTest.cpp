// The CUDA softmax cross-entropy in BF16 (BF16 logits and logit gradients; F32 output [1] and
// grad_output) against the CPU layer in F32 on the same bf16-rounded logits, NCHW and NHWC where
// the layer takes NHWC, overwriting and accumulating the logit gradient. Tolerances (relative to
// the largest |cpu| of each tensor, see cuda_matches_cpu): the loss is FP32 throughout, so it
// differs from the CPU's only by the order of float reductions (1e-5); the logit gradient is that
// FP32 value rounded once to bf16 (also when accumulating: old + new in float, rounded once).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/layers/cuda/Bf16LayerCases.hpp"

namespace vdnn::test {
namespace {

using runtime::Shape;

class LossBf16Cuda : public Bf16LayerCuda {};

constexpr double kFloatReductions = 1e-5;
constexpr double kLossTolerance = kBf16Rounding + kFloatReductions;

TEST_F(LossBf16Cuda, SoftmaxCrossEntropyMatchesCpu) {
  std::vector<Bf16Case> cases;
  for (const Shape& logits :
       {Shape{4, 10}, Shape{1, 2}, Shape{3, 7, 1, 1}, Shape{32, 1000}, Shape{5, 257}}) {
    cases.push_back({"loss " + logits.to_string(),
                     layers::SoftmaxCrossEntropySpec{},
                     {logits},
                     kLossTolerance,
                     kLossTolerance});
  }
  // Three logit levels: the top-1 and top-5 accuracies count tied logits by index.
  cases.push_back({"loss ties",
                   layers::SoftmaxCrossEntropySpec{},
                   {Shape{64, 12}},
                   kLossTolerance,
                   kLossTolerance,
                   3});
  expect_cases_match(cases);
}

TEST_F(LossBf16Cuda, LabelSmoothingMatchesCpu) {
  for (const double eps : {0.1, 1.0}) {
    SCOPED_TRACE("label_smoothing=" + std::to_string(eps));
    layers::LayerOptions options = bf16_options();
    options.label_smoothing = eps;
    const auto layer = layers::make_layer(layers::Backend::Cuda, layers::SoftmaxCrossEntropySpec{},
                                          {Shape{32, 100}}, options);
    StepSettings settings;
    settings.norm_tolerance = kBf16NormTolerance;
    settings.label_smoothing = eps;
    EXPECT_TRUE(cuda_matches_cpu(context(), *layer, kLossTolerance, settings));
  }
}

}  // namespace
}  // namespace vdnn::test
