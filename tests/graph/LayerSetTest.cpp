// LayerSet: downgrades to memory-lean algorithms are counted and can be taken back.
#include "graph/LayerSet.hpp"

#include <gtest/gtest.h>

#include "graph/SessionHarness.hpp"

namespace vdnn::graph {
namespace {

TEST(LayerSet, ADowngradeThatShrinksNothingCanBeTakenBack) {
  LayerSet layers(testing::load_config("resnet20-cifar.json", 4), layers::Backend::Cpu, {});
  const std::uint64_t workspace = layers.workspace_bytes();
  EXPECT_FALSE(layers.downgrade_largest_workspace());  // the CPU layers have no lean variants
  EXPECT_EQ(layers.lean_layers(), 1);
  EXPECT_TRUE(layers.undo_last_downgrade());
  EXPECT_EQ(layers.lean_layers(), 0);
  EXPECT_EQ(layers.workspace_bytes(), workspace);
  EXPECT_FALSE(layers.undo_last_downgrade());
}

}  // namespace
}  // namespace vdnn::graph
