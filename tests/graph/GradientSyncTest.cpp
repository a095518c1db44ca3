// Gradient buckets: the flat buffer holds every trainable gradient in backward order at aligned
// offsets; the buckets cover it end to end, the first closing at its own cap, each ready after
// the backward of the node owning its last gradient.
#include "graph/GradientSync.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <vector>

#include "graph/Planner.hpp"
#include "graph/TestNetworks.hpp"
#include "runtime/cpu/CpuStream.hpp"
#include "runtime/memory/HostMemoryResource.hpp"

namespace vdnn::graph {
namespace {

// A deeper ResNet-ish network than the data-parallel test's: several gradients per bucket.
Graph test_graph() { return Graph::build(testing::small_residual_net(), 2); }

std::size_t offset_of(const ParameterStore& params, const Parameter& p) {
  return static_cast<std::size_t>(static_cast<const std::byte*>(p.grad.data()) -
                                  static_cast<const std::byte*>(params.flat_gradients().data()));
}

TEST(GradientSync, GradientsLieInBackwardOrderAndBucketsCoverTheFlatBuffer) {
  const Graph g = test_graph();
  PlanRequest request;
  request.policy = Policy::VdnnAll;
  const Plan plan = make_plan(g, request);
  const std::vector<NodeId> order = backward_order(plan);
  ASSERT_FALSE(order.empty());
  runtime::HostMemoryResource host;
  runtime::cpu::CpuStream stream("compute");
  const ParameterStore params(g, host, 1, stream, 1, Purpose::Training, order);
  // Each gradient after the one before it, aligned, in the order the backward pass runs.
  std::size_t expected = 0;
  std::size_t position = 0;
  for (const std::size_t index : params.gradient_order()) {
    const Parameter& p = params.all()[index];
    EXPECT_EQ(offset_of(params, p), expected) << p.name;
    expected += runtime::MemoryResource::align_up(p.grad.bytes());
    const auto at =
        static_cast<std::size_t>(std::find(order.begin(), order.end(), p.node) - order.begin());
    EXPECT_GE(at, position) << p.name;
    position = at;
  }
  EXPECT_EQ(expected, params.flat_gradients().bytes());
  std::int64_t flattened = 0;
  for (const std::size_t index : params.gradient_order()) {
    flattened += params.all()[index].spec.shape.numel();
  }
  EXPECT_EQ(flattened, params.trainable_count());

  const BucketCaps caps{512, 1024};
  const std::vector<GradientBucket> buckets = cut_buckets(params, caps);
  ASSERT_GT(buckets.size(), 2U);
  std::size_t next = 0;
  for (std::size_t i = 0; i < buckets.size(); ++i) {
    EXPECT_EQ(buckets[i].offset, next) << i;
    if (i + 1 < buckets.size()) EXPECT_GE(buckets[i].bytes, i == 0 ? caps.first_bytes : caps.bytes);
    next += buckets[i].bytes;
    // Ready after the node owning the last gradient that starts inside it.
    const Parameter* last = nullptr;
    for (const std::size_t index : params.gradient_order()) {
      if (offset_of(params, params.all()[index]) < next) last = &params.all()[index];
    }
    ASSERT_NE(last, nullptr);
    EXPECT_EQ(buckets[i].ready_after, last->node) << i;
  }
  EXPECT_EQ(next, params.flat_gradients().bytes());
  // The default caps hold this small network's gradients in one bucket.
  EXPECT_EQ(cut_buckets(params, BucketCaps{}).size(), 1U);
}

// The planner's view (no store allocated) cuts the same buckets as the store's buffer.
TEST(GradientSync, ThePlansGradientSpansCutAsTheStoresFlatBuffer) {
  const Graph g = test_graph();
  const Plan plan = make_plan(g, PlanRequest{});
  runtime::HostMemoryResource host;
  runtime::cpu::CpuStream stream("compute");
  const ParameterStore params(g, host, 1, stream, 1, Purpose::Training, backward_order(plan));
  const std::vector<GradientSpan> spans = gradient_spans(g, plan);
  std::size_t total = 0;
  for (const GradientSpan& s : spans) total += s.bytes;
  EXPECT_EQ(total, params.flat_gradients().bytes());
  const BucketCaps caps{512, 1024};
  const std::vector<GradientBucket> planned = cut_buckets(spans, caps);
  const std::vector<GradientBucket> stored = cut_buckets(params, caps);
  ASSERT_EQ(planned.size(), stored.size());
  ASSERT_GT(planned.size(), 2U);
  for (std::size_t i = 0; i < planned.size(); ++i) {
    EXPECT_EQ(planned[i].offset, stored[i].offset) << i;
    EXPECT_EQ(planned[i].bytes, stored[i].bytes) << i;
    EXPECT_EQ(planned[i].ready_after, stored[i].ready_after) << i;
  }
  EXPECT_THROW(cut_buckets(spans, BucketCaps{0, 1024}), runtime::InvalidArgument);
}

TEST(GradientSync, WithoutAGradientOrderGradientsKeepTheirOwnBuffers) {
  const Graph g = test_graph();
  runtime::HostMemoryResource host;
  runtime::cpu::CpuStream stream("compute");
  const ParameterStore params(g, host, 1, stream, 1);
  EXPECT_TRUE(params.flat_gradients().empty());
  EXPECT_TRUE(params.gradient_order().empty());
  EXPECT_THROW(cut_buckets(params, BucketCaps{}), runtime::InvalidArgument);
  EXPECT_THROW(ParameterStore(g, host, 1, stream, 1, Purpose::Training, {0}),
               runtime::InvalidArgument);
}

}  // namespace
}  // namespace vdnn::graph
