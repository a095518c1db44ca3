// Dataset: where training batches come from (synthetic, learnable data; or CIFAR-10 binaries).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace vdnn::models {

/// Per-sample image geometry and class count a dataset must produce.
struct SampleFormat {
  std::int64_t channels = 0;
  std::int64_t height = 0;
  std::int64_t width = 0;
  std::int64_t num_classes = 0;
  std::int64_t sample_numel() const noexcept { return channels * height * width; }
};

/// Produces batches in host memory. Deterministic for a given seed. Not thread-safe.
class Dataset {
 public:
  Dataset() = default;
  Dataset(const Dataset&) = delete;
  Dataset& operator=(const Dataset&) = delete;
  Dataset(Dataset&&) = delete;
  Dataset& operator=(Dataset&&) = delete;
  virtual ~Dataset() = default;

  /// Writes `batch` samples: images as batch x C x H x W floats, labels in [0, num_classes).
  virtual void next_batch(std::int64_t batch, float* images, std::int32_t* labels) = 0;
  /// "synthetic" or "cifar10:DIR (50000 images)".
  virtual std::string description() const = 0;
};

/// Builds the dataset named by `source`: "synthetic" or "cifar10:DIR". Throws
/// runtime::InvalidArgument for an unknown source or a format the network cannot take, and
/// runtime::DataError for missing or malformed files (naming the file).
std::unique_ptr<Dataset> make_dataset(const std::string& source, const SampleFormat& format,
                                      std::uint64_t seed);

/// Host bytes the dataset of make_dataset(source, format, ...) holds, known without building it
/// so that a run can be checked against the machine first: for synthetic data, the class
/// prototypes and the noise bank; 0 for cifar10 (a fixed ~150 MiB). Saturates at UINT64_MAX.
/// Never throws; an unknown source counts 0 (make_dataset rejects it).
std::uint64_t dataset_host_bytes(const std::string& source, const SampleFormat& format) noexcept;

}  // namespace vdnn::models
