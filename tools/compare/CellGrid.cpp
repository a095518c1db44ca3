// Arranges compare cells into (budget, batch or depth) groups with one slot per (policy,
// precision) series.
#include "tools/compare/CellGrid.hpp"

#include <algorithm>
#include <cstddef>
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
  grid.several_precisions = precisions_of(results).size() > 1;
  const auto slot_of = [&](const CellResult& cell) {
    const auto same = [&](const BarSeries& s) {
      return s.policy == cell.policy && s.precision == cell.precision;
    };
    return std::find_if(grid.series.begin(), grid.series.end(), same) - grid.series.begin();
  };
  for (const CellResult& cell : results.cells) {
    if (slot_of(cell) == static_cast<std::ptrdiff_t>(grid.series.size())) {
      grid.series.push_back({cell.policy, cell.precision,
                             series_label(cell.policy, cell.precision, grid.several_precisions)});
    }
  }

  std::map<std::pair<std::uint64_t, std::int64_t>, CellGroup> groups;
  for (const CellResult& cell : results.cells) {
    const std::int64_t x = by_depth ? cell.depth : cell.batch;
    CellGroup& group = groups[{cell.budget_bytes, x}];
    group.budget_bytes = cell.budget_bytes;
    group.x = x;
    group.by_series.resize(grid.series.size(), nullptr);
    const auto slot = slot_of(cell);
    if (group.by_series[slot] == nullptr) group.by_series[slot] = &cell;
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
