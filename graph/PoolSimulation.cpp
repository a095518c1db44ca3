// Dry runs of the pools: the same allocator, the same order as the executor, no memory touched.
#include "graph/PoolSimulation.hpp"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "graph/ParameterStore.hpp"
#include "layers/LayerSpec.hpp"
#include "runtime/Stream.hpp"
#include "runtime/memory/PoolMemoryResource.hpp"

namespace vdnn::graph {
namespace {

// Hands out one range of addresses that nobody dereferences: the pool only does arithmetic.
class AddressSpace final : public runtime::MemoryResource {
 public:
  bool host_accessible() const noexcept override { return false; }
  std::string name() const override { return "simulated"; }

 private:
  void* do_allocate(std::size_t /*bytes*/) override {
    return reinterpret_cast<void*>(std::uintptr_t{1} << 40);  // NOLINT(performance-no-int-to-ptr)
  }
  void do_deallocate(void* /*ptr*/, std::size_t /*bytes*/) noexcept override {}
};

// The end of one map's Release in a dry run: pending until the step ends, and an allocation that
// has to wait for it says so (the map goes into the waits of the action being replayed).
class ReleaseEvent final : public runtime::Event {
 public:
  ReleaseEvent(NodeId tensor, std::vector<NodeId>** sink) : tensor_(tensor), sink_(sink) {}
  void arm() { done_ = false; }
  void finish() { done_ = true; }
  void record(runtime::Stream& /*stream*/) override {}
  bool query() const override { return done_; }
  void synchronize() const override {
    if (!done_ && *sink_ != nullptr) (*sink_)->push_back(tensor_);
  }
  double seconds_since(const Event& /*earlier*/) const override { return 0.0; }

 private:
  NodeId tensor_;
  std::vector<NodeId>** sink_;
  bool done_ = true;
};

// Steps replayed at most while looking for one that starts as an earlier one did.
constexpr int kMaxSteps = 8;

class Replay {
 public:
  Replay(const Graph& g, const PoolSizes& capacity, runtime::BlockChoice device_blocks)
      : g_(g),
        blocks_(device_blocks),
        device_(space_, capacity.device, device_blocks),
        pinned_(space_, capacity.pinned),
        peer_(space_, capacity.peer) {
    for (NodeId t = kNetworkInput; t < static_cast<NodeId>(g.nodes().size()); ++t) {
      released_.push_back(std::make_unique<ReleaseEvent>(t, &sink_));
      bytes_.push_back(g.tensor_bytes(t));
    }
    device_of_.assign(bytes_.size(), nullptr);
    grad_of_.assign(bytes_.size(), nullptr);
    pinned_of_.assign(bytes_.size(), nullptr);
  }

  // Throws OutOfMemory when a pool cannot place an allocation. With `waits`, the last step's waits
  // for releases, per action.
  void run(const Plan& plan, std::vector<std::vector<NodeId>>* waits = nullptr) {
    // Resident memory in ParameterStore's order, then the shared workspace and the loss seed
    // (inference: the values alone, no seed; Note [Inference plan]).
    const bool training = plan.purpose == Purpose::Training;
    for (NodeId id = 0; id < static_cast<NodeId>(g_.nodes().size()); ++id) {
      const std::vector<layers::ParamSpec> specs =
          layers::param_specs(g_.node(id).spec, g_.input_shapes(id));
      for (std::size_t i = 0; i < specs.size(); ++i) {
        const layers::ParamSpec& p = specs[i];
        const std::uint64_t bytes = p.shape.bytes(runtime::DType::F32);
        take(device_, bytes);  // the value, then its bf16 copy, gradient and state
        if (has_bf16_copy(g_, id, i)) take(device_, p.shape.bytes(runtime::DType::BF16));
        const int more = p.kind == layers::ParamKind::Trainable && training
                             ? 1 + plan.optimizer_state_buffers
                             : 0;
        for (int c = 0; c < more; ++c) take(device_, bytes);
      }
    }
    take(device_, plan.shared_workspace_bytes);
    if (training) take(device_, sizeof(float));
    // A step returns every map but the next step's input (Note [Input staging]), so where that
    // one lies fixes the pool a step starts with: steps are replayed until one starts as an
    // earlier one did, and the later ones would repeat them.
    std::vector<void*> starts;
    bool repeats = false;
    for (int step = 0; step < kMaxSteps; ++step) {
      repeats = step >= 2 && std::find(starts.begin(), starts.end(), staged_) != starts.end();
      if (repeats) break;
      starts.push_back(staged_);
      // Like Executor::finish_step: every copy has completed and the pool forgets them.
      for (const auto& e : released_) e->finish();
      device_.retire_completed();
      if (waits != nullptr) waits->assign(plan.actions.size(), {});
      for (std::size_t i = 0; i < plan.actions.size(); ++i) {
        sink_ = waits != nullptr ? &(*waits)[i] : nullptr;
        apply(plan.actions[i]);
      }
      sink_ = nullptr;
    }
    // Settled-first placement can move the next step's input around for many steps (ResNet-1001
    // under 1 GiB ran out of memory in its ninth): a plan of it fits only where the steps repeat.
    if (!repeats && blocks_ == runtime::BlockChoice::SettledFirst) {
      throw runtime::OutOfMemory(
          "settled-first placement does not repeat within " + std::to_string(kMaxSteps) + " steps",
          0, 0, 0);
    }
    for (const auto& e : released_) e->finish();
    // An evaluation takes the kept input as its own and frees it; the pool is then as before the
    // first step.
    for (const Action& a : plan.inference) apply(a);
  }

