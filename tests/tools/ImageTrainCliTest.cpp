// `vdnn train` on image files (issue 25): an ImageFolder trains and evaluates, its classes go to
// classes.txt; a bad file stops the run with exit 1 naming it, or with --skip-bad-images is counted
// and trained past; a network whose classes differ from the folder's is refused.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tools/CliRun.hpp"

namespace vdnn::test {
namespace {

namespace fs = std::filesystem;

// A small network for 32x32 images of `classes` classes.
fs::path write_config(const fs::path& dir, int classes) {
  const fs::path path = dir / ("tiny-" + std::to_string(classes) + ".json");
  std::ofstream(path) << R"({"name": "tiny", "input": {"channels": 3, "height": 32, "width": 32},
  "num_classes": )" << classes
                      << R"(, "layers": [
  {"name": "conv", "type": "conv2d", "out_channels": 8, "kernel": 3, "padding": 1},
  {"name": "bn", "type": "batchnorm2d"}, {"name": "relu", "type": "relu"},
  {"name": "pool", "type": "global_avgpool"}, {"name": "flat", "type": "flatten"},
  {"name": "fc", "type": "linear", "out_features": )"
                      << classes << R"(},
  {"name": "loss", "type": "softmax_cross_entropy"}]})";
  return path;
}

// DIR/train and DIR/val of 3 classes of small generated images.
fs::path make_images(const fs::path& dir) {
  const fs::path images = dir / "images";
  const CliRun made = vdnn("make-images --out " + images.string() +
                           " --classes 3 --train 6 --val 2 --min-side 32 --max-side 48");
  EXPECT_EQ(made.code, 0) << made.output;
  return images;
}

nlohmann::json summary(const fs::path& run) {
  std::ifstream in(run / "summary.json");
  return nlohmann::json::parse(in);
}

std::string train(const fs::path& config, const fs::path& images, const fs::path& out,
                  const std::string& extra = "") {
  return "train --device cpu --config " + config.string() +
         " --data imagefolder:" + images.string() + " --batch 4 --iters 4 --out " + out.string() +
         " " + extra;
}

TEST(ImageTrainCli, TrainsOnAnImageFolderAndWritesItsClasses) {
  const fs::path dir = temp_dir("image-train");
  const fs::path images = make_images(dir);
  const CliRun run = vdnn(train(write_config(dir, 3), images, dir / "run", "--eval-every 2"));
  ASSERT_EQ(run.code, 0) << run.output;
  std::ifstream classes(dir / "run" / "classes.txt");
  std::stringstream text;
  text << classes.rdbuf();
  EXPECT_EQ(text.str(), "n0000\nn0001\nn0002\n");
  const nlohmann::json s = summary(dir / "run");
  EXPECT_EQ(s["bad_images"], 0);
  EXPECT_EQ(s["augment"], "imagenet");
  EXPECT_NE(s["data"].get<std::string>().find("imagefolder:"), std::string::npos);
  EXPECT_EQ(s["eval"]["images"], 4);  // the val split: one batch of 4 of its 6 images
}

TEST(ImageTrainCli, EvaluatesOnASourceOfItsOwn) {
  const fs::path dir = temp_dir("image-train-eval-data");
  const fs::path images = make_images(dir);
  const fs::path config = write_config(dir, 3);
  // A plain class tree named to evaluate on is evaluated whole: val's 6 images, one batch of 4.
  const CliRun run =
      vdnn(train(config, images / "train", dir / "run",
                 "--eval-every 4 --eval-data imagefolder:" + (images / "val").string()));
  ASSERT_EQ(run.code, 0) << run.output;
  EXPECT_EQ(summary(dir / "run")["eval"]["images"], 4);
  const CliRun mixed =
      vdnn(train(config, images, dir / "mixed", "--eval-every 4 --eval-data synthetic"));
  EXPECT_EQ(mixed.code, 2) << mixed.output;
  EXPECT_NE(mixed.output.find("--eval-data"), std::string::npos) << mixed.output;
}

TEST(ImageTrainCli, ABadImageStopsTheRunNamingItUnlessSkipped) {
  const fs::path dir = temp_dir("image-train-bad");
  const fs::path images = make_images(dir);
  std::ofstream(images / "train" / "n0001" / "zz-broken.jpg") << "\xFF\xD8\xFF\xE0 not a JPEG";
  const fs::path config = write_config(dir, 3);
  // 19 files, 4 steps of 4: the broken one is drawn.
  const CliRun stopped = vdnn(train(config, images, dir / "stopped"));
  EXPECT_EQ(stopped.code, 1) << stopped.output;
  EXPECT_NE(stopped.output.find("zz-broken.jpg"), std::string::npos) << stopped.output;
  const CliRun skipped = vdnn(train(config, images, dir / "skipped", "--skip-bad-images"));
  ASSERT_EQ(skipped.code, 0) << skipped.output;
  EXPECT_NE(skipped.output.find("warning: skipped"), std::string::npos) << skipped.output;
  EXPECT_EQ(summary(dir / "skipped")["bad_images"], 1);
}

TEST(ImageTrainCli, RefusesAFolderWhoseClassesTheNetworkDoesNotHave) {
  const fs::path dir = temp_dir("image-train-classes");
  const fs::path images = make_images(dir);
  const CliRun run = vdnn(train(write_config(dir, 5), images, dir / "run"));
  EXPECT_EQ(run.code, 2) << run.output;
  EXPECT_NE(run.output.find("3 classes"), std::string::npos) << run.output;
  fs::create_directories(images / "train" / "n0003");  // an empty class folder
  const CliRun empty = vdnn(train(write_config(dir, 4), images, dir / "empty"));
  EXPECT_EQ(empty.code, 1) << empty.output;
  EXPECT_NE(empty.output.find("n0003"), std::string::npos) << empty.output;
}

}  // namespace
}  // namespace vdnn::test
