// The step-time model: a list-scheduling replay of the plan's actions (Note [Cost model]).
#include "graph/StepTimeModel.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

namespace vdnn::graph {
namespace {

constexpr double kFaultSlowdown = 10.0;  // demand faults against prefetched migrations

// Device memory an offload's Release gives back once its copy is done.
struct PendingRelease {
  double ready = 0.0;
  std::uint64_t bytes = 0;
};

class Replay {
 public:
  Replay(const Graph& g, const Plan& plan, const CostModel& costs)
      : g_(g),
        costs_(costs),
        room_(plan.pool_bytes > plan.resident_bytes ? plan.pool_bytes - plan.resident_bytes
                                                    : std::numeric_limits<std::uint64_t>::max()),
        offloaded_(g.nodes().size() + 1, 0.0),
        prefetched_(g.nodes().size() + 1, 0.0) {}

  double run(const std::vector<Action>& actions) {
    for (const Action& a : actions) step(a);
    return compute_;
  }

 private:
  void step(const Action& a) {
    const NodeId t = a.tensor;
    const double bytes = static_cast<double>(tensor_bytes(t));
    switch (a.op) {
      case Op::Allocate:
      case Op::AllocateGrad:
        wait_for_room(a.device_bytes);
        break;
      case Op::Forward:
        run_compute(t == kNetworkInput ? bytes / costs_.host_to_device : costs_.forward(t));
        break;
      case Op::Recompute:
        wait_for_room(a.device_bytes);
        run_compute(costs_.forward(t));
        break;
      case Op::Backward:
        run_compute(costs_.backward(t));
        break;
      case Op::Offload:
      case Op::Evict:
        offload_ = std::max(offload_, compute_) + bytes / costs_.device_to_host;
        offloaded_[index(t)] = offload_;
        break;
      case Op::Release:  // the offload stream waits for the last forward reader, then frees
        offload_ = std::max(offload_, compute_);
        pending_.push_back({offload_, tensor_bytes(t)});
        break;
      case Op::Prefetch:
      case Op::Migrate:
        if (a.op == Op::Prefetch) wait_for_room(a.device_bytes);
        prefetch_ =
            std::max({prefetch_, compute_, offloaded_[index(t)]}) + bytes / costs_.host_to_device;
        prefetched_[index(t)] = prefetch_;
        break;
      case Op::AwaitPrefetch:
        compute_ = std::max(compute_, prefetched_[index(t)]);
        break;
      case Op::FaultIn:
        compute_ = std::max(compute_, offloaded_[index(t)]) +
                   bytes * kFaultSlowdown / costs_.host_to_device;
        break;
      case Op::Free:
      case Op::FreeGrad:
        break;
    }
  }

  void run_compute(double seconds) { compute_ = std::max(compute_, host_) + seconds + costs_.gap; }

  // The host blocks while the bytes in use after this allocation, with those released by copies
  // still running, exceed the pool's room for feature maps.
  void wait_for_room(std::uint64_t in_use_after) {
    std::sort(pending_.begin(), pending_.end(),
              [](const PendingRelease& a, const PendingRelease& b) { return a.ready < b.ready; });
    std::uint64_t held = 0;
    for (const PendingRelease& p : pending_) held += p.ready > host_ ? p.bytes : 0;
    std::size_t done = 0;
    while (in_use_after + held > room_ && done < pending_.size()) {
      const PendingRelease& p = pending_[done++];
      if (p.ready <= host_) continue;
      host_ = p.ready;
      held -= p.bytes;
    }
    pending_.erase(std::remove_if(pending_.begin(), pending_.end(),
                                  [&](const PendingRelease& p) { return p.ready <= host_; }),
                   pending_.end());
  }

  std::uint64_t tensor_bytes(NodeId t) const {
    return (t == kNetworkInput ? g_.input_shape() : g_.node(t).output_shape)
        .bytes(runtime::DType::F32);
  }
  std::size_t index(NodeId t) const {
    return t == kNetworkInput ? g_.nodes().size() : static_cast<std::size_t>(t);
  }

  const Graph& g_;
  const CostModel& costs_;
  std::uint64_t room_;
  double host_ = 0.0;
  double compute_ = 0.0;
  double offload_ = 0.0;
  double prefetch_ = 0.0;
  std::vector<double> offloaded_;   // per map: when its offload (or eviction) copy ends
  std::vector<double> prefetched_;  // per map: when its prefetch (or migration) ends
  std::vector<PendingRelease> pending_;
};

}  // namespace

double predict_step_seconds(const Graph& graph, const Plan& plan, const CostModel& costs) {
  return Replay(graph, plan, costs).run(plan.actions);
}

}  // namespace vdnn::graph
