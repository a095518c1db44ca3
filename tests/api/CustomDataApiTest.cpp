// Batches and data of the caller's own through the public API: every element type and layout a
// network takes trains as its F32 NCHW batch does, DataSources feed the loader and resume bitwise,
// u8 sources make the network normalize bytes, and what is wrong is an InvalidArgument.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <vdnn/DataSource.hpp>
#include <vdnn/Error.hpp>
#include <vdnn/Trainer.hpp>
#include <vector>

#include "api/CallerData.hpp"
#include "api/TinyNetwork.hpp"

namespace {

namespace fs = std::filesystem;
using vdnn::testing::CallerBatches;
using vdnn::testing::CountingSource;

vdnn::TrainerConfig with_source(std::shared_ptr<vdnn::DataSource> source) {
  vdnn::TrainerConfig config = vdnn::testing::tiny_cpu_config();
  config.data_source = std::move(source);
  return config;
}

// The losses of `steps` caller batches of `type` in `layout`.
std::vector<double> caller_losses(const CallerBatches& data, vdnn::ElementType type,
                                  vdnn::ImageLayout layout, int steps) {
  vdnn::Trainer trainer(vdnn::testing::tiny_resnet("tiny"), vdnn::testing::tiny_cpu_config());
  std::vector<double> out;
  for (int i = 0; i < steps; ++i) out.push_back(trainer.step(data.batch(i, type, layout)).loss);
  return out;
}

TEST(CustomDataApi, EveryTypeAndLayoutTrainsAsF32Nchw) {
  const CallerBatches data(4, 3, 8, 8);  // values exact in bf16
  const std::vector<double> expected =
      caller_losses(data, vdnn::ElementType::F32, vdnn::ImageLayout::NCHW, 3);
  EXPECT_EQ(caller_losses(data, vdnn::ElementType::F32, vdnn::ImageLayout::NHWC, 3), expected);
  EXPECT_EQ(caller_losses(data, vdnn::ElementType::BF16, vdnn::ImageLayout::NCHW, 3), expected);
  EXPECT_EQ(caller_losses(data, vdnn::ElementType::BF16, vdnn::ImageLayout::NHWC, 3), expected);
  EXPECT_NE(expected[0], expected[2]);  // the batches and the weights differ from step to step
}

TEST(CustomDataApi, FormsTheNetworkDoesNotTakeAreInvalidArguments) {
  const CallerBatches data(4, 3, 8, 8);
  vdnn::Trainer trainer(vdnn::testing::tiny_resnet("tiny"), vdnn::testing::tiny_cpu_config());
  const auto message = [&](const vdnn::Batch& batch) {
    try {
      trainer.step(batch);
    } catch (const vdnn::InvalidArgument& e) {
      return std::string(e.what());
    }
    return std::string("no InvalidArgument");
  };
  const vdnn::Batch u8 = data.batch(0, vdnn::ElementType::U8, vdnn::ImageLayout::NHWC);
  EXPECT_NE(message(u8).find("takes floats"), std::string::npos) << message(u8);
  vdnn::Batch bad = data.batch(0, vdnn::ElementType::F32, vdnn::ImageLayout::NCHW);
  bad.layout = static_cast<vdnn::ImageLayout>(7);
  EXPECT_NE(message(bad).find("layout"), std::string::npos) << message(bad);
  vdnn::Batch device = data.batch(0, vdnn::ElementType::F32, vdnn::ImageLayout::NCHW);
  device.on_device = true;
  EXPECT_NE(message(device).find("needs a CUDA run"), std::string::npos) << message(device);
  vdnn::Batch no_images = data.batch(0, vdnn::ElementType::F32, vdnn::ImageLayout::NCHW);
  no_images.images = nullptr;
  EXPECT_NE(message(no_images).find("needs images and labels"), std::string::npos);
  EXPECT_EQ(trainer.iteration(), 0);
}

TEST(CustomDataApi, ADataSourceTrainsAsItsBatchesGivenByHand) {
  const vdnn::Network network = vdnn::testing::tiny_resnet("tiny");
  auto source = std::make_shared<CountingSource>(vdnn::ElementType::F32);
  vdnn::Trainer fed(network, with_source(source));
  vdnn::Trainer by_hand(network, vdnn::testing::tiny_cpu_config());
  const CallerBatches data(4, 3, 8, 8);
  for (std::int64_t i = 0; i < 3; ++i) {
    const vdnn::Batch batch = data.batch(i, vdnn::ElementType::F32, vdnn::ImageLayout::NCHW);
    EXPECT_EQ(fed.step().loss, by_hand.step(batch).loss) << "step " << i;
  }
  EXPECT_GE(source->batches_drawn(), 3);  // the loader may be ahead
}

TEST(CustomDataApi, ASeekingSourceResumesBitwiseAndOneThatCannotIsRefused) {
  const vdnn::Network network = vdnn::testing::tiny_resnet("tiny");
  const fs::path dir = fs::temp_directory_path() / "vdnn-api-custom-data-resume";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string path = (dir / "run.safetensors").string();
  vdnn::Trainer whole(network,
                      with_source(std::make_shared<CountingSource>(vdnn::ElementType::F32)));
  std::vector<double> expected;
  for (int i = 0; i < 4; ++i) {
    expected.push_back(whole.step().loss);
    if (i == 1) whole.save(path);
  }
  vdnn::Trainer resumed(network,
                        with_source(std::make_shared<CountingSource>(vdnn::ElementType::F32)));
  resumed.resume(path);
  EXPECT_EQ(resumed.step().loss, expected[2]);
  EXPECT_EQ(resumed.step().loss, expected[3]);
  auto fixed = std::make_shared<CountingSource>(vdnn::ElementType::F32, /*seekable=*/false);
  vdnn::Trainer refused(network, with_source(fixed));
  EXPECT_THROW(refused.resume(path), vdnn::InvalidArgument);
  fs::remove_all(dir);
}

TEST(CustomDataApi, AU8SourceMakesTheNetworkNormalizeBytes) {
  const vdnn::Network network = vdnn::testing::tiny_resnet("tiny");
  const auto u8_config = [] {
    return with_source(std::make_shared<CountingSource>(vdnn::ElementType::U8));
  };
  vdnn::Trainer fed(network, u8_config());
  vdnn::Trainer nchw(network, u8_config());
  vdnn::Trainer nhwc(network, u8_config());
  const CallerBatches data(4, 3, 8, 8);
  EXPECT_TRUE(std::isfinite(fed.step().loss));
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(nchw.step(data.batch(i, vdnn::ElementType::U8, vdnn::ImageLayout::NCHW)).loss,
              nhwc.step(data.batch(i, vdnn::ElementType::U8, vdnn::ImageLayout::NHWC)).loss);
  }
  EXPECT_THROW(nchw.step(data.batch(0, vdnn::ElementType::F32, vdnn::ImageLayout::NCHW)),
               vdnn::InvalidArgument);
  EXPECT_THROW(nchw.predict(data.floats(0).data(), 4), vdnn::InvalidArgument);
}

