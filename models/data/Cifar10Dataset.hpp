// Cifar10Dataset: the CIFAR-10 binary format (data_batch_<k>.bin and test_batch.bin, 3073-byte
// records: a label byte, then 3x32x32 pixel bytes, CHW).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "models/data/Dataset.hpp"

namespace vdnn::models {

/// One split of a CIFAR-10 binary release in memory. The train split is every data_batch_1.bin ..
/// data_batch_5.bin present, served in an order reshuffled each epoch from the seed; the test
/// split is test_batch.bin in file order. `augment` draws sample k of epoch e from
/// draw_crop_flip(seed, e, k) (padding is black: zero before normalization); pixels are then
/// normalized with the CIFAR-10 channel means and deviations. Thread-safety as Dataset.
class Cifar10Dataset final : public Dataset {
 public:
  static constexpr std::int64_t kImageBytes = 3 * 32 * 32;
  static constexpr std::int64_t kRecordBytes = 1 + kImageBytes;
  static constexpr std::int32_t kNumClasses = 10;

  /// Reads the split's files. Throws runtime::DataError when none is present (naming the
  /// directory and the files expected) or one is unreadable, empty, truncated ("cifar10:FILE:
  /// record R is truncated (B of 3073 bytes)") or holds a label outside 0..9 ("cifar10:FILE:
  /// record R: label L, expected 0..9"); records count from 0 in each file.
  Cifar10Dataset(const std::string& directory, Split split, std::uint64_t seed,
                 Augment augment = Augment::None);

  void next_batch(std::int64_t batch, void* images, std::int32_t* labels) override;
  void seek(std::int64_t sample) override;
  std::int64_t size() const noexcept override { return static_cast<std::int64_t>(labels_.size()); }
  std::string description() const override;

 private:
  void load(const std::string& path);
  void shuffle(std::uint64_t epoch);

  std::string directory_;
  Split split_;
  std::uint64_t seed_;
  Augment augment_;
  std::array<float, 3 * 256> normalized_{};  // per channel, each byte value normalized
  std::vector<std::uint8_t> pixels_;         // size() x kImageBytes, CHW per image
  std::vector<std::int32_t> labels_;
  std::vector<std::int64_t> order_;  // the current epoch's permutation (train split)
  std::int64_t cursor_ = 0;          // position in the current epoch
  std::uint64_t epoch_ = 0;
};

}  // namespace vdnn::models
