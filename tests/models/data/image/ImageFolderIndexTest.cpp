// ImageFolderIndex on temporary trees: torchvision's class and file order, symlinked folders,
// extensions, the split rule, and the hostile trees (loops, empty classes, broken links).
#include "models/data/image/ImageFolderIndex.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "models/data/image/TarBytes.hpp"
#include "models/train/SafetensorsBytes.hpp"
#include "runtime/Error.hpp"

namespace vdnn::models {
namespace {

namespace fs = std::filesystem;

#define EXPECT_CONTAINS(text, part) \
  EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

class ImageFolderIndexTest : public ::testing::Test {
 protected:
  // Creates the file `relative` (and its folders) under the test directory.
  void touch(const std::string& relative) {
    fs::create_directories((dir_.path() / relative).parent_path());
    testing::write_file(dir_.path() / relative, "x");
  }
  void link(const std::string& target, const std::string& relative) {
    fs::create_directories((dir_.path() / relative).parent_path());
    fs::create_directory_symlink(target, dir_.path() / relative);
  }
  std::string path(const std::string& relative) const { return (dir_.path() / relative).string(); }

  // The DataError that indexing `root` throws; checks that it names `named`.
  static std::string index_error(const std::string& root, const std::string& named) {
    try {
      index_image_folder(root);
    } catch (const runtime::DataError& e) {
      EXPECT_CONTAINS(e.what(), "imagefolder:" + named);
      return e.what();
    }
    ADD_FAILURE() << "expected DataError";
    return {};
  }

  // The samples as "label path-under-root" lines.
  std::vector<std::string> listed(const ImageFolderIndex& index, const std::string& root) const {
    std::vector<std::string> lines;
    for (const ImageFolderSample& sample : index.samples) {
      lines.push_back(std::to_string(sample.label) + " " +
                      sample.path.substr(path(root).size() + 1));
    }
    return lines;
  }

