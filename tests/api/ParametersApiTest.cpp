// The public API's parameters and gradients: PyTorch's names and shapes, get and set by name
// (restoring a trainer's weights restores its losses bitwise), gradients read and replaced between
// backward and the update, and typed errors; on CUDA, channels-last weights read in PyTorch's
// order.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <numeric>
#include <set>
#include <stdexcept>
#include <string>
#include <vdnn/Error.hpp>
#include <vdnn/Trainer.hpp>
#include <vector>

#include "api/TinyNetwork.hpp"

namespace {

std::size_t numel(const vdnn::ParameterInfo& p) {
  return static_cast<std::size_t>(
      std::accumulate(p.shape.begin(), p.shape.end(), std::int64_t{1}, std::multiplies<>()));
}

// Every parameter's (or gradient's) values, in named_parameters() order.
std::vector<std::vector<float>> values(vdnn::Trainer& trainer, bool gradients = false) {
  std::vector<std::vector<float>> out;
  for (const vdnn::ParameterInfo& p : trainer.named_parameters()) {
    if (gradients && !p.trainable) continue;
    std::vector<float>& v = out.emplace_back(numel(p));
    if (gradients) {
      trainer.get_gradient(p.name, v.data(), v.size());
    } else {
      trainer.get_parameter(p.name, v.data(), v.size());
    }
  }
  return out;
}

void set_values(vdnn::Trainer& trainer, const std::vector<std::vector<float>>& all) {
  const std::vector<vdnn::ParameterInfo> params = trainer.named_parameters();
  for (std::size_t i = 0; i < params.size(); ++i) {
    trainer.set_parameter(params[i].name, all[i].data(), all[i].size());
  }
}

// Every trainable gradient replaced by zeros (an on_gradients callback).
void zero_gradients(vdnn::Trainer& t) {
  for (const vdnn::ParameterInfo& p : t.named_parameters()) {
    if (!p.trainable) continue;
    const std::vector<float> zeros(numel(p), 0.0F);
    t.set_gradient(p.name, zeros.data(), zeros.size());
  }
}

TEST(ParametersApi, NamesAndShapesArePyTorchs) {
  vdnn::Trainer trainer(vdnn::testing::tiny_resnet("tiny"), vdnn::testing::tiny_cpu_config());
  const std::vector<vdnn::ParameterInfo> params = trainer.named_parameters();
  ASSERT_FALSE(params.empty());
  EXPECT_EQ(params.front().shape.size(), 4U);  // the first convolution's KCRS weight
  EXPECT_NE(params.front().name.find(".weight"), std::string::npos);
  std::set<std::string> names;
  int buffers = 0;
  for (const vdnn::ParameterInfo& p : params) {
    EXPECT_TRUE(names.insert(p.name).second) << p.name;
    if (p.name.find("running_mean") != std::string::npos) {
      EXPECT_FALSE(p.trainable);
      ++buffers;
    }
  }
  EXPECT_GT(buffers, 0);
}

TEST(ParametersApi, SettingTheWeightsBackRestoresTheLossesBitwise) {
  const vdnn::Network network = vdnn::testing::tiny_resnet("tiny");
  vdnn::Trainer reference(network, vdnn::testing::tiny_cpu_config());
  const double first = reference.step().loss;
  vdnn::Trainer changed(network, vdnn::testing::tiny_cpu_config());
  const std::vector<std::vector<float>> initial = values(changed);
  std::vector<std::vector<float>> halved = initial;
  for (auto& v : halved) {
    for (float& x : v) x *= 0.5F;
  }
  set_values(changed, halved);
  EXPECT_EQ(values(changed), halved);
  vdnn::Trainer other(network, vdnn::testing::tiny_cpu_config());
  set_values(other, halved);
  EXPECT_NE(other.step().loss, first);  // the set weights are the ones trained
  set_values(changed, initial);
  EXPECT_EQ(changed.step().loss, first);
}

TEST(ParametersApi, GradientsAreReadAndReplacedBeforeTheUpdate) {
  vdnn::TrainerConfig config = vdnn::testing::tiny_cpu_config();
  config.momentum = 0.0;
  config.weight_decay = 0.0;
  config.learning_rate = 0.125;  // a power of two: p - lr * g is exact in the check below
  const vdnn::Network network = vdnn::testing::tiny_resnet("tiny");
  // Read only: the update is p - lr * g with the gradients the callback saw.
  vdnn::Trainer reading(network, config);
  std::vector<std::vector<float>> seen;
  reading.on_gradients([&](vdnn::Trainer& t) { seen = values(t, /*gradients=*/true); });
  const std::vector<std::vector<float>> before = values(reading);
  reading.step();
  EXPECT_EQ(values(reading, true), seen);  // still there after the step
  const std::vector<vdnn::ParameterInfo> params = reading.named_parameters();
  const std::vector<std::vector<float>> after = values(reading);
  std::size_t g = 0;
  bool moved = false;
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (!params[i].trainable) continue;
    for (std::size_t k = 0; k < before[i].size(); ++k) {
      ASSERT_FLOAT_EQ(after[i][k], before[i][k] - 0.125F * seen[g][k]) << params[i].name;
      moved = moved || after[i][k] != before[i][k];
    }
    ++g;
  }
  EXPECT_TRUE(moved);
  // Replaced by zeros: nothing trainable moves.
  vdnn::Trainer zeroing(network, config);
  zeroing.on_gradients(zero_gradients);
  const std::vector<std::vector<float>> start = values(zeroing);
  zeroing.step();
  const std::vector<std::vector<float>> end = values(zeroing);
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (params[i].trainable) EXPECT_EQ(end[i], start[i]) << params[i].name;
  }
}

