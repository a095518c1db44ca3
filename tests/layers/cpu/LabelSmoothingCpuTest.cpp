// Label smoothing in the CPU softmax cross-entropy against PyTorch's definition: the cross-entropy
// against t = (1 - eps) * onehot + eps / K, and its gradient softmax - t (mean over the batch).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "layers/Layer.hpp"
#include "layers/Registry.hpp"
#include "runtime/Error.hpp"

namespace vdnn::test {
namespace {

using runtime::DType;
using runtime::Shape;

constexpr std::int64_t kSamples = 2;
constexpr std::int64_t kClasses = 3;
const std::vector<double> kLogits = {1.0, 2.0, 0.5, -1.0, 0.0, 3.0};
const std::vector<std::int32_t> kLabels = {0, 2};

std::unique_ptr<layers::Layer> make_loss(double smoothing) {
  layers::LayerOptions options{DType::F64};
  options.label_smoothing = smoothing;
  return layers::make_layer(layers::Backend::Cpu, layers::SoftmaxCrossEntropySpec{},
                            {Shape{kSamples, kClasses}}, options);
}

// -sum_j t_j log softmax_j and softmax - t of row n, written out directly.
double reference_loss(double eps, std::vector<double>* grad) {
  double total = 0.0;
  for (std::int64_t n = 0; n < kSamples; ++n) {
    const double* row = &kLogits[static_cast<std::size_t>(n * kClasses)];
    double sum = 0.0;
    for (std::int64_t j = 0; j < kClasses; ++j) sum += std::exp(row[j]);
    for (std::int64_t j = 0; j < kClasses; ++j) {
      const double target = (j == kLabels[n] ? 1.0 - eps : 0.0) + eps / kClasses;
      const double softmax = std::exp(row[j]) / sum;
      total -= target * std::log(softmax);
      (*grad)[static_cast<std::size_t>(n * kClasses + j)] = (softmax - target) / kSamples;
    }
  }
  return total / kSamples;
}

TEST(LabelSmoothingCpu, LossAndGradientFollowPyTorch) {
  for (const double eps : {0.0, 0.1, 0.5, 1.0}) {
    SCOPED_TRACE(eps);
    const auto layer = make_loss(eps);
    std::vector<double> logits = kLogits;
    std::vector<double> loss(1);
    layers::ForwardArgs f;
    f.inputs = {{logits.data(), Shape{kSamples, kClasses}, DType::F64}};
    f.output = {loss.data(), Shape{1}, DType::F64};
    f.labels = kLabels.data();
    layer->forward(f);
    std::vector<double> expected_grad(kLogits.size());
    EXPECT_NEAR(loss[0], reference_loss(eps, &expected_grad), 1e-12);

    std::vector<double> seed = {1.0};
    std::vector<double> grad(kLogits.size());
    layers::BackwardArgs b;
    b.inputs = f.inputs;
    b.grad_output = {seed.data(), Shape{1}, DType::F64};
    b.grad_inputs = {{{grad.data(), Shape{kSamples, kClasses}, DType::F64}, false}};
    b.labels = kLabels.data();
    layer->backward(b);
    for (std::size_t i = 0; i < grad.size(); ++i) EXPECT_NEAR(grad[i], expected_grad[i], 1e-12);
  }
}

TEST(LabelSmoothingCpu, SmoothingOutsideZeroToOneIsRefused) {
  EXPECT_THROW(make_loss(-0.1), runtime::InvalidArgument);
  EXPECT_THROW(make_loss(1.5), runtime::InvalidArgument);
}

}  // namespace
}  // namespace vdnn::test
