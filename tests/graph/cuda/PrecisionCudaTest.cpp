// bf16 on the CUDA backend (Note [Precision]): ResNet-50's first-step gradients against FP32's,
// and 2000 steps of ResNet-20 tracking FP32's loss curve and test accuracy.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "graph/SessionHarness.hpp"
#include "models/train/PrecisionTrack.hpp"
#include "runtime/Device.hpp"
#include "runtime/cuda/CudaCheck.hpp"

namespace vdnn::graph {
namespace {

class PrecisionCuda : public ::testing::Test {
 protected:
  void SetUp() override {
    if (runtime::cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  }
};

SessionOptions cuda_options() {
  SessionOptions o;
  o.backend = layers::Backend::Cuda;
  o.deterministic = true;
  o.allow_tf32 = false;  // the reference is true FP32
  // One layout for both, so that convolution weights and their gradients lie in one order (an
  // NHWC convolution keeps KRSC weights: Note [Layout]).
  o.layout = LayoutChoice::Nhwc;
  o.executor.seed = 3;
  return o;
}

// Every trainable parameter's gradient after one step on the same synthetic batch.
std::map<std::string, std::vector<float>> first_gradients(runtime::DType precision) {
  SessionOptions o = cuda_options();
  o.precision = precision;
  Session session(testing::load_config("resnet50.json", 32), o);
  Executor& executor = session.executor();
  const runtime::Shape& in = session.graph().input_shape();
  auto data = models::make_dataset("synthetic", {in.c(), in.h(), in.w(), 1000}, 3);
  std::vector<std::int32_t> labels(static_cast<std::size_t>(in.n()));
  data->next_batch(in.n(), executor.input_staging(0), labels.data());
  executor.train_step(executor.input_staging(0), labels.data(), 0.0);
  std::map<std::string, std::vector<float>> grads;
  for (const Parameter& p : executor.parameters().all()) {
    if (!p.trainable()) continue;
    std::vector<float>& g = grads[p.name];
    g.resize(static_cast<std::size_t>(p.spec.shape.numel()));
    VDNN_CHECK_CUDA(
        cudaMemcpy(g.data(), p.grad.data(), g.size() * sizeof(float), cudaMemcpyDeviceToHost));
  }
  return grads;
}

TEST_F(PrecisionCuda, ResNet50FirstStepGradientsHaveCosineSimilarityAtLeast099) {
  const auto fp32 = first_gradients(runtime::DType::F32);
  const auto bf16 = first_gradients(runtime::DType::BF16);
  ASSERT_EQ(fp32.size(), bf16.size());
  double worst = 1.0;
  std::string worst_name;
  for (const auto& [name, a] : fp32) {
    const std::vector<float>& b = bf16.at(name);
    double dot = 0.0, na = 0.0, nb = 0.0;
    for (std::size_t i = 0; i < a.size(); ++i) {
      dot += static_cast<double>(a[i]) * b[i];
      na += static_cast<double>(a[i]) * a[i];
      nb += static_cast<double>(b[i]) * b[i];
    }
    const double cosine = dot / std::sqrt(na * nb);
    EXPECT_GE(cosine, 0.99) << name;
    if (cosine < worst) {
      worst = cosine;
      worst_name = name;
    }
  }
  std::printf("lowest cosine similarity: %.5f (%s) over %zu parameters\n", worst,
              worst_name.c_str(), fp32.size());
}

TEST_F(PrecisionCuda, Bf16TracksFp32For2000StepsOfResNet20) {
  SessionOptions o;
  o.backend = layers::Backend::Cuda;
  testing::expect_bf16_tracks_fp32(o, 2000, /*check_accuracy=*/true);
}

}  // namespace
}  // namespace vdnn::graph
