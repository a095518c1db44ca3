// Reads CIFAR-10 binary batches and serves normalized, reshuffled mini-batches.
#include "models/data/Cifar10Dataset.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <numeric>

#include "runtime/Error.hpp"
#include "runtime/Random.hpp"

namespace vdnn::models {
namespace {

constexpr int kNumFiles = 5;
constexpr std::int32_t kNumClasses = 10;
constexpr float kMean[3] = {0.4914f, 0.4822f, 0.4465f};
constexpr float kStd[3] = {0.2470f, 0.2435f, 0.2616f};

}  // namespace

Cifar10Dataset::Cifar10Dataset(const std::string& directory, std::uint64_t seed)
    : directory_(directory), seed_(seed) {
  namespace fs = std::filesystem;
  for (int k = 1; k <= kNumFiles; ++k) {
    const fs::path path = fs::path(directory) / ("data_batch_" + std::to_string(k) + ".bin");
    if (!fs::exists(path)) continue;
    std::ifstream in(path, std::ios::binary);
    const std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                                  std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) throw runtime::DataError(path.string() + ": cannot be read");
    if (bytes.empty() || bytes.size() % kRecordBytes != 0) {
      throw runtime::DataError(path.string() + ": " + std::to_string(bytes.size()) +
                               " bytes; expected a positive multiple of the " +
                               std::to_string(kRecordBytes) + "-byte CIFAR-10 record");
    }
    for (std::size_t r = 0; r < bytes.size(); r += kRecordBytes) {
      const auto label = static_cast<std::int32_t>(static_cast<std::uint8_t>(bytes[r]));
      if (label >= kNumClasses) {
        throw runtime::DataError(path.string() + ": record " + std::to_string(r / kRecordBytes) +
                                 " has label " + std::to_string(label) + "; expected 0..9");
      }
      labels_.push_back(label);
      pixels_.insert(pixels_.end(), bytes.begin() + static_cast<std::ptrdiff_t>(r + 1),
                     bytes.begin() + static_cast<std::ptrdiff_t>(r + kRecordBytes));
    }
  }
  if (labels_.empty()) {
    throw runtime::DataError(directory +
                             ": no data_batch_1.bin .. data_batch_5.bin found; "
                             "expected the CIFAR-10 binary release (cifar-10-batches-bin)");
  }
  order_.resize(labels_.size());
  reshuffle();
}

void Cifar10Dataset::reshuffle() {
  std::iota(order_.begin(), order_.end(), 0);
  // Fisher-Yates with counter-based draws: the same seed gives the same epochs everywhere.
  for (std::size_t i = order_.size() - 1; i > 0; --i) {
    const auto j =
        static_cast<std::size_t>(runtime::uniform01(seed_, epoch_, i) * static_cast<double>(i + 1));
    std::swap(order_[i], order_[j]);
  }
  cursor_ = 0;
}

void Cifar10Dataset::next_batch(std::int64_t batch, float* images, std::int32_t* labels) {
  constexpr std::int64_t kPlane = 32 * 32;
  for (std::int64_t i = 0; i < batch; ++i) {
    if (cursor_ == size()) {
      ++epoch_;
      reshuffle();
    }
    const std::int64_t index = order_[static_cast<std::size_t>(cursor_++)];
    labels[i] = labels_[static_cast<std::size_t>(index)];
    const std::uint8_t* src = pixels_.data() + index * kImageBytes;
    float* dst = images + i * kImageBytes;
    for (std::int64_t j = 0; j < kImageBytes; ++j) {
      const std::int64_t c = j / kPlane;
      dst[j] = (static_cast<float>(src[j]) / 255.0f - kMean[c]) / kStd[c];
    }
  }
}

std::string Cifar10Dataset::description() const {
  return "cifar10:" + directory_ + " (" + std::to_string(size()) + " images)";
}

}  // namespace vdnn::models
