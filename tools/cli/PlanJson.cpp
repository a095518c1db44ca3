// One place for the names under which a plan's totals are reported.
#include "tools/cli/PlanJson.hpp"

#include <cmath>

#include "graph/DenseBlocks.hpp"

namespace vdnn::tools {

nlohmann::json plan_totals(const graph::Plan& plan) {
  nlohmann::json totals = {{"requested_policy", graph::policy_name(plan.requested)},
                           {"policy", graph::policy_name(plan.policy)},
                           {"device_memory", graph::device_memory_name(plan.memory)},
                           {"budget_bytes", plan.budget_bytes},
                           {"resident_bytes", plan.resident_bytes},
                           {"predicted_peak_bytes", plan.predicted_peak},
                           {"predicted_pool_peak_bytes", plan.predicted_pool_peak},
                           {"pool_bytes", plan.pool_bytes},
                           {"device_blocks", runtime::block_choice_name(plan.device_blocks)},
                           {"pinned_bytes", plan.pinned_bytes},
                           {"offloaded_bytes", plan.offloaded_bytes},
                           {"prefetched_bytes", plan.prefetched_bytes},
                           {"evicted_bytes", plan.evicted_bytes},
                           {"migrated_bytes", plan.migrated_bytes},
                           {"faulted_bytes", plan.faulted_bytes},
                           {"recomputed_bytes", plan.recomputed_bytes},
                           {"predicted_step_ms", plan.predicted_step_seconds * 1e3},
                           {"cost_source", plan.cost_source}};
  if (plan.communicator_bytes > 0) totals["communicator_bytes"] = plan.communicator_bytes;
  if (plan.host_budget_bytes != graph::kNoHostBudget) {  // Note [Host budget]
    totals["host_budget_bytes"] = plan.host_budget_bytes;
  }
  if (plan.data_parallel.world_size > 1) {  // Note [Data parallelism]
    totals.update({{"world_size", plan.data_parallel.world_size},
                   {"allreduce_bus_bytes_per_second", plan.data_parallel.bus_bytes_per_second}});
  }
  if (plan.peer_device >= 0) {  // Note [Peer tier]
    totals.update({{"peer_device", plan.peer_device},
                   {"peer_budget_bytes", plan.peer_budget_bytes},
                   {"peer_bytes", plan.peer_bytes},
                   {"peer_offloaded_bytes", plan.peer_offloaded_bytes},
                   {"host_offloaded_bytes", plan.offloaded_bytes - plan.peer_offloaded_bytes}});
  }
  return totals;
}

nlohmann::json dense_blocks_json(const graph::Graph& g) {
  const graph::BlockTotals b = graph::block_totals(g);
  return {{"concatenations", b.concatenations},
          {"buffers", b.buffers},
          {"buffer_bytes", b.buffer_bytes},
          {"apart_bytes", b.apart_bytes}};
}

nlohmann::json moves_json(const std::vector<graph::MoveReason>& moves) {
  nlohmann::json out = nlohmann::json::array();
  for (const graph::MoveReason& m : moves) {
    out.push_back(
        {{"tensor", m.tensor},
         {"to", m.placement == graph::Placement::Recomputed ? "rebuild" : "offload"},
         {"tier", graph::tier_name(m.tier)},
         {"bytes", m.bytes},
         {"copy_ms", m.copy_seconds * 1e3},
         {"rebuild_ms", std::isinf(m.rebuild_seconds) ? nlohmann::json(nullptr)
                                                      : nlohmann::json(m.rebuild_seconds * 1e3)},
         {"why", m.why}});
  }
  return out;
}

}  // namespace vdnn::tools
