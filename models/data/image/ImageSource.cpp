// The two image sources: files of an ImageFolder tree, members of WebDataset tar shards.
#include "models/data/image/ImageSource.hpp"

#include <fstream>
#include <memory>
#include <utility>

#include "models/data/image/ImageFolderIndex.hpp"
#include "models/data/image/TarReader.hpp"
#include "models/data/image/WebDatasetIndex.hpp"
#include "runtime/Error.hpp"

namespace vdnn::models {
namespace {

constexpr std::string_view kFolderPrefix = "imagefolder:";
constexpr std::string_view kShardPrefix = "webdataset:";

bool starts_with(const std::string& s, std::string_view prefix) {
  return s.size() > prefix.size() && s.compare(0, prefix.size(), prefix) == 0;
}

std::string counts(std::int64_t images, std::size_t classes) {
  return " (" + std::to_string(images) + " images, " + std::to_string(classes) + " classes)";
}

class FolderSource final : public ImageSource {
 public:
  FolderSource(const std::string& root, bool skip_bad)
      : root_(root), index_(index_image_folder(root, ImageFolderOptions{skip_bad})) {}

  std::int64_t size() const noexcept override {
    return static_cast<std::int64_t>(index_.samples.size());
  }
  std::int32_t label(std::int64_t sample) const noexcept override {
    return index_.samples[static_cast<std::size_t>(sample)].label;
  }
  void read(std::int64_t sample, std::int64_t max_bytes,
            std::vector<std::uint8_t>& out) const override {
    const std::string& path = index_.samples[static_cast<std::size_t>(sample)].path;
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in) throw runtime::DataError(path + ": cannot be opened");
    const std::streamoff bytes = in.tellg();
    if (bytes < 0 || bytes > max_bytes) {
      throw runtime::DataError(path + ": " + std::to_string(bytes) +
                               " bytes; expected an image of at most " + std::to_string(max_bytes));
    }
    out.resize(static_cast<std::size_t>(bytes));
    in.seekg(0);
    if (!in.read(reinterpret_cast<char*>(out.data()), bytes)) {
      throw runtime::DataError(path + ": cannot be read");
    }
  }
  std::string name(std::int64_t sample) const override {
    return index_.samples[static_cast<std::size_t>(sample)].path;
  }
  const std::vector<std::string>& classes() const noexcept override { return index_.classes; }
  std::string description() const override {
    return std::string(kFolderPrefix) + root_ + counts(size(), index_.classes.size());
  }
  const std::vector<std::string>& skipped() const noexcept override { return index_.skipped; }

 private:
  std::string root_;
  ImageFolderIndex index_;
};

class ShardSource final : public ImageSource {
 public:
  ShardSource(const std::string& pattern, bool skip_bad)
      : pattern_(pattern), index_(index_webdataset(pattern, WebDatasetOptions{skip_bad, {}})) {
    for (const std::string& shard : index_.shards)
      tars_.push_back(std::make_unique<TarFile>(shard));
  }

  std::int64_t size() const noexcept override {
    return static_cast<std::int64_t>(index_.samples.size());
  }
  std::int32_t label(std::int64_t sample) const noexcept override {
    return index_.samples[static_cast<std::size_t>(sample)].label;
  }
  void read(std::int64_t sample, std::int64_t max_bytes,
            std::vector<std::uint8_t>& out) const override {
    const WebDatasetSample& s = index_.samples[static_cast<std::size_t>(sample)];
    if (s.image.size > max_bytes) {
      throw runtime::DataError(name(sample) + ": " + std::to_string(s.image.size) +
                               " bytes; expected an image of at most " + std::to_string(max_bytes));
    }
    read_member(*tars_[static_cast<std::size_t>(s.shard)], s.image, out);
  }
  std::string name(std::int64_t sample) const override {
    const WebDatasetSample& s = index_.samples[static_cast<std::size_t>(sample)];
    return index_.shards[static_cast<std::size_t>(s.shard)] + ":" + s.image.name;
  }
  const std::vector<std::string>& classes() const noexcept override { return index_.classes; }
  std::string description() const override {
    return std::string(kShardPrefix) + pattern_ + counts(size(), index_.classes.size());
  }
  const std::vector<std::string>& skipped() const noexcept override { return index_.skipped; }

 private:
  std::string pattern_;
  WebDatasetIndex index_;
  std::vector<std::unique_ptr<TarFile>> tars_;  // one per shard, opened once
};

}  // namespace

bool is_image_source(const std::string& source) noexcept {
  return starts_with(source, kFolderPrefix) || starts_with(source, kShardPrefix);
}

std::unique_ptr<ImageSource> open_image_source(const std::string& source, Split split,
                                               bool skip_bad) {
  if (starts_with(source, kFolderPrefix)) {
    const ImageFolderSplits splits =
        resolve_image_folder_splits(source.substr(kFolderPrefix.size()));
    if (split == Split::Train) return std::make_unique<FolderSource>(splits.train, skip_bad);
    if (split == Split::Whole) {
      return std::make_unique<FolderSource>(splits.eval.value_or(splits.train), skip_bad);
    }
    if (!splits.eval) {
      throw runtime::InvalidArgument(source + " has no val folder (DIR/train and DIR/val) to " +
                                     "evaluate on; expected one, or --eval-data SOURCE");
    }
    return std::make_unique<FolderSource>(*splits.eval, skip_bad);
  }
  VDNN_EXPECTS(
      starts_with(source, kShardPrefix),
      "'" + source + "' is no image source; expected imagefolder:DIR or webdataset:PATTERN");
  if (split == Split::Test) {
    throw runtime::InvalidArgument(source + " is one split; evaluating needs --eval-data SOURCE");
  }
  return std::make_unique<ShardSource>(source.substr(kShardPrefix.size()), skip_bad);
}

}  // namespace vdnn::models
