// The matrix, max-batch and depth-sweep drivers of `vdnn compare`.
#include "tools/compare/CompareModes.hpp"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <optional>

#include "graph/Graph.hpp"
#include "graph/Precision.hpp"
#include "models/ConfigLoader.hpp"
#include "runtime/ByteSize.hpp"
#include "runtime/Error.hpp"

namespace vdnn::tools {
namespace {

constexpr std::int64_t kMaxBatch = std::int64_t{1} << 20;  // as `vdnn train --batch` accepts
constexpr int kConfirmAttempts = 8;

FitLimits limits_for(FitLimits limits, const std::string& policy, const std::string& precision,
                     const std::string& budget) {
  limits.policy = graph::parse_policy(policy);
  const std::optional<runtime::DType> maps = graph::parse_precision(precision);
  VDNN_EXPECTS(maps.has_value(), "compare checked the precisions");
  limits.precision = *maps;
  limits.budget_bytes = budget.empty() ? 0 : runtime::parse_bytes(budget);
  return limits;
}

std::string budget_text(const std::string& budget) { return budget.empty() ? "none" : budget; }

// Runs the cell of step `n` (a batch or a rung of the depth ladder), stepping n down by an
// eighth (at least one) while the real run does not fit; returns the n that trained, 0 if none.
std::int64_t confirm(std::int64_t n, const std::function<CellResult(std::int64_t)>& run_at,
                     double& images_per_s) {
  for (int attempt = 0; attempt < kConfirmAttempts && n > 0; ++attempt) {
    const CellResult r = run_at(n);
    if (r.status == CellStatus::Ok) {
      images_per_s = r.images_per_s;
      return n;
    }
    if (r.status != CellStatus::DoesNotFit) return 0;
    n -= std::max<std::int64_t>(1, n / 8);
  }
  return 0;
}

graph::NetworkDef generated(const DepthLadder& ladder, std::int64_t depth) {
  const std::string name = "generated depth " + std::to_string(depth);
  return models::parse_network(models::generate_zoo_config(ladder.family, ladder.input, depth),
                               name);
}

}  // namespace

void run_matrix(Comparison& comparison, const graph::NetworkDef& def, const Sweep& sweep) {
  for (const std::string& budget : sweep.budgets) {
    for (const std::int64_t batch : sweep.batches) {
      for (const std::string& precision : sweep.precisions) {
        for (const std::string& policy : sweep.policies) {
          comparison.run(def, {policy, batch, budget, 0, precision});
        }
      }
    }
  }
}

void run_max_batch(Comparison& comparison, const graph::NetworkDef& def, const Sweep& sweep,
                   const FitLimits& limits) {
  for (const std::string& budget : sweep.budgets) {
    for (const std::string& precision : sweep.precisions) {
      for (const std::string& policy : sweep.policies) {
        const FitLimits l = limits_for(limits, policy, precision, budget);
        const std::int64_t planned = largest_fitting(1, kMaxBatch, [&](std::int64_t batch) {
          return plan_fits(graph::Graph::build(def, batch), l);
        });
        std::fprintf(stderr, "compare: %s %s under %s: the planner fits batch %lld\n",
                     policy.c_str(), precision.c_str(), budget_text(budget).c_str(),
                     static_cast<long long>(planned));
        SearchResult s{policy, 0, 0.0, precision};
        // Nothing planned: one real cell at batch 1 says why.
        s.value = confirm(
            std::max<std::int64_t>(planned, 1),
            [&](std::int64_t batch) {
              return comparison.run(def, {policy, batch, budget, 0, precision});
            },
            s.images_per_s);
        comparison.add_search(s);
      }
    }
  }
}

void run_depth_sweep(Comparison& comparison, const DepthLadder& ladder, std::int64_t max_depth,
                     const Sweep& sweep, const FitLimits& limits) {
  const std::int64_t batch = sweep.batches.front();
  const std::int64_t top = ladder.rung_at_most(max_depth);
  for (const std::string& budget : sweep.budgets) {
    for (const std::string& precision : sweep.precisions) {
      for (const std::string& policy : sweep.policies) {
        const FitLimits l = limits_for(limits, policy, precision, budget);
        // Rungs shifted by one: largest_fitting's 0 means "none".
        const std::int64_t planned = largest_fitting(1, top + 1, [&](std::int64_t rung) {
          return plan_fits(graph::Graph::build(generated(ladder, ladder.depth(rung - 1)), batch),
                           l);
        });
        std::fprintf(stderr, "compare: %s %s under %s: the planner fits depth %lld\n",
                     policy.c_str(), precision.c_str(), budget_text(budget).c_str(),
                     static_cast<long long>(planned == 0 ? 0 : ladder.depth(planned - 1)));
        SearchResult s{policy, 0, 0.0, precision};
        const std::int64_t rung = confirm(
            std::max<std::int64_t>(planned, 1),
            [&](std::int64_t r) {
              const std::int64_t depth = ladder.depth(r - 1);
              return comparison.run(generated(ladder, depth),
                                    {policy, batch, budget, depth, precision});
            },
            s.images_per_s);
        s.value = rung == 0 ? 0 : ladder.depth(rung - 1);
        comparison.add_search(s);
      }
    }
  }
}

}  // namespace vdnn::tools
