// `vdnn make-images` and tools/make-images.sh run as processes on tiny sets: the ImageFolder
// layout, every file decoding with the decoder, every stored kind present, the same bytes from
// any number of threads, the WebDataset shards, and the errors for bad arguments.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "models/data/image/ImageDecoder.hpp"
#include "tools/CliRun.hpp"

namespace {

namespace fs = std::filesystem;
using vdnn::test::CliRun;
using vdnn::test::temp_dir;
using vdnn::test::vdnn;

const std::string kTinySet = "--classes 3 --train 40 --val 10 --seed 7 --min-side 24 --max-side 48";

std::vector<std::uint8_t> bytes_of(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Every file under `dir`, by path relative to it.
std::map<std::string, std::vector<std::uint8_t>> files_under(const fs::path& dir) {
  std::map<std::string, std::vector<std::uint8_t>> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file()) files[fs::relative(entry.path(), dir).string()] = bytes_of(entry);
  }
  return files;
}

// Counts of the stored kinds among decoded files.
struct Kinds {
  int gray = 0, cmyk = 0, progressive = 0, png = 0;
};

// Checks that `path` decodes, that its format matches its extension and its size the side
// range; adds its kind to `kinds`.
void check_image(const fs::path& path, Kinds& kinds) {
  using namespace vdnn::models;
  const std::vector<std::uint8_t> file = bytes_of(path);
  const ImageInfo info = read_image_info(file.data(), file.size(), path.string());
  const RgbImage image = decode_image(file.data(), file.size(), path.string());
  EXPECT_EQ(info.format == ImageFormat::Png, path.extension() == ".png") << path;
  EXPECT_GE(std::min(image.width, image.height), 24) << path;
  EXPECT_LE(std::min(image.width, image.height), 48) << path;
  EXPECT_LE(std::max(image.width, image.height), 48 * 16 / 9 + 1) << path;
  kinds.gray += info.colour == ImageColour::Gray;
  kinds.cmyk += info.colour == ImageColour::Cmyk || info.colour == ImageColour::Ycck;
  kinds.progressive += info.format == ImageFormat::Jpeg && info.progressive;
  kinds.png += info.format == ImageFormat::Png;
}

TEST(MakeImages, WritesAnImageFolderOfDecodableImagesOfEveryKind) {
  const fs::path dir = temp_dir("make-images");
  const CliRun run = vdnn("make-images --out " + (dir / "set").string() + " " + kTinySet);
  ASSERT_EQ(run.code, 0) << run.output;
  EXPECT_NE(run.output.find("wrote 150 images (3 classes; 40 train, 10 val per class)"),
            std::string::npos)
      << run.output;
  for (const auto& [split, per_class] : {std::pair<std::string, int>{"train", 40}, {"val", 10}}) {
    Kinds kinds;
    for (const std::string label : {"n0000", "n0001", "n0002"}) {
      const fs::path folder = dir / "set" / split / label;
      int count = 0;
      for (const auto& entry : fs::directory_iterator(folder)) {
        EXPECT_EQ(entry.path().filename().string().rfind(label + "_", 0), 0u) << entry.path();
        check_image(entry.path(), kinds);
        ++count;
      }
      EXPECT_EQ(count, per_class) << folder;
    }
    if (split == "train") {  // the first hundred images hold exactly 1 + 3 + 1 + 10 of the kinds
      EXPECT_GE(kinds.png, 1);
      EXPECT_GE(kinds.gray, 3);
      EXPECT_GE(kinds.cmyk, 1);
      EXPECT_GE(kinds.progressive, 10);
    }
  }
  fs::remove_all(dir);
}

TEST(MakeImages, IsAPureFunctionOfTheOptionsWhateverTheThreads) {
  const fs::path dir = temp_dir("make-images-threads");
  ASSERT_EQ(vdnn("make-images --threads 1 --out " + (dir / "a").string() + " " + kTinySet).code, 0);
  ASSERT_EQ(vdnn("make-images --threads 3 --out " + (dir / "b").string() + " " + kTinySet).code, 0);
  const auto a = files_under(dir / "a");
  EXPECT_EQ(a.size(), 150u);
  EXPECT_TRUE(a == files_under(dir / "b"));
  ASSERT_EQ(vdnn("make-images --seed 8 --out " + (dir / "c").string() +
                 " --classes 3 --train 40 --min-side 24 --max-side 48")
                .code,
            0);
  EXPECT_NE(a.at("train/n0000/n0000_000000.jpg"), bytes_of(dir / "c/train/n0000/n0000_000000.jpg"));
  fs::remove_all(dir);
}

