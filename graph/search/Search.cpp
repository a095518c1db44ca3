// The one search over a run's choices (Note [Search]): fusion per chain, layout, workspaces and
// placement, against one cost model and the budget; costs measured once, for the choice made.
#include "graph/Search.hpp"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <optional>
#include <set>
#include <utility>
#include <variant>

#include "graph/CostProfiler.hpp"
#include "graph/Precision.hpp"
#include "graph/search/Workspaces.hpp"
#include "runtime/ByteSize.hpp"
#include "runtime/Device.hpp"
#include "runtime/DiskCache.hpp"

namespace vdnn::graph {
namespace {

// One fusion choice: the graph with the chains not declined fused, laid out, and its layers.
struct Variant {
  std::vector<FusedChain> fused;
  Graph graph;
  std::unique_ptr<LayerSet> layers;
};

// "planning auto under 5.25 GiB".
std::string planning_line(const SessionOptions& options) {
  return std::string("planning ") + policy_name(options.policy) +
         (options.budget_bytes > 0 ? " under " + runtime::format_bytes(options.budget_bytes) : "");
}

Variant make_variant(const Graph& source, const std::set<std::string>& declined,
                     runtime::Layout layout, const SessionOptions& options,
                     const SearchContext& ctx) {
  Variant v{{}, source, nullptr};
  if (options.fuse) v.graph = fuse(source, &v.fused, declined);
  v.graph.use_layout(layout);
  if (ctx.progress != nullptr) ctx.progress->begin("convolutions", "setting up layers");
  v.layers = std::make_unique<LayerSet>(v.graph, options.backend, ctx.layer_options, ctx.progress);
  if (ctx.progress != nullptr) ctx.progress->begin("planning", planning_line(options));
  return v;
}

// The device a measurement holds for: "cpu", or "cuda:" and the device's name.
// With a peer tier, the peer too: its link's rate is part of the costs (Note [Peer tier]).
std::string device_description(const SessionOptions& options) {
  const std::string peer =
      options.peer_device >= 0 ? " peer " + std::to_string(options.peer_device) : "";
  if (options.backend == layers::Backend::Cpu) return "cpu" + peer;
  return "cuda:" + runtime::cuda_device_name(options.device) + peer;
}

int state_buffers(const SessionOptions& options) {
  return layers::state_buffers(options.executor.optimizer.kind);
}

OffloadTiers offload_tiers(const SessionOptions& options) {
  return {{options.peer_device, options.peer_budget_bytes},
          options.host_budget_bytes.value_or(kNoHostBudget)};
}

bool chooses_by_cost(Policy policy) { return policy == Policy::Auto || policy == Policy::VdnnDyn; }

// The plan costs are measured under: the first of baseline, recompute and auto (with estimated
// costs, and the workspace limits auto needs) that fits the budget; the fewer copies, the more the
// measured step time says about the gaps between layers.
Plan profiling_plan(const Graph& graph, const SessionOptions& options, LayerSet& layers,
                    const CostModel& estimated) {
  for (Policy p : {Policy::Baseline, Policy::Recompute}) {
    try {
      return make_plan(graph, search::request_for(layers, p, options.budget_bytes, estimated,
                                                  state_buffers(options), Purpose::Training,
                                                  offload_tiers(options)));
    } catch (const DoesNotFit&) {
    }
  }
  return search::plan_with_downgrades(graph, layers, options.budget_bytes, estimated, Policy::Auto,
                                      state_buffers(options), Purpose::Training,
                                      offload_tiers(options));
}

// Given (when they describe this graph), cached, measured or estimated. Measured only where a
// policy chooses by them or --measure-costs asks, and only once: for the variant chosen. Never
// for inference, whose plan has no placement to choose (Note [Inference plan]).
CostModel variant_costs(const Variant& v, const SessionOptions& options, const SearchContext& ctx) {
  const Graph& graph = v.graph;
  if (options.costs && options.costs->layers.size() == graph.nodes().size()) return *options.costs;
  CostModel estimated = estimate_costs(graph);
  if (ctx.context == nullptr || options.purpose == Purpose::Inference ||
      (!options.measure_costs && !chooses_by_cost(options.policy))) {
    return estimated;
  }
  // First, as it may limit workspaces: costs hold for the algorithms the layers then run.
  const Plan plan = profiling_plan(graph, options, *v.layers, estimated);
  CostKey key =
      cost_key(graph, device_description(options), options.deterministic, options.allow_tf32);
  key.algorithms = v.layers->algorithm_key();
  if (options.cost_cache != nullptr) {
    CostModel cached = options.cost_cache->load(key);
    if (cached.layers.size() == graph.nodes().size()) return cached;
  }
  if (ctx.progress != nullptr) ctx.progress->begin("costs", "measuring layer and copy costs");
  CostModel measured =
      measure_costs(graph, *v.layers, plan, *ctx.context, options.executor, options.cost_steps);
  if (options.cost_cache != nullptr) options.cost_cache->store(key, measured);
  if (ctx.progress != nullptr) ctx.progress->begin("planning", planning_line(options));
  return measured;
}

// Without a budget, the plan takes what it needs; on CUDA that must fit what the device can give
// (free memory less kCudaReserve), else the plan is made again under that budget. A managed pool
// is not planned again: its evicted maps keep their range, so no budget shrinks it, and the
// executor's oversubscription guard decides (Note [Managed memory]).
Plan fitted_plan(const Variant& v, const SessionOptions& options, const SearchContext& ctx,
                 const CostModel& costs) {
  Plan plan = search::plan_with_downgrades(v.graph, *v.layers, options.budget_bytes, costs,
                                           options.policy, state_buffers(options), options.purpose,
                                           offload_tiers(options), options.data_parallel);
  if (ctx.context != nullptr && options.backend == layers::Backend::Cuda &&
      options.budget_bytes == 0 && plan.memory == DeviceMemory::Dedicated) {
    const std::uint64_t free_bytes = ctx.context->free_device_bytes();
    const std::uint64_t device = free_bytes > kCudaReserve ? free_bytes - kCudaReserve : 0;
    if (plan.pool_bytes > device) {
      plan = search::plan_with_downgrades(v.graph, *v.layers, device, costs, options.policy,
                                          state_buffers(options), options.purpose,
                                          offload_tiers(options), options.data_parallel);
    }
  }
  return plan;
}

// A fusable chain and what fusing it may add to the memory floor.
struct ChainCost {
  FusedChain chain;
  std::uint64_t extra = 0;
};

// The chains whose fused layer holds more in backward than its parts, the dearest first; `fused`
// is `source` with every chain fused.
std::vector<ChainCost> chains_that_cost_memory(const Graph& source, const Graph& fused,
                                               const std::vector<FusedChain>& chains) {
  const std::vector<std::uint64_t> extra = fusion_extra_bytes(source, fused, chains);
  std::vector<ChainCost> costly;
  for (std::size_t i = 0; i < chains.size(); ++i) {
    if (extra[i] > 0) costly.push_back({chains[i], extra[i]});
  }
  std::stable_sort(costly.begin(), costly.end(),
                   [](const ChainCost& a, const ChainCost& b) { return a.extra > b.extra; });
  return costly;
}

std::set<std::string> heads(const std::vector<ChainCost>& chains, std::size_t count) {
  std::set<std::string> names;
  for (std::size_t i = 0; i < count && i < chains.size(); ++i) names.insert(chains[i].chain.node);
  return names;
}

// Note [Layout]: where TF32 tensor cores run dense convolutions on large maps and no channel
// concatenation (strided in NHWC) is on the way, NHWC wins by the cost model alone (ResNet-50,
// VGG-16 on the H200: 0.6-0.75x the NCHW convolution time); otherwise (DenseNet's and GoogLeNet's
// concatenations, CIFAR's 32x32 maps, where NCHW measured up to 1.3x faster; grouped and
// depthwise convolutions, whose NHWC engines are cuDNN's runtime-compiled ones, SearchPolicy::
// grouped: NHWC ran MobileNetV2 and EfficientNet-B0 1.4-1.5x faster than NCHW in TF32 with them,
// NCHW 1.5-1.7x faster without) both are measured.
constexpr std::int64_t kWideMapPixels = 128 * 128;

bool nhwc_by_rule(const Graph& source) {
  if (source.input_shape().h() * source.input_shape().w() < kWideMapPixels) return false;
  return std::none_of(source.nodes().begin(), source.nodes().end(), [](const Node& n) {
    const auto* conv = std::get_if<layers::Conv2dSpec>(&n.spec);
    return std::holds_alternative<layers::ConcatSpec>(n.spec) ||
           (conv != nullptr && conv->groups > 1);
  });
}

// What a measured layout decision is kept under: the network's structure (unfused, NCHW), batch,
// device and math.
std::string layout_key(const Graph& source, const SessionOptions& options) {
  const CostKey k =
      cost_key(source, device_description(options), options.deterministic, options.allow_tf32);
  return k.network + " b" + std::to_string(k.batch) + " " + k.device + " tf32 " +
         std::to_string(k.tf32) + " structure " + std::to_string(k.structure);
}

// A profiled step's layer seconds of the all-fused variant in `layout` (Note [Cost model]); the
// measured costs go to the cost cache, so that the variant chosen need not be measured again.
double measured_step(const Graph& source, runtime::Layout layout, const SessionOptions& options,
                     const SearchContext& ctx) {
  SessionOptions measuring = options;
  measuring.measure_costs = true;
  measuring.purpose = Purpose::Training;  // a Predictor decides as its Trainer does
  const Variant v = make_variant(source, {}, layout, options, ctx);
  if (ctx.progress != nullptr) {
    ctx.progress->begin("layout",
                        std::string("measuring a step in ") + runtime::layout_name(layout));
  }
  const CostModel costs = variant_costs(v, measuring, ctx);
  double seconds = 0.0;
  for (const LayerCost& c : costs.layers) seconds += c.forward + c.backward;
  return seconds;
}

// The layout (Note [Layout]): asked for, the backend's or the cost model's rule, the decision the
// setup cache kept, or measured in both and kept.
LayoutDecision choose_layout(const Graph& source, const SessionOptions& options,
                             const SearchContext& ctx) {
  if (options.precision == runtime::DType::BF16 && options.layout == LayoutChoice::Auto &&
      options.backend == layers::Backend::Cuda) {
    return {runtime::Layout::Nhwc, "auto: bf16 tensor cores run NHWC natively"};
  }
  if (options.layout != LayoutChoice::Auto || options.backend != layers::Backend::Cuda ||
      options.deterministic || !options.allow_tf32 || ctx.context == nullptr) {
    return decide_layout(options.layout, options.backend, ctx.layer_options);
  }
  if (nhwc_by_rule(source)) {
    return {runtime::Layout::Nhwc,
            "auto: TF32 convolutions on large maps without concatenations run faster in NHWC"};
  }
  const std::string key = layout_key(source, options);
  if (options.disk_cache != nullptr) {
    if (const std::optional<std::string> kept = options.disk_cache->load("layout", key)) {
      if (*kept == "nhwc" || *kept == "nchw") {
        return {*kept == "nhwc" ? runtime::Layout::Nhwc : runtime::Layout::Nchw,
                "auto: measured " + *kept + " faster on this device (setup cache)"};
      }
    }
  }
  try {
    const double nhwc = measured_step(source, runtime::Layout::Nhwc, options, ctx);
    const double nchw = measured_step(source, runtime::Layout::Nchw, options, ctx);
    const runtime::Layout faster = nhwc < nchw ? runtime::Layout::Nhwc : runtime::Layout::Nchw;
    if (options.disk_cache != nullptr) {
      options.disk_cache->store("layout", key, runtime::layout_name(faster));
    }
    char reason[128];
    std::snprintf(reason, sizeof(reason),
                  "auto: a profiled step's layers take %.1f ms in nhwc, %.1f ms in nchw",
                  nhwc * 1e3, nchw * 1e3);
    return {faster, reason};
  } catch (const DoesNotFit&) {
    // Nothing fused fits to measure: the fusion search decides in the rule's layout.
    return decide_layout(options.layout, options.backend, ctx.layer_options);
  }
}

// A variant with its costs and the plan they give.
struct Fitted {
  Variant variant;
  CostModel costs;
  Plan plan;
};

Fitted fit(Variant v, const SessionOptions& options, const SearchContext& ctx) {
  CostModel costs = variant_costs(v, options, ctx);
  Plan plan = fitted_plan(v, options, ctx, costs);
  return {std::move(v), std::move(costs), std::move(plan)};
}

// The variant whose plan fits, with the fewest chains declined (Note [Search]): every chain fused
// first; else the chains that cost memory declined dearest first, their number found by bisection
// on plans with estimated costs (declining more never raises the floor); else every chain
// declined (the --no-fuse graph). Throws the all-fused plan's DoesNotFit when none fits.
// `chains` are those fuse() finds in `source` (none without SessionOptions::fuse), `fused` the
// graph with all of them fused; `reasons` gets a line per chain declined.
Fitted fitting_variant(const Graph& source, const Graph& fused,
                       const std::vector<FusedChain>& chains, const SessionOptions& options,
                       const SearchContext& ctx, runtime::Layout layout,
                       std::vector<std::string>& reasons) {
  std::exception_ptr failure;
  try {
    return fit(make_variant(source, {}, layout, options, ctx), options, ctx);
  } catch (const DoesNotFit&) {
    if (chains.empty()) throw;
    failure = std::current_exception();
  }
  const SearchContext planning_only{nullptr, ctx.layer_options, ctx.progress};
  // A variant that fits, and its plan's predicted step time with estimated costs (the same model
  // for every variant, so that they compare).
  struct Trial {
    Variant variant;
    double seconds = 0.0;
  };
  const auto fits = [&](const std::set<std::string>& declined) -> std::optional<Trial> {
    Variant v = make_variant(source, declined, layout, options, ctx);
    try {
      const Plan plan =
          fitted_plan(v, options, planning_only, variant_costs(v, options, planning_only));
      return Trial{std::move(v), plan.predicted_step_seconds};
    } catch (const DoesNotFit&) {
      return std::nullopt;
    }
  };
  const std::vector<ChainCost> costly = chains_that_cost_memory(source, fused, chains);
  std::optional<Trial> found = costly.empty() ? std::nullopt : fits(heads(costly, costly.size()));
  std::size_t good = costly.size();
  if (found) {
    std::size_t bad = 0;
    while (good - bad > 1) {
      const std::size_t mid = bad + (good - bad) / 2;
      if (std::optional<Trial> t = fits(heads(costly, mid))) {
        good = mid;
        found = std::move(t);
      } else {
        bad = mid;
      }
    }
    // Declining more than the fewest may be faster: the memory it frees can keep maps that the
    // fewest must offload or recompute. Twice as many each time, up to all that cost memory.
    const std::size_t fewest = good;
    for (std::size_t more = 2 * fewest; more < 2 * costly.size(); more *= 2) {
      const std::size_t count = std::min(more, costly.size());
      if (std::optional<Trial> t = fits(heads(costly, count)); t && t->seconds < found->seconds) {
        good = count;
        found = std::move(t);
      }
      if (count == costly.size()) break;
    }
    for (std::size_t i = 0; i < good; ++i) {
      reasons.push_back(costly[i].chain.node + " unfused (" + costly[i].chain.type +
                        "): its fused backward holds " + runtime::format_bytes(costly[i].extra) +
                        " more than its parts'");
    }
    reasons.push_back("fusion: " + std::to_string(good) + " of " + std::to_string(chains.size()) +
                      " chains unfused (" + std::to_string(fewest) +
                      " would fit): fused, the plan does not fit");
  } else {
    // Every layer declined, not only the heads of the chains found: declining one batch norm of a
    // projection block lets the other claim the add (Fusion.cpp), which --no-fuse does not.
    std::set<std::string> every;
    for (const Node& n : source.nodes()) every.insert(n.name);
    found = fits(every);
    if (!found) std::rethrow_exception(failure);
    reasons.push_back("fusion: every chain unfused: fused, the plan does not fit");
  }
  return fit(std::move(found->variant), options, ctx);
}

}  // namespace

SearchResult search_run(const Graph& network, const SessionOptions& options,
                        const SearchContext& ctx) {
  const Graph source = with_precision(network, options.precision);
  SearchResult r{source, {}, {}, {}, nullptr, {}, {}, {}};
  r.layout = choose_layout(source, options, ctx);
  std::vector<FusedChain> chains;
  const Graph fused = options.fuse ? fuse(source, &chains) : source;
  Fitted f = fitting_variant(source, fused, chains, options, ctx, r.layout.layout, r.reasons);
  Variant& v = f.variant;
  r.costs = std::move(f.costs);
  r.plan = std::move(f.plan);
  // Without --deterministic (whose runs change an algorithm only where the budget forces it, as
  // another algorithm gives other bits; nor has it cudnnFind's times).
  const bool measured = r.costs.source != "estimated";
  if (measured && !options.deterministic && options.budget_bytes > 0) {
    search::raise_where_faster(v.graph, *v.layers, r.costs, r.plan);
    const bool constrained = r.plan.offloaded_bytes > 0 || r.plan.recomputed_bytes > 0;
    if (options.policy == Policy::Auto && constrained) {
      search::trade_workspace_for_maps(v.graph, *v.layers, r.costs, r.plan);
    }
  }
  // Last, auto's offloads whose copies would hold the forward pass back are rebuilt instead (Note
  // [Automatic placement]); only the speed of a fitting plan changes, so not for a fit check.
  if (!options.fit_only) {
    r.plan = rebuild_where_faster(v.graph, search::request_for(*v.layers, r.plan, r.costs),
                                  std::move(r.plan));
  }
  const std::string limited = v.layers->limited_algorithms(v.graph);
  std::size_t from = 0;
  while (from < limited.size()) {
    const std::size_t eol = limited.find('\n', from);
    r.reasons.push_back("workspace limited: " + limited.substr(from, eol - from));
    from = eol == std::string::npos ? limited.size() : eol + 1;
  }
  r.graph = std::move(v.graph);
  r.fusion = std::move(v.fused);
  r.layers = std::move(v.layers);
  std::set<std::string> kept;
  for (const FusedChain& c : r.fusion) kept.insert(c.node);
  for (const FusedChain& c : chains) {
    if (kept.count(c.node) == 0) r.declined.push_back(c);
  }
  return r;
}

std::string format_reasons(const std::vector<std::string>& reasons) {
  if (reasons.empty()) return "choices: the fastest (nothing traded for memory)\n";
  std::string out = "choices:\n";
  for (const std::string& r : reasons) out += "  " + r + "\n";
  return out;
}

}  // namespace vdnn::graph
