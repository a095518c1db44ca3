// Planner-only fit checks and the doubling-then-bisection search over a monotone predicate.
#include "tools/compare/FitSearch.hpp"

#include <algorithm>

#include "graph/MemoryCheck.hpp"
#include "graph/Planner.hpp"
#include "graph/Search.hpp"
#include "runtime/HostMemory.hpp"

namespace vdnn::tools {
namespace {

// The ladders' first rung (b, n or b of the rule) and step in depth.
struct Rule {
  std::int64_t first_depth;
  std::int64_t step;
};

Rule rule_of(models::ZooFamily family, models::ZooInput input) {
  const bool cifar = input == models::ZooInput::Cifar;
  if (family == models::ZooFamily::ResNet) return cifar ? Rule{11, 3} : Rule{14, 3};
  return cifar ? Rule{10, 6} : Rule{45, 2};
}

}  // namespace

bool plan_fits(const graph::Graph& graph, const FitLimits& limits) {
  const runtime::HostMemory machine = runtime::available_host_memory();
  graph::SessionOptions options;
  options.policy = limits.policy;
  options.budget_bytes = limits.budget_bytes;
  options.fuse = limits.fuse;
  options.precision = limits.precision;
  options.fit_only = true;
  // The host budget the run will have (Note [Host budget]), so that auto plans alike.
  options.host_budget_bytes =
      graph::pinned_room(graph, limits.policy, limits.budget_bytes, limits.backend,
                         {{"the run's other host memory", limits.host_extra_bytes}}, machine);
  layers::LayerCache cache;
  graph::SearchContext ctx;
  ctx.layer_options.cache = &cache;
  graph::Plan plan;
  try {
    plan = graph::search_run(graph, options, ctx).plan;
  } catch (const graph::DoesNotFit&) {
    return false;
  }
  if (plan.memory == graph::DeviceMemory::Managed && limits.managed_limit_bytes != 0 &&
      plan.pool_bytes > limits.managed_limit_bytes) {
    return false;
  }
  // The host check is the one the run makes (models::Trainer, on the graph as built).
  // Under a budget host_needs() leaves the pinned pool out (a lower bound made before planning);
  // this plan is the one the run will make, so its pinned pool counts.
  const std::uint64_t pinned = limits.budget_bytes != 0 ? plan.pinned_bytes : 0;
  const std::uint64_t host = graph::total_bytes(graph::host_needs(
                                 graph, limits.policy, limits.budget_bytes, limits.backend)) +
                             pinned + limits.host_extra_bytes;
  const std::uint64_t available = machine.available_bytes;
  return host <= available - std::min(available, graph::host_headroom(available));
}

std::int64_t largest_fitting(std::int64_t lo, std::int64_t hi,
                             const std::function<bool(std::int64_t)>& fits) {
  if (lo > hi || !fits(lo)) return 0;
  std::int64_t good = lo;     // fits
  std::int64_t bad = hi + 1;  // does not fit (or beyond the range)
  for (std::int64_t step = 1; good + step <= hi; step *= 2) {
    if (!fits(good + step)) {
      bad = good + step;
      break;
    }
    good += step;
  }
  while (bad - good > 1) {
    const std::int64_t mid = good + (bad - good) / 2;
    (fits(mid) ? good : bad) = mid;
  }
  return good;
}

std::int64_t DepthLadder::depth(std::int64_t k) const {
  const Rule r = rule_of(family, input);
  return r.first_depth + k * r.step;
}

std::int64_t DepthLadder::rung_at_most(std::int64_t depth) const {
  const Rule r = rule_of(family, input);
  return depth < r.first_depth ? 0 : (depth - r.first_depth) / r.step;
}

}  // namespace vdnn::tools
