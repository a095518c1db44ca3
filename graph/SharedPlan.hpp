// SharedPlan: one plan for every rank of a data-parallel run (Note [Data parallelism]): rank 0's,
// as bytes through the communicator, so that costs measured apart on each rank cannot give ranks
// different bucket orders, recomputations or pools.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/Graph.hpp"
#include "graph/LayerSet.hpp"
#include "graph/Plan.hpp"
#include "runtime/Communicator.hpp"
#include "runtime/ExecutionContext.hpp"

namespace vdnn::graph {

/// Every field of `plan` as bytes (host order; for processes of one build). Never throws but
/// std::bad_alloc.
std::vector<std::uint8_t> encode_plan(const Plan& plan);

/// The plan encode_plan() wrote into `bytes`. Throws runtime::InvalidArgument when the bytes end
/// early, run past the plan or hold a value out of an enum's range.
Plan decode_plan(const std::vector<std::uint8_t>& bytes);

/// Replaces `plan` on every rank of `communicator` by rank 0's (a group of one: nothing happens),
/// through a buffer of `context`'s device memory on its compute stream; every rank calls it once,
/// after its own search, before its executor is made. Throws runtime::CommunicatorError naming
/// this rank when rank 0's plan is for another graph than `graph` (its nodes, their names, shapes
/// and layout) or gives a node less workspace than `layers` needs, and as the communicator's
/// collectives do; runtime::InvalidArgument as decode_plan.
void use_rank0_plan(runtime::Communicator& communicator, runtime::ExecutionContext& context,
                    const Graph& graph, const LayerSet& layers, Plan& plan);

}  // namespace vdnn::graph
