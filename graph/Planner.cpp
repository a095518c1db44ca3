// The planner's public face: policy names, the choice among policies, the resident bytes and the
// printed plan. Placement, the step's actions and the fitting searches live in graph/planner/.
#include "graph/Planner.hpp"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "graph/DenseBlocks.hpp"
#include "graph/ParameterStore.hpp"
#include "graph/PoolSimulation.hpp"
#include "graph/StepTimeModel.hpp"
#include "graph/planner/PlanBuilder.hpp"
#include "runtime/ByteSize.hpp"

namespace vdnn::graph {
namespace {

constexpr std::uint64_t kF32 = sizeof(float);

// In the order of enum Op.
constexpr const char* kOpNames[] = {"allocate",   "forward",   "offload",         "release",
                                    "free",       "prefetch",  "await-prefetch",  "allocate-grad",
                                    "backward",   "free-grad", "evict",           "migrate",
                                    "fault-in",   "recompute", "alloc-workspace", "free-workspace",
                                    "stage-input"};

// In the order of enum Policy.
constexpr const char* kPolicyNames[] = {"baseline",  "vdnn-all",     "vdnn-conv", "vdnn-dyn", "uvm",
                                        "uvm-evict", "uvm-prefetch", "recompute", "auto"};

// A plan of `policy` that fits the request, if any.
std::optional<Plan> policy_plan(const Graph& g, const Liveness& live, Policy policy,
                                const PlanRequest& request, const CostModel& costs) {
  if (policy == Policy::Auto) return planner::auto_plan(g, live, request, costs);
  return planner::fitting_plan(g, live, policy, request);
}

// vdnn-dyn: of the candidates that fit, the least predicted step time.
std::optional<Plan> fastest_plan(const Graph& g, const Liveness& live, const PlanRequest& request,
                                 const CostModel& costs) {
  std::optional<Plan> best;
  double best_seconds = 0.0;
  for (Policy p : {Policy::Baseline, Policy::VdnnConv, Policy::VdnnAll, Policy::Auto}) {
    std::optional<Plan> plan = policy_plan(g, live, p, request, costs);
    if (!plan) continue;
    const double seconds = planner::predicted_seconds(g, *plan, costs);
    if (!best || seconds < best_seconds) {
      best_seconds = seconds;
      best = std::move(plan);
    }
    if (p == Policy::Baseline) break;  // nothing is faster than keeping everything
  }
  return best;
}

// The request's costs; where it has none, `estimated`, filled here.
const CostModel& costs_for(const Graph& graph, const PlanRequest& request,
                           std::optional<CostModel>& estimated) {
  if (request.costs != nullptr) return *request.costs;
  return estimated.emplace(estimate_costs(graph));
}

// Note [Deferred frees]: whether a plan whose device pool takes blocks that offload copies may
// still read last is worth making too: where the host is predicted to wait for copies (2% of the
// step), and for auto and vdnn-dyn under a budget always, since the fixed policies they compete
// with may gain from it.
bool worth_settled_blocks(const Graph& graph, const PlanRequest& request, const Plan& plan,
                          const CostModel& costs) {
  if (plan.memory != DeviceMemory::Dedicated || plan.purpose != Purpose::Training ||
      request.device_blocks == runtime::BlockChoice::SettledFirst) {
    return false;
  }
  const bool searches = request.policy == Policy::Auto || request.policy == Policy::VdnnDyn;
  return (searches && request.budget_bytes > 0) ||
         plan.predicted_step_seconds > 1.02 * predict_step_seconds(graph, plan, costs);
}

// The plan with its pools sized and its step time predicted under `costs`.
Plan finished(const Graph& graph, const PlanRequest& request, const CostModel& costs, Plan plan) {
  const PoolSizes pools = pool_sizes(graph, plan);
  // The budget is a ceiling: a dedicated pool takes what the plan needs, never more than the
  // budget. A managed pool holds every map's range; the budget bounds its device pages.
  plan.pool_bytes = request.budget_bytes > 0 && plan.memory == DeviceMemory::Dedicated
                        ? std::min(pools.device, planner::pool_for_budget(request.budget_bytes))
                        : pools.device;
  plan.pinned_bytes = pools.pinned;
  plan.peer_bytes = pools.peer;
  plan.predicted_step_seconds = planner::predicted_seconds(graph, plan, costs);
  plan.cost_source = costs.source;
  return plan;
}

// Every parameter and buffer, trainable ones `trainable_copies` times (value, gradient, state), and
// the bf16 copies of the weights BF16 layers read (Note [Precision]).
std::uint64_t parameter_copies_bytes(const Graph& g, std::uint64_t trainable_copies) {
  std::uint64_t bytes = 0;
  for (NodeId id = 0; id < static_cast<NodeId>(g.nodes().size()); ++id) {
    const std::vector<layers::ParamSpec> specs =
        layers::param_specs(g.node(id).spec, g.input_shapes(id));
    for (std::size_t i = 0; i < specs.size(); ++i) {
      const std::uint64_t b = specs[i].shape.bytes(runtime::DType::F32);
      bytes += specs[i].kind == layers::ParamKind::Trainable ? trainable_copies * b : b;
      if (has_bf16_copy(g, id, i)) bytes += specs[i].shape.bytes(runtime::DType::BF16);
    }
  }
  return bytes;
}

// "<what> needs 5.2 GiB of device memory at batch 64 but the budget is 4 GiB: short by 1.2 GiB."
std::string shortfall(const std::string& what, const Graph& g, const Plan& least,
                      std::uint64_t budget) {
  const std::string why =
      least.predicted_peak > budget
          ? "short by " + runtime::format_bytes(least.predicted_peak - budget)
      : least.pinned_bytes > least.host_budget_bytes
          ? "the peak fits but its offloads need " + runtime::format_bytes(least.pinned_bytes) +
                " of pinned host memory and the host budget is " +
                runtime::format_bytes(least.host_budget_bytes) + " (--host-budget)"
          : "the peak fits but fragmentation leaves no room for every allocation";
  return what + " needs " + runtime::format_bytes(least.predicted_peak) +
         " of device memory at batch " + std::to_string(g.batch()) + " but the budget is " +
         runtime::format_bytes(budget) + ": " + why + ".";
}

// Note [Inference plan]: the budget rule of a training step, for the forward pass alone.
std::optional<Plan> fitting_inference_plan(const Graph& g, const Liveness& live,
                                           const PlanRequest& request) {
  Plan plan = planner::inference_plan(g, live, request);
  if (!planner::fits(g, plan)) {
    throw DoesNotFit(shortfall(std::string("inference under policy ") + policy_name(plan.policy), g,
                               plan, request.budget_bytes) +
                         " Policies move only what backward keeps, which inference does not; a "
                         "smaller batch might fit.",
                     plan.predicted_peak, 0, request.budget_bytes);
  }
  return plan;
}

// Offload, Prefetch and AwaitPrefetch name the tier their copy lies in.
bool copies_to_tier(Op op) {
  return op == Op::Offload || op == Op::Prefetch || op == Op::AwaitPrefetch;
}

// The peer tier's lines of the totals: bytes and maps per tier, and the peer pool.
std::string format_tiers(const Plan& plan) {
  std::size_t to_peer = 0;
  std::size_t offloads = 0;
  for (const Action& a : plan.actions) {
    if (a.op != Op::Offload) continue;
    ++offloads;
    to_peer += a.tier == Tier::Peer ? 1 : 0;
  }
  return "offloaded to peer GPU " + std::to_string(plan.peer_device) + ": " +
         runtime::format_bytes(plan.peer_offloaded_bytes) + " in " + std::to_string(to_peer) +
         " feature maps (budget " + runtime::format_bytes(plan.peer_budget_bytes) + ", pool " +
         runtime::format_bytes(plan.peer_bytes) + ")\n" + "offloaded to the host:  " +
         runtime::format_bytes(plan.offloaded_bytes - plan.peer_offloaded_bytes) + " in " +
         std::to_string(offloads - to_peer) + " feature maps\n";
}

// Note [Dense block storage]: how many concatenations lie in how many block buffers, against
// the bytes they would take apart; empty without dense blocks.
std::string dense_block_line(const Graph& g) {
  const BlockTotals b = block_totals(g);
  if (b.concatenations == 0) return {};
  return "dense blocks:          " + std::to_string(b.concatenations) + " concatenations in " +
         std::to_string(b.buffers) + " block buffers of " + runtime::format_bytes(b.buffer_bytes) +
         " (apart: " + runtime::format_bytes(b.apart_bytes) +
         "), each new map copied once, every earlier one a view\n";
}

std::string format_milliseconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.2f ms", seconds * 1e3);
  return text;
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

const char* tier_name(Tier tier) noexcept { return tier == Tier::Peer ? "peer" : "host"; }

std::uint64_t resident_bytes(const Graph& g, int optimizer_state_buffers) {
  const auto trainable_copies = static_cast<std::uint64_t>(2 + optimizer_state_buffers);
  return kF32 + parameter_copies_bytes(g, trainable_copies);  // kF32: the loss gradient seed
}

std::uint64_t parameter_bytes(const Graph& g) { return parameter_copies_bytes(g, 1); }

Plan make_plan(const Graph& graph, const PlanRequest& request) {
  const std::size_t nodes = graph.nodes().size();
  VDNN_EXPECTS(request.workspace.empty() || request.workspace.size() == nodes,
               "make_plan: " + std::to_string(request.workspace.size()) + " workspaces for " +
                   std::to_string(nodes) + " layers (of another graph, e.g. unfused?)");
  VDNN_EXPECTS(request.costs == nullptr || request.costs->layers.size() == nodes,
               "make_plan: " + std::to_string(request.costs->layers.size()) + " layer costs for " +
                   std::to_string(nodes) + " layers");
  const Liveness live(graph);
  std::optional<CostModel> estimated;
  const CostModel& costs = costs_for(graph, request, estimated);
  const auto attempt = [&](const PlanRequest& r) -> std::optional<Plan> {
    std::optional<Plan> p = r.purpose == Purpose::Inference ? fitting_inference_plan(graph, live, r)
                            : r.policy == Policy::VdnnDyn
                                ? fastest_plan(graph, live, r, costs)
                                : policy_plan(graph, live, r.policy, r, costs);
    if (p) p = finished(graph, r, costs, *std::move(p));
    return p;
  };
  if (std::optional<Plan> plan = attempt(request)) {
    if (!worth_settled_blocks(graph, request, *plan, costs)) return *std::move(plan);
    PlanRequest settled = request;
    settled.device_blocks = runtime::BlockChoice::SettledFirst;
    std::optional<Plan> other = attempt(settled);
    return other && other->predicted_step_seconds < plan->predicted_step_seconds ? *std::move(other)
                                                                                 : *std::move(plan);
  }
  // Nothing fits: say by how much (with the least memory the policy's family can plan), and which
  // policy would.
  const Policy least = request.policy == Policy::VdnnDyn || request.policy == Policy::Auto
                           ? Policy::VdnnAll
                           : request.policy;
  const Plan best = planner::plan_for(graph, live, least, planner::place(graph, live, least),
                                      request, planner::kForwardPeak);
  std::string advice = " No policy fits this budget; a smaller batch might.";
  const std::vector<Policy> alternatives =
      uses_managed_memory(request.policy)
          ? std::vector<Policy>{Policy::UvmPrefetch}
          : std::vector<Policy>{Policy::VdnnConv, Policy::VdnnAll, Policy::Auto};
  for (Policy p : alternatives) {
    if (p == request.policy) continue;
    if (const std::optional<Plan> other = policy_plan(graph, live, p, request, costs)) {
      advice = std::string(" Policy ") + policy_name(p) + " fits (predicted peak " +
               runtime::format_bytes(other->predicted_peak) + ").";
      break;
    }
  }
  throw DoesNotFit(shortfall(std::string("policy ") + policy_name(request.policy), graph, best,
                             request.budget_bytes) +
                       advice,
                   best.predicted_peak, 0, request.budget_bytes);
}

Plan rebuild_where_faster(const Graph& graph, const PlanRequest& request, Plan plan) {
  if (plan.requested != Policy::Auto || plan.offloaded_bytes == 0) return plan;
  const Liveness live(graph);
  std::optional<CostModel> estimated;
  const CostModel& costs = costs_for(graph, request, estimated);
  PlanRequest same_blocks = request;  // the plans tried place blocks as `plan` does
  same_blocks.device_blocks = plan.device_blocks;
  plan = planner::rebuild_instead_of_copying(graph, live, same_blocks, costs, std::move(plan));
  return finished(graph, same_blocks, costs, std::move(plan));
}

std::vector<layers::WorkspaceBytes> room_for_workspace(const Graph& g, const Plan& plan) {
  const std::uint64_t pool = planner::pool_for_budget(plan.budget_bytes);
  std::vector<layers::WorkspaceBytes> room(g.nodes().size(), {pool, pool});
  for (const Action& a : plan.actions) {
    const bool forward =
        (a.op == Op::Forward && a.tensor != kNetworkInput) || a.op == Op::Recompute;
    if (!forward && a.op != Op::Backward) continue;
    const std::uint64_t used = plan.resident_bytes + a.device_bytes;
    const std::uint64_t free = pool > used ? pool - used : 0;
    layers::WorkspaceBytes& r = room[static_cast<std::size_t>(a.tensor)];
    std::size_t& pass = forward ? r.forward : r.backward;
    pass = std::min<std::uint64_t>(pass, free);
  }
  return room;
}

std::string format_plan(const Graph& g, const Plan& plan) {
  std::string out;
  char line[256];
  std::snprintf(line, sizeof(line), "%-6s %-15s %-36s %14s %16s\n", "#", "action", "tensor / node",
                "bytes", "device in use");
  out += line;
  std::size_t index = 0;
  for (const Action& a : plan.actions) {
    std::string name = a.tensor == kNetworkInput ? kInputName : g.node(a.tensor).name;
    if (plan.peer_budget_bytes > 0 && copies_to_tier(a.op))
      name += std::string(" @") + tier_name(a.tier);
    const bool compute = a.op == Op::Forward || a.op == Op::Backward;
    std::snprintf(line, sizeof(line), "%-6zu %-15s %-36s %14s %16s\n", index++, op_name(a.op),
                  name.c_str(), compute ? "" : runtime::format_bytes(a.bytes).c_str(),
                  runtime::format_bytes(plan.resident_bytes + a.device_bytes).c_str());
    out += line;
  }
  std::size_t offloaded = 0;
  std::size_t evicted = 0;
  std::size_t recomputed = 0;
  std::size_t retained = 0;
  std::uint64_t retained_bytes = 0;
  for (NodeId t = 0; t < static_cast<NodeId>(g.nodes().size()); ++t) {
    if (plan.placement_of(t) != Placement::Retained) continue;
    ++retained;
    retained_bytes += g.tensor_bytes(t);
  }
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
  if (plan.communicator_bytes > 0) {  // Note [Data parallelism]
    out += "communicator (NCCL):   " + runtime::format_bytes(plan.communicator_bytes) +
           " of its own device memory, measured at setup, taken out of the budget given\n";
  }
  if (plan.purpose == Purpose::Inference) {
    out +=
        "inference:             a forward pass in eval mode; every feature map freed after "
        "its last forward consumer, so " +
        std::string(policy_name(plan.policy)) +
        " has nothing to offload, prefetch or recompute (those keep maps for backward)\n";
    out += "resident (parameters and batch-norm statistics; no gradients or optimizer state): " +
           runtime::format_bytes(plan.resident_bytes) + "\n";
  } else {
    out += "resident (parameters, gradients, optimizer state): " +
           runtime::format_bytes(plan.resident_bytes) + "\n";
  }
  out += "predicted peak:        " + runtime::format_bytes(plan.predicted_peak) + "\n";
  out += "pinned host memory:    " + runtime::format_bytes(plan.pinned_bytes);
  if (plan.host_budget_bytes != kNoHostBudget) {
    out += " (host budget " + runtime::format_bytes(plan.host_budget_bytes) + ")";
  }
  out += "\n";
  out += "offloaded per step:    " + runtime::format_bytes(plan.offloaded_bytes) + " in " +
         std::to_string(offloaded) + " feature maps\n";
  out += "prefetched per step:   " + runtime::format_bytes(plan.prefetched_bytes) + "\n";
  if (plan.peer_budget_bytes > 0) out += format_tiers(plan);
  out += "predicted step time:   " + format_milliseconds(plan.predicted_step_seconds) + " (costs " +
         plan.cost_source + ")\n";
  if (recomputed > 0) {
    out += "recomputed per step:   " + runtime::format_bytes(plan.recomputed_bytes) + " for " +
           std::to_string(recomputed) + " feature maps (temporaries included)\n";
  }
  if (retained > 0) {  // Note [Recomputation]
    out += "kept for rebuilds:     " + runtime::format_bytes(retained_bytes) + " in " +
           std::to_string(retained) + " feature maps backward does not read, rebuilds do\n";
  }
  out += dense_block_line(g);
  out += std::string("device memory:         ") + device_memory_name(plan.memory) + ", pool " +
         runtime::format_bytes(plan.pool_bytes) +
         (plan.device_blocks == runtime::BlockChoice::SettledFirst
              ? ", blocks whose copies may still run taken last"
              : "") +
         "\n";
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
