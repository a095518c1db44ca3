// The step-time model: a list-scheduling replay of the plan's actions (Note [Cost model]), with
// the gradient all-reduces on a stream of their own in a data-parallel step.
#include "graph/StepTimeModel.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "graph/planner/PlanBuilder.hpp"

namespace vdnn::graph {
namespace {

constexpr double kFaultSlowdown = 10.0;  // demand faults against prefetched migrations

class Replay {
 public:
  Replay(const Graph& g, const CostModel& costs, const AllReduceStream& all_reduce)
      : g_(g),
        costs_(costs),
        all_reduce_(all_reduce),
        offloaded_(g.nodes().size() + 1, 0.0),
        prefetched_(g.nodes().size() + 1, 0.0) {}

  StepTime run(const std::vector<Action>& actions, const std::vector<std::vector<NodeId>>& waits) {
    staged_input_ = std::any_of(actions.begin(), actions.end(),
                                [](const Action& a) { return a.op == Op::StageInput; });
    for (std::size_t i = 0; i < actions.size(); ++i) {
      // The host blocks until the copies of the maps whose blocks this allocation reuses end: a
      // Release gives a map's block back behind its offload copy.
      if (i < waits.size()) {
        for (NodeId t : waits[i]) host_ = std::max(host_, offloaded_[index(t)]);
      }
      step(actions[i]);
    }
    // The update waits for every bucket; the next step starts once its batch is on the device.
    StepTime t;
    t.all_reduce_seconds = all_reduce_busy_;
    t.exposed_seconds = std::max(0.0, all_reduced_ - compute_);
    t.seconds = std::max(std::max(compute_, all_reduced_), staged_);
    return t;
  }

 private:
  void step(const Action& a) {
    const NodeId t = a.tensor;
    const double bytes = static_cast<double>(tensor_bytes(t));
    switch (a.op) {
      case Op::Allocate:
      case Op::AllocateGrad:
        break;
      case Op::Forward:
        if (t != kNetworkInput) {
          run_compute(costs_.forward(t));
        } else if (!staged_input_) {  // else the previous step uploaded it
          run_compute(bytes / costs_.host_to_device);
        }
        break;
      case Op::StageInput:  // on the offload stream, after the compute work before it
        offload_ = std::max(offload_, compute_) + bytes / costs_.host_to_device;
        staged_ = offload_;
        break;
      case Op::Recompute:
        run_compute(costs_.forward(t));
        break;
      case Op::Backward:
        run_compute(costs_.backward(t));
        launch_all_reduces(t);
        break;
      case Op::Offload:
      case Op::Evict:
        offload_ = std::max(offload_, compute_) + costs_.copy_seconds(a.tier, false, bytes);
        offloaded_[index(t)] = offload_;
        break;
      case Op::Prefetch:
      case Op::Migrate:
        prefetch_ = std::max({prefetch_, compute_, offloaded_[index(t)]}) +
                    costs_.copy_seconds(a.tier, true, bytes);
        prefetched_[index(t)] = prefetch_;
        break;
      case Op::AwaitPrefetch:
        compute_ = std::max(compute_, prefetched_[index(t)]);
        break;
      case Op::FaultIn:
        compute_ = std::max(compute_, offloaded_[index(t)]) +
                   bytes * kFaultSlowdown / costs_.host_to_device;
        break;
      case Op::Release:  // the block goes back behind the copy; its next user follows compute
      case Op::Free:
      case Op::FreeGrad:
      case Op::AllocateWorkspace:
      case Op::FreeWorkspace:
        break;
    }
  }

  void run_compute(double seconds) { compute_ = std::max(compute_, host_) + seconds + costs_.gap; }

  // The buckets node t's backward completes, each after the one before it (one stream, bucket
  // order), none before the compute stream has written it.
  void launch_all_reduces(NodeId t) {
    if (!all_reduce_.active()) return;
    const std::vector<GradientBucket>& buckets = all_reduce_.buckets;
    for (; next_bucket_ < buckets.size() && buckets[next_bucket_].ready_after == t;
         ++next_bucket_) {
      const double seconds = all_reduce_.all_reduce_seconds(buckets[next_bucket_].bytes);
      all_reduced_ = std::max(all_reduced_, compute_) + seconds;
      all_reduce_busy_ += seconds;
    }
  }

  std::uint64_t tensor_bytes(NodeId t) const { return planner::tensor_bytes(g_, t); }
  std::size_t index(NodeId t) const { return planner::index_of(g_, t); }

  const Graph& g_;
  const CostModel& costs_;
  const AllReduceStream& all_reduce_;
  double host_ = 0.0;
  double compute_ = 0.0;
  double offload_ = 0.0;
  double prefetch_ = 0.0;
  bool staged_input_ = false;       // the plan uploads the next batch, so this one is on the device
  double staged_ = 0.0;             // when that upload ends
  std::vector<double> offloaded_;   // per map: when its offload (or eviction) copy ends
  std::vector<double> prefetched_;  // per map: when its prefetch (or migration) ends
  std::size_t next_bucket_ = 0;     // the first bucket not launched yet
  double all_reduced_ = 0.0;        // when the last launched bucket's all-reduce ends
  double all_reduce_busy_ = 0.0;    // the all-reduce stream's busy seconds
};

}  // namespace

double AllReduceStream::all_reduce_seconds(std::size_t bytes) const noexcept {
  if (!active()) return 0.0;
  const double n = world_size;
  return static_cast<double>(bytes) * 2.0 * (n - 1.0) / n / bus_bytes_per_second;
}

AllReduceStream all_reduce_of(const Graph& graph, const Plan& plan) {
  AllReduceStream stream;
  const DataParallelPlan& dp = plan.data_parallel;
  if (dp.world_size <= 1) return stream;
  stream.world_size = dp.world_size;
  stream.bus_bytes_per_second = dp.bus_bytes_per_second;
  stream.buckets = cut_buckets(gradient_spans(graph, plan), dp.buckets);
  return stream;
}

double predict_step_seconds(const Graph& graph, const Plan& plan, const CostModel& costs,
                            const std::vector<std::vector<NodeId>>& waits) {
  return predict_step(graph, plan, costs, all_reduce_of(graph, plan), waits).seconds;
}

StepTime predict_step(const Graph& graph, const Plan& plan, const CostModel& costs,
                      const AllReduceStream& all_reduce,
                      const std::vector<std::vector<NodeId>>& waits) {
  return Replay(graph, costs, all_reduce).run(plan.actions, waits);
}

}  // namespace vdnn::graph
