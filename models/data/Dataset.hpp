// Dataset: where training and evaluation batches come from (synthetic, learnable data; or the
// CIFAR-10 binaries), and the options that choose one.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "models/data/Augmentation.hpp"

namespace vdnn::models {

/// Per-sample image geometry and class count a dataset must produce.
struct SampleFormat {
  std::int64_t channels = 0;
  std::int64_t height = 0;
  std::int64_t width = 0;
  std::int64_t num_classes = 0;
  std::int64_t sample_numel() const noexcept { return channels * height * width; }
};

/// Which part of a source: the training stream (shuffled per epoch, augmented when asked), the
/// held-out test set (in a fixed order, never augmented), or, for a source named only to evaluate
/// on (--eval-data), its test set where it has one and else all of it, as Test is served.
enum class Split : std::uint8_t { Train, Test, Whole };

/// Where image files decode: on CPU worker threads (libjpeg-turbo, libpng), or on the GPU (nvJPEG)
/// for the JPEGs it takes with the workers doing the rest; Auto: the CPU where it has the workers
/// to feed a GPU, else the GPU (resolve_decode).
enum class Decode : std::uint8_t { Auto, Cpu, Gpu };

/// Workers below which Auto decodes on the GPU: ~400 ImageNet-sized JPEGs/s each with the crop
/// decoded at a DCT scale, so fewer than 10 do not reach the 4000 img/s a ResNet-50 trains at
/// on an H200. Above, the CPU is the better choice: decoding on the GPU lengthens the step's
/// host enqueue (ResNet-50 b128 fp32 on the H200: 13.6 -> 24 ms; 0.95x the synthetic-data speed,
/// 1.0x with CPU decode; Note [Image pipeline]).
inline constexpr std::size_t kWorkersForCpuDecode = 10;

/// "auto", "cpu" or "gpu".
const char* decode_name(Decode decode) noexcept;
/// Parses a decode_name(); throws runtime::InvalidArgument naming the known ones.
Decode parse_decode(const std::string& name);
/// `decode` for a run on CUDA (`cuda`) or the CPU with `workers` decode threads: Auto becomes Gpu
/// on CUDA with nvJPEG and fewer than kWorkersForCpuDecode workers, else Cpu. Throws
/// runtime::InvalidArgument for Gpu on the CPU (make_dataset, for Gpu without nvJPEG).
Decode resolve_decode(Decode decode, bool cuda, std::size_t workers);

/// How an image source is read: skip (and count) unreadable files instead of stopping; where
/// files decode (resolved: Cpu or Gpu) and, for Gpu, on which CUDA device.
struct ImageOptions {
  bool skip_bad = false;
  Decode decode = Decode::Cpu;
  int device = 0;
  std::size_t workers = 0;  // decode threads; 0: default_data_workers()
  double gpu_share = 1.0;   // Gpu: the fraction of each batch's slots the GPU may take (gpu_slot)
};

/// Whether batch slot `slot` may decode on the GPU when a fraction `share` in (0, 1] of every
/// batch's slots does: those where floor((slot + 1) * share) steps, spread evenly over the batch
/// and the same in every batch, so each sample's path stays a pure function of its position.
bool gpu_slot(std::size_t slot, double share) noexcept;

/// Produces batches in host memory: a stream of samples numbered from 0, each a pure function of
/// the seed and its number (Note [Data loading] in docs/ARCHITECTURE.md). next_batch() and seek()
/// are not thread-safe (one thread draws at a time, e.g. a BatchLoader's); description() and
/// size() only read what construction fixed and may be called from any thread.
class Dataset {
 public:
  Dataset() = default;
  Dataset(const Dataset&) = delete;
  Dataset& operator=(const Dataset&) = delete;
  Dataset(Dataset&&) = delete;
  Dataset& operator=(Dataset&&) = delete;
  virtual ~Dataset() = default;

