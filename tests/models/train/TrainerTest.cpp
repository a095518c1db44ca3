// Trainer: the background loader gives the losses of synchronous loading, resumes stay bitwise
// with augmented CIFAR-10 data and with image files, evaluation changes no training loss and
// measures learning.
#include "models/train/Trainer.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <vector>

#include "../data/image/CodecTestImages.hpp"
#include "graph/TestNetworks.hpp"
#include "models/data/CifarFiles.hpp"
#include "models/data/image/JpegEncoder.hpp"
#include "models/train/Predictor.hpp"
#include "runtime/Error.hpp"

namespace vdnn::models {
namespace {

namespace fs = std::filesystem;

// A small network on CIFAR-shaped input: strided conv-bn-relu, pooling, linear, loss.
graph::NetworkDef cifar_net() {
  using namespace layers;
  LinearSpec fc;
  fc.out_features = 10;
  return testing::network(
      {
          testing::layer("conv", testing::conv(4, 3, 2), {"input"}),
          testing::layer("bn", BatchNorm2dSpec{}, {"conv"}),
          testing::layer("relu", ReluSpec{}, {"bn"}),
          testing::layer("pool", GlobalAvgPoolSpec{}, {"relu"}),
          testing::layer("fc", fc, {"pool"}),
          testing::layer("loss", SoftmaxCrossEntropySpec{}, {"fc"}),
      },
      3, 32, 10);
}

fs::path cifar_dir(const std::string& name, int test_records = 7) {
  const fs::path dir = fs::temp_directory_path() / ("vdnn-test-trainer-" + name);
  fs::remove_all(dir);
  testing::write_cifar_directory(dir, 2, 9, test_records);  // epochs of 18 images
  return dir;
}

TrainerOptions options(const std::string& data = "synthetic",
                       graph::Policy policy = graph::Policy::Baseline) {
  TrainerOptions o;
  o.data = data;
  o.session.policy = policy;
  o.session.executor.seed = 3;
  o.schedule.base_lr = 0.05;
  o.schedule.total_steps = 100;
  return o;
}

std::vector<double> losses(const Trainer& trainer) {
  std::vector<double> l;
  for (const StepRecord& r : trainer.history()) l.push_back(r.loss);
  return l;
}

TEST(Trainer, CallerBatchesGiveTheLossesOfTheSameBatchesFromTheSource) {
  for (const graph::Policy policy : {graph::Policy::Baseline, graph::Policy::VdnnAll}) {
    Trainer own(cifar_net(), 4, options("synthetic", policy));
    Trainer fed(cifar_net(), 4, options("synthetic", policy));
    Trainer again(cifar_net(), 4, options("synthetic", policy));
    auto dataset = make_dataset("synthetic", {3, 32, 32, 10}, 3);
    std::vector<std::vector<float>> images(6, std::vector<float>(4 * 3 * 32 * 32));
    std::vector<std::vector<std::int32_t>> labels(6, std::vector<std::int32_t>(4));
    for (int i = 0; i < 6; ++i) dataset->next_batch(4, images[i].data(), labels[i].data());
    for (int i = 0; i < 5; ++i) {
      EXPECT_EQ(fed.step(images[i].data(), labels[i].data()).loss, own.step().loss) << i;
      again.step(images[i].data(), labels[i].data());
    }
    // The fed trainer's own source was not drawn from: its next batch is the source's first.
    EXPECT_EQ(fed.step().loss, again.step(images[0].data(), labels[0].data()).loss);
    labels[1][0] = 10;  // out of range for 10 classes
    EXPECT_THROW(fed.step(images[1].data(), labels[1].data()), runtime::InvalidArgument);
  }
}

TEST(Trainer, PredictedLogitsGiveTheEvaluationsLoss) {
  Trainer trainer(cifar_net(), 4, options());
  trainer.step();
  auto dataset = make_dataset("synthetic", {3, 32, 32, 10}, 3, Split::Test);
  std::vector<float> images(4 * 3 * 32 * 32);
  std::vector<std::int32_t> labels(4);
  dataset->next_batch(4, images.data(), labels.data());
  std::vector<float> logits(40);
  predict_logits(trainer.session(), images.data(), 4, logits.data());
  const double loss = trainer.session().executor().evaluate(images.data(), labels.data()).loss;
  double sum = 0.0;  // softmax cross-entropy of the logits, in double
  for (std::size_t i = 0; i < 4; ++i) {
    const float* row = logits.data() + 10 * i;
    const double top = *std::max_element(row, row + 10);
    double total = 0.0;
    for (int k = 0; k < 10; ++k) total += std::exp(row[k] - top);
    sum += std::log(total) + top - row[labels[i]];
  }
  EXPECT_NEAR(sum / 4.0, loss, 1e-5 * loss);
}

TEST(Trainer, BackgroundLoadingGivesTheLossesOfSynchronousLoading) {
  const fs::path dir = cifar_dir("sync");
  for (const std::string& data : std::vector<std::string>{"synthetic", "cifar10:" + dir.string()}) {
    TrainerOptions o = options(data);
    o.augment = Augment::CropFlip;
    Trainer trainer(cifar_net(), 4, o);
    for (int i = 0; i < 8; ++i) trainer.step();

    graph::Session session(graph::Graph::build(cifar_net(), 4), o.session);
    auto dataset = make_dataset(data, {3, 32, 32, 10}, 3, Split::Train, Augment::CropFlip);
    std::vector<float> images(4 * 3072);
    std::vector<std::int32_t> labels(4);
    std::vector<double> expected;
    for (int i = 0; i < 8; ++i) {
      dataset->next_batch(4, images.data(), labels.data());
      expected.push_back(
          session.executor().train_step(images.data(), labels.data(), o.schedule.at(i)).loss);
    }
    EXPECT_EQ(losses(trainer), expected) << data;  // bitwise
  }
}

// Trains `steps` steps straight and, apart, `at` steps, a checkpoint at `checkpoint`, and the
// rest resumed from it: the resumed steps' losses are the straight run's, bitwise.
void expect_bitwise_resume(const TrainerOptions& o, int steps, int at, const fs::path& checkpoint) {
  Trainer whole(cifar_net(), 4, o);
  for (int i = 0; i < steps; ++i) whole.step();
  {
    Trainer first(cifar_net(), 4, o);
    for (int i = 0; i < at; ++i) first.step();
    first.save(checkpoint);
  }
  Trainer rest(cifar_net(), 4, o);
  rest.resume(checkpoint);
  for (int i = at; i < steps; ++i) rest.step();
  const std::vector<double> all = losses(whole);
  EXPECT_EQ(losses(rest), std::vector<double>(all.begin() + at, all.end()));
}

TEST(Trainer, ResumeWithAugmentedCifarIsBitwise) {
  const fs::path dir = cifar_dir("resume");
  const TrainerOptions o = options("cifar10:" + dir.string());
  EXPECT_EQ(default_augment(o.data), Augment::CropFlip);
  expect_bitwise_resume(o, 10, 5, dir / "iter-5.safetensors");  // 40 images: into epoch 3
}

// Image files: the loader keeps several batches in flight (Note [Data loading]); a run resumed
// from a mid-epoch checkpoint still trains on exactly the straight run's batches.
TEST(Trainer, ResumeWithImageFilesIsBitwise) {
  const fs::path dir = fs::temp_directory_path() / "vdnn-test-trainer-images";
  fs::remove_all(dir);
  for (int c = 0; c < 10; ++c) {  // 20 files of assorted sizes: epochs of 5 batches of 4
    for (int k = 0; k < 2; ++k) {
      test::write_file(dir / "train" / ("c" + std::to_string(c)) / (std::to_string(k) + ".jpg"),
                       encode_jpeg(test::test_picture(40 + 9 * k + c, 36 + 5 * c)));
    }
  }
  const TrainerOptions o = options("imagefolder:" + (dir / "train").string());
  EXPECT_EQ(default_augment(o.data), Augment::ImageNet);
  expect_bitwise_resume(o, 12, 7, dir / "iter-7.safetensors");  // into epoch 3
  fs::remove_all(dir);
}

TEST(Trainer, EvaluationChangesNoTrainingLoss) {
  for (const graph::Policy policy :
       {graph::Policy::Baseline, graph::Policy::VdnnAll, graph::Policy::UvmPrefetch}) {
    TrainerOptions o = options("synthetic", policy);
    Trainer plain(testing::small_residual_net(), 8, o);
    o.evaluation = true;
    Trainer evaluated(testing::small_residual_net(), 8, o);
    for (int i = 0; i < 6; ++i) {
      plain.step();
      evaluated.step();
      evaluated.evaluate();
    }
    EXPECT_EQ(losses(evaluated), losses(plain)) << graph::policy_name(policy);
  }
}

TEST(Trainer, AccuracyOnTheHeldOutSetRisesWithTraining) {
  TrainerOptions o = options();
  o.evaluation = true;
  Trainer trainer(testing::small_residual_net(), 16, o);
  const EvalRecord before = trainer.evaluate();
  for (int i = 0; i < 80; ++i) trainer.step();
  const EvalRecord after = trainer.evaluate();
  EXPECT_EQ(before.iteration, 0);
  EXPECT_EQ(after.iteration, 80);
  EXPECT_EQ(after.images, 992);    // 62 full batches of the 1000 held-out images
  EXPECT_GT(after.accuracy, 0.6);  // 4 classes
  EXPECT_GT(after.accuracy, before.accuracy + 0.2);
  EXPECT_EQ(after.top5, 1.0);  // fewer than 5 classes: every label is among the top 5
  EXPECT_LT(after.loss, before.loss);
  const EvalRecord again = trainer.evaluate();
  EXPECT_EQ(again.loss, after.loss);
  EXPECT_EQ(again.accuracy, after.accuracy);
  EXPECT_EQ(again.top5, after.top5);
}

TEST(Trainer, EvaluationCountsTop5OverTheImages) {
  TrainerOptions o = options();
  o.evaluation = true;
  Trainer trainer(cifar_net(), 8, o);  // 10 classes
  for (int i = 0; i < 3; ++i) {
    const EvalRecord r = trainer.evaluate();
    EXPECT_GT(r.top5, r.accuracy);
    EXPECT_LT(r.top5, 1.0);
    // A mean of per-batch fractions of equal batches: a whole number of the images.
    const double hits = r.top5 * static_cast<double>(r.images);
    EXPECT_NEAR(hits, std::round(hits), 1e-6);
    for (int s = 0; s < 10; ++s) trainer.step();
  }
}

TEST(Trainer, EvaluatesCifarTestBatchInFullBatches) {
  const fs::path dir = cifar_dir("eval");  // test_batch.bin: 7 images
  TrainerOptions o = options("cifar10:" + dir.string());
  o.evaluation = true;
  EXPECT_EQ(Trainer(cifar_net(), 4, o).evaluate().images, 4);
  EXPECT_EQ(Trainer(cifar_net(), 10, o).evaluate().images, 10);  // wraps around
  const EvalRecord r = Trainer(cifar_net(), 2, o).evaluate();
  EXPECT_EQ(r.images, 6);
  EXPECT_GE(r.accuracy, 0.0);
  EXPECT_LE(r.accuracy, 1.0);
}

TEST(Trainer, EvaluationNeedsTheTestSplit) {
  EXPECT_THROW(Trainer(testing::small_residual_net(), 4, options()).evaluate(),
               runtime::InvalidArgument);
  const fs::path dir = cifar_dir("no-test");
  fs::remove(dir / "test_batch.bin");
  TrainerOptions o = options("cifar10:" + dir.string());
  EXPECT_NO_THROW(Trainer(cifar_net(), 4, o));
  o.evaluation = true;
  EXPECT_THROW(Trainer(cifar_net(), 4, o), runtime::DataError);
}

}  // namespace
}  // namespace vdnn::models