TEST(MakeImages, RefusesANonEmptyFolderWithoutForce) {
  const fs::path dir = temp_dir("make-images-force");
  std::ofstream(dir / "keep.txt") << "mine";
  const std::string command = "make-images --out " + dir.string() + " " + kTinySet;
  const CliRun refused = vdnn(command);
  EXPECT_EQ(refused.code, 2) << refused.output;
  EXPECT_NE(refused.output.find("exists and is not empty; pass --force"), std::string::npos)
      << refused.output;
  EXPECT_FALSE(fs::exists(dir / "train"));
  ASSERT_EQ(vdnn(command + " --force").code, 0);
  EXPECT_TRUE(fs::exists(dir / "keep.txt"));  // only train/ and val/ are replaced
  EXPECT_TRUE(fs::exists(dir / "val/n0002/n0002_000009.jpg") ||
              fs::exists(dir / "val/n0002/n0002_000009.png"));
  fs::remove_all(dir);
}

TEST(MakeImages, BadArgumentsAreUsageErrors) {
  const fs::path dir = temp_dir("make-images-bad");
  const std::string out = "make-images --out " + (dir / "x").string();
  for (const std::string& args :
       {std::string(" --classes 0 --train 1"), std::string(" --classes 421 --train 1"),
        std::string(" --classes 2 --train -1"), std::string(" --classes 2"),
        std::string(" --classes 2 --train 1 --min-side 4")}) {
    EXPECT_EQ(vdnn(out + args).code, 2) << args;
  }
  const CliRun sides = vdnn(out + " --classes 2 --train 1 --min-side 100 --max-side 50");
  EXPECT_EQ(sides.code, 2);
  EXPECT_NE(sides.output.find("--min-side 100 is over --max-side 50"), std::string::npos)
      << sides.output;
  const CliRun none = vdnn(out + " --classes 2 --train 0");
  EXPECT_EQ(none.code, 2);
  EXPECT_NE(none.output.find("--train and --val are both 0"), std::string::npos) << none.output;
  EXPECT_FALSE(fs::exists(dir / "x"));
  fs::remove_all(dir);
}

// The members of a ustar archive: name -> contents.
std::map<std::string, std::string> tar_members(const fs::path& path) {
  const std::vector<std::uint8_t> tar = bytes_of(path);
  std::map<std::string, std::string> members;
  for (std::size_t at = 0; at + 512 <= tar.size() && tar[at] != 0;) {
    const std::string name(reinterpret_cast<const char*>(&tar[at]));
    const std::size_t size = std::stoul(std::string(&tar[at + 124], &tar[at + 135]), nullptr, 8);
    members[name.substr(0, 100)] = std::string(&tar[at + 512], &tar[at + 512 + size]);
    at += 512 + (size + 511) / 512 * 512;
  }
  return members;
}

TEST(MakeImages, ScriptPacksTheSameImagesAsWebDatasetShards) {
  const fs::path dir = temp_dir("make-images-wds");
  const CliRun run =
      vdnn::test::shell("VDNN_CLI=" + std::string(VDNN_CLI_PATH) + " bash " + VDNN_SOURCE_DIR +
                        "/tools/make-images.sh --webdataset " + "--shard-size 16 --out " +
                        (dir / "set").string() + " " + kTinySet);
  ASSERT_EQ(run.code, 0) << run.output;
  const auto images = files_under(dir / "set");
  for (const auto& [split, samples] :
       {std::pair<std::string, std::size_t>{"train", 120}, {"val", 30}}) {
    const std::size_t shards = (samples + 15) / 16;
    std::map<std::string, std::string> packed;  // every shard's members
    for (std::size_t s = 0; s <= shards; ++s) {
      char name[32];
      std::snprintf(name, sizeof name, "shard-%06zu.tar", s);
      const fs::path shard = dir / "set-wds" / split / name;
      EXPECT_EQ(fs::exists(shard), s < shards) << shard;
      if (s < shards) packed.merge(tar_members(shard));
    }
    EXPECT_EQ(packed.size(), 2 * samples) << split;
    for (const auto& [path, bytes] : images) {
      const fs::path image(path);
      if (path.rfind(split + "/", 0) != 0) continue;
      const std::string key = image.stem().string();  // n0002_000009: class 2
      ASSERT_EQ(packed.count(image.filename().string()), 1u) << path;
      EXPECT_TRUE(packed.at(image.filename().string()) == std::string(bytes.begin(), bytes.end()));
      ASSERT_EQ(packed.count(key + ".cls"), 1u) << path;
      EXPECT_EQ(packed.at(key + ".cls"), std::to_string(std::stoi(key.substr(1, 4))));
    }
  }
  fs::remove_all(dir);
}

}  // namespace