 private:
  void take(runtime::MemoryResource& pool, std::uint64_t bytes) {
    resident_.push_back(pool.allocate(bytes));
  }

  void apply(const Action& a) {
    const auto at = static_cast<std::size_t>(a.tensor + 1);  // the input (-1) first
    const std::uint64_t bytes = bytes_[at];
    switch (a.op) {
      case Op::Allocate:
        device_of_[at] = a.tensor == kNetworkInput && staged_ != nullptr
                             ? std::exchange(staged_, nullptr)
                             : device_.allocate(bytes);
        break;
      case Op::StageInput:
        staged_ = device_.allocate(bytes);
        break;
      case Op::Prefetch:
      case Op::Recompute:
        device_of_[at] = device_.allocate(bytes);
        break;
      case Op::AllocateGrad:
        grad_of_[at] = device_.allocate(bytes);
        break;
      case Op::Offload:
        pinned_of_[at] = copies(a.tier).allocate(bytes);
        break;
      case Op::Release: {
        ReleaseEvent& released = *released_[at];
        released.arm();
        device_.deallocate_after(device_of_[at], bytes, released);
        break;
      }
      case Op::Free:
        device_.deallocate(device_of_[at], bytes);
        break;
      case Op::AwaitPrefetch:
        copies(a.tier).deallocate_after(pinned_of_[at], bytes, done_);
        break;
      case Op::FreeGrad:
        device_.deallocate(grad_of_[at], bytes);
        break;
      case Op::AllocateWorkspace:
        workspace_ = device_.allocate(a.bytes);
        break;
      case Op::FreeWorkspace:
        device_.deallocate(workspace_, a.bytes);
        break;
      case Op::Forward:
      case Op::Backward:
      case Op::Evict:  // managed pages move; the range stays allocated
      case Op::Migrate:
      case Op::FaultIn:
        break;
    }
  }

  // Where offloaded copies of `tier` lie (Note [Peer tier]).
  runtime::PoolMemoryResource& copies(Tier tier) { return tier == Tier::Peer ? peer_ : pinned_; }

  const Graph& g_;
  runtime::BlockChoice blocks_;  // the device pool's
  AddressSpace space_;
  runtime::CompletedEvent done_;         // pinned memory: every prefetch has finished when asked
  std::vector<NodeId>* sink_ = nullptr;  // the waits of the action being replayed, if recorded
  std::vector<std::unique_ptr<ReleaseEvent>> released_;  // per map (the input first); outlive
                                                         // the pools, which wait on them
  runtime::PoolMemoryResource device_;
  runtime::PoolMemoryResource pinned_;
  runtime::PoolMemoryResource peer_;
  std::vector<void*> resident_;
  // Per map (the input first, at 0): its bytes, and where its memory lies now.
  std::vector<std::uint64_t> bytes_;
  std::vector<void*> device_of_;
  std::vector<void*> grad_of_;
  std::vector<void*> pinned_of_;  // an offloaded map's copy, pinned or on the peer
  void* workspace_ = nullptr;     // one pass's at a time
  void* staged_ = nullptr;        // the next step's input, once StageInput placed it
};

constexpr std::uint64_t kUnbounded = std::uint64_t{1} << 50;

bool replays(const Graph& g, const Plan& plan, const PoolSizes& capacity) {
  try {
    Replay(g, capacity, plan.device_blocks).run(plan);
    return true;
  } catch (const runtime::OutOfMemory&) {
    return false;
  }
}

// The smallest of base * (1 + k/64), k = 0..128, for which `fits` holds; 0 for base 0.
template <typename Fits>
std::uint64_t smallest(std::uint64_t base, Fits fits) {
  if (base == 0) return 0;
  for (std::uint64_t k = 0; k <= 128; ++k) {
    const std::uint64_t capacity = base + base * k / 64 + k * runtime::MemoryResource::kAlignment;
    if (fits(capacity)) return capacity;
  }
  return 3 * base;  // unreachable in practice: best fit with coalescing never needs 3x
}

}  // namespace

std::vector<std::vector<NodeId>> release_waits(const Graph& graph, const Plan& plan,
                                               std::uint64_t capacity) {
  std::vector<std::vector<NodeId>> waits;
  try {
    Replay(graph, {capacity, kUnbounded, kUnbounded}, plan.device_blocks).run(plan, &waits);
  } catch (const runtime::OutOfMemory&) {
    waits.clear();
  }
  return waits;
}

bool device_pool_fits(const Graph& graph, const Plan& plan, std::uint64_t capacity) {
  return replays(graph, plan, {capacity, kUnbounded, kUnbounded});
}

PoolSizes pool_sizes(const Graph& graph, const Plan& plan) {
  PoolSizes sizes;
  sizes.device = smallest(plan.predicted_pool_peak, [&](std::uint64_t c) {
    return replays(graph, plan, {c, kUnbounded, kUnbounded});
  });
  sizes.pinned = smallest(plan.pinned_bytes, [&](std::uint64_t c) {
    return replays(graph, plan, {kUnbounded, c, kUnbounded});
  });
  sizes.peer = smallest(plan.peer_bytes, [&](std::uint64_t c) {
    return replays(graph, plan, {kUnbounded, kUnbounded, c});
  });
  return sizes;
}

}  // namespace vdnn::graph
