// Cost measurement at setup (Note [Cost model]).
#include "graph/CostProfiler.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "graph/PoolSimulation.hpp"
#include "graph/StepTimeModel.hpp"
#include "runtime/Error.hpp"
#include "runtime/MemoryResource.hpp"

namespace vdnn::graph {
namespace {

constexpr std::size_t kCopyBytes = std::size_t{64} << 20;
constexpr int kCopyRepeats = 4;

// Bytes per second of device-to-host and host-to-device copies running at the same time, as the
// offload and prefetch streams run them in a step.
std::pair<double, double> copy_rates(runtime::ExecutionContext& context) {
  runtime::Buffer device_out(context.device_upstream(), kCopyBytes);
  runtime::Buffer device_in(context.device_upstream(), kCopyBytes);
  runtime::Buffer host_out(context.pinned_upstream(), kCopyBytes);
  runtime::Buffer host_in(context.pinned_upstream(), kCopyBytes);
  runtime::Stream& down = context.offload();
  runtime::Stream& up = context.prefetch();
  const auto down_start = context.make_event(true);
  const auto down_end = context.make_event(true);
  const auto up_start = context.make_event(true);
  const auto up_end = context.make_event(true);
  double down_seconds = 0.0;
  double up_seconds = 0.0;
  for (int i = 0; i <= kCopyRepeats; ++i) {  // the first round warms up
    down_start->record(down);
    up_start->record(up);
    down.copy_async(host_out.data(), device_out.data(), kCopyBytes);
    up.copy_async(device_in.data(), host_in.data(), kCopyBytes);
    down_end->record(down);
    up_end->record(up);
    down.synchronize();
    up.synchronize();
    if (i == 0) continue;
    down_seconds += down_end->seconds_since(*down_start);
    up_seconds += up_end->seconds_since(*up_start);
  }
  const double bytes = static_cast<double>(kCopyBytes) * kCopyRepeats;
  return {bytes / std::max(down_seconds, 1e-9), bytes / std::max(up_seconds, 1e-9)};
}

// Seconds per copy of `count` copies of `bytes` each, to the peer and back in turn, back to back on
// the offload stream between two timing events (none between the copies, as a step runs them).
double peer_copy_seconds(runtime::ExecutionContext& context, runtime::Buffer& device,
                         runtime::Buffer& remote, std::size_t bytes, int count) {
  runtime::Stream& stream = context.offload();
  const auto start = context.make_event(true);
  const auto end = context.make_event(true);
  double seconds = 0.0;
  for (int i = 0; i <= kCopyRepeats; ++i) {  // the first round warms up
    start->record(stream);
    for (int c = 0; c < count; ++c) {
      const std::size_t at = static_cast<std::size_t>(c / 2) * bytes % device.bytes();
      void* near = static_cast<char*>(device.data()) + at;
      void* far = static_cast<char*>(remote.data()) + at;
      if (c % 2 == 0) {
        stream.copy_async(far, near, bytes);
      } else {
        stream.copy_async(near, far, bytes);
      }
    }
    end->record(stream);
    stream.synchronize();
    if (i > 0) seconds += end->seconds_since(*start);
  }
  return seconds / (kCopyRepeats * count);
}

// The peer tier's link (Note [Peer tier]), fitted to copies of 4 MiB and of 64 MiB each way.
void measure_peer_link(runtime::ExecutionContext& context, int peer, CostModel& costs) {
  constexpr std::size_t kSmall = std::size_t{4} << 20;
  constexpr std::size_t kLarge = std::size_t{64} << 20;
  runtime::Buffer device(context.device_upstream(), kLarge);
  runtime::Buffer remote(context.peer_upstream(peer), kLarge);
  const double small = peer_copy_seconds(context, device, remote, kSmall, 32);
  const double large = peer_copy_seconds(context, device, remote, kLarge, 4);
  const LinkFit link = fit_link(kSmall, small, kLarge, large);
  costs.peer_link = link.bytes_per_second;
  costs.peer_copy_latency = link.latency;
}

std::size_t compute_operations(const Plan& plan) {
  return static_cast<std::size_t>(
      std::count_if(plan.actions.begin(), plan.actions.end(), [](const Action& a) {
        return a.op == Op::Forward || a.op == Op::Backward || a.op == Op::Recompute;
      }));
}

}  // namespace

CostModel measure_costs(const Graph& graph, LayerSet& layers, const Plan& plan,
                        runtime::ExecutionContext& context, const ExecutorOptions& options,
                        int steps) {
  VDNN_EXPECTS(steps >= 2, "measuring costs takes at least 2 steps, got " + std::to_string(steps));
  CostModel costs;
  costs.source = "measured";
  const std::vector<std::int32_t> labels(static_cast<std::size_t>(graph.batch()), 0);
  // Steps of a fresh executor (the session's own starts as if none ran), on zeros staged in pinned
  // memory as the trainer's loader stages a batch, each naming the next (the same zeros) so that
  // its upload overlaps the step before, as the trainer's do (Note [Input staging]).
  const auto run = [&](bool profile, const auto& after) {
    ExecutorOptions o = options;
    o.profile_layers = profile;
    o.poison_freed = false;
    o.communicator = nullptr;  // each rank measures its own device, talking to no other
    Executor executor(graph, layers, plan, context, o);
    void* images = executor.input_staging();
    std::memset(images, 0, graph.tensor_bytes(kNetworkInput));
    for (int i = 0; i < steps; ++i) {
      executor.stage_next(images);
      executor.train_step(images, labels.data(), 0.0);
    }
    after(executor);
  };
  run(true, [&](const Executor& e) {
    const auto workspace = layers.workspaces();
    for (std::size_t i = 0; i < e.layer_times().size(); ++i) {
      const LayerTime& t = e.layer_times()[i];
      costs.layers.push_back({t.forward, t.backward, workspace[i].forward, workspace[i].backward});
    }
  });
  // Timing events around every layer slow a step down: the gaps come from steps without them.
  double step_seconds = 0.0;
  run(false, [&](const Executor& e) { step_seconds = e.transfers().step_seconds; });
  std::tie(costs.device_to_host, costs.host_to_device) = copy_rates(context);
  if (plan.peer_device >= 0) measure_peer_link(context, plan.peer_device, costs);
  // The time the step took beyond the replay of the plan is spread over its compute operations as
  // the gap; a replay longer than the step means the events inflated small layers' times (the
  // host was the bottleneck), which are then scaled down to match.
  const double replayed =
      predict_step_seconds(graph, plan, costs, release_waits(graph, plan, plan.pool_bytes));
  if (replayed > step_seconds && step_seconds > 0.0) {
    const double scale = step_seconds / replayed;
    for (LayerCost& c : costs.layers) {
      c.forward *= scale;
      c.backward *= scale;
    }
  } else {
    costs.gap = (step_seconds - replayed) /
                static_cast<double>(std::max<std::size_t>(compute_operations(plan), 1));
  }
  return costs;
}

LinkFit fit_link(double small_bytes, double small_seconds, double large_bytes,
                 double large_seconds) {
  const double rate = (large_bytes - small_bytes) / std::max(large_seconds - small_seconds, 1e-12);
  if (large_seconds > small_seconds && small_seconds > small_bytes / rate) {
    return {rate, small_seconds - small_bytes / rate};
  }
  return {large_bytes / std::max(large_seconds, 1e-12), 0.0};
}

}  // namespace vdnn::graph