TEST(CustomDataApi, SourceErrorsComeOutOfStepAndBadConfigsAreRefused) {
  const vdnn::Network network = vdnn::testing::tiny_resnet("tiny");
  auto failing = std::make_shared<CountingSource>(vdnn::ElementType::F32);
  failing->fail_at(0);
  vdnn::Trainer trainer(network, with_source(failing));
  EXPECT_THROW(trainer.step(), std::out_of_range);
  vdnn::TrainerConfig evaluating =
      with_source(std::make_shared<CountingSource>(vdnn::ElementType::F32));
  evaluating.evaluation = true;
  EXPECT_THROW(vdnn::Trainer(network, evaluating), vdnn::InvalidArgument);
  vdnn::TrainerConfig augmenting =
      with_source(std::make_shared<CountingSource>(vdnn::ElementType::F32));
  augmenting.augment = "crop-flip";
  EXPECT_THROW(vdnn::Trainer(network, augmenting), vdnn::InvalidArgument);
  EXPECT_THROW(vdnn::Trainer(
                   network, with_source(std::make_shared<CountingSource>(vdnn::ElementType::BF16))),
               vdnn::InvalidArgument);
}

TEST(CustomDataApi, ProbabilitiesAreTheSoftmaxOfTheLogits) {
  vdnn::Trainer trainer(vdnn::testing::tiny_resnet("tiny"), vdnn::testing::tiny_cpu_config());
  trainer.step();
  const CallerBatches data(5, 3, 8, 8);
  const std::vector<float> images = data.floats(0);
  const std::vector<float> logits = trainer.predict(images.data(), 5);
  const std::vector<float> p = trainer.probabilities(images.data(), 5);
  ASSERT_EQ(p.size(), logits.size());
  for (std::size_t row = 0; row < 5; ++row) {
    double sum = 0.0;
    double exp_sum = 0.0;
    for (std::size_t k = 0; k < 10; ++k) exp_sum += std::exp(double{logits[row * 10 + k]});
    for (std::size_t k = 0; k < 10; ++k) {
      sum += p[row * 10 + k];
      EXPECT_NEAR(p[row * 10 + k], std::exp(double{logits[row * 10 + k]}) / exp_sum, 1e-6);
    }
    EXPECT_NEAR(sum, 1.0, 1e-6);
  }
  EXPECT_THROW(trainer.probabilities(nullptr, 2), vdnn::InvalidArgument);
}

}  // namespace
