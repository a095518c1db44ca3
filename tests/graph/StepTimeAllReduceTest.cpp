// The step-time model's all-reduce stream (Note [Data parallelism]): buckets launched as backward
// completes them, one after the other, the update waiting for the last; checked against a hand
// computation on a small network, and a world of one changes nothing, bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <vector>

#include "graph/Planner.hpp"
#include "graph/StepTimeModel.hpp"
#include "graph/TestNetworks.hpp"

namespace vdnn::graph {
namespace {

constexpr double kBackward = 2e-3;  // every layer's, and the gap after each compute operation
constexpr double kGap = 1e-4;
constexpr double kBus = 1e9;  // bytes per second

// Every layer 1 ms forward, 2 ms backward, a 0.1 ms gap; copies (the staged upload) far faster.
CostModel uniform_costs(const Graph& g) {
  CostModel c;
  c.layers.assign(g.nodes().size(), {1e-3, kBackward});
  c.device_to_host = c.host_to_device = 1e15;
  c.gap = kGap;
  return c;
}

struct SmallNet {
  Graph graph = Graph::build(testing::small_residual_net(), 2);
  Plan plan = make_plan(graph, PlanRequest{});
  CostModel costs = uniform_costs(graph);
  std::vector<NodeId> order = backward_order(plan);
};

std::size_t bytes_for(double seconds) {  // at kBus on two ranks: bytes * 2 (2 - 1) / 2 / kBus
  return static_cast<std::size_t>(std::llround(seconds * kBus));
}

// Two buckets: the first ready after the second backward, taking 1 ms longer than the backward
// left after it; the second ready after the last backward, 0.5 ms. So the first ends 1 ms after
// compute does, the second 0.5 ms later: 1.5 ms exposed.
TEST(StepTimeAllReduce, TwoBucketsEndAsAHandComputationSays) {
  const SmallNet s;
  ASSERT_GT(s.order.size(), 3U);
  const double compute = predict_step_seconds(s.graph, s.plan, s.costs);
  const double after_first = static_cast<double>(s.order.size() - 2) * (kBackward + kGap);
  AllReduceStream stream;
  stream.world_size = 2;
  stream.bus_bytes_per_second = kBus;
  stream.buckets = {{0, bytes_for(after_first + 1e-3), s.order[1]},
                    {bytes_for(after_first + 1e-3), bytes_for(0.5e-3), s.order.back()}};
  const StepTime t = predict_step(s.graph, s.plan, s.costs, stream);
  EXPECT_NEAR(t.all_reduce_seconds, after_first + 1.5e-3, 1e-12);
  EXPECT_NEAR(t.exposed_seconds, 1.5e-3, 1e-12);
  EXPECT_NEAR(t.seconds, compute + 1.5e-3, 1e-12);
  // Four ranks move each byte 2 * 3 / 4 times: 1.5 times two ranks' all-reduce.
  stream.world_size = 4;
  EXPECT_NEAR(predict_step(s.graph, s.plan, s.costs, stream).all_reduce_seconds,
              1.5 * (after_first + 1.5e-3), 1e-12);
}

// Buckets short enough to hide behind the backward left after them add nothing to the step.
TEST(StepTimeAllReduce, BucketsHiddenBehindBackwardAreNotExposed) {
  const SmallNet s;
  AllReduceStream stream;
  stream.world_size = 2;
  stream.bus_bytes_per_second = kBus;
  stream.buckets = {{0, bytes_for(1e-3), s.order[1]}, {bytes_for(1e-3), 8, s.order[2]}};
  const StepTime t = predict_step(s.graph, s.plan, s.costs, stream);
  EXPECT_EQ(t.exposed_seconds, 0.0);
  EXPECT_EQ(t.seconds, predict_step_seconds(s.graph, s.plan, s.costs));
  EXPECT_GT(t.all_reduce_seconds, 1e-3);
}

// A world of one, no bandwidth or no buckets: no stream, today's prediction bit for bit.
TEST(StepTimeAllReduce, AWorldOfOneChangesNothing) {
  const SmallNet s;
  const double today = predict_step_seconds(s.graph, s.plan, s.costs);
  AllReduceStream stream;
  stream.buckets = cut_buckets(gradient_spans(s.graph, s.plan), BucketCaps{});
  stream.bus_bytes_per_second = kBus;
  for (const int world : {0, 1}) {
    stream.world_size = world;
    const StepTime t = predict_step(s.graph, s.plan, s.costs, stream);
    EXPECT_EQ(t.seconds, today) << world;
    EXPECT_EQ(t.all_reduce_seconds, 0.0) << world;
    EXPECT_EQ(t.exposed_seconds, 0.0) << world;
  }
  stream.world_size = 2;
  stream.bus_bytes_per_second = 0.0;
  EXPECT_EQ(predict_step(s.graph, s.plan, s.costs, stream).seconds, today);
  EXPECT_EQ(stream.all_reduce_seconds(1 << 20), 0.0);
}

// A plan made for several ranks carries them (PlanRequest::data_parallel): its predicted step is
// predict_step's with the stream all_reduce_of cuts from its gradients, exposed part included, and
// the same request for one rank predicts today's step.
TEST(StepTimeAllReduce, APlanForSeveralRanksPredictsItsAllReduceStream) {
  const SmallNet s;
  PlanRequest request;
  request.costs = &s.costs;
  request.data_parallel.world_size = 2;
  request.data_parallel.bus_bytes_per_second = kBus / 1e3;  // slow: the all-reduce shows
  request.data_parallel.buckets = {64, 256};
  const Plan ranks = make_plan(s.graph, request);
  ASSERT_EQ(ranks.data_parallel.world_size, 2);
  const AllReduceStream stream = all_reduce_of(s.graph, ranks);
  ASSERT_TRUE(stream.active());
  EXPECT_GT(stream.buckets.size(), 1U);
  const StepTime t = predict_step(s.graph, ranks, s.costs, stream);
  EXPECT_GT(t.exposed_seconds, 0.0);
  EXPECT_DOUBLE_EQ(ranks.predicted_step_seconds, t.seconds);
  request.data_parallel.world_size = 1;
  const Plan one = make_plan(s.graph, request);
  EXPECT_FALSE(all_reduce_of(s.graph, one).active());
  EXPECT_DOUBLE_EQ(ranks.predicted_step_seconds, one.predicted_step_seconds + t.exposed_seconds);
  request.purpose = Purpose::Inference;
  request.data_parallel.world_size = 2;
  EXPECT_EQ(make_plan(s.graph, request).data_parallel.world_size, 1);  // no gradients to reduce
}

}  // namespace
}  // namespace vdnn::graph
