// CellGrid: the cells of a compare run arranged for the grouped bar charts of report.html.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tools/compare/CompareResults.hpp"

namespace vdnn::tools {

/// One series of bars: a policy in one precision.
struct BarSeries {
  std::string policy;
  std::string precision;
  std::string label;  // series_label(): the policy, and the precision when the grid has several
};

/// One x group of a grouped bar chart: one budget and one batch (or depth), and at most one cell
/// per series (nullptr where that series has none).
struct CellGroup {
  std::uint64_t budget_bytes = 0;
  std::int64_t x = 0;                        // the batch, or the depth in a depth sweep
  std::vector<const CellResult*> by_series;  // indexed like CellGrid::series
};

/// Non-owning: points into the CompareResults it was made from, which must outlive it.
struct CellGrid {
  std::vector<BarSeries> series;  // in the order they first ran
  std::vector<CellGroup> groups;  // by budget, then x, both ascending
  bool several_budgets = false;
  bool several_precisions = false;
  const char* x_name = "batch";  // "batch" or "depth"
};

/// The grid of `results.cells`. Of two cells for the same series and group the first one is kept.
CellGrid make_cell_grid(const CompareResults& results);

/// Every policy name of `results`, cells first, then searches and the timeline, in first-seen
/// order.
std::vector<std::string> policies_of(const CompareResults& results);

}  // namespace vdnn::tools
