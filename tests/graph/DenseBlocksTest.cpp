// Dense block storage (Note [Dense block storage]): which concatenations fusion lets take their
// first input in place, which buffer holds each map, the plan's one allocation per block buffer,
// and that training on the views gives bitwise the losses and weights of the packed maps (unfused:
// no views) under every policy, with the measured peak the predicted one.
#include "graph/DenseBlocks.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>

#include "graph/Fusion.hpp"
#include "graph/Planner.hpp"
#include "graph/Session.hpp"
#include "graph/SessionHarness.hpp"
#include "graph/TestNetworks.hpp"

namespace vdnn::graph {
namespace {

using testing::layer;
using testing::load_config;
using testing::poisoned_options;
using testing::run_steps;
using testing::small_dense_net;

NodeId id_of(const Graph& g, const std::string& name) {
  for (NodeId id = 0; id < static_cast<NodeId>(g.nodes().size()); ++id) {
    if (g.node(id).name == name) return id;
  }
  throw std::runtime_error("no node " + name);
}

NodeId storage_of(const Graph& g, const std::vector<NodeId>& storage, const std::string& name) {
  return storage[static_cast<std::size_t>(id_of(g, name))];
}

TEST(DenseBlocks, EachBlocksConcatenationsLieInItsLastOnesBuffer) {
  const Graph g = fuse(Graph::build(small_dense_net(), 2));
  const std::vector<NodeId> storage = block_storage(g);
  for (const std::string b : {"dense1", "dense2"}) {
    const NodeId last = id_of(g, b + ".3.concat");
    EXPECT_EQ(storage_of(g, storage, b + ".1.concat"), last) << b;
    EXPECT_EQ(storage_of(g, storage, b + ".2.concat"), last) << b;
    EXPECT_EQ(storage_of(g, storage, b + ".3.concat"), last) << b;
  }
  // The stem and the transition's pool are not concatenations: their own buffers, copied in.
  EXPECT_EQ(storage_of(g, storage, "stem"), id_of(g, "stem"));
  EXPECT_EQ(storage_of(g, storage, "transition.pool"), id_of(g, "transition.pool"));
  const std::vector<bool> shared = shares_block(storage);
  EXPECT_EQ(std::count(shared.begin(), shared.end(), true), 6);
  // Batch 2, F32: 24, 32 and 40 channels at 8x8, then at 4x4; each block's buffer is its 40.
  const BlockTotals totals = block_totals(g);
  EXPECT_EQ(totals.concatenations, 6);
  EXPECT_EQ(totals.buffers, 2);
  EXPECT_EQ(totals.buffer_bytes, 2u * 40 * (64 + 16) * 4);
  EXPECT_EQ(totals.apart_bytes, 2u * (24 + 32 + 40) * (64 + 16) * 4);
}

TEST(DenseBlocks, UnfusedGraphsAndConfigsHaveNone) {
  const Graph g = Graph::build(small_dense_net(), 2);
  const std::vector<bool> shared = shares_block(block_storage(g));
  EXPECT_EQ(std::count(shared.begin(), shared.end(), true), 0);
}

TEST(DenseBlocks, AViewOnlyWhereEveryOtherReaderIsABatchNormAndChannelsAlign) {
  using namespace layers;
  // growth 4: 16 + 4 = 20 channels, not a multiple of kBlockChannelAlignment.
  const Graph narrow = fuse(Graph::build(small_dense_net(3, 4), 2));
  const std::vector<bool> none = shares_block(block_storage(narrow));
  EXPECT_EQ(std::count(none.begin(), none.end(), true), 0);
  // A relu reading the first concatenation keeps it apart; the second still joins the third.
  NetworkDef def = small_dense_net();
  LinearSpec fc;
  fc.out_features = 4;
  def.layers.insert(def.layers.end() - 1, {layer("side.relu", ReluSpec{}, {"dense1.1.concat"}),
                                           layer("side.pool", GlobalAvgPoolSpec{}, {"side.relu"}),
                                           layer("side.flatten", FlattenSpec{}, {"side.pool"}),
                                           layer("side.fc", fc, {"side.flatten"}),
                                           layer("side.add", AddSpec{}, {"fc", "side.fc"})});
  def.layers.back().inputs = {"side.add"};
  const Graph g = fuse(Graph::build(def, 2));
  const std::vector<NodeId> storage = block_storage(g);
  EXPECT_EQ(storage_of(g, storage, "dense1.1.concat"), id_of(g, "dense1.1.concat"));
  EXPECT_EQ(storage_of(g, storage, "dense1.2.concat"), id_of(g, "dense1.3.concat"));
}

TEST(DenseBlocks, DenseNet264HasEveryBlockInOneBuffer) {
  const Graph g = fuse(load_config("densenet264.json", 2));
  const std::vector<NodeId> storage = block_storage(g);
  std::map<NodeId, int> views_per_buffer;
  for (std::size_t i = 0; i + 1 < storage.size(); ++i) {
    if (storage[i] != static_cast<NodeId>(i)) ++views_per_buffer[storage[i]];
  }
  std::vector<int> views;
  for (const auto& [buffer, count] : views_per_buffer) views.push_back(count);
  // Blocks of 6, 12, 64 and 48 layers: every concatenation but the last is a view.
  EXPECT_EQ(views, (std::vector<int>{5, 11, 63, 47}));
}

// Every plan allocates a block's buffer once, under the buffer's map, before the block's first
// concatenation runs, and frees it once; no view has an allocation of its own.
TEST(DenseBlocks, PlansAllocateEachBlockBufferOnce) {
  const Graph g = fuse(Graph::build(small_dense_net(), 2));
  const std::vector<NodeId> storage = block_storage(g);
  for (const Policy p : {Policy::Baseline, Policy::VdnnAll, Policy::Recompute, Policy::UvmEvict}) {
    PlanRequest request;
    request.policy = p;
    const Plan plan = make_plan(g, request);
    std::map<NodeId, int> allocations;
    std::map<NodeId, int> frees;
    for (const Action& a : plan.actions) {
      if (a.tensor == kNetworkInput) continue;
      if (a.op == Op::Allocate) ++allocations[a.tensor];
      if (a.op == Op::Free) ++frees[a.tensor];
      if (a.op == Op::Forward && storage[static_cast<std::size_t>(a.tensor)] != a.tensor) {
        EXPECT_EQ(allocations[storage[static_cast<std::size_t>(a.tensor)]], 1)
            << policy_name(p) << ": " << g.node(a.tensor).name << " before its buffer";
      }
    }
    for (NodeId t = 0; t < static_cast<NodeId>(g.nodes().size()); ++t) {
      const bool view = storage[static_cast<std::size_t>(t)] != t;
      EXPECT_EQ(allocations[t], view ? 0 : 1) << policy_name(p) << ": " << g.node(t).name;
      if (t != g.loss_node()) {
        EXPECT_EQ(frees[t] > 0, !view) << policy_name(p) << ": " << g.node(t).name;
      }
      if (view || shares_block(storage)[static_cast<std::size_t>(t)]) {
        EXPECT_EQ(plan.placement_of(t), Placement::InBlock) << policy_name(p);
      }
    }
  }
}

// The packed maps (unfused: no dense block storage) against the views, under policies that keep,
// offload and rebuild the maps around the blocks; NaN poisoning would show a view read after its
// buffer went back.
TEST(DenseBlockTraining, ViewsTrainBitwiseAsPackedMapsUnderEveryPolicy) {
  const auto packed =
      run_steps(Graph::build(small_dense_net(), 4), poisoned_options(false, Policy::Baseline), 4);
  for (const Policy p :
       {Policy::Baseline, Policy::VdnnAll, Policy::Recompute, Policy::UvmPrefetch}) {
    const auto run = run_steps(Graph::build(small_dense_net(), 4), poisoned_options(true, p), 4);
    EXPECT_EQ(run.losses, packed.losses) << policy_name(p);
    EXPECT_EQ(run.weights, packed.weights) << policy_name(p);
    EXPECT_EQ(run.memory.device_peak, run.predicted_peak) << policy_name(p);
  }
}

// Evaluation runs the forward-only plan, where a block's buffer goes when the last forward reader
// of its maps is done: the same logits as packed maps, and every buffer back after the pass.
TEST(DenseBlockTraining, EvaluationOnViewsGivesThePackedLogitsAndFreesEveryBuffer) {
  std::vector<std::vector<float>> logits;
  for (const bool fuse : {false, true}) {
    Session session(Graph::build(small_dense_net(), 4), poisoned_options(fuse, Policy::Baseline));
    Executor& exec = session.executor();
    const runtime::Shape& in = session.graph().input_shape();
    auto data = models::make_dataset("synthetic", {in.c(), in.h(), in.w(), 4}, 7);
    std::vector<float> images(static_cast<std::size_t>(in.numel()));
    std::vector<std::int32_t> labels(static_cast<std::size_t>(in.n()));
    data->next_batch(in.n(), images.data(), labels.data());
    exec.train_step(images.data(), labels.data(), 0.05);
    logits.emplace_back(static_cast<std::size_t>(in.n() * 4));
    exec.evaluate(images.data(), labels.data(), logits.back().data());
    EXPECT_EQ(exec.memory().device_current, session.plan().resident_bytes) << fuse;
  }
  EXPECT_EQ(logits[1], logits[0]);
}

}  // namespace
}  // namespace vdnn::graph
