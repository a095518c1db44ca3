// Walks an ImageFolder tree in torchvision's order, following directory symlinks but stopping at
// loops (the (st_dev, st_ino) of the directories on the current path) and at folders reached twice.
#include "models/data/image/ImageFolderIndex.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <system_error>
#include <utility>

#include "runtime/Error.hpp"

namespace vdnn::models {
namespace {

namespace fs = std::filesystem;

using DirId = std::pair<dev_t, ino_t>;

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw runtime::DataError("imagefolder:" + path + ": " + what);
}

std::optional<DirId> dir_id(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return std::nullopt;
  return DirId{info.st_dev, info.st_ino};
}

// The entries of one directory, split by kind (symlinks followed).
struct Listing {
  std::vector<std::string> dirs;
  std::vector<std::string> images;      // regular files with an image extension
  std::vector<std::string> bad_images;  // image names that are no regular file
  std::int64_t ignored = 0;
};

Listing list_directory(const std::string& path) {
  std::error_code error;
  fs::directory_iterator it(path, error);
  Listing listing;
  for (; !error && it != fs::directory_iterator(); it.increment(error)) {
    const std::string name = it->path().filename().string();
    std::error_code ignored;  // a broken link is neither a directory nor a regular file
    if (it->is_directory(ignored)) {
      listing.dirs.push_back(name);
    } else if (!has_image_extension(name)) {
      ++listing.ignored;
    } else if (it->is_regular_file(ignored)) {
      listing.images.push_back(name);
    } else {
      listing.bad_images.push_back(name);
    }
  }
  if (error) fail(path, "cannot read the directory: " + error.message());
  return listing;
}

// Walks one class folder; collects (directory, sorted image names) pairs.
class ClassWalk {
 public:
  ClassWalk(const ImageFolderOptions& options, ImageFolderIndex& index)
      : options_(options), index_(index) {}

  // `on_path`: the directories from the root down to `dir` itself, with their paths.
  void walk(const std::string& dir, std::vector<std::pair<DirId, std::string>>& on_path) {
    Listing listing = list_directory(dir);
    index_.ignored_files += listing.ignored;
    std::sort(listing.bad_images.begin(), listing.bad_images.end());
    for (const std::string& name : listing.bad_images) {
      bad(dir + "/" + name, "an image name that is no regular file (a broken link?)");
    }
    std::sort(listing.images.begin(), listing.images.end());
    found_.emplace_back(dir, std::move(listing.images));
    std::sort(listing.dirs.begin(), listing.dirs.end());
    for (const std::string& name : listing.dirs) enter(dir + "/" + name, on_path);
  }

  // Walks `dir` unless it closes a loop or was walked before; `on_path` ends with its parent.
  void enter(const std::string& dir, std::vector<std::pair<DirId, std::string>>& on_path) {
    const std::optional<DirId> id = dir_id(dir);
    if (!id) fail(dir, "cannot be examined (it vanished?)");
    const auto ancestor = std::find_if(on_path.begin(), on_path.end(),
                                       [&](const auto& entry) { return entry.first == *id; });
    if (ancestor != on_path.end()) {
      return bad(dir, "a symlink loop: it is the directory " + ancestor->second +
                          " again (directory symlinks are followed)");
    }
    if (!walked_.insert(*id).second) {
      return bad(dir, "a directory reached twice in one class (two symlinks to one folder?)");
    }
    on_path.emplace_back(*id, dir);
    walk(dir, on_path);
    on_path.pop_back();
  }

  // The class's images in torchvision's order.
  std::vector<std::string> images() {
    std::sort(found_.begin(), found_.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<std::string> paths;
    for (const auto& [dir, names] : found_) {
      for (const std::string& name : names) paths.push_back(dir + "/" + name);
    }
    return paths;
  }

 private:
  void bad(const std::string& path, const std::string& what) {
    if (!options_.skip_bad) fail(path, what);
    index_.skipped.push_back("imagefolder:" + path + ": " + what);
  }

  const ImageFolderOptions& options_;
  ImageFolderIndex& index_;
  std::vector<std::pair<std::string, std::vector<std::string>>> found_;
  std::set<DirId> walked_;
};

// `root` without trailing slashes ("/" stays).
std::string trimmed(std::string root) {
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  return root;
}

void require_directory(const std::string& path) {
  std::error_code error;
  if (!fs::exists(path, error)) fail(path, "not found");
  if (!fs::is_directory(path, error)) fail(path, "not a directory");
}

// The message for class folders without images.
std::string no_images(const std::vector<std::string>& folders) {
  std::string list;
  for (const std::string& folder : folders) list += (list.empty() ? "" : ", ") + folder;
  return "no image (" + std::string(kImageExtensionsText) + ") in the class folder" +
         (folders.size() > 1 ? "s " : " ") + list +
         " (torchvision's ImageFolder refuses empty classes too)";
}

}  // namespace

bool has_image_extension(std::string_view name) noexcept {
  const auto ends_with = [name](std::string_view suffix) {
    if (name.size() < suffix.size()) return false;
    const std::string_view tail = name.substr(name.size() - suffix.size());
    return std::equal(tail.begin(), tail.end(), suffix.begin(), [](char a, char b) {
      return (a >= 'A' && a <= 'Z' ? static_cast<char>(a - 'A' + 'a') : a) == b;
    });
  };
  return ends_with(".jpg") || ends_with(".jpeg") || ends_with(".png");
}

ImageFolderIndex index_image_folder(const std::string& root_path,
                                    const ImageFolderOptions& options) {
  const std::string root = trimmed(root_path);
  require_directory(root);
  const std::optional<DirId> root_id = dir_id(root);
  if (!root_id) fail(root, "cannot be examined");
  ImageFolderIndex index;
  Listing top = list_directory(root);
  index.ignored_files = top.ignored + static_cast<std::int64_t>(top.images.size()) +
                        static_cast<std::int64_t>(top.bad_images.size());
  std::sort(top.dirs.begin(), top.dirs.end());
  if (top.dirs.empty()) {
    fail(root, "no class folder (expected " + root + "/<class>/<image> with " +
                   std::string(kImageExtensionsText) + " images)");
  }
  std::vector<std::string> empty;
  for (const std::string& name : top.dirs) {
    const auto label = static_cast<std::int32_t>(index.classes.size());
    index.classes.push_back(name);
    ClassWalk walk(options, index);
    std::vector<std::pair<DirId, std::string>> on_path{{*root_id, root}};
    walk.enter(root + "/" + name, on_path);
    std::vector<std::string> images = walk.images();
    if (images.empty()) empty.push_back(root + "/" + name);
    for (std::string& path : images) index.samples.push_back({std::move(path), label});
  }
  if (!empty.empty()) {
    if (!options.skip_bad) fail(root, no_images(empty));
    for (const std::string& folder : empty) {
      index.skipped.push_back("imagefolder:" + root + ": " + no_images({folder}));
    }
  }
  return index;
}

ImageFolderSplits resolve_image_folder_splits(const std::string& dir_path) {
  const std::string dir = trimmed(dir_path);
  require_directory(dir);
  std::error_code error;
  const std::string train = dir + "/train";
  const std::string val = dir + "/val";
  const bool has_train = fs::is_directory(train, error);
  const bool has_val = fs::is_directory(val, error);
  if (has_val && !has_train) {
    fail(dir, "has val/ but no train/: put the training images in " + train +
                  " (else val/ would be one of the training classes)");
  }
  if (!has_train) return {dir, std::nullopt};
  return {train, has_val ? std::optional<std::string>(val) : std::nullopt};
}

}  // namespace vdnn::models
