// SyntheticDataset: learnable synthetic images: a fixed smooth pattern per class plus noise.
#pragma once

#include <vector>

#include "models/data/Dataset.hpp"

namespace vdnn::models {

/// Each class has a prototype made of a few random low-frequency waves per channel; a sample is
/// its class prototype plus Gaussian noise (signal-to-noise about 1), so a CNN can learn the
/// classes within tens of steps and the loss falls.
class SyntheticDataset final : public Dataset {
 public:
  SyntheticDataset(const SampleFormat& format, std::uint64_t seed);
  /// Host bytes a dataset of `format` holds (saturating at UINT64_MAX).
  static std::uint64_t host_bytes(const SampleFormat& format) noexcept;
  void next_batch(std::int64_t batch, float* images, std::int32_t* labels) override;
  std::string description() const override { return "synthetic"; }

 private:
  SampleFormat format_;
  std::uint64_t seed_;
  std::vector<float> prototypes_;  // num_classes x sample_numel
  std::vector<float> noise_;       // standard normal bank, scaled
  std::uint64_t next_sample_ = 0;
};

}  // namespace vdnn::models
