// Executor::evaluate: inference mode (batch norm's running statistics, dropout as identity),
// no change to training state, and the pools of every policy hold it under tight budgets.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "graph/Fusion.hpp"
#include "graph/SessionHarness.hpp"
#include "graph/TestNetworks.hpp"

namespace vdnn::graph {
namespace {

using testing::conv;
using testing::layer;

// conv-bn-relu, dropout, pooling, linear, loss: both layers that behave differently in inference.
NetworkDef dropout_net() {
  using namespace layers;
  LinearSpec fc;
  fc.out_features = 4;
  return testing::network({
      layer("conv", conv(8, 3), {"input"}),
      layer("bn", BatchNorm2dSpec{}, {"conv"}),
      layer("relu", ReluSpec{}, {"bn"}),
      layer("drop", DropoutSpec{0.5}, {"relu"}),
      layer("pool", GlobalAvgPoolSpec{}, {"drop"}),
      layer("fc", fc, {"pool"}),
      layer("loss", SoftmaxCrossEntropySpec{}, {"fc"}),
  });
}

// Every value (parameters and batch-norm statistics) and velocity, read back.
std::vector<float> state_of(Session& session) {
  std::vector<std::vector<float>> parts;
  for (const Parameter& p : session.executor().parameters().all()) {
    for (const runtime::Buffer* b : {&p.value, &p.state[0]}) {
      if (b->empty()) continue;
      parts.emplace_back(b->bytes() / sizeof(float));
      session.context().compute().copy_async(parts.back().data(), b->data(), b->bytes());
    }
  }
  session.context().compute().synchronize();
  std::vector<float> all;
  for (const auto& part : parts) all.insert(all.end(), part.begin(), part.end());
  return all;
}

bool bitwise_equal(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

struct Data {
  std::vector<float> images;
  std::vector<std::int32_t> labels;
};

Data batch_of(const Graph& g, std::uint64_t seed, std::int64_t index) {
  const runtime::Shape& in = g.input_shape();
  auto data = models::make_dataset("synthetic", {in.c(), in.h(), in.w(), g.num_classes()}, seed);
  data->seek(index * in.n());
  Data d{std::vector<float>(static_cast<std::size_t>(in.numel())),
         std::vector<std::int32_t>(static_cast<std::size_t>(in.n()))};
  data->next_batch(in.n(), d.images.data(), d.labels.data());
  return d;
}

// Trains `steps` steps, evaluating a held-out batch after each when `evaluate`; returns the
// training losses, and checks on the way that evaluation changes nothing.
std::vector<double> train(Graph graph, const SessionOptions& options, int steps, bool evaluate) {
  Session session(std::move(graph), options);
  Executor& exec = session.executor();
  const Data held_out = batch_of(session.graph(), 1000, 0);
  std::vector<double> losses;
  for (int i = 0; i < steps; ++i) {
    const Data d = batch_of(session.graph(), options.executor.seed, i);
    losses.push_back(exec.train_step(d.images.data(), d.labels.data(), 0.05).loss);
    if (!evaluate) continue;
    const std::vector<float> before = state_of(session);
    const MemoryReport memory = exec.memory();
    const std::int64_t step_count = exec.steps();
    const StepResult first = exec.evaluate(held_out.images.data(), held_out.labels.data());
    const StepResult again = exec.evaluate(held_out.images.data(), held_out.labels.data());
    EXPECT_EQ(first.loss, again.loss);  // inference is a pure function of the state...
    EXPECT_TRUE(bitwise_equal(state_of(session), before));  // ...which it does not change
    EXPECT_EQ(exec.steps(), step_count);
    EXPECT_EQ(exec.memory().device_peak, memory.device_peak);  // within the step's peak
    EXPECT_EQ(exec.memory().pool_peak, memory.pool_peak);
    // Every map freed, the input the last step kept too (Note [Input staging]).
    EXPECT_EQ(exec.memory().device_current, session.plan().resident_bytes);
    EXPECT_EQ(exec.memory().device_upstream_allocations, memory.device_upstream_allocations);
    EXPECT_EQ(exec.memory().pinned_upstream_allocations, memory.pinned_upstream_allocations);
  }
  return losses;
}

SessionOptions options(Policy policy, std::uint64_t budget = 0) {
  SessionOptions o;
  o.policy = policy;
  o.budget_bytes = budget;
  o.executor.seed = 5;
  o.executor.poison_freed = true;  // a map freed too early shows as NaN
  return o;
}

// The smallest budget (to 1/256) under which `policy` plans a step of `unfused` as the session
// runs it (fused, with the CPU layers' workspace): the pools are as full and as fragmented as
// planning allows.
std::uint64_t tightest_budget(const Graph& unfused, Policy policy) {
  const Graph graph = fuse(unfused);
  const std::vector<layers::WorkspaceBytes> workspace =
      LayerSet(graph, layers::Backend::Cpu, {}).workspaces();
  std::uint64_t fits = make_plan(graph, {Policy::Baseline, 0, workspace}).predicted_peak;
  std::uint64_t short_of = 0;
  while (fits - short_of > fits / 256) {
    const std::uint64_t mid = short_of + (fits - short_of) / 2;
    try {
      make_plan(graph, {policy, mid, workspace});
      fits = mid;
    } catch (const DoesNotFit&) {
      short_of = mid;
    }
  }
  return fits;
}

TEST(Evaluate, ChangesNothingTrainingSeesUnderEveryPolicyAndTightBudget) {
  for (const char* config : {"resnet20-cifar.json", "googlenet-mini.json"}) {
    const Graph g = testing::load_config(config, 4);
    const std::uint64_t base = make_plan(g, {Policy::Baseline, 0, {}}).predicted_peak;
    const std::uint64_t all = make_plan(g, {Policy::VdnnAll, 0, {}}).predicted_peak;
    const std::uint64_t budget = all + (base - all) / 4;  // as the Budget tests
    const std::vector<double> plain =
        train(testing::load_config(config, 4), options(Policy::Baseline), 3, false);
    for (const SessionOptions& o :
         {options(Policy::Baseline), options(Policy::VdnnAll), options(Policy::VdnnConv),
          options(Policy::VdnnAll, budget), options(Policy::VdnnDyn, budget),
          options(Policy::VdnnAll, tightest_budget(g, Policy::VdnnAll)), options(Policy::Uvm),
          options(Policy::UvmEvict, budget),
          options(Policy::UvmPrefetch, tightest_budget(g, Policy::UvmPrefetch))}) {
      const std::vector<double> losses = train(testing::load_config(config, 4), o, 3, true);
      EXPECT_EQ(losses, plain) << config << " " << policy_name(o.policy) << " " << o.budget_bytes;
    }
  }
}

TEST(Evaluate, UsesRunningStatisticsAndNoDropout) {
  Session session(Graph::build(dropout_net(), 8), options(Policy::Baseline));
  Executor& exec = session.executor();
  const Data d = batch_of(session.graph(), 3, 0);
  // Fresh running statistics are mean 0, variance 1, so inference-mode batch norm is
  // y = x / sqrt(1 + eps): the loss differs from the training forward's on the same batch.
  const StepResult first = exec.evaluate(d.images.data(), d.labels.data());
  EXPECT_EQ(exec.evaluate(d.images.data(), d.labels.data()).loss, first.loss);
  const double trained = exec.train_step(d.images.data(), d.labels.data(), 0.0).loss;
  EXPECT_NE(trained, first.loss);
  // Dropout is the identity: evaluating with another step count (another mask in training)
  // gives the same loss; lr 0 left the weights, but not the running statistics, as they were.
  const StepResult after = exec.evaluate(d.images.data(), d.labels.data());
  exec.set_steps(41);
  EXPECT_EQ(exec.evaluate(d.images.data(), d.labels.data()).loss, after.loss);
}

TEST(Evaluate, InferencePassFreesEachMapAfterItsLastForwardConsumer) {
  const Graph g = Graph::build(testing::small_residual_net(), 4);
  const Plan plan = make_plan(g, {Policy::VdnnAll, 0, {}});
  std::uint64_t peak = 0;
  int allocations = 0;
  int frees = 0;
  for (const Action& a : plan.inference) {
    EXPECT_TRUE(a.op == Op::Allocate || a.op == Op::Forward || a.op == Op::Free) << op_name(a.op);
    allocations += a.op == Op::Allocate;
    frees += a.op == Op::Free;
    peak = std::max(peak, a.device_bytes);
  }
  EXPECT_EQ(allocations, static_cast<int>(g.nodes().size()) + 1);  // every node and the input
  EXPECT_EQ(frees, allocations);
  EXPECT_EQ(plan.inference.back().device_bytes, 0u);
  EXPECT_LE(peak + plan.resident_bytes, plan.predicted_peak);
}

}  // namespace
}  // namespace vdnn::graph
