// ImageFolderIndex: the samples and classes of a torchvision ImageFolder tree
// (`root/<class>/**/<image>.jpg`), in torchvision's order, and the train/val split rule of
// `--data imagefolder:DIR`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vdnn::models {

/// The image extensions the image sources take, as a message lists them.
inline constexpr std::string_view kImageExtensionsText = ".jpg, .jpeg, .png";

/// True when `name` ends in .jpg, .jpeg or .png, in any case (torchvision's test on file names).
bool has_image_extension(std::string_view name) noexcept;

/// How index_image_folder treats bad entries.
struct ImageFolderOptions {
  /// Skip (and describe in ImageFolderIndex::skipped) what is otherwise an error: a symlink loop, a
  /// directory reached twice, an image name that is not a regular file, an empty class (which
  /// keeps its label). Unreadable directories and a root without classes stay errors.
  bool skip_bad = false;
};

/// One image: its path (the root as given, then `/`-joined names) and its class index.
struct ImageFolderSample {
  std::string path;
  std::int32_t label = 0;
};

/// What index_image_folder found.
struct ImageFolderIndex {
  std::vector<std::string> classes;  // label = position
  std::vector<ImageFolderSample> samples;
  /// Files passed over for their extension (also those directly in the root).
  std::int64_t ignored_files = 0;
  /// With skip_bad: one message per entry or class skipped, as the error would have said it.
  std::vector<std::string> skipped;
};

/// Indexes `root` as torchvision.datasets.ImageFolder does:
/// - classes are the sorted names of the root's subdirectories (symlinks followed; hidden ones
///   included, as torchvision does), label = position in that order;
/// - each class folder is walked following directory symlinks (os.walk(followlinks=True)); its
///   images come in the order of `for root, _, files in sorted(os.walk(dir)): for f in
///   sorted(files)`: directories by their full path string, then file names, both compared
///   byte-wise (code-point order for UTF-8);
/// - a file counts when has_image_extension(name) and it is (or links to) a regular file.
/// Stricter than os.walk, so a hostile tree cannot make it loop or blow up: a directory whose
/// (st_dev, st_ino) is one of those on the current path from the root is a symlink loop, and one
/// already walked in the same class (two links to one folder) is reached twice; both are errors.
/// Throws runtime::DataError starting "imagefolder:" and naming the path: a root that is missing
/// or no directory; a root without class folders; a directory that cannot be read; and, unless
/// options.skip_bad, a symlink loop or directory reached twice (naming the link), an image name
/// that is not a regular file (a broken link, a FIFO), or class folders without images (naming
/// every such folder and the extensions expected).
ImageFolderIndex index_image_folder(const std::string& root,
                                    const ImageFolderOptions& options = {});

/// The folders `--data imagefolder:DIR` reads.
struct ImageFolderSplits {
  std::string train;                // DIR/train when it is a directory, else DIR
  std::optional<std::string> eval;  // DIR/val when DIR/train and DIR/val are directories
};

/// Resolves the split rule for DIR. Throws runtime::DataError when DIR is missing or no
/// directory, or when DIR/val exists without DIR/train (DIR itself would then be the training
/// root and its val folder a class).
ImageFolderSplits resolve_image_folder_splits(const std::string& dir);

}  // namespace vdnn::models
