// Arranges compare cells into (budget, batch or depth) groups with one slot per policy.
#include "tools/compare/CellGrid.hpp"

#include <algorithm>
#include <map>
#include <utility>

namespace vdnn::tools {
namespace {

void add_unique(std::vector<std::string>& names, const std::string& name) {
  if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
}

}  // namespace

CellGrid make_cell_grid(const CompareResults& results) {
  CellGrid grid;
  const bool by_depth = results.mode == CompareMode::DepthSweep;
  grid.x_name = by_depth ? "depth" : "batch";
  for (const CellResult& cell : results.cells) add_unique(grid.policies, cell.policy);

  std::map<std::pair<std::uint64_t, std::int64_t>, CellGroup> groups;
  for (const CellResult& cell : results.cells) {
    const std::int64_t x = by_depth ? cell.depth : cell.batch;
    CellGroup& group = groups[{cell.budget_bytes, x}];
    group.budget_bytes = cell.budget_bytes;
    group.x = x;
    group.by_policy.resize(grid.policies.size(), nullptr);
    const auto slot =
        std::find(grid.policies.begin(), grid.policies.end(), cell.policy) - grid.policies.begin();
    if (group.by_policy[slot] == nullptr) group.by_policy[slot] = &cell;
  }
  for (auto& [key, group] : groups) grid.groups.push_back(std::move(group));
  grid.several_budgets =
      !grid.groups.empty() && grid.groups.front().budget_bytes != grid.groups.back().budget_bytes;
  return grid;
}

std::vector<std::string> policies_of(const CompareResults& results) {
  std::vector<std::string> names;
  for (const CellResult& cell : results.cells) add_unique(names, cell.policy);
  for (const SearchResult& search : results.searches) add_unique(names, search.policy);
  if (results.timeline) add_unique(names, results.timeline->policy);
  return names;
}

}  // namespace vdnn::tools
