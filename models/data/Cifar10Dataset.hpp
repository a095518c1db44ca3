// Cifar10Dataset: the CIFAR-10 binary format (data_batch_*.bin, 3073-byte records).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/data/Dataset.hpp"

namespace vdnn::models {

/// Loads every data_batch_<k>.bin of a directory (the CIFAR-10 binary release) into memory,
/// normalizes with the CIFAR-10 channel means and deviations, and serves batches in an order
/// reshuffled each epoch from the seed.
class Cifar10Dataset final : public Dataset {
 public:
  static constexpr std::int64_t kImageBytes = 3 * 32 * 32;
  static constexpr std::int64_t kRecordBytes = 1 + kImageBytes;

  /// Throws runtime::DataError naming the directory when it holds no data_batch_*.bin, or the
  /// file when one is truncated or holds a label outside 0..9.
  Cifar10Dataset(const std::string& directory, std::uint64_t seed);

  void next_batch(std::int64_t batch, float* images, std::int32_t* labels) override;
  std::string description() const override;
  std::int64_t size() const noexcept { return static_cast<std::int64_t>(labels_.size()); }

 private:
  void reshuffle();

  std::string directory_;
  std::uint64_t seed_;
  std::vector<std::uint8_t> pixels_;  // size() x kImageBytes, CHW per image
  std::vector<std::int32_t> labels_;
  std::vector<std::int64_t> order_;
  std::int64_t cursor_ = 0;
  std::uint64_t epoch_ = 0;
};

}  // namespace vdnn::models
