// Divergence checks of the training loop: a non-finite loss, and (--check-gradients) the
// parameter gradient nearest the loss that is not finite.
#include "models/train/Divergence.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

#include "graph/SessionHarness.hpp"

namespace vdnn::models {
namespace {

TEST(Divergence, ANonFiniteLossNamesTheIteration) {
  EXPECT_NO_THROW(check_loss_finite(2.3, 0, 10, 0.1));
  try {
    check_loss_finite(std::numeric_limits<double>::infinity(), 3, 10, 0.1);
    FAIL() << "expected Diverged";
  } catch (const Diverged& e) {
    EXPECT_EQ(e.iteration(), 3);
    EXPECT_NE(std::string(e.what()).find("infinite at iteration 4/10"), std::string::npos);
  }
}

TEST(Divergence, ANonFiniteGradientNamesTheParameterNearestTheLoss) {
  graph::SessionOptions options;
  options.executor.seed = 3;
  graph::Session session(testing::load_config("resnet20-cifar.json", 2), options);
  std::vector<std::int32_t> labels(2, 1);
  graph::Executor& executor = session.executor();
  // Images of our own: the staging slot's memory starts as whatever the allocator gave it.
  std::fill_n(static_cast<float*>(executor.input_staging()), session.graph().input_shape().numel(),
              0.5f);
  executor.train_step(executor.input_staging(), labels.data(), 0.01);
  std::vector<float> scratch;
  EXPECT_NO_THROW(check_gradients_finite(session, 0, 5, scratch));
  // The CPU backend's device memory is host memory: spoil two gradients by hand.
  const auto& params = executor.parameters().all();
  auto named = [&](const std::string& name) {
    return std::find_if(params.begin(), params.end(),
                        [&](const graph::Parameter& p) { return p.name == name; });
  };
  static_cast<float*>(named("conv1.weight")->grad.data())[0] =
      std::numeric_limits<float>::quiet_NaN();
  static_cast<float*>(named("fc.bias")->grad.data())[1] = std::numeric_limits<float>::infinity();
  try {
    check_gradients_finite(session, 1, 5, scratch);
    FAIL() << "expected Diverged";
  } catch (const Diverged& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("fc.bias is the nearest to the loss of 2 non-finite"), std::string::npos)
        << what;
    EXPECT_NE(what.find("iteration 2/5"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace vdnn::models