  /// Writes the next `batch` samples: images as batch x C x H x W floats, or, when image_bytes(),
  /// as batch x H x W x 3 bytes (Note [Image input]); labels in [0, num_classes). Never allocates.
  virtual void next_batch(std::int64_t batch, void* images, std::int32_t* labels) = 0;
  /// Starts drawing the next `batch` samples into `images` and `labels` (as next_batch() writes
  /// them) and may return before they are written; finish_batch() completes the oldest batch
  /// started and not finished. A caller may keep several batches started, one per buffer (a
  /// BatchLoader does), so that a dataset with workers goes on to the next batch while the last
  /// samples of one are still being made. The caller leaves the buffers alone until
  /// finish_batch() returns for them, and calls next_batch() only with no batch started. The
  /// default makes the whole batch in finish_batch().
  virtual void start_batch(std::int64_t batch, void* images, std::int32_t* labels);
  /// Returns once the oldest started batch is written, or throws what next_batch() would have
  /// thrown for it (the batch then counts as finished).
  virtual void finish_batch();
  /// The class names, label = position, of sources that have them (image folders and shards);
  /// empty for the others.
  virtual std::vector<std::string> class_names() const { return {}; }
  /// What the source skipped so far as unreadable (image sources with skip_bad), one message per
  /// file. Any thread.
  virtual std::vector<std::string> bad_images() const { return {}; }
  /// Whether images come as u8 NHWC bytes (image files), to be normalized on the device, rather
  /// than as F32 NCHW.
  virtual bool image_bytes() const noexcept { return false; }
  /// Makes sample number `sample` (>= 0) the next one drawn, as if the ones before had been drawn.
  /// Cheap: no sample before it is produced.
  virtual void seek(std::int64_t sample) = 0;
  /// Samples in one pass over the data (the stream then repeats, reshuffled for the train split);
  /// 0 for an endless stream (synthetic training data).
  virtual std::int64_t size() const noexcept = 0;
  /// "synthetic" or "cifar10:DIR (50000 images)".
  virtual std::string description() const = 0;

 private:
  struct Started {
    std::int64_t batch = 0;
    void* images = nullptr;
    std::int32_t* labels = nullptr;
  };
  std::deque<Started> started_;  // the default start_batch's, oldest first
};

/// Builds `split` of the dataset named by `source`: "synthetic", "cifar10:DIR", "imagefolder:DIR"
/// or "webdataset:PATTERN" (image files: ImageDataset, read as `image` says, batches up to `batch`
/// for the GPU decoder), with `augment` applied to the train split (never to the test split).
/// Throws runtime::InvalidArgument for an unknown source or a format the network cannot take, and
/// runtime::DataError for missing or malformed files (naming the file and the record).
std::unique_ptr<Dataset> make_dataset(const std::string& source, const SampleFormat& format,
                                      std::uint64_t seed, Split split = Split::Train,
                                      Augment augment = Augment::None,
                                      const ImageOptions& image = {}, std::int64_t batch = 256);

/// The augmentation a source gets unless told otherwise: crop-flip for cifar10 (the usual CIFAR
/// recipe), imagenet for image files, none for synthetic (its classes are smooth patterns at a
/// fixed position).
Augment default_augment(const std::string& source) noexcept;

/// Threads an image dataset decodes on: the machine's cores less two (with GPU decode too: the
/// files it does not take, progressive ones among them, still need them).
std::size_t default_data_workers() noexcept;

/// Host bytes the dataset of make_dataset(source, format, ...) holds, known without building it
/// so that a run can be checked against the machine first: for synthetic data, the class
/// prototypes and the noise bank; 0 for cifar10 (a fixed ~150 MiB). Saturates at UINT64_MAX.
/// Never throws; an unknown source counts 0 (make_dataset rejects it).
std::uint64_t dataset_host_bytes(const std::string& source, const SampleFormat& format) noexcept;

}  // namespace vdnn::models
