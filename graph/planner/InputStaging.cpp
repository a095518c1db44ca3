// Where a step uploads the next step's batch: the earliest point of backward from which the
// input's bytes fit under the step's peak until the step ends (Note [Input staging]).
#include <algorithm>

#include "graph/planner/PlanBuilder.hpp"

namespace vdnn::graph::planner {

void stage_next_input(const Graph& g, Plan& plan, std::uint64_t peak) {
  if (plan.memory == DeviceMemory::Managed) return;
  std::vector<Action>& actions = plan.actions;
  const auto first_backward = std::find_if(actions.begin(), actions.end(),
                                           [](const Action& a) { return a.op == Op::Backward; });
  if (first_backward == actions.end()) return;
  // after[i]: the most device bytes of actions i.. (0 past the end).
  std::vector<std::uint64_t> after(actions.size() + 1, 0);
  for (std::size_t i = actions.size(); i-- > 0;) {
    after[i] = std::max(after[i + 1], actions[i].device_bytes);
  }
  const std::uint64_t bytes = tensor_bytes(g, kNetworkInput);
  const auto start = static_cast<std::size_t>(first_backward - actions.begin());
  for (std::size_t i = start; i <= actions.size(); ++i) {
    const std::uint64_t before = actions[i - 1].device_bytes;  // start > 0: the input came first
    if (std::max(before, after[i]) + bytes > peak) continue;
    for (std::size_t j = i; j < actions.size(); ++j) actions[j].device_bytes += bytes;
    actions.insert(actions.begin() + static_cast<std::ptrdiff_t>(i),
                   Action{Op::StageInput, kNetworkInput, bytes, before + bytes});
    return;
  }
}

}  // namespace vdnn::graph::planner
