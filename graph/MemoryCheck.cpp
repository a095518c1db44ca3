// The host memory check made before a run allocates: the plan's host-side pools, the batch
// staging and the caller's extras (the dataset), against the machine's available memory.
#include "graph/MemoryCheck.hpp"

#include <algorithm>
#include <limits>

#include "graph/Planner.hpp"
#include "runtime/ByteSize.hpp"

namespace vdnn::graph {
namespace {

constexpr std::size_t kTensorsNamed = 3;

std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) {
  return a > std::numeric_limits<std::uint64_t>::max() - b
             ? std::numeric_limits<std::uint64_t>::max()
             : a + b;
}

bool larger_first(const HostNeed& a, const HostNeed& b) { return a.bytes > b.bytes; }

// "input [2, 3, 100000, 100000] 223.52 GiB, ..." for the largest feature maps.
std::string largest_tensors(const Graph& graph) {
  std::vector<HostNeed> maps{{std::string(kInputName) + " " + graph.input_shape().to_string(),
                              graph.tensor_bytes(kNetworkInput)}};
  for (NodeId id = 0; id < static_cast<NodeId>(graph.nodes().size()); ++id) {
    const Node& node = graph.node(id);
    maps.push_back({node.name + " " + node.output_shape.to_string(), graph.tensor_bytes(id)});
  }
  const std::size_t named = std::min(kTensorsNamed, maps.size());
  std::stable_sort(maps.begin(), maps.end(), larger_first);
  std::string text;
  for (std::size_t i = 0; i < named; ++i) {
    text += (i == 0 ? "" : ", ") + maps[i].what + " " + runtime::format_bytes(maps[i].bytes);
  }
  return text;
}

// host_needs of `plan` (made without budget or workspace) but the pinned pool of the offloads.
std::vector<HostNeed> needs_besides_pinned_pool(const Graph& graph, const Plan& plan,
                                                std::uint64_t budget_bytes,
                                                layers::Backend backend) {
  const std::uint64_t labels = static_cast<std::uint64_t>(graph.batch()) * sizeof(std::int32_t);
  std::vector<HostNeed> needs{
      {"the pinned input batch", graph.input_shape().bytes(runtime::DType::F32) + labels}};
  // A managed pool holds every map's range whatever the budget (Note [Managed memory]).
  const bool whole_pool = budget_bytes == 0 || plan.memory == DeviceMemory::Managed;
  if (backend == layers::Backend::Cpu) {
    needs.push_back({"the device pool (the CPU backend's device memory is host memory)",
                     whole_pool ? plan.pool_bytes : std::min(budget_bytes, plan.pool_bytes)});
  } else if (budget_bytes == 0 && plan.memory == DeviceMemory::Managed) {
    needs.push_back({"the host pages of evicted managed memory", plan.evicted_bytes});
  }
  return needs;
}

Plan unbudgeted_plan(const Graph& graph, Policy policy) {
  PlanRequest request;
  request.policy = policy;
  return make_plan(graph, request);
}

}  // namespace

std::uint64_t total_bytes(const std::vector<HostNeed>& needs) {
  std::uint64_t total = 0;
  for (const HostNeed& need : needs) total = saturating_add(total, need.bytes);
  return total;
}

std::vector<HostNeed> host_needs(const Graph& graph, Policy policy, std::uint64_t budget_bytes,
                                 layers::Backend backend) {
  const Plan plan = unbudgeted_plan(graph, policy);
  std::vector<HostNeed> needs = needs_besides_pinned_pool(graph, plan, budget_bytes, backend);
  // Under a budget the planner keeps on the device what the budget holds, so fewer maps may go to
  // pinned memory than without one: count none, the need stays a lower bound.
  if (budget_bytes == 0) needs.push_back({"the pinned pool of the offloads", plan.pinned_bytes});
  return needs;
}

std::uint64_t host_headroom(std::uint64_t available) {
  return std::max<std::uint64_t>(std::uint64_t{4} << 30, available / 8);
}

std::uint64_t pinned_room(const Graph& graph, Policy policy, std::uint64_t budget_bytes,
                          layers::Backend backend, const std::vector<HostNeed>& extra,
                          const runtime::HostMemory& machine) {
  if (machine.available_bytes == std::numeric_limits<std::uint64_t>::max()) return kNoHostBudget;
  const std::uint64_t taken = saturating_add(
      saturating_add(total_bytes(needs_besides_pinned_pool(graph, unbudgeted_plan(graph, policy),
                                                           budget_bytes, backend)),
                     total_bytes(extra)),
      host_headroom(machine.available_bytes));
  return machine.available_bytes > taken ? machine.available_bytes - taken : 0;
}

void check_host_memory(const Graph& graph, Policy policy, std::uint64_t budget_bytes,
                       layers::Backend backend, const std::vector<HostNeed>& extra,
                       const runtime::HostMemory& machine) {
  std::vector<HostNeed> needs = host_needs(graph, policy, budget_bytes, backend);
  needs.insert(needs.end(), extra.begin(), extra.end());
  const std::uint64_t total = total_bytes(needs);
  if (total <= machine.available_bytes) return;
  std::stable_sort(needs.begin(), needs.end(), larger_first);
  std::string items;
  for (const HostNeed& need : needs) {
    if (need.bytes == 0) continue;
    items += (items.empty() ? "" : ", ") + need.what + " " + runtime::format_bytes(need.bytes);
  }
  throw HostMemoryExceeded(
      "network " + graph.name() + " at batch " + std::to_string(graph.batch()) +
          " needs at least " + runtime::format_bytes(total) + " of host memory but " +
          runtime::format_bytes(machine.available_bytes) + " is available (" + machine.source +
          "): " + items + "; the largest feature maps: " + largest_tensors(graph) +
          ". Use a smaller --batch or input",
      total, 0, machine.available_bytes);
}

}  // namespace vdnn::graph
