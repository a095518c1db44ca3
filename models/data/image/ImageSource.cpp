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

// What both sources share: an index with samples (each with a label), classes and what indexing
// skipped.
template <typename Index>
class IndexedSource : public ImageSource {
 public:
  std::int64_t size() const noexcept override {
    return static_cast<std::int64_t>(index_.samples.size());
  }
  std::int32_t label(std::int64_t sample) const noexcept override { return at(sample).label; }
  const std::vector<std::string>& classes() const noexcept override { return index_.classes; }
  std::string description() const override {
    return what_ + " (" + std::to_string(size()) + " images, " +
           std::to_string(index_.classes.size()) + " classes)";
  }
  const std::vector<std::string>& skipped() const noexcept override { return index_.skipped; }

 protected:
  IndexedSource(std::string what, Index index) : what_(std::move(what)), index_(std::move(index)) {}
  const auto& at(std::int64_t sample) const {
    return index_.samples[static_cast<std::size_t>(sample)];
  }
  const Index& index() const noexcept { return index_; }

 private:
  std::string what_;
  Index index_;
};

void check_size(const std::string& name, std::int64_t bytes, std::int64_t max_bytes) {
  if (bytes < 0 || bytes > max_bytes) {
    throw runtime::DataError(name + ": " + std::to_string(bytes) +
                             " bytes; expected an image of at most " + std::to_string(max_bytes));
  }
}

class FolderSource final : public IndexedSource<ImageFolderIndex> {
 public:
  FolderSource(const std::string& root, bool skip_bad)
      : IndexedSource(std::string(kFolderPrefix) + root,
                      index_image_folder(root, ImageFolderOptions{skip_bad})) {}

  void read(std::int64_t sample, std::int64_t max_bytes,
            std::vector<std::uint8_t>& out) const override {
    const std::string& path = at(sample).path;
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in) throw runtime::DataError(path + ": cannot be opened");
    const std::streamoff bytes = in.tellg();
    check_size(path, bytes, max_bytes);
    out.resize(static_cast<std::size_t>(bytes));
    in.seekg(0);
    if (!in.read(reinterpret_cast<char*>(out.data()), bytes)) {
      throw runtime::DataError(path + ": cannot be read");
    }
  }
  std::string name(std::int64_t sample) const override { return at(sample).path; }
};

class ShardSource final : public IndexedSource<WebDatasetIndex> {
 public:
  ShardSource(const std::string& pattern, bool skip_bad)
      : IndexedSource(std::string(kShardPrefix) + pattern,
                      index_webdataset(pattern, WebDatasetOptions{skip_bad, {}})) {
    for (const std::string& shard : index().shards) {
      tars_.push_back(std::make_unique<TarFile>(shard));
    }
  }

  void read(std::int64_t sample, std::int64_t max_bytes,
            std::vector<std::uint8_t>& out) const override {
    const WebDatasetSample& s = at(sample);
    check_size(name(sample), s.image.size, max_bytes);
    read_member(*tars_[static_cast<std::size_t>(s.shard)], s.image, out);
  }
  std::string name(std::int64_t sample) const override {
    const WebDatasetSample& s = at(sample);
    return index().shards[static_cast<std::size_t>(s.shard)] + ":" + s.image.name;
  }

 private:
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
