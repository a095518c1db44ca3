// Builds a run in dependency order: layers, plan, context, executor.
#include "graph/Session.hpp"

#include <algorithm>
#include <cstdio>
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
  o.disk_cache = options.disk_cache;
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

// Note [Workspace]: when the plan with every layer's fastest algorithms does not fit the budget,
// each pass's workspace is limited to what a plan without any workspace leaves free where that
// pass runs (a fraction of it when fragmentation leaves less), so only the layers at the peak
// take slower algorithms; failing that, the largest workspace shrinks one algorithm at a time
// (vDNN's per-layer downgrades) until the plan fits or nothing shrinks.
std::optional<Plan> fit_workspaces(const Graph& graph, LayerSet& layers, const PlanRequest& request,
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
  return *std::move(plan);
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

// Note [Layout]: auto on CUDA measures the network in both layouts, the layers of a profiled step
// under the plan the costs are measured with, and takes the faster. Deterministic runs, whose
// choice must not depend on timing noise, take decide_layout's rule instead.
LayoutDecision choose_layout(const Graph& graph, const SessionOptions& options,
                             runtime::ExecutionContext& context,
                             const layers::LayerOptions& layer_options) {
  if (options.layout != LayoutChoice::Auto || options.backend != layers::Backend::Cuda ||
      options.deterministic) {
    return decide_layout(options.layout, options.backend, layer_options);
  }
  const auto step_seconds = [&](runtime::Layout layout) {
    Graph g = graph;
    g.use_layout(layout);
    LayerSet layers(g, options.backend, layer_options);
    const Plan plan = profiling_plan(g, options, layers, estimate_costs(g));
    const CostModel costs =
        measure_costs(g, layers, plan, context, options.executor, options.cost_steps);
    double seconds = 0.0;
    for (const LayerCost& c : costs.layers) seconds += c.forward + c.backward;
    return seconds;
  };
  const double nchw = step_seconds(runtime::Layout::Nchw);
  const double nhwc = step_seconds(runtime::Layout::Nhwc);
  char reason[96];
  std::snprintf(reason, sizeof(reason),
                "auto: a profiled step's layers take %.1f ms in nhwc, %.1f ms in nchw", nhwc * 1e3,
                nchw * 1e3);
  return {nhwc < nchw ? runtime::Layout::Nhwc : runtime::Layout::Nchw, reason};
}

bool chooses_by_cost(Policy policy) { return policy == Policy::Auto || policy == Policy::VdnnDyn; }

// Given, cached, measured or estimated (SessionOptions::costs).
CostModel session_costs(const Graph& graph, const SessionOptions& options, LayerSet& layers,
                        runtime::ExecutionContext& context) {
  if (options.costs) {
    VDNN_EXPECTS(options.costs->layers.size() == graph.nodes().size(),
                 "SessionOptions::costs: " + std::to_string(options.costs->layers.size()) +
                     " layer costs for " + std::to_string(graph.nodes().size()) +
                     " layers; expected costs of the graph the session runs (after fusion)");
    return *options.costs;
  }
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

// Note [Workspace]: limits fitted to the room a plan without workspace leaves can be too tight
// where the plan found under them leaves more, or too loose where a faster algorithm's workspace
// costs more maps than it saves time. Each limited pass tries its faster algorithms, smallest
// workspace first, with the layer's cost shifted by the difference in cudnnFind's times, and keeps
// one when the plan made again fits and is predicted faster.
void raise_where_faster(const Graph& graph, const SessionOptions& options, LayerSet& layers,
                        CostModel& costs, Plan& plan) {
  for (NodeId node = 0; node < static_cast<NodeId>(graph.nodes().size()); ++node) {
    for (const bool backward : {false, true}) {
      layers::Layer& layer = layers.at(node);
      const auto now = [&] {
        const layers::WorkspaceBytes w = layer.workspace();
        return backward ? w.backward : w.forward;
      };
      const std::vector<layers::WorkspaceOption> choices = layer.workspace_options(backward);
      if (choices.empty() || now() == choices.back().workspace) continue;  // not limited
      double seconds = -1.0;
      for (const layers::WorkspaceOption& c : choices) {
        if (c.workspace == now()) seconds = c.seconds;
      }
      for (const layers::WorkspaceOption& c : choices) {
        if (c.workspace <= now() || c.seconds < 0.0 || seconds < 0.0 || c.seconds >= seconds) {
          continue;
        }
        const std::vector<layers::WorkspaceBytes> before = layers.workspace_limits();
        std::vector<layers::WorkspaceBytes> limits = before;
        (backward ? limits[node].backward : limits[node].forward) = c.workspace;
        layers.limit_workspaces(limits);
        CostModel trial = costs;
        LayerCost& cost = trial.layers.at(static_cast<std::size_t>(node));
        (backward ? cost.backward : cost.forward) += c.seconds - seconds;
        PlanRequest request = request_for(options, layers, options.budget_bytes, trial);
        try {
          Plan faster = make_plan(graph, request);
          if (faster.predicted_step_seconds < plan.predicted_step_seconds) {
            plan = std::move(faster);
            costs = std::move(trial);
            seconds = c.seconds;
            continue;
          }
        } catch (const DoesNotFit&) {
        }
        layers.limit_workspaces(before);
      }
    }
  }
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

// `graph` with its nodes' layouts set for `layout`.
Graph& laid_out(Graph& graph, runtime::Layout layout) {
  graph.use_layout(layout);
  return graph;
}

}  // namespace

// The costs, then the plan. Measured costs hold for the layers' algorithms: when planning limited
// more workspaces, the costs are measured again with those and the plan made again.
Session::Planned Session::plan_run(const Graph& graph, const SessionOptions& options,
                                   LayerSet& layers, runtime::ExecutionContext& context) {
  Planned run;
  run.costs = session_costs(graph, options, layers, context);
  const bool measured = run.costs.source != "estimated" && !options.costs;
  // Measured costs again, and the plan again, when the algorithms changed since `key`.
  auto measure_again_if_changed = [&](std::uint64_t key) {
    if (layers.algorithm_key() == key || !measured) return;
    run.costs = session_costs(graph, options, layers, context);
    run.plan = plan_session(graph, options, layers, context, run.costs);
  };
  std::uint64_t key = layers.algorithm_key();
  run.plan = plan_session(graph, options, layers, context, run.costs);
  measure_again_if_changed(key);
  // Without --deterministic (whose runs change an algorithm only where the budget forces it, as
  // another algorithm gives other bits; nor has it cudnnFind's times): cudnnFind's times only
  // predict a raise, so measured again, it stays only if still faster.
  if (measured && !options.deterministic && options.budget_bytes > 0) {
    key = layers.algorithm_key();
    const Planned before = run;
    const std::vector<layers::WorkspaceBytes> limits = layers.workspace_limits();
    raise_where_faster(graph, options, layers, run.costs, run.plan);
    measure_again_if_changed(key);
    if (run.plan.predicted_step_seconds > before.plan.predicted_step_seconds) {
      layers.limit_workspaces(limits);
      run = before;
    }
  }
  const bool constrained = run.plan.offloaded_bytes > 0 || run.plan.recomputed_bytes > 0;
  if (options.policy == Policy::Auto && options.budget_bytes > 0 && measured && constrained &&
      !options.deterministic) {
    trade_workspace_for_maps(graph, options, layers, context, run.costs, run.plan);
  }
  return run;
}

Session::Session(Graph graph, const SessionOptions& options)
    : graph_(options.fuse ? fuse(graph, &fusion_) : std::move(graph)),
      context_(make_context(options)),
      layer_options_(layer_options(options, *context_)),
      layout_(choose_layout(graph_, options, *context_, layer_options_)),
      layers_(laid_out(graph_, layout_.layout), options.backend, layer_options_),
      planned_(plan_run(graph_, options, layers_, *context_)),
      executor_(std::make_unique<Executor>(graph_, layers_, planned_.plan, *context_,
                                           options.executor)) {}

Session::~Session() = default;

}  // namespace vdnn::graph
