// Executor: training reduces the loss, runs are bitwise reproducible, memory is measured and
// matches the plan, nothing is allocated upstream after setup, errors leave it usable.
#include "graph/Executor.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "graph/SessionHarness.hpp"
#include "graph/TestNetworks.hpp"

namespace vdnn::graph {
namespace {

using testing::run_steps;

double mean(const std::vector<double>& v, std::size_t from, std::size_t to) {
  double s = 0.0;
  for (std::size_t i = from; i < to; ++i) s += v[i];
  return s / static_cast<double>(to - from);
}

// What a step keeps on the device for the next one: its input (Note [Input staging]).
std::uint64_t kept_input(const Plan& p) {
  for (const Action& a : p.actions) {
    if (a.op == Op::StageInput) return a.bytes;
  }
  return 0;
}

SessionOptions options(Policy policy = Policy::Baseline, std::uint64_t seed = 7) {
  SessionOptions o;
  o.policy = policy;
  o.executor.seed = seed;
  return o;
}

TEST(Executor, SmallResidualNetLearnsAndIsReproducible) {
  const auto a = run_steps(Graph::build(testing::small_residual_net(), 8), options(), 80).losses;
  const auto b = run_steps(Graph::build(testing::small_residual_net(), 8), options(), 80).losses;
  EXPECT_EQ(a, b);  // bitwise
  EXPECT_LT(mean(a, 70, 80), 0.5 * mean(a, 0, 5));
}

// In bf16 (Note [Precision]) too, where the parameters include the weights' bf16 copies.
class ExecutorPrecision : public ::testing::TestWithParam<runtime::DType> {};

TEST_P(ExecutorPrecision, MeasuredPeakIsThePlansAndStepsReturnEveryByteButTheNextInput) {
  SessionOptions o = options();
  o.precision = GetParam();
  Session session(Graph::build(testing::small_residual_net(), 4), o);
  std::vector<float> images(static_cast<std::size_t>(session.graph().input_shape().numel()), 0.5f);
  std::vector<std::int32_t> labels = {0, 1, 2, 3};
  Executor& exec = session.executor();
  const std::uint64_t resident = exec.memory().device_current;
  EXPECT_EQ(resident, session.plan().resident_bytes);
  exec.train_step(images.data(), labels.data(), 0.01);
  ASSERT_GT(kept_input(session.plan()), 0u);
  EXPECT_EQ(exec.memory().device_current, resident + kept_input(session.plan()));
  EXPECT_EQ(exec.memory().device_peak, session.plan().predicted_peak);
  EXPECT_EQ(exec.steps(), 1);
}

INSTANTIATE_TEST_SUITE_P(Executor, ExecutorPrecision,
                         ::testing::Values(runtime::DType::F32, runtime::DType::BF16),
                         [](const auto& p) { return std::string(runtime::dtype_name(p.param)); });

// layers::Init::Constant: every element of ConvNeXt's layer scale starts at the spec's `init`.
TEST(Executor, LayerScaleStartsAtItsInitialValue) {
  using namespace layers;
  Conv2dSpec conv = testing::conv(4, 3);
  LayerScaleSpec scale;
  scale.init = 0.25;
  LinearSpec fc;
  fc.out_features = 4;
  Session session(Graph::build(testing::network({
                                   testing::layer("conv", conv, {"input"}),
                                   testing::layer("scale", scale, {"conv"}),
                                   testing::layer("pool", GlobalAvgPoolSpec{}, {"scale"}),
                                   testing::layer("fc", fc, {"pool"}),
                                   testing::layer("loss", SoftmaxCrossEntropySpec{}, {"fc"}),
                               }),
                               2),
                  options());
  for (const Parameter& p : session.executor().parameters().all()) {
    if (p.name != "scale.layer_scale") continue;
    std::vector<float> values(p.value.bytes() / sizeof(float));
    session.context().compute().copy_async(values.data(), p.value.data(), p.value.bytes());
    session.context().compute().synchronize();
    ASSERT_EQ(values.size(), 4u);
    for (const float v : values) EXPECT_EQ(v, 0.25f);
    return;
  }
  FAIL() << "no parameter scale.layer_scale";
}

TEST(Executor, NoUpstreamAllocationAfterSetup) {
  Session session(testing::load_config("resnet20-cifar.json", 4), options(Policy::VdnnAll));
  std::vector<float> images(static_cast<std::size_t>(session.graph().input_shape().numel()), 0.5f);
  std::vector<std::int32_t> labels = {0, 1, 2, 3};
  Executor& exec = session.executor();
  exec.train_step(images.data(), labels.data(), 0.01);
  const MemoryReport first = exec.memory();
  EXPECT_EQ(first.device_upstream_allocations, 1u);  // the pool's one block
  // The pinned pool, input and label staging, the loss statistics.
  EXPECT_EQ(first.pinned_upstream_allocations, 4u);
  for (int i = 0; i < 3; ++i) exec.train_step(images.data(), labels.data(), 0.01);
  EXPECT_EQ(exec.memory().device_upstream_allocations, first.device_upstream_allocations);
  EXPECT_EQ(exec.memory().pinned_upstream_allocations, first.pinned_upstream_allocations);
  EXPECT_GT(exec.memory().pinned_peak, 0u);
  const TransferReport& copies = exec.transfers();
  EXPECT_EQ(copies.offloaded_bytes, session.plan().offloaded_bytes);
  EXPECT_EQ(copies.prefetched_bytes, session.plan().prefetched_bytes);
  EXPECT_GT(copies.step_seconds, 0.0);
}

// The copies of one step in copy_timing_period are timed (the first), the others' not: their
// durations are 0 and their bytes still count.
TEST(Executor, TimesTheCopiesOfOneStepInItsPeriod) {
  SessionOptions o = options(Policy::VdnnAll);
  o.executor.copy_timing_period = 3;
  Session session(testing::load_config("resnet20-cifar.json", 4), o);
  std::vector<float> images(static_cast<std::size_t>(session.graph().input_shape().numel()), 0.5f);
  std::vector<std::int32_t> labels = {0, 1, 2, 3};
  Executor& exec = session.executor();
  for (int step = 0; step < 4; ++step) {
    SCOPED_TRACE(step);
    exec.train_step(images.data(), labels.data(), 0.01);
    const TransferReport& copies = exec.transfers();
    const bool timed = step % 3 == 0;
    EXPECT_EQ(copies.copies_timed, timed);
    EXPECT_EQ(copies.offload_seconds > 0.0, timed);
    EXPECT_EQ(copies.prefetch_seconds > 0.0, timed);
    EXPECT_EQ(copies.offloaded_bytes, session.plan().offloaded_bytes);
    EXPECT_EQ(copies.prefetched_bytes, session.plan().prefetched_bytes);
  }
}

TEST(Executor, ResNet20LossFallsOver50Steps) {
  const auto losses = run_steps(testing::load_config("resnet20-cifar.json", 16), options(), 50);
  EXPECT_LT(mean(losses.losses, 45, 50), 0.7 * mean(losses.losses, 0, 5));
}

TEST(Executor, ResNet20RunsAreBitwiseIdentical) {
  EXPECT_EQ(run_steps(testing::load_config("resnet20-cifar.json", 4), options(), 5).losses,
            run_steps(testing::load_config("resnet20-cifar.json", 4), options(), 5).losses);
}

TEST(Executor, LabelsOutOfRangeThrowAndLeaveItUsable) {
  Session session(Graph::build(testing::small_residual_net(), 2), options(Policy::VdnnAll));
  std::vector<float> images(static_cast<std::size_t>(session.graph().input_shape().numel()), 0.f);
  std::vector<std::int32_t> labels = {0, 9};
  EXPECT_THROW(session.executor().train_step(images.data(), labels.data(), 0.01),
               runtime::InvalidArgument);
  labels = {0, 1};
  EXPECT_NO_THROW(session.executor().train_step(images.data(), labels.data(), 0.01));
  EXPECT_EQ(session.executor().memory().device_current,
            session.plan().resident_bytes + kept_input(session.plan()));
}

TEST(Executor, TimelineNeedsProfilingAndFollowsThePlan) {
  Session plain(Graph::build(testing::small_residual_net(), 4), options(Policy::VdnnAll));
  std::vector<std::int32_t> labels = {0, 1, 2, 3};
  plain.executor().train_step(plain.executor().input_staging(), labels.data(), 0.01);
  EXPECT_THROW(static_cast<void>(plain.executor().timeline()), runtime::InvalidArgument);

  SessionOptions o = options(Policy::VdnnAll);
  o.executor.profile_layers = true;
  o.executor.input_slots = 2;
  Session session(Graph::build(testing::small_residual_net(), 4), o);
  Executor& exec = session.executor();
  const Plan& plan = session.plan();
  const std::uint64_t input = session.graph().input_shape().bytes(runtime::DType::F32);
  for (const bool stage : {true, false}) {
    if (stage) exec.stage_next(exec.input_staging(1));
    exec.train_step(exec.input_staging(), labels.data(), 0.01);
    const StepTimeline timeline = exec.timeline();
    ASSERT_EQ(timeline.memory.size(), plan.actions.size());
    for (std::size_t i = 0; i < plan.actions.size(); ++i) {
      EXPECT_EQ(timeline.memory[i].device_bytes,
                plan.resident_bytes + plan.actions[i].device_bytes);
    }
    EXPECT_EQ(timeline.memory.back().pinned_bytes, 0u);  // every pinned buffer came back
    std::size_t layers = 0;
    std::size_t offloads = 0;
    std::size_t uploads = 0;
    for (const TimelineEvent& e : timeline.events) {
      EXPECT_LE(e.start, e.end);
      layers += e.op == Op::Forward || e.op == Op::Backward ? 1 : 0;
      offloads += e.op == Op::Offload ? 1 : 0;
      if (e.op != Op::StageInput) continue;
      ++uploads;
      EXPECT_STREQ(e.stream, "offload");
      EXPECT_EQ(e.bytes, input);
    }
    EXPECT_EQ(layers, 2 * session.graph().nodes().size());
    EXPECT_GT(offloads, 0u);
    EXPECT_EQ(uploads, stage ? 1u : 0u);
    // Host enqueue times: per kind of action, and the layers' share within it.
    const std::vector<double>& host = exec.host_seconds_by_op();
    ASSERT_EQ(host.size(), kOpCount);
    double forward_host = 0.0;
    for (const LayerTime& t : exec.layer_times()) forward_host += t.forward_host;
    EXPECT_GT(host[static_cast<std::size_t>(Op::Forward)], 0.0);
    EXPECT_GT(host[static_cast<std::size_t>(Op::Backward)], 0.0);
    EXPECT_GT(forward_host, 0.0);  // the layers' part; the rest is the input's upload
    EXPECT_LE(forward_host, host[static_cast<std::size_t>(Op::Forward)] +
                                host[static_cast<std::size_t>(Op::Recompute)] + 1e-12);
  }
}

// Note [Input staging]: naming the next batch moves its upload into the step before and changes
// no loss, no weight and no peak.
TEST(Executor, StagingTheNextBatchChangesNothingButWhereItsUploadRuns) {
  for (const Policy p : {Policy::Baseline, Policy::VdnnAll, Policy::Recompute}) {
    const Graph g = testing::load_config("resnet20-cifar.json", 4);
    const std::uint64_t input = g.input_shape().bytes(runtime::DType::F32);
    const auto staged = run_steps(g, options(p), 4);
    const auto plain = run_steps(g, options(p), 4, 0.05, /*stage=*/false);
    EXPECT_EQ(staged.losses, plain.losses) << policy_name(p);  // bitwise
    EXPECT_EQ(staged.weights, plain.weights) << policy_name(p);
    EXPECT_EQ(staged.memory.device_peak, staged.predicted_peak) << policy_name(p);
    EXPECT_EQ(plain.memory.device_peak, plain.predicted_peak) << policy_name(p);
    EXPECT_EQ(staged.staged_input_bytes, (std::vector<std::uint64_t>{input, input, input, 0}));
    EXPECT_EQ(plain.staged_input_bytes, std::vector<std::uint64_t>(4, 0));
  }
}

// A pass on other images than the staged batch uploads them into the memory kept for it; the
// losses are those of a session that never staged, and an evaluation frees the kept memory.
TEST(Executor, APassOnOtherImagesThanTheStagedBatchUploadsItsOwn) {
  SessionOptions o = options();
  o.executor.input_slots = 3;
  Session session(testing::load_config("resnet20-cifar.json", 4), o);
  Session reference(testing::load_config("resnet20-cifar.json", 4), o);
  const auto numel = static_cast<std::size_t>(session.graph().input_shape().numel());
  const std::uint64_t input = session.graph().input_shape().bytes(runtime::DType::F32);
  std::vector<std::int32_t> labels = {0, 1, 2, 3};
  Executor& exec = session.executor();
  for (Executor* e : {&exec, &reference.executor()}) {
    for (std::size_t slot = 0; slot < 3; ++slot) {
      std::fill_n(static_cast<float*>(e->input_staging(slot)), numel,
                  0.25f * static_cast<float>(slot + 1));
    }
  }
  const std::uint64_t resident = exec.memory().device_current;
  Executor& ref = reference.executor();
  exec.stage_next(exec.input_staging(1));
  EXPECT_EQ(exec.train_step(exec.input_staging(0), labels.data(), 0.01).loss,
            ref.train_step(ref.input_staging(0), labels.data(), 0.01).loss);
  EXPECT_EQ(exec.transfers().staged_input_bytes, input);
  EXPECT_EQ(exec.memory().device_current, resident + input);  // slot 1 waits on the device
  EXPECT_EQ(exec.train_step(exec.input_staging(2), labels.data(), 0.01).loss,
            ref.train_step(ref.input_staging(2), labels.data(), 0.01).loss);
  EXPECT_EQ(exec.transfers().staged_input_bytes, 0u);
  EXPECT_EQ(exec.memory().device_current, resident + input);  // kept for the next pass
  exec.stage_next(exec.input_staging(1));
  EXPECT_EQ(exec.train_step(exec.input_staging(0), labels.data(), 0.01).loss,
            ref.train_step(ref.input_staging(0), labels.data(), 0.01).loss);
  EXPECT_EQ(exec.evaluate(exec.input_staging(2), labels.data()).loss,
            ref.evaluate(ref.input_staging(2), labels.data()).loss);
  EXPECT_EQ(exec.memory().device_current, resident);
  EXPECT_EQ(exec.train_step(exec.input_staging(1), labels.data(), 0.01).loss,
            ref.train_step(ref.input_staging(1), labels.data(), 0.01).loss);
}

// A caller's batch read in place (read_input_in_place) trains bitwise as its upload does under
// every policy, after a step that kept memory for a staged batch (which goes back); the caller's
// memory is never poisoned; managed plans copy it instead.
TEST(Executor, AnInputReadInPlaceTrainsAsItsUploadAndIsNeverPoisoned) {
  for (const Policy p : {Policy::Baseline, Policy::VdnnAll, Policy::VdnnConv, Policy::Recompute,
                         Policy::Uvm, Policy::UvmEvict}) {
    SessionOptions o = options(p);
    o.executor.poison_freed = true;
    o.executor.input_slots = 2;
    Session uploaded(testing::load_config("resnet20-cifar.json", 4), o);
    Session in_place(testing::load_config("resnet20-cifar.json", 4), o);
    const auto numel = static_cast<std::size_t>(uploaded.graph().input_shape().numel());
    std::vector<float> images(numel);
    for (std::size_t i = 0; i < numel; ++i) images[i] = static_cast<float>(i % 13) / 13.0f;
    const std::vector<float> original = images;
    std::vector<std::int32_t> labels = {0, 1, 2, 3};
    for (Session* s : {&uploaded, &in_place}) {
      Executor& e = s->executor();
      std::fill_n(static_cast<float*>(e.input_staging(0)), numel, 0.25f);
      std::fill_n(static_cast<float*>(e.input_staging(1)), numel, 0.5f);
      e.stage_next(e.input_staging(1));  // uploaded in the first step, then not trained on
      e.train_step(e.input_staging(0), labels.data(), 0.01);
    }
    for (int step = 0; step < 3; ++step) {
      const double expected =
          uploaded.executor().train_step(images.data(), labels.data(), 0.01).loss;
      in_place.executor().read_input_in_place(images.data());
      EXPECT_EQ(in_place.executor().train_step(images.data(), labels.data(), 0.01).loss, expected)
          << policy_name(p) << ", step " << step;
      EXPECT_EQ(images, original) << policy_name(p);
    }
  }
}

// Only the step given the read_input_in_place pointer reads in place; the pool's allocations stay
// the plan's.
TEST(Executor, OnlyTheNamedImagesAreReadInPlace) {
  Session uploaded(testing::load_config("resnet20-cifar.json", 4), options());
  Session in_place(testing::load_config("resnet20-cifar.json", 4), options());
  std::vector<float> images(static_cast<std::size_t>(uploaded.graph().input_shape().numel()), 0.5f);
  std::vector<float> others(images.size(), 0.25f);
  std::vector<std::int32_t> labels = {0, 1, 2, 3};
  in_place.executor().read_input_in_place(others.data());
  EXPECT_EQ(in_place.executor().train_step(images.data(), labels.data(), 0.01).loss,
            uploaded.executor().train_step(images.data(), labels.data(), 0.01).loss);
  in_place.executor().read_input_in_place(images.data());
  EXPECT_EQ(in_place.executor().train_step(images.data(), labels.data(), 0.01).loss,
            uploaded.executor().train_step(images.data(), labels.data(), 0.01).loss);
  EXPECT_EQ(in_place.executor().memory().device_peak, in_place.plan().predicted_peak);
  EXPECT_EQ(in_place.executor().train_step(others.data(), labels.data(), 0.01).loss,
            uploaded.executor().train_step(others.data(), labels.data(), 0.01).loss);
}

TEST(Executor, StagingNeedsASlotAndCallerMemoryLeavesTheSlotsAlone) {
  Session session(Graph::build(testing::small_residual_net(), 4), options());
  Executor& exec = session.executor();
  std::vector<float> images(static_cast<std::size_t>(session.graph().input_shape().numel()), 0.5f);
  std::vector<std::int32_t> labels = {0, 1, 2, 3};
  EXPECT_THROW(exec.stage_next(images.data()), runtime::InvalidArgument);
  auto* slot = static_cast<float*>(exec.input_staging(0));
  std::fill_n(slot, images.size(), 0.25f);
  exec.stage_next(slot);
  // Other host memory (a caller's batch) is uploaded from where it is: the named slot, which a
  // loader may be filling, is left alone.
  const double loss = exec.train_step(images.data(), labels.data(), 0.01).loss;
  EXPECT_TRUE(std::all_of(slot, slot + images.size(), [](float x) { return x == 0.25f; }));
  Session fresh(Graph::build(testing::small_residual_net(), 4), options());
  std::copy(images.begin(), images.end(), static_cast<float*>(fresh.executor().input_staging(0)));
  EXPECT_EQ(
      fresh.executor().train_step(fresh.executor().input_staging(0), labels.data(), 0.01).loss,
      loss);
}

}  // namespace
}  // namespace vdnn::graph
