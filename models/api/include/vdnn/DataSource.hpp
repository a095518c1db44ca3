// DataSource: training data of the caller's own that a Trainer draws batches from, on its
// background loader thread, into its staging buffers (TrainerConfig::data_source); and the
// built-in sources as DataSources (builtin_data_source), e.g. to wrap or mix them in your own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include <vdnn/Batch.hpp>
#include <vdnn/Export.hpp>

namespace vdnn {

/// The form a run asks its DataSource for: `size` images (the run's batch) of channels x height x
/// width, F32 in NCHW order when the source's element_type() is F32, U8 in NHWC order when it is
/// U8; and `size` labels in [0, num_classes).
struct BatchFormat {
  std::int64_t size = 0;
  std::int64_t channels = 0;
  std::int64_t height = 0;
  std::int64_t width = 0;
  std::int64_t num_classes = 0;
  ElementType type = ElementType::F32;
  ImageLayout layout = ImageLayout::NCHW;
};

/// The caller's training data: a stream of samples numbered from 0 that the run draws one batch at
/// a time. next_batch() and seek() are called from the run's loader thread, one call at a time,
/// batches ahead of the step that trains on them (while the previous step runs); the other
/// methods from the thread that makes the Trainer. What next_batch() throws comes out of the
/// Trainer's step() that would have trained on the batch, as it was thrown.
class DataSource {
 public:
  DataSource() = default;
  DataSource(const DataSource&) = delete;
  DataSource& operator=(const DataSource&) = delete;
  DataSource(DataSource&&) = delete;
  DataSource& operator=(DataSource&&) = delete;
  virtual ~DataSource() = default;

  /// F32 (the default): the network takes floats, as for synthetic or CIFAR-10 data. U8: the
  /// network takes image bytes and normalizes them on its device with ImageNet's mean and std (3
  /// channels), as for image files. BF16 is not a source's type (the Trainer's constructor throws
  /// InvalidArgument).
  virtual ElementType element_type() const { return ElementType::F32; }
  /// Writes the next format.size samples: images into `images` (format.size x channels x height x
  /// width elements of format.type in format.layout, in pinned host memory the run owns) and labels
  /// into `labels`. Labels out of range make the step that trains on them throw InvalidArgument.
  virtual void next_batch(const BatchFormat& format, void* images, std::int32_t* labels) = 0;
  /// Makes sample `sample` (>= 0) the next one drawn, as if the ones before had been: returns
  /// false when the source cannot (the default). Trainer::resume() seeks past the trained samples,
  /// so a run resumes bitwise exactly when its source seeks; it throws InvalidArgument otherwise.
  virtual bool seek(std::int64_t sample) {
    static_cast<void>(sample);
    return false;
  }
  /// Samples in one pass over the data; 0 (the default) for an endless stream.
  virtual std::int64_t size() const { return 0; }
  /// What the run's messages call the source.
  virtual std::string description() const { return "a custom data source"; }
};

/// How builtin_data_source reads a built-in source; the defaults are TrainerConfig's.
struct BuiltinSourceOptions {
  std::uint64_t seed = 1;        // data order, augmentation and synthetic images
  std::string augment;           // as TrainerConfig::augment; empty: the source's default
  bool skip_bad_images = false;  // image files: skip (and count) what cannot be read
  std::size_t data_workers = 0;  // image files: decode threads (on the CPU); 0: the cores less two
};

/// The train split of a built-in source as a DataSource: `data` as TrainerConfig::data takes it
/// ("synthetic", "cifar10:DIR", "imagefolder:DIR", "webdataset:PATTERN"). Its batches are those a
/// run with `data` and the same seed draws (bitwise), it seeks (so a run on it resumes bitwise),
/// and its element type is U8 for image files, else F32. The source opens at its first batch,
/// when the run's format is known; next_batch() throws InvalidArgument when a later batch asks
/// for another format, and what opening throws (DataError for a bad file, InvalidArgument for a
/// network that does not fit the data). size() is 0 until then. Throws InvalidArgument here for a
/// `data` that names no built-in source or an unknown `augment`.
VDNN_EXPORT std::shared_ptr<DataSource> builtin_data_source(
    const std::string& data, const BuiltinSourceOptions& options = {});

}  // namespace vdnn
