// Reads CIFAR-10 binary files, checking every record, and serves normalized batches: the train
// split reshuffled per epoch, the test split in file order.
#include "models/data/Cifar10Dataset.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <numeric>

#include "models/data/EpochOrder.hpp"
#include "runtime/Error.hpp"

namespace vdnn::models {
namespace {

namespace fs = std::filesystem;

constexpr int kTrainFiles = 5;
constexpr float kMean[3] = {0.4914f, 0.4822f, 0.4465f};
constexpr float kStd[3] = {0.2470f, 0.2435f, 0.2616f};
constexpr std::int64_t kSide = 32;

// The files of `split` present in `directory`, in order.
std::vector<fs::path> split_files(const std::string& directory, Split split) {
  if (split == Split::Test) {
    const fs::path path = fs::path(directory) / "test_batch.bin";
    if (!fs::exists(path)) {
      throw runtime::DataError("cifar10:" + path.string() +
                               " not found; evaluation reads the test split of the CIFAR-10 "
                               "binary release (cifar-10-batches-bin)");
    }
    return {path};
  }
  std::vector<fs::path> files;
  for (int k = 1; k <= kTrainFiles; ++k) {
    const fs::path path = fs::path(directory) / ("data_batch_" + std::to_string(k) + ".bin");
    if (fs::exists(path)) files.push_back(path);
  }
  if (files.empty()) {
    throw runtime::DataError("cifar10:" + directory +
                             ": no data_batch_1.bin .. data_batch_5.bin found; "
                             "expected the CIFAR-10 binary release (cifar-10-batches-bin)");
  }
  return files;
}

std::vector<std::uint8_t> read_bytes(const std::string& path, const std::string& name) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw runtime::DataError(name + ": cannot be opened");
  const std::streamsize size = in.tellg();
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(std::max<std::streamsize>(size, 0)));
  in.seekg(0);
  if (size < 0 || !in.read(reinterpret_cast<char*>(bytes.data()), size)) {
    throw runtime::DataError(name + ": cannot be read");
  }
  return bytes;
}

}  // namespace

Cifar10Dataset::Cifar10Dataset(const std::string& directory, Split split, std::uint64_t seed,
                               Augment augment)
    : directory_(directory), split_(split), seed_(seed), augment_(augment) {
  for (std::size_t c = 0; c < 3; ++c) {
    for (std::size_t v = 0; v < 256; ++v) {
      normalized_[c * 256 + v] = (static_cast<float>(v) / 255.0f - kMean[c]) / kStd[c];
    }
  }
  for (const fs::path& path : split_files(directory, split)) load(path.string());
  order_.resize(labels_.size());
  shuffle(0);
}

// Appends the records of one file; the first bad record (in file order) is the error.
void Cifar10Dataset::load(const std::string& path) {
  const std::string name = "cifar10:" + path;
  const std::vector<std::uint8_t> bytes = read_bytes(path, name);
  if (bytes.empty()) {
    throw runtime::DataError(name + ": empty; expected records of " + std::to_string(kRecordBytes) +
                             " bytes");
  }
  const auto records = static_cast<std::int64_t>(bytes.size()) / kRecordBytes;
  labels_.reserve(labels_.size() + static_cast<std::size_t>(records));
  pixels_.reserve(pixels_.size() + static_cast<std::size_t>(records * kImageBytes));
  for (std::int64_t r = 0; r < records; ++r) {
    const std::uint8_t* record = bytes.data() + r * kRecordBytes;
    if (record[0] >= kNumClasses) {
      throw runtime::DataError(name + ": record " + std::to_string(r) + ": label " +
                               std::to_string(record[0]) + ", expected 0.." +
                               std::to_string(kNumClasses - 1));
    }
    labels_.push_back(record[0]);
    pixels_.insert(pixels_.end(), record + 1, record + kRecordBytes);
  }
  if (const auto rest = static_cast<std::int64_t>(bytes.size()) % kRecordBytes; rest != 0) {
    throw runtime::DataError(name + ": record " + std::to_string(records) + " is truncated (" +
                             std::to_string(rest) + " of " + std::to_string(kRecordBytes) +
                             " bytes)");
  }
}

void Cifar10Dataset::shuffle(std::uint64_t epoch) {
  epoch_ = epoch;
  epoch_order(seed_, epoch_, split_ != Split::Test, order_);
}

void Cifar10Dataset::seek(std::int64_t sample) {
  VDNN_EXPECTS(sample >= 0, "a sample number is never negative, got " + std::to_string(sample));
  const auto epoch = static_cast<std::uint64_t>(sample / size());
  if (epoch != epoch_) shuffle(epoch);
  cursor_ = sample % size();
}

void Cifar10Dataset::next_batch(std::int64_t batch, void* images, std::int32_t* labels) {
  for (std::int64_t i = 0; i < batch; ++i) {
    if (cursor_ == size()) {
      shuffle(epoch_ + 1);
      cursor_ = 0;
    }
    const CropFlip crop = augment_ == Augment::CropFlip
                              ? draw_crop_flip(seed_, epoch_, static_cast<std::uint64_t>(cursor_))
                              : CropFlip{};
    const std::int64_t index = order_[static_cast<std::size_t>(cursor_++)];
    labels[i] = labels_[static_cast<std::size_t>(index)];
    const std::uint8_t* src = pixels_.data() + index * kImageBytes;
    const auto normalized = [this](std::int64_t c, std::uint8_t v) {
      return normalized_[static_cast<std::size_t>(c * 256 + v)];
    };
    write_cropped(
        3, kSide, kSide, crop,
        [&](std::int64_t c, std::int64_t y, std::int64_t x) {
          return normalized(c, src[(c * kSide + y) * kSide + x]);
        },
        [&](std::int64_t c) { return normalized(c, 0); },
        static_cast<float*>(images) + i * kImageBytes);
  }
}

std::string Cifar10Dataset::description() const {
  return "cifar10:" + directory_ + (split_ == Split::Test ? " test" : "") + " (" +
         std::to_string(size()) + " images)";
}

}  // namespace vdnn::models
