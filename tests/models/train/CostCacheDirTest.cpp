// Cost models: measured at setup by a session that chooses by them, kept in the setup cache on
// disk and read back, refused when they are not for the network; a run trains bitwise the same
// with the cache written, read or off.
#include "models/train/CostCacheDir.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "graph/Fusion.hpp"
#include "models/ConfigLoader.hpp"
#include "models/train/Trainer.hpp"
#include "runtime/Error.hpp"

namespace vdnn::models {
namespace {

namespace fs = std::filesystem;

const char* kConfig = VDNN_SOURCE_DIR "/configs/resnet20-cifar.json";

fs::path fresh_dir(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("vdnn-test-costs-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  return dir;
}

TrainerOptions auto_options(const fs::path& cache) {
  TrainerOptions o;
  o.session.policy = graph::Policy::Auto;
  o.session.executor.seed = 5;
  o.cache_dir = cache;
  return o;
}

TEST(CostCache, AutoMeasuresOnceThenReadsTheCache) {
  const fs::path dir = fresh_dir("once");
  const graph::NetworkDef def = load_network(kConfig);
  graph::CostModel measured;
  {
    Trainer first(def, 4, auto_options(dir));
    measured = first.session().costs();
    EXPECT_EQ(measured.source, "measured");
    ASSERT_EQ(measured.layers.size(), first.session().graph().nodes().size());
    EXPECT_GT(measured.layers.front().forward, 0.0);
    // The first convolution's im2col columns, as measured with.
    EXPECT_EQ(measured.layers.front().forward_workspace,
              first.session().layers().workspaces().front().forward);
    EXPECT_GT(measured.layers.front().backward_workspace, 0u);
    EXPECT_GT(measured.device_to_host, 0.0);
    EXPECT_GT(first.session().plan().predicted_step_seconds, 0.0);
    EXPECT_EQ(first.session().plan().cost_source, "measured");
  }
  ASSERT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
  Trainer second(def, 4, auto_options(dir));
  const graph::CostModel& cached = second.session().costs();
  EXPECT_EQ(cached.source.rfind("cache ", 0), 0U) << cached.source;
  ASSERT_EQ(cached.layers.size(), measured.layers.size());
  EXPECT_DOUBLE_EQ(cached.layers.back().backward, measured.layers.back().backward);
  EXPECT_EQ(cached.layers.front().backward_workspace, measured.layers.front().backward_workspace);
  EXPECT_DOUBLE_EQ(cached.gap, measured.gap);
  // Another batch is another key: measured again, a second file.
  Trainer other(def, 2, auto_options(dir));
  EXPECT_EQ(other.session().costs().source, "measured");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 2);
}

TEST(CostCache, AnUnreadableFileIsMeasuredAgain) {
  const fs::path dir = fresh_dir("corrupt");
  const graph::NetworkDef def = load_network(kConfig);
  { Trainer first(def, 2, auto_options(dir)); }
  for (const fs::directory_entry& file : fs::directory_iterator(dir)) {
    std::ofstream(file.path(), std::ios::trunc) << "{\"key\": 1, \"layers\": [[";
  }
  testing::internal::CaptureStderr();
  Trainer again(def, 2, auto_options(dir));
  const std::string warnings = testing::internal::GetCapturedStderr();
  EXPECT_EQ(again.session().costs().source, "measured");
  EXPECT_NE(warnings.find("vdnn: ignoring cache file "), std::string::npos) << warnings;
}

TEST(CostCache, AFileForAnotherNetworkIsRefusedByName) {
  const fs::path dir = fresh_dir("other");
  { Trainer first(load_network(kConfig), 2, auto_options(dir)); }
  const fs::path file = fs::directory_iterator(dir)->path();
  const graph::Graph googlenet =
      graph::Graph::build(load_network(VDNN_SOURCE_DIR "/configs/googlenet-mini.json"), 2);
  try {
    read_cost_file(file, googlenet);
    FAIL() << "expected InvalidArgument";
  } catch (const runtime::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find(file.string()), std::string::npos) << e.what();
  }
  // The trainer fused the network (Note [Fusion]); the file holds the fused graph's costs.
  const graph::Graph resnet = graph::fuse(graph::Graph::build(load_network(kConfig), 2));
  EXPECT_EQ(read_cost_file(file, resnet).source, "file " + file.string());
  EXPECT_THROW(read_cost_file(dir / "missing.json", resnet), runtime::InvalidArgument);
  // The cache file's value alone (a bare cost model) plans the same; a damaged value does not.
  const nlohmann::json entry = nlohmann::json::parse(std::ifstream(file));
  const fs::path bare = dir / "bare.json";
  std::ofstream(bare) << entry.at("value").get<std::string>();
  EXPECT_EQ(read_cost_file(bare, resnet).layers.back().backward,
            read_cost_file(file, resnet).layers.back().backward);
  nlohmann::json damaged = entry;
  damaged["value"] = entry.at("value").get<std::string>() + " ";
  std::ofstream(file, std::ios::trunc) << damaged.dump();
  EXPECT_THROW(read_cost_file(file, resnet), runtime::InvalidArgument);
}

// The losses of `steps` deterministic steps of policy auto (which measures costs at setup).
std::vector<double> losses(const graph::NetworkDef& def, TrainerOptions options, int steps) {
  options.session.deterministic = true;
  Trainer trainer(def, 4, std::move(options));
  std::vector<double> out;
  for (int i = 0; i < steps; ++i) out.push_back(trainer.step().loss);
  return out;
}

TEST(CostCache, DeterministicLossesAreBitwiseTheSameWithAndWithoutTheCache) {
  const fs::path dir = fresh_dir("deterministic");
  const graph::NetworkDef def = load_network(kConfig);
  const std::vector<double> writing = losses(def, auto_options(dir), 3);
  ASSERT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
  const fs::path file = fs::directory_iterator(dir)->path();
  const auto written = fs::last_write_time(file);
  {
    TrainerOptions o = auto_options(dir);
    o.session.deterministic = true;
    Trainer reading(def, 4, o);
    EXPECT_EQ(reading.session().costs().source, "cache " + file.string());
  }
  const std::vector<double> reading = losses(def, auto_options(dir), 3);
  TrainerOptions off = auto_options(dir / "unused");
  off.cache = false;
  const std::vector<double> uncached = losses(def, off, 3);
  EXPECT_FALSE(fs::exists(dir / "unused"));
  EXPECT_EQ(fs::last_write_time(file), written);  // read, not written again
  ASSERT_EQ(writing.size(), 3u);
  for (std::size_t i = 0; i < writing.size(); ++i) {
    // Bitwise: == on doubles, not a tolerance.
    EXPECT_EQ(reading[i], writing[i]) << "step " << i;
    EXPECT_EQ(uncached[i], writing[i]) << "step " << i;
  }
}

}  // namespace
}  // namespace vdnn::models
