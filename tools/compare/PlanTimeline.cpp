// The memory timeline of one step, read off the plan's actions.
#include "tools/compare/PlanTimeline.hpp"

#include <unordered_map>

#include "graph/Precision.hpp"

namespace vdnn::tools {

MemoryTimeline plan_timeline(const graph::Graph& graph, const graph::Plan& plan) {
  MemoryTimeline t;
  t.policy = graph::policy_name(plan.policy);
  t.precision = graph::precision_name(graph::precision_of(graph));
  t.batch = graph.batch();
  t.budget_bytes = plan.budget_bytes;
  std::uint64_t away = 0;  // on the host now
  std::unordered_map<graph::NodeId, std::uint64_t> away_by_tensor;
  for (const graph::Action& a : plan.actions) {
    switch (a.op) {
      case graph::Op::Offload:
      case graph::Op::Evict:
        away += a.bytes;
        away_by_tensor[a.tensor] = a.bytes;
        break;
      case graph::Op::Prefetch:
      case graph::Op::Migrate:
      case graph::Op::FaultIn:
        away -= away_by_tensor[a.tensor];
        away_by_tensor[a.tensor] = 0;
        break;
      case graph::Op::Forward:
      case graph::Op::Backward: {
        const bool input = a.tensor == graph::kNetworkInput;
        t.points.push_back({input ? std::string(graph::kInputName) : graph.node(a.tensor).name,
                            a.op == graph::Op::Backward, plan.resident_bytes + a.device_bytes,
                            away});
        break;
      }
      default:
        break;
    }
  }
  return t;
}

}  // namespace vdnn::tools
