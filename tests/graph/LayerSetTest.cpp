// LayerSet: per-pass workspaces, their limits, and downgrades where a layer has nothing smaller.
#include "graph/LayerSet.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "graph/SessionHarness.hpp"
#include "runtime/Error.hpp"

namespace vdnn::graph {
namespace {

TEST(LayerSet, CpuConvolutionsNeedTheirColumnsInBothPassesWhateverTheLimit) {
  LayerSet layers(testing::load_config("resnet20-cifar.json", 4), layers::Backend::Cpu, {});
  const std::vector<layers::WorkspaceBytes> fastest = layers.workspaces();
  std::uint64_t largest = 0;
  for (const layers::WorkspaceBytes& w : fastest) {
    EXPECT_EQ(w.forward, w.backward);
    largest = std::max<std::uint64_t>(largest, w.forward);
  }
  EXPECT_GT(largest, 0u);
  EXPECT_EQ(layers.workspace_bytes(), largest);
  const std::uint64_t key = layers.algorithm_key();
  EXPECT_FALSE(layers.downgrade_largest_workspace());  // one algorithm per CPU layer
  layers.limit_workspaces(std::vector<layers::WorkspaceBytes>(fastest.size(), {0, 0}));
  EXPECT_EQ(layers.workspaces(), fastest);
  EXPECT_EQ(layers.limited_layers(), 0);
  EXPECT_EQ(layers.algorithm_key(), key);
  EXPECT_THROW(layers.limit_workspaces({}), runtime::InvalidArgument);
}

}  // namespace
}  // namespace vdnn::graph
