// Conv2dCuda with the setup cache on disk: measured algorithms are stored, read back by a later
// layer (a later run) without measuring, and a stored entry cuDNN does not confirm is measured
// again with one warning.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "layers/LayerCache.hpp"
#include "layers/LayerTestSupport.hpp"
#include "layers/StoredConvAlgos.hpp"
#include "layers/cuda/Conv2dCuda.hpp"
#include "layers/cuda/CudaLayerTest.hpp"
#include "runtime/DiskCache.hpp"

namespace vdnn::test {
namespace {

namespace fs = std::filesystem;
using ConvDiskCache = CudaLayerTest;
using runtime::Shape;

constexpr double kConvTolerance = 1e-4;

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() /
                       ("vdnn-test-conv-cache-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  return dir;
}

std::vector<fs::path> conv_files(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
    if (e.path().filename().string().rfind("conv-", 0) == 0) files.push_back(e.path());
  }
  return files;
}

const Shape kInput{4, 16, 12, 12};
const layers::Conv2dSpec kSpec = conv(32, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, true);

// A measured (cudnnFind) convolution built with its own in-run cache over `disk`.
std::string built_algorithms(layers::LayerOptions o, runtime::DiskCache& disk,
                             runtime::cuda::DeviceContext& context, bool check) {
  layers::LayerCache cache;
  cache.set_disk(&disk);
  o.cache = &cache;
  o.deterministic = false;
  layers::cuda::Conv2dCuda layer(kSpec, {kInput}, o);
  if (check) {
    // Measured algorithms may be nondeterministic (atomics): right, not bitwise repeatable.
    StepSettings settings;
    settings.bitwise_repeatable = false;
    EXPECT_TRUE(cuda_matches_cpu(context, layer, kConvTolerance, settings));
  }
  std::string options;
  for (const bool backward : {false, true}) {
    for (const layers::WorkspaceOption& w : layer.workspace_options(backward)) {
      options += std::to_string(w.workspace) + "/" + std::to_string(w.seconds) + " ";
    }
  }
  return layer.algorithms() + " | " + options;
}

TEST_F(ConvDiskCache, MeasuredAlgorithmsAreStoredAndReadBack) {
  const fs::path dir = fresh_dir("round-trip");
  std::vector<std::string> warnings;
  runtime::DiskCache disk(dir, "test", [&](const std::string& m) { warnings.push_back(m); });
  layers::LayerOptions o = options();
  o.deterministic = false;
  const std::string measured = built_algorithms(o, disk, context(), false);
  ASSERT_EQ(conv_files(dir).size(), 1u);
  const auto written = fs::last_write_time(conv_files(dir).front());
  // A later run: the same candidates, times included (so nothing was measured again).
  EXPECT_EQ(built_algorithms(o, disk, context(), true), measured);
  EXPECT_EQ(fs::last_write_time(conv_files(dir).front()), written);
  EXPECT_EQ(warnings.size(), 0u);
}

TEST_F(ConvDiskCache, AStoredWorkspaceCudnnDoesNotConfirmIsMeasuredAgain) {
  const fs::path dir = fresh_dir("wrong-workspace");
  std::vector<std::string> warnings;
  runtime::DiskCache disk(dir, "test", [&](const std::string& m) { warnings.push_back(m); });
  layers::LayerOptions o = options();
  built_algorithms(o, disk, context(), false);
  ASSERT_EQ(conv_files(dir).size(), 1u);
  // Rewrite the entry whole (valid checksum) with the first forward candidate's workspace off by 1.
  const fs::path file = conv_files(dir).front();
  nlohmann::json j = nlohmann::json::parse(std::ifstream(file));
  std::string why;
  std::optional<layers::StoredConvAlgos> algos =
      layers::parse_conv_algos(j.at("value").get<std::string>(), why);
  ASSERT_TRUE(algos.has_value()) << why;
  algos->forward.front().workspace += 1;
  j["value"] = layers::to_text(*algos);
  j["checksum"] = runtime::cache_checksum(j["value"].get<std::string>());
  std::ofstream(file, std::ios::trunc) << j.dump();

  built_algorithms(o, disk, context(), true);  // measured again, and still right
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings.front().find(file.string()), std::string::npos) << warnings.front();
  EXPECT_NE(warnings.front().find("workspace"), std::string::npos) << warnings.front();
  // The measurement replaced the entry: the next layer reads it without a warning.
  warnings.clear();
  built_algorithms(o, disk, context(), false);
  EXPECT_EQ(warnings.size(), 0u);
}

}  // namespace
}  // namespace vdnn::test
