// The built-in sources as public DataSources (builtin_data_source): a run on one trains bitwise as
// a run with the same `data` string, resumes bitwise (it seeks), can be wrapped by a source of the
// caller's, and what is wrong is an InvalidArgument.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vdnn/DataSource.hpp>
#include <vdnn/Error.hpp>
#include <vdnn/Trainer.hpp>
#include <vector>

#include "api/TinyNetwork.hpp"

namespace {

namespace fs = std::filesystem;

vdnn::BuiltinSourceOptions options_of(const vdnn::TrainerConfig& config) {
  vdnn::BuiltinSourceOptions o;
  o.seed = config.seed;
  return o;
}

vdnn::TrainerConfig on_synthetic_source() {
  vdnn::TrainerConfig config = vdnn::testing::tiny_cpu_config();
  config.data_source = vdnn::builtin_data_source("synthetic", options_of(config));
  return config;
}

std::vector<double> losses(vdnn::Trainer& trainer, int steps) {
  std::vector<double> out;
  for (int i = 0; i < steps; ++i) out.push_back(trainer.step().loss);
  return out;
}

// A caller's source that draws its batches from another one: what a mixing or filtering source
// of the caller's would do.
class Wrapping final : public vdnn::DataSource {
 public:
  explicit Wrapping(std::shared_ptr<vdnn::DataSource> inner) : inner_(std::move(inner)) {}
  void next_batch(const vdnn::BatchFormat& format, void* images, std::int32_t* labels) override {
    ++batches;
    inner_->next_batch(format, images, labels);
  }
  int batches = 0;

 private:
  std::shared_ptr<vdnn::DataSource> inner_;
};

TEST(BuiltinSourceApi, TrainsBitwiseAsTheSameDataString) {
  const vdnn::Network network = vdnn::testing::tiny_resnet("tiny");
  vdnn::Trainer built_in(network, vdnn::testing::tiny_cpu_config());
  vdnn::Trainer as_source(network, on_synthetic_source());
  const std::vector<double> expected = losses(built_in, 3);
  EXPECT_EQ(losses(as_source, 3), expected);
  EXPECT_NE(expected[0], expected[2]);
  vdnn::TrainerConfig wrapped_config = vdnn::testing::tiny_cpu_config();
  auto wrapping = std::make_shared<Wrapping>(
      vdnn::builtin_data_source("synthetic", options_of(wrapped_config)));
  wrapped_config.data_source = wrapping;
  vdnn::Trainer wrapped(network, wrapped_config);
  EXPECT_EQ(losses(wrapped, 3), expected);
  EXPECT_GE(wrapping->batches, 3);
}

TEST(BuiltinSourceApi, ResumesBitwiseBecauseItSeeks) {
  const vdnn::Network network = vdnn::testing::tiny_resnet("tiny");
  const fs::path dir = fs::temp_directory_path() / "vdnn-api-builtin-source-resume";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string path = (dir / "run.safetensors").string();
  vdnn::Trainer whole(network, on_synthetic_source());
  std::vector<double> expected;
  for (int i = 0; i < 4; ++i) {
    expected.push_back(whole.step().loss);
    if (i == 1) whole.save(path);
  }
  vdnn::Trainer resumed(network, on_synthetic_source());
  resumed.resume(path);
  EXPECT_EQ(resumed.step().loss, expected[2]);
  EXPECT_EQ(resumed.step().loss, expected[3]);
  fs::remove_all(dir);
}

TEST(BuiltinSourceApi, TypesAndErrors) {
  EXPECT_EQ(vdnn::builtin_data_source("synthetic")->element_type(), vdnn::ElementType::F32);
  EXPECT_EQ(vdnn::builtin_data_source("imagefolder:/nonexistent")->element_type(),
            vdnn::ElementType::U8);  // opened at the first batch
  EXPECT_THROW(vdnn::builtin_data_source("mnist:/data"), vdnn::InvalidArgument);
  EXPECT_THROW(vdnn::builtin_data_source("cifar10:"), vdnn::InvalidArgument);
  vdnn::BuiltinSourceOptions bad;
  bad.augment = "mixup";
  EXPECT_THROW(vdnn::builtin_data_source("synthetic", bad), vdnn::InvalidArgument);
  // A network the data does not fit (CIFAR-10 is 3 x 32 x 32, 10 classes): at the first batch.
  auto cifar = vdnn::builtin_data_source("cifar10:/nonexistent");
  vdnn::BatchFormat format{4, 3, 8, 8, 10, vdnn::ElementType::F32, vdnn::ImageLayout::NCHW};
  std::vector<float> images(4 * 3 * 8 * 8);
  std::vector<std::int32_t> labels(4);
  EXPECT_THROW(cifar->next_batch(format, images.data(), labels.data()), vdnn::InvalidArgument);
  // A later batch in another format than the first.
  auto synthetic = vdnn::builtin_data_source("synthetic");
  synthetic->next_batch(format, images.data(), labels.data());
  format.size = 2;
  EXPECT_THROW(synthetic->next_batch(format, images.data(), labels.data()), vdnn::InvalidArgument);
}

}  // namespace
