// SyntheticDataset: learnable synthetic images: a fixed smooth pattern per class plus noise.
#pragma once

#include <string>
#include <vector>

#include "models/data/Dataset.hpp"

namespace vdnn::models {

/// Each class has a prototype made of a few random low-frequency waves per channel; a sample is
/// its class prototype plus Gaussian noise (signal-to-noise about 1), so a CNN can learn the
/// classes within tens of steps and the loss falls. The train split is an endless stream; the test
/// split is a held-out set of kTestImages samples of the same classes, drawn from a stream the
/// train split never reaches. `augment` draws sample n from draw_crop_flip(seed, 0, n) and pads
/// with 0 (the data's mean). Thread-safety as Dataset.
class SyntheticDataset final : public Dataset {
 public:
  static constexpr std::int64_t kTestImages = 1000;

  SyntheticDataset(const SampleFormat& format, Split split, std::uint64_t seed,
                   Augment augment = Augment::None);
  /// Host bytes a dataset of `format` holds (saturating at UINT64_MAX).
  static std::uint64_t host_bytes(const SampleFormat& format) noexcept;
  void next_batch(std::int64_t batch, void* images, std::int32_t* labels) override;
  void seek(std::int64_t sample) override;
  std::int64_t size() const noexcept override { return split_ == Split::Test ? kTestImages : 0; }
  std::string description() const override {
    return split_ == Split::Test ? "synthetic test (" + std::to_string(kTestImages) + " images)"
                                 : "synthetic";
  }

 private:
  SampleFormat format_;
  Split split_;
  std::uint64_t seed_;
  Augment augment_;
  std::vector<float> prototypes_;  // num_classes x sample_numel
  std::vector<float> noise_;       // standard normal bank, scaled
  std::uint64_t next_sample_ = 0;
};

}  // namespace vdnn::models
