// Builds a run in dependency order: layers, plan, context, executor.
#include "graph/Session.hpp"

#include <algorithm>
#include <exception>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "graph/CostProfiler.hpp"
#include "runtime/Device.hpp"

#include "runtime/cpu/CpuContext.hpp"
#ifdef VDNN_HAVE_CUDA
#include "runtime/cuda/CudaContext.hpp"
#endif

namespace vdnn::graph {
namespace {

std::unique_ptr<runtime::ExecutionContext> make_context(const SessionOptions& options) {
  if (options.backend == layers::Backend::Cpu) {
    return std::make_unique<runtime::cpu::CpuContext>(options.stress,
                                                      options.cpu_free_device_bytes);
  }
#ifdef VDNN_HAVE_CUDA
  return std::make_unique<runtime::cuda::CudaContext>(options.device);
#else
  throw runtime::InvalidArgument("this build has no CUDA backend");
#endif
}

layers::LayerOptions layer_options(const SessionOptions& options,
                                   runtime::ExecutionContext& context) {
  layers::LayerOptions o;
  o.seed = options.executor.seed;
  o.deterministic = options.deterministic;
  o.allow_tf32 = options.allow_tf32;
#ifdef VDNN_HAVE_CUDA
  if (auto* cuda = dynamic_cast<runtime::cuda::CudaContext*>(&context)) o.cuda = &cuda->device();
#else
  static_cast<void>(context);
#endif
  return o;
}

PlanRequest request_for(const SessionOptions& options, const LayerSet& layers, std::uint64_t budget,
                        const CostModel& costs) {
  PlanRequest r;
  r.policy = options.policy;
  r.budget_bytes = budget;
  r.workspace = layers.workspaces();
  r.costs = &costs;
  return r;
}

// The device a measurement holds for: "cpu", or "cuda:" and the device's name.
std::string device_description(const SessionOptions& options) {
  if (options.backend == layers::Backend::Cpu) return "cpu";
  return "cuda:" + runtime::cuda_device_name(options.device);
}

// Raises every limited pass's limit to what `plan` leaves free around it (its own workspace
// included), while the plan made again still fits: the limits came from a plan without workspace,
// and the placement found under them may leave more room where a pass runs.
Plan relax_limits(const Graph& graph, LayerSet& layers, Plan plan,
                  const std::function<std::optional<Plan>()>& attempt) {
  constexpr int kRounds = 3;
  for (int round = 0; round < kRounds; ++round) {
    const std::vector<layers::WorkspaceBytes> room = room_for_workspace(graph, plan);
    const std::vector<layers::WorkspaceBytes> now = layers.workspaces();
    const std::vector<layers::WorkspaceBytes> before = layers.workspace_limits();
    std::vector<layers::WorkspaceBytes> limits = before;
    bool raised = false;
    auto raise = [&](std::size_t& limit, std::size_t free, std::size_t used) {
      if (limit == layers::kUnlimitedWorkspace || free + used <= limit) return;
      limit = free + used;
      raised = true;
    };
    for (std::size_t i = 0; i < limits.size(); ++i) {
      raise(limits[i].forward, room[i].forward, now[i].forward);
      raise(limits[i].backward, room[i].backward, now[i].backward);
    }
    if (!raised) break;
    layers.limit_workspaces(limits);
    if (layers.workspaces() == now) break;  // no faster algorithm fits the room
    std::optional<Plan> relaxed = attempt();
    if (!relaxed) {
      layers.limit_workspaces(before);
      break;
    }
    plan = *std::move(relaxed);
  }
  return plan;
}

// Note [Workspace]: when the plan with every layer's fastest algorithms does not fit the budget,
// each pass's workspace is limited to what a plan without any workspace leaves free where that
// pass runs (a fraction of it when fragmentation leaves less), so only the layers at the peak
// take slower algorithms; failing that, the largest workspace shrinks one algorithm at a time
// (vDNN's per-layer downgrades) until the plan fits or nothing shrinks. Then the limits rise to
// the room the fitting plan leaves (relax_limits).
std::optional<Plan> fit_workspaces(const Graph& graph, LayerSet& layers, PlanRequest& request,
                                   const std::function<std::optional<Plan>()>& attempt) {
  PlanRequest without = request;
  without.workspace.clear();
  const std::vector<layers::WorkspaceBytes> room =
      room_for_workspace(graph, make_plan(graph, without));  // throws when nothing helps
  const std::vector<layers::WorkspaceBytes> before = layers.workspace_limits();
  for (const std::size_t share : {1, 2, 4}) {
    std::vector<layers::WorkspaceBytes> limits = before;
    for (std::size_t i = 0; i < limits.size(); ++i) {
      limits[i] = {std::min(limits[i].forward, room[i].forward / share),
                   std::min(limits[i].backward, room[i].backward / share)};
    }
    layers.limit_workspaces(limits);
    if (std::optional<Plan> plan = attempt()) return plan;
  }
  while (layers.downgrade_largest_workspace()) {
    if (std::optional<Plan> plan = attempt()) return plan;
  }
  return std::nullopt;
}

Plan plan_with_downgrades(const Graph& graph, const SessionOptions& options, LayerSet& layers,
                          std::uint64_t budget, const CostModel& costs, Policy policy) {
  PlanRequest request = request_for(options, layers, budget, costs);
  request.policy = policy;
  std::exception_ptr failure;
  const std::function<std::optional<Plan>()> attempt = [&]() -> std::optional<Plan> {
    request.workspace = layers.workspaces();
    try {
      return make_plan(graph, request);
    } catch (const DoesNotFit&) {
      failure = std::current_exception();
      return std::nullopt;
    }
  };
  if (std::optional<Plan> plan = attempt()) return *std::move(plan);
  if (budget == 0) std::rethrow_exception(failure);
  std::optional<Plan> plan = fit_workspaces(graph, layers, request, attempt);
  if (!plan) std::rethrow_exception(failure);
  return relax_limits(graph, layers, *std::move(plan), attempt);
}

// The plan costs are measured under: the first of baseline, recompute and auto (with estimated
// costs, and the workspace limits auto needs) that fits the budget; the fewer copies, the more the
// measured step time says about the gaps between layers.
Plan profiling_plan(const Graph& graph, const SessionOptions& options, LayerSet& layers,
                    const CostModel& estimated) {
  PlanRequest r = request_for(options, layers, options.budget_bytes, estimated);
  for (Policy p : {Policy::Baseline, Policy::Recompute}) {
    try {
      r.policy = p;
      return make_plan(graph, r);
    } catch (const DoesNotFit&) {
    }
  }
  return plan_with_downgrades(graph, options, layers, options.budget_bytes, estimated,
                              Policy::Auto);
}

bool chooses_by_cost(Policy policy) { return policy == Policy::Auto || policy == Policy::VdnnDyn; }

// Given, cached, measured or estimated (SessionOptions::costs).
CostModel session_costs(const Graph& graph, const SessionOptions& options, LayerSet& layers,
                        runtime::ExecutionContext& context) {
  if (options.costs) return *options.costs;
  CostModel estimated = estimate_costs(graph);
  if (!options.measure_costs && !chooses_by_cost(options.policy)) return estimated;
  // First, as it may limit workspaces: costs hold for the algorithms the layers then run.
  const Plan plan = profiling_plan(graph, options, layers, estimated);
  CostKey key =
      cost_key(graph, device_description(options), options.deterministic, options.allow_tf32);
  key.algorithms = layers.algorithm_key();
  if (options.cost_cache != nullptr) {
    CostModel cached = options.cost_cache->load(key);
    if (cached.layers.size() == graph.nodes().size()) return cached;
  }
  CostModel measured =
      measure_costs(graph, layers, plan, context, options.executor, options.cost_steps);
  if (options.cost_cache != nullptr) options.cost_cache->store(key, measured);
  return measured;
}

// Without a budget, the plan takes what it needs; on CUDA that must fit what the device can give
// (free memory less kCudaReserve), else the plan is made again under that budget. A managed pool
// is not planned again: its evicted maps keep their range, so no budget shrinks it, and the
// executor's oversubscription guard decides (Note [Managed memory]).
Plan plan_session(const Graph& graph, const SessionOptions& options, LayerSet& layers,
                  runtime::ExecutionContext& context, const CostModel& costs) {
  Plan plan =
      plan_with_downgrades(graph, options, layers, options.budget_bytes, costs, options.policy);
  const bool cuda = options.backend == layers::Backend::Cuda;
  if (cuda && options.budget_bytes == 0 && plan.memory == DeviceMemory::Dedicated) {
    const std::uint64_t free_bytes = context.free_device_bytes();
    const std::uint64_t device = free_bytes > kCudaReserve ? free_bytes - kCudaReserve : 0;
    if (plan.pool_bytes > device) {
      plan = plan_with_downgrades(graph, options, layers, device, costs, options.policy);
    }
  }
  return plan;
}

// Under a budget, auto weighs workspace against feature maps: the pass with the largest workspace
// takes its next smaller algorithm while that makes the measured plan faster (vDNN's per-layer
// choice, by predicted step time), at most kWorkspaceTrials times.
void trade_workspace_for_maps(const Graph& graph, const SessionOptions& options, LayerSet& layers,
                              runtime::ExecutionContext& context, CostModel& costs, Plan& plan) {
  constexpr int kWorkspaceTrials = 3;
  for (int trial = 0; trial < kWorkspaceTrials; ++trial) {
    const std::vector<layers::WorkspaceBytes> before = layers.workspace_limits();
    if (!layers.downgrade_largest_workspace()) return;  // nothing shrinks
    try {
      CostModel leaner_costs = session_costs(graph, options, layers, context);
      Plan leaner = plan_session(graph, options, layers, context, leaner_costs);
      if (leaner.predicted_step_seconds < plan.predicted_step_seconds) {
        costs = std::move(leaner_costs);
        plan = std::move(leaner);
        continue;
      }
    } catch (const DoesNotFit&) {
    }
    layers.limit_workspaces(before);
    return;
  }
}

}  // namespace

// The costs, then the plan. Measured costs hold for the layers' algorithms: when planning limited
// more workspaces, the costs are measured again with those and the plan made again.
Session::Planned Session::plan_run(const Graph& graph, const SessionOptions& options,
                                   LayerSet& layers, runtime::ExecutionContext& context) {
  Planned run;
  run.costs = session_costs(graph, options, layers, context);
  const std::uint64_t measured_with = layers.algorithm_key();
  run.plan = plan_session(graph, options, layers, context, run.costs);
  const bool measured = run.costs.source != "estimated" && !options.costs;
  if (layers.algorithm_key() != measured_with && measured) {
    run.costs = session_costs(graph, options, layers, context);
    run.plan = plan_session(graph, options, layers, context, run.costs);
  }
  // Another algorithm gives other bits: deterministic runs change one only where the budget forces
  // it, so that auto stays bitwise equal to baseline wherever the fastest algorithms fit.
  const bool constrained = run.plan.offloaded_bytes > 0 || run.plan.recomputed_bytes > 0;
  if (options.policy == Policy::Auto && options.budget_bytes > 0 && measured && constrained &&
      !options.deterministic) {
    trade_workspace_for_maps(graph, options, layers, context, run.costs, run.plan);
  }
  return run;
}

Session::Session(Graph graph, const SessionOptions& options)
    : graph_(std::move(graph)),
      context_(make_context(options)),
      layer_options_(layer_options(options, *context_)),
      layers_(graph_, options.backend, layer_options_),
      planned_(plan_run(graph_, options, layers_, *context_)),
      executor_(std::make_unique<Executor>(graph_, layers_, planned_.plan, *context_,
                                           options.executor)) {}

Session::~Session() = default;

}  // namespace vdnn::graph
