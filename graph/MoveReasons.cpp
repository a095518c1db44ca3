// MoveReasons: the reason of each offloaded or rebuilt map, from the plan and its cost model.
#include "graph/MoveReasons.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <utility>

#include "graph/planner/PlanBuilder.hpp"
#include "runtime/ByteSize.hpp"

namespace vdnn::graph {
namespace {

std::string milliseconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f ms", seconds * 1e3);
  return text;
}

// Why `m` took its way, as the auto policy compares them (graph/planner/AutoPolicy.cpp).
std::string auto_reason(const MoveReason& m) {
  const std::string copy = milliseconds(m.copy_seconds);
  if (std::isinf(m.rebuild_seconds)) return "the network input has no producer to rebuild it";
  const std::string rebuild = milliseconds(m.rebuild_seconds);
  if (m.placement == Placement::Recomputed) {
    return m.rebuild_seconds <= m.copy_seconds
               ? "rebuild " + rebuild + " costs less than its copy " + copy
               : "rebuilt: the copy streams were full (copy " + copy + ", rebuild " + rebuild + ")";
  }
  return m.copy_seconds <= m.rebuild_seconds
             ? "copy " + copy + " costs less than a rebuild " + rebuild
             : "copy " + copy + " runs beside compute; a rebuild would add " + rebuild +
                   " to the compute stream";
}

std::string policy_reason(Policy policy, Placement placement) {
  return std::string("policy ") + policy_name(policy) +
         (placement == Placement::Recomputed ? " rebuilds this map" : " offloads this map");
}

}  // namespace

std::vector<MoveReason> explain_moves(const Graph& graph, const Plan& plan,
                                      const CostModel& costs) {
  std::vector<MoveReason> moves;
  for (NodeId t = kNetworkInput; t < static_cast<NodeId>(graph.nodes().size()); ++t) {
    const Placement placement = plan.placement_of(t);
    if (placement != Placement::Offloaded && placement != Placement::Recomputed) continue;
    MoveReason m;
    m.tensor = t == kNetworkInput ? "input" : graph.node(t).name;
    m.placement = placement;
    m.tier = plan.tier_of(t);
    m.bytes = planner::tensor_bytes(graph, t);
    const auto bytes = static_cast<double>(m.bytes);
    // A rebuilt map's copy is priced on the link its offload would take: the peer's where the
    // plan has a peer tier, which auto fills first (Note [Peer tier]).
    const bool peer_tier = plan.peer_device >= 0 && plan.peer_budget_bytes > 0;
    const Tier link = placement == Placement::Recomputed && peer_tier ? Tier::Peer : m.tier;
    m.copy_seconds = costs.slower_copy_seconds(link, bytes);
    m.rebuild_seconds =
        t == kNetworkInput ? std::numeric_limits<double>::infinity() : costs.forward(t) + costs.gap;
    m.why = plan.policy == Policy::Auto ? auto_reason(m) : policy_reason(plan.policy, placement);
    moves.push_back(std::move(m));
  }
  return moves;
}

std::string format_moves(const std::vector<MoveReason>& moves) {
  if (moves.empty()) return "moves: none (every map stays on the device)\n";
  std::string out = "moves (maps that leave the device, and why):\n";
  char line[160];
  for (const MoveReason& m : moves) {
    const std::string to = m.placement == Placement::Recomputed
                               ? std::string("rebuild")
                               : std::string("offload @") + tier_name(m.tier);
    std::snprintf(line, sizeof line, "  %-40s %12s  %-13s ", m.tensor.c_str(),
                  runtime::format_bytes(m.bytes).c_str(), to.c_str());
    out += line + m.why + "\n";
  }
  return out;
}

}  // namespace vdnn::graph