TEST(ParametersApi, ACallbackThatThrowsStopsTheStepBeforeTheUpdate) {
  vdnn::Trainer trainer(vdnn::testing::tiny_resnet("tiny"), vdnn::testing::tiny_cpu_config());
  trainer.on_gradients([](vdnn::Trainer&) { throw std::runtime_error("clip failed"); });
  const std::vector<std::vector<float>> before = values(trainer);
  EXPECT_THROW(trainer.step(), std::exception);
  // The trainable parameters are untouched; batch norm's running statistics moved in forward.
  const std::vector<vdnn::ParameterInfo> params = trainer.named_parameters();
  const std::vector<std::vector<float>> after = values(trainer);
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (params[i].trainable) EXPECT_EQ(after[i], before[i]) << params[i].name;
  }
}

TEST(ParametersApi, BadNamesCountsAndBuffersAreInvalidArguments) {
  vdnn::Trainer trainer(vdnn::testing::tiny_resnet("tiny"), vdnn::testing::tiny_cpu_config());
  std::vector<float> buffer(4);
  try {
    trainer.get_parameter("fc.wieght", buffer.data(), buffer.size());
    ADD_FAILURE() << "no InvalidArgument";
  } catch (const vdnn::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("fc.wieght"), std::string::npos) << e.what();
  }
  const vdnn::ParameterInfo first = trainer.named_parameters().front();
  EXPECT_THROW(trainer.get_parameter(first.name, buffer.data(), numel(first) + 1),
               vdnn::InvalidArgument);
  EXPECT_THROW(trainer.set_parameter(first.name, buffer.data(), 1), vdnn::InvalidArgument);
  for (const vdnn::ParameterInfo& p : trainer.named_parameters()) {
    if (p.trainable) continue;
    std::vector<float> v(numel(p));
    EXPECT_THROW(trainer.get_gradient(p.name, v.data(), v.size()), vdnn::InvalidArgument);
    break;
  }
}

TEST(ParametersApi, CallerBatchesAreCheckedAndTrainedOn) {
  vdnn::Trainer trainer(vdnn::testing::tiny_resnet("tiny"), vdnn::testing::tiny_cpu_config());
  std::vector<std::int64_t> steps;
  trainer.on_step([&](const vdnn::StepStats& s) { steps.push_back(s.iteration); });
  // tiny_resnet takes 3 x 8 x 8 images.
  std::vector<float> images(4 * 3 * 8 * 8, 0.25F);
  std::vector<std::int32_t> labels = {0, 1, 2, 3};
  vdnn::Batch batch{images.data(), labels.data(), 4, 3, 8, 8};
  EXPECT_TRUE(std::isfinite(trainer.step(batch).loss));
  EXPECT_EQ(steps, (std::vector<std::int64_t>{0}));
  vdnn::Batch wrong = batch;
  wrong.size = 3;
  EXPECT_THROW(trainer.step(wrong), vdnn::InvalidArgument);
  wrong = batch;
  wrong.height = 7;
  try {
    trainer.step(wrong);
    ADD_FAILURE() << "no InvalidArgument";
  } catch (const vdnn::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("4x3x7x8"), std::string::npos) << e.what();
  }
  wrong = batch;
  wrong.labels = nullptr;
  EXPECT_THROW(trainer.step(wrong), vdnn::InvalidArgument);
  labels[2] = 1000;
  EXPECT_THROW(trainer.step(batch), vdnn::InvalidArgument);
  EXPECT_EQ(trainer.iteration(), 1);
}

TEST(ParametersApi, PredictGivesLogitsPerImageAndChangesNoTraining) {
  const vdnn::Network network = vdnn::testing::tiny_resnet("tiny");
  vdnn::Trainer trainer(network, vdnn::testing::tiny_cpu_config());
  vdnn::Trainer plain(network, vdnn::testing::tiny_cpu_config());
  std::vector<float> images(6 * 3 * 8 * 8);
  for (std::size_t i = 0; i < images.size(); ++i) images[i] = static_cast<float>(i % 17) / 17.0F;
  trainer.step();
  plain.step();
  // Six images at batch 4: a full batch and a padded one; three alone give the same rows.
  const std::vector<float> six = trainer.predict(images.data(), 6);
  ASSERT_EQ(six.size(), 60U);  // 10 classes
  const std::vector<float> three = trainer.predict(images.data(), 3);
  EXPECT_TRUE(std::equal(three.begin(), three.end(), six.begin()));
  const std::vector<float> last = trainer.predict(images.data() + 5 * 3 * 8 * 8, 1);
  EXPECT_TRUE(std::equal(last.begin(), last.end(), six.begin() + 50));
  EXPECT_EQ(trainer.step().loss, plain.step().loss);
  vdnn::TrainerConfig bf16 = vdnn::testing::tiny_cpu_config();
  bf16.precision = "bf16";  // logits stay F32
  vdnn::Trainer half(network, bf16);
  const std::vector<float> half_six = half.predict(images.data(), 6);
  EXPECT_TRUE(
      std::all_of(half_six.begin(), half_six.end(), [](float x) { return std::isfinite(x); }));
  EXPECT_THROW(trainer.predict(images.data(), 0), vdnn::InvalidArgument);
  EXPECT_THROW(trainer.predict(nullptr, 2), vdnn::InvalidArgument);
}

