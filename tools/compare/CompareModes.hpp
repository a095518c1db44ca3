// CompareModes: the three ways `vdnn compare` fills its results: the matrix of policies x
// precisions x batches x budgets, the largest batch per policy and precision, and the deepest
// generated network per policy and precision.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/NetworkDef.hpp"
#include "models/ZooGenerator.hpp"
#include "tools/compare/Comparison.hpp"
#include "tools/compare/FitSearch.hpp"

namespace vdnn::tools {

/// What a mode sweeps. `budgets` holds "" for no budget; `precisions` "fp32" and/or "bf16".
struct Sweep {
  std::vector<std::string> policies;
  std::vector<std::int64_t> batches;
  std::vector<std::string> budgets;
  std::vector<std::string> precisions{kDefaultPrecision};
};

/// Every (budget, batch, precision, policy) cell, in that nesting.
void run_matrix(Comparison& comparison, const graph::NetworkDef& def, const Sweep& sweep);

/// Per budget, precision and policy: the planner's largest batch (doubling, then bisection),
/// confirmed by a real run that steps down by an eighth while the device says it does not fit.
/// `limits.precision` is replaced by each precision's.
void run_max_batch(Comparison& comparison, const graph::NetworkDef& def, const Sweep& sweep,
                   const FitLimits& limits);

/// Per budget, precision and policy, at sweep.batches.front(): the deepest network of `ladder` up
/// to `max_depth` the planner fits, confirmed likewise (stepping down the ladder).
void run_depth_sweep(Comparison& comparison, const DepthLadder& ladder, std::int64_t max_depth,
                     const Sweep& sweep, const FitLimits& limits);

}  // namespace vdnn::tools
