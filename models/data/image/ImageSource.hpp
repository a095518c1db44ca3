// ImageSource: where an image dataset's samples come from (an ImageFolder tree or WebDataset
// shards): each sample's file bytes, label and name, and the class names.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/data/Dataset.hpp"

namespace vdnn::models {

/// The samples of one split of an image source, indexed once at construction. read() is
/// thread-safe (the dataset's workers read concurrently); the rest only reads what construction
/// fixed.
class ImageSource {
 public:
  ImageSource() = default;
  ImageSource(const ImageSource&) = delete;
  ImageSource& operator=(const ImageSource&) = delete;
  ImageSource(ImageSource&&) = delete;
  ImageSource& operator=(ImageSource&&) = delete;
  virtual ~ImageSource() = default;

  virtual std::int64_t size() const noexcept = 0;
  virtual std::int32_t label(std::int64_t sample) const noexcept = 0;
  /// Replaces `out` with the sample's file bytes (its capacity is kept). Throws
  /// runtime::DataError naming the file when it cannot be read or is larger than `max_bytes`.
  virtual void read(std::int64_t sample, std::int64_t max_bytes,
                    std::vector<std::uint8_t>& out) const = 0;
  /// The sample's file, for messages: "DIR/cls/x.jpg" or "SHARD.tar:key.jpg".
  virtual std::string name(std::int64_t sample) const = 0;
  /// Class names, label = position.
  virtual const std::vector<std::string>& classes() const noexcept = 0;
  /// "imagefolder:DIR/train (N images, K classes)", for descriptions.
  virtual std::string description() const = 0;
  /// What indexing skipped (with skip_bad), one message each.
  virtual const std::vector<std::string>& skipped() const noexcept = 0;
};

/// True when `source` names an image source: "imagefolder:DIR" or "webdataset:PATTERN".
bool is_image_source(const std::string& source) noexcept;

/// Opens `split` of an image source (is_image_source): for imagefolder:DIR the split rule of
/// resolve_image_folder_splits (Whole: DIR/val where it exists, else DIR), for
/// webdataset:PATTERN the shards of the pattern, which serve one split only (Train or Whole: a
/// WebDataset is evaluated on a source of its own). Throws runtime::DataError for what indexing
/// refuses (naming the file), and runtime::InvalidArgument for a test split the source does not
/// have.
std::unique_ptr<ImageSource> open_image_source(const std::string& source, Split split,
                                               bool skip_bad);

}  // namespace vdnn::models
