// A training loop of the caller's own on vdnn's public API: its data generator fills batches in
// its own memory (channels-last floats), step(batch) trains on them with AdamW, and a hand-written
// warmup + cosine schedule sets the learning rate before every step.
//   vdnn_custom_loop [STEPS [CHECKPOINT]]   (60 steps; no checkpoint)
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "ExampleTask.hpp"

namespace {

// The caller's data: random labels, each image its class pattern plus Gaussian noise, written
// channels-last (NHWC) as many image pipelines produce them.
class Generator {
 public:
  explicit Generator(std::int64_t batch)
      : batch_(batch),
        images_(static_cast<std::size_t>(batch * example::kImageFloats)),
        labels_(static_cast<std::size_t>(batch)) {}

  vdnn::Batch next() {
    std::uniform_int_distribution<std::int32_t> label(0, example::kClasses - 1);
    std::normal_distribution<float> noise(0.0F, 0.5F);
    float* out = images_.data();
    for (std::int64_t n = 0; n < batch_; ++n) {
      labels_[static_cast<std::size_t>(n)] = label(random_);
      for (std::int64_t h = 0; h < example::kSize; ++h) {
        for (std::int64_t w = 0; w < example::kSize; ++w) {
          for (std::int64_t c = 0; c < example::kChannels; ++c) {
            *out++ =
                example::pattern(labels_[static_cast<std::size_t>(n)], c, h, w) + noise(random_);
          }
        }
      }
    }
    vdnn::Batch b;
    b.images = images_.data();
    b.labels = labels_.data();
    b.size = batch_;
    b.channels = example::kChannels;
    b.height = example::kSize;
    b.width = example::kSize;
    b.type = vdnn::ElementType::F32;
    b.layout = vdnn::ImageLayout::NHWC;
    return b;
  }

 private:
  std::int64_t batch_;
  std::vector<float> images_;
  std::vector<std::int32_t> labels_;
  std::mt19937 random_{42};
};

// Linear warmup over the first tenth of the steps, then cosine to zero.
double learning_rate(int step, int steps, double peak) {
  const int warmup = steps / 10 > 0 ? steps / 10 : 1;
  if (step < warmup) return peak * (step + 1) / warmup;
  const double progress = static_cast<double>(step - warmup) / (steps - warmup);
  return 0.5 * peak * (1.0 + std::cos(3.141592653589793 * progress));
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const int steps = argc > 1 ? std::atoi(argv[1]) : 60;
    const std::string checkpoint = argc > 2 ? argv[2] : "";
    if (steps < 2) throw vdnn::InvalidArgument("STEPS must be at least 2");
    vdnn::TrainerConfig config;
    config.batch = 32;
    config.total_steps = steps;
    config.optimizer = "adamw";  // torch.optim.AdamW: decoupled weight decay
    config.weight_decay = 0.05;
    vdnn::Trainer trainer(example::network(), config);
    Generator data(config.batch);
    double first = 0.0;
    double last = 0.0;
    for (int step = 0; step < steps; ++step) {
      trainer.set_learning_rate(learning_rate(step, steps, 3e-3));
      const vdnn::StepStats s = trainer.step(data.next());
      if (step == 0) first = s.loss;
      last = s.loss;
      std::printf("step %3d  lr %.4f  loss %.4f  accuracy %.2f\n", step, s.learning_rate, s.loss,
                  s.accuracy);
    }
    std::printf("loss %.4f -> %.4f on the %s backend\n", first, last,
                trainer.backend() == vdnn::Backend::Cuda ? "cuda" : "cpu");
    if (!checkpoint.empty()) trainer.save(checkpoint);
    return std::isfinite(last) ? 0 : 1;
  } catch (const vdnn::Error& e) {
    std::fprintf(stderr, "vdnn_custom_loop: %s\n", e.what());
    return 1;
  }
}
