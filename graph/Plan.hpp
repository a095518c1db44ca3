// Plan: the memory schedule of one training step as data: where device memory comes from, every
// allocation, offload, prefetch, eviction, migration, recomputation and free in execution order,
// with the device bytes predicted after each, and the forward-only pass of an evaluation; or of an
// inference pass alone. The executor runs exactly these lists; `vdnn plan` prints the step. See
// Note [Offload lifetime], Note [Managed memory], Note [Recomputation], Note [Evaluation memory],
// Note [Inference plan] and Note [Peer tier] in docs/ARCHITECTURE.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "graph/Graph.hpp"
#include "runtime/memory/PoolMemoryResource.hpp"

namespace vdnn::graph {

/// What to offload. Dyn resolves, at planning time, to the first of Baseline, Conv, All that fits
/// the budget (the fastest configuration that fits). The Uvm policies keep the device pool in
/// managed memory: Uvm gives no hints (what swapping the allocator gives); UvmEvict migrates the
/// maps vdnn-all would offload to the host after their last forward use and lets backward fault
/// them back; UvmPrefetch also migrates them back ahead of backward, on vdnn-all's schedule.
/// Recompute copies nothing: it frees the maps of cheap layers after forward and rebuilds them in
/// backward (Note [Recomputation]). Auto chooses per map keep, offload or recompute for the least
/// predicted step time under the budget (Note [Automatic placement]).
enum class Policy : std::uint8_t {
  Baseline,
  VdnnAll,
  VdnnConv,
  VdnnDyn,
  Uvm,
  UvmEvict,
  UvmPrefetch,
  Recompute,
  Auto
};

/// Every policy name, in the order above (for option validators and messages).
std::vector<std::string> policy_names();
/// Parses a name of policy_names(); throws InvalidArgument naming them.
Policy parse_policy(const std::string& name);
const char* policy_name(Policy policy) noexcept;
/// True for the policies whose device pool is managed memory.
bool uses_managed_memory(Policy policy) noexcept;

/// Where the device pool's one block comes from.
enum class DeviceMemory : std::uint8_t {
  Dedicated,  // cudaMalloc: feature maps leave the device only by explicit copies
  Managed,    // cudaMallocManaged: feature maps keep their range; their pages migrate
};
const char* device_memory_name(DeviceMemory memory) noexcept;

enum class Op : std::uint8_t {
  Allocate,       // device memory for a feature map, before its producer runs
  Forward,        // a node's forward on the compute stream (the input's "forward" is the upload)
  Offload,        // copy a feature map to pinned host memory on the offload stream
  Release,        // an offloaded map's device memory goes back once its copy and last read are done
  Free,           // a map nobody will read again goes back
  Prefetch,       // device memory again, and a copy from pinned host memory on the prefetch stream
  AwaitPrefetch,  // the compute stream waits for the prefetch before the first backward reader
  AllocateGrad,   // the gradient of a feature map, before the first backward that writes it
  Backward,       // a node's backward on the compute stream
  FreeGrad,       // a node's output gradient, after its backward consumed it
  Evict,          // managed: migrate a map's pages to the host after its last forward use
  Migrate,        // managed: migrate an evicted map's pages back on the prefetch stream
  FaultIn,        // managed: the first backward reader faults an evicted map's pages back
  Recompute,      // device memory for a freed map again, and its producer's forward once more
  AllocateWorkspace,  // a node's scratch memory, right before its forward, recompute or backward
  FreeWorkspace,      // ...and right after it (Note [Workspace])
  StageInput,  // device memory for the next step's input, and the upload of the next batch into
               // it on the offload stream, in backward where the peak has room (Note [Input
               // staging]); a no-op unless the caller named the next batch
};
/// How many kinds of Op there are (StageInput is the last).
inline constexpr std::size_t kOpCount = static_cast<std::size_t>(Op::StageInput) + 1;
const char* op_name(Op op) noexcept;

/// Where an offloaded map waits for backward (Note [Peer tier]): pinned host memory over the host
/// link, or the peer pool on a neighbour GPU over the peer link.
enum class Tier : std::uint8_t { Host, Peer };
const char* tier_name(Tier tier) noexcept;

/// A host budget that limits nothing (Note [Host budget]).
inline constexpr std::uint64_t kNoHostBudget = std::numeric_limits<std::uint64_t>::max();

/// One step of the plan. `tensor` is the feature map (a node id, or kNetworkInput) for memory
/// operations and the node for Forward/Backward/Recompute and the workspace actions.
struct Action {
  Op op = Op::Forward;
  NodeId tensor = 0;
  std::uint64_t bytes = 0;         // device bytes allocated or freed (Recompute: allocated); for
                                   // Offload, the bytes copied; for Evict, Migrate and FaultIn, the
                                   // bytes whose pages move
  std::uint64_t device_bytes = 0;  // predicted device bytes in use after this action
  Tier tier = Tier::Host;          // Offload, Prefetch, AwaitPrefetch: where the map's copy lies
};

/// Passes whose workspace is at most this share one buffer allocated for the whole run: small
/// scratch is not worth an allocation per pass (Note [Workspace]).
inline constexpr std::uint64_t kSharedWorkspaceBytes = std::uint64_t{16} << 20;

/// Why a feature map is or is not offloaded.
enum class Placement : std::uint8_t {
  Resident,     // backward reads it and the policy keeps it on the device
  Offloaded,    // offloaded after its last forward use, prefetched before its first backward use
  ForwardOnly,  // backward never reads it: freed after its last forward consumer
  Evicted,      // managed: evicted after its last forward use, faulted back by its first reader
  Migrated,     // managed: evicted after its last forward use, migrated back before it is needed
  Recomputed,   // freed after its last forward use, rebuilt before its first backward use
  Retained,     // backward never reads it, rebuilds do: kept until its consumers' backward passes
  InBlock,      // a dense block's concatenation: in the block's one buffer, on the device from the
                // block's first concatenation until its last reader (Note [Dense block storage])
};

/// What a plan is for: a training step (forward, backward, update), or inference alone (a forward
/// pass in eval mode over the parameters and batch-norm statistics: no gradients, no optimizer
/// state, no backward; Note [Inference plan]).
enum class Purpose : std::uint8_t { Training, Inference };

/// Bucket sizes, PyTorch DDP's defaults: a bucket closes once it holds at least `bytes` of
/// gradients (the first one at `first_bytes`, so that communication starts early).
struct BucketCaps {
  std::size_t first_bytes = std::size_t{1} << 20;
  std::size_t bytes = std::size_t{25} << 20;
};

/// NCCL's all-reduce bus bandwidth the planner assumes where none is measured (`vdnn plan`, the
/// in-process ranks): nccl-tests' busbw of a 1 GiB all-reduce on 2 H100s of this workplace (issue
/// 27; 355 GB/s on 4). A run over NCCL plans with what its communicator measured at setup
/// (runtime::Communicator::bus_bytes_per_second).
inline constexpr double kAllReduceBusBytesPerSecond = 329e9;

/// Data parallelism as a plan sees it (Note [Data parallelism]): the plan runs on each of
/// `world_size` ranks, whose gradients are all-reduced in buckets cut by `buckets`, at
/// `bus_bytes_per_second`; the step-time model replays those all-reduces as a stream of their
/// own. A world of one: no all-reduce.
struct DataParallelPlan {
  int world_size = 1;
  double bus_bytes_per_second = kAllReduceBusBytesPerSecond;
  BucketCaps buckets;
};

struct Plan {
  Purpose purpose = Purpose::Training;
  Policy requested = Policy::Baseline;
  Policy policy = Policy::Baseline;  // what ran: never VdnnDyn
  DeviceMemory memory = DeviceMemory::Dedicated;
  std::uint64_t budget_bytes = 0;  // 0: no budget
  /// F32 optimizer state tensors per trainable parameter (PlanRequest::optimizer_state_buffers).
  int optimizer_state_buffers = 1;
  std::uint64_t resident_bytes = 0;  // parameters, gradients, optimizer state, workspace, seed
                                     // (inference: parameters and workspace only)
  /// The one workspace every pass needing at most kSharedWorkspaceBytes uses, allocated for the
  /// whole run; larger ones are allocated around their pass (Note [Workspace]).
  std::uint64_t shared_workspace_bytes = 0;
  std::uint64_t predicted_peak = 0;  // resident_bytes + the largest device_bytes of the actions
  // resident_bytes + the most bytes allocated from the device pool at once: predicted_peak with
  // dedicated memory; with managed memory evicted maps keep their range, so it can be more.
  std::uint64_t predicted_pool_peak = 0;
  std::uint64_t pool_bytes = 0;  // device pool: what the plan needs (fragmentation
                                 // included, by a dry run of the allocator); dedicated
                                 // memory: <= the budget
  /// How the device pool places blocks (Note [Deferred frees]): the request's, or settled first
  /// where make_plan found that plan faster.
  runtime::BlockChoice device_blocks = runtime::BlockChoice::BestFit;
  std::uint64_t pinned_bytes = 0;  // pinned host pool the plan needs (likewise)
  /// The most pinned host memory the offloaded maps may take at once (Note [Host budget]);
  /// kNoHostBudget: no limit.
  std::uint64_t host_budget_bytes = kNoHostBudget;
  std::uint64_t offloaded_bytes = 0;    // per step
  std::uint64_t prefetched_bytes = 0;   // per step
  std::uint64_t evicted_bytes = 0;      // per step, managed pages migrated to the host
  std::uint64_t migrated_bytes = 0;     // per step, managed pages migrated back ahead of need
  std::uint64_t faulted_bytes = 0;      // per step, managed pages faulted back on demand
  std::uint64_t recomputed_bytes = 0;   // per step, maps rebuilt in backward (temporaries too)
  double predicted_step_seconds = 0.0;  // by the step-time model under the request's costs
  std::string cost_source;              // where those costs came from (CostModel::source)
  std::vector<Placement> placement;     // per node output; the network input is at index nodes()
  /// The pass the plan is for: a training step, or (Purpose::Inference) the same actions as
  /// `inference`.
  std::vector<Action> actions;
  /// A forward pass alone (Executor::evaluate): each map allocated before its producer runs and
  /// freed after its last forward consumer, nothing copied or migrated; device_bytes as in
  /// `actions`. The pools are sized for it too (Note [Evaluation memory]).
  std::vector<Action> inference;
  /// The peer tier (Note [Peer tier]): the GPU whose pool takes offloaded maps first, and the most
  /// bytes of maps the plan may keep there at once; -1 and 0: no peer tier.
  int peer_device = -1;
  std::uint64_t peer_budget_bytes = 0;
  std::uint64_t peer_bytes = 0;            // peer pool the plan needs (as pinned_bytes); 0: none
  std::uint64_t peer_offloaded_bytes = 0;  // per step, the part of offloaded_bytes to the peer
  /// Device memory the communicator of a data-parallel run took for itself (NCCL's, measured at
  /// its setup; runtime::Communicator::device_bytes), inside the budget given: budget_bytes is
  /// that budget less this (Note [Data parallelism]).
  std::uint64_t communicator_bytes = 0;
  /// The ranks this training plan runs on and their gradient all-reduces (a world of one: none).
  DataParallelPlan data_parallel;

  /// Where an Offloaded map's copy lies: the tier of its Offload action (Host for any other map).
  Tier tier_of(NodeId tensor) const {
    for (const Action& a : actions) {
      if (a.op == Op::Offload && a.tensor == tensor) return a.tier;
    }
    return Tier::Host;
  }

  Placement placement_of(NodeId tensor) const {
    return placement.at(tensor == kNetworkInput ? placement.size() - 1
                                                : static_cast<std::size_t>(tensor));
  }
};

}  // namespace vdnn::graph
