// The planner: placement of every feature map by policy, then the ordered memory actions of one
// step (Note [Offload lifetime], Note [Recomputation]), with predicted device bytes after each.
#include "graph/Planner.hpp"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>

#include "graph/PoolSimulation.hpp"
#include "runtime/ByteSize.hpp"
#include "runtime/MemoryResource.hpp"

namespace vdnn::graph {
namespace {

constexpr std::uint64_t kF32 = sizeof(float);

// In the order of enum Op.
constexpr const char* kOpNames[] = {
    "allocate",      "forward",  "offload",   "release", "free",    "prefetch", "await-prefetch",
    "allocate-grad", "backward", "free-grad", "evict",   "migrate", "fault-in", "recompute"};

// In the order of enum Policy.
constexpr const char* kPolicyNames[] = {"baseline", "vdnn-all",  "vdnn-conv",    "vdnn-dyn",
                                        "uvm",      "uvm-evict", "uvm-prefetch", "recompute"};

// Layers whose forward costs about one pass over their tensors: running them again in backward is
// cheaper than keeping their outputs (Note [Recomputation]).
constexpr std::string_view kCheapLayers[] = {"batchnorm2d", "relu",      "add",
                                             "maxpool2d",   "avgpool2d", "global_avgpool",
                                             "concat",      "flatten",   "dropout"};

bool is_conv(const Node& node) { return std::holds_alternative<layers::Conv2dSpec>(node.spec); }

bool is_cheap(const Node& node) {
  return std::find(std::begin(kCheapLayers), std::end(kCheapLayers),
                   layers::type_name(node.spec)) != std::end(kCheapLayers);
}

const std::vector<NodeId>& consumers_of(const Graph& g, NodeId t) {
  return t == kNetworkInput ? g.input_consumers() : g.node(t).consumers;
}

std::uint64_t tensor_bytes(const Graph& g, NodeId t) {
  return (t == kNetworkInput ? g.input_shape() : g.node(t).output_shape).bytes(runtime::DType::F32);
}

std::vector<NodeId> distinct(std::vector<NodeId> ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

// Where a map that leaves the device goes under `policy`.
Placement away(Policy policy) {
  switch (policy) {
    case Policy::UvmEvict:
      return Placement::Evicted;
    case Policy::UvmPrefetch:
      return Placement::Migrated;
    default:
      return Placement::Offloaded;
  }
}

// Maps that leave the device between their last forward use and their first backward use.
bool leaves_device(Placement p) {
  return p == Placement::Offloaded || p == Placement::Evicted || p == Placement::Migrated ||
         p == Placement::Recomputed;
}

// Maps whose way back is issued ahead of need: pinned copies and managed migrations.
bool returns_ahead(Placement p) { return p == Placement::Offloaded || p == Placement::Migrated; }

std::size_t index_of(const Graph& g, NodeId t) {
  return t == kNetworkInput ? g.nodes().size() : static_cast<std::size_t>(t);
}

// Whether the producer of `t` can run again just before the backward of node `at` from what is on
// the device then: Resident maps not yet freed, and maps nobody keeps that can be rebuilt so
// themselves, as temporaries (Note [Recomputation]). `placement` is decided up to `t`.
bool rebuildable(const Graph& g, const Liveness& live, const std::vector<Placement>& placement,
                 NodeId t, NodeId at) {
  if (t == kNetworkInput || !is_cheap(g.node(t))) return false;
  return std::all_of(g.node(t).inputs.begin(), g.node(t).inputs.end(), [&](NodeId in) {
    switch (placement[index_of(g, in)]) {
      case Placement::Resident:
        return live.of(in).last_backward_use() <= at;  // freed after that node's backward
      case Placement::ForwardOnly:
        return rebuildable(g, live, placement, in, at);
      default:
        return false;
    }
  });
}

std::vector<Placement> place(const Graph& g, const Liveness& live, Policy policy) {
  const auto n = static_cast<NodeId>(g.nodes().size());
  std::vector<Placement> placement(g.nodes().size() + 1);
  for (NodeId t = kNetworkInput; t < n; ++t) {
    Placement& p = placement[index_of(g, t)];
    const std::vector<NodeId>& consumers = consumers_of(g, t);
    if (live.of(t).backward_readers.empty()) {
      p = Placement::ForwardOnly;
      continue;
    }
    // The loss's backward runs right after its forward: what it reads stays.
    const bool read_by_loss =
        std::find(consumers.begin(), consumers.end(), g.loss_node()) != consumers.end();
    if (policy == Policy::Recompute) {
      // Rebuilt before its first backward reader, the last in forward order.
      const bool rebuilt =
          !read_by_loss && rebuildable(g, live, placement, t, live.of(t).backward_readers.back());
      p = rebuilt ? Placement::Recomputed : Placement::Resident;
      continue;
    }
    const bool feeds_conv = std::any_of(consumers.begin(), consumers.end(),
                                        [&](NodeId c) { return is_conv(g.node(c)); });
    const bool leaves = !read_by_loss && (policy == Policy::VdnnAll || policy == Policy::UvmEvict ||
                                          policy == Policy::UvmPrefetch ||
                                          (policy == Policy::VdnnConv && feeds_conv));
    p = leaves ? away(policy) : Placement::Resident;
  }
  return placement;
}

// Emits the actions of one step and tracks the device bytes they predict.
class StepBuilder {
 public:
  StepBuilder(const Graph& g, const Liveness& live, Plan& plan)
      : g_(g), live_(live), plan_(plan), slots_(g.nodes().size() + 1) {}

  void forward() {
    produce(kNetworkInput);
    for (NodeId i = 0; i < static_cast<NodeId>(g_.nodes().size()); ++i) {
      produce(i);
      const Node& node = g_.node(i);
      for (NodeId t : node.inputs) --slot(t).forward_pending;
      for (NodeId t : distinct(node.inputs)) {
        if (slot(t).forward_pending == 0) retire_after_forward(t);
      }
      if (live_.of(i).forward_consumers == 0) retire_after_forward(i);
    }
    forward_peak_ = peak_;
  }

  // Backward in two passes (Note [Offload lifetime]): first with every prefetch issued at the
  // step that needs it, which gives each step's device bytes; then each prefetch, in order of
  // need, moves to the earliest step from which it fits under `cap` until it is needed.
  void backward(std::uint64_t cap) {
    std::vector<NodeId> queue;  // maps brought back ahead of need, earliest backward use first
    for (NodeId t = kNetworkInput; t < static_cast<NodeId>(g_.nodes().size()); ++t) {
      if (returns_ahead(plan_.placement_of(t))) queue.push_back(t);
    }
    std::sort(queue.begin(), queue.end(), [&](NodeId a, NodeId b) {
      return live_.of(a).backward_readers.back() > live_.of(b).backward_readers.back();
    });
    const int steps = static_cast<int>(g_.nodes().size());
    auto need_step = [&](NodeId t) { return steps - 1 - live_.of(t).backward_readers.back(); };

    std::vector<int> issue(queue.size());
    for (std::size_t q = 0; q < queue.size(); ++q) issue[q] = need_step(queue[q]);
    const Snapshot start = snapshot();
    std::vector<std::uint64_t> step_peak = emit_backward(queue, issue);
    restore(start);

    int earliest = 0;  // prefetches stay in order of need on their stream
    for (std::size_t q = 0; q < queue.size(); ++q) {
      const std::uint64_t bytes = tensor_bytes(g_, queue[q]);
      int s = issue[q];
      while (s > earliest && step_peak[static_cast<std::size_t>(s - 1)] + bytes <= cap) --s;
      for (int i = s; i < issue[q]; ++i) step_peak[static_cast<std::size_t>(i)] += bytes;
      issue[q] = s;
      earliest = s;
    }
    emit_backward(queue, issue);
  }

  std::uint64_t peak() const noexcept { return peak_; }
  std::uint64_t pool_peak() const noexcept { return pool_peak_; }
  std::uint64_t forward_peak() const noexcept { return forward_peak_; }
  std::uint64_t pinned_peak() const noexcept { return pinned_peak_; }

 private:
  struct Slot {
    int forward_pending = 0;
    int backward_pending = 0;
    bool awaited = false;
    bool grad_allocated = false;
  };

  // Everything the backward pass changes, so that it can be emitted twice.
  struct Snapshot {
    std::size_t actions;
    std::vector<Slot> slots;
    std::uint64_t bytes, peak, pool, pool_peak, pinned, pinned_peak;
    std::uint64_t prefetched, migrated, faulted, recomputed;
  };
  Snapshot snapshot() const {
    return {plan_.actions.size(),
            slots_,
            bytes_,
            peak_,
            pool_bytes_,
            pool_peak_,
            pinned_,
            pinned_peak_,
            plan_.prefetched_bytes,
            plan_.migrated_bytes,
            plan_.faulted_bytes,
            plan_.recomputed_bytes};
  }
  void restore(const Snapshot& s) {
    plan_.actions.resize(s.actions);
    slots_ = s.slots;
    bytes_ = s.bytes;
    peak_ = s.peak;
    pool_bytes_ = s.pool;
    pool_peak_ = s.pool_peak;
    pinned_ = s.pinned;
    pinned_peak_ = s.pinned_peak;
    plan_.prefetched_bytes = s.prefetched;
    plan_.migrated_bytes = s.migrated;
    plan_.faulted_bytes = s.faulted;
    plan_.recomputed_bytes = s.recomputed;
  }

  // Emits the backward actions with queue[q] prefetched at the start of step issue[q]; returns
  // the largest device bytes seen during each step.
  std::vector<std::uint64_t> emit_backward(const std::vector<NodeId>& queue,
                                           const std::vector<int>& issue) {
    const int steps = static_cast<int>(g_.nodes().size());
    std::vector<std::uint64_t> step_peak(static_cast<std::size_t>(steps), 0);
    std::size_t next = 0;
    for (int s = 0; s < steps; ++s) {
      const NodeId k = steps - 1 - s;
      const std::size_t first_action = plan_.actions.size();
      for (; next < queue.size() && issue[next] == s; ++next) prefetch(queue[next]);
      backward_step(k);
      for (std::size_t i = first_action; i < plan_.actions.size(); ++i) {
        step_peak[static_cast<std::size_t>(s)] =
            std::max(step_peak[static_cast<std::size_t>(s)], plan_.actions[i].device_bytes);
      }
    }
    return step_peak;
  }

  void backward_step(NodeId k) {
    const Node& node = g_.node(k);
    const layers::BackwardNeeds needs = layers::backward_needs(node.spec);
    std::vector<NodeId> reads = needs.inputs ? distinct(node.inputs) : std::vector<NodeId>{};
    if (needs.output) reads.push_back(k);
    for (NodeId t : reads) {
      const Placement p = plan_.placement_of(t);
      if (slot(t).awaited ||
          (!returns_ahead(p) && p != Placement::Evicted && p != Placement::Recomputed)) {
        continue;
      }
      slot(t).awaited = true;
      if (p == Placement::Recomputed) {
        recompute(t);
        continue;
      }
      const auto bytes = static_cast<std::int64_t>(tensor_bytes(g_, t));
      if (p == Placement::Evicted) {
        emit(Op::FaultIn, t, bytes, 0);  // the pages come back; the range never left the pool
        plan_.faulted_bytes += tensor_bytes(g_, t);
        continue;
      }
      emit(Op::AwaitPrefetch, t, 0);
      if (p == Placement::Offloaded) pinned_ -= tensor_bytes(g_, t);
    }
    for (NodeId t : distinct(node.inputs)) {
      if (live_.of(t).needs_grad && !slot(t).grad_allocated) {
        slot(t).grad_allocated = true;
        emit(Op::AllocateGrad, t, static_cast<std::int64_t>(tensor_bytes(g_, t)));
      }
    }
    emit(Op::Backward, k, 0);
    if (k != g_.loss_node()) {
      emit(Op::FreeGrad, k, -static_cast<std::int64_t>(tensor_bytes(g_, k)));
    }
    for (NodeId t : reads) {
      if (--slot(t).backward_pending == 0) {
        emit(Op::Free, t, -static_cast<std::int64_t>(tensor_bytes(g_, t)));
      }
    }
  }

  Slot& slot(NodeId t) {
    return slots_[t == kNetworkInput ? g_.nodes().size() : static_cast<std::size_t>(t)];
  }

  // `delta` changes the device bytes and `pool_delta` the bytes allocated from the device pool:
  // the same but for managed pages that move while their range stays (Note [Managed memory]).
  void emit(Op op, NodeId tensor, std::int64_t delta, std::int64_t pool_delta) {
    bytes_ = static_cast<std::uint64_t>(static_cast<std::int64_t>(bytes_) + delta);
    peak_ = std::max(peak_, bytes_);
    pool_bytes_ = static_cast<std::uint64_t>(static_cast<std::int64_t>(pool_bytes_) + pool_delta);
    pool_peak_ = std::max(pool_peak_, pool_bytes_);
    plan_.actions.push_back(
        {op, tensor, static_cast<std::uint64_t>(delta < 0 ? -delta : delta), bytes_});
  }
  void emit(Op op, NodeId tensor, std::int64_t delta) { emit(op, tensor, delta, delta); }

  void produce(NodeId t) {
    slot(t).forward_pending = live_.of(t).forward_consumers;
    slot(t).backward_pending = static_cast<int>(live_.of(t).backward_readers.size());
    emit(Op::Allocate, t, static_cast<std::int64_t>(tensor_bytes(g_, t)));
    emit(Op::Forward, t, 0);
    if (plan_.placement_of(t) == Placement::Offloaded) {
      emit(Op::Offload, t, 0);
      plan_.actions.back().bytes = tensor_bytes(g_, t);  // bytes copied; the device keeps them
      plan_.offloaded_bytes += tensor_bytes(g_, t);
      pinned_ += tensor_bytes(g_, t);
      pinned_peak_ = std::max(pinned_peak_, pinned_);
    }
  }

  void retire_after_forward(NodeId t) {
    const auto bytes = -static_cast<std::int64_t>(tensor_bytes(g_, t));
    switch (plan_.placement_of(t)) {
      case Placement::Offloaded:
        emit(Op::Release, t, bytes);
        break;
      case Placement::ForwardOnly:
      case Placement::Recomputed:
        emit(Op::Free, t, bytes);
        break;
      case Placement::Evicted:
      case Placement::Migrated:
        emit(Op::Evict, t, bytes, 0);
        plan_.evicted_bytes += tensor_bytes(g_, t);
        break;
      case Placement::Resident:
        break;
    }
  }

  // Runs the producer of `t` again, after rebuilding those of its inputs nobody kept, which go
  // right after; the others are on the device (rebuildable(), Note [Recomputation]).
  void recompute(NodeId t) {
    std::vector<NodeId> temporaries;
    for (NodeId in : distinct(g_.node(t).inputs)) {
      if (plan_.placement_of(in) != Placement::ForwardOnly) continue;
      recompute(in);
      temporaries.push_back(in);
    }
    emit(Op::Recompute, t, static_cast<std::int64_t>(tensor_bytes(g_, t)));
    plan_.recomputed_bytes += tensor_bytes(g_, t);
    for (NodeId in : temporaries) {
      emit(Op::Free, in, -static_cast<std::int64_t>(tensor_bytes(g_, in)));
    }
  }

  void prefetch(NodeId t) {
    const auto bytes = static_cast<std::int64_t>(tensor_bytes(g_, t));
    if (plan_.placement_of(t) == Placement::Migrated) {
      emit(Op::Migrate, t, bytes, 0);
      plan_.migrated_bytes += tensor_bytes(g_, t);
    } else {
      emit(Op::Prefetch, t, bytes);
      plan_.prefetched_bytes += tensor_bytes(g_, t);
    }
  }

  const Graph& g_;
  const Liveness& live_;
  Plan& plan_;
  std::vector<Slot> slots_;
  std::uint64_t bytes_ = 0;
  std::uint64_t peak_ = 0;
  std::uint64_t pool_bytes_ = 0;
  std::uint64_t pool_peak_ = 0;
  std::uint64_t forward_peak_ = 0;
  std::uint64_t pinned_ = 0;
  std::uint64_t pinned_peak_ = 0;
};

// The forward-only pass of an evaluation: every map freed after its last forward consumer, which
// the step builder emits for maps placed ForwardOnly (Note [Evaluation memory]).
std::vector<Action> inference_actions(const Graph& g, const Liveness& live) {
  Plan forward_only;
  forward_only.placement.assign(g.nodes().size() + 1, Placement::ForwardOnly);
  StepBuilder(g, live, forward_only).forward();
  return std::move(forward_only.actions);
}

// Without a budget, early prefetches never raise the peak above what forward needed.
constexpr std::uint64_t kForwardPeak = 0;

// The plan of `policy` whose early prefetches keep device bytes (beyond the resident ones) under
// `prefetch_cap` (kForwardPeak: under the forward pass's peak). Pools are not sized yet.
Plan plan_for(const Graph& g, const Liveness& live, Policy policy,
              const std::vector<Placement>& placement, const PlanRequest& request,
              std::uint64_t prefetch_cap) {
  Plan plan;
  plan.requested = request.policy;
  plan.policy = policy;
  plan.memory = uses_managed_memory(policy) ? DeviceMemory::Managed : DeviceMemory::Dedicated;
  plan.budget_bytes = request.budget_bytes;
  plan.resident_bytes = resident_bytes(g, request.workspace_bytes);
  plan.placement = placement;
  plan.inference = inference_actions(g, live);
  StepBuilder step(g, live, plan);
  step.forward();
  step.backward(prefetch_cap == kForwardPeak ? step.forward_peak() : prefetch_cap);
  plan.predicted_peak = plan.resident_bytes + step.peak();
  plan.predicted_pool_peak = plan.resident_bytes + step.pool_peak();
  plan.pinned_bytes = step.pinned_peak();
  return plan;
}

// The device pool a budget allows: never more than the budget, in whole allocation units.
std::uint64_t pool_for_budget(std::uint64_t budget) {
  return budget / runtime::MemoryResource::kAlignment * runtime::MemoryResource::kAlignment;
}

// The predicted peak is within the budget and, with dedicated memory, the real allocator places
// every allocation in it. With managed memory the budget bounds the pages on the device, not the
// pool's address range (Note [Managed memory]).
bool fits(const Graph& g, const Plan& plan, const PlanRequest& request) {
  return plan.budget_bytes == 0 ||
         (plan.predicted_peak <= plan.budget_bytes &&
          (plan.memory == DeviceMemory::Managed ||
           device_pool_fits(g, plan, request.workspace_bytes, pool_for_budget(plan.budget_bytes))));
}

// Under a budget, offloading (or evicting) a map costs two transfers, and recomputing it a second
// forward, and buys nothing if the budget could hold it. From the last-produced offloaded map
// backwards (the ones needed again soonest), keep each one resident while the plan stays within the
// budget and the allocator still places everything; stop after a few that do not fit. Without a
// budget the policy's placement stands.
//
// Each trial is a plan and an allocator replay, O(N) for N maps, so trying the maps one by one
// is O(N^2): minutes at ResNet-5000. Keeping more maps never lowers the peak, so the longest run
// of maps that all fit, which the one-by-one walk would keep first, is found by bisection
// (O(N log N)); the walk goes on from the first map that does not fit.
Plan keep_what_fits(const Graph& g, const Liveness& live, Plan plan, const PlanRequest& request,
                    std::uint64_t prefetch_cap) {
  constexpr int kMisses = 4;
  std::vector<std::size_t> leaving;  // placement indices, last-produced first
  for (auto t = static_cast<NodeId>(g.nodes().size()) - 1; t >= kNetworkInput; --t) {
    if (!leaves_device(plan.placement_of(t))) continue;
    leaving.push_back(t == kNetworkInput ? g.nodes().size() : static_cast<std::size_t>(t));
  }
  const auto keeping = [&](const std::vector<Placement>& base, std::size_t from, std::size_t to) {
    std::vector<Placement> placement = base;
    for (std::size_t i = from; i < to; ++i) placement[leaving[i]] = Placement::Resident;
    return plan_for(g, live, plan.policy, placement, request, prefetch_cap);
  };
  const auto fit = [&](const Plan& p) {
    return p.predicted_peak <= request.budget_bytes && fits(g, p, request);
  };
  std::size_t good = 0;
  std::size_t bad = leaving.size() + 1;
  while (bad - good > 1) {
    const std::size_t mid = good + (bad - good) / 2;
    (fit(keeping(plan.placement, 0, mid)) ? good : bad) = mid;
  }
  if (good > 0) plan = keeping(plan.placement, 0, good);
  int misses = 0;
  for (std::size_t i = good; i < leaving.size() && misses < kMisses; ++i) {
    Plan kept = keeping(plan.placement, i, i + 1);
    if (fit(kept)) {
      plan = std::move(kept);
    } else {
      ++misses;
    }
  }
  return plan;
}

// A plan of `policy` that fits the request, if any. With a budget, the offloads it does not need
// are dropped, then early prefetches may use the rest, less a margin that grows until the
// allocator (fragmentation included) places everything (Note [Offload lifetime]).
std::optional<Plan> fitting_plan(const Graph& g, const Liveness& live, Policy policy,
                                 const PlanRequest& request) {
  const std::vector<Placement> placement = place(g, live, policy);
  Plan plan = plan_for(g, live, policy, placement, request, kForwardPeak);
  if (request.budget_bytes == 0) return plan;
  if (!fits(g, plan, request)) return std::nullopt;
  // Dropping offloads saves copies, prefetching early only hides them: drop first, then let the
  // prefetches use what the budget still leaves.
  plan = keep_what_fits(g, live, std::move(plan), request, kForwardPeak);
  const std::uint64_t room = request.budget_bytes - plan.resident_bytes;
  for (std::uint64_t margin = 0; margin <= 8; ++margin) {
    Plan ahead = plan_for(g, live, policy, plan.placement, request, room - room * margin / 16);
    if (fits(g, ahead, request)) return ahead;
  }
  return plan;
}

}  // namespace

std::vector<std::string> policy_names() {
  return {std::begin(kPolicyNames), std::end(kPolicyNames)};
}

Policy parse_policy(const std::string& name) {
  const auto found = std::find(std::begin(kPolicyNames), std::end(kPolicyNames), name);
  if (found == std::end(kPolicyNames)) {
    std::string known;
    for (const char* n : kPolicyNames) known += (known.empty() ? "" : ", ") + std::string(n);
    throw runtime::InvalidArgument("unknown policy '" + name + "'; expected one of " + known);
  }
  return static_cast<Policy>(found - std::begin(kPolicyNames));
}

const char* policy_name(Policy policy) noexcept {
  return kPolicyNames[static_cast<std::size_t>(policy)];
}

bool uses_managed_memory(Policy policy) noexcept {
  return policy == Policy::Uvm || policy == Policy::UvmEvict || policy == Policy::UvmPrefetch;
}

const char* device_memory_name(DeviceMemory memory) noexcept {
  return memory == DeviceMemory::Managed ? "managed" : "dedicated";
}

const char* op_name(Op op) noexcept { return kOpNames[static_cast<int>(op)]; }

std::uint64_t resident_bytes(const Graph& g, std::uint64_t workspace_bytes) {
  std::uint64_t bytes = workspace_bytes + kF32;  // the loss gradient seed
  for (NodeId id = 0; id < static_cast<NodeId>(g.nodes().size()); ++id) {
    for (const layers::ParamSpec& p : layers::param_specs(g.node(id).spec, g.input_shapes(id))) {
      const std::uint64_t b = p.shape.bytes(runtime::DType::F32);
      bytes += p.kind == layers::ParamKind::Trainable ? 3 * b : b;
    }
  }
  return bytes;
}

Plan make_plan(const Graph& graph, const PlanRequest& request) {
  const Liveness live(graph);
  const std::vector<Policy> candidates =
      request.policy == Policy::VdnnDyn
          ? std::vector<Policy>{Policy::Baseline, Policy::VdnnConv, Policy::VdnnAll}
          : std::vector<Policy>{request.policy};
  for (Policy p : candidates) {
    if (std::optional<Plan> plan = fitting_plan(graph, live, p, request)) {
      const PoolSizes pools = pool_sizes(graph, *plan, request.workspace_bytes);
      // The budget is a ceiling: a dedicated pool takes what the plan needs, never more than the
      // budget. A managed pool holds every map's range; the budget bounds its device pages.
      plan->pool_bytes = request.budget_bytes > 0 && plan->memory == DeviceMemory::Dedicated
                             ? std::min(pools.device, pool_for_budget(request.budget_bytes))
                             : pools.device;
      plan->pinned_bytes = pools.pinned;
      return *std::move(plan);
    }
  }
  // Nothing fits: say by how much, and which policy would.
  const Plan best = plan_for(graph, live, candidates.back(), place(graph, live, candidates.back()),
                             request, kForwardPeak);
  std::string advice = " No policy fits this budget; a smaller batch might.";
  const std::vector<Policy> alternatives =
      uses_managed_memory(request.policy) ? std::vector<Policy>{Policy::UvmPrefetch}
                                          : std::vector<Policy>{Policy::VdnnConv, Policy::VdnnAll};
  for (Policy p : alternatives) {
    if (const std::optional<Plan> other = fitting_plan(graph, live, p, request)) {
      advice = std::string(" Policy ") + policy_name(p) + " fits (predicted peak " +
               runtime::format_bytes(other->predicted_peak) + ").";
      break;
    }
  }
  const std::string shortfall =
      best.predicted_peak > request.budget_bytes
          ? "short by " + runtime::format_bytes(best.predicted_peak - request.budget_bytes)
          : "the peak fits but fragmentation leaves no room for every allocation";
  throw DoesNotFit(std::string("policy ") + policy_name(request.policy) + " needs " +
                       runtime::format_bytes(best.predicted_peak) + " of device memory at batch " +
                       std::to_string(graph.batch()) + " but the budget is " +
                       runtime::format_bytes(request.budget_bytes) + ": " + shortfall + "." +
                       advice,
                   best.predicted_peak, 0, request.budget_bytes);
}

std::string format_plan(const Graph& g, const Plan& plan) {
  std::string out;
  char line[256];
  std::snprintf(line, sizeof(line), "%-6s %-15s %-36s %14s %16s\n", "#", "action", "tensor / node",
                "bytes", "device in use");
  out += line;
  std::size_t index = 0;
  for (const Action& a : plan.actions) {
    const std::string name = a.tensor == kNetworkInput ? kInputName : g.node(a.tensor).name;
    const bool compute = a.op == Op::Forward || a.op == Op::Backward;
    std::snprintf(line, sizeof(line), "%-6zu %-15s %-36s %14s %16s\n", index++, op_name(a.op),
                  name.c_str(), compute ? "" : runtime::format_bytes(a.bytes).c_str(),
                  runtime::format_bytes(plan.resident_bytes + a.device_bytes).c_str());
    out += line;
  }
  std::size_t offloaded = 0;
  std::size_t evicted = 0;
  std::size_t recomputed = 0;
  for (Placement p : plan.placement) {
    offloaded += p == Placement::Offloaded ? 1 : 0;
    evicted += p == Placement::Evicted || p == Placement::Migrated ? 1 : 0;
    recomputed += p == Placement::Recomputed ? 1 : 0;
  }
  out += std::string("\npolicy ") + policy_name(plan.policy) +
         (plan.requested != plan.policy
              ? std::string(" (chosen by ") + policy_name(plan.requested) + ")"
              : std::string()) +
         ", batch " + std::to_string(g.batch()) + "\n";
  out += "budget:                " +
         (plan.budget_bytes == 0 ? std::string("none") : runtime::format_bytes(plan.budget_bytes)) +
         "\n";
  out += "resident (parameters, gradients, velocities, workspace): " +
         runtime::format_bytes(plan.resident_bytes) + "\n";
  out += "predicted peak:        " + runtime::format_bytes(plan.predicted_peak) + "\n";
  out += "pinned host memory:    " + runtime::format_bytes(plan.pinned_bytes) + "\n";
  out += "offloaded per step:    " + runtime::format_bytes(plan.offloaded_bytes) + " in " +
         std::to_string(offloaded) + " feature maps\n";
  out += "prefetched per step:   " + runtime::format_bytes(plan.prefetched_bytes) + "\n";
  if (recomputed > 0) {
    out += "recomputed per step:   " + runtime::format_bytes(plan.recomputed_bytes) + " for " +
           std::to_string(recomputed) + " feature maps (temporaries included)\n";
  }
  out += std::string("device memory:         ") + device_memory_name(plan.memory) + ", pool " +
         runtime::format_bytes(plan.pool_bytes) + "\n";
  if (plan.memory == DeviceMemory::Managed) {
    out += "predicted pool peak:   " + runtime::format_bytes(plan.predicted_pool_peak) +
           " (evicted maps keep their range)\n";
    out += "evicted per step:      " + runtime::format_bytes(plan.evicted_bytes) + " in " +
           std::to_string(evicted) + " feature maps\n";
    out += "migrated back ahead:   " + runtime::format_bytes(plan.migrated_bytes) + "\n";
    out += "faulted back:          " + runtime::format_bytes(plan.faulted_bytes) + "\n";
  }
  return out;
}

}  // namespace vdnn::graph