  testing::TempDir dir_{"image-folder-test"};
};

TEST_F(ImageFolderIndexTest, ClassesAndFilesComeInTorchvisionOrder) {
  for (const char* file :
       {"root/cat/b.jpg", "root/cat/B.jpg", "root/cat/a.PNG", "root/cat/a/x/deep.jpeg",
        "root/cat/a/in_a.jpg", "root/cat/a b/in_a_b.jpg", "root/Zebra/z.JpEg", "root/dog/d.png"}) {
    touch(file);
  }
  const ImageFolderIndex index = index_image_folder(path("root"));
  EXPECT_EQ(index.classes, (std::vector<std::string>{"Zebra", "cat", "dog"}));  // byte order
  // sorted(os.walk(...)) orders directories by their whole path: "cat/a b" (space, 0x20) comes
  // before "cat/a/x" ('/', 0x2f), unlike a depth-first walk.
  EXPECT_EQ(listed(index, "root"),
            (std::vector<std::string>{"0 Zebra/z.JpEg", "1 cat/B.jpg", "1 cat/a.PNG", "1 cat/b.jpg",
                                      "1 cat/a/in_a.jpg", "1 cat/a b/in_a_b.jpg",
                                      "1 cat/a/x/deep.jpeg", "2 dog/d.png"}));
  EXPECT_EQ(index.ignored_files, 0);
  EXPECT_TRUE(index.skipped.empty());
}

TEST_F(ImageFolderIndexTest, OnlyImageExtensionsCountOthersAreCounted) {
  for (const char* file : {"root/readme.txt", "root/top.jpg", "root/cls/a.jpg", "root/cls/a.gif",
                           "root/cls/notes", "root/cls/a.jpg.txt", "root/cls/.jpg"}) {
    touch(file);
  }
  const ImageFolderIndex index = index_image_folder(path("root") + "/");  // trailing slash
  EXPECT_EQ(listed(index, "root"), (std::vector<std::string>{"0 cls/.jpg", "0 cls/a.jpg"}));
  EXPECT_EQ(index.ignored_files, 5);  // 3 in cls, and the root's files
}

TEST_F(ImageFolderIndexTest, SymlinkedFoldersAreFollowed) {
  touch("elsewhere/dogs/d1.jpg");
  touch("elsewhere/dogs/puppies/p.jpg");
  touch("elsewhere/extra/e.png");
  touch("root/cat/c.jpg");
  link(path("elsewhere/dogs"), "root/dog");
  link(path("elsewhere/extra"), "root/cat/more");
  const ImageFolderIndex index = index_image_folder(path("root"));
  EXPECT_EQ(index.classes, (std::vector<std::string>{"cat", "dog"}));
  EXPECT_EQ(listed(index, "root"),
            (std::vector<std::string>{"0 cat/c.jpg", "0 cat/more/e.png", "1 dog/d1.jpg",
                                      "1 dog/puppies/p.jpg"}));
}

TEST_F(ImageFolderIndexTest, SymlinkLoopIsAnErrorNamingTheLink) {
  touch("root/cat/c.jpg");
  touch("root/cat/sub/s.jpg");
  link(path("root/cat"), "root/cat/sub/loop");
  const std::string message = index_error(path("root"), path("root/cat/sub/loop"));
  EXPECT_CONTAINS(message, "a symlink loop: it is the directory " + path("root/cat") + " again");
  // A class folder linking back to the root loops too.
  touch("other/cls/a.jpg");
  link(path("other"), "other/up");
  EXPECT_CONTAINS(index_error(path("other"), path("other/up")), "a symlink loop");
}

TEST_F(ImageFolderIndexTest, SkipBadSkipsTheLoopAndKeepsTheRest) {
  touch("root/cat/c.jpg");
  touch("root/cat/sub/s.jpg");
  link(path("root/cat"), "root/cat/sub/loop");
  const ImageFolderIndex index = index_image_folder(path("root"), ImageFolderOptions{true});
  EXPECT_EQ(listed(index, "root"), (std::vector<std::string>{"0 cat/c.jpg", "0 cat/sub/s.jpg"}));
  ASSERT_EQ(index.skipped.size(), 1u);
  EXPECT_CONTAINS(index.skipped[0],
                  "imagefolder:" + path("root/cat/sub/loop") + ": a symlink loop");
}

TEST_F(ImageFolderIndexTest, FolderReachedTwiceInOneClassIsAnError) {
  touch("shared/s.jpg");
  touch("root/cat/c.jpg");
  link(path("shared"), "root/cat/one");
  link(path("shared"), "root/cat/two");
  EXPECT_CONTAINS(index_error(path("root"), path("root/cat/two")), "reached twice");
  const ImageFolderIndex index = index_image_folder(path("root"), ImageFolderOptions{true});
  EXPECT_EQ(listed(index, "root"), (std::vector<std::string>{"0 cat/c.jpg", "0 cat/one/s.jpg"}));
  EXPECT_EQ(index.skipped.size(), 1u);
}

TEST_F(ImageFolderIndexTest, OneFolderInTwoClassesIsAllowed) {
  touch("shared/s.jpg");
  link(path("shared"), "root/a");
  link(path("shared"), "root/b");
  const ImageFolderIndex index = index_image_folder(path("root"));
  EXPECT_EQ(listed(index, "root"), (std::vector<std::string>{"0 a/s.jpg", "1 b/s.jpg"}));
}

TEST_F(ImageFolderIndexTest, EmptyClassesAreAnErrorListingTheExtensions) {
  touch("root/cat/c.jpg");
  touch("root/dog/readme.txt");
  fs::create_directories(path("root/eel/deeper"));
  const std::string message = index_error(path("root"), path("root"));
  EXPECT_CONTAINS(message, "no image (.jpg, .jpeg, .png) in the class folders " + path("root/dog") +
                               ", " + path("root/eel"));
  const ImageFolderIndex index = index_image_folder(path("root"), ImageFolderOptions{true});
  EXPECT_EQ(index.classes, (std::vector<std::string>{"cat", "dog", "eel"}));  // labels kept
  EXPECT_EQ(listed(index, "root"), std::vector<std::string>{"0 cat/c.jpg"});
  ASSERT_EQ(index.skipped.size(), 2u);
  EXPECT_CONTAINS(index.skipped[1], "in the class folder " + path("root/eel"));
}

TEST_F(ImageFolderIndexTest, BrokenImageLinkIsAnError) {
  touch("root/cat/c.jpg");
  fs::create_symlink(path("nowhere.jpg"), path("root/cat/broken.jpg"));
  fs::create_symlink(path("nowhere.txt"), path("root/cat/broken.txt"));  // no image: ignored
  EXPECT_CONTAINS(index_error(path("root"), path("root/cat/broken.jpg")), "no regular file");
  const ImageFolderIndex index = index_image_folder(path("root"), ImageFolderOptions{true});
  EXPECT_EQ(listed(index, "root"), std::vector<std::string>{"0 cat/c.jpg"});
  EXPECT_EQ(index.skipped.size(), 1u);
  EXPECT_EQ(index.ignored_files, 1);
}

TEST_F(ImageFolderIndexTest, RootWithoutClassesIsAnError) {
  touch("root/a.jpg");
  EXPECT_CONTAINS(index_error(path("root"), path("root")), "no class folder");
  EXPECT_CONTAINS(index_error(path("missing"), path("missing")), "not found");
  EXPECT_CONTAINS(index_error(path("root/a.jpg"), path("root/a.jpg")), "not a directory");
}

// Indexes `root` as an unprivileged user (root reads every directory, so a root process first
// becomes "nobody"): 0 when the DataError names the unreadable directory `locked`.
int index_unprivileged(const std::string& root, const std::string& locked) {
  if (::geteuid() == 0 && ::setuid(65534) != 0) return 2;
  try {
    index_image_folder(root);
  } catch (const runtime::DataError& e) {
    const std::string expected = "imagefolder:" + locked + ": cannot read the directory";
    return std::string(e.what()).find(expected) != std::string::npos ? 0 : 3;
  }
  return 4;
}

TEST_F(ImageFolderIndexTest, UnreadableDirectoryIsAnError) {
  touch("root/cat/c.jpg");
  touch("root/cat/locked/l.jpg");
  const std::string locked = path("root/cat/locked");
  ::chmod(locked.c_str(), 0);
  ::chmod(dir_.path().c_str(), 0755);
  EXPECT_EXIT(std::_Exit(index_unprivileged(path("root"), locked)), ::testing::ExitedWithCode(0),
              "");
  ::chmod(locked.c_str(), 0755);  // so the temporary directory can be removed
}

TEST_F(ImageFolderIndexTest, SplitRuleTrainAndVal) {
  fs::create_directories(path("both/train"));
  fs::create_directories(path("both/val"));
  const ImageFolderSplits both = resolve_image_folder_splits(path("both"));
  EXPECT_EQ(both.train, path("both/train"));
  EXPECT_EQ(both.eval, path("both/val"));
  fs::create_directories(path("train_only/train"));
  const ImageFolderSplits train_only = resolve_image_folder_splits(path("train_only") + "/");
  EXPECT_EQ(train_only.train, path("train_only/train"));
  EXPECT_FALSE(train_only.eval.has_value());
  fs::create_directories(path("flat/cat"));
  const ImageFolderSplits flat = resolve_image_folder_splits(path("flat"));
  EXPECT_EQ(flat.train, path("flat"));
  EXPECT_FALSE(flat.eval.has_value());
}

TEST_F(ImageFolderIndexTest, SplitRuleRefusesValWithoutTrainAndMissingFolders) {
  fs::create_directories(path("odd/val"));
  fs::create_directories(path("odd/cat"));
  for (const std::string& dir : {path("odd"), path("missing")}) {
    try {
      resolve_image_folder_splits(dir);
      ADD_FAILURE() << "expected DataError for " << dir;
    } catch (const runtime::DataError& e) {
      EXPECT_CONTAINS(e.what(), "imagefolder:" + dir + ": ");
    }
  }
}

TEST(ImageExtensionTest, CaseInsensitiveJpegAndPng) {
  EXPECT_TRUE(has_image_extension("a.jpg"));
  EXPECT_TRUE(has_image_extension("A.JPEG"));
  EXPECT_TRUE(has_image_extension("x.y.PnG"));
  EXPECT_FALSE(has_image_extension("a.gif"));
  EXPECT_FALSE(has_image_extension("jpg"));
  EXPECT_FALSE(has_image_extension("a.jpg.txt"));
}

}  // namespace
}  // namespace vdnn::models
