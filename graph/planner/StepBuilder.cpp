// The ordered actions of one step for a placement, with the device bytes predicted after each
// (Note [Offload lifetime], Note [Recomputation]).
#include <algorithm>

#include "graph/planner/PlanBuilder.hpp"
#include "runtime/Error.hpp"
#include "runtime/MemoryResource.hpp"

namespace vdnn::graph::planner {
namespace {

std::vector<NodeId> distinct(std::vector<NodeId> ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

// Emits the actions of one step and tracks the device bytes they predict.
class StepBuilder {
 public:
  StepBuilder(const Graph& g, const Liveness& live, Plan& plan,
              const std::vector<layers::WorkspaceBytes>& workspace)
      : g_(g),
        live_(live),
        plan_(plan),
        workspace_(workspace),
        slots_(g.nodes().size() + 1),
        block_live_(g.nodes().size() + 1, 0) {}

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

  // Backward in two passes (Note [Offload lifetime]): first with every prefetch issued where its
  // map is first needed (by a backward, or by the rebuild of a recomputed map), which gives each
  // step's device bytes and the order of need; then each prefetch, in that order, moves to the
  // earliest step from which it fits under `cap` until it is needed.
  void backward(std::uint64_t cap) {
    const Snapshot start = snapshot();
    needed_.clear();
    std::vector<std::uint64_t> step_peak = emit_backward({}, {});
    restore(start);
    std::vector<NodeId> queue;  // maps brought back ahead of need, in order of need
    std::vector<int> issue;
    for (const auto& [t, step] : needed_) {
      queue.push_back(t);
      issue.push_back(step);
    }
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
  std::uint64_t peer_peak() const noexcept { return peer_peak_; }

 private:
  struct Slot {
    int forward_pending = 0;
    int backward_pending = 0;
    int consumers_pending = 0;  // Retained: its consumers whose backward has not run
    bool on_device = false;
    bool prefetched = false;  // its prefetch or migration was issued
    bool returned = false;    // it was brought back (awaited or faulted in)
    bool grad_allocated = false;
    Tier tier = Tier::Host;  // where its offload copy lies
  };

  // Everything the backward pass changes, so that it can be emitted twice.
  struct Snapshot {
    std::size_t actions;
    std::vector<Slot> slots;
    std::vector<int> block_live;
    std::uint64_t bytes, peak, pool, pool_peak, pinned, pinned_peak, peer;
    std::uint64_t prefetched, migrated, faulted, recomputed;
  };
  Snapshot snapshot() const {
    return {plan_.actions.size(),
            slots_,
            block_live_,
            bytes_,
            peak_,
            pool_bytes_,
            pool_peak_,
            pinned_,
            pinned_peak_,
            peer_,
            plan_.prefetched_bytes,
            plan_.migrated_bytes,
            plan_.faulted_bytes,
            plan_.recomputed_bytes};
  }
  void restore(const Snapshot& s) {
    plan_.actions.resize(s.actions);
    slots_ = s.slots;
    block_live_ = s.block_live;
    bytes_ = s.bytes;
    peak_ = s.peak;
    pool_bytes_ = s.pool;
    pool_peak_ = s.pool_peak;
    pinned_ = s.pinned;
    pinned_peak_ = s.pinned_peak;
    peer_ = s.peer;
    plan_.prefetched_bytes = s.prefetched;
    plan_.migrated_bytes = s.migrated;
    plan_.faulted_bytes = s.faulted;
    plan_.recomputed_bytes = s.recomputed;
  }

  // Emits the backward actions with queue[q] prefetched at the start of step issue[q] (maps not
  // in the queue where they are first needed); returns the largest device bytes seen during each
  // step.
  std::vector<std::uint64_t> emit_backward(const std::vector<NodeId>& queue,
                                           const std::vector<int>& issue) {
    const int steps = static_cast<int>(g_.nodes().size());
    std::vector<std::uint64_t> step_peak(static_cast<std::size_t>(steps), 0);
    std::size_t next = 0;
    for (int s = 0; s < steps; ++s) {
      step_ = s;
      const std::size_t first_action = plan_.actions.size();
      for (; next < queue.size() && issue[next] == s; ++next) prefetch(queue[next]);
      backward_step(steps - 1 - s);
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
    std::vector<NodeId> read_inputs;
    for (std::size_t i = 0; i < node.inputs.size(); ++i) {
      if (needs.input(i)) read_inputs.push_back(node.inputs[i]);
    }
    std::vector<NodeId> reads = distinct(read_inputs);
    if (needs.output) reads.push_back(k);
    for (NodeId t : reads) bring_back(t);
    const std::vector<NodeId> inputs = distinct(node.inputs);
    for (NodeId t : inputs) {
      if (live_.of(t).needs_grad && !slot(t).grad_allocated) {
        slot(t).grad_allocated = true;
        emit(Op::AllocateGrad, t, static_cast<std::int64_t>(tensor_bytes(g_, t)));
      }
    }
    with_workspace(k, /*backward=*/true, [&] { emit(Op::Backward, k, 0); });
    if (k != g_.loss_node()) {
      emit(Op::FreeGrad, k, -static_cast<std::int64_t>(tensor_bytes(g_, k)));
    }
    for (NodeId t : reads) {
      if (--slot(t).backward_pending == 0) free(t);
    }
    for (NodeId t : inputs) {
      if (plan_.placement_of(t) == Placement::Retained && --slot(t).consumers_pending == 0) free(t);
    }
  }

  // Makes `t` readable on the device: awaits its prefetch (issuing it first when it was not
  // issued ahead), faults it in, or rebuilds it (Note [Recomputation]).
  void bring_back(NodeId t) {
    if (slot(t).on_device) return;
    const Placement p = plan_.placement_of(t);
    if (p == Placement::Recomputed || p == Placement::ForwardOnly) {
      rebuild(t);
      return;
    }
    if (p == Placement::Resident || p == Placement::Retained || p == Placement::InBlock ||
        slot(t).returned) {
      throw runtime::Error("planner: " + name(t) + " is needed again after it was freed");
    }
    slot(t).on_device = true;
    slot(t).returned = true;
    if (p == Placement::Evicted) {
      emit(Op::FaultIn, t, static_cast<std::int64_t>(tensor_bytes(g_, t)), 0);
      plan_.faulted_bytes += tensor_bytes(g_, t);
      return;
    }
    if (!slot(t).prefetched) {
      needed_.emplace_back(t, step_);
      prefetch(t);
    }
    emit(Op::AwaitPrefetch, t, 0);
    plan_.actions.back().tier = slot(t).tier;
    if (p == Placement::Offloaded) copies(slot(t).tier) -= stored_bytes(t, slot(t).tier);
  }

  // Runs the producer of `t` again once its inputs are on the device; inputs that nobody reads
  // later were rebuilt as temporaries and go right after.
  void rebuild(NodeId t) {
    if (t == kNetworkInput) throw runtime::Error("planner: the network input cannot be rebuilt");
    std::vector<NodeId> temporaries;
    for (NodeId in : distinct(g_.node(t).inputs)) {
      if (slot(in).on_device) continue;
      bring_back(in);
      if (slot(in).backward_pending == 0) temporaries.push_back(in);
    }
    slot(t).on_device = true;
    with_workspace(t, /*backward=*/false,
                   [&] { emit(Op::Recompute, t, static_cast<std::int64_t>(tensor_bytes(g_, t))); });
    plan_.recomputed_bytes += tensor_bytes(g_, t);
    for (NodeId in : temporaries) free(in);
  }

  // Emits a node's pass between the allocation and the free of its workspace (Note [Workspace]).
  template <typename Pass>
  void with_workspace(NodeId node, bool backward, Pass pass) {
    std::uint64_t bytes = 0;
    if (node != kNetworkInput && !workspace_.empty()) {
      const layers::WorkspaceBytes& w = workspace_[static_cast<std::size_t>(node)];
      bytes = backward ? w.backward : w.forward;
    }
    const bool own = bytes > kSharedWorkspaceBytes;
    if (own) emit(Op::AllocateWorkspace, node, static_cast<std::int64_t>(bytes));
    pass();
    if (own) emit(Op::FreeWorkspace, node, -static_cast<std::int64_t>(bytes));
  }

  void free(NodeId t) {
    slot(t).on_device = false;
    free_storage(t);
  }

  // Note [Dense block storage]: a map of a block takes the block's buffer where it is the first
  // live one (the buffer's map's bytes, under that map's id), and gives it back where it is the
  // last; any other map its own buffer.
  void allocate_storage(NodeId t) {
    if (!g_.in_block()[index_of(g_, t)]) {
      emit(Op::Allocate, t, static_cast<std::int64_t>(tensor_bytes(g_, t)));
      return;
    }
    const NodeId buffer = g_.storage()[index_of(g_, t)];
    if (block_live_[index_of(g_, buffer)]++ == 0) {
      emit(Op::Allocate, buffer, static_cast<std::int64_t>(tensor_bytes(g_, buffer)));
    }
  }
  void free_storage(NodeId t) {
    if (!g_.in_block()[index_of(g_, t)]) {
      emit(Op::Free, t, -static_cast<std::int64_t>(tensor_bytes(g_, t)));
      return;
    }
    const NodeId buffer = g_.storage()[index_of(g_, t)];
    if (--block_live_[index_of(g_, buffer)] == 0) {
      emit(Op::Free, buffer, -static_cast<std::int64_t>(tensor_bytes(g_, buffer)));
    }
  }

  Slot& slot(NodeId t) { return slots_[index_of(g_, t)]; }
  std::string name(NodeId t) const {
    return t == kNetworkInput ? std::string(kInputName) : g_.node(t).name;
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
    if (plan_.placement_of(t) == Placement::Retained) {  // only those count their consumers
      slot(t).consumers_pending = static_cast<int>(distinct(consumers_of(g_, t)).size());
    }
    slot(t).on_device = true;
    allocate_storage(t);
    with_workspace(t, /*backward=*/false, [&] { emit(Op::Forward, t, 0); });
    if (plan_.placement_of(t) == Placement::Offloaded) offload(t);
  }

  // Note [Peer tier]: the peer takes the map if the maps it holds then leave room for it.
  void offload(NodeId t) {
    const bool to_peer = plan_.peer_budget_bytes > 0 &&
                         peer_ + stored_bytes(t, Tier::Peer) <= plan_.peer_budget_bytes;
    const Tier tier = to_peer ? Tier::Peer : Tier::Host;
    slot(t).tier = tier;
    emit(Op::Offload, t, 0);
    plan_.actions.back().bytes = tensor_bytes(g_, t);  // bytes copied; the device keeps them
    plan_.actions.back().tier = tier;
    plan_.offloaded_bytes += tensor_bytes(g_, t);
    if (to_peer) plan_.peer_offloaded_bytes += tensor_bytes(g_, t);
    copies(tier) += stored_bytes(t, tier);
    pinned_peak_ = std::max(pinned_peak_, pinned_);
    peer_peak_ = std::max(peer_peak_, peer_);
  }

  // The bytes of a tier's copies in use, and what `t` takes there: the peer pool counts whole
  // allocation units, so that its budget bounds the pool's peak.
  std::uint64_t& copies(Tier tier) { return tier == Tier::Peer ? peer_ : pinned_; }
  std::uint64_t stored_bytes(NodeId t, Tier tier) const {
    const std::uint64_t bytes = tensor_bytes(g_, t);
    return tier == Tier::Peer ? runtime::MemoryResource::align_up(bytes) : bytes;
  }

  void retire_after_forward(NodeId t) {
    const auto bytes = -static_cast<std::int64_t>(tensor_bytes(g_, t));
    const Placement p = plan_.placement_of(t);
    if (p != Placement::Resident && p != Placement::Retained && p != Placement::InBlock) {
      slot(t).on_device = false;
    }
    switch (p) {
      case Placement::Offloaded:
        emit(Op::Release, t, bytes);
        break;
      case Placement::ForwardOnly:
      case Placement::Recomputed:
        free_storage(t);
        break;
      case Placement::Evicted:
      case Placement::Migrated:
        emit(Op::Evict, t, bytes, 0);
        plan_.evicted_bytes += tensor_bytes(g_, t);
        break;
      case Placement::Resident:
      case Placement::Retained:
      case Placement::InBlock:
        break;
    }
  }

  void prefetch(NodeId t) {
    slot(t).prefetched = true;
    const auto bytes = static_cast<std::int64_t>(tensor_bytes(g_, t));
    if (plan_.placement_of(t) == Placement::Migrated) {
      emit(Op::Migrate, t, bytes, 0);
      plan_.migrated_bytes += tensor_bytes(g_, t);
    } else {
      emit(Op::Prefetch, t, bytes);
      plan_.actions.back().tier = slot(t).tier;
      plan_.prefetched_bytes += tensor_bytes(g_, t);
    }
  }

  const Graph& g_;
  const Liveness& live_;
  Plan& plan_;
  const std::vector<layers::WorkspaceBytes>& workspace_;  // per node; empty: none
  std::vector<Slot> slots_;
  std::vector<int> block_live_;  // per block buffer (Note [Dense block storage]): its maps on the
                                 // device now
  std::vector<std::pair<NodeId, int>> needed_;  // maps brought back ahead, with the step of need
  int step_ = 0;                                // the backward step being emitted
  std::uint64_t bytes_ = 0;
  std::uint64_t peak_ = 0;
  std::uint64_t pool_bytes_ = 0;
  std::uint64_t pool_peak_ = 0;
  std::uint64_t forward_peak_ = 0;
  std::uint64_t pinned_ = 0;
  std::uint64_t pinned_peak_ = 0;
  std::uint64_t peer_ = 0;  // bytes of maps in the peer pool
  std::uint64_t peer_peak_ = 0;
};

// The forward-only pass of an evaluation: every map freed after its last forward consumer, which
// the step builder emits for maps placed ForwardOnly (Note [Evaluation memory]).
std::vector<Action> inference_actions(const Graph& g, const Liveness& live,
                                      const std::vector<layers::WorkspaceBytes>& workspace) {
  Plan forward_only;
  forward_only.placement.assign(g.nodes().size() + 1, Placement::ForwardOnly);
  StepBuilder(g, live, forward_only, workspace).forward();
  return std::move(forward_only.actions);
}

// A plan of `policy` with nothing planned yet but its memory, budget and shared workspace: the
// largest small workspace of the passes it runs (forward only: no backward's).
Plan plan_head(Policy policy, const PlanRequest& request, bool forward_only) {
  Plan plan;
  plan.requested = request.policy;
  plan.policy = policy;
  plan.memory = uses_managed_memory(policy) ? DeviceMemory::Managed : DeviceMemory::Dedicated;
  plan.budget_bytes = request.budget_bytes;
  plan.host_budget_bytes = request.host_budget_bytes;
  plan.device_blocks = request.device_blocks;
  if (!forward_only) plan.data_parallel = request.data_parallel;
  if (peer_budget(request) > 0) {
    plan.peer_device = request.peer_device;
    plan.peer_budget_bytes = request.peer_budget_bytes;
  }
  for (const layers::WorkspaceBytes& w : request.workspace) {
    for (const std::uint64_t bytes :
         {std::uint64_t{w.forward}, std::uint64_t{forward_only ? 0 : w.backward}}) {
      if (bytes <= kSharedWorkspaceBytes) {
        plan.shared_workspace_bytes = std::max(plan.shared_workspace_bytes, bytes);
      }
    }
  }
  return plan;
}

}  // namespace

// Note [Inference plan]: no map waits for a backward, so a policy has nothing to place.
Plan inference_plan(const Graph& g, const Liveness& live, const PlanRequest& request) {
  const Policy policy = request.policy == Policy::VdnnDyn ? Policy::Baseline : request.policy;
  Plan plan = plan_head(policy, request, /*forward_only=*/true);
  plan.purpose = Purpose::Inference;
  plan.optimizer_state_buffers = 0;
  plan.resident_bytes = parameter_bytes(g) + plan.shared_workspace_bytes;
  plan.placement.assign(g.nodes().size() + 1, Placement::ForwardOnly);
  plan.inference = inference_actions(g, live, request.workspace);
  plan.actions = plan.inference;
  std::uint64_t peak = 0;
  for (const Action& a : plan.actions) peak = std::max(peak, a.device_bytes);
  plan.predicted_peak = plan.resident_bytes + peak;
  plan.predicted_pool_peak = plan.predicted_peak;
  return plan;
}

Plan plan_for(const Graph& g, const Liveness& live, Policy policy,
              const std::vector<Placement>& placement, const PlanRequest& request,
              std::uint64_t prefetch_cap) {
  Plan plan = plan_head(policy, request, /*forward_only=*/false);
  plan.optimizer_state_buffers = request.optimizer_state_buffers;
  plan.resident_bytes =
      resident_bytes(g, request.optimizer_state_buffers) + plan.shared_workspace_bytes;
  plan.placement = placement;
  plan.inference = inference_actions(g, live, request.workspace);
  StepBuilder step(g, live, plan, request.workspace);
  step.forward();
  step.backward(prefetch_cap == kForwardPeak ? step.forward_peak() : prefetch_cap);
  stage_next_input(g, plan, step.peak());
  plan.predicted_peak = plan.resident_bytes + step.peak();
  plan.predicted_pool_peak = plan.resident_bytes + step.pool_peak();
  plan.pinned_bytes = step.pinned_peak();
  plan.peer_bytes = step.peer_peak();
  return plan;
}

}  // namespace vdnn::graph::planner