TEST(ParametersApi, BiasesAndNormsCanBeLeftUndecayed) {
  const vdnn::Network network = vdnn::testing::tiny_resnet("tiny");
  for (const bool decay_bn_bias : {true, false}) {
    vdnn::TrainerConfig config = vdnn::testing::tiny_cpu_config();
    config.momentum = 0.0;
    config.weight_decay = 0.5;
    config.learning_rate = 0.125;
    config.decay_bn_bias = decay_bn_bias;
    vdnn::Trainer trainer(network, config);
    trainer.on_gradients(zero_gradients);
    const std::vector<std::vector<float>> before = values(trainer);
    trainer.step();
    const std::vector<std::vector<float>> after = values(trainer);
    const std::vector<vdnn::ParameterInfo> params = trainer.named_parameters();
    for (std::size_t i = 0; i < params.size(); ++i) {
      if (!params[i].trainable) continue;
      const bool decayed = decay_bn_bias || params[i].shape.size() != 1;
      for (std::size_t k = 0; k < before[i].size(); ++k) {
        const float expected = decayed ? before[i][k] * (1.0F - 0.0625F) : before[i][k];
        ASSERT_FLOAT_EQ(after[i][k], expected) << params[i].name << " " << decay_bn_bias;
      }
    }
  }
}

TEST(ParametersApi, ACallerSetLearningRateReplacesTheSchedule) {
  vdnn::TrainerConfig config = vdnn::testing::tiny_cpu_config();
  config.momentum = 0.0;
  config.weight_decay = 0.5;
  vdnn::Trainer trainer(vdnn::testing::tiny_resnet("tiny"), config);
  trainer.set_learning_rate(0.0);
  const std::vector<std::vector<float>> before = values(trainer);
  EXPECT_EQ(trainer.step().learning_rate, 0.0);
  EXPECT_EQ(values(trainer).front(), before.front());  // nothing moves at rate 0
  trainer.set_learning_rate(0.25);
  EXPECT_EQ(trainer.step().learning_rate, 0.25);
  EXPECT_NE(values(trainer).front(), before.front());
  EXPECT_THROW(trainer.set_learning_rate(-1.0), vdnn::InvalidArgument);
  EXPECT_THROW(trainer.set_learning_rate(std::nan("")), vdnn::InvalidArgument);
}

TEST(ParametersApi, WarmupRampsTheRateBeforeTheSchedule) {
  vdnn::TrainerConfig config = vdnn::testing::tiny_cpu_config();
  config.learning_rate = 0.4;
  config.warmup_steps = 2;
  vdnn::Trainer trainer(vdnn::testing::tiny_resnet("tiny"), config);
  EXPECT_DOUBLE_EQ(trainer.step().learning_rate, 0.004);
  EXPECT_DOUBLE_EQ(trainer.step().learning_rate, 0.4 * (0.01 + 0.99 * 0.5));
  EXPECT_DOUBLE_EQ(trainer.step().learning_rate, 0.4);
  config.warmup_steps = -1;
  EXPECT_THROW(vdnn::Trainer(vdnn::testing::tiny_resnet("tiny"), config), vdnn::InvalidArgument);
}

TEST(ParametersApiGpu, ChannelsLastWeightsReadInPyTorchsOrder) {
  if (!vdnn::cuda_available()) GTEST_SKIP() << "no CUDA device";
  const vdnn::Network network = vdnn::testing::tiny_resnet("tiny");
  vdnn::TrainerConfig config = vdnn::testing::tiny_cpu_config();
  config.backend = vdnn::Backend::Cuda;
  config.layout = "nhwc";  // convolution weights kept KRSC
  vdnn::Trainer gpu(network, config);
  vdnn::Trainer cpu(network, vdnn::testing::tiny_cpu_config());
  const std::vector<std::vector<float>> initial = values(cpu);
  EXPECT_EQ(values(gpu), initial);  // the same seeded initialization, read back in KCRS
  std::vector<std::vector<float>> halved = initial;
  for (auto& v : halved) {
    for (float& x : v) x *= 0.5F;
  }
  set_values(gpu, halved);
  EXPECT_EQ(values(gpu), halved);
}

}  // namespace
