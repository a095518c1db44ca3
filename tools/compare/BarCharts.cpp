// Grouped bar charts over the compare matrix (throughput, peak memory) and the search chart.
#include "tools/compare/BarCharts.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include "tools/compare/ByteUnits.hpp"
#include "tools/compare/Chart.hpp"

namespace vdnn::tools {
namespace {

constexpr double kGroupPadding = 0.12;  // of a group's width, on each side

// The horizontal extent of slot `slot` of `slots` in group `group` of `groups`.
Box slot_box(const Box& plot, std::size_t group, std::size_t groups, std::size_t slot,
             std::size_t slots) {
  const double group_width = plot.width / static_cast<double>(std::max<std::size_t>(groups, 1));
  const double inner = group_width * (1.0 - 2.0 * kGroupPadding);
  const double width = inner / static_cast<double>(std::max<std::size_t>(slots, 1));
  const double x = plot.x + group_width * static_cast<double>(group) + group_width * kGroupPadding +
                   width * static_cast<double>(slot);
  return Box{x, plot.y, width, plot.height};
}

Box group_box(const Box& plot, std::size_t group, std::size_t groups) {
  return slot_box(plot, group, groups, 0, 1);
}

std::vector<LegendEntry> series_legend(const std::vector<BarSeries>& series,
                                       const PolicyPalette& palette) {
  std::vector<LegendEntry> entries;
  entries.reserve(series.size());
  for (const BarSeries& s : series)
    entries.push_back({s.label, palette.colour(s.policy, s.precision)});
  return entries;
}

bool any_not_ok(const CellGrid& grid) {
  for (const CellGroup& group : grid.groups) {
    for (const CellResult* cell : group.by_series) {
      if (cell != nullptr && cell->status != CellStatus::Ok) return true;
    }
  }
  return false;
}

// Consecutive groups with the same budget (groups are sorted by budget first).
struct BudgetRun {
  std::size_t first = 0;
  std::size_t last = 0;
  std::uint64_t budget_bytes = 0;
};

std::vector<BudgetRun> budget_runs(const CellGrid& grid) {
  std::vector<BudgetRun> runs;
  for (std::size_t g = 0; g < grid.groups.size(); ++g) {
    const std::uint64_t budget = grid.groups[g].budget_bytes;
    if (runs.empty() || runs.back().budget_bytes != budget) runs.push_back({g, g, budget});
    runs.back().last = g;
  }
  return runs;
}

// Under the plot: each group's batch (or depth), each budget's name under its run of groups when
// there are several, and the axis title.
void draw_group_labels(Chart& chart, const CellGrid& grid) {
  const Box& plot = chart.plot();
  const std::size_t groups = grid.groups.size();
  for (std::size_t g = 0; g < groups; ++g) {
    const Box box = group_box(plot, g, groups);
    chart.svg().text({box.x + box.width / 2.0, plot.bottom() + 18.0},
                     std::to_string(grid.groups[g].x), TextStyle{12.0, "middle"});
  }
  double row = plot.bottom() + 38.0;
  if (grid.several_budgets) {
    for (const BudgetRun& run : budget_runs(grid)) {
      const double left = group_box(plot, run.first, groups).x;
      const double right = group_box(plot, run.last, groups).right();
      chart.svg().line({left, row - 12.0}, {right, row - 12.0}, Stroke{"#999999", 1.0, false});
      const std::string label =
          run.budget_bytes == 0 ? "no budget" : "budget " + format_bytes(run.budget_bytes);
      chart.svg().text({(left + right) / 2.0, row}, label, TextStyle{11.0, "middle", "#555555"});
    }
    row += 16.0;
  }
  chart.svg().text({plot.x + plot.width / 2.0, row}, grid.x_name, TextStyle{12.0, "middle"});
}

// A cell without a bar: a cross on the axis and its status written upwards.
void draw_missing_marker(Chart& chart, const Box& slot, CellStatus status) {
  const double centre = slot.x + slot.width / 2.0;
  const double base = chart.plot().bottom();
  chart.svg().text({centre, base - 3.0}, "\u00d7", TextStyle{16.0, "middle", kMarkerColour});
  const char* label = status == CellStatus::DoesNotFit ? "does not fit" : "failed";
  chart.svg().text({centre + 4.0, base - 18.0}, label,
                   TextStyle{12.0, "start", kMarkerColour, -90.0, false, true});
}

void draw_bar(Chart& chart, const Box& slot, double value, const std::string& colour,
              const std::string& label) {
  const double top = chart.y(value);
  const Box bar{slot.x + 1.0, top, std::max(slot.width - 2.0, 1.0), chart.plot().bottom() - top};
  chart.series_rect(bar, colour);
  if (!label.empty() && slot.width >= 6.5 * static_cast<double>(label.size())) {
    chart.svg().text({slot.x + slot.width / 2.0, top - 4.0}, label, TextStyle{10.0, "middle"});
  }
}

template <typename Visit>
void for_each_slot(const CellGrid& grid, const Box& plot, Visit visit) {
  for (std::size_t g = 0; g < grid.groups.size(); ++g) {
    for (std::size_t p = 0; p < grid.series.size(); ++p) {
      const CellResult* cell = grid.groups[g].by_series[p];
      if (cell == nullptr) continue;
      visit(*cell, slot_box(plot, g, grid.groups.size(), p, grid.series.size()));
    }
  }
}

// One dashed line per budget, over the groups it applies to.
void draw_budget_lines(Chart& chart, const CellGrid& grid) {
  const Box& plot = chart.plot();
  for (const BudgetRun& run : budget_runs(grid)) {
    if (run.budget_bytes == 0) continue;
    const std::size_t groups = grid.groups.size();
    const double left = grid.several_budgets ? group_box(plot, run.first, groups).x : plot.x;
    const double right =
        grid.several_budgets ? group_box(plot, run.last, groups).right() : plot.right();
    chart.budget_line(run.budget_bytes, left, right);
  }
}

// The spec of a chart over the grid: the series, then `extra`, then the marker's meaning.
ChartSpec grid_chart_spec(std::string name, std::string title, std::string frame,
                          const CellGrid& grid, const PolicyPalette& palette,
                          const std::vector<LegendEntry>& extra) {
  if (grid.several_precisions) title += " and precision";
  ChartSpec spec{std::move(name), std::move(title), series_legend(grid.series, palette),
                 std::move(frame)};
  spec.legend.insert(spec.legend.end(), extra.begin(), extra.end());
  if (any_not_ok(grid)) {
    spec.legend.push_back({"does not fit / failed", kMarkerColour, LegendKind::Cross});
  }
  spec.margin_bottom = grid.several_budgets ? 80.0 : 64.0;
  return spec;
}

// A prediction above the axis (a plan that does not fit can ask for many times the budget) is
// drawn at the top and labelled with its value.
void draw_predicted_marker(Chart& chart, const Box& slot, std::uint64_t predicted_bytes) {
  if (predicted_bytes == 0) return;
  const auto predicted = static_cast<double>(predicted_bytes);
  const double row = chart.y(std::min(predicted, chart.y_max()));
  chart.svg().line({slot.x - 2.0, row}, {slot.right() + 2.0, row},
                   Stroke{kPredictedColour, 2.5, false});
  if (predicted > chart.y_max()) {
    chart.svg().text({slot.x + slot.width / 2.0, row + 14.0},
                     "\u25b2 " + format_bytes(predicted_bytes),
                     TextStyle{10.0, "middle", kPredictedColour, 0.0, false, true});
  }
}

// The peak chart's axis: every measured peak, budget and prediction of a cell that ran, and the
// other predictions only as far as 1.25 times that, so that they do not flatten the bars.
double peak_axis_max(const CellGrid& grid, const Box& plot) {
  double ran = 0.0;
  double predicted = 0.0;
  for_each_slot(grid, plot, [&](const CellResult& cell, const Box&) {
    const auto prediction = static_cast<double>(cell.predicted_peak_bytes);
    predicted = std::max(predicted, prediction);
    ran = std::max(ran, static_cast<double>(cell.budget_bytes));
    if (cell.status != CellStatus::Ok) return;
    ran = std::max({ran, prediction, static_cast<double>(cell.measured_peak_bytes)});
  });
  return ran > 0.0 ? std::max(ran, std::min(predicted, 1.25 * ran)) : predicted;
}

// The budget's wording in the search chart's title: the cells' budget(s).
std::string search_budget_text(const CompareResults& results) {
  std::vector<std::uint64_t> budgets;
  for (const CellResult& cell : results.cells) {
    if (std::find(budgets.begin(), budgets.end(), cell.budget_bytes) == budgets.end()) {
      budgets.push_back(cell.budget_bytes);
    }
  }
  std::string text;
  for (const std::uint64_t budget : budgets) {
    if (budget != 0) text += (text.empty() ? "" : " / ") + format_bytes(budget);
  }
  return text.empty() ? "without a budget" : "under " + text;
}

}  // namespace

std::string throughput_chart(const CellGrid& grid, const PolicyPalette& palette) {
  Chart chart(
      grid_chart_spec("throughput", "Throughput per policy", kThroughputFrame, grid, palette, {}));
  double max_rate = 0.0;
  for_each_slot(grid, chart.plot(), [&](const CellResult& cell, const Box&) {
    if (cell.status == CellStatus::Ok) max_rate = std::max(max_rate, cell.images_per_s);
  });
  chart.y_axis(max_rate * 1.05, 1.0, "", "images/s");  // room for the value labels
  for_each_slot(grid, chart.plot(), [&](const CellResult& cell, const Box& slot) {
    if (cell.status != CellStatus::Ok) return draw_missing_marker(chart, slot, cell.status);
    draw_bar(chart, slot, cell.images_per_s, palette.colour(cell.policy, cell.precision),
             format_number(cell.images_per_s, 0));
  });
  draw_group_labels(chart, grid);
  return chart.finish();
}

std::string peak_memory_chart(const CellGrid& grid, const PolicyPalette& palette) {
  std::vector<LegendEntry> extra = {{"predicted peak", kPredictedColour, LegendKind::Line}};
  const bool budgets = !grid.groups.empty() && grid.groups.back().budget_bytes != 0;
  if (budgets) extra.push_back({"budget", kBudgetColour, LegendKind::DashedLine});
  Chart chart(grid_chart_spec("peak-memory", "Peak device memory per policy", kPeakMemoryFrame,
                              grid, palette, extra));
  const double max_bytes = peak_axis_max(grid, chart.plot());
  const ByteUnit unit = byte_unit_for(max_bytes);
  chart.y_axis(max_bytes, unit.bytes, std::string(" ") + unit.name, "peak device memory");
  for_each_slot(grid, chart.plot(), [&](const CellResult& cell, const Box& slot) {
    if (cell.status == CellStatus::Ok) {
      draw_bar(chart, slot, static_cast<double>(cell.measured_peak_bytes),
               palette.colour(cell.policy, cell.precision), "");
    } else {
      draw_missing_marker(chart, slot, cell.status);
    }
    draw_predicted_marker(chart, slot, cell.predicted_peak_bytes);
  });
  draw_budget_lines(chart, grid);
  draw_group_labels(chart, grid);
  return chart.finish();
}

std::string search_chart(const CompareResults& results, const PolicyPalette& palette) {
  const bool depth = results.mode == CompareMode::DepthSweep;
  const bool several_precisions = precisions_of(results).size() > 1;
  std::vector<BarSeries> series;
  for (const SearchResult& search : results.searches) {
    const std::string label = series_label(search.policy, search.precision, several_precisions);
    const auto same = [&](const BarSeries& s) { return s.label == label; };
    if (std::none_of(series.begin(), series.end(), same)) {
      series.push_back({search.policy, search.precision, label});
    }
  }
  const std::string title = std::string(depth ? "Deepest network " : "Largest batch ") +
                            search_budget_text(results) +
                            (several_precisions ? ", per policy and precision" : ", per policy");
  Chart chart(ChartSpec{"search", title, series_legend(series, palette), kSearchFrame});
  double max_value = 0.0;
  for (const SearchResult& search : results.searches) {
    max_value = std::max(max_value, static_cast<double>(search.value));
  }
  chart.y_axis(max_value, 1.0, "", depth ? "depth" : "batch");
  const Box& plot = chart.plot();
  for (std::size_t i = 0; i < results.searches.size(); ++i) {
    const SearchResult& search = results.searches[i];
    const Box slot = slot_box(plot, i, results.searches.size(), 0, 1);
    const double centre = slot.x + slot.width / 2.0;
    if (search.value > 0) {
      draw_bar(
          chart, slot, static_cast<double>(search.value),
          palette.colour(search.policy, search.precision),
          std::to_string(search.value) + " (" + format_number(search.images_per_s, 0) + " img/s)");
    } else {
      chart.svg().text({centre, plot.bottom() - 6.0}, "none fits",
                       TextStyle{11.0, "middle", kMarkerColour});
    }
    chart.svg().text({centre, plot.bottom() + 18.0},
                     series_label(search.policy, search.precision, several_precisions),
                     TextStyle{12.0, "middle"});
  }
  return chart.finish();
}

}  // namespace vdnn::tools
